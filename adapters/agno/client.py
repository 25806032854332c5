"""agno imported lazily with its telemetry off, its cancellation manager shared across event loops, and the model
client: `OpenAILike` on `ctx.model`, one attempt per request."""

from __future__ import annotations

import os
from typing import Any

from arena.for_adapters import LegContext, kit

# agno's switches, set before the first import of agno.
_ENV = {"AGNO_TELEMETRY": "false"}


def import_agno() -> None:
    """Import agno lazily, with its telemetry off. `AGNO_TELEMETRY` is forced, not defaulted: agno reads it
    at every run and it overrides `Agent(telemetry=False)`, so a "true" inherited from the environment
    would turn telemetry back on."""
    for key, value in _ENV.items():
        os.environ[key] = value
    import agno.agent  # noqa: F401

    _share_cancellation_across_loops()


class _ThreadLockAsync:
    """`async with` over a threading lock: what agno's in-memory cancellation manager holds it for is a few
    dict operations with no await inside, so a short blocking acquire is safe from any event loop."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock

    async def __aenter__(self) -> None:
        self._lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()


def _share_cancellation_across_loops() -> None:
    """agno registers every run with one process-wide `InMemoryRunCancellationManager`, whose `asyncio.Lock`
    binds to the first event loop that contends for it. The harness runs concurrent items in one process, each
    on its own loop, so a second loop's run failed with "is bound to a different event loop" (a flaky error
    item, nothing agno's users meet with one loop). The manager installed here is agno's own, with that lock
    guarded by its threading lock instead; cancellation itself is unchanged."""
    from agno.run import cancel
    from agno.run.cancellation_management.in_memory_cancellation_manager import InMemoryRunCancellationManager

    manager = cancel.get_cancellation_manager()
    if isinstance(manager, InMemoryRunCancellationManager) and not isinstance(manager._async_lock, _ThreadLockAsync):
        manager._async_lock = _ThreadLockAsync(manager._lock)  # type: ignore[assignment]  # duck-types its asyncio.Lock


def model_for(ctx: LegContext) -> Any:
    from agno.models.openai import OpenAILike

    # One attempt per request: no openai-client retries (kit.openai_client), no agno model retries or guidance
    # retries. The client is handed to the model ready-made (agno uses a cached `async_client` as it is): agno's own
    # `http_client=` takes only an `httpx.AsyncClient`, which the openai SDK's transport here is not.
    return OpenAILike(id=ctx.model.name, base_url=ctx.model.base_url, api_key=ctx.model.api_key,
                      max_retries=0, async_client=kit.openai_client(ctx), retries=0, retry_with_guidance=False)
