"""The model gateway: every request a framework sends to the model passes here, attributed to its item.

Each item gets its own base URL on the harness's loopback server, `/items/<token>/v1`. A request
that arrives there is recorded in that item's trace as a `model_call` event — what the model was
sent (a digest of the request and the messages new to this item) and what it answered (text and
tool calls) — then answered by the scripted policy, or forwarded to the real endpoint: for a real
model the harness is a recording proxy in front of it, so the same evidence exists there too.

A request whose messages the real API would refuse (a tool call without its result, a result without its
call: arena/model/pairing.py) is refused the same way (HTTP 400, the API's words) and recorded with `malformed`.
A request to any other path cannot be attributed; it is refused (HTTP 400) and counted in
`unattributed`, never silently dropped. A request for an item that is already sealed is refused
(HTTP 409) and recorded as a late event.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from arena.model.pairing import refusal
from arena.model.resolve import LOCAL_KEY, ModelTarget
from arena.model.script import Policy, text_of
from arena.model.server import ChatCompletions, error_response, invalid, scripted_failure
from arena.trace import TraceRecorder
from arena.types import ModelConfig

# (channel, index of this request within the item) -> an HTTP status to answer instead, or None.
FaultPlan = Callable[["Channel", int], "int | None"]

# when the gateway received the request being answered (time.monotonic()), for its model_call's `latency_s`
_RECEIVED: contextvars.ContextVar[float] = contextvars.ContextVar("arena_model_request_received")
DEFAULT_MODEL_TIMEOUT_S = 300.0  # the recording proxy's read timeout per request: ARENA_MODEL_TIMEOUT overrides it


def model_timeout_s() -> float:
    """How long the recording proxy waits for a real endpoint's answer (each read of it) before it calls the request
    the endpoint's failure: $ARENA_MODEL_TIMEOUT seconds, else DEFAULT_MODEL_TIMEOUT_S."""
    try:
        value = float(os.environ.get("ARENA_MODEL_TIMEOUT") or DEFAULT_MODEL_TIMEOUT_S)
    except ValueError:
        return DEFAULT_MODEL_TIMEOUT_S
    return value if value > 0 else DEFAULT_MODEL_TIMEOUT_S


def latency_s() -> float:
    """Seconds since the gateway received the request being answered (0 outside one)."""
    received = _RECEIVED.get(None)
    return round(time.monotonic() - received, 3) if received is not None else 0.0


INSTRUCTION_ROLES = ("system", "developer")  # the messages that carry an agent's instructions


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
    # what names the item's model answers (the scripted model's call ids are made from it, the leg and the
    # request's sequence): the item's identity in the run, else the channel's token
    name: str = ""
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
        new, system = [], []
        with self.lock:
            for message in messages:
                key = _digest(message)
                instructions = isinstance(message, dict) and message.get("role") in INSTRUCTION_ROLES
                if instructions:
                    system.append(key[:16])
                if key not in self.seen:
                    self.seen.add(key)
                    new.append({**summarise_message(message), **({"digest": key[:16]} if instructions else {})})
            index, self.count = self.count, self.count + 1
        tools = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        return {
            "model": str(body.get("model")),
            "sha256": _digest(body)[:16],
            "messages": len(messages),
            "new": new,
            # the instructions it carried, by digest (a new one's text is in `new`, under the same digest): a request
            # repeats its system message unchanged, so only this says that every request carried it
            "system": system,
            "tools": tools,
            "stream": bool(body.get("stream")),
        }, index


