"""Issue 51, section 1: a failure of the world is never charged to the framework.

A model endpoint that refuses the key, answers broken JSON, resets the connection, answers slowly or never, and a
store server killed during an item: each such item is `errored` with the cause and `arena run` exits 3 (could not
measure); a framework's own failure under the same conditions is still `failed`; a slow endpoint's latency is not
counted in the item's timeout. The faulty endpoint is `tests/faultproxy.py` in front of the scripted model; the store
servers killed are private ones started by the test (the project's shared servers are never touched).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from arena import services
from arena.store_health import StoreHealth
from arena.trace import ModelClock
from tests.faultproxy import FaultProxy

REPO = Path(__file__).resolve().parents[2]
HITL = "human_in_the_loop"


def _arena(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def _results(stdout: str) -> list[dict[str, Any]]:
    """Every item of every run a `--json` summary names, as results.jsonl says."""
    runs = []
    for line in stdout.splitlines():  # one summary a line, one line a run
        if line.strip().startswith("{"):
            runs.append(json.loads(line))
    rows = []
    for run in runs:
        with open(Path(run["run_dir"]) / "results.jsonl") as f:
            rows += [{**json.loads(line), "adapter": run["adapter"]} for line in f if line.strip()]
    return rows


def _through(proxy: FaultProxy, tmp_path: Path, *adapters: str, items: tuple[str, ...] = ("hitl-01",),
             extra: tuple[str, ...] = ()) -> tuple[int, list[dict[str, Any]], str]:
    args = ["run", HITL, *[a for name in adapters for a in ("-a", name)], *[a for i in items for a in ("--item", i)],
            "--model", "openai/scripted", "--base-url", proxy.url, "--json", "--out", str(tmp_path), *extra]
    r = _arena(*args, env={"OPENAI_API_KEY": "sk-test-key", "ARENA_MODEL_TIMEOUT": "3"})
    assert r.stdout.strip(), r.stderr
    return r.returncode, _results(r.stdout), r.stderr


# -- the model endpoint --------------------------------------------------------------------------------------------

CAUSES = {
    "401": "the model endpoint failed: the endpoint rejected the key (HTTP 401)",
    "403": "the model endpoint failed: the endpoint refused access (HTTP 403)",
    "404": "the model endpoint failed: the endpoint does not know the model or path (HTTP 404)",
    "truncated": "the model endpoint failed: the endpoint's answer (HTTP 200) is not JSON (truncated or garbled)",
    "reset": "the model endpoint failed: arena: the model endpoint reset or closed the connection",
    "cut": "the model endpoint failed: arena: the model endpoint's answer was cut off: reset or closed the connection",
    "hang": "the model endpoint failed: arena: the model endpoint gave no answer within 3s (ARENA_MODEL_TIMEOUT)",
}


@pytest.mark.parametrize("mode", list(CAUSES))
def test_an_endpoint_failure_makes_the_item_errored_with_its_cause_and_exit_3(mode, tmp_path):
    with FaultProxy(mode) as proxy:
        code, rows, stderr = _through(proxy, tmp_path, "vanilla")
    assert proxy.requests >= 1
    assert [r["status"] for r in rows] == ["errored"], rows
    assert rows[0]["error"].startswith(CAUSES[mode]), rows[0]["error"]
    assert code == 3, stderr


@pytest.mark.parametrize("mode, stream", [("truncated", False), ("401", False), ("truncated", True)])
def test_frameworks_are_not_charged_for_the_endpoint_either(mode, stream, tmp_path):
    """The run of the issue: vanilla, pydantic_ai and langgraph behind a broken endpoint (and pydantic_ai and
    langgraph streamed, `--stream`): every item errored with the endpoint's cause, none failed."""
    from arena.catalog import builtin_adapters

    names = [n for n in (("pydantic_ai", "langgraph") if stream else ("vanilla", "pydantic_ai", "langgraph"))
             if builtin_adapters()[n].available]
    with FaultProxy(mode) as proxy:
        code, rows, stderr = _through(proxy, tmp_path, *names, items=("hitl-01", "hitl-02"),
                                      extra=("--stream",) if stream else ())
    assert len(rows) == 2 * len(names)
    assert {r["status"] for r in rows} == {"errored"}, [(r["adapter"], r["status"], r["error"]) for r in rows]
    cause = ("the model endpoint failed: the endpoint's streamed answer was cut off: it ended before `data: [DONE]`"
             if stream else CAUSES[mode])
    assert all(r["error"].startswith(cause) for r in rows), [r["error"] for r in rows]
    assert code == 3, stderr


def test_an_endpoint_that_refuses_connections_makes_the_item_errored(tmp_path):
    port = services.free_port()  # nothing listens there
    r = _arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--model", "openai/scripted", "--base-url",
               f"http://127.0.0.1:{port}/v1", "--json", "--out", str(tmp_path), env={"OPENAI_API_KEY": "sk-test-key"})
    rows = _results(r.stdout)
    assert [x["status"] for x in rows] == ["errored"]
    assert rows[0]["error"] == ("the model endpoint failed: arena: the model endpoint could not be reached: the "
                                "connection was refused (ConnectError)")
    assert r.returncode == 3, r.stderr


