"""The harness's loopback server, on 127.0.0.1:<ephemeral>: the model gateway and the tool endpoint.

Started and stopped by the harness for a run. Model requests arrive at an item's own base URL
(`/items/<token>/v1`, see `arena.gateway`) and are recorded in that item's trace. Tool calls
arriving here (from adapters running in another process) land in the same executor, and so the same
trace, as in-process calls.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import sys
import threading
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from arena import catalog
from arena.errors import SetupError
from arena.gateway import Channel, Gateway
from arena.model.resolve import ModelTarget
from arena.model.script import Policy
from arena.streaming import LocalStreamLog
from arena.tools.box import ToolExecutor, refuse, with_call_id
from arena.trace import TraceRecorder


class _KilledClientWrites(logging.Filter):
    """asyncio's warning for writes to a connection whose peer is gone: a streamed answer's remaining chunks to
    a worker the harness killed on purpose (crash_recovery). The answer was recorded as served; the rest is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "socket.send() raised exception."


def _quiet_killed_client_writes() -> None:
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _KilledClientWrites) for f in logger.filters):
        logger.addFilter(_KilledClientWrites())


# How long the server keeps an idle connection open: longer than any client keeps one to reuse (httpx, and so the
# openai SDK, 5 s; aiohttp 15 s). At uvicorn's default, the server's 5 s equalled httpx's, and a request sent on a
# connection idle for just under 5 s could meet the server closing it: "Server disconnected without sending a
# response", an APIConnectionError that no adapter's client retries (seen once in CI, after a journal's fsync).
KEEP_ALIVE_S = 20
# uvicorn's fast parts (its `standard` extra's): httptools parses HTTP, uvloop runs the server's loop. With
# uvicorn's pure-Python h11 and asyncio's loop, serving an item's model requests cost about 1 ms of the
# item's 10 with the scripted model (bench/vs_inspect.py); the adapters' own loops stay asyncio's.
HTTP, LOOP = "httptools", ("asyncio" if sys.platform == "win32" else "uvloop")


class HarnessServer:
    def __init__(self) -> None:
        _quiet_killed_client_writes()
        self.gateway = Gateway()
        self.chat = self.gateway.chat  # the scripted model; `chat.requests` is every body it answered
        self._executors: dict[str, ToolExecutor] = {}
        # the sessions of items that are over, kept for the server's life: a call that still comes to one (a process
        # the harness started, a thread left running) is recorded in its item's trace and refused, never lost
        self._retired: dict[str, TraceRecorder] = {}
        app = Starlette(
            routes=[
                Route("/items/{token}/v1/chat/completions", self.gateway.timed_chat_completions, methods=["POST"]),
                Route("/items/{token}/v1/models", self.gateway.models, methods=["GET"]),
                Route("/tools/{token}/{name}", self._tool, methods=["POST"]),
                Route("/streamed/{token}", self._streamed, methods=["POST"]),
                Route("/{path:path}", self.gateway.unattributed_route, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
            ],
            lifespan=self._lifespan,
        )
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on",
                                timeout_keep_alive=KEEP_ALIVE_S, http=HTTP, loop=LOOP)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="arena-server", daemon=True)
        self.port: int | None = None

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        yield
        await self.gateway.aclose()  # the recording proxy's client lives on the server's loop

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def open_item(self, recorder: TraceRecorder, target: ModelTarget | str,
                  policies: Mapping[str, Policy] | None = None, name: str | None = None) -> Channel:
        """A model endpoint of the item's own: every request to it is recorded in `recorder`.

        `policies` are the scripted profiles of the item's arena (default: every arena's, by name). `name`: the
        item's identity in the run (arena, item, epoch), which names the scripted model's answers (their call ids)
        so that the same run gives the same ids; default, the endpoint's own random token.
        """
        if isinstance(target, str):
            target = ModelTarget(name=target)
        if policies is None:
            policies = catalog.policies()
        return self.gateway.open(recorder, target, self.url, policies, name)

    def start(self) -> HarnessServer:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise SetupError("the harness's loopback server did not start")
            time.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)

    def __enter__(self) -> HarnessServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def register(self, executor: ToolExecutor) -> str:
        """Expose an item's executor to other processes; returns its endpoint URL."""
        token = secrets.token_urlsafe(12)
        self._executors[token] = executor
        return f"http://127.0.0.1:{self.port}/tools/{token}"

    def unregister(self, endpoint: str) -> None:
        token = endpoint.rstrip("/").rsplit("/", 1)[-1]
        executor = self._executors.pop(token, None)
        recorder = getattr(executor, "recorder", None)
        if isinstance(recorder, TraceRecorder):
            self._retired[token] = recorder

    async def _tool(self, request: Request) -> JSONResponse:
        token = request.path_params["token"]
        executor = self._executors.get(token)
        if executor is None and token not in self._retired:
            return JSONResponse({"error": "unknown tool session"}, 404)
        body = await request.json()
        if not isinstance(body, dict):
            body = {}
        name, args = request.path_params["name"], body.get("args") or {}
        if executor is None:  # the item's session is closed: recorded (late, once it is sealed), not run
            return JSONResponse({"result": refuse(self._retired[token], name, args, body.get("call_id"),
                                                  "the item's tool session is closed")})
        held = getattr(executor, "aexecute", None)  # a call the runner may hold (a concurrent replay) waits here
        ids = with_call_id(body.get("call_id"))  # only where the adapter gave one
        result = await held(name, args, **ids) if held is not None else executor.execute(name, args, **ids)
        return JSONResponse({"result": result})

    async def _streamed(self, request: Request) -> JSONResponse:
        """What a worker's streamed leg read from its framework's stream, into the item's trace."""
        executor = self._executors.get(request.path_params["token"])
        recorder = executor.recorder if executor is not None else self._retired.get(request.path_params["token"])
        if recorder is None:
            return JSONResponse({"error": "unknown tool session"}, 404)
        body = await request.json()
        kind = body.get("kind")
        if kind not in ("tool_call", "tool_result", "pause") or not isinstance(body.get("tool"), str):
            return JSONResponse({"error": "a streamed event needs a kind (tool_call, tool_result, pause) and a tool"}, 422)
        LocalStreamLog(recorder).told(kind, body["tool"], call_id=body.get("call_id"), result=body.get("result"))
        return JSONResponse({"ok": True})