class Gateway:
    def __init__(self) -> None:
        self.chat = ChatCompletions()
        self.channels: dict[str, Channel] = {}
        # the endpoints of items that are over, kept for the gateway's life: a request that still comes to one is
        # recorded in its item's trace (a late event) and refused, never taken for an unattributed one
        self._retired: dict[str, Channel] = {}
        self.unattributed: list[str] = []
        self.fault: FaultPlan | None = None
        self.delay_s = 0.0  # a model's latency, injected before every answer (bench/speed.py)
        self._http: Any = None

    def open(self, recorder: TraceRecorder, target: ModelTarget, server_url: str,
             policies: Mapping[str, Policy], name: str | None = None) -> Channel:
        if not target.scripted:  # the recording proxy's client, imported here (before the item's thread starts), never
            import httpx  # noqa: F401  # on the server's thread while a framework in an item's thread sees it half-made
        token = secrets.token_urlsafe(12)
        channel = Channel(token=token, recorder=recorder, target=target, base_url=f"{server_url}/items/{token}/v1",
                          policies=policies, name=name or f"channel {token}")
        self.channels[token] = channel
        return channel

    def forget(self, channel: Channel) -> None:
        if self.channels.pop(channel.token, None) is not None:
            self._retired[channel.token] = channel

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
        retired = channel is None and (channel := self._retired.get(request.path_params["token"])) is not None
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
        if channel.recorder.sealed or retired:
            message = "arena: this item is over (sealed); the request was not answered"
            channel.recorder.record("model_call", request=described, response={"status": 409, "error": message})
            return error_response(409, message, "conflict")
        if (refused := refusal(body["messages"])) is not None:  # as the real API would: the framework's request
            channel.recorder.record("model_call", request=described, response={
                "status": 400, "error": refused.message, "malformed": refused.param, "latency_s": latency_s()})
            return error_response(400, refused.message, param=refused.param)
        status = self.fault(channel, index) if self.fault is not None else None
        if status is not None:
            message = f"arena: injected fault (HTTP {status})"
            channel.recorder.record("model_call", request=described, response={"status": status, "error": message, "injected": True})
            return error_response(status, message, "server_error")
        if channel.target.scripted:
            # the answer's call ids: new for every request (a request asked again is a new answer), the item's own
            try:
                response, answer = self.chat.respond(body, channel.policies,
                                                     f"{channel.name}|leg {channel.recorder.leg}|request {index}")
            except Exception as exc:  # noqa: BLE001 - the scripted model's own failure: recorded, never the framework's
                response, answer = scripted_failure(exc)
            channel.recorder.record("model_call", request=described, response={**answer, "latency_s": latency_s()})
            return response
        event = channel.recorder.record("model_call", request=described, response={"status": 0, "pending": True})
        return await self._forward(channel, body, event)

    async def timed_chat_completions(self, request: Request) -> Response:
        """`chat_completions`, with the time its answer takes counted on the item's model clock (from receipt to the
        answer's last byte, a streamed one included), which the item's timeout does not count."""
        token = request.path_params.get("token", "")
        channel = self.channels.get(token) or self._retired.get(token)
        _RECEIVED.set(time.monotonic())
        if channel is None:
            return await self.chat_completions(request)
        clock = channel.recorder.model_clock
        handle = clock.begin()
        try:
            response = await self.chat_completions(request)
        except BaseException:
            clock.end(handle)
            raise
        if isinstance(response, StreamingResponse):
            response.body_iterator = _ending(response.body_iterator, lambda: clock.end(handle))
        else:
            clock.end(handle)
        return response

    # -- the recording proxy for a real endpoint ---------------------------------------------------

    def _client(self) -> Any:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(timeout=httpx.Timeout(model_timeout_s(), connect=30.0))
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
                timed_out = isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout)
                if attempt < RETRY_ATTEMPTS and not timed_out:  # a request it never answered is not asked again
                    await asyncio.sleep(retry_wait(attempt, None))
                    continue
                message = f"arena: the model endpoint {_unreached(exc)}"
                event.response = {"status": 502, "error": message, "infrastructure": True, "attempts": attempt,
                                   "latency_s": latency_s()}
                return error_response(502, message, "server_error")
            if reply.status_code in RETRY_STATUSES and attempt < RETRY_ATTEMPTS:
                wait = retry_wait(attempt, reply.headers.get("retry-after"))
                await reply.aread()
                await reply.aclose()
                await asyncio.sleep(wait)
                continue
            break
        if reply.status_code >= 400 or not body.get("stream"):
            try:
                raw = await reply.aread()
            except httpx.HTTPError as exc:  # cut off mid-answer (a reset, a read timeout): the endpoint's failure
                await reply.aclose()
                message = f"arena: the model endpoint's answer was cut off: {_unreached(exc)}"
                event.response = {"status": 502, "error": message, "infrastructure": True, "attempts": attempt,
                                  "latency_s": latency_s()}
                return error_response(502, message, "server_error")
            await reply.aclose()
            event.response = {**_answer_of_json(reply.status_code, raw), "attempts": attempt, "latency_s": latency_s()}
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
                when: float | None = float(parsedate_to_datetime(retry_after).timestamp())
            except (TypeError, ValueError):
                when = None
            if when is not None:
                import time

                return min(max(when - time.time(), 0.0), RETRY_MAX_WAIT_S)
    return min(RETRY_BASE_S * 2.0 ** (attempt - 1), RETRY_MAX_WAIT_S)


