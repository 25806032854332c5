"""The feature-matrix report: compute a matrix from run directories, write it as Markdown, HTML and JSON.

`arena matrix` (arena/cli.py) runs or collects the runs; this package only reads run directories.
"""

from __future__ import annotations

import json
from pathlib import Path

from arena.report.matrix import Matrix, collect_runs, compute_matrix


def write_reports(m: Matrix, out: Path, findings: Path | None = None) -> dict[str, Path]:
    """Write matrix.md, matrix.html (and a page per framework it links to) and matrix.json into `out` (and
    findings.md if asked); return their paths."""
    from arena.report.findings import render_findings
    from arena.report.render_html import framework_page, frameworks, render_framework_html, render_matrix_html
    from arena.report.render_md import render_matrix_md

    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "matrix.md", "html": out / "matrix.html", "json": out / "matrix.json"}
    paths["md"].write_text(render_matrix_md(m, doc_dir=out))
    paths["html"].write_text(render_matrix_html(m))
    for framework in frameworks(m):  # a page per framework, beside the matrix that links to it
        paths[f"framework:{framework}"] = out / framework_page(framework)
        paths[f"framework:{framework}"].write_text(render_framework_html(m, framework))
    paths["json"].write_text(json.dumps(m.to_json(), indent=2, ensure_ascii=False) + "\n")
    if findings is not None:
        findings.parent.mkdir(parents=True, exist_ok=True)
        findings.write_text(render_findings(m, doc_dir=findings.parent))
        paths["findings"] = findings
    return paths


__all__ = ["Matrix", "collect_runs", "compute_matrix", "write_reports"]
