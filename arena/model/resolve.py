"""Turn `--model` / `--base-url` into the endpoint adapters talk to."""

from __future__ import annotations

import os

from arena.model import PROFILES
from arena.types import ModelConfig

LOCAL_KEY = "arena-local"  # the scripted server accepts any key; clients insist on having one


class ModelError(ValueError):
    pass


def resolve_model(model: str, base_url: str | None, scripted_base_url: str | None) -> ModelConfig:
    """`scripted`/`scripted-eager` use the harness's server; `openai/<name>` any OpenAI-compatible API.

    A real provider's key comes from OPENAI_API_KEY (or ARENA_API_KEY) and is never written out.
    """
    if model in PROFILES:
        if scripted_base_url is None:
            raise ModelError("the scripted model server is not running")
        return ModelConfig(name=model, base_url=scripted_base_url, api_key=LOCAL_KEY)
    provider, _, name = model.partition("/")
    if provider != "openai" or not name:
        raise ModelError(f"unknown model {model!r}; choose from {', '.join(PROFILES)} or openai/<model> (with --base-url)")
    key = os.environ.get("ARENA_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ModelError(f"model {model!r} needs an API key in OPENAI_API_KEY or ARENA_API_KEY")
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
    return ModelConfig(name=name, base_url=url, api_key=key)
