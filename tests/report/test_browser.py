"""The HTML report in headless Chromium: it renders the colour-coded table, and model text stays inert.

Side effect: where Chromium is missing, the `chromium` fixture (conftest.py) installs Debian's package with
apt-get (as root; `apt-get update` first if needed). With ARENA_NO_APT_INSTALL=1, or where it cannot install,
these tests are skipped, and the skip says why.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from arena.report.render_html import CSS

from .conftest import arena_cli, chromium_cmd
from .evil import FINAL
from .pngread import colour_counts, hex_rgb

STATUS_COLOURS = {s: hex_rgb(v) for s, v in re.findall(r"--(pass|partial|fail|na|notrun|info):(#[0-9a-f]{6})", CSS)}


def screenshot(exe: str, page: Path, png: Path, profile: Path) -> None:
    r = subprocess.run(chromium_cmd(exe, profile, f"--screenshot={png}", page.as_uri()),
                       capture_output=True, text=True, timeout=120)
    assert png.is_file() and png.stat().st_size > 0, r.stderr[-2000:]


def dump_dom(exe: str, page: Path, profile: Path) -> str:
    r = subprocess.run(chromium_cmd(exe, profile, "--virtual-time-budget=3000", "--dump-dom", page.as_uri()),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "<html" in r.stdout, r.stderr[-2000:]
    return r.stdout


def test_status_colours_are_distinct():
    assert set(STATUS_COLOURS) == {"pass", "partial", "fail", "na", "notrun", "info"}
    assert len(set(STATUS_COLOURS.values())) == 6


def test_report_renders_as_a_colour_coded_table(subset_report, chromium, tmp_path):
    page = subset_report["out"] / "matrix.html"
    png = tmp_path / "matrix.png"
    screenshot(chromium, page, png, tmp_path / "profile")
    total, counts = colour_counts(png)
    white = counts[(255, 255, 255)]
    assert (total - white) / total > 0.15, "the page is (nearly) blank"
    # every status the matrix has shows as its cell colour over at least a cell's area (a cell is about
    # 140x33 px; the legend's swatch of each colour is about 50x20 px), and no other status colour does
    statuses = {c["status"] for row in subset_report["json"]["rows"] for c in row["cells"].values()}
    assert {"pass", "info", "notrun"} <= statuses
    for status in statuses:
        assert counts[STATUS_COLOURS[status]] > 3000, f"no {status} cells visible ({STATUS_COLOURS[status]})"
    for status in set(STATUS_COLOURS) - statuses:
        assert counts[STATUS_COLOURS[status]] < 1500, f"{status} colour shown but no cell has that status"

    dom = dump_dom(chromium, page, tmp_path / "profile")
    table = dom.split('id="matrix-table"')[1].split("</table>")[0]
    assert table.count("<tr>") == 1 + len(subset_report["json"]["rows"])
    for row in subset_report["json"]["rows"]:
        assert f">{row['adapter']}</a></td>" in table
    assert "<svg" in dom and 'id="pass-chart"' in dom


def test_opening_a_cell_link_reveals_its_evidence(subset_report, chromium, tmp_path):
    page = subset_report["out"] / "matrix.html"
    target = "ev-langgraph-sibling_held"
    r = subprocess.run(chromium_cmd(chromium, tmp_path / "p", "--virtual-time-budget=3000", "--dump-dom",
                                    page.as_uri() + "#" + target), capture_output=True, text=True, timeout=120)
    assert re.search(r'<details class="adapter" id="adapter-langgraph" open=""', r.stdout)
    assert not re.search(r'<details class="adapter" id="adapter-vanilla" open=""', r.stdout)


@pytest.fixture(scope="module")
def markup_report(tmp_path_factory):
    """A report from an adapter whose final answers, tool arguments and metadata carry markup."""
    out = tmp_path_factory.mktemp("markup")
    r = arena_cli("matrix", "-a", "tests.report.evil:MarkupAdapter", "--arena", "human_in_the_loop", "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    return out / "matrix.html"


def test_model_text_is_escaped_in_the_page_source(markup_report):
    page = markup_report.read_text()
    assert "&lt;script&gt;document.title=&#x27;PWNED&#x27;&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in page
    assert "<script>document.title" not in page and "<img src=" not in page and FINAL not in page
    assert page.count("<script") == 1


def _pwned(dom: str) -> list[str]:
    signs = []
    if "PWNED" in (re.search(r"<title>(.*?)</title>", dom, re.DOTALL) or [None, ""])[1]:
        signs.append("title changed")
    if re.search(r"<body[^>]*data-pwned", dom):
        signs.append("body attribute set")
    if re.search(r"<script>document\.title", dom) or re.search(r"<img src=\"?[xy]", dom):
        signs.append("injected element in the DOM")
    return signs


def test_model_text_is_inert_in_the_browser(markup_report, chromium, tmp_path):
    dom = dump_dom(chromium, markup_report, tmp_path / "profile")
    assert _pwned(dom) == []
    assert "<title>arena feature matrix</title>" in dom
    assert "&lt;script&gt;document.title='PWNED'&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in dom  # shown as text
    assert len(re.findall(r"<script[\s>]", dom)) == 1


def test_the_inertness_check_would_catch_unescaped_text(chromium, tmp_path):
    """Control: the same payload written raw into a page does run, and the check above sees it."""
    page = tmp_path / "raw.html"
    page.write_text(f"<!doctype html><html><head><title>arena feature matrix</title></head><body>{FINAL}</body></html>")
    assert set(_pwned(dump_dom(chromium, page, tmp_path / "profile"))) >= {"title changed", "body attribute set"}


@pytest.mark.parametrize("width", [1400, 480])
def test_a_framework_page_renders_its_cells_in_a_wide_and_a_narrow_window(subset_report, chromium, tmp_path, width):
    """langgraph's page, linked from the matrix: its colour-coded rows (the sibling cell it fails included) and
    the items short of a pass; in a narrow window the table scrolls inside the page instead of widening it."""
    out = subset_report["out"]
    assert 'href="framework-langgraph.html"' in (out / "matrix.html").read_text()
    page = out / "framework-langgraph.html"
    png = tmp_path / "page.png"
    r = subprocess.run(chromium_cmd(chromium, tmp_path / "profile", f"--window-size={width},1000", f"--screenshot={png}",
                                    page.as_uri()), capture_output=True, text=True, timeout=120)
    assert png.is_file(), r.stderr[-2000:]
    total, counts = colour_counts(png)
    assert (total - counts[(255, 255, 255)]) / total > 0.15, "the page is (nearly) blank"
    assert counts[STATUS_COLOURS["pass"]] > 3000
    if width > 1000:  # in the narrow window that column is scrolled out of view
        assert counts[STATUS_COLOURS["fail"]] > 3000  # sibling tool held: 0/12
    dom = dump_dom(chromium, page, tmp_path / "profile")
    assert "<title>langgraph: arena</title>" in dom and 'id="short-langgraph-sibling_held"' in dom
    assert '<div class="scroll"><table class="matrix" id="matrix-table">' in dom


def test_every_frameworks_page_renders_its_rows(subset_report, chromium, tmp_path):
    """A page for each framework of the report, each linked from the matrix, showing that framework's rows."""
    out = subset_report["out"]
    by_framework: dict[str, list[str]] = {}
    for row in subset_report["json"]["rows"]:
        by_framework.setdefault(row["framework"], []).append(row["adapter"])
    matrix = (out / "matrix.html").read_text()
    for framework, adapters in by_framework.items():
        name = "framework-" + re.sub(r"[^A-Za-z0-9_]+", "_", framework) + ".html"
        assert f'href="{name}"' in matrix
        png = tmp_path / f"{name}.png"
        screenshot(chromium, out / name, png, tmp_path / "profile")
        total, counts = colour_counts(png)
        assert (total - counts[(255, 255, 255)]) / total > 0.1, f"{name} is (nearly) blank"
        table = dump_dom(chromium, out / name, tmp_path / "profile").split('id="matrix-table"')[1].split("</table>")[0]
        assert sorted(re.findall(r'<td class="adapter"><a href="matrix.html#adapter-[^"]+">([^<]+)</a></td>', table)) == sorted(adapters)
