"""The worker process: `python -m arena.worker`, in whichever environment holds the framework.

Its event loop keeps running between requests, so whatever a framework leaves running after a leg
returns (a task, a callback) goes on during the pause, where the harness watches for it, instead of
being frozen until the next leg.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
import uuid
from typing import Any


def _json_or_none(value: Any) -> tuple[Any, bool]:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None, False
    return value, True


async def _leftovers(before: set[Any]) -> None:
    """Before the worker exits: wait, as a Python process's normal exit does, for the framework's non-daemon threads
    that are still busy (at most `LEFTOVER_MAX_S`), so what they do reaches the harness while it still listens.
    The loop keeps running meanwhile (a thread may hand work to it)."""
    from arena.leftovers import LEFTOVER_MAX_S, busy

    loop = asyncio.get_running_loop()
    deadline = loop.time() + LEFTOVER_MAX_S
    while busy(before, daemons=False) and loop.time() < deadline:
        await asyncio.sleep(0.02)


async def serve(replies: Any) -> None:
    from arena.adapter import adopted
    from arena.catalog import load_target
    from arena.streaming import RemoteStreamLog, stream_endpoint
    from arena.tools.box import RemoteToolBox
    from arena.types import LegContext, LegResult
    from arena.leftovers import snapshot
    from arena.worker.protocol import Reply, Request

    loop = asyncio.get_running_loop()
    before = snapshot()  # the worker's own threads: any other thread alive at the close is the framework's
    adapter = None
    states: dict[str, Any] = {}

    def context(req: Request) -> LegContext:
        wire = req.ctx
        assert wire is not None, "request without ctx"
        streamed = bool(wire.fields.get("stream"))
        return wire.context(RemoteToolBox(wire.tool_endpoint, wire.tool_specs),
                            RemoteStreamLog(stream_endpoint(wire.tool_endpoint)) if streamed else None)

    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        if not line.strip():
            continue
        try:
            req = Request.model_validate_json(line)
            if req.op == "close":
                if adapter is not None:
                    await adapter.aclose()
                await _leftovers(before)  # what the framework left running still reaches the harness (bounded)
                replies.write(Reply(ok=True, pid=os.getpid()).model_dump_json() + "\n")
                break
            if adapter is None:
                adapter = adopted(load_target(req.adapter or ""))()
            ctx = context(req)
            if req.op == "start":
                result = await adapter.start(ctx)
            elif req.op == "hook":
                assert req.hook is not None, "a hook request without its hook"
                # the paused state stays until the hook is done: a failed hook (add_input) resumes from it
                out = await adapter.run_hook(req.hook, states.get(req.handle or "", req.state), *req.args, ctx=ctx)
                states.pop(req.handle or "", None)
                if not isinstance(out, LegResult):  # the paused run's new state, kept here as a suspended leg's is
                    added_handle = uuid.uuid4().hex
                    states[added_handle] = out
                    value, is_json = _json_or_none(out)
                    replies.write(Reply(ok=True, handle=added_handle, state=value, state_is_json=is_json,
                                        pid=os.getpid()).model_dump_json() + "\n")
                    continue
                result = out
            else:
                state = states.pop(req.handle) if req.handle in states else req.state
                assert req.decision is not None, "resume without a decision"
                result = await adapter.resume(state, req.decision, ctx)
            handle: str | None = None
            state, is_json = _json_or_none(result.state)
            if result.status == "suspended":
                handle = uuid.uuid4().hex
                states[handle] = result.state
            reply = Reply(ok=True, result=result, handle=handle, state=state, state_is_json=is_json, pid=os.getpid())
        except Exception as exc:  # the harness turns this into the item's error
            lines = str(exc).strip().splitlines()
            reply = Reply(ok=False, error=f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": "), pid=os.getpid(),
                          traceback=traceback.format_exc())
        replies.write(reply.model_dump_json() + "\n")


def main() -> None:
    from arena.worker.deathsig import die_with_parent

    parent = os.environ.get("ARENA_PARENT_PID")
    die_with_parent(int(parent) if parent and parent.isdigit() else None)  # never outlive the harness
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed to stdout goes to stderr
    asyncio.run(serve(replies))
    replies.close()
    sys.stderr.flush()
    os._exit(0)  # a framework's non-daemon threads were waited for at the close (bounded): they end here


if __name__ == "__main__":
    main()
