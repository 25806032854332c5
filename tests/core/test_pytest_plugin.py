"""The pytest plugin a framework's own suite uses (`arena_cells`), run the way such a suite runs it: a pytest
of its own (pytester, in a subprocess) that finds the plugin through arena's `pytest11` entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
def test_the_gate_holds(arena_cells):
    cells = arena_cells("approval_gate", "vanilla")
    assert cells["gate_holds"].text == "24/24", cells.explain("gate_holds")
    assert cells["tool-level gate holds"] is cells["gate_holds"] and cells.short_of("gate_holds") == []
    assert set(cells) == {"gate_holds"} and cells.adapter == "vanilla"


def test_a_second_ask_reuses_the_run(arena_cells):
    first = arena_cells("approval_gate", "vanilla")
    assert arena_cells("approval_gate", "vanilla") is first and len(first.run_dirs) == 2


def test_a_faulty_release_fails_on_its_cell(arena_cells):
    from tests.zoo import FirstCallOnly  # looks only at the first call of a turn for the gated tool

    cells = arena_cells("approval_gate", FirstCallOnly)
    assert cells["gate_holds"].text == "24/24", cells.explain("gate_holds")


def test_an_unknown_column_names_the_known_ones(arena_cells):
    cells = arena_cells("approval_gate", "vanilla")
    cells["no_such_column"]
'''


def test_a_suite_asserts_cells_and_a_faulty_adapter_fails_with_the_items_short_of_the_cell(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the faulty adapter is this repository's tests.zoo
    pytester.makepyfile(test_framework=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    # the faulty adapter: the gate cell is short of its pass, and the message names the items and why
    failure = next(line for line in out.splitlines() if line.startswith("E       AssertionError: vanilla x approval_gate"))
    assert "tool-level gate holds: " in failure and "24/24" not in failure.split(";")[0]
    assert "short of it: gate-02 (reckless-parallel): suspended: no suspended state was observed" in failure
    assert "run directories: " in failure and "approval_gate-vanilla-reckless-parallel-" in failure
    assert "NoColumn: approval_gate has no column 'no_such_column'; its columns: gate_holds" in out


def test_an_arena_that_declines_the_adapter_says_so(tmp_path):
    from arena.pytest_plugin import ArenaRunError, _run

    with pytest.raises(ArenaRunError, match="crash_recovery made no run of vanilla: "):
        _run("crash_recovery", "vanilla", False, tmp_path / "runs", 30)
    assert not any((tmp_path / "runs").glob("*/meta.json"))  # no run directory was made
