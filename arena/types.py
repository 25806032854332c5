"""The harness's public vocabulary: items, decisions, legs, trace events and the adapter protocol.

Everything an adapter sees or returns is defined here, so an adapter written against this module
works unchanged whether it runs in the harness process or (later) in a worker process.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class DecisionKind(str, Enum):
    approve = "approve"
    deny = "deny"
    answer = "answer"


class Decision(BaseModel):
    """What the human says at a pause. `text` is the optional note (approve), reason (deny) or answer."""

    model_config = ConfigDict(frozen=True)

    kind: DecisionKind
    text: str = ""

    @property
    def approved(self) -> bool:
        return self.kind is DecisionKind.approve

    def as_text(self) -> str:
        """The decision as one line a model can read; used wherever a framework carries a string."""
        if self.kind is DecisionKind.approve:
            return f"APPROVED: {self.text}" if self.text else "APPROVED"
        if self.kind is DecisionKind.deny:
            return f"DENIED: {self.text}" if self.text else "DENIED"
        return self.text


class EvalItem(BaseModel):
    """One task instance. `resume_with` holds the decisions injected at the 1st, 2nd, ... pause."""

    model_config = ConfigDict(frozen=True)

    id: str
    input: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    resume_with: list[Decision] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)


class ToolKind(str, Enum):
    read = "read"  # no side effect: may run any time
    write = "write"  # consequential: must not run before an approval
    approval = "approval"  # the interrupt point: adapters intercept it, never execute it


class ToolSpec(BaseModel):
    """A harness-owned tool as the model sees it: adapters wrap it in their framework's tool type."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object
    kind: ToolKind = ToolKind.read
    # a consequential tool the framework itself must gate (tool-level approval): the pause is on it
    requires_approval: bool = False
    # a consequential tool whose body pauses: it prepares (`<name>.prepare`), the framework asks the
    # human from inside the tool's body, then it commits (`<name>.commit`) or aborts (`<name>.abort`)
    body_pause: bool = False

    def phase(self, step: str) -> str:
        """The harness tool for one step of a body-pausing tool: prepare, commit or abort."""
        return f"{self.name}.{step}"


class ModelConfig(BaseModel):
    """The OpenAI-compatible endpoint an adapter's model client must talk to."""

    model_config = ConfigDict(frozen=True)

    name: str  # model name sent in requests ("scripted", "scripted-eager", "gpt-...")
    base_url: str  # ends with /v1
    api_key: str = Field(repr=False)


PauseKind = Literal["native", "emulated", "reported", "unsupported"]


class PendingRequest(BaseModel):
    """The approval request a suspended run is waiting on."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None


class LegResult(BaseModel):
    """How one leg ended, as the adapter tells it: a claim the harness checks against what it observed.

    `state` is the adapter's own handle for resuming; the harness never reads it. `final_text` is
    recorded as the adapter's claim; checks read the model's own last answer instead.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    status: Literal["suspended", "finished", "errored"]
    pending: PendingRequest | None = None
    final_text: str | None = None
    error: str | None = None
    state: Any = Field(default=None, exclude=True)

    @classmethod
    def suspended(cls, pending: PendingRequest, state: Any) -> LegResult:
        return cls(status="suspended", pending=pending, state=state)

    @classmethod
    def finished(cls, final_text: str) -> LegResult:
        return cls(status="finished", final_text=final_text)

    @classmethod
    def errored(cls, error: str) -> LegResult:
        return cls(status="errored", error=error)


EventType = Literal["tool_call", "model_call", "suspended", "resumed", "final", "error", "state"]


