"""A faulty model endpoint for tests: a loopback HTTP server in front of the scripted model (`scripted_app`) that
answers as a broken provider, a broken proxy or a broken network would.

`FaultProxy().mode` says what every request gets (it can be changed between runs):
- "pass": the scripted model's answer, unchanged;
- "401", "403", "404", "500", ...: that HTTP status with an OpenAI-style error body;
- "truncated": HTTP 200 whose body is the first half of the real answer (broken JSON; a streamed answer cut mid-way,
  without `data: [DONE]`), the connection then closed cleanly;
- "reset": the connection reset (TCP RST) as soon as the request is read, nothing answered;
- "cut": the headers of a 200 and part of the body, then a reset (the answer cut off mid-way);
- "slow": the real answer, after `delay_s` seconds;
- "hang": nothing, ever (the connection stays open).
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from typing import Any

import httpx

from arena import catalog
from arena.model.server import scripted_app


class FaultProxy:
    def __init__(self, mode: str = "pass", delay_s: float = 2.0) -> None:
        self.mode = mode
        self.delay_s = delay_s
        self.requests = 0
        self._app = scripted_app(catalog.policies())
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy", daemon=True)
        self._hung: list[asyncio.StreamWriter] = []

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0), self._loop).result(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            for writer in self._hung:
                writer.close()
        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    # -- one connection ----------------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                self.requests += 1
                if not await self._answer(request, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        writer.close()

    async def _answer(self, request: tuple[str, str, bytes], writer: asyncio.StreamWriter) -> bool:
        """Answer one request as the mode says; False when the connection is gone (or kept hanging)."""
        method, path, body = request
        mode = self.mode
        if mode == "hang":
            self._hung.append(writer)
            return False
        if mode == "reset":
            _reset(writer)
            return False
        if mode.isdigit():
            payload = json.dumps({"error": {"message": f"fault proxy: HTTP {mode}", "type": "fault", "code": mode}})
            await _write(writer, int(mode), "application/json", payload.encode())
            return True
        if mode == "slow":
            await asyncio.sleep(self.delay_s)
        status, ctype, content = await self._upstream(method, path, body)
        if mode == "truncated":
            cut = content[: max(1, len(content) // 2)]
            writer.write(_head(status, ctype, len(cut)) + cut)
            await writer.drain()
            writer.close()
            return False
        if mode == "cut":
            writer.write(_head(status, ctype, len(content)) + content[: max(1, len(content) // 2)])
            await writer.drain()
            _reset(writer)
            return False
        await _write(writer, status, ctype, content)
        return True

    async def _upstream(self, method: str, path: str, body: bytes) -> tuple[int, str, bytes]:
        """The scripted model's own answer to the request (the path's /v1 kept)."""
        transport = httpx.ASGITransport(app=self._app)
        async with httpx.AsyncClient(transport=transport, base_url="http://scripted") as client:
            reply = await client.request(method, path, content=body, headers={"content-type": "application/json"})
        return reply.status_code, reply.headers.get("content-type", "application/json"), reply.content


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    return method, path, body


def _head(status: int, ctype: str, length: int) -> bytes:
    return (f"HTTP/1.1 {status} FAULT\r\ncontent-type: {ctype}\r\ncontent-length: {length}\r\n"
            f"connection: keep-alive\r\n\r\n").encode()


async def _write(writer: asyncio.StreamWriter, status: int, ctype: str, content: bytes) -> None:
    writer.write(_head(status, ctype, len(content)) + content)
    await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0), as a crashed server or a dropping firewall does."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