# An endpoint's refusal that is the world's, not the request's: a wrong key (401), a key without access (403), an
# unknown model (404), a proxy wanting its own credentials (407), a timeout (408), a rate limit (429); and every 5xx.
# A 400 or 422 is about what the framework sent: its own.
WORLD_STATUSES = frozenset({401, 403, 404, 407, 408, 429})
_WORLD_CAUSES = {401: "rejected the key (HTTP 401)", 403: "refused access (HTTP 403)",
                 404: "does not know the model or path (HTTP 404)", 407: "needs proxy credentials (HTTP 407)",
                 408: "timed out the request (HTTP 408)", 429: "rate-limited the request (HTTP 429)"}


def world_failure(status: int) -> bool:
    """Whether an endpoint's HTTP status is the world's failure (never the framework's)."""
    return status >= 500 or status in WORLD_STATUSES


def _unreached(exc: BaseException) -> str:
    """What the endpoint did, for the item's error (the cause an `errored` item names)."""
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return "could not be reached: connecting timed out"
    if isinstance(exc, httpx.TimeoutException):
        return f"gave no answer within {model_timeout_s():g}s (ARENA_MODEL_TIMEOUT)"
    if isinstance(exc, httpx.ConnectError):
        return f"could not be reached: the connection was refused ({type(exc).__name__})"
    detail = f"{type(exc).__name__}: {str(exc)[:200]}" if str(exc).strip() else type(exc).__name__
    return f"reset or closed the connection ({detail})"


def _answer_of_json(status: int, raw: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        cause = "is empty" if not raw.strip() else "is not JSON (truncated or garbled)"
        return {"status": status, "error": f"the endpoint's answer (HTTP {status}) {cause}",
                "infrastructure": status < 400 or world_failure(status)}
    if status >= 400:
        err = payload.get("error") if isinstance(payload, dict) else None
        message = err.get("message") if isinstance(err, dict) else str(err or payload)
        if status in _WORLD_CAUSES:
            message = f"the endpoint {_WORLD_CAUSES[status]}: {message}"
        return {"status": status, "error": str(message)[:500], "infrastructure": world_failure(status)}
    try:
        message = payload["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return {"status": status, "error": "the endpoint's answer has no choices[0].message", "infrastructure": True}
    return {"status": status, "text": message.get("content"), "tool_calls": [_call(c) for c in message.get("tool_calls") or []]}


async def _relay(reply: Any, event: Any) -> AsyncIterator[bytes]:
    """Pass a streamed answer through unchanged while assembling what it says.

    The last chunk is held back until the answer is recorded, so a client that has read the whole
    stream always finds its model_call complete (and ordered before whatever the client does next).
    """
    import httpx

    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    buffer = b""
    held: bytes | None = None
    recorded = False
    done = False  # the stream said `data: [DONE]`: it ended where it meant to

    def record(cut: str | None = None) -> None:
        assembled = [{"id": c.get("id"), "name": c.get("name"), "args": _loads(c.get("arguments", ""))}
                     for _, c in sorted(calls.items())]
        event.response = {"status": reply.status_code, "text": "".join(text) or None, "tool_calls": assembled,
                          "latency_s": latency_s()}
        if cut is not None:  # the world's failure: the framework was given half an answer
            event.response.update(error=f"the endpoint's streamed answer was cut off: {cut}", infrastructure=True)

    try:
        try:
            async for chunk in reply.aiter_raw():
                if held is not None:
                    yield held
                held = chunk
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    done = _absorb(line, text, calls) or done
        except httpx.HTTPError as exc:
            record(_unreached(exc))
            recorded = True
            raise
        done = _absorb(buffer, text, calls) or done
        record(None if done else "it ended before `data: [DONE]`")
        recorded = True
        if held is not None:
            yield held
    finally:
        await reply.aclose()
        if not recorded:
            record()


async def _ending(body: Any, end: Callable[[], None]) -> AsyncIterator[Any]:
    """`body` passed through, then `end()` once it is over (its last chunk sent, or the stream broken off)."""
    try:
        async for chunk in body:
            yield chunk
    finally:
        end()


def _absorb(line: bytes, text: list[str], calls: dict[int, dict[str, Any]]) -> bool:
    """Take one line of a streamed answer into `text` and `calls`; True when it is the stream's `data: [DONE]`."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return False
    data = line[5:].strip()
    if not data or data == b"[DONE]":
        return data == b"[DONE]"
    try:
        payload = json.loads(data)
    except json.JSONDecodeError:
        return False
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
    return False


def _loads(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return {"_raw": arguments}
