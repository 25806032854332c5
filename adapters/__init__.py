"""The adapter registry. Entries are plain data so `arena list` never imports a framework.

Third-party adapters register through the `arena.adapters` entry point group (name = adapter name,
value = "module:Class"); they are discovered from installed metadata only and imported when they run.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from importlib import metadata

from arena.errors import exited_at_import
from arena.types import ResumableRunner


@dataclass(frozen=True)
class AdapterEntry:
    name: str
    target: str  # "module:Class"
    framework: str  # the distribution whose version is reported (a plugin's: its own, until its class is loaded)
    requires: tuple[str, ...] = ()  # distributions that must be installed besides `framework`
    environment: str = "shared"  # or "isolated": runs in a worker in its own environment
    # whether items may run at once in one process: not when the framework keeps process-wide state
    # bound to one event loop (each item runs in an event loop of its own)
    concurrent: bool = True
    # who provides it: "arena" for a built-in, "<distribution> <version>" for a plugin
    distribution: str = "arena"
    # an isolated environment's name when not the adapter name's first word (an adapter run against
    # another release of its framework: "langgraph@1.1.10", arena/versions.py)
    env: str = ""

    @property
    def plugin(self) -> bool:
        return self.distribution != "arena"

    @property
    def isolated(self) -> bool:
        return self.environment == "isolated"

    @property
    def env_name(self) -> str:
        return (self.env or self.name.split("_")[0]) if self.isolated else ""

    @property
    def version(self) -> str | None:
        """Installed version; for an isolated adapter, the version its committed requirements pin."""
        if self.isolated:
            from arena.worker import envs

            return envs.pinned_version(self.env_name, self.framework)
        try:
            return metadata.version(self.framework)
        except metadata.PackageNotFoundError:
            return None

    @property
    def available(self) -> bool:
        """Framework distributions installed and the adapter module present (nothing is imported)."""
        if self.plugin:  # its top-level package only: finding `pkg.mod` would run pkg/__init__.py
            try:
                return importlib.util.find_spec(self.target.partition(":")[0].split(".")[0]) is not None
            except (ImportError, ValueError):
                return False
        if importlib.util.find_spec(self.target.partition(":")[0]) is None:
            return False
        if self.isolated:  # built on first use
            from arena.worker import envs

            return envs.known(self.env_name)
        for dist in (self.framework, *self.requires):
            try:
                metadata.version(dist)
            except metadata.PackageNotFoundError:
                return False
        return True

    def load(self) -> type[ResumableRunner]:
        cls = load_target(self.target)
        if self.plugin and cls.info.name != self.name:  # run directories and reports go by the name
            raise ValueError(f"{self.target!r} is registered as {self.name!r} but its info.name is {cls.info.name!r}")
        return cls


REGISTRY: dict[str, AdapterEntry] = {
    e.name: e
    for e in [
        AdapterEntry("vanilla", "adapters.vanilla:VanillaAdapter", "openai"),
        AdapterEntry(
            "langgraph",
            "adapters.langgraph:LangGraphAdapter",
            "langgraph",
            ("langchain", "langchain-openai", "langgraph-checkpoint-sqlite"),
        ),
        AdapterEntry(
            "langgraph_per_call",
            "adapters.langgraph:LangGraphPerCallAdapter",
            "langgraph",
            ("langchain", "langchain-openai", "langgraph-checkpoint-sqlite"),
        ),
        AdapterEntry("openai_agents", "adapters.openai_agents:OpenAIAgentsAdapter", "openai-agents"),
        AdapterEntry("pydantic_ai", "adapters.pydantic_ai:PydanticAIAdapter", "pydantic-ai-slim"),
        AdapterEntry(
            "microsoft_af", "adapters.microsoft_af:MicrosoftAFAdapter", "agent-framework-core", ("agent-framework-openai",)
        ),
        # LiteLLM (under ADK's LiteLlm) keeps one process-wide logging worker bound to an event loop
        AdapterEntry("google_adk", "adapters.google_adk:GoogleADKAdapter", "google-adk", ("litellm",), concurrent=False),
        AdapterEntry("google_adk_confirm", "adapters.google_adk:GoogleADKConfirmAdapter", "google-adk", ("litellm",),
                     concurrent=False),
        AdapterEntry("crewai", "adapters.crewai:CrewAIAdapter", "crewai", environment="isolated"),
        AdapterEntry("smolagents", "adapters.smolagents:SmolagentsAdapter", "smolagents"),
        AdapterEntry("smolagents_emulated", "adapters.smolagents:SmolagentsEmulatedAdapter", "smolagents"),
    ]
}


def entry_points(group: str, builtin: set[str]) -> dict[str, tuple[metadata.EntryPoint, str]]:
    """A group's installed entry points by name, with "<distribution> <version>"; read from metadata,
    nothing imported. A plugin named like a built-in is dropped (built-ins win) with one warning line."""
    found: dict[str, tuple[metadata.EntryPoint, str]] = {}
    for ep in metadata.entry_points(group=group):
        dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "unknown distribution"
        kind = group.rpartition(".")[2].rstrip("s")
        if ep.name in builtin or ep.name in found:
            other = f"a built-in {kind}" if ep.name in builtin else found[ep.name][1]
            print(f"arena: warning: {kind} {ep.name!r} from {dist} ignored: {other} has that name", file=sys.stderr)
        else:
            found[ep.name] = (ep, dist)
    return found


@functools.cache
def plugins() -> dict[str, AdapterEntry]:
    """Installed plugin adapters (cached: each name clash is warned about once)."""
    return {name: AdapterEntry(name, f"{ep.module}:{ep.attr}" if ep.attr else ep.module,
                               ep.dist.name if ep.dist is not None else name, distribution=dist)
            for name, (ep, dist) in entry_points("arena.adapters", set(REGISTRY)).items()}


def entries() -> dict[str, AdapterEntry]:
    """Every adapter: the built-ins, then installed plugins."""
    return {**REGISTRY, **plugins()}


def load_target(target: str) -> type[ResumableRunner]:
    """Import `module:Class`; raises ValueError with a one-line reason."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError(f"adapter {target!r} is not a registered name or a 'module:Class' path")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name!r}: {exc}") from None
    except Exception as exc:  # a module that fails on import (a syntax error, an exception): its own one line
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(f"importing {module_name!r} failed: {type(exc).__name__}: {first}".rstrip(": ")) from None
    except SystemExit as exc:  # it would end arena with its code and not a word
        raise ValueError(exited_at_import(module_name, exc)) from None
    try:
        cls = getattr(module, attr)
    except AttributeError:
        raise ValueError(f"{module_name!r} has no attribute {attr!r}") from None
    if not hasattr(cls, "info") or not hasattr(cls, "start") or not hasattr(cls, "resume"):
        raise ValueError(f"{target!r} does not implement ResumableRunner (info, start, resume)")
    from arena.types import AdapterInfo

    if not isinstance(cls.info, AdapterInfo):
        raise ValueError(f"{target!r}: info must be an arena.types.AdapterInfo, not {type(cls.info).__name__}")
    return cls
