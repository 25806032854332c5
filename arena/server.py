"""The harness's loopback server: the scripted model and the tool endpoint, on 127.0.0.1:<ephemeral>.

Started and stopped by the harness for a run. Tool calls arriving here (from adapters running in
another process) land in the same executor, and so the same trace, as in-process calls.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from arena.model import PROFILES
from arena.model.server import ChatCompletions
from arena.tools.box import ToolExecutor


class HarnessServer:
    def __init__(self) -> None:
        self.chat = ChatCompletions()
        self._executors: dict[str, ToolExecutor] = {}
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat.handle, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/tools/{token}/{name}", self._tool, methods=["POST"]),
            ]
        )
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="arena-server", daemon=True)
        self.port: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> HarnessServer:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the harness's loopback server did not start")
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
        self._executors.pop(endpoint.rstrip("/").rsplit("/", 1)[-1], None)

    async def _models(self, request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": p, "object": "model", "owned_by": "arena"} for p in PROFILES]})

    async def _tool(self, request: Request) -> JSONResponse:
        executor = self._executors.get(request.path_params["token"])
        if executor is None:
            return JSONResponse({"error": "unknown tool session"}, 404)
        body = await request.json()
        result = executor.execute(request.path_params["name"], body.get("args") or {})
        return JSONResponse({"result": result})
