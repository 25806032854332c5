"""The site in headless Chromium (Playwright driving Debian's package): the scorecard, the matrix, a framework's page
and a run's page at 1400 px and 480 px, a cell opening its evidence, a trace fetched when clicked, and model text
that stays text.

Side effect: where Chromium is missing, the `chromium` fixture (tests/report/conftest.py) installs Debian's package
with apt-get (as root); with ARENA_NO_APT_INSTALL=1, or where it cannot, these tests are skipped and say why.
"""

from __future__ import annotations

import json
import re

import pytest

from arena.report.site.pages import site_css
from arena.streaming import is_streamed

from tests.report.evil import FINAL
from tests.report.pngread import colour_counts, hex_rgb

from .conftest import serve_folder

STATUS_COLOURS = {s: hex_rgb(v) for s, v in
                  re.findall(r"--(pass|partial|fail|na|notrun|info):(#[0-9a-f]{6})", site_css().decode())}
NO_OVERFLOW = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"


def rgb(colour: tuple[int, int, int]) -> str:
    return "rgb({}, {}, {})".format(*colour)


@pytest.fixture(scope="module")
def served(subset_report):
    yield from serve_folder(subset_report["out"] / "site")


@pytest.fixture(scope="module")
def served_markup(markup_site):
    yield from serve_folder(markup_site)


def test_status_colours_are_distinct():
    assert set(STATUS_COLOURS) == {"pass", "partial", "fail", "na", "notrun", "info"}
    assert len(set(STATUS_COLOURS.values())) == 6


@pytest.mark.parametrize("width", [1400, 480])
def test_the_scorecard_matrix_framework_and_run_pages_render_at_a_wide_and_a_narrow_width(
        browser, served, subset_report, tmp_path, width):
    data = subset_report["json"]
    page = browser.new_page(viewport={"width": width, "height": 1000})

    page.goto(served)  # the index
    assert page.title() == "arena: scorecard"
    plain = [r["adapter"] for r in data["rows"] if "@" not in r["adapter"] and not is_streamed(r["adapter"])]
    assert page.locator("#scorecard tbody tr").count() == len(plain)
    for cell in page.locator("#scorecard tbody td[class^='s-']").all():
        status = cell.get_attribute("class").split()[0][2:]
        assert cell.evaluate("e => getComputedStyle(e).backgroundColor") == rgb(STATUS_COLOURS[status])
        assert cell.locator("a").get_attribute("href").startswith("framework/")
    assert page.evaluate(NO_OVERFLOW), "the index is wider than the window"

    page.goto(served + "matrix.html")
    assert page.locator("#matrix-table tbody tr").count() == len(data["rows"])
    assert page.evaluate(NO_OVERFLOW), "the matrix widens the page instead of scrolling in its box"
    if width > 1000:  # in the narrow window most columns are scrolled out of view
        png = tmp_path / "matrix.png"
        page.screenshot(path=str(png))
        total, counts = colour_counts(png)
        statuses = {c["status"] for row in data["rows"] for c in row["cells"].values()}
        for status in statuses & {"pass", "fail", "info"}:  # the first columns hold these
            assert counts[STATUS_COLOURS[status]] > 3000, f"no {status} cells visible"

    page.goto(served + "framework/langgraph.html")
    assert page.title() == "langgraph: arena"
    assert page.locator("#short-langgraph-sibling_held li.bad").count() >= 1
    assert page.locator("#matrix-table td.adapter").all_inner_texts() == [
        r["adapter"] for r in data["rows"] if r["framework"] == "langgraph"]
    assert page.evaluate(NO_OVERFLOW), "the framework page is wider than the window"

    # a cell of the matrix opens its evidence on its run's page; an item there opens its trace when clicked
    page.goto(served + "matrix.html")
    page.locator("#matrix-table a[href*='-langgraph-scripted-eager-'][href$='#cell-sibling_held']").click()
    page.wait_for_url(re.compile(r"/run/.*#cell-sibling_held$"))
    evidence = page.locator("#cell-sibling_held li.bad a")
    assert evidence.count() >= 1
    evidence.first.click()
    item = page.locator("section.item:target")
    assert item.count() == 1
    item.locator("button.trace").click()
    rows = item.locator("table.trace tbody tr")
    rows.first.wait_for()
    src = item.locator("button.trace").get_attribute("data-src")
    events = json.loads(page.evaluate("src => fetch(src).then(r => r.text())", src))
    assert rows.count() == len(events) and "suspended" in item.locator("table.trace").inner_text()
    assert page.evaluate(NO_OVERFLOW), "the run page (its trace open) is wider than the window"
    item.locator("button.trace").click()  # and closes it again
    assert item.locator("div.trace").is_hidden()
    page.close()


def test_model_text_is_inert_in_the_browser(browser, served_markup, markup_site):
    page = browser.new_page()
    (run_page,) = (markup_site / "run").glob("*.html")
    page.goto(served_markup + f"run/{run_page.name}")
    title = page.title()
    for button in page.locator("button.trace").all():
        button.click()
    page.locator("table.trace").nth(1).wait_for()
    page.wait_for_timeout(300)  # an injected <img onerror> would have fired by now
    assert page.title() == title and "PWNED" not in title
    assert page.evaluate("document.body.hasAttribute('data-pwned')") is False
    assert page.locator("script").count() == 1 and page.locator("img").count() == 0
    shown = page.locator("table.trace td", has_text="<script>document.title='PWNED'</script><b>bold</b>")
    assert shown.count() >= 1  # the model's answer, shown as the text it is
    page.close()


def test_the_inertness_check_would_catch_unescaped_text(browser):
    """Control: the same payload written raw into a page does run, and the checks above see it."""
    page = browser.new_page()
    page.set_content(f"<!doctype html><html><head><title>t</title></head><body>{FINAL}</body></html>")
    page.wait_for_timeout(300)
    assert page.title() == "PWNED" and page.evaluate("document.body.hasAttribute('data-pwned')")
    page.close()


def test_a_trace_opened_from_a_file_says_it_needs_a_server(browser, markup_site):
    page = browser.new_page()
    (run_page,) = (markup_site / "run").glob("*.html")
    page.goto(run_page.as_uri())
    page.locator("button.trace").first.click()
    box = page.locator("div.trace").first
    box.wait_for()
    assert "serve the site over HTTP" in box.inner_text()
    page.close()
