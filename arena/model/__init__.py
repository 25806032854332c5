"""The scripted model: a deterministic policy served over the OpenAI Chat Completions API."""

PROFILES = ("scripted", "scripted-eager", "reckless", "reckless-parallel")
