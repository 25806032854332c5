"""The model gateway: requests attributed to their item and recorded, the rest refused, a recording proxy."""

from __future__ import annotations

import contextlib
import json
import threading
import time

import httpx
import openai
import pytest
import uvicorn

from arena import catalog
from arena.model.resolve import LOCAL_KEY, ModelTarget
from arena.model.server import scripted_app
from arena.trace import TraceRecorder

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("search_rooms", "request_approval", "book_room")]
TASK = {"role": "user", "content": "Book a meeting room for 8 people on Tuesday."}


def test_each_request_is_recorded_in_its_own_items_trace(server):
    first, second = TraceRecorder(), TraceRecorder()
    a, b = server.open_item(first, "scripted"), server.open_item(second, "scripted")
    assert a.model.base_url != b.model.base_url and a.model.api_key == LOCAL_KEY
    openai.OpenAI(base_url=a.model.base_url, api_key="k", max_retries=0).chat.completions.create(
        model="scripted", messages=[{"role": "system", "content": "be brief"}, TASK], tools=TOOLS)
    (event,) = first.events
    assert second.events == []
    assert event.type == "model_call" and event.leg == 0
    assert event.request["messages"] == 2 and event.request["tools"] == ["search_rooms", "request_approval", "book_room"]
    assert [m["role"] for m in event.request["new"]] == ["system", "user"]
    assert event.response["status"] == 200
    assert event.response["tool_calls"][0]["name"] == "search_rooms"
    assert event.response["tool_calls"][0]["args"] == {"capacity": 8, "day": "Tuesday"}


def test_only_messages_new_to_the_item_are_kept(server):
    rec = TraceRecorder()
    client = openai.OpenAI(base_url=server.open_item(rec, "scripted").base_url, api_key="k", max_retries=0)
    client.chat.completions.create(model="scripted", messages=[TASK], tools=TOOLS)
    client.chat.completions.create(model="scripted", messages=[TASK, {"role": "user", "content": "DENIED: no"}], tools=TOOLS)
    first, second = rec.events
    assert [m["text"] for m in first.request["new"]] == [TASK["content"]]
    assert [m["text"] for m in second.request["new"]] == ["DENIED: no"]
    assert first.request["sha256"] != second.request["sha256"]


def test_a_request_that_cannot_be_attributed_is_refused_and_counted(server):
    before = len(server.gateway.unattributed)
    r = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "scripted", "messages": [TASK]})
    assert r.status_code == 400 and "cannot be attributed" in r.json()["error"]["message"]
    r = httpx.post(f"{server.url}/items/not-a-token/v1/chat/completions", json={"model": "scripted", "messages": [TASK]})
    assert r.status_code == 400
    assert server.gateway.unattributed[before:] == ["POST /v1/chat/completions", "POST /items/not-a-token/v1/chat/completions"]


def test_a_sealed_item_gets_no_answer_and_the_request_is_late(server):
    rec = TraceRecorder()
    late: list = []
    rec.on_late = late.append
    client = openai.OpenAI(base_url=server.open_item(rec, "scripted").base_url, api_key="k", max_retries=0)
    rec.seal()
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="scripted", messages=[TASK], tools=TOOLS)
    assert caught.value.status_code == 409
    (event,) = rec.events
    assert event.late is True and event.response["status"] == 409 and late == [event]


def test_injected_faults_are_recorded_as_such(server):
    rec = TraceRecorder()
    client = openai.OpenAI(base_url=server.open_item(rec, "scripted").base_url, api_key="k", max_retries=0)
    server.gateway.fault = lambda channel, index: 503 if index == 0 else None
    try:
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="scripted", messages=[TASK], tools=TOOLS)
        client.chat.completions.create(model="scripted", messages=[TASK], tools=TOOLS)
    finally:
        server.gateway.fault = None
    failed, ok = rec.events
    assert failed.response == {"status": 503, "error": "arena: injected fault (HTTP 503)", "injected": True}
    assert ok.response["status"] == 200