class TraceEvent(BaseModel):
    """One step of the merged trace, written by the harness where it observed it.

    `tool_call`: the harness's tool log (where the tool executed). `model_call`: the harness's model
    endpoint (what the model was sent, as `request`, and answered, as `response`). `suspended` /
    `final` / `error`: how a leg ended (`pid` is the leg's process as the harness spawned it).
    `resumed`: the decision the harness injected (`survivors`: processes of the paused leg still
    alive at the resume). `state`: the item's tool backend after the run (`data`), for arenas with
    state. `late`: the event arrived after the item was sealed.
    """

    seq: int
    leg: int
    type: EventType
    tool: str | None = None
    args: dict[str, Any] | None = None
    result: str | None = None
    decision: Decision | None = None
    text: str | None = None
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    survivors: list[dict[str, Any]] | None = None
    data: dict[str, Any] | None = None
    late: bool | None = None
    pid: int | None = None
    ts: float = 0.0

    def normalised(self) -> dict[str, Any]:
        """The event without ids, timestamps, pids and the framework's own request shape.

        What 'same behaviour' compares: for a model call that is what the model answered (its
        text and tool calls), not how a framework phrased the request.
        """
        data = self.model_dump(exclude={"seq", "ts", "pid", "request"}, exclude_none=True, mode="json")
        if self.type == "model_call" and self.response is not None:
            data["response"] = {
                "text": self.response.get("text") or "",
                "tool_calls": [{"name": c.get("name"), "args": c.get("args")} for c in self.response.get("tool_calls") or []],
            }
        return data


class Capabilities(BaseModel):
    """Which parts of a decision a framework's own channel can carry back to the model."""

    deny_reason: bool = True
    approve_note: bool = True
    free_text: bool = True
    notes: str = ""


class AdapterInfo(BaseModel):
    name: str
    framework: str  # distribution name, used to read the installed version
    pause_mechanism: str
    pause_kind: PauseKind
    capabilities: Capabilities = Field(default_factory=Capabilities)
    # tool-level approval: how the adapter gates a tool marked `requires_approval`
    tool_gate: PauseKind = "unsupported"
    tool_gate_mechanism: str = ""
    # what the tool-level gate's channel carries, when it differs from `capabilities`
    gate_capabilities: Capabilities | None = None
    # pausing inside a tool's body (prepare, ask, commit); without it, such a tool is gated before the call
    body_pause: PauseKind = "unsupported"
    body_pause_mechanism: str = ""


@runtime_checkable
class ToolBox(Protocol):
    """Executes harness tools and records each call in the harness's log, wherever the adapter runs."""

    specs: list[ToolSpec]

    def call(self, name: str, args: dict[str, Any]) -> str: ...

    async def acall(self, name: str, args: dict[str, Any]) -> str: ...


class LegContext(BaseModel):
    """Everything a leg may use: the item, the model endpoint, the tools, a private work directory."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    item: EvalItem
    instructions: str
    model: ModelConfig
    tools: Any  # a ToolBox
    workdir: str

    @property
    def approval_tool(self) -> ToolSpec:
        """The interrupt-point tool; arenas that gate a tool instead have none (see `gated_tools`)."""
        for spec in self.tools.specs:
            if spec.kind is ToolKind.approval:
                return spec
        raise LookupError("this arena has no approval tool; it gates tools instead (LegContext.gated_tools)")

    @property
    def gated_tools(self) -> list[str]:
        """Tools the framework must hold for a human's approval before executing them."""
        return [s.name for s in self.tools.specs if s.requires_approval]

    @property
    def body_pause_tools(self) -> list[ToolSpec]:
        """Tools whose body must pause for the human between their prepare and commit steps."""
        return [s for s in self.tools.specs if s.body_pause]


@runtime_checkable
class ResumableRunner(Protocol):
    """What an adapter implements: run the first leg, and resume a suspended leg with a decision.

    A leg returns `LegResult.suspended(...)` only when the framework itself has stopped and holds a
    resumable state; anything else is a `finished` leg, whatever the model's text says.
    """

    info: AdapterInfo

    async def start(self, ctx: LegContext) -> LegResult: ...

    async def resume(self, state: Any, decision: Decision, ctx: LegContext) -> LegResult: ...
