"""The feature-matrix report: compute a matrix from run directories, write it as Markdown, HTML and JSON.

`arena matrix` (arena/cli.py) runs or collects the runs; this package only reads run directories.
"""

from __future__ import annotations

import json
from pathlib import Path

from arena.report.matrix import Matrix, collect_runs, compute_matrix


def write_reports(m: Matrix, out: Path, findings: Path | None = None, evidence: str | None = None) -> dict[str, Path]:
    """Write matrix.md, matrix.json and the site (`out/site/`: scorecard, matrix, a page per framework and per run)
    into `out` (and findings.md if asked); return their paths."""
    from arena.report.digest import render_digest
    from arena.report.findings import render_details
    from arena.report.verdicts import write_verdicts
    from arena.report.render_md import render_matrix_md
    from arena.report.site import build_site

    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "matrix.md", "json": out / "matrix.json"}
    paths["md"].write_text(render_matrix_md(m, doc_dir=out))
    paths["site"] = build_site(m, out / "site")  # the pages people read; traces fetched when opened
    paths["json"].write_text(json.dumps(m.to_json(), indent=2, ensure_ascii=False) + "\n")
    paths["details"] = out / "details.md"  # the long form of the findings: every arena's own facts
    paths["details"].write_text(render_details(m, doc_dir=out))
    write_verdicts(m.runs, out / "verdicts")  # the part of the results that goes into git, one file per arena
    paths["verdicts"] = out / "verdicts"
    if findings is not None:
        findings.parent.mkdir(parents=True, exist_ok=True)
        findings.write_text(render_digest(m, doc_dir=findings.parent, evidence=evidence))
        paths["findings"] = findings
    return paths


__all__ = ["Matrix", "collect_runs", "compute_matrix", "write_reports"]
