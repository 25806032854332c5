"""How fast the site's matrix page loads in headless Chromium, against the one giant matrix.html it replaced.

Builds the site from run directories, serves it and the old page from one local HTTP server, and loads each in a
fresh browser context (no cache), alternated, until the `load` event. Prints the figures of this one run and their
ratio (lower is better); no thresholds, no assertions.
Run: uv run python bench/site_load.py OLD_MATRIX_HTML [--runs reports/runs] [--repeat 3] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from arena.report.matrix import collect_runs, compute_matrix
from arena.report.site import build_site


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def load_time(browser: Browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # a cold cache each time
    page = context.new_page()
    start = time.perf_counter()
    page.goto(url, wait_until="load", timeout=600_000)
    took = time.perf_counter() - start
    context.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the old self-contained matrix.html")
    parser.add_argument("--runs", type=Path, default=Path("reports/runs"), help="the run directories it was made from")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="site-load-") as scratch:
        root = Path(scratch)
        start = time.perf_counter()
        runs = collect_runs([args.runs], on_skip=lambda _: None)
        m = compute_matrix(runs)
        read = time.perf_counter() - start
        start = time.perf_counter()
        build_site(m, root / "site")
        built = time.perf_counter() - start
        shutil.copyfile(args.old, root / "old.html")
        new_size, old_size = (root / "site" / "matrix.html").stat().st_size, args.old.stat().st_size
        files = sum(1 for p in (root / "site").rglob("*") if p.is_file())
        total = sum(p.stat().st_size for p in (root / "site").rglob("*") if p.is_file())
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=scratch))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        old_times, new_times = [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            load_time(browser, base + "site/matrix.html")  # the browser's own start-up, paid by neither
            for _ in range(args.repeat):
                old_times.append(load_time(browser, base + "old.html"))
                new_times.append(load_time(browser, base + "site/matrix.html"))
            browser.close()
        server.shutdown()

    old, new = statistics.median(old_times), statistics.median(new_times)
    print(f"{len(runs)} run directories, {len(m.rows)} rows x {len(m.columns)} columns; read in {read:.1f} s, "
          f"site built in {built:.1f} s ({files} files, {total / 1e6:.1f} MB)")
    print(f"old matrix.html: {old_size / 1e6:.1f} MB, load {', '.join(f'{t:.2f}' for t in old_times)} s "
          f"(median {old:.2f} s)")
    print(f"site matrix.html: {new_size / 1e6:.2f} MB, load {', '.join(f'{t:.2f}' for t in new_times)} s "
          f"(median {new:.2f} s)")
    print(f"ratio site/old: {new / old:.3f} (the old page takes {old / new:.0f}x as long)")


if __name__ == "__main__":
    main()
