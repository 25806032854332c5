"""The static site: its pages from hand-made runs (escaping, links to evidence, a framework's page) and from real
runs (`arena matrix` writes it into reports/site; `arena site` builds it): every page, every link resolves, the
matrix page stays small (traces are separate files), and model text stays inert."""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from arena.report import write_reports
from arena.report.matrix import compute_matrix
from arena.report.site import Site, build_site
from arena.report.site.pages import anchor

from tests.report.evil import FINAL, MECHANISM, SUMMARY
from tests.report.helpers import run
from tests.report.test_render import sample_runs

from .conftest import arena_cli

MATRIX_LIMIT = 2_000_000  # bytes: the matrix page of the full matrix (516 runs, 38 rows × 52 columns) stays under it


def pages(site: Site) -> dict[str, str]:
    """Every HTML page of a site, rendered in memory."""
    out = {}
    for path in site.paths():
        if path.endswith(".html"):
            found = site.render(path)
            assert found is not None, path
            out[path] = found[0].decode()
    return out


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []  # href and data-src values

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.append(value)
            if name in ("href", "src", "data-src") and value is not None:
                self.links.append(value)


def parse(text: str) -> Links:
    p = Links()
    p.feed(text)
    return p


# -- hand-made runs -----------------------------------------------------------------------------


def test_untrusted_text_is_escaped_on_every_page():
    """Model text, tool arguments (in the traces) and adapter metadata show as text: no element of theirs is made."""
    site = Site(compute_matrix(sample_runs()))
    texts = pages(site)
    for path, page in texts.items():
        assert "<script>document.title" not in page and "<img src=" not in page and "<b>bold</b>" not in page, path
        assert SUMMARY not in page and FINAL not in page, path
        assert page.count("<script") == (1 if path.startswith("run/") else 0), path  # the run page's own only
    run_page = next(p for path, p in texts.items() if "evil_adapter" in path and path.startswith("run/"))
    assert "&lt;script&gt;document.title=&#39;PWNED-META&#39;&lt;/script&gt;" in run_page  # the mechanism, as text
    traces = [json.loads(site.render(p)[0]) for p in site.paths() if p.startswith("trace/")]
    details = "\n".join(e["detail"] for t in traces for e in t)
    assert FINAL in details and json.dumps(SUMMARY)[1:-1] in details  # kept whole as data: the page sets it as text (test_browser_site)


def test_control_characters_show_as_replacement_characters():
    r = run("human_in_the_loop", "vanilla", "scripted\x1b[2J", [], framework="fw\x07")
    site = Site(compute_matrix([r]))
    for path, page in pages(site).items():
        assert "\x1b" not in page and "\x07" not in page, path
    assert "scripted\ufffd[2J" in site.render(f"run/{next(iter(site.runs))}.html")[0].decode()


def test_pages_are_self_contained():
    for path, page in pages(Site(compute_matrix(sample_runs()))).items():
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.IGNORECASE), path
        assert "@import" not in page and "url(" not in page, path
        assert re.findall(r"<link [^>]*>", page) == [f'<link rel="stylesheet" href="{"../" if "/" in path else ""}site.css">']


def test_each_matrix_cell_links_to_its_evidence_on_the_page_of_its_run():
    site = Site(compute_matrix(sample_runs()))
    matrix = site.render("matrix.html")[0].decode()
    eager = next(s for s, r in site.runs.items() if r.run.path.name == "human_in_the_loop-langgraph-scripted-eager")
    assert f'<td class="s-fail" title="hitl-01: ' in matrix
    assert f'<a href="run/{eager}.html#cell-sibling_held">0/2</a>' in matrix
    page = site.render(f"run/{eager}.html")[0].decode()
    section = page.split('id="cell-sibling_held"')[1].split('<div class="evidence"')[0]
    assert re.findall(r'<li class="(\w+)"><a href="#(item-[^"]+)"><code>(hitl-\d+)</code></a>', section) == [
        ("bad", "item-hitl-01", "hitl-01"), ("bad", "item-hitl-02", "hitl-02")]
    assert 'id="item-hitl-01"' in page and f'data-src="../trace/{eager}/hitl-01.json"' in page
    cells = re.findall(r'<td class="s-(\w+)[^"]*"[^>]*>(<a href="([^"]+)")?', matrix.split("<tbody>")[1])
    assert cells and all(bool(href) == (status != "notrun") for status, _, href in cells)  # every cell run links
    assert {"fail", "pass", "notrun", "info"} <= {status for status, _, _ in cells}


