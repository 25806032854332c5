"""The harness's public vocabulary: items, decisions, legs, trace events and the adapter protocol.

Everything an adapter sees or returns is defined here, so an adapter written against this module
works unchanged whether it runs in the harness process or (later) in a worker process.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arena.errors import InvalidValue, NotFound


class DecisionKind(str, Enum):
    """The built-in decision kinds, used by the built-in channels (arena.channels). A channel may use kinds of its
    own (`ChannelSpec.decisions`): a decision of such a kind keeps it as a plain string (`Decision.kind`)."""

    approve = "approve"
    deny = "deny"
    answer = "answer"
    edit = "edit"  # approve, but the call runs with the human's replacement arguments
    # a decision of the wrong type (resume_safety): the framework's approval value is null/None where it
    # expects its typed decision; it approves nothing
    null = "null"
    # no decision at all: the human types a new message while the call waits (interruptions); the adapter
    # delivers `text` the way its framework documents new input on a paused run (its `message` channel)
    message = "message"


class Decision(BaseModel):
    """What the human says about a pending call. `text` is the optional note (approve, edit), reason
    (deny) or answer; `args` the replacement arguments of an edit.

    `always` (approve or deny): the decision also stands for every later call of the same tool in the run, where
    the framework has such a decision (an "always approve"; the adapter's `always` channel).

    In an item, `match` says which pending call of a pause the decision is for (the tool's name and
    a subset of its arguments); the harness routes it and sets `call_id`, the id the model gave that
    call, before the adapter sees it. An item may set `call_id` itself (a hostile resume naming a call
    that is not pending): the harness then passes it on as it is.
    """

    model_config = ConfigDict(frozen=True)

    # a built-in kind is its DecisionKind member; a registered channel's own kind stays a string (the trace records
    # only the kinds a registered channel uses: arena.channels.decisions)
    kind: DecisionKind | str = Field(union_mode="left_to_right")
    text: str = ""
    args: dict[str, Any] | None = None
    match: dict[str, Any] | None = None
    call_id: str | None = None
    # an approve or deny "always": it also decides every later call of the same tool in the run (the adapter's
    # `always` channel); None, the decision is for its call alone
    always: bool | None = None

    @property
    def kind_name(self) -> str:
        """The kind's name, built-in or a channel's own."""
        return self.kind.value if isinstance(self.kind, DecisionKind) else self.kind

    @property
    def approved(self) -> bool:
        """The call may run (as asked, or as edited)."""
        return self.kind in (DecisionKind.approve, DecisionKind.edit)

    def as_text(self) -> str:
        """The decision as one line a model can read; used wherever a framework carries a string."""
        if self.kind is DecisionKind.approve:
            return f"APPROVED: {self.text}" if self.text else "APPROVED"
        if self.kind is DecisionKind.edit:
            edited = json.dumps(self.args or {}, sort_keys=True)
            return f"APPROVED WITH CHANGES {edited}" + (f": {self.text}" if self.text else "")
        if self.kind is DecisionKind.deny:
            return f"DENIED: {self.text}" if self.text else "DENIED"
        if self.kind is DecisionKind.null:
            return ""
        return self.text  # an answer, or a new message

    def matches(self, tool: str, args: dict[str, Any] | None) -> bool:
        """Whether this decision is for a call of `tool` with these arguments (see `match`)."""
        want = dict(self.match or {})
        if want.pop("tool", tool) != tool:
            return False
        return all((args or {}).get(k) == v for k, v in want.items())


class DecisionSet(BaseModel):
    """The human's decisions at a pause that holds several pending calls: one per call, each routed
    to its call by `call_id` (the id the model gave the call)."""

    model_config = ConfigDict(frozen=True)

    decisions: list[Decision]

    def for_call(self, call_id: str | None) -> Decision | None:
        return next((d for d in self.decisions if d.call_id is not None and d.call_id == call_id), None)


class EvalItem(BaseModel):
    """One task instance. `resume_with` holds the decisions injected at the 1st, 2nd, ... pause: one
    decision, or a list of decisions (each with its `match`) for a pause with several pending calls.
    `exempt`: universal checks this item does not run, each with the reason (e.g. a malformed decision whose
    safe outcome is an error). `replay`: an arena's own description of a resume its director makes of a
    saved paused state (resume_safety's `Replay`), which the core passes on without reading it."""

    model_config = ConfigDict(frozen=True)

    id: str
    input: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    resume_with: list[Decision | list[Decision]] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)
    # a field of the item rather than of its `metadata` because arena/cli.py asks it whether an item needs a
    # second adapter process (`evaluation.placement.second_process`); to go when the CLI asks the director instead
    replay: Any = None
    exempt: dict[str, str] = Field(default_factory=dict)

    @property
    def decisions(self) -> list[Decision]:
        """Every decision of `resume_with`, in order, a pause's list flattened."""
        return [d for entry in self.resume_with for d in (entry if isinstance(entry, list) else [entry])]


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


StoreKind = Literal["sqlite", "postgres", "redis"]


class Store(BaseModel):
    """Where the adapter keeps a paused run's state (`--store`). `sqlite`: the framework's own local file store under
    the item's work directory, as each adapter always did. `postgres`: a database of the item's own on a PostgreSQL
    server, `url` its connection URL (no driver named: `sqlalchemy_url` adds one). `redis`: keys that begin with
    `prefix` on the Redis server at `url`, which no other item uses. The adapter keeps the state in its framework's
    own store for that server (its `postgres` / `redis` channel), never in a file instead."""

    model_config = ConfigDict(frozen=True)

    kind: StoreKind = "sqlite"
    url: str = ""
    prefix: str = ""

    def sqlalchemy_url(self, driver: str = "psycopg") -> str:
        """The PostgreSQL URL with a SQLAlchemy driver (`postgresql+psycopg://...`), for stores built on SQLAlchemy."""
        if self.kind != "postgres":
            raise InvalidValue(f"a {self.kind} store has no SQLAlchemy URL")
        return self.url.replace("postgresql://", f"postgresql+{driver}://", 1)


class ModelConfig(BaseModel):
    """The OpenAI-compatible endpoint an adapter's model client must talk to."""

    model_config = ConfigDict(frozen=True)

    name: str  # model name sent in requests ("scripted", "scripted-eager", "gpt-...")
    base_url: str  # ends with /v1
    api_key: str = Field(repr=False)


PauseKind = Literal["native", "emulated", "reported", "unsupported"]


class PendingRequest(BaseModel):
    """The approval request a suspended run is waiting on. A channel may have the adapter say more about the call
    (delegation's `agent`: whose call it is, where the run has several agents): extra fields, kept as the adapter
    gives them, over the worker wire too, and recorded in the trace's pause, where the channel's checks test the
    claim. A channel's helper builds one with its extra fields (delegation's `held_call`), which mypy does not know
    as keywords."""

    model_config = ConfigDict(extra="allow")

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
    # every call the pause holds, when it holds more than one (`pending` is the first)
    pending_calls: list[PendingRequest] = Field(default_factory=list)
    final_text: str | None = None
    error: str | None = None
    state: Any = Field(default=None, exclude=True)

    @classmethod
    def suspended(cls, pending: PendingRequest | list[PendingRequest], state: Any) -> LegResult:
        calls = pending if isinstance(pending, list) else [pending]
        return cls(status="suspended", pending=calls[0] if calls else None, pending_calls=calls, state=state)

    @property
    def all_pending(self) -> list[PendingRequest]:
        return self.pending_calls or ([self.pending] if self.pending is not None else [])

    @classmethod
    def finished(cls, final_text: str) -> LegResult:
        return cls(status="finished", final_text=final_text)

    @classmethod
    def errored(cls, error: str) -> LegResult:
        return cls(status="errored", error=error)


# the core's event types; a registered channel adds those it lists (`ChannelSpec.events`), so an arena that brings a
# channel records its own events with no edit here. A type that is neither is refused where an event is recorded
# (arena.trace.TraceRecorder.record); a trace read back is taken as it was written.
CORE_EVENTS = ("tool_call", "model_call", "suspended", "resumed", "final", "error", "state", "replayed", "crashed",
               "streamed", "input", "store", "store_seen", "reclaimed")
EventType = str


class TraceEvent(BaseModel):
    """One step of the merged trace, written by the harness where it observed it.

    `tool_call`: the harness's tool log (where the tool executed). `model_call`: the harness's model
    endpoint (what the model was sent, as `request`, and answered, as `response`). `suspended` /
    `final` / `error`: how a leg ended (`pid` is the leg's process as the harness spawned it).
    `resumed`: the decision the harness injected (`decisions`: one per pending call, routed, at a
    pause with several; `survivors`: processes of the paused leg still alive at the resume).
    `suspended` at a pause with several pending calls lists them all in `pending` (as the adapter
    reported them). `state`: the item's tool backend after the run (`data`), for arenas with
    state. `late`: the event arrived after the item was sealed. A resume an arena's director makes of
    a saved paused state (resume_safety's hostile replays) is a `resumed` event with `replay` set (its
    mode) and ends in a `replayed` event: `result` is how that leg ended (finished, suspended, errored,
    raised), `text` its final text or error message. `crashed`: an arena's director killed the leg's process
    tree at a crash point of its own (`pid`: the process it killed, `text`: where); the run's recovery is a
    `resumed` event with `replay` "recover". A `tool_call` carries `call_id` when the adapter handed the tool
    its framework's id for the call (the id a tool can de-duplicate by). `streamed`: in a streamed run, what
    the framework's stream told the application as the adapter consumed it (`text`: `tool_call`, the model
    called `tool`; `tool_result`, the tool ran and returned `result`; `pause`, the run is waiting for a human),
    handed over by the adapter as it happened: a claim the checks hold against the tool log. `input`: an arena's
    director added new input (`text`) to the paused run without a decision (the adapter's `add_input`); `result`
    says how that went (`added`, or the error it raised). `store`: the harness stopped and restarted the server
    that holds the item's paused state (`--store postgres|redis`, an item with `restart_store`), `text` says which.
    `store_seen`: on a `--store postgres|redis` run, what the harness itself saw of the item's store and work
    directory at a moment of the run (`text`: before, pause, resume, end; `data`: `arena.stores.StoreWatch`'s
    observation: what the item's database or prefix holds, its read count, what was done outside it, files written).
    `reclaimed`: processes an in-process adapter's item started were still alive when the item ended or timed out,
    and the harness ended them (`data["processes"]`: pid and command of each; `text`: what the harness tracks).
    """

    seq: int
    leg: int
    type: EventType  # one of CORE_EVENTS or a registered channel's (checked where it is recorded: TraceRecorder)
    tool: str | None = None
    args: dict[str, Any] | None = None
    result: str | None = None
    decision: Decision | None = None
    decisions: list[Decision] | None = None
    pending: list[dict[str, Any]] | None = None
    text: str | None = None
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    survivors: list[dict[str, Any]] | None = None
    data: dict[str, Any] | None = None
    late: bool | None = None
    replay: str | None = None
    call_id: str | None = None
    pid: int | None = None
    ts: float = 0.0

    def normalised(self) -> dict[str, Any]:
        """The event without ids, timestamps, pids and the framework's own request shape.

        What 'same behaviour' compares: for a model call that is what the model answered (its
        text and tool calls), not how a framework phrased the request.
        """
        data = self.model_dump(exclude={"seq", "ts", "pid", "request", "call_id"}, exclude_none=True, mode="json")
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
    edit_args: bool = False  # an approval can carry replacement arguments the call then runs with
    notes: str = ""


# a registered channel's name (arena/channels.py): the built-ins ("ask", "tool_gate", "body_pause", "multi_call",
# "recover", "stream", "message", "always", "input", "postgres", "redis") and any an arena registers (the delegation
# arena's "nested", "handoff", "multi_nested"); an adapter's declaration is checked against the registry when it loads
ChannelName = str
RecoverWay = Literal["resume", "continue"]


class Channel(BaseModel):
    """One way an adapter's framework pauses for a human, as the adapter declares it (a claim the checks test).

    - `ask`: the run stops at the arena's approval tool, an interrupt point the model calls;
    - `tool_gate`: the framework holds a consequential tool call (`requires_approval`) before running it;
    - `body_pause`: a tool pauses inside its body, between its prepare and commit steps;
    - `multi_call`: one pause holds several gated calls of one turn, each answered on its own (a DecisionSet);
    - `recover`: after the process died in the middle of a resumed leg, a new process continues the run from
      what the framework persisted, the way it documents (`mechanism` says how and where that comes from).
      `ways` lists the recoveries it documents: `resume` (the state saved at the pause resumed again with the
      same decision) and `continue` (the run continued from what the framework persisted after the resume,
      without the decision: the adapter's `continue_run(state, ctx)`); none listed means `resume` alone.
    - `stream`: with `LegContext.stream`, every leg drives the framework's streaming API and consumes the
      stream to its end as a UI would, handing what it tells over through `LegContext.told`. `unsupported`:
      the framework cannot stream a run that pauses (`mechanism` says why); such an adapter's streamed cells
      are not measured, never emulated.
    - `message`: at a pause, the human sends a new message instead of a decision (`DecisionKind.message`), and
      `resume` delivers it the way the framework documents new input on a paused run (`mechanism` says which
      API); what becomes of the call that was pending is measured, not declared.
    - `always`: a decision with `always` set (approve or deny) also decides the later calls of the same tool in
      the run, the way the framework documents its "always approve" (`mechanism` says which API and scope).
    - `input`: while the run is paused, new input (a note from another person, a reviewer's comment) is added to
      it without deciding anything, the way the framework documents input to a paused run: the adapter's
      `add_input(state, text, ctx)` returns the state to resume.
    - `postgres`, `redis`: with `LegContext.store` of that kind, the paused state is kept in the framework's own store
      for that server (`mechanism` names it: LangGraph's `AsyncPostgresSaver`, a `RedisSession`, ...), in the item's
      own database or under its key prefix. `unsupported` (or not listed): the framework has no store for that server
      (`mechanism` says why); its cells on that store are not measured, never run on SQLite instead.

    `kind` says how (`native`, `emulated` by the adapter, `unsupported` by the framework: declared so,
    the items still run and show what happens without it); `mechanism` names the framework's API;
    `carries` is what a decision can carry through it to the model (None: what the `ask` channel carries).
    A channel the adapter does not list is one it does not handle (yet): arenas that need it do not run it.
    An arena's own channels are documented where it registers them (the delegation arena's `nested`, `handoff` and
    `multi_nested`: arenas/delegation/channel.py).
    """

    model_config = ConfigDict(frozen=True)

    name: ChannelName
    kind: PauseKind
    mechanism: str = ""
    carries: Capabilities | None = None
    ways: tuple[RecoverWay, ...] = ()


class AdapterInfo(BaseModel):
    """What an adapter declares about itself: its framework and the pause channels it has, each written
    in its framework's terms. Shown as declared, never as measured."""

    name: str
    framework: str  # distribution name, used to read the installed version
    channels: tuple[Channel, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        """A field this class does not have (one of an older AdapterInfo's, a typo) is an error naming it, never
        silently dropped: an adapter whose channels are lost would run as `unsupported`, blaming its framework."""
        if isinstance(data, dict):
            unknown = sorted(str(k) for k in data if k not in cls.model_fields)
            if unknown:
                raise InvalidValue(f"AdapterInfo has no field {', '.join(repr(k) for k in unknown)} (its fields: "
                                 f"{', '.join(cls.model_fields)}); declare how the framework pauses with "
                                 "channels=(Channel(name=..., kind=..., mechanism=...), ...) (docs/adapters.md)")
        return data

    @model_validator(mode="after")
    def _one_of_each(self) -> AdapterInfo:
        names = [c.name for c in self.channels]
        if len(names) != len(set(names)):
            raise InvalidValue(f"{self.name}: a channel is listed twice: {names}")
        return self

    def channel(self, name: ChannelName) -> Channel | None:
        return next((c for c in self.channels if c.name == name), None)

    def kind(self, name: ChannelName) -> PauseKind:
        """How it pauses through that channel; `unsupported` when it does not list the channel."""
        found = self.channel(name)
        return found.kind if found is not None else "unsupported"

    def mechanism(self, name: ChannelName) -> str:
        found = self.channel(name)
        return found.mechanism if found is not None else ""

    def recovers(self, way: RecoverWay) -> bool:
        """Whether its `recover` channel documents that way of recovering a crashed run (`resume` by default)."""
        found = self.channel("recover")
        return found is not None and way in (found.ways or ("resume",))

    def carries(self, name: ChannelName) -> Capabilities:
        """What a decision can carry to the model through that channel (the `ask` channel's when it says nothing)."""
        found = self.channel(name)
        if found is not None and found.carries is not None:
            return found.carries
        ask = self.channel("ask")
        return ask.carries if ask is not None and ask.carries is not None else Capabilities()

    def with_mechanisms(self, name: str, **mechanisms: str) -> AdapterInfo:
        """A variant adapter's declaration: this one under another name, with those channels' mechanisms
        replaced (`tool_gate="..."`); each must be a channel this one lists."""
        unknown = set(mechanisms) - {c.name for c in self.channels}
        if unknown:
            raise InvalidValue(f"{self.name} lists no channel {sorted(unknown)}")
        channels = tuple(c.model_copy(update={"mechanism": mechanisms[c.name]}) if c.name in mechanisms else c
                         for c in self.channels)
        return self.model_copy(update={"name": name, "channels": channels})


StreamedKind = Literal["tool_call", "tool_result", "pause"]


@runtime_checkable
class StreamLog(Protocol):
    """Where a streamed leg's events go as the adapter reads them from its framework's stream: the harness
    records each in the item's trace at once (a `streamed` event), in order with the tool log."""

    def told(self, kind: StreamedKind, tool: str, call_id: str | None = None, result: str | None = None) -> None: ...


@runtime_checkable
class ToolBox(Protocol):
    """Executes harness tools and records each call in the harness's log, wherever the adapter runs."""

    specs: list[ToolSpec]

    # `call_id`: the framework's own id for the call, where the adapter can hand it over: the tool log records
    # it, and an arena's tools may de-duplicate by it (an idempotency key)
    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str: ...

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str: ...


class LegContext(BaseModel):
    """Everything a leg may use: the item, the model endpoint, the tools, a private work directory."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    item: EvalItem
    instructions: str
    model: ModelConfig
    tools: Any  # a ToolBox
    workdir: str
    # a streamed run: every leg drives the framework's streaming API (the adapter's `stream` channel)
    stream: bool = False
    stream_log: Any = Field(default=None, exclude=True)  # a StreamLog while streaming
    # where the paused state is kept (`--store`): the framework's own local file by default
    store: Store = Field(default_factory=Store)
    # what an arena's own channels add to the leg (`ArenaSpec.leg_context`), by key, as JSON data: a channel registered
    # by an arena (arena/channels.py) reads its context here, carried to a worker like every field above
    extra: dict[str, Any] = Field(default_factory=dict)

    def told(self, kind: StreamedKind, tool: str, call_id: object = None, result: object = None) -> None:
        """Hand over one thing the framework's stream told the application (a streamed leg only): the model
        called `tool` (`tool_call`), the tool returned `result` (`tool_result`), the run waits for a human
        (`pause`, `tool` the call it waits on). `call_id` is the framework's id for the call, where it gives one;
        both are recorded as text, whatever type the framework gave them."""
        if self.stream_log is not None:
            self.stream_log.told(kind, tool, call_id=None if call_id is None else str(call_id),
                                 result=None if result is None else str(result))

    @property
    def approval_tool(self) -> ToolSpec:
        """The interrupt-point tool; arenas that gate a tool instead have none (see `gated_tools`)."""
        for spec in self.tools.specs:
            if spec.kind is ToolKind.approval:
                return spec  # type: ignore[no-any-return]  # `tools` is a ToolBox (Any: it may live in a worker)
        raise NotFound("this arena has no approval tool; it gates tools instead (LegContext.gated_tools)")

    @property
    def gated_tools(self) -> list[str]:
        """Tools the framework must hold for a human's approval before executing them."""
        return [s.name for s in self.tools.specs if s.requires_approval]

    @property
    def body_pause_tools(self) -> list[ToolSpec]:
        """Tools whose body must pause for the human between their prepare and commit steps."""
        return [s for s in self.tools.specs if s.body_pause]

# The adapter contract (`ResumableRunner`, now the `Adapter` base class) is in arena/adapter.py.
