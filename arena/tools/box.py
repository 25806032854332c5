"""Tool boxes: how an adapter's framework-native tools reach the harness's tools.

The tool executes in harness code, which writes the call to the item's trace before returning the
result. An in-process adapter gets a `LocalToolBox`; an adapter running in another process gets a
`RemoteToolBox` that posts to the harness's loopback endpoint, which lands in the same executor.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Callable
from typing import Any

from arena.per_process import PerProcess
from arena.trace import TraceRecorder
from arena.types import ToolSpec

ToolFunction = Callable[..., str]


class ToolExecutor:
    """Runs a harness tool by name and logs it. The only place a tool call is ever recorded.

    Tools are plain `functions`, or, for an arena with state, the item's `backend` (its `call`). A backend
    whose `call` takes `call_id` gets the framework's id for the call where the adapter handed it over.
    """

    def __init__(self, specs: list[ToolSpec], functions: dict[str, ToolFunction] | None, recorder: TraceRecorder,
                 backend: Any = None):
        self.specs = specs
        self._functions = functions or {}
        self._recorder = recorder
        self._backend = backend
        self._lock = threading.Lock()  # one tool at a time per item, whichever thread or process asks
        self._backend_takes_id = backend is not None and "call_id" in inspect.signature(backend.call).parameters

    @property
    def recorder(self) -> TraceRecorder:
        """The item's trace (a streamed leg's events go there too)."""
        return self._recorder

    def locked(self) -> threading.Lock:
        """Held while a tool runs: the harness takes it to read or close the backend between calls."""
        return self._lock

    def execute(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        if not isinstance(args, dict):
            args = {}
        call_id = str(call_id) if call_id is not None else None
        if self._recorder.sealed:  # the item is over: record the attempt, never run it
            return refuse(self._recorder, name, args, call_id, "item sealed")
        if self._backend is not None:
            with self._lock:
                result = str(self._backend.call(name, args, call_id=call_id) if self._backend_takes_id
                             else self._backend.call(name, args))
            self._recorder.record("tool_call", tool=name, args=args, result=result, call_id=call_id)
            return result
        fn = self._functions.get(name)
        if fn is None:
            result = f"ERROR: unknown tool {name!r}"
        else:
            try:
                result = str(fn(**args))
            except TypeError as exc:
                result = f"ERROR: bad arguments for {name}: {exc}"
        self._recorder.record("tool_call", tool=name, args=args, result=result, call_id=call_id)
        return result


def refuse(recorder: TraceRecorder, name: str, args: Any, call_id: Any = None, why: str = "item sealed") -> str:
    """A call that reached the harness when its item could no longer take it (sealed, its tool session closed):
    recorded in the item's trace (a late event once the item is sealed, so in the run directory's late.jsonl) and
    never run; the caller gets the refusal as the tool's result."""
    result = f"ERROR: {why}; {name} was not executed"
    recorder.record("tool_call", tool=name, args=args if isinstance(args, dict) else {}, result=result,
                    call_id=str(call_id) if call_id is not None else None)
    return result


def with_call_id(call_id: str | None) -> dict[str, str]:
    """`call_id=` as keyword arguments, only where there is an id: a tool box or executor of an adapter's or an
    arena's own may not take it."""
    return {"call_id": str(call_id)} if call_id is not None else {}


def parse_args(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Tool arguments as a dict, whether a framework hands over JSON text or an object."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": value}


class LocalToolBox:
    def __init__(self, executor: ToolExecutor, specs: list[ToolSpec] | None = None):
        self.executor = executor
        self.specs = executor.specs if specs is None else specs

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return self.executor.execute(name, args, call_id)

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return self.executor.execute(name, args, call_id)


def _client() -> Any:
    import httpx  # only workers need it; keeps `arena list` from paying for it

    from arena.http import tls

    return httpx.Client(trust_env=False, verify=tls())


# One HTTP client per process for the calls to the harness: building one per call loaded the CA certificates
# every time (most of a forked worker's own cost).
_loopback: PerProcess[Any] = PerProcess(_client)


class RemoteToolBox:
    """For adapters in another process: every call crosses loopback to the harness's executor."""

    def __init__(self, endpoint: str, specs: list[ToolSpec], timeout: float = 30.0):
        self.endpoint = endpoint.rstrip("/")
        self.specs = specs
        self._timeout = timeout

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        body: dict[str, Any] = {"args": args, **({"call_id": call_id} if call_id is not None else {})}
        response = _loopback.get().post(f"{self.endpoint}/{name}", json=body, timeout=self._timeout)
        response.raise_for_status()
        result: str = response.json()["result"]
        return result

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return await asyncio.to_thread(self.call, name, args, call_id)
