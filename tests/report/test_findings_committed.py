"""The committed results: the verdict record (reports/verdicts/) and the digest (findings.md).

- Fast: both are what the generator writes (format, order, size, the regeneration command at the top), and when
  the evidence is unpacked in this checkout (reports/runs/, from the evidence archive), regenerating from it gives
  both byte for byte.
- From a fresh full run (slow: every arena × adapter × profile, the older releases of the default version set, the
  streamed rows and the store and upgrade cells, about 15 minutes on two cores with the command's `--jobs 3`, once
  the releases' environments are built): opt in with ARENA_FULL_MATRIX=1 (.ci/run does). It runs the command written
  at the top of findings.md in a scratch folder, compares its verdict record with the committed one — every run's
  status, every item's status and error, every check's verdict and reason — naming each cell and item that differs,
  and compares the digest (ignoring only the run directories' timestamps and random suffixes in its links). With
  ARENA_EVIDENCE_OUT set, the run's evidence archive is copied there (CI uploads it).
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from arena.catalog import builtin_adapters
from arena.report.archive import cell_name
from arena.report.digest import DEFAULT_COMMAND, render_digest
from arena.report.matrix import collect_runs, compute_matrix
from arena.report.verdicts import compare, dumps, read_verdicts, records

from .conftest import REPO, arena_cli

REGISTRY = builtin_adapters()
FINDINGS = REPO / "findings.md"
VERDICTS = REPO / "reports" / "verdicts"
EVIDENCE = REPO / "reports" / "runs"  # present only once an evidence archive is unpacked here
DIGEST_LIMIT = 60_000  # bytes: the page a reader reads in five minutes


def normalise(text: str) -> str:
    """Run directory names carry a start time and a random suffix, and the evidence archive is named by its content
    (times and ids in its traces); nothing else may differ."""
    text = re.sub(r"evidence-[0-9a-f]{16}", "evidence-HASH", text)
    text = re.sub(r"\d{8}-\d{6}-", "STAMP-", text)
    return re.sub(r"-[0-9a-f]{4}(?=[/)\]])", "-ID", text)


def test_findings_is_the_digest_with_its_regeneration_command():
    text = FINDINGS.read_text()
    assert text.startswith("# Findings\n")
    assert f"uv run {DEFAULT_COMMAND}\n" in text
    assert len(text.encode()) <= DIGEST_LIMIT, f"findings.md is {len(text.encode())} bytes"
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings[:3] == ["Scorecard", "By framework", "Not measured, and why"]
    scorecard = text.split("## Scorecard\n", 1)[1].split("\n## ", 1)[0]
    header = next(line for line in scorecard.splitlines() if line.startswith("| ")).strip("| ").split(" | ")
    assert header[:2] == ["adapter", "framework"] and len(header) <= 12


def test_the_verdict_record_is_what_the_generator_writes():
    committed = read_verdicts(VERDICTS)
    assert "human_in_the_loop" in committed and "crash_recovery@postgres" in committed
    for arena, record in committed.items():
        assert (VERDICTS / f"{arena}.json").read_text() == dumps(record), f"{arena}: not in the generator's form"
        text = dumps(record)
        assert not re.search(r"\d{8}-\d{6}-|/tmp/|127\.0\.0\.1:\d", text), f"{arena}: holds a run-made value"


def test_the_committed_results_are_what_the_evidence_gives():
    if not EVIDENCE.is_dir() or not any(EVIDENCE.iterdir()):
        pytest.skip("the evidence is not unpacked in this checkout (uv run arena matrix --runs evidence-<hash>.tar.gz "
                    "--out reports)")
    runs = collect_runs([EVIDENCE])
    assert not compare(read_verdicts(VERDICTS), records(runs))
    cited = set(re.findall(r"\]\((reports/runs/[^/)]+)/", FINDINGS.read_text()))
    assert cited and {f"reports/runs/{cell_name(r.path)}" for r in runs} >= cited  # the archive's names: by cell
    evidence = re.search(r"`(evidence-[0-9a-f]{16}\.tar\.gz)`", FINDINGS.read_text())
    assert render_digest(compute_matrix(runs), doc_dir=REPO, evidence=evidence and evidence.group(1)) == FINDINGS.read_text()


@pytest.mark.skipif(os.environ.get("ARENA_FULL_MATRIX") != "1", reason="a full fresh matrix run takes about 15 minutes on 2 cores; "
                    "set ARENA_FULL_MATRIX=1 to compare the committed verdict record and findings.md with one")
def test_a_fresh_full_run_gives_the_committed_verdicts(tmp_path, store_servers):
    missing = [e.name for e in REGISTRY.values() if not e.available]
    if missing:
        pytest.skip(f"not installed here, so a fresh run cannot reproduce the verdicts: {', '.join(missing)}")
    args = DEFAULT_COMMAND.split()[1:]
    r = arena_cli(*args, cwd=tmp_path, timeout=3600)
    keep = os.environ.get("ARENA_KEEP_MATRIX")  # a folder to keep the fresh run in (to look at it item by item)
    if keep:
        shutil.copytree(tmp_path, keep, dirs_exist_ok=True)
    publish = os.environ.get("ARENA_EVIDENCE_OUT")  # CI uploads the evidence archive from here
    if publish:
        os.makedirs(publish, exist_ok=True)
        for archive in (tmp_path / "evidence").glob("evidence-*.tar.gz"):
            shutil.copy2(archive, publish)
    # what went wrong first (a failed job says why, long before the progress that ends stderr), then the end
    said = [line for line in r.stderr.splitlines() if "ended with exit code" in line or "error" in line.lower()]
    assert r.returncode == 0, "\n".join(said[:40]) + "\n...\n" + r.stderr[-2000:]
    differences = compare(read_verdicts(VERDICTS), read_verdicts(tmp_path / "reports" / "verdicts"))
    assert not differences, (f"{len(differences)} differences between the committed verdict record and a fresh run:\n"
                             + "\n".join(differences[:60]))
    assert normalise((tmp_path / "findings.md").read_text()) == normalise(FINDINGS.read_text())
    matrix_page = tmp_path / "reports" / "site" / "matrix.html"  # the site's matrix of every cell: no trace inlined
    assert matrix_page.stat().st_size < 2_000_000, f"the site's matrix page is {matrix_page.stat().st_size} bytes"
