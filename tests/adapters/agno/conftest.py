"""agno adapter: external_execution on request_approval, requires_confirmation on gated tools, the run paused
in agno's SqliteDb and continued with `acontinue_run(run_id, session_id, requirements)`.

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs ends,
traces equal to vanilla's, a gated pause on the gated call, durable_state across a restart, nothing past
loopback) is test_conformance.py's; this folder holds what is agno's own, on the same runs, a file per concern of
the adapter's package. This conftest holds what those files share: the arenas, the cells' fixtures, a leg's
context, and a stand-in for agno's Agent."""

from __future__ import annotations

import pytest

from arena import catalog
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.types import LegContext, ModelConfig

NAME = "agno"
HITL = catalog.load_arena("human_in_the_loop")
GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


def adapter_module():
    """The adapter's module, as its entry point names it (imported lazily: it imports no agno itself)."""
    import importlib

    return importlib.import_module(catalog.adapters()[NAME].target.partition(":")[0])


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell(NAME, "approval_gate", "reckless-parallel").wire


def leg_context(spec, item_id: str, workdir: str, recorder=None, server=None, profile: str = "scripted") -> LegContext:
    recorder = recorder or TraceRecorder()
    model = server.open_item(recorder, profile).model if server is not None else None
    return LegContext(
        item=spec.item(item_id), instructions=spec.instructions,
        model=model or ModelConfig(name="scripted", base_url="http://127.0.0.1:9/v1", api_key="unused"),
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)), workdir=workdir,
    )


def requirement(**flags):
    from agno.models.response import ToolExecution
    from agno.run.requirement import RunRequirement

    return RunRequirement(tool_execution=ToolExecution(tool_call_id="c1", tool_name="book_room",
                                                       tool_args={"room_id": "R1"}, **flags))


class Recorder:
    """Stands in for agno's Agent: keeps what acontinue_run was handed."""

    def __init__(self):
        self.calls = []

    async def acontinue_run(self, **kwargs):
        self.calls.append(kwargs)
        raise Stop


class Stop(Exception):
    pass


def paused_state():
    a, b = requirement(requires_confirmation=True), requirement(requires_confirmation=True)
    b.tool_execution.tool_call_id = "c2"
    return {"db_file": "x", "session_id": "s", "run_id": "r", "call_ids": ["c1", "c2"],
            "requirements": [a.to_dict(), b.to_dict()]}