def test_the_matrix_groups_its_columns_by_family():
    matrix = Site(compute_matrix(sample_runs())).render("matrix.html")[0].decode()
    head = matrix.split('<tr class="groups">')[1].split("</tr>")[0]
    groups = re.findall(r'<th class="group first" colspan="(\d+)" title="[^"]*">([^<]+)</th>', head)
    assert [g for _, g in groups][:3] == ["pause held", "decision routed", "resume safety"]
    assert sum(int(n) for n, _ in groups) == len(compute_matrix(sample_runs()).columns)
    assert '<a class="fw" href="framework/langgraph-fw.html"' in matrix


def test_a_framework_page_shows_its_rows_and_each_cell_short_of_its_pass_with_items_and_the_others():
    site = Site(compute_matrix(sample_runs()))
    page = site.render("framework/langgraph-fw.html")[0].decode()
    table = page.split('id="matrix-table"')[1].split("</table>")[0]
    assert table.count('<td class="adapter">') == 1 and ">langgraph</a></td>" in table
    short = page.split('id="short-langgraph-sibling_held"')[1].split('<div class="evidence"')[0]
    assert "sibling tool held: 0/2" in short and short.count('<li class="bad">') == 2
    assert re.search(r'<a href="../run/[^"]+scripted-eager.html#item-hitl-01"><code>hitl-01</code></a>', short)
    assert "elsewhere: " in short and ">vanilla 2/2</span>" in short and "evil|adapter" in short
    assert 'id="scorecard"' in page  # its plain adapter's scorecard row
    assert "Every cell of these rows is at its pass" in site.render("framework/vanilla-fw.html")[0].decode()


def test_every_page_gives_each_id_once_and_every_in_site_link_resolves():
    site = Site(compute_matrix(sample_runs()))
    texts = pages(site)
    ids = {path: parse(text).ids for path, text in texts.items()}
    files = set(site.paths())
    for path, text in texts.items():
        assert [k for k, n in Counter(ids[path]).items() if n > 1] == [], path
        for link in parse(text).links:
            target, _, fragment = link.partition("#")
            resolved = str(Path(path).parent / target) if target else path
            resolved = re.sub(r"[^/]+/\.\./", "", resolved).removeprefix("./")
            assert resolved in files, (path, link)
            if fragment:
                assert fragment in ids[resolved], (path, link)


def test_a_fault_count_marks_the_items_where_the_fault_happened():
    from tests.report.test_matrix import _prepared

    site = Site(compute_matrix([run("flight_booking", "a", "careful", [_prepared("f1", 2), _prepared("f2", 1)])]))
    page = site.render(f"run/{next(iter(site.runs))}.html")[0].decode()
    section = page.split('id="cell-body_reexecuted"')[1].split('<div class="evidence"')[0]
    marked = re.findall(r'<li class="(\w+)"><a href="#item-(f\d)"><code>f\d</code></a> — purchase_hold\.prepare ran', section)
    assert marked == [("bad", "f1"), ("ok", "f2")]


def test_write_reports_builds_the_site_and_no_giant_page(tmp_path):
    paths = write_reports(compute_matrix(sample_runs()), tmp_path / "out", tmp_path / "findings.md")
    assert paths["site"] == tmp_path / "out" / "site" / "index.html" and paths["site"].is_file()
    assert not (tmp_path / "out" / "matrix.html").exists() and not list((tmp_path / "out").glob("framework-*.html"))
    assert {"vanilla-fw.html", "langgraph-fw.html"} <= {p.name for p in (tmp_path / "out" / "site" / "framework").iterdir()}


def test_a_rebuild_drops_the_pages_of_runs_it_no_longer_has(tmp_path):
    runs = sample_runs()
    build_site(compute_matrix(runs), tmp_path / "site")
    build_site(compute_matrix(runs[:2]), tmp_path / "site")
    assert len(list((tmp_path / "site" / "run").iterdir())) == 2
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "run").mkdir()
    (tmp_path / "mine" / "run" / "keep.txt").write_text("not the site's")
    build_site(compute_matrix(runs[:1]), tmp_path / "mine")  # a folder it did not build: only added to
    assert (tmp_path / "mine" / "run" / "keep.txt").is_file()


