"""The site's tests share tests/report's fixtures: the `arena matrix` subset (its site is reports/site) and Chromium."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.report.conftest import arena_cli, chromium, subset_report  # noqa: F401  (fixtures, shared)


@pytest.fixture(scope="session")
def markup_site(tmp_path_factory) -> Path:
    """The site of a run whose model text, tool arguments and adapter metadata carry markup, and whose run directory
    was then given control characters (a terminal escape, a bell) in its model name and a check's reason."""
    import json

    cwd = tmp_path_factory.mktemp("markup")
    r = arena_cli("run", "human_in_the_loop", "-a", "tests.report.evil:MarkupAdapter", "--item", "hitl-01",
                  "--item", "hitl-02", "--out", "runs", cwd=cwd)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    (run,) = [p for p in (cwd / "runs").iterdir() if p.is_dir()]
    meta = json.loads((run / "meta.json").read_text())
    meta["model"] += "\x1b[31m"
    (run / "meta.json").write_text(json.dumps(meta))
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    lines[0]["checks"][0]["reason"] += "\x07<b>bell</b>"
    (run / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = arena_cli("site", "--runs", "runs", "--out", "site", cwd=cwd)
    assert r.returncode == 0, r.stderr[-3000:]
    return cwd / "site"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve_folder(folder: Path) -> Iterator[str]:
    """A static HTTP server over a folder (as any static host would serve the site), on a free port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(chromium):
    """Playwright driving Debian's Chromium (never a downloaded browser). One per test module, never per session:
    Playwright's sync API keeps an event loop running in the main thread while it is open, and every later test
    of the worker that calls `asyncio.run` would fail ("cannot be called from a running event loop")."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield b
        b.close()
