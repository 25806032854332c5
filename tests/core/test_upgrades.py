"""`--resume-on` (issue 27): a run paused by one release resumes under the next, the state passing only through the
framework's own store; the matrix pairs each framework's adjacent releases as the later release's cells."""

from __future__ import annotations

import pytest

import arena
from arena import catalog
from arena.errors import UserError
from arena.evaluation import matrix_plan, upgrade_pairs
from arena.report import compute_matrix
from arena_builtins.adapters.vanilla_durable import store as vanilla_durable  # where JOURNAL is read
from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter

ITEMS = ["durable-01", "durable-02"]


class NextRelease(VanillaDurableAdapter):
    """The same journal, read by a later "release": a faithful upgrade."""

    info = VanillaDurableAdapter.info.model_copy(update={"name": "vanilla_durable_next"})


class Incompatible(VanillaDurableAdapter):
    """A later "release" that moved its journal: the paused state the old release left is not where it reads."""

    info = VanillaDurableAdapter.info.model_copy(update={"name": "vanilla_durable_moved"})

    async def resume(self, state, decision, ctx):
        vanilla_durable.JOURNAL = "vanilla_durable-v2.json"  # this process is the new release's
        moved = {**state, "journal": state["journal"].replace("vanilla_durable.json", vanilla_durable.JOURNAL)}
        return await super().resume(moved, decision, ctx)


def test_a_faithful_next_release_resumes_what_the_old_one_paused(tmp_path):
    (run,) = arena.evaluate("durable_state", ["vanilla_durable"], resume_on="tests.core.test_upgrades:NextRelease",
                            items=ITEMS, out=tmp_path)
    assert run.summary is not None and run.summary.passed == 2
    assert run.meta["arena"] == "durable_state@upgrade" and run.meta["adapter"] == "vanilla_durable_next"
    assert run.meta["upgrade"]["from"] == "vanilla_durable" and run.meta["upgrade"]["to"] == "vanilla_durable_next"
    (row,) = compute_matrix([run]).rows
    assert row.cells["survives_upgrade"].text == "2/2"


def test_a_release_that_cannot_read_the_old_state_fails_the_upgrade(tmp_path):
    (run,) = arena.evaluate("durable_state", ["vanilla_durable"], resume_on="tests.core.test_upgrades:Incompatible",
                            items=ITEMS, out=tmp_path)
    assert run.summary is not None and run.summary.passed == 0
    assert all(r.status != "passed" for r in run.results)
    (row,) = compute_matrix([run]).rows
    assert row.cells["survives_upgrade"].status == "fail"
    from arena_builtins.arenas.durable_state.findings import how_it_failed

    assert {how_it_failed(r) for r in run.results} == {"state unreadable"}  # the new release errored at the resume


def test_resume_on_needs_a_new_process_per_leg_and_the_same_framework(tmp_path):
    with pytest.raises(UserError, match="every leg runs in a new process"):
        arena.evaluate("human_in_the_loop", ["vanilla"], resume_on="vanilla", items=["hitl-01"], out=tmp_path)
    with pytest.raises(UserError, match="is not vanilla_durable's framework"):
        arena.evaluate("durable_state", ["vanilla_durable"], resume_on="langgraph", items=ITEMS, out=tmp_path)


def test_upgrade_pairs_go_oldest_to_installed_within_each_framework():
    registry = catalog.adapters()  # the releases' names are what pairs them (no index is asked: offline)
    adapters = [(name, registry[name.split("@")[0]])
                for name in ("langgraph", "langgraph@1.1.10", "langgraph@1.0.10", "vanilla")]
    pairs = [(a[0], b[0]) for a, b in upgrade_pairs(adapters)]
    assert pairs == [("langgraph@1.0.10", "langgraph@1.1.10"), ("langgraph@1.1.10", "langgraph")]
    plan = matrix_plan(adapters, ["durable_state", "approval_gate"])
    upgrades = [(c.spec.name, c.name, c.before[0]) for c in plan if c.before]
    assert upgrades == [("durable_state", "langgraph@1.1.10", "langgraph@1.0.10"),
                        ("durable_state", "langgraph", "langgraph@1.1.10")]
