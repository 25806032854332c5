"""agno imported lazily with its telemetry off (forced, whatever the environment says), its cancellation manager
shared across event loops, and a model client that makes one attempt per request."""

from __future__ import annotations

import asyncio
import os

import pytest

pytest.importorskip("agno")

from arena_builtins.adapters.agno.client import import_agno  # noqa: E402
from tests.adapters.agno.conftest import HITL, NAME, adapter_module, leg_context  # noqa: E402


def test_telemetry_env_is_forced_off_even_when_the_environment_says_true(monkeypatch):
    """agno re-reads AGNO_TELEMETRY at every run and it overrides Agent(telemetry=...): the adapter forces it."""
    monkeypatch.setenv("AGNO_TELEMETRY", "true")
    import_agno()
    assert os.environ["AGNO_TELEMETRY"] == "false"


def test_no_telemetry_event_is_sent_for_the_adapters_agent(monkeypatch, tmp_path):
    """agno's own telemetry hook (agno.agent._telemetry.alog_agent_telemetry, called when a run completes)
    reaches agno's API client for an agent with telemetry on (the control), and never for the adapter's
    agent, even with AGNO_TELEMETRY=true in the environment before the adapter imported agno."""
    monkeypatch.setenv("AGNO_TELEMETRY", "true")
    adapter = adapter_module().AgnoAdapter()
    agent = adapter._build(leg_context(HITL, "hitl-01", str(tmp_path)))
    from agno.agent import Agent
    from agno.agent import _telemetry
    from agno.api import agent as api_agent
    from agno.models.openai import OpenAILike

    sent: list = []

    async def record(run):  # agno's API call, replaced: nothing may leave the machine
        sent.append(run)

    monkeypatch.setattr(api_agent, "acreate_agent_run", record)
    assert agent.telemetry is False
    asyncio.run(_telemetry.alog_agent_telemetry(agent, session_id="s"))
    assert sent == []
    # the control: the same hook with telemetry on does reach the API client
    monkeypatch.setenv("AGNO_TELEMETRY", "true")
    control = Agent(model=OpenAILike(id="m", base_url="http://127.0.0.1:9/v1", api_key="x"), telemetry=True)
    asyncio.run(_telemetry.alog_agent_telemetry(control, session_id="s"))
    assert len(sent) == 1
    asyncio.run(adapter.aclose())


def test_completed_runs_send_no_telemetry(monkeypatch, run_adapter):
    """Whole runs (pause, resume, final answer) never call agno's telemetry API client."""
    from agno.api import agent as api_agent

    sent: list = []

    async def record(run):
        sent.append(run)

    def record_sync(run):
        sent.append(run)

    monkeypatch.setattr(api_agent, "acreate_agent_run", record)
    monkeypatch.setattr(api_agent, "create_agent_run", record_sync)
    results = run_adapter(NAME, items=["hitl-01", "hitl-02"])
    assert [r.status for r in results] == ["passed", "passed"]
    assert sent == []


def test_model_client_makes_one_attempt():
    """One attempt per request: the openai client handed to agno does not retry, nor does agno's model or agent."""
    import tempfile

    with tempfile.TemporaryDirectory() as workdir:
        adapter = adapter_module().AgnoAdapter()
        agent = adapter._build(leg_context(HITL, "hitl-01", workdir))
        assert agent.model.async_client.max_retries == 0
        assert agent.model.max_retries == 0
        assert agent.model.retries == 0 and agent.model.retry_with_guidance is False
        assert agent.retries == 0
        assert agent.model.get_async_client() is agent.model.async_client  # agno uses the client it was given
        asyncio.run(adapter.aclose())


def _contend_from_fresh_loops(lock, rounds: int = 3) -> list[str]:
    """Each round: a thread's event loop holds `lock` for a moment while a fresh loop in this thread waits for
    it, as two concurrent items' runs (each on its own loop) reach agno's cancellation manager at once."""
    import threading
    import time

    outcomes = []
    for _ in range(rounds):
        entered = threading.Event()

        async def hold():
            async with lock:
                entered.set()
                time.sleep(0.1)  # agno holds it without awaiting; another thread is what waits meanwhile

        holder = threading.Thread(target=asyncio.run, args=(hold(),))
        holder.start()
        entered.wait(5)

        async def take():
            async with lock:
                return "took it"

        try:
            outcomes.append(asyncio.run(asyncio.wait_for(take(), 3)))
        except (RuntimeError, asyncio.TimeoutError) as error:
            outcomes.append(f"{type(error).__name__}: {error}")
        holder.join(5)
    return outcomes


def test_agnos_cancellation_manager_serves_runs_on_several_event_loops():
    """agno registers each run with one process-wide cancellation manager whose `asyncio.Lock` binds to the
    first loop that contends for it; concurrent items (one loop each) then failed at random with "bound to a
    different event loop". The adapter's import leaves agno's manager in place with a lock any loop can take;
    the same contention on agno's untouched manager fails, which is what this test would catch if it came back."""
    from agno.run.cancel import get_cancellation_manager
    from agno.run.cancellation_management.in_memory_cancellation_manager import InMemoryRunCancellationManager

    import_agno()
    manager = get_cancellation_manager()
    assert type(manager) is InMemoryRunCancellationManager  # agno's own manager, still the one in place
    assert _contend_from_fresh_loops(manager._async_lock) == ["took it"] * 3
    assert _contend_from_fresh_loops(InMemoryRunCancellationManager()._async_lock) != ["took it"] * 3
