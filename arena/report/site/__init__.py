"""The static site: a scorecard, the matrix grouped by family, a page per framework and per run, traces on request.

`build_site` writes every page of a matrix into a folder (`arena site`, and `arena matrix` into `reports/site/`);
`arena view` (arena/report/site/view.py) serves the same pages, rendered on request from run directories it re-reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from arena.report.matrix import Matrix
from arena.report.site.pages import Site

MARKER = ".arena-site"  # in a folder this module built: its old pages may be cleared before a new build


def build_site(m: Matrix, out: Path) -> Path:
    """Write the site of this matrix into `out` and return its index page. A folder built before is cleared of the
    pages and traces of runs it no longer has; a folder of anything else is only added to."""
    site = Site(m)
    if (out / MARKER).is_file():
        for sub in ("framework", "run", "trace"):
            shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("built by `arena site` / `arena matrix`: its pages are rebuilt in place\n")
    made: set[Path] = set()
    for path in site.paths():
        page = site.render(path)
        assert page is not None, path  # every path the site lists, it renders
        target = out / path
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        target.write_bytes(page[0])
    return out / "index.html"


__all__ = ["Site", "build_site"]