def test_a_streamed_answer_cut_before_its_end_is_the_endpoints_failure(server):
    """A 200 stream that closes before `data: [DONE]` (the framework got half an answer): recorded as the
    endpoint's failure with that cause."""
    import openai

    from arena.model.resolve import ModelTarget
    from arena.runner.scoring import infrastructure_failure
    from arena.trace import TraceRecorder

    with FaultProxy("truncated") as proxy:
        rec = TraceRecorder()
        channel = server.open_item(rec, ModelTarget(name="scripted", upstream=proxy.url, api_key="k"))
        client = openai.OpenAI(base_url=channel.model.base_url, api_key="x", max_retries=0)
        try:  # the SDK may or may not notice that the stream stopped short: the harness does
            for _ in client.chat.completions.create(model="scripted", stream=True, messages=[
                    {"role": "user", "content": "Book a meeting room for 8 people on Tuesday."}]):
                pass
        except openai.APIError:
            pass
    (event,) = [e for e in rec.events if e.type == "model_call"]
    assert event.response is not None and event.response["infrastructure"] is True
    assert event.response["error"] == "the endpoint's streamed answer was cut off: it ended before `data: [DONE]`"
    assert infrastructure_failure(rec.events) == ("the model endpoint failed: the endpoint's streamed answer was "
                                                  "cut off: it ended before `data: [DONE]`")


def test_a_framework_request_the_endpoint_rejects_as_bad_is_still_the_frameworks(tmp_path):
    """A 400 is about what the framework sent: its own failure, never hidden as the endpoint's."""
    with FaultProxy("400") as proxy:
        code, rows, _ = _through(proxy, tmp_path, "vanilla")
    assert [r["status"] for r in rows] == ["failed"]
    assert "400" in rows[0]["error"] and "model endpoint failed" not in rows[0]["error"]
    assert code == 0


def test_a_frameworks_own_failure_behind_a_broken_endpoint_is_still_failed(tmp_path):
    """tests.zoo:Raises blows up in its resume, before it asks the model anything: its own failure, `failed`, even
    with the endpoint answering (the first leg) then broken (from the resume on)."""
    with FaultProxy("pass") as proxy:
        switch = threading.Thread(target=_break_after_first_answers, args=(proxy, 2), daemon=True)
        switch.start()
        code, rows, stderr = _through(proxy, tmp_path, "tests.zoo:Raises")
    assert proxy.mode == "truncated"  # the endpoint broke during the item
    assert [r["status"] for r in rows] == ["failed"], rows
    assert rows[0]["error"] == "RuntimeError: adapter blew up", rows[0]["error"]
    assert code == 0, stderr


def _break_after_first_answers(proxy: FaultProxy, answers: int) -> None:
    deadline = time.monotonic() + 120
    while proxy.requests < answers and time.monotonic() < deadline:
        time.sleep(0.01)
    proxy.mode = "truncated"


def test_every_model_call_records_its_latency(tmp_path):
    with FaultProxy("slow", delay_s=0.5) as proxy:
        code, rows, stderr = _through(proxy, tmp_path, "vanilla")
    assert code == 0 and rows[0]["status"] == "passed", stderr
    calls = [e for e in rows[0]["trace"] if e["type"] == "model_call"] if rows[0].get("trace") else None
    if calls is None:
        run_dir = next(Path(tmp_path).iterdir())
        calls = [json.loads(line) for line in (run_dir / "traces" / "hitl-01.jsonl").read_text().splitlines()
                 if json.loads(line)["type"] == "model_call"]
    assert calls and all(e["response"]["latency_s"] >= 0.5 for e in calls), [e["response"] for e in calls]


# -- the timeout's clock -------------------------------------------------------------------------------------------


def test_a_slow_endpoint_is_not_counted_in_the_items_timeout(tmp_path):
    """2 s an answer, `--timeout 5`: each item asks 4 times (8 s of the model's time), and none times out."""
    with FaultProxy("slow", delay_s=2.0) as proxy:
        code, rows, stderr = _through(proxy, tmp_path, "vanilla", items=("hitl-01", "hitl-02", "hitl-03"),
                                      extra=("--timeout", "5"))
    assert [r["status"] for r in rows] == ["passed"] * 3, [(r["item_id"], r["error"]) for r in rows]
    assert min(r["duration_s"] for r in rows) > 5  # more than the timeout, in the model's time
    assert code == 0, stderr


def test_an_adapter_that_really_hangs_still_times_out_behind_a_slow_endpoint(tmp_path):
    with FaultProxy("slow", delay_s=2.0) as proxy:
        code, rows, _ = _through(proxy, tmp_path, "tests.zoo:HangsOnOneItem", items=("hitl-03",),
                                 extra=("--timeout", "5"))
    assert [r["status"] for r in rows] == ["failed"]
    assert rows[0]["error"] == "timed out after 5s"
    assert code == 0


