from __future__ import annotations

import json
import os

from arena_builtins.arenas._rooms import tools as rooms
from arena.tools.box import LocalToolBox, RemoteToolBox, ToolExecutor, parse_args
from arena.trace import TraceRecorder


def test_rooms_backend_is_deterministic_and_stateless():
    first = rooms.search_rooms(8, "Tuesday")
    assert first == rooms.search_rooms(8, "tuesday")
    assert [r["room_id"] for r in json.loads(first)["rooms"]] == ["R202", "R301", "R302", "R401"]
    assert rooms.book_room("R202") == rooms.book_room("R202")
    assert rooms.book_room("nope").startswith("ERROR")
    assert rooms.search_rooms(3, "Sunday").startswith("ERROR")
    assert rooms.request_approval("x").startswith("NOT APPROVED")


def test_local_toolbox_logs_every_call_where_it_executes():
    rec = TraceRecorder()
    box = LocalToolBox(ToolExecutor(rooms.SPECS, rooms.FUNCTIONS, rec))
    assert box.call("book_room", {"room_id": "R101"}).startswith("BOOKED")
    assert box.call("book_room", {"wrong": 1}).startswith("ERROR: bad arguments")
    assert box.call("launch_rockets", {}).startswith("ERROR: unknown tool")
    assert [(e.tool, e.pid) for e in rec.tool_calls()] == [
        ("book_room", os.getpid()), ("book_room", os.getpid()), ("launch_rockets", os.getpid())
    ]


def test_remote_toolbox_lands_in_the_harness_log(server):
    rec = TraceRecorder()
    endpoint = server.register(ToolExecutor(rooms.SPECS, rooms.FUNCTIONS, rec))
    try:
        box = RemoteToolBox(endpoint, rooms.SPECS)
        assert box.call("search_rooms", {"capacity": 2, "day": "Friday"}).startswith('{"day": "Friday"')
        (event,) = rec.tool_calls()
        assert event.tool == "search_rooms" and event.args == {"capacity": 2, "day": "Friday"}
    finally:
        server.unregister(endpoint)


def test_a_process_calls_the_harness_through_one_client(server, monkeypatch):
    """The remote box's calls share one HTTP client per process (building one per call loaded the CA
    certificates each time); a forked process builds its own instead of using its parent's connections."""
    import arena.tools.box as box

    rec = TraceRecorder()
    endpoint = server.register(ToolExecutor(rooms.SPECS, rooms.FUNCTIONS, rec))
    try:
        remote = RemoteToolBox(endpoint, rooms.SPECS)
        remote.call("search_rooms", {"capacity": 2, "day": "Friday"})
        client = box._loopback.get()
        remote.call("search_rooms", {"capacity": 4, "day": "Monday"})
        assert box._loopback.get() is client and len(rec.tool_calls()) == 2
        monkeypatch.setattr("arena.per_process.os.getpid", lambda: -1)  # as a forked child sees it
        assert box._loopback.get() is not client
    finally:
        server.unregister(endpoint)


def test_parse_args():
    assert parse_args('{"a": 1}') == {"a": 1}
    assert parse_args({"a": 1}) == {"a": 1}
    assert parse_args(None) == {} and parse_args("") == {}
    assert parse_args("not json") == {"_raw": "not json"}


class _Backend:
    """A backend that records the ids it was handed."""

    def __init__(self) -> None:
        self.ids: list[str | None] = []

    def call(self, name, args, call_id=None):
        self.ids.append(call_id)
        return "ok"

    def dump(self):
        return {}

    def close(self):
        pass


class _OldBackend(_Backend):
    def call(self, name, args):  # no call_id: never handed one
        return "ok"


def test_a_call_id_reaches_the_log_and_a_backend_that_takes_it_across_processes(server):
    rec, backend = TraceRecorder(), _Backend()
    endpoint = server.register(ToolExecutor(rooms.SPECS, None, rec, backend))
    try:
        RemoteToolBox(endpoint, rooms.SPECS).call("book_room", {"room_id": "R101"}, call_id="c-1")
        LocalToolBox(ToolExecutor(rooms.SPECS, None, rec, backend)).call("book_room", {"room_id": "R101"})
    finally:
        server.unregister(endpoint)
    assert backend.ids == ["c-1", None]
    assert [e.call_id for e in rec.tool_calls()] == ["c-1", None]
    old = TraceRecorder()
    assert LocalToolBox(ToolExecutor(rooms.SPECS, None, old, _OldBackend())).call("x", {}, call_id="c-2") == "ok"
    assert old.tool_calls()[0].call_id == "c-2"  # logged, though this backend is not handed it


def test_a_watcher_sees_each_event_before_the_recording_code_goes_on():
    rec, seen = TraceRecorder(), []
    stop = rec.watch(lambda e: seen.append((e.type, len(rec.events))))
    rec.record("tool_call", tool="a")
    stop()
    rec.record("tool_call", tool="b")
    assert seen == [("tool_call", 1)]
