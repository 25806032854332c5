"""The model gateway: every request a framework sends to the model passes here, attributed to its item.

Each item gets its own base URL on the harness's loopback server, `/items/<token>/v1`. A request
that arrives there is recorded in that item's trace as a `model_call` event — what the model was
sent (a digest of the request and the messages new to this item) and what it answered (text and
tool calls) — then answered by the scripted policy, or forwarded to the real endpoint: for a real
model the harness is a recording proxy in front of it, so the same evidence exists there too.

A request to any other path cannot be attributed; it is refused (HTTP 400) and counted in
`unattributed`, never silently dropped. A request for an item that is already sealed is refused
(HTTP 409) and recorded as a late event.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from arena.model.resolve import LOCAL_KEY, ModelTarget
from arena.model.script import Policy, text_of
from arena.model.server import ChatCompletions, error_response, invalid
from arena.trace import TraceRecorder
from arena.types import ModelConfig

# (channel, index of this request within the item) -> an HTTP status to answer instead, or None.
FaultPlan = Callable[["Channel", int], "int | None"]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _call(raw: dict[str, Any]) -> dict[str, Any]:
    fn = raw.get("function") or {}
    arguments = fn.get("arguments")
    try:
        args = json.loads(arguments) if isinstance(arguments, str) and arguments else (arguments or {})
    except json.JSONDecodeError:
        args = {"_raw": arguments}
    return {"id": raw.get("id"), "name": fn.get("name"), "args": args}


def summarise_message(message: Any) -> dict[str, Any]:
    """A message as the checks read it: role, plain text, and for the assistant its tool calls."""
    if not isinstance(message, dict):
        return {"role": "?", "text": str(message)}
    out: dict[str, Any] = {"role": str(message.get("role", "?")), "text": text_of(message.get("content"))}
    if message.get("tool_calls"):
        out["tool_calls"] = [{k: v for k, v in _call(c).items() if k != "id"} for c in message["tool_calls"] if isinstance(c, dict)]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out


@dataclass
class Channel:
    """One item's model endpoint: its recorder, its target, and the messages it has already been sent."""

    token: str
    recorder: TraceRecorder
    target: ModelTarget
    base_url: str
    policies: Mapping[str, Policy] = field(default_factory=dict)  # the item's arena's scripted profiles
    seen: set[str] = field(default_factory=set)
    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def model(self) -> ModelConfig:
        """What the adapter is given: this item's loopback URL and the local key, never the real one."""
        return ModelConfig(name=self.target.name, base_url=self.base_url, api_key=LOCAL_KEY)

    def describe(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The request as recorded (digest, counts, new messages, tool names), and its index in the item."""
        messages = body.get("messages") or []
        new = []
        with self.lock:
            for message in messages:
                key = _digest(message)
                if key not in self.seen:
                    self.seen.add(key)
                    new.append(summarise_message(message))
            index, self.count = self.count, self.count + 1
        tools = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        return {
            "model": str(body.get("model")),
            "sha256": _digest(body)[:16],
            "messages": len(messages),
            "new": new,
            "tools": tools,
            "stream": bool(body.get("stream")),
        }, index


class Gateway:
    def __init__(self) -> None:
        self.chat = ChatCompletions()
        self.channels: dict[str, Channel] = {}
        self.unattributed: list[str] = []
        self.fault: FaultPlan | None = None
        self.delay_s = 0.0  # a model's latency, injected before every answer (bench/speed.py)
        self._http: Any = None

    def open(self, recorder: TraceRecorder, target: ModelTarget, server_url: str,
             policies: Mapping[str, Policy]) -> Channel:
        token = secrets.token_urlsafe(12)
        channel = Channel(token=token, recorder=recorder, target=target, base_url=f"{server_url}/items/{token}/v1",
                          policies=policies)
        self.channels[token] = channel
        return channel

    def forget(self, channel: Channel) -> None:
        self.channels.pop(channel.token, None)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # -- routes ------------------------------------------------------------------------------------

    async def unattributed_route(self, request: Request) -> Response:
        self.unattributed.append(f"{request.method} {request.url.path}")
        return error_response(400, "arena: this request cannot be attributed to an item; adapters must use "
                                   "ctx.model.base_url (the item's own /items/<token>/v1 endpoint)")

    async def models(self, request: Request) -> Response:
        channel = self.channels.get(request.path_params["token"])
        if channel is None:
            return await self.unattributed_route(request)
        return JSONResponse({"object": "list", "data": [{"id": p, "object": "model", "owned_by": "arena"}
                                                         for p in channel.policies]})

    async def chat_completions(self, request: Request) -> Response:
        channel = self.channels.get(request.path_params["token"])
        if channel is None:
            return await self.unattributed_route(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        why = "request body is not JSON" if body is None else invalid(body)
        described, index = channel.describe(body if isinstance(body, dict) else {})
        if why is not None:
            channel.recorder.record("model_call", request=described, response={"status": 400, "error": why})
            return error_response(400, why)
        if channel.recorder.sealed:
            message = "arena: this item is over (sealed); the request was not answered"
            channel.recorder.record("model_call", request=described, response={"status": 409, "error": message})
            return error_response(409, message, "conflict")
        status = self.fault(channel, index) if self.fault is not None else None
        if status is not None:
            message = f"arena: injected fault (HTTP {status})"
            channel.recorder.record("model_call", request=described, response={"status": status, "error": message, "injected": True})
            return error_response(status, message, "server_error")
        if channel.target.scripted:
            response, answer = self.chat.respond(body, channel.policies)
            channel.recorder.record("model_call", request=described, response=answer)
            return response
        event = channel.recorder.record("model_call", request=described, response={"status": 0, "pending": True})
        return await self._forward(channel, body, event)

    # -- the recording proxy for a real endpoint ---------------------------------------------------

    def _client(self) -> Any:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=30.0))
        return self._http

    async def _forward(self, channel: Channel, body: dict[str, Any], event: Any) -> Response:
        import httpx

        target = channel.target
        headers = {"authorization": f"Bearer {target.api_key}", "content-type": "application/json"}
        client = self._client()
        attempt = 0
        while True:  # retried here, for every adapter alike (their own clients make one attempt)
            attempt += 1
            upstream = client.build_request("POST", f"{target.upstream}/chat/completions", json=body, headers=headers)
            try:
                reply = await client.send(upstream, stream=True)
            except httpx.HTTPError as exc:
                if attempt < RETRY_ATTEMPTS:
                    await asyncio.sleep(retry_wait(attempt, None))
                    continue
                message = f"arena: the model endpoint could not be reached: {type(exc).__name__}"
                event.response = {"status": 502, "error": message, "infrastructure": True, "attempts": attempt}
                return error_response(502, message, "server_error")
            if reply.status_code in RETRY_STATUSES and attempt < RETRY_ATTEMPTS:
                wait = retry_wait(attempt, reply.headers.get("retry-after"))
                await reply.aread()
                await reply.aclose()
                await asyncio.sleep(wait)
                continue
            break
        if reply.status_code >= 400 or not body.get("stream"):
            raw = await reply.aread()
            await reply.aclose()
            event.response = {**_answer_of_json(reply.status_code, raw), "attempts": attempt}
            if reply.status_code in RETRY_STATUSES:  # still failing after the retries: the endpoint's fault
                event.response["infrastructure"] = True
            return Response(raw, status_code=reply.status_code, media_type=reply.headers.get("content-type", "application/json"))
        return StreamingResponse(_relay(reply, event), status_code=reply.status_code, media_type="text/event-stream")


# Uniform retries of a real model endpoint (the recording proxy): what is retried, how often, how long.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
RETRY_ATTEMPTS = 4
RETRY_BASE_S = 0.25  # doubled per attempt, unless the endpoint says how long (Retry-After)
RETRY_MAX_WAIT_S = 30.0


def retry_wait(attempt: int, retry_after: str | None) -> float:
    """Seconds to wait before the next attempt: the endpoint's Retry-After (seconds or an HTTP date), else
    exponential backoff; never more than RETRY_MAX_WAIT_S."""
    if retry_after:
        try:
            return min(max(float(retry_after), 0.0), RETRY_MAX_WAIT_S)
        except ValueError:
            from email.utils import parsedate_to_datetime

            try:
                when = parsedate_to_datetime(retry_after).timestamp()
            except (TypeError, ValueError):
                when = None
            if when is not None:
                import time

                return min(max(when - time.time(), 0.0), RETRY_MAX_WAIT_S)
    return min(RETRY_BASE_S * 2 ** (attempt - 1), RETRY_MAX_WAIT_S)


def _answer_of_json(status: int, raw: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {"status": status, "error": "the endpoint's answer is not JSON"}
    if status >= 400:
        err = payload.get("error") if isinstance(payload, dict) else None
        message = err.get("message") if isinstance(err, dict) else str(err or payload)
        return {"status": status, "error": str(message)[:500], "infrastructure": status >= 500 or status == 429}
    try:
        message = payload["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return {"status": status, "error": "the endpoint's answer has no choices[0].message"}
    return {"status": status, "text": message.get("content"), "tool_calls": [_call(c) for c in message.get("tool_calls") or []]}


async def _relay(reply: Any, event: Any) -> AsyncIterator[bytes]:
    """Pass a streamed answer through unchanged while assembling what it says.

    The last chunk is held back until the answer is recorded, so a client that has read the whole
    stream always finds its model_call complete (and ordered before whatever the client does next).
    """
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    buffer = b""
    held: bytes | None = None
    recorded = False

    def record() -> None:
        assembled = [{"id": c.get("id"), "name": c.get("name"), "args": _loads(c.get("arguments", ""))}
                     for _, c in sorted(calls.items())]
        event.response = {"status": reply.status_code, "text": "".join(text) or None, "tool_calls": assembled}

    try:
        async for chunk in reply.aiter_raw():
            if held is not None:
                yield held
            held = chunk
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                _absorb(line, text, calls)
        _absorb(buffer, text, calls)
        record()
        recorded = True
        if held is not None:
            yield held
    finally:
        await reply.aclose()
        if not recorded:
            record()


def _absorb(line: bytes, text: list[str], calls: dict[int, dict[str, Any]]) -> None:
    line = line.strip()
    if not line.startswith(b"data:"):
        return
    data = line[5:].strip()
    if not data or data == b"[DONE]":
        return
    try:
        payload = json.loads(data)
    except json.JSONDecodeError:
        return
    for choice in payload.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content"):
            text.append(delta["content"])
        for tc in delta.get("tool_calls") or []:
            slot = calls.setdefault(int(tc.get("index", 0)), {"arguments": ""})
            if tc.get("id"):
                slot["id"] = tc["id"]
            fn = tc.get("function") or {}
            if fn.get("name"):
                slot["name"] = fn["name"]
            slot["arguments"] += fn.get("arguments") or ""


def _loads(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return {"_raw": arguments}
