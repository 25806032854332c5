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


def test_parse_args():
    assert parse_args('{"a": 1}') == {"a": 1}
    assert parse_args({"a": 1}) == {"a": 1}
    assert parse_args(None) == {} and parse_args("") == {}
    assert parse_args("not json") == {"_raw": "not json"}