@pytest.fixture(scope="module")
def upstream():
    """The scripted model alone, standing in for a real provider; records the keys it was sent."""
    app = scripted_app(catalog.policies())
    keys: list[str] = []

    async def with_keys(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            keys.append(headers.get(b"authorization", b"").decode())
        await app(scope, receive, send)

    with _serving(with_keys) as url:
        yield {"url": url, "keys": keys, "chat": app.state.chat}


@contextlib.contextmanager
def _serving(app):
    """An ASGI app on a loopback port, in a thread, for the duration: yields its /v1 base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(5)


@pytest.mark.parametrize("stream", [False, True])
def test_a_real_endpoint_is_reached_through_a_recording_proxy(server, upstream, stream):
    rec = TraceRecorder()
    target = ModelTarget(name="scripted-eager", upstream=upstream["url"], api_key="sk-real-secret")
    channel = server.open_item(rec, target)
    assert channel.model.api_key == LOCAL_KEY  # the adapter never holds the real key
    messages = [TASK,
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                    "name": "search_rooms", "arguments": '{"capacity": 8, "day": "Tuesday"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(
                    {"day": "Tuesday", "rooms": [{"room_id": "R202", "name": "Birch", "capacity": 10}]})}]
    client = openai.OpenAI(base_url=channel.model.base_url, api_key=channel.model.api_key, max_retries=0)
    before = len(upstream["chat"].requests)
    if stream:
        calls: dict[int, str] = {}
        for chunk in client.chat.completions.create(model="scripted-eager", messages=messages, tools=TOOLS, stream=True):
            for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                calls[tc.index] = calls.get(tc.index, "") + (tc.function.name or "")
        names = [calls[i] for i in sorted(calls)]
    else:
        reply = client.chat.completions.create(model="scripted-eager", messages=messages, tools=TOOLS)
        names = [c.function.name for c in reply.choices[0].message.tool_calls]
    assert upstream["keys"][-1] == "Bearer sk-real-secret"
    assert len(upstream["chat"].requests) == before + 1
    (event,) = rec.events
    assert event.request["stream"] is stream and event.response["status"] == 200
    assert [c["name"] for c in event.response["tool_calls"]] == names == ["book_room", "request_approval"]
    assert event.response["tool_calls"][0]["args"] == {"room_id": "R202"}
    assert "sk-real-secret" not in event.model_dump_json()


def test_an_unreachable_endpoint_is_an_infrastructure_failure(server):
    rec = TraceRecorder()
    channel = server.open_item(rec, ModelTarget(name="m", upstream="http://127.0.0.1:9/v1", api_key="k"))
    client = openai.OpenAI(base_url=channel.model.base_url, api_key="x", max_retries=0)
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="m", messages=[TASK])
    assert caught.value.status_code == 502
    (event,) = rec.events
    assert event.response["infrastructure"] is True


def test_arena_run_with_a_real_endpoint_records_the_same_evidence(upstream, tmp_path):
    """`--model openai/<name> --base-url ...` end to end: the harness proxies to the endpoint, records
    every request, and the key never lands in the run directory."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "OPENAI_API_KEY": "sk-canary-0123456789", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    r = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a", "vanilla", "--item", "hitl-01",
                        "--item", "hitl-02", "--model", "openai/scripted", "--base-url", upstream["url"], "--json",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["passed"] == 2 and summary["model"] == "openai/scripted"
    run_dir = Path(summary["run_dir"])
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["model_gateway"] == "recording proxy" and meta["base_url"] == upstream["url"]
    trace = [json.loads(line) for line in (run_dir / "traces" / "hitl-02.jsonl").read_text().splitlines()]
    calls = [e for e in trace if e["type"] == "model_call"]
    assert len(calls) == 3 and all(e["response"]["status"] == 200 for e in calls)
    assert upstream["keys"][-1] == "Bearer sk-canary-0123456789"
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert "sk-canary" not in path.read_text()


@pytest.fixture(scope="module")
def faulty_upstream():
    """The scripted model behind a fault injector: of every three requests, one 429 (Retry-After 0), one 500."""
    app = scripted_app(catalog.policies())
    count = {"n": 0, "faults": 0}

    async def faulty(scope, receive, send):
        if scope["type"] == "http":
            count["n"] += 1
            if count["n"] % 3 in (1, 2) and count["n"] % 6 != 0:
                status = 429 if count["n"] % 3 == 1 else 500
                if count["n"] % 2 == 0:  # every other request passes: each is retried at most twice
                    count["faults"] += 1
                    body = json.dumps({"error": {"message": "injected", "type": "rate_limit"}}).encode()
                    headers = [(b"content-type", b"application/json")] + ([(b"retry-after", b"0")] if status == 429 else [])
                    await send({"type": "http.response.start", "status": status, "headers": headers})
                    await send({"type": "http.response.body", "body": body})
                    return
        await app(scope, receive, send)

    with _serving(faulty) as url:
        yield {"url": url, "count": count}


@pytest.mark.parametrize("adapter", ["vanilla", "langgraph", "pydantic_ai"])
def test_endpoint_faults_are_retried_in_one_place_so_results_equal_a_clean_run(server, faulty_upstream, run_adapter,
                                                                              adapter):
    from arena.catalog import builtin_adapters
    REGISTRY = builtin_adapters()
    from arena.runner import run_items
    from tests.conftest import normalised

    entry = REGISTRY[adapter]
    if not entry.available:
        pytest.skip(f"{entry.framework} is not installed")
    spec = catalog.load_arena("human_in_the_loop")
    items = [i for i in spec.items if i.id in ("hitl-01", "hitl-02")]
    before = faulty_upstream["count"]["faults"]
    target = ModelTarget(name="scripted", upstream=faulty_upstream["url"], api_key="k")
    faulted = run_items(entry.load(), spec, items, server=server, model=target, timeout_s=60)
    clean = run_adapter(adapter, items=["hitl-01", "hitl-02"])
    assert faulty_upstream["count"]["faults"] > before  # faults were injected
    assert [r.status for r in faulted] == ["passed", "passed"], [r.error for r in faulted]
    assert [normalised(r) for r in faulted] == [normalised(r) for r in clean]
    retried = [e.response["attempts"] for r in faulted for e in r.trace if e.type == "model_call"]
    assert max(retried) > 1


def test_retry_waits_honour_retry_after_and_back_off():
    from arena.gateway import RETRY_MAX_WAIT_S, retry_wait

    assert retry_wait(1, "2") == 2.0 and retry_wait(1, "9999") == RETRY_MAX_WAIT_S
    assert retry_wait(1, None) == 0.25 and retry_wait(3, None) == 1.0
    assert retry_wait(1, "Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: at once


def test_the_server_keeps_an_idle_connection_open_longer_than_a_client_would_reuse_it(server):
    """A connection idle for longer than httpx's keep-alive expiry (the openai SDK's pool; aiohttp keeps one 15 s)
    is still open: a client never sends on a connection the server is closing (uvicorn's default 5 s equalled
    httpx's, and a request at the edge met "Server disconnected without sending a response")."""
    import socket

    from arena.server import KEEP_ALIVE_S

    expiry = httpx.Limits().keepalive_expiry
    assert expiry is not None and KEEP_ALIVE_S > max(expiry, 15.0)
    request = f"GET /not-an-item HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()

    def answer(conn: socket.socket) -> bytes:
        """One whole response: its head, then as many body bytes as its Content-Length says ("" once closed)."""
        data = b""
        while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length and (chunk := conn.recv(65536)):
            body += chunk
        return head

    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        for _ in range(2):
            conn.sendall(request)
            head = answer(conn)
            assert head.startswith(b"HTTP/1.1 400"), head[:80]  # unattributed, answered on the same connection
            time.sleep(expiry + 1.0)


def test_every_request_says_which_instructions_it_carried_the_text_once():
    """A request's system (or developer) messages are recorded by digest every time (`system`), their text the first
    time only (`new`, under the same digest): a resumed request that repeats the instructions shows it carried them,
    one whose instructions changed shows the new text."""
    from arena.gateway import Channel
    from arena.observed import instructions_sent
    from arena.types import TraceEvent

    channel = Channel(token="t", recorder=TraceRecorder(), target=ModelTarget(name="scripted"), base_url="http://x")
    first, _ = channel.describe({"messages": [{"role": "system", "content": "act for Alice"}, TASK]})
    again, _ = channel.describe({"messages": [{"role": "system", "content": "act for Alice"}, TASK,
                                              {"role": "assistant", "content": "ok"}]})
    other, _ = channel.describe({"messages": [{"role": "developer", "content": "act for Bob"}, TASK]})
    bare, _ = channel.describe({"messages": [TASK]})
    assert first["system"] == again["system"] and len(first["system"]) == 1 and other["system"] != first["system"]
    assert [m.get("digest") for m in first["new"]] == [first["system"][0], None]
    assert [m["role"] for m in again["new"]] == ["assistant"] and bare["system"] == []
    events = [TraceEvent(seq=i, leg=0, type="model_call", request=r) for i, r in enumerate((first, again, other, bare))]
    assert [texts for _, texts in instructions_sent(events)] == [["act for Alice"], ["act for Alice"], ["act for Bob"],
                                                                 []]
