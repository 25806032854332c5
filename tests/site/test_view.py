"""`arena view` over a run directory that is still being written, in a real browser: items appended to its
results.jsonl appear on reload, as does a run directory that appears (first hidden, as arena/rundir.py creates it);
a run whose process is alive shows as in progress; Ctrl-C stops the server."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.worker import procs

from tests.report.conftest import REPO


def _copy_run(source: Path, into: Path, keep: int | None = None, running: bool = False) -> Path:
    """A copy of a run directory with only its first `keep` results, as a run still being written has them."""
    shutil.copytree(source, into)
    lines = (source / "results.jsonl").read_text().splitlines(keepends=True)
    (into / "results.jsonl").write_text("".join(lines[:keep]))
    if running:  # written by a live process (this one): in progress
        meta = json.loads((into / "meta.json").read_text())
        meta.update(status="running", ended_at=None, pid=os.getpid(), pid_start=procs.start_time(os.getpid()))
        (into / "meta.json").write_text(json.dumps(meta))
        (into / "summary.json").unlink(missing_ok=True)
    return into


def _start(folder: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.Popen([sys.executable, "-m", "arena", "view", str(folder), "--port", "0"], cwd=folder.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    line = proc.stdout.readline() if ready else ""
    found = re.search(r"http://127\.0\.0\.1:\d+/", line)
    if found is None:
        proc.kill()
        pytest.fail(f"arena view printed no URL: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, found.group(0)


def _run_of(subset_report, arena: str, model: str) -> Path:
    return next(p for p in sorted((subset_report["out"] / "runs").iterdir())
                if re.fullmatch(rf"\d+-\d+-{arena}-vanilla-{model}-[0-9a-f]+", p.name))


def test_a_run_being_written_shows_its_new_items_on_reload(browser, subset_report, tmp_path):
    source = _run_of(subset_report, "human_in_the_loop", "scripted")
    all_lines = (source / "results.jsonl").read_text().splitlines(keepends=True)
    runs = tmp_path / "runs"
    runs.mkdir()
    live = _copy_run(source, runs / source.name, keep=3, running=True)
    proc, url = _start(runs)
    try:
        page = browser.new_page()
        page.goto(url)
        assert page.locator("#in-progress + ul li").count() == 1
        page.locator("#in-progress + ul a").click()
        assert "in progress" in page.locator("h1").inner_text()
        assert page.locator("section.item").count() == 3

        with (live / "results.jsonl").open("a") as f:  # the run writes the rest of its items
            f.write("".join(all_lines[3:]))
        page.reload()
        assert page.locator("section.item").count() == len(all_lines)
        last = page.locator("section.item").last
        last.locator("button.trace").click()
        last.locator("table.trace tbody tr").first.wait_for()

        # a second run appears: first hidden while arena/rundir.py creates it, then renamed into place
        other = _run_of(subset_report, "approval_gate", "reckless")
        staged = _copy_run(other, runs / f".{other.name}-x1.staged")
        page.goto(url + "runs.html")
        assert "being created" in page.locator("body").inner_text()
        staged.rename(runs / other.name)
        page.reload()
        assert "being created" not in page.locator("body").inner_text()
        assert page.locator(f"a[href='run/{other.name}.html']").count() == 1

        meta = json.loads((live / "meta.json").read_text())  # the first run completes
        meta.update(status="complete")
        (live / "meta.json").write_text(json.dumps(meta))
        page.goto(url)
        assert page.locator("#in-progress").count() == 0
        page.goto(url + "matrix.html")
        assert page.locator("#matrix-table tbody tr").count() == 1  # vanilla, over both runs
        page.close()
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, err
    assert out.strip().endswith("arena view: stopped") and "Traceback" not in err


def test_view_errors_are_one_line(tmp_path):
    from tests.report.conftest import arena_cli

    r = arena_cli("view", str(tmp_path / "nope"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == f"arena: error: no such directory: {tmp_path / 'nope'}"
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = arena_cli("view", str(tmp_path), "--port", str(port), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith(f"arena: error: cannot listen on 127.0.0.1:{port}: ")
    assert len(r.stderr.strip().splitlines()) == 1