def test_repeated_runs_are_shown_on_the_matrix_page():
    from tests.report.test_repeated import repeated_run

    scripted = repeated_run()
    scripted.meta["model"] = "scripted"  # read by the matrix's cells: each shows its figures over every epoch
    matrix = Site(compute_matrix([scripted])).render("matrix.html")[0].decode()
    assert "<h2>Repeated runs</h2>" in matrix and 'id="repeated-table"' in matrix and "66.7%" in matrix
    assert "<small>pass@1 66.7%, pass^3 50.0%, 95% CI " in matrix
    single = Site(compute_matrix([run("human_in_the_loop", "vanilla", "scripted", [])])).render("matrix.html")[0]
    assert b"Repeated runs" not in single


# -- real runs ----------------------------------------------------------------------------------


def test_arena_matrix_writes_the_site_with_a_page_per_framework_and_run_and_a_file_per_trace(subset_report):
    site, data = subset_report["out"] / "site", subset_report["json"]
    assert not (subset_report["out"] / "matrix.html").exists()
    for name in ("index.html", "matrix.html", "runs.html", "site.css"):
        assert (site / name).is_file(), name
    frameworks = {row["framework"] for row in data["rows"]}
    assert len(list((site / "framework").glob("*.html"))) == len(frameworks)
    assert len(list((site / "run").glob("*.html"))) == len(data["runs"])
    for r in data["runs"]:
        name = Path(r["path"]).name
        assert (site / "run" / f"{name}.html").is_file()
        traces = list((site / "trace" / name).glob("*.json"))
        assert len(traces) == r["items"]
        events = json.loads(traces[0].read_text())
        assert events and {"seq", "leg", "type", "tool", "detail"} == set(events[0])


def test_the_matrix_page_inlines_no_trace_and_grows_with_cells_not_items(subset_report):
    """The full matrix (38 rows × 52 columns) measured 383 KB (bench/README.md); here the bound is per cell."""
    site, data = subset_report["out"] / "site", subset_report["json"]
    page = (site / "matrix.html").read_text()
    cells = len(data["rows"]) * len(data["columns"])
    assert len(page.encode()) < MATRIX_LIMIT * cells / (38 * 52) + 60_000
    assert "sent 2 message(s)" not in page and "search_rooms{" not in page  # no trace event's detail
    assert page.count('<td class="s-') == cells


def test_every_link_of_the_built_site_resolves(subset_report):
    site = subset_report["out"] / "site"
    ids: dict[Path, set[str]] = {}
    checked = 0
    for page in sorted(site.rglob("*.html")):
        for link in parse(page.read_text()).links:
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, (page, link)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            assert target.is_file() and site.resolve() in target.parents, (page, link)
            if parts.fragment:
                if target not in ids:
                    ids[target] = set(parse(target.read_text()).ids)
                assert parts.fragment in ids[target], (page, link)
            checked += 1
    assert checked > 500


def test_model_text_from_a_real_run_is_inert_in_every_page(markup_site):
    texts = {p: p.read_text() for p in markup_site.rglob("*.html")}
    assert len(texts) >= 5
    for path, page in texts.items():
        assert "<script>document.title" not in page and "<img src=" not in page and FINAL not in page, path
        assert "\x1b" not in page and "\x07" not in page, path
        assert page.count("<script") == (1 if path.parent.name == "run" else 0), path
    (run_page,) = [p for p in texts if p.parent.name == "run"]
    assert "&lt;script&gt;document.title=&#39;PWNED-META&#39;&lt;/script&gt;" in texts[run_page]
    assert "\ufffd&lt;b&gt;bell&lt;/b&gt;" in texts[run_page] and "scripted\ufffd[31m" in texts[run_page]
    for trace in markup_site.rglob("*.json"):
        assert "\x1b" not in trace.read_text() and "\x07" not in trace.read_text()


def test_arena_site_reads_an_evidence_archive_and_says_what_is_wrong_in_one_line(subset_report, tmp_path):
    from arena.report.archive import cell_name, pack

    runs = sorted(p for p in (subset_report["out"] / "runs").iterdir() if p.is_dir())[:3]
    archive = pack(runs, tmp_path / "evidence")
    r = arena_cli("site", "--runs", str(archive), "--out", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    assert {p.stem for p in (tmp_path / "site" / "run").iterdir()} == {cell_name(p) for p in runs}  # the archive's names
    r = arena_cli("site", "--runs", str(tmp_path / "nope"), "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and r.stderr.startswith("arena: error: ") and "Traceback" not in r.stderr
    (tmp_path / "empty").mkdir()
    r = arena_cli("site", "--runs", str(tmp_path / "empty"), "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "no run directories" in r.stderr and len(r.stderr.strip().splitlines()) == 1
