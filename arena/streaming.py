"""Streamed runs: where a streamed leg hands over what its framework's stream told the application, and how a
streamed run is named beside the plain one.

With `--stream` every leg of an adapter with a `stream` channel drives its framework's streaming API and reads
the stream to its end, as a UI would. What the stream says (the model called a tool, a tool returned, the run
waits for a human) is handed to `LegContext.told` as it is read, and recorded in the item's trace as a
`streamed` event right away, in order with the tool log: the `stream_matches_run` check (arena/stream_check.py)
holds each claim against what the harness saw run, and what the harness saw (each pause, each consequential call,
each denial, their order) against what the stream told. An adapter in a worker hands it over to the harness's server
(`RemoteStreamLog`), as it calls its tools.
"""

from __future__ import annotations

from typing import Any

from dataclasses import replace

from arena.run_id import STREAMED, AdapterLabel
from arena.trace import TraceRecorder
from arena.types import AdapterInfo, StreamedKind

SUFFIX = STREAMED


def streamed_label(adapter: str) -> str:
    """The name a streamed run of `adapter` goes by (its run directory, its row of the matrix)."""
    return replace(AdapterLabel.parse(adapter), streamed=True).text


def plain_label(label: str) -> str:
    """The adapter a run's label names, streamed or not."""
    return AdapterLabel.parse(label).plain.text


def is_streamed(label: str) -> bool:
    return AdapterLabel.parse(label).streamed


def why_not_streamed(info: AdapterInfo) -> str | None:
    """Why a streamed run of this adapter is not measured (its framework cannot stream a run that pauses, or its
    adapter has no streamed legs yet), or None: it streams."""
    channel = info.channel("stream")
    if channel is None:
        return "its adapter has no streamed legs (no `stream` channel): streamed runs not measured"
    if channel.kind == "unsupported":
        return f"its framework cannot stream a run that pauses: {channel.mechanism or 'declared unsupported'}"
    return None


class LocalStreamLog:
    """A streamed leg's events, recorded in the item's trace (an adapter in the harness's process)."""

    def __init__(self, recorder: TraceRecorder) -> None:
        self._recorder = recorder

    def told(self, kind: StreamedKind, tool: str, call_id: str | None = None, result: str | None = None) -> None:
        self._recorder.record("streamed", text=kind, tool=tool, call_id=call_id, result=result)


def stream_endpoint(tool_endpoint: str) -> str:
    """Where a worker hands over its streamed events: the item's tool session's, under /streamed/."""
    base, token = tool_endpoint.rstrip("/").rsplit("/tools/", 1)
    return f"{base}/streamed/{token}"


class RemoteStreamLog:
    """A streamed leg's events, posted to the harness's server (an adapter in a worker process)."""

    def __init__(self, endpoint: str, timeout: float = 30.0) -> None:
        self.endpoint = endpoint
        self._timeout = timeout

    def told(self, kind: StreamedKind, tool: str, call_id: str | None = None, result: str | None = None) -> None:
        from arena.tools.box import _loopback

        body: dict[str, Any] = {"kind": kind, "tool": tool, "call_id": call_id, "result": result}
        _loopback.get().post(self.endpoint, json=body, timeout=self._timeout).raise_for_status()
