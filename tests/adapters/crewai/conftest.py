"""The CrewAI adapter: a Flow step with @human_feedback whose provider raises HumanFeedbackPending,
SQLiteFlowPersistence, Flow.from_pending(...).resume_async(feedback).

CrewAI cannot share the harness's environment (it pins openai<3), so these tests run only where
`crewai` is importable: in its own environment, with the repository root on PYTHONPATH. The harness
builds that environment from adapters/envs/crewai.txt on first use (`arena run ... -a crewai`), and
tests/adapters/crewai/test_worker.py drives crewai through it from the main environment (where crewai is
importable, that file is not collected: it runs from the main environment). To run these tests there (pytest,
and python-docx for the doc_review arena the harness loads, added for the run only; the environment stays as
built):

    uv run arena run human_in_the_loop -a crewai --item hitl-01   # builds the environment once
    PYTHONPATH=. uv run --no-project --with pytest --with python-docx \
        --python "$(uv run python -c 'from arena.worker.envs import env_python; print(env_python("crewai"))')" \
        python -m pytest tests/adapters/crewai

What every adapter shares (its declared info, a lazily imported framework, how each item of its
human_in_the_loop runs ends, traces equal to vanilla's) is test_conformance.py's, which runs crewai
through a worker on that environment from the main one; this folder holds what is CrewAI's own, a file per
concern of the adapter's package. This conftest holds what those files share.
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from arena import catalog
from arena_builtins.adapters.crewai import CrewAIAdapter
from arena_builtins.adapters.crewai.client import OFFLINE_ENV
from tests.conftest import wire_slice

os.environ.update(OFFLINE_ENV)  # before CrewAI is imported: no telemetry, traces or version check

# why every file here but test_worker.py skips where crewai is not importable (the main environment)
NOT_HERE = (
    "crewai is not in this environment, by design: it needs openai<3, so it lives in an environment of its own, built "
    "by the harness from adapters/envs/crewai.txt on first use (tests/adapters/crewai/test_worker.py runs it through "
    "that environment). To run these tests there: PYTHONPATH=. uv run --no-project --with pytest --with python-docx "
    "--python <its python: arena.worker.envs.env_python('crewai')> python -m pytest tests/adapters/crewai "
    "(tests/adapters/crewai/conftest.py's docstring has the whole command)")

# test_worker.py drives crewai from the main environment, through `arena run`: not from crewai's own
collect_ignore = ["test_worker.py"] if importlib.util.find_spec("crewai") is not None else []

APPROVAL = "request_approval"
SPEC = catalog.load_arena("human_in_the_loop")
ITEMS = {i.id: i for i in SPEC.items}
REGISTRY = catalog.builtin_adapters()
# Through the registry (and so its worker) once the entry exists; the class itself until then.
ADAPTER = "crewai" if "crewai" in REGISTRY else CrewAIAdapter


@pytest.fixture(scope="module")
def scripted(run_adapter, server):
    return wire_slice(server, lambda: run_adapter(ADAPTER, timeout_s=120))


@pytest.fixture(scope="module")
def eager(run_adapter, server):
    return wire_slice(server, lambda: run_adapter(ADAPTER, profile="scripted-eager", timeout_s=120))


def tool_results(requests) -> dict[str, dict[str, str]]:
    """approval summary -> {tool name: the tool result the model saw}, for the approval turn's calls."""
    turns: dict[str, dict[str, str]] = {}  # call id -> summary of its approval turn
    names: dict[str, str] = {}
    seen: dict[str, dict[str, str]] = {}
    for body in requests:
        for m in body["messages"]:
            calls = m.get("tool_calls") or []
            approval = next((tc for tc in calls if tc["function"]["name"] == APPROVAL), None)
            if approval is not None:
                summary = json.loads(approval["function"]["arguments"])["summary"]
                for tc in calls:
                    turns[tc["id"]] = summary
                    names[tc["id"]] = tc["function"]["name"]
            if m.get("role") == "tool" and m.get("tool_call_id") in turns:
                seen.setdefault(turns[m["tool_call_id"]], {})[names[m["tool_call_id"]]] = m["content"]
    return seen
