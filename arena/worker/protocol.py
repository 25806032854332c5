"""The worker protocol: one JSON object per line, harness -> worker on stdin, replies on stdout.

Only plain data crosses: the item, the model endpoint, the tool endpoint, the decision, and the
leg state when the adapter's state is JSON. The worker redirects everything else written to its
stdout (framework chatter) to stderr, so the reply channel stays clean.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from arena.types import AgentSpec, Decision, DecisionSet, EvalItem, LegResult, ModelConfig, Store, ToolSpec


class WireContext(BaseModel):
    item: EvalItem
    instructions: str
    model: ModelConfig
    tool_endpoint: str
    tool_specs: list[ToolSpec]
    workdir: str
    stream: bool = False
    agents: list[AgentSpec] = []
    store: Store = Store()

    def model_dump_wire(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        data["model"]["api_key"] = self.model.api_key  # excluded from repr, not from the pipe
        return data


class Request(BaseModel):
    # continue: a crashed run, from what was persisted; add_input: input added to the paused run (`text`), no decision
    op: Literal["start", "resume", "continue", "add_input", "close"]
    adapter: str | None = None  # "module:Class"
    ctx: WireContext | None = None
    decision: Decision | DecisionSet | None = None
    handle: str | None = None  # the state kept in this worker's memory, or
    state: Any = None  # the state itself, when it is JSON (a fresh worker resuming)
    text: str | None = None  # add_input's input


class Reply(BaseModel):
    ok: bool
    result: LegResult | None = None  # none for add_input: its state (handle, state) is the answer
    handle: str | None = None
    state: Any = None  # the leg state if JSON-serialisable, else None
    state_is_json: bool = False
    pid: int | None = None
    error: str | None = None
    traceback: str | None = None  # with `error`: the adapter's exception as Python formatted it, for --verbose
