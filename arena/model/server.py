"""The OpenAI Chat Completions wire format for the scripted policy (streaming and not).

Every adapter talks to this through its framework's real OpenAI-compatible client, so the client
path is the one a user would exercise with a real provider. The harness serves it behind its model
gateway (`arena.gateway`), which attributes and records each request; `scripted_app(policies)` serves it
alone, as a stand-in for a real provider in tests of the gateway's recording proxy.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from arena.model.pairing import refusal
from arena.model.script import Policy, SeesTools, ToolCall, Turn


def error_response(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None) -> JSONResponse:
    """An error as the OpenAI API words one (`param`: the part of the request it names)."""
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": None}}, status)


def scripted_failure(exc: BaseException) -> tuple[Response, dict[str, Any]]:
    """The scripted model could not answer (its policy raised): HTTP 500 to the client, and what the gateway records
    of it, marked as the harness's own failure (`infrastructure`, `harness`): the item is not measured, never failed."""
    message = f"arena: the scripted model failed: {type(exc).__name__}: {exc}"[:500]
    return (error_response(500, message, "server_error"),
            {"status": 500, "error": message, "infrastructure": True, "harness": True})


def _profile(model: str, policies: Mapping[str, Policy]) -> str | None:
    name = model.split("/", 1)[-1]
    return name if name in policies else None


def _tool_call_id(answer: str, index: int) -> str:
    """The id of the `index`-th call of one model answer, named by `answer` (where and when the answer was given,
    never what it says): a real model mints a new id for every call of every answer, so a request asked again
    gets new ids, and two items whose requests are alike never share one. The same `answer` gives the same id."""
    digest = hashlib.sha256(answer.encode()).hexdigest()[:12]
    return f"call_{digest}_{index}"


def _fit_to_request(turn: Turn, body: dict[str, Any]) -> Turn:
    """A final answer must be a tool call when the client demands one and offers `final_answer`."""
    offered = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    if turn.content is not None and body.get("tool_choice") == "required" and "final_answer" in offered:
        return Turn(tool_calls=[ToolCall("final_answer", {"answer": turn.content})])
    return turn


def _usage(body: dict[str, Any], turn: Turn) -> dict[str, int]:
    prompt = sum(len(json.dumps(m, default=str)) for m in body.get("messages") or []) // 4
    completion = len(json.dumps([turn.content, [c.args for c in turn.tool_calls]])) // 4
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def invalid(body: Any) -> str | None:
    """Why a parsed request body is not a Chat Completions request, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return "`messages` must be a list"
    return None


class ChatCompletions:
    """The scripted model; remembers each request it answered so tests can inspect the wire.

    Which policies it serves is given per request (`respond`): the gateway passes those of the
    arena the item belongs to, so two arenas may each have a profile of the same name.
    """

    def __init__(self, policies: Mapping[str, Policy] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.policies = policies or {}

    async def handle(self, request: Request) -> Response:
        """Standalone endpoint (no attribution): used by `scripted_app`."""
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return error_response(400, "request body is not JSON")
        if (why := invalid(body)) is not None:
            return error_response(400, why)
        if (refused := refusal(body["messages"])) is not None:
            return error_response(400, refused.message, param=refused.param)
        return self.respond(body, self.policies)[0]

    def respond(self, body: dict[str, Any], policies: Mapping[str, Policy],
                named: str | None = None) -> tuple[Response, dict[str, Any]]:
        """(the HTTP response, what the model answered: text and tool calls, or the error).

        `named` names this answer (the gateway's: the item, the leg and the request's sequence in the item); its
        calls' ids are made from it, never from the request's content. Without one, the answer is named by its
        place among this endpoint's answers."""
        profile = _profile(str(body.get("model", "")), policies)
        if profile is None:
            message = f"unknown model {body.get('model')!r}; this endpoint serves {', '.join(policies) or 'nothing'}"
            return error_response(404, message), {"status": 404, "error": message}
        self.requests.append(body)
        named = named if named is not None else f"answer {len(self.requests)}"
        messages = body["messages"]
        policy = policies[profile]
        try:
            turn = _fit_to_request(policy.offered(messages, list(body.get("tools") or [])) if isinstance(policy, SeesTools)
                                   else policy(messages), body)
        except Exception as exc:  # noqa: BLE001 - the policy's own bug (a missing key): the harness's failure
            return scripted_failure(exc)
        created = int(time.time())
        completion_id = "chatcmpl-" + _tool_call_id(named, -1)[5:]
        tool_calls = [
            {
                "index": i,
                "id": _tool_call_id(named, i),
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.args)},
            }
            for i, c in enumerate(turn.tool_calls)
        ]
        answer = {
            "status": 200,
            "text": turn.content,
            "tool_calls": [{"id": tc["id"], "name": c.name, "args": c.args} for tc, c in zip(tool_calls, turn.tool_calls)],
        }
        finish = "tool_calls" if tool_calls else "stop"
        usage = _usage(body, turn)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = _stream_chunks(completion_id, created, body["model"], turn.content, tool_calls, finish, usage, include_usage)
            return StreamingResponse(chunks, media_type="text/event-stream"), answer
        said: dict[str, Any] = {"role": "assistant", "content": turn.content}
        if tool_calls:
            said["tool_calls"] = [{k: v for k, v in tc.items() if k != "index"} for tc in tool_calls]
        payload = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": body["model"],
            "choices": [{"index": 0, "message": said, "finish_reason": finish, "logprobs": None}],
            "usage": usage,
        }
        return JSONResponse(payload), answer


def scripted_app(policies: Mapping[str, Policy]) -> Starlette:
    """The scripted model alone at /v1/chat/completions, as an OpenAI-compatible provider would be."""
    chat = ChatCompletions(policies)
    app = Starlette(routes=[Route("/v1/chat/completions", chat.handle, methods=["POST"])])
    app.state.chat = chat
    return app


ARGUMENT_PIECE = 9  # characters of a tool call's arguments per delta


def _pieces(arguments: str) -> list[str]:
    """A call's JSON arguments in the deltas a streamed answer sends them in (at least one, maybe empty)."""
    return [arguments[i : i + ARGUMENT_PIECE] for i in range(0, len(arguments), ARGUMENT_PIECE)] or [""]


async def _stream_chunks(
    completion_id: str,
    created: int,
    model: str,
    content: str | None,
    tool_calls: list[dict[str, Any]],
    finish: str,
    usage: dict[str, int],
    include_usage: bool,
) -> AsyncIterator[str]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
            **extra,
        }
        return f"data: {json.dumps(payload)}\n\n"

    yield chunk({"role": "assistant", "content": None if tool_calls else ""})
    if content:
        for start in range(0, len(content), 24):
            yield chunk({"content": content[start : start + 24]})
    # Each call's head (index, id, name) comes first; then the calls' arguments arrive in pieces, the calls of
    # a turn taking turns, as a provider may send them: a client must assemble every call by its index.
    for tc in tool_calls:
        head = {"index": tc["index"], "id": tc["id"], "type": "function", "function": {"name": tc["function"]["name"], "arguments": ""}}
        yield chunk({"tool_calls": [head]})
    pieces = [_pieces(tc["function"]["arguments"]) for tc in tool_calls]
    for step in range(max((len(p) for p in pieces), default=0)):
        for tc, parts in zip(tool_calls, pieces):
            if step < len(parts):
                yield chunk({"tool_calls": [{"index": tc["index"], "function": {"arguments": parts[step]}}]})
    yield chunk({}, finish)
    if include_usage:
        payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage}
        yield f"data: {json.dumps(payload)}\n\n"
    yield "data: [DONE]\n\n"
