"""Turn `--model` / `--base-url` into the model the harness's gateway serves or forwards to."""

from __future__ import annotations

import os
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

LOCAL_KEY = "arena-local"  # what adapters send to the harness's gateway; clients insist on having a key


class ModelError(ValueError):
    pass


class ModelTarget(BaseModel):
    """Where the gateway gets answers: the scripted policy (`upstream` None) or a real endpoint.

    Adapters never see this: they get their item's loopback base URL and LOCAL_KEY; the gateway
    adds the real key when it forwards, so the key never reaches a framework's logs or state.
    """

    model_config = ConfigDict(frozen=True)

    name: str  # model name adapters send ("scripted", "gpt-...")
    upstream: str | None = None  # base URL ending in /v1 of a real OpenAI-compatible endpoint
    api_key: str = Field(default="", repr=False)

    @property
    def scripted(self) -> bool:
        return self.upstream is None


def resolve_model(model: str, base_url: str | None = None, profiles: Iterable[str] = ()) -> ModelTarget:
    """One of the arena's scripted `profiles` is served by the harness; `openai/<name>` by any
    OpenAI-compatible API.

    A real provider's key comes from OPENAI_API_KEY (or ARENA_API_KEY) and is never written out.
    """
    profiles = tuple(profiles)
    if model in profiles:
        return ModelTarget(name=model)
    provider, _, name = model.partition("/")
    if provider != "openai" or not name:
        choices = ", ".join(profiles) or "no scripted profile"
        raise ModelError(f"unknown model {model!r}; choose from {choices} or openai/<model> (with --base-url)")
    key = os.environ.get("ARENA_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ModelError(f"model {model!r} needs an API key in OPENAI_API_KEY or ARENA_API_KEY")
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
    return ModelTarget(name=name, upstream=url, api_key=key)
