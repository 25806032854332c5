"""Streamed runs in the reports: a row under the plain one, and findings.md's section on what streaming changes."""

from __future__ import annotations

from arena.evaluation import matrix_plan
from arena.report.digest import render_digest
from arena.report.findings import render_details, streams_section
from arena.report.matrix import compute_matrix
from arena_builtins.adapters.vanilla import VanillaAdapter
from tests.report.helpers import item, run

ARENA = "human_in_the_loop"
PAUSED = {"suspended": True, "no_tool_before_suspend": True}
EARLY = {"suspended": False, "no_tool_before_suspend": False}


def _stream(ok: bool = True) -> dict[str, bool]:
    return {"stream_matches_run": ok}


def test_a_streamed_row_stands_right_under_its_plain_row():
    m = compute_matrix([run(ARENA, "vanilla (streamed)", "scripted", [item("hitl-01", {**PAUSED, **_stream()})]),
                        run(ARENA, "langgraph", "scripted", [item("hitl-01", PAUSED)]),
                        run(ARENA, "vanilla", "scripted", [item("hitl-01", PAUSED)])])
    assert [r.adapter for r in m.rows] == ["vanilla", "vanilla (streamed)", "langgraph"]


def test_findings_name_every_cell_streaming_changes_with_its_items_and_what_the_stream_got_wrong():
    plain = run(ARENA, "langgraph", "scripted", [item("hitl-01", PAUSED), item("hitl-02", PAUSED)])
    streamed = run(ARENA, "langgraph (streamed)", "scripted",
                   [item("hitl-01", {**PAUSED, **_stream()}), item("hitl-02", {**EARLY, **_stream(False)}, paused=False, write_after=True)],
                   stream=True)
    same = run(ARENA, "vanilla (streamed)", "scripted", [item("hitl-01", {**PAUSED, **_stream()})], stream=True)
    m = compute_matrix([plain, streamed, same, run(ARENA, "vanilla", "scripted", [item("hitl-01", PAUSED)])])
    text = streams_section(m)
    langgraph = next(line for line in text.splitlines() if line.startswith("- `langgraph (streamed)`"))
    assert "differ" in langgraph and f"did not match what ran in 1/2 items ({ARENA} × scripted: hitl-02)" in langgraph
    assert "hitl-02" in text.split(langgraph, 1)[1]  # the changed cell lists the item
    assert "- `vanilla (streamed)`: no cell differs from `vanilla`'s; what the stream told matched what ran in 1/1" in text
    details = render_details(m)
    assert "## 6. Streamed runs" in details and "### `langgraph (streamed)`" not in details  # no section of its own
    digest = render_digest(m)  # the digest: the streamed row beside its plain one, in the scorecard and its section
    assert "| `langgraph (streamed)`" not in digest
    line = next(line for line in digest.splitlines() if line.startswith("- `langgraph`: "))
    assert "stream ≠ run in 1/2 items" in line and "differ" in line and "hitl-02" in line
    assert "- the same as plain, and the stream told what ran in every item: `vanilla`." in digest
    assert streams_section(compute_matrix([plain])) == ""  # no streamed run: no section


def test_findings_name_an_item_whose_check_flips_where_no_cell_shows_it():
    """A check that no column of the matrix reads (resume_safety's one_resume_finished, say) passes plain and fails
    streamed: the cells are equal, yet section 6 names the item, the check and how the streamed item ended."""
    plain = run(ARENA, "vanilla", "scripted", [item("hitl-01", {**PAUSED, "one_resume_finished": True})])
    streamed = run(ARENA, "vanilla (streamed)", "scripted",
                   [item("hitl-01", {**PAUSED, "one_resume_finished": False, **_stream()}, error="KeyError: ('x', 'y')")],
                   stream=True)
    line = next(line for line in streams_section(compute_matrix([plain, streamed])).splitlines()
                if line.startswith("- `vanilla (streamed)`"))
    assert "no cell differs" in line
    assert "items whose checks differ where no cell shows it: [hitl-01]" in line
    assert "one_resume_finished passed plain, failed streamed, the streamed item ended in KeyError" in line
    same = run(ARENA, "vanilla (streamed)", "scripted", [item("hitl-01", {**PAUSED, "one_resume_finished": True, **_stream()})],
               stream=True)
    assert "checks differ" not in streams_section(compute_matrix([plain, same]))


def test_an_item_whose_two_resumes_raced_is_not_named_for_a_flip():
    """Two resumes of one state at the same moment (a `concurrent` replay) settle a race: which ends how may differ
    between two runs of one mode, so its flip is not put down to the stream; a flip of an item beside it still is."""
    from arena.types import TraceEvent

    plain = run(ARENA, "vanilla", "scripted", [item(i, {**PAUSED, "one_resume_finished": True}) for i in ("hitl-01", "hitl-02")])
    flipped = [item(i, {**PAUSED, "one_resume_finished": False, **_stream()}, error="KeyError: ('x', 'y')")
               for i in ("hitl-01", "hitl-02")]
    raced = flipped[0]
    raced.trace.append(TraceEvent(seq=len(raced.trace), leg=1, type="resumed", replay="concurrent"))
    line = next(line for line in streams_section(compute_matrix([plain, run(ARENA, "vanilla (streamed)", "scripted", flipped,
                                                                             stream=True)])).splitlines()
                if line.startswith("- `vanilla (streamed)`"))
    assert "items whose checks differ where no cell shows it: [hitl-02]" in line and "hitl-01" not in line


def test_the_matrix_plan_streams_installed_adapters_with_the_channel_only():
    class Plain(VanillaAdapter):
        info = VanillaAdapter.info.model_copy(update={
            "name": "plain", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != "stream")})

    plan = matrix_plan([("vanilla", VanillaAdapter), ("plain", Plain)], ["approval_gate"], stream=True)
    cells = [(cell.name, cell.streamed) for cell in plan]
    assert cells[:3] == [("vanilla", False), ("vanilla", True), ("plain", False)]
    assert ("plain", True) not in cells
    assert all(not cell.streamed for cell in matrix_plan([("vanilla", VanillaAdapter)], ["approval_gate"]))


def test_a_release_history_streams_the_older_releases_too():
    """`arena matrix --history ADAPTER --stream` (stream_releases): each pinned release streamed as well; the default
    matrix (`--versions --stream`) streams the installed release only."""
    adapters = [("vanilla@1.0.0", VanillaAdapter), ("vanilla", VanillaAdapter)]
    default = {(c.name, c.streamed) for c in matrix_plan(adapters, ["approval_gate"], stream=True)}
    assert default == {("vanilla@1.0.0", False), ("vanilla", False), ("vanilla", True)}
    history = {(c.name, c.streamed) for c in matrix_plan(adapters, ["approval_gate"], stream=True, stream_releases=True)}
    assert history == default | {("vanilla@1.0.0", True)}
