"""Turn `--model` / `--base-url` into the model the harness's gateway serves or forwards to."""

from __future__ import annotations

import os
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from arena.errors import UserError

LOCAL_KEY = "arena-local"  # what adapters send to the harness's gateway; clients insist on having a key


class ModelError(UserError, ValueError):
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


PROVIDERS = ("openai",)  # real providers: any OpenAI-compatible API
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def split_model(model: str) -> tuple[str, str]:
    """`provider/name` or `provider:name` -> (provider, name), split at the first `/` or `:`; ("", model)
    when there is neither. The name keeps any later separator (`openai:ft:gpt-4o:org`, `openai/meta/llama`)."""
    cut = min((i for i in (model.find("/"), model.find(":")) if i >= 0), default=-1)
    return ("", model) if cut < 0 else (model[:cut], model[cut + 1:])


def canonical_model(model: str, profiles: Iterable[str] = ()) -> str:
    """The one spelling of a model: a scripted profile as it is, a real model as `provider/name`."""
    if model in tuple(profiles):
        return model
    provider, name = split_model(model)
    return f"{provider}/{name}" if provider in PROVIDERS and name else model


def resolve_model(model: str, base_url: str | None = None, profiles: Iterable[str] = ()) -> ModelTarget:
    """One of the arena's scripted `profiles` is served by the harness; `openai/<name>` (or
    `openai:<name>`) by any OpenAI-compatible API: `base_url`, else OPENAI_BASE_URL, else api.openai.com.

    A real provider's key comes from OPENAI_API_KEY (or ARENA_API_KEY) and is never written out.
    """
    profiles = tuple(profiles)
    if model in profiles:
        return ModelTarget(name=model)
    provider, name = split_model(model)
    choices = ", ".join(profiles) or "no scripted profile"
    if not provider:
        example = f"openai/{model}" if model.strip() and not any(c.isspace() for c in model) else "openai/gpt-4.1-mini"
        raise ModelError(f"unknown model {model!r}; choose from {choices} or a real model as openai/<model> (e.g. "
                         f"{example}; its endpoint is --base-url if given, else OPENAI_BASE_URL, else {DEFAULT_BASE_URL})")
    if provider not in PROVIDERS:
        raise ModelError(f"unknown model provider {provider!r} in {model!r}; the only provider is openai "
                         f"(any OpenAI-compatible API): openai/<model> or openai:<model>, or a scripted profile: {choices}")
    if not name:
        raise ModelError(f"model {model!r} names no model; say {provider}/<model>, e.g. {provider}/gpt-4.1-mini")
    key = os.environ.get("ARENA_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ModelError(f"model {model!r} needs an API key in OPENAI_API_KEY or ARENA_API_KEY")
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return ModelTarget(name=name, upstream=url, api_key=key)
