"""The committed findings.md: it is what the generator makes of its evidence, and of a fresh full run.

- From the committed evidence (fast): when the run directories (reports/runs/) are in the checkout,
  every one findings.md cites among them, regenerating from them must give findings.md byte for byte.
- From a fresh full run (slow: every arena × adapter × profile, the older releases of the default
  version set and the streamed rows, about 15 minutes on two cores with the command's `--jobs 3`, once their environments are
  built): opt in with ARENA_FULL_MATRIX=1. It runs
  the command written at the top of findings.md in a scratch folder and compares the result with
  the committed file, ignoring only the run directories' timestamps and random suffixes.
"""

from __future__ import annotations

import os
import re

import pytest

from arena.catalog import builtin_adapters

REGISTRY = builtin_adapters()
from arena.report.findings import DEFAULT_COMMAND, render_findings
from arena.report.matrix import collect_runs, compute_matrix

from .conftest import REPO, arena_cli

FINDINGS = REPO / "findings.md"
EVIDENCE = REPO / "reports" / "runs"


def normalise(text: str) -> str:
    """Run directory names carry a start time and a random suffix; nothing else may differ."""
    text = re.sub(r"\d{8}-\d{6}-", "STAMP-", text)
    return re.sub(r"-[0-9a-f]{4}(?=[/)\]])", "-ID", text)


def test_findings_is_committed_with_its_regeneration_command():
    text = FINDINGS.read_text()
    assert text.startswith("# Findings\n")
    assert f"uv run {DEFAULT_COMMAND}\n" in text
    assert "## 4. Adapter coverage" in text


def test_findings_is_what_its_evidence_gives():
    if not EVIDENCE.is_dir() or not any(EVIDENCE.iterdir()):
        pytest.skip("the run directories findings.md cites (reports/runs/) are not in this checkout")
    cited = set(re.findall(r"\]\((reports/runs/[^/)]+)/", FINDINGS.read_text()))
    missing = [c for c in cited if not (REPO / c).is_dir()]
    assert not missing, f"findings.md cites run directories that are not here: {missing[:3]}"
    # every run of the matrix, cited or not (an older release whose cells match the newest is cited nowhere)
    runs = collect_runs([EVIDENCE])
    assert {f"reports/runs/{r.path.name}" for r in runs} >= cited
    assert render_findings(compute_matrix(runs), doc_dir=REPO) == FINDINGS.read_text()


@pytest.mark.skipif(os.environ.get("ARENA_FULL_MATRIX") != "1", reason="a full fresh matrix run takes about 15 minutes on 2 cores; "
                    "set ARENA_FULL_MATRIX=1 to compare the committed findings.md with one")
def test_findings_matches_a_fresh_full_run(tmp_path, store_servers):
    missing = [e.name for e in REGISTRY.values() if not e.available]
    if missing:
        pytest.skip(f"not installed here, so a fresh run cannot reproduce findings.md: {', '.join(missing)}")
    args = DEFAULT_COMMAND.split()[1:]
    r = arena_cli(*args, cwd=tmp_path, timeout=3600)
    keep = os.environ.get("ARENA_KEEP_MATRIX")  # a folder to keep the fresh run in (to compare item by item)
    if keep:
        import shutil

        shutil.copytree(tmp_path, keep, dirs_exist_ok=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert normalise((tmp_path / "findings.md").read_text()) == normalise(FINDINGS.read_text())
