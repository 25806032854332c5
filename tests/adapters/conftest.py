"""What the adapter tests share: every (adapter, arena, profile) they look at is run once per session.

`cell(adapter, arena, profile)` runs an arena's items through a registered adapter the way the tests
always have (tests/conftest.py's `run_adapter`; an isolated adapter in workers on its own environment,
forked from its fork server as `arena run` forks them; an arena that restarts between legs through
`run_durable_pair`), and keeps the results, the chat requests the scripted model answered meanwhile
and any connection refused meanwhile. test_conformance.py asserts the contract every adapter shares
on these cells; each adapter's own file asserts what is particular to its framework on the same runs,
so no run is made twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pytest

from arena import catalog
from arena.results import ItemResult
from arena.runner import run_items
from tests.conftest import run_durable_pair, wire_slice


@dataclass(frozen=True)
class Cell:
    adapter: str
    arena: str
    profile: str
    results: list[ItemResult]
    requests: list[dict]  # the chat-completions bodies the scripted model answered while it ran
    refused: list[str]  # connections and lookups the offline guard refused while it ran (in this process)

    @property
    def wire(self) -> tuple[list[ItemResult], list[dict]]:
        """(results, requests), as tests/conftest.py's `wire_slice` returns them."""
        return self.results, self.requests

    @property
    def by_id(self) -> dict[str, ItemResult]:
        return {r.item_id: r for r in self.results}


def isolated_factory(server, entry):
    """For an isolated adapter: a worker per item on its own environment's python, forked from the fork
    server (shared by every test in the session) where `arena run` would fork it."""
    from arena.worker import envs
    from arena.worker.client import WorkerAdapter, start_mode

    python = str(envs.ensure_env(entry.env_name))
    fork = start_mode(python, entry.target) == "fork"
    return partial(WorkerAdapter, entry.target, entry.load().info, python, server, fork=fork)


def _isolated(server, entry, spec, profile: str, timeout_s: float) -> list[ItemResult]:
    return run_items(isolated_factory(server, entry), spec, spec.items, server=server, model=profile,
                     timeout_s=timeout_s, concurrency=4 if entry.concurrent else 1)


@pytest.fixture(scope="session")
def cell(server, run_adapter, no_network):
    """cell(adapter, arena="human_in_the_loop", profile=None: the arena's default) -> Cell, run once."""
    cache: dict[tuple[str, str, str], Cell] = {}

    def get(adapter: str, arena: str = "human_in_the_loop", profile: str | None = None, timeout_s: float = 120.0) -> Cell:
        spec = catalog.load_arena(arena)
        profile = profile or spec.profiles[0]
        key = (adapter, arena, profile)
        if key not in cache:
            entry = catalog.adapters()[adapter]
            if not entry.available:
                pytest.skip(f"{entry.framework} is not installed")
            if spec.restart_between_legs:
                if entry.isolated:
                    pytest.fail(f"{adapter}: an isolated adapter on {arena} is run through `arena run` "
                                "(tests/adapters/crewai/test_worker.py), not here")
                run = partial(run_durable_pair, server, adapter, timeout_s)
            elif entry.isolated:
                run = partial(_isolated, server, entry, spec, profile, timeout_s)
            else:
                run = partial(run_adapter, adapter, profile=profile, arena=arena, timeout_s=timeout_s)
            refused = len(no_network)
            results, requests = wire_slice(server, run)
            cache[key] = Cell(adapter, arena, profile, results, requests, list(no_network[refused:]))
        return cache[key]

    return get


@pytest.fixture(scope="session")
def vanilla_by_id(cell):
    """The reference traces (tests/conftest.py's fixture of that name, and so `vanilla` and
    `vanilla_eager`), from the same cells as everything else here."""

    def get(profile: str = "scripted", arena: str = "human_in_the_loop") -> dict[str, ItemResult]:
        return cell("vanilla", arena, profile).by_id

    return get


def _text(content):
    """A message's content as text (some frameworks send a list of content parts)."""
    return "".join(p.get("text", "") for p in content) if isinstance(content, list) else content


def tool_messages(requests, call_name):
    """(user input, tool-message content) for every distinct tool message answering a call named `call_name`,
    from the model requests the gateway recorded."""
    seen, out = set(), []
    for body in requests:
        messages = body["messages"]
        names = {tc["id"]: tc["function"]["name"] for m in messages if m.get("role") == "assistant"
                 for tc in m.get("tool_calls") or []}
        user = _text(next(m["content"] for m in messages if m.get("role") == "user"))
        for m in messages:
            if m.get("role") == "tool" and names.get(m.get("tool_call_id")) == call_name:
                content = _text(m["content"])
                key = (user, m["tool_call_id"], content)
                if key not in seen:
                    seen.add(key)
                    out.append((user, content))
    return out
