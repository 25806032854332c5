"""The contract every adapter meets, one parametrized module over every registered adapter.

Per adapter: its `info` is a valid AdapterInfo named as it is registered, declaring what the table
below says; importing its module imports none of its framework. Per adapter x arena: the arena runs it
or declines it with a reason, and every pair is either run here or says where it is measured. Per cell
run here (adapter x arena x scripted profile, each run once per session and shared with the
adapter's own test file, see conftest.py): every item ends as the table says (the checks it fails,
none for a pass, and how many legs), every item gets the arena's checks in order, the trace equals
vanilla's where the table says so, a gated pause is on the gated call, and nothing left loopback.

What is particular to one framework (how the decision reaches its model on the wire, its persisted
state, its own switches) stays in that adapter's file. Expectations are data, here at the top.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from arena import catalog
from arena.for_adapters import AdapterInfo
from tests.conftest import behaviour, normalised

ROOT = Path(__file__).resolve().parents[2]
HITL, GATE, DURABLE = "human_in_the_loop", "approval_gate", "durable_state"

# -- what each adapter declares ------------------------------------------------------------------------
# name: (framework distribution, kind of its `ask` and `tool_gate` channels ("unsupported": not listed),
# what a decision carries through `ask`: (deny_reason, approve_note, free_text))
DECLARED: dict[str, tuple[str, tuple[str, str], tuple[bool, bool, bool]]] = {
    "vanilla": ("openai", ("emulated", "emulated"), (True, True, True)),
    "vanilla_durable": ("openai", ("emulated", "emulated"), (True, True, True)),
    "langgraph": ("langgraph", ("native", "native"), (True, True, True)),
    "langgraph_per_call": ("langgraph", ("native", "native"), (True, True, True)),
    "openai_agents": ("openai-agents", ("native", "native"), (True, True, True)),
    "pydantic_ai": ("pydantic-ai-slim", ("native", "native"), (True, True, True)),
    # the approval response is a bool: the rejection text is the framework's own, fixed
    "microsoft_af": ("agent-framework-core", ("native", "native"), (False, True, True)),
    "google_adk": ("google-adk", ("native", "native"), (True, True, True)),
    # a rejected ToolConfirmation carries no reason: the model reads ADK's fixed rejection result
    "google_adk_confirm": ("google-adk", ("native", "native"), (False, True, True)),
    "crewai": ("crewai", ("native", "unsupported"), (True, True, True)),
    "smolagents": ("smolagents", ("unsupported", "unsupported"), (False, False, False)),
    "smolagents_emulated": ("smolagents", ("emulated", "unsupported"), (True, True, True)),
    "pydantic_ai_dbos": ("pydantic-ai-slim", ("native", "native"), (True, True, True)),
    "strands": ("strands-agents", ("native", "native"), (True, True, True)),
    "agno": ("agno", ("native", "native"), (True, True, True)),
    "llama_index": ("llama-index-core", ("native", "native"), (True, True, True)),
}

# What a channel's declared mechanism names: the framework's own API that makes the pause.
MECHANISM_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "langgraph": {"tool_gate": ("HumanInTheLoopMiddleware",)},
    "openai_agents": {"tool_gate": ("needs_approval",)},
    "pydantic_ai": {"tool_gate": ("requires_approval=True", "ToolDenied")},
    "microsoft_af": {"tool_gate": ('approval_mode="always_require"', "fixed rejection text")},
    "google_adk": {"tool_gate": ("require_confirmation=True",)},
    "google_adk_confirm": {"tool_gate": ("require_confirmation=True",)},
    "crewai": {"ask": ("HumanFeedbackPending", "SQLiteFlowPersistence")},
    "pydantic_ai_dbos": {"ask": ("@DBOS.workflow", "DBOSDurability"),
                         "tool_gate": ("requires_approval=True", "ToolDenied", "DBOSDurability"),
                         "recover": ("DBOS.launch()", "PENDING")},
    "strands": {"ask": ("tool_context.interrupt",), "tool_gate": ("BeforeToolCallEvent", "event.interrupt", "cancel_tool")},
    "llama_index": {"ask": ("wait_for_event", "HumanResponseEvent", "Context.to_dict"),
                    "tool_gate": ("wait_for_event", "HumanResponseEvent")},
    "agno": {"ask": ("external_execution=True", "set_external_execution_result"),
             "tool_gate": ("requires_confirmation=True", "reject(note=")},
}

# The framework's modules, none of which importing the adapter's module may import.
FRAMEWORK_MODULES: dict[str, tuple[str, ...]] = {
    "vanilla": ("openai",),
    "vanilla_durable": ("openai",),
    "langgraph": ("langgraph", "langchain", "langchain_openai"),
    "langgraph_per_call": ("langgraph", "langchain", "langchain_openai"),
    "openai_agents": ("agents",),
    "pydantic_ai": ("pydantic_ai",),
    "microsoft_af": ("agent_framework", "agent_framework_openai"),
    "google_adk": ("litellm", "google.adk"),
    "google_adk_confirm": ("litellm", "google.adk"),
    "crewai": ("crewai",),
    "smolagents": ("smolagents",),
    "smolagents_emulated": ("smolagents",),
    "pydantic_ai_dbos": ("pydantic_ai", "dbos"),
    "strands": ("strands",),
    "agno": ("agno",),
    "llama_index": ("llama_index", "litellm", "workflows"),
}
WATCHED = sorted({m for modules in FRAMEWORK_MODULES.values() for m in modules})


# -- how each item of a cell ends ----------------------------------------------------------------------


@dataclass(frozen=True)
class Ends:
    """The checks an item fails (none: it passes), by its decision, and the legs it runs."""

    approved: frozenset[str] = frozenset()
    denied: frozenset[str] = frozenset()
    legs: int = 2

    def fails(self, item) -> frozenset[str]:
        return self.approved if item.resume_with[0].approved else self.denied


ALL_PASS = Ends()
# The consequential sibling of the approval call (scripted-eager) ran in leg 0, before the pause, and
# is not run again on resume: nothing consequential runs after an approval.
SIBLING_RAN_FIRST = Ends(
    approved=frozenset({"suspended", "no_tool_before_suspend", "tool_called_once_after_resume", "args_as_requested"}),
    denied=frozenset({"suspended", "no_tool_before_suspend", "tool_not_used"}),
)
# The sibling is held during the pause and run on resume whatever the decision, a denial too.
SIBLING_RUN_ON_DENIAL = Ends(denied=frozenset({"tool_not_used", "denied_not_executed"}))
# No pause primitive: request_approval is executed ("NOT APPROVED: ..."), the run ends in one leg.
NEVER_PAUSES = Ends(
    approved=frozenset({"suspended", "no_tool_before_suspend", "tool_called_once_after_resume", "args_as_requested",
                        "decision_reached_model", "no_replay"}),
    denied=frozenset({"suspended", "no_tool_before_suspend", "decision_reached_model", "no_replay"}),
    legs=1,
)
# ...and with scripted-eager every item books as well.
NEVER_PAUSES_AND_BOOKS = Ends(
    approved=NEVER_PAUSES.approved, denied=NEVER_PAUSES.denied | {"tool_not_used"}, legs=1,
)

EVENTS = "events"  # the normalised trace (all but the model's side) equals vanilla's
TOOL_CALLS = "tool calls"  # the sequence of tool calls and pause events equals vanilla's (texts differ)

# (adapter, arena, profile): (how every item ends, what of vanilla's trace it equals)
CELLS: dict[tuple[str, str, str], tuple[Ends, str | None]] = {
    ("vanilla", HITL, "scripted"): (ALL_PASS, None),
    ("vanilla", HITL, "scripted-eager"): (ALL_PASS, None),
    ("vanilla", GATE, "reckless"): (ALL_PASS, None),
    ("vanilla", GATE, "reckless-parallel"): (ALL_PASS, None),
    # vanilla's loop with its run journaled: the same trace, and it survives a new process
    ("vanilla_durable", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("vanilla_durable", DURABLE, "scripted"): (ALL_PASS, None),
    ("langgraph", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("langgraph", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("langgraph", GATE, "reckless"): (ALL_PASS, EVENTS),
    ("langgraph", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("langgraph", DURABLE, "scripted"): (ALL_PASS, None),
    ("langgraph_per_call", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("openai_agents", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("openai_agents", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("openai_agents", GATE, "reckless"): (ALL_PASS, EVENTS),
    ("openai_agents", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("openai_agents", DURABLE, "scripted"): (ALL_PASS, None),
    ("pydantic_ai", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("pydantic_ai", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("pydantic_ai", GATE, "reckless"): (ALL_PASS, EVENTS),
    ("pydantic_ai", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("pydantic_ai", DURABLE, "scripted"): (ALL_PASS, None),
    # denied items: the final answer quotes the fixed rejection text, not the human's reason
    ("microsoft_af", HITL, "scripted"): (ALL_PASS, TOOL_CALLS),
    ("microsoft_af", HITL, "scripted-eager"): (SIBLING_RUN_ON_DENIAL, None),
    ("microsoft_af", GATE, "reckless"): (ALL_PASS, TOOL_CALLS),
    ("microsoft_af", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("microsoft_af", DURABLE, "scripted"): (ALL_PASS, None),
    ("google_adk", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("google_adk", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("google_adk", GATE, "reckless"): (ALL_PASS, TOOL_CALLS),  # the rejection text, as for the next one
    ("google_adk", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("google_adk_confirm", HITL, "scripted"): (ALL_PASS, TOOL_CALLS),
    ("google_adk_confirm", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("google_adk_confirm", GATE, "reckless"): (ALL_PASS, TOOL_CALLS),
    # through a worker on crewai's own environment (its scripted-eager items, whose ends depend on the
    # model's order, are pinned in tests/adapters/crewai/ and through `arena run` in its test_worker.py)
    ("crewai", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("smolagents", HITL, "scripted"): (NEVER_PAUSES, None),
    ("smolagents", HITL, "scripted-eager"): (NEVER_PAUSES_AND_BOOKS, None),
    ("smolagents_emulated", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("smolagents_emulated", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    # the same agent as pydantic_ai, each leg a DBOS workflow: the same ends
    ("pydantic_ai_dbos", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("pydantic_ai_dbos", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("pydantic_ai_dbos", GATE, "reckless"): (ALL_PASS, EVENTS),
    ("pydantic_ai_dbos", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("pydantic_ai_dbos", DURABLE, "scripted"): (ALL_PASS, None),
    # strands' ConcurrentToolExecutor runs the sibling book_room of the turn before the interrupt stops the run
    ("strands", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("strands", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("strands", GATE, "reckless"): (ALL_PASS, EVENTS),
    ("strands", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("strands", DURABLE, "scripted"): (ALL_PASS, None),
    # FunctionAgent runs every tool call of the turn as its own event: the sibling runs before the idle
    ("llama_index", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("llama_index", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("llama_index", GATE, "reckless"): (ALL_PASS, EVENTS),
    ("llama_index", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("llama_index", DURABLE, "scripted"): (ALL_PASS, None),
    # agno runs every call of the turn without a HITL flag: the sibling book_room runs before the pause
    ("agno", HITL, "scripted"): (ALL_PASS, EVENTS),
    ("agno", HITL, "scripted-eager"): (SIBLING_RAN_FIRST, None),
    ("agno", GATE, "reckless"): (ALL_PASS, EVENTS),
    ("agno", GATE, "reckless-parallel"): (ALL_PASS, None),
    ("agno", DURABLE, "scripted"): (ALL_PASS, None),
}

# The items a cell runs when not all of the arena's: durable_state's first approved and first denied
# item, each leg in a fresh worker process (tests/conftest.py's run_durable_pair).
ITEMS_RUN = {DURABLE: ("durable-01", "durable-02")}

# Every item of these arenas gets its own checks and then the universal ones, in this order.
_UNIVERSAL = ("completed", "final_from_model", "nothing_after_final", "shown_as_asked", "denied_not_executed",
              "continued_own_run", "requests_well_formed")
CHECKS_IN_ORDER = {
    arena: {
        True: ("suspended", "no_tool_before_suspend", "tool_called_once_after_resume", "args_as_requested",
               "decision_reached_model", "no_replay", *_UNIVERSAL),
        False: ("suspended", "no_tool_before_suspend", "tool_not_used", "acknowledged", "decision_reached_model",
                "no_replay", *_UNIVERSAL),
    }
    for arena in (HITL, GATE)
}

# Where the pairs not run here are measured: all of them by the full matrix, compared with the committed
# findings.md by tests/report/test_findings_committed.py (ARENA_FULL_MATRIX=1, minutes on two cores).
ELSEWHERE_ARENAS = {
    "doc_review": "tests/arenas/test_doc_review.py and the full matrix",
    "flight_booking": "tests/arenas/test_flight_booking.py and the full matrix",
    "resume_safety": "tests/arenas/test_resume_safety.py and the full matrix",
    "crash_recovery": "tests/arenas/test_crash_recovery.py and the full matrix",
    "interruptions": "tests/arenas/test_interruptions.py, each adapter's test of its message channel, and the full matrix",
    "delegation": "tests/arenas/test_delegation.py, each adapter's test of its nested and handoff channels, and the full "
                  "matrix",
    "run_context": "tests/arenas/test_run_context.py (each adapter that declares the channel) and the full matrix",
    "follow_up": "tests/arenas/test_follow_up.py (each adapter that declares the channel) and the full matrix",
}
ELSEWHERE = {
    ("langgraph_per_call", GATE): "the full matrix",
    ("crewai", GATE): "the full matrix (no tool-level gate)",
    ("smolagents", GATE): "the full matrix (no tool-level gate)",
    ("smolagents_emulated", GATE): "the full matrix (no tool-level gate)",
    ("vanilla", DURABLE): "the full matrix (its pause state lives in memory: it fails by design)",
    ("vanilla_durable", GATE): "the full matrix",
    ("langgraph_per_call", DURABLE): "the full matrix",
    ("google_adk", DURABLE): "the full matrix",
    ("google_adk_confirm", DURABLE): "the full matrix",
    ("crewai", DURABLE): "tests/adapters/crewai/test_worker.py, through `arena run`",
    ("smolagents", DURABLE): "the full matrix",
    ("smolagents_emulated", DURABLE): "the full matrix",
}

ADAPTERS = list(catalog.adapters())
ARENAS = catalog.arena_names()


def _entry(name: str):
    entry = catalog.adapters()[name]
    if not entry.available:
        pytest.skip(f"{entry.framework} is not installed")
    return entry


# -- per adapter -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ADAPTERS)
def test_info_is_a_valid_adapter_info_named_as_registered(name):
    entry = catalog.adapters()[name]
    cls = entry.load()  # its framework need not be installed: the module imports it lazily
    assert cls is catalog.load_target(entry.target)
    info = cls.info
    assert isinstance(info, AdapterInfo)
    assert AdapterInfo.model_validate(info.model_dump()) == info
    assert info.name == name
    assert info.framework == entry.framework


@pytest.mark.parametrize("name", ADAPTERS)
def test_declares_what_it_has(name):
    entry = catalog.adapters()[name]
    if entry.plugin and name not in DECLARED:
        pytest.skip(f"{name} is a plugin ({entry.distribution}): nothing recorded here of what it declares")
    assert name in DECLARED, f"a built-in adapter without a row in DECLARED: add {name!r}"
    framework, kinds, carries = DECLARED[name]
    info = entry.load().info
    assert info.framework == framework
    assert (info.kind("ask"), info.kind("tool_gate")) == kinds
    ask = info.carries("ask")
    assert (ask.deny_reason, ask.approve_note, ask.free_text) == carries
    for channel, names in MECHANISM_NAMES.get(name, {}).items():
        for word in names:
            assert word in info.mechanism(channel), (channel, word)
    # the version reported is the installed distribution's (an isolated one's: what its environment pins),
    # and it is available wherever its framework is installed
    if entry.isolated:
        from arena.worker import envs

        assert entry.version == envs.pinned_version(entry.env_name, framework)
        assert entry.available
        return
    try:
        installed = metadata.version(framework)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{framework} is not installed")
    assert entry.version == installed
    assert entry.available, f"{framework} is installed but {name} is not available (it also needs {entry.requires})"


# In a fresh process: import what every adapter module imports first (arena.for_adapters), then, in a child
# forked for each module so that each starts from that state alone, import only the module and report
# which framework modules are in sys.modules. The parent reports its own (none may be there either).
_IMPORT_EACH = """
import importlib, json, os, sys
import arena.for_adapters
watched, modules = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {"": [m for m in watched if m in sys.modules]}
for module in modules:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(module)
            found = [m for m in watched if m in sys.modules]
        except BaseException as exc:
            found = f"{type(exc).__name__}: {exc}"
        os.write(write, json.dumps(found).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        out[module] = json.loads(pipe.read())
    os.waitpid(pid, 0)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def imported_by_adapter_module() -> dict[str, list[str]]:
    """module -> the framework modules present after importing only it ("": before importing any)."""
    modules = sorted({catalog.adapters()[name].target.partition(":")[0] for name in ADAPTERS})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", _IMPORT_EACH, json.dumps(WATCHED), json.dumps(modules)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ADAPTERS)
def test_module_imports_its_framework_lazily(name, imported_by_adapter_module):
    if name not in FRAMEWORK_MODULES:
        pytest.skip(f"no framework modules recorded for {name}")
    module = catalog.adapters()[name].target.partition(":")[0]
    assert imported_by_adapter_module[""] == []
    # none of its own framework, nor any other adapter's
    assert imported_by_adapter_module[module] == [], f"importing {module} imported a framework"


@pytest.mark.parametrize("name", ADAPTERS)
def test_an_item_loads_no_ca_certificates_once_its_process_has(name, run_adapter, monkeypatch):
    """Every item builds its own clients; loading the CA certificates for each is tens of milliseconds of CPU per
    item (per leg): the TLS context is the process's, shared (arena.http), and no framework builds one of its own
    for each item either (ChatOpenAI did, for a blocking client it never used)."""
    if _entry(name).isolated:
        pytest.skip(f"{name} runs in an environment of its own")
    run_adapter(name, items=["hitl-01"])  # the process's first: what loads once has loaded
    loads: list[str] = []
    for method in ("load_verify_locations", "load_default_certs"):
        original = getattr(ssl.SSLContext, method)
        monkeypatch.setattr(ssl.SSLContext, method,
                            lambda self, *a, _o=original, _m=method, **k: (loads.append(_m), _o(self, *a, **k))[1])
    results = run_adapter(name, items=["hitl-02", "hitl-03"])
    assert [r.error for r in results] == [None, None]
    assert loads == []


# -- per adapter x arena ---------------------------------------------------------------------------------


@pytest.mark.parametrize("arena", ARENAS)
@pytest.mark.parametrize("name", ADAPTERS)
def test_each_arena_runs_it_or_declines_with_a_reason_and_is_measured_somewhere(name, arena):
    entry = catalog.adapters()[name]
    spec = catalog.load_arena(arena)
    why = spec.declined(entry.load().info)
    if why is not None:
        assert isinstance(why, str) and why.strip(), why
        assert not [key for key in CELLS if key[:2] == (name, arena)], f"{arena} declines {name}: {why}"
        return
    run_here = [profile for (a, r, profile) in CELLS if (a, r) == (name, arena)]
    assert run_here or arena in ELSEWHERE_ARENAS or (name, arena) in ELSEWHERE, (
        f"{name} x {arena} is neither run here (CELLS) nor said to be measured elsewhere (ELSEWHERE)")
    assert set(run_here) <= set(spec.profiles), run_here


# -- per cell --------------------------------------------------------------------------------------------


def _cell_id(key) -> str:
    return "-".join(key)


@pytest.mark.parametrize("key", list(CELLS), ids=_cell_id)
def test_every_item_ends_as_expected(key, cell):
    name, arena, profile = key
    ends, _ = CELLS[key]
    spec = catalog.load_arena(arena)
    assert spec.declined(_entry(name).load().info) is None
    results = cell(name, arena, profile).results
    items = {i.id: i for i in spec.items}
    assert [r.item_id for r in results] == list(ITEMS_RUN.get(arena, items))
    for r in results:
        expected = ends.fails(items[r.item_id])
        failed = {c.name for c in r.checks if not c.passed}
        assert r.error is None, (r.item_id, r.error)
        assert r.checks, r.item_id
        assert failed == expected, (r.item_id, r.status, [c for c in r.checks if not c.passed])
        assert r.status == ("failed" if expected else "passed"), r.item_id
        assert r.legs == ends.legs, r.item_id


@pytest.mark.parametrize("key", [k for k in CELLS if k[1] in CHECKS_IN_ORDER], ids=_cell_id)
def test_every_item_gets_the_arenas_checks_in_order(key, cell):
    name, arena, profile = key
    items = {i.id: i for i in catalog.load_arena(arena).items}
    for r in cell(name, arena, profile).results:
        approved = items[r.item_id].resume_with[0].approved
        assert tuple(c.name for c in r.checks) == CHECKS_IN_ORDER[arena][approved], r.item_id


@pytest.mark.parametrize("key", [k for k, (_, trace) in CELLS.items() if trace], ids=_cell_id)
def test_trace_equals_vanillas(key, cell, vanilla_by_id):
    name, arena, profile = key
    compare = normalised if CELLS[key][1] == EVENTS else behaviour
    vanilla = vanilla_by_id(profile, arena)
    for r in cell(name, arena, profile).results:
        assert compare(r) == compare(vanilla[r.item_id]), r.item_id


@pytest.mark.parametrize("key", [k for k, (ends, _) in CELLS.items() if k[1] == GATE and ends == ALL_PASS],
                         ids=_cell_id)
def test_a_gated_pause_is_on_the_gated_call_and_it_runs_only_when_approved(key, cell):
    """approval_gate: the run suspends in leg 0 on book_room itself, with the arguments the model gave;
    book_room runs once, in leg 1, when approved, and never when denied."""
    name, arena, profile = key
    items = {i.id: i for i in catalog.load_arena(arena).items}
    for r in cell(name, arena, profile).results:
        item = items[r.item_id]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert (pause.leg, pause.tool) == (0, "book_room"), r.item_id
        assert pause.args == {"room_id": item.metadata["expected_room"]}, r.item_id
        books = [e.leg for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        assert books == ([1] if item.resume_with[0].approved else []), r.item_id


@pytest.mark.parametrize("key", list(CELLS), ids=_cell_id)
def test_nothing_left_loopback(key, cell):
    """No run reaches past loopback (tests/conftest.py refuses and records any attempt; an isolated
    adapter's worker runs in a process of its own, outside this guard)."""
    assert cell(*key).refused == []
