"""The worker protocol: one JSON object per line, harness -> worker on stdin, replies on stdout.

Only plain data crosses: the item, the model endpoint, the tool endpoint, the decision, and the
leg state when the adapter's state is JSON. The worker redirects everything else written to its
stdout (framework chatter) to stderr, so the reply channel stays clean.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from arena.types import Decision, DecisionSet, LegContext, LegResult, ToolSpec


class WireContext(BaseModel):
    """A `LegContext` as it crosses to a worker: every field of it as data (`fields`, read generically, so a field
    added to the leg context crosses with no edit here), its tools as the harness's endpoint and their specs."""

    fields: dict[str, Any]
    tool_endpoint: str
    tool_specs: list[ToolSpec]

    @classmethod
    def of(cls, ctx: LegContext, tool_endpoint: str) -> WireContext:
        return cls(fields=ctx.model_dump(mode="json", exclude=set(LOCAL_ONLY)), tool_endpoint=tool_endpoint,
                   tool_specs=ctx.tools.specs)

    def context(self, tools: Any, stream_log: Any) -> LegContext:
        """The leg context in the worker, with its tools and stream log (what reaches the harness from there)."""
        return LegContext.model_validate({**self.fields, "tools": tools, "stream_log": stream_log})


# LegContext fields that are objects of the harness's process: a worker gets its own (RemoteToolBox, RemoteStreamLog)
LOCAL_ONLY = ("tools", "stream_log")


class Request(BaseModel):
    # hook: a registered channel's hook on the paused run (`hook`, with `args`; Adapter.run_hook): `continue_run` (a
    # crashed run, from what was persisted), `add_input` (input added to the paused run, no decision), or one an
    # arena's channel adds, with no edit here
    op: Literal["start", "resume", "hook", "close"]
    adapter: str | None = None  # "module:Class"
    ctx: WireContext | None = None
    decision: Decision | DecisionSet | None = None
    handle: str | None = None  # the state kept in this worker's memory, or
    state: Any = None  # the state itself, when it is JSON (a fresh worker resuming)
    hook: str | None = None
    args: list[Any] = Field(default_factory=list)  # the hook's arguments after the state, as JSON data


class Reply(BaseModel):
    ok: bool
    result: LegResult | None = None  # none for a hook that returns a state (add_input): (handle, state) is the answer
    handle: str | None = None
    state: Any = None  # the leg state if JSON-serialisable, else None
    state_is_json: bool = False
    pid: int | None = None
    error: str | None = None
    traceback: str | None = None  # with `error`: the adapter's exception as Python formatted it, for --verbose