def test_the_model_clock_is_the_union_of_requests_in_flight():
    clock = ModelClock()
    a = clock.begin()
    time.sleep(0.2)
    b = clock.begin()  # overlapping: counted once
    time.sleep(0.2)
    clock.end(a)
    time.sleep(0.1)
    clock.end(b)
    clock.end(b)  # a second end does nothing
    time.sleep(0.2)  # nothing in flight: not counted
    assert 0.45 <= clock.waited() < 0.7


# -- the store servers ---------------------------------------------------------------------------------------------


@pytest.fixture
def private_server(tmp_path_factory):
    """A PostgreSQL or Redis server of the test's own on a free port (the shared ones are never killed)."""
    made: list[services.Server] = []

    def start(kind: str) -> services.Server:
        import tempfile

        where = Path(tempfile.mkdtemp(prefix=f"arena-world-{kind}-"))
        one = services.server(kind, where / kind, services.free_port())
        try:
            one.start()
        except services.ServiceError as exc:
            pytest.skip(f"no {kind} server can be started here: {exc}")
        made.append(one)
        return one

    yield start
    for one in made:
        try:
            one.stop()
        except (services.ServiceError, OSError, subprocess.SubprocessError):
            pass
        _kill(_server_pid(one))  # a server whose postmaster was killed: nothing of it is left running
        import shutil

        shutil.rmtree(one.datadir.parent, ignore_errors=True)


def _server_pid(one: services.Server) -> int | None:
    pidfile = one.datadir / ("postmaster.pid" if one.kind == "postgres" else "redis.pid")
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _kill(pid: int | None) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _item_state_written(one: services.Server) -> bool:
    """Whether an item's adapter has written its paused state on the server (a table in an item's own database, a
    key under an item's prefix): an item's run is under way."""
    try:
        if one.kind == "postgres":
            import psycopg

            with psycopg.connect(one.url, connect_timeout=2, autocommit=True) as conn:
                names = [r[0] for r in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'arena_%'")]
            for name in names:
                with psycopg.connect(one.url.rsplit("/", 1)[0] + f"/{name}", connect_timeout=2, autocommit=True) as db:
                    row = db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
                if row and row[0]:
                    return True
            return False
        import redis

        client = redis.Redis.from_url(one.url, socket_timeout=2)
        try:
            return any(True for _ in client.scan_iter(match="arena_*", count=100))
        finally:
            client.close()
    except Exception:  # noqa: BLE001
        return False


NAMES = {"postgres": "PostgreSQL", "redis": "Redis"}


@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_store_server_killed_during_an_item_makes_it_errored_and_exit_3(kind, private_server, tmp_path):
    """`arena run durable_state -a vanilla_durable --store <kind>` on a private server, SIGKILLed as soon as an
    item's adapter has written its state there (an item is running): every item errored with the cause, exit 3."""
    one = private_server(kind)
    pid = _server_pid(one)
    assert pid is not None
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", "durable_state", "-a", "vanilla_durable", "--store", kind,
         "--item", "durable-01", "--item", "durable-02", "--json", "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), f"ARENA_{kind.upper()}_URL": one.url})
    deadline = time.monotonic() + 120
    while not _item_state_written(one) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before any item's state was seen on the server"
    _kill(pid)
    stdout, stderr = proc.communicate(timeout=300)
    rows = _results(stdout)
    assert [r["status"] for r in rows] == ["errored", "errored"], [(r["item_id"], r["error"]) for r in rows]
    assert any(r["error"].startswith(f"the {NAMES[kind]} server died during the item") for r in rows), \
        [r["error"] for r in rows]
    assert proc.returncode == 3, stderr


@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_frameworks_own_failure_on_a_live_store_is_still_failed(kind, private_server, tmp_path):
    one = private_server(kind)
    r = _arena("run", "durable_state", "-a", "tests.world_faults:DurableRaises", "--store", kind, "--item",
               "durable-01", "--json", "--out", str(tmp_path), env={f"ARENA_{kind.upper()}_URL": one.url})
    rows = _results(r.stdout)
    assert [x["status"] for x in rows] == ["failed"], rows
    assert rows[0]["error"].endswith("RuntimeError: the framework's own failure"), rows[0]["error"]
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_store_health_tells_a_death_and_an_unplanned_restart_from_a_planned_one(kind, private_server):
    one = private_server(kind)
    # a planned restart (the harness's own, `restart_store`) is not a death
    planned = StoreHealth(kind, one.url)
    restart = planned.planned(lambda: (one.stop(), one.start()))
    assert restart is not None
    restart()
    assert planned.finish() is None and planned.planned_restarts == 1
    # a restart nobody planned is
    unplanned = StoreHealth(kind, one.url)
    one.stop()
    one.start()
    assert unplanned.finish() == (f"the {NAMES[kind]} server died during the item: it restarted unplanned (a new "
                                  f"{'start time' if kind == 'postgres' else 'run_id'} at the item's end; "
                                  "not measured)")
    # and so is a server that is gone
    gone = StoreHealth(kind, one.url)
    one.stop()
    cause = gone.finish()
    assert cause is not None and cause.startswith(f"the {NAMES[kind]} server died during the item: it did not "
                                                  f"answer at 127.0.0.1:{one.port} at the item's end")
    assert gone.finish() == cause  # checked once
