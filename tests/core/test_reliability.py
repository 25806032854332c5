"""Runs that survive bad input, signals, dead processes and damaged run directories, with honest exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.report.matrix import collect_runs
from arena.rundir import RunDir, safe_part, status_of
from arena.worker import procs

ROOT = Path(__file__).resolve().parents[2]

SLOW_ADAPTER = '''
import asyncio
from arena_builtins.adapters.vanilla import VanillaAdapter


class Slow(VanillaAdapter):
    info = VanillaAdapter.info.model_copy(update={"name": "slow"})

    async def start(self, ctx):
        await asyncio.sleep(60)
'''


def arena(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=env)


def _module(tmp_path: Path, name: str, source: str) -> dict:
    """An importable module in tmp_path, and an environment that can import it."""
    (tmp_path / f"{name}.py").write_text(source)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}


def _one_line_exit_2(r: subprocess.CompletedProcess, expected: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: ") and expected in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("args, expected", [
    (["run", "human_in_the_loop", "-a", "vanilla", "--out", "{file}"], "is a file, not a directory"),
    (["run", "human_in_the_loop", "-a", "vanilla", "--out", "/proc/arena-x"], "is under /proc"),
    (["run", "human_in_the_loop", "-a", "vanilla", "--out", "{tmp}/" + "d" * 300], "longer than 255 bytes"),
    (["run", "human_in_the_loop", "-a", "vanilla", "--timeout", "inf", "--out", "{tmp}"], "--timeout must be"),
    (["run", "human_in_the_loop", "-a", "vanilla", "--timeout", "1e12", "--out", "{tmp}"], "--timeout must be"),
    (["run", "human_in_the_loop", "-a", "vanilla", "--model", "openai/" + "m" * 300, "--out", "{tmp}"],
     "--model is 307 characters long"),
    (["run", "human_in_the_loop", "-a", "x[/bogus]", "--out", "{tmp}"], "unknown adapter 'x[/bogus]'"),
    (["matrix", "--runs", "{tmp}", "--out", "{file}"], "is a file, not a directory"),
    (["matrix", "--runs", "{tmp}", "--out", "{tmp}/r", "--findings", "{tmp}"], "is a directory; give the file"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, expected):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = arena(*[a.replace("{file}", str(a_file)).replace("{tmp}", str(tmp_path)) for a in args])
    _one_line_exit_2(r, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("source, expected", [
    ("raise RuntimeError('boom at import')\n", "importing 'badmod' failed: RuntimeError: boom at import"),
    ("def broken(:\n", "importing 'badmod' failed: SyntaxError"),
    ("import sys\nsys.exit(3)\n", "importing 'badmod' called sys.exit(3)"),
    ("from arena_builtins.adapters.vanilla import VanillaAdapter\nclass Adapter(VanillaAdapter):\n    info = {'name': 'x'}\n",
     "info must be an arena.types.AdapterInfo"),
])
def test_a_broken_adapter_module_is_one_line(tmp_path, source, expected):
    env = _module(tmp_path, "badmod", source)
    r = arena("run", "human_in_the_loop", "-a", "badmod:Adapter", "--out", str(tmp_path / "out"), env=env)
    _one_line_exit_2(r, expected)


def _started(out: Path, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # not a hidden staged directory (arena/rundir.py): it is renamed into place a moment later
        metas = [m for m in out.glob("*/meta.json") if not m.parent.name.startswith(".")]
        if metas:
            return metas[0]
        time.sleep(0.1)
    raise AssertionError("the run never started")


@pytest.mark.parametrize("sig, code, name", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "SIGINT")])
def test_a_signal_stops_the_run_with_its_code_and_marks_it_interrupted(tmp_path, sig, code, name):
    env = _module(tmp_path, "slowmod", SLOW_ADAPTER)
    out = tmp_path / "out"
    # SIGINT as a terminal sends it (a shell's background job would inherit it ignored otherwise)
    proc = subprocess.Popen([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a", "slowmod:Slow",
                             "--out", str(out), "--concurrency", "1"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        meta_file = _started(out)
        time.sleep(0.5)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, stderr
    assert f"arena: stopped by {name}; marked interrupted: {meta_file.parent}" in stderr
    meta = json.loads(meta_file.read_text())
    assert meta["status"] == "interrupted" and meta["interrupted_by"] == name and meta["ended_at"]


def _fake_run(root: Path, status: str, pid: int, started: str, items: int = 1) -> Path:
    path = root / f"run-{status}-{started}"
    (path / "traces").mkdir(parents=True)
    meta = {"arena": "human_in_the_loop", "adapter": "vanilla", "model": "scripted", "status": status, "pid": pid,
            "started_at": started, "framework": "openai", "pause_kind": "emulated"}
    (path / "meta.json").write_text(json.dumps(meta))
    (path / "results.jsonl").write_text("".join(
        json.dumps({"item_id": f"hitl-0{i + 1}", "status": "passed", "checks": []}) + "\n" for i in range(items)))
    return path


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_run_whose_process_died_reads_as_interrupted_and_loses_to_a_complete_one(tmp_path):
    dead = _dead_pid()
    assert status_of({"status": "running", "pid": dead}) == "interrupted"
    assert status_of({"status": "running"}) == "interrupted"  # no pid: written by an older arena, gone since
    assert status_of({"status": "running", "pid": os.getpid()}) == "running"
    complete = _fake_run(tmp_path, "complete", dead, "2026-01-01T00:00:00", items=2)
    _fake_run(tmp_path, "running", dead, "2026-06-01T00:00:00", items=1)  # newer, but its process is gone
    (run,) = collect_runs([tmp_path])
    assert run.path == complete


def test_a_run_directory_whose_meta_json_is_damaged_is_skipped_with_a_warning_naming_the_file(tmp_path):
    good = _fake_run(tmp_path, "complete", 1, "2026-01-01T00:00:00")
    bad = _fake_run(tmp_path / "other", "complete", 1, "2026-01-02T00:00:00")
    bad.rename(tmp_path / "bad")
    bad = tmp_path / "bad"
    (bad / "meta.json").write_text('{"arena": "human_in_the_loop", "ada')  # torn mid-write
    warnings: list[str] = []
    runs = collect_runs([tmp_path], on_skip=warnings.append)
    assert [r.path for r in runs] == [good]
    assert len(warnings) == 1 and "skipped a damaged run directory" in warnings[0]
    assert str(bad / "meta.json") in warnings[0]
    r = arena("matrix", "--runs", str(tmp_path), "--out", str(tmp_path / "reports"))
    assert r.returncode == 0 and "arena: warning: skipped a damaged run directory" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_torn_line_costs_only_its_item_and_the_run_directory_is_kept(tmp_path):
    """kill -9 mid-write: a torn last line of results.jsonl, a corrupt one that names no item, a torn line in
    a trace. Every whole line is kept; each damaged item is reported as not measured; one warning per file."""
    path = _fake_run(tmp_path, "complete", 1, "2026-01-01T00:00:00", items=2)
    with (path / "results.jsonl").open("a") as f:
        f.write('{"ite\n{"item_id": "hitl-03", "status": "pas')
    event = {"seq": 0, "leg": 0, "type": "tool_call", "tool": "search_rooms", "ts": 1.0}
    (path / "traces" / "hitl-02.jsonl").write_text(json.dumps(event) + '\n{"seq": 1, "le')
    warnings: list[str] = []
    (run,) = collect_runs([tmp_path], on_skip=warnings.append)
    got = {r.item_id: r for r in run.results}
    assert list(got) == ["hitl-01", "hitl-02", "hitl-03"]  # in file order; a line that names no item is no item
    assert got["hitl-01"].status == "passed"
    assert got["hitl-02"].verdict == "could_not_measure"
    assert got["hitl-02"].error == "traces/hitl-02.jsonl line 2 is torn or corrupt"
    assert len(got["hitl-02"].trace) == 1  # its whole line is kept
    assert (got["hitl-03"].status, got["hitl-03"].error) == ("errored", "results.jsonl line 4 is torn or corrupt")
    not_measured = "its item is reported as not measured"
    assert warnings == [f"{path / 'results.jsonl'}: line 3 is torn or corrupt (+1 more); 1 line(s) name no item; "
                        "no item lacks a result here (--resume runs any that does); the items the others name, as "
                        "not measured",
                        f"{path / 'traces' / 'hitl-02.jsonl'}: line 2 is torn or corrupt; {not_measured}"]
    r = arena("matrix", "--runs", str(tmp_path), "--out", str(tmp_path / "reports"))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("arena: warning: ") == 2 and "results.jsonl: line 3 is torn" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    (listed,) = json.loads((tmp_path / "reports" / "matrix.json").read_text())["runs"]
    assert (listed["items"], listed["passed"], listed["errored"]) == (3, 1, 2)


def test_run_directory_names_stay_inside_out_and_never_collide(tmp_path, monkeypatch):
    assert safe_part("../../x") == "_.._x" and safe_part("a/b\\c") == "a_b_c" and safe_part("") == "_"
    run = RunDir(tmp_path, "human_in_the_loop", "../../x", "openai/gpt-x", {})
    assert run.path.parent == tmp_path and "-_.._x-openai_gpt-x-" in run.path.name
    import arena.rundir as rundir

    tokens = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(rundir.secrets, "token_hex", lambda n: next(tokens))
    monkeypatch.setattr(rundir.time, "strftime", lambda fmt: "20260101-000000")
    first = RunDir(tmp_path, "a", "b", "c", {})
    second = RunDir(tmp_path, "a", "b", "c", {})  # same second, same first token: takes the next name
    assert first.path != second.path and second.path.name.endswith("-bbbb")


def test_a_run_directory_appears_whole_and_a_half_made_one_is_no_run(tmp_path, monkeypatch):
    """A run killed while its directory is being made leaves, at worst, a hidden staged directory; the
    visible one only ever appears with its meta.json (CI once caught a directory without it)."""
    import arena.rundir as rundir

    seen = []
    real_rename = Path.rename
    monkeypatch.setattr(Path, "rename", lambda self, to: (seen.append(sorted(p.name for p in self.iterdir())),
                                                            real_rename(self, to))[1])
    run = RunDir(tmp_path, "a", "b", "c", {})
    assert seen == [["meta.json", "results.jsonl", "traces"]]  # complete before it gets its name
    assert [p.name for p in tmp_path.iterdir()] == [run.path.name] and not run.path.name.startswith(".")
    # a staged directory left by a kill just before its rename: readers skip it
    staged = tmp_path / ".20260101-000000-a-b-c-x.staged"
    real_rename(run.path, staged)
    from arena.report.matrix import collect_runs

    assert collect_runs([tmp_path]) == []
    monkeypatch.setattr(rundir.secrets, "token_hex", lambda n: "aaaa")
    monkeypatch.setattr(rundir.time, "strftime", lambda fmt: "20260101-000000")
    RunDir(tmp_path, "a", "b", "c", {})
    with pytest.raises(rundir.CannotWrite, match="cannot create a run directory under .*: no free run directory name"):
        RunDir(tmp_path, "a", "b", "c", {})  # the name is taken (20 tries): no run directory is replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == [staged.name, "20260101-000000-a-b-c-aaaa"]


def test_finishing_a_run_writes_again_only_the_traces_of_results_rescored_after_late_events(tmp_path):
    """Each trace is written as its item ends; at the end only a rescored result's (a new object) replaces it."""
    from arena.results import ItemResult, RunSummary
    from arena.types import TraceEvent

    run = RunDir(tmp_path, "a", "b", "c", {})
    kept, rescored = (ItemResult(item_id=i, status="passed", trace=[TraceEvent(seq=0, leg=0, type="final", text="done")])
                      for i in ("one", "two"))
    run.add(kept)
    run.add(rescored)
    traces = run.path / "traces"
    written = {p.name: p.stat().st_ino for p in traces.iterdir()}  # a trace is replaced by a rename: a new inode
    late = TraceEvent(seq=1, leg=0, type="tool_call", tool="book_room", result="ERROR: item sealed", late=True)
    rescored_now = rescored.model_copy(update={"trace": [*rescored.trace, late], "status": "failed"})
    summary = RunSummary.tally([kept, rescored_now], arena="a", adapter="b", framework="f", framework_version=None,
                               pause_mechanism="m", pause_kind="native", model="c")
    run.finish(summary, [kept, rescored_now])
    assert (traces / "one.jsonl").stat().st_ino == written["one.jsonl"]
    assert (traces / "two.jsonl").stat().st_ino != written["two.jsonl"]
    assert [json.loads(line)["type"] for line in (traces / "two.jsonl").read_text().splitlines()] == ["final", "tool_call"]
    assert [json.loads(line)["status"] for line in (run.path / "results.jsonl").read_text().splitlines()] == \
        ["passed", "failed"]


def test_items_that_could_not_be_measured_exit_3(tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-used"}
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "--item", "hitl-01", "--model", "openai/gpt-x",
              "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path), env=env)
    assert r.returncode == 3, (r.returncode, r.stderr[-500:])
    (meta,) = tmp_path.glob("*/meta.json")
    assert json.loads(meta.read_text())["status"] == "complete"


def test_names_ids_and_texts_from_run_directories_cannot_inject_markup(tmp_path):
    evil = "<script>alert(1)</script>[x](javascript:alert(1))<img src=x onerror=alert(1)>\x1b[31m\x07"
    path = _fake_run(tmp_path / "runs", "complete", 1, "2026-01-01T00:00:00")
    meta = json.loads((path / "meta.json").read_text())
    meta.update(adapter=evil, framework=evil, pause_mechanism=evil, model="scripted" + evil)
    (path / "meta.json").write_text(json.dumps(meta))
    (path / "results.jsonl").write_text(json.dumps({"item_id": "hitl-01" + evil, "status": "failed", "checks": [
        {"name": "completed", "passed": False, "reason": evil}]}) + "\n")
    r = arena("matrix", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "rep"),
              "--findings", str(tmp_path / "findings.md"))
    assert r.returncode == 0, r.stderr
    site = sorted((tmp_path / "rep" / "site").rglob("*.html"))
    assert len(site) >= 5  # index, matrix, runs, the framework's page and the run's
    for out in (tmp_path / "rep" / "matrix.md", tmp_path / "findings.md", *site):
        text = out.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text, out
        assert "\x1b" not in text and "\x07" not in text, out
        if out.suffix == ".md":
            assert "[x](javascript:" not in text.replace("\\[x\\](javascript:", ""), out  # never a live link


def test_a_key_a_provider_echoes_never_reaches_a_file_or_the_output(tmp_path):
    """A provider that puts the caller's key in its error, and a base URL with a token in it: the canary
    appears nowhere in the run directory, the reports, or what the command printed."""
    import http.server
    import threading

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.dumps({"error": {"message": f"invalid key: {self.headers.get('authorization')}",
                                         "type": "invalid_request_error"}}).encode()
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    canary, token = "sk-canary-0123456789abcdef", "tok-canary-98765432"
    try:
        env = {**os.environ, "OPENAI_API_KEY": canary}
        base = f"http://127.0.0.1:{server.server_port}/v1?api_key={token}"
        r = arena("run", "human_in_the_loop", "-a", "vanilla", "--item", "hitl-01", "--model", "openai/gpt-x",
                  "--base-url", base, "--out", str(tmp_path / "runs"), "--json", env=env)
        m = arena("matrix", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "rep"),
                  "--findings", str(tmp_path / "findings.md"), env=env)
    finally:
        server.shutdown()
    assert m.returncode == 0, m.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "results.jsonl" for p in written)
    echoed = [p for p in written if "invalid key" in p.read_text(errors="replace")]
    assert echoed, "the provider's error should be in the run directory (redacted), or this test proves nothing"
    for text in [r.stdout, r.stderr, m.stdout, m.stderr, *(p.read_text(errors="replace") for p in written)]:
        assert canary not in text and token not in text


def _content(run_dir: Path) -> dict:
    """A run directory without timings, process ids and resume marks: what must not depend on interruptions."""
    def clean(text: str) -> list[dict]:
        out = []
        for line in text.splitlines():
            data = json.loads(line)
            for key in ("ts", "duration_s", "pid"):
                data.pop(key, None)
            if isinstance(data.get("response"), dict):  # a model call's latency is a timing too
                data["response"].pop("latency_s", None)
            out.append(data)
        return out

    meta = json.loads((run_dir / "meta.json").read_text())
    for key in ("started_at", "ended_at", "pid", "pid_start", "resumed", "concurrency"):
        meta.pop(key, None)
    return {"meta": meta, "results": clean((run_dir / "results.jsonl").read_text()),
            "traces": {p.name: clean(p.read_text()) for p in sorted((run_dir / "traces").iterdir())},
            "summary": {k: v for k, v in json.loads((run_dir / "summary.json").read_text()).items() if k != "run_dir"}}


ITEMS = ["hitl-01", "hitl-02", "hitl-03", "hitl-04", "hitl-05", "hitl-06"]


def _wait_for_run_dir(out: Path, proc: subprocess.Popen, limit_s: float = 30.0) -> None:
    """Until the run's directory exists (or the process ended): on a loaded machine start-up alone can outlast a
    fixed delay, and a kill before the directory exists leaves nothing to resume."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and any(not p.name.startswith(".") for p in out.iterdir()):
            return
        time.sleep(0.01)


def test_kill_9_at_random_points_then_resume_gives_the_uninterrupted_run(tmp_path):
    """20 trials: each run is killed with SIGKILL at a random moment, then resumed until complete; the run
    directory is that of an uninterrupted run apart from timings, and no item ran twice into it."""
    import random

    rng = random.Random(20261201)
    item_args = [a for i in ITEMS for a in ("--item", i)]
    reference = tmp_path / "reference"
    r = arena("run", "human_in_the_loop", "-a", "vanilla", *item_args, "--out", str(reference), "--concurrency", "2")
    assert r.returncode == 0, r.stderr
    (want,) = [_content(p) for p in reference.iterdir()]
    resumed_somewhere = 0
    deadline = time.monotonic() + 600  # a bound against a hang, not a timing: CI runs it beside the full matrix
    for trial in range(20):
        assert time.monotonic() < deadline, f"the trials took too long (at trial {trial})"
        out = tmp_path / f"trial-{trial}"
        proc = subprocess.Popen([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a", "vanilla", *item_args,
                                 "--out", str(out), "--concurrency", "2"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if trial % 2:  # at a random moment from the start, the process's start-up included
            time.sleep(rng.uniform(0.4, 2.5))
        else:  # at a random moment of the run itself: after its directory appeared, however slow the start-up
            _wait_for_run_dir(out, proc)
            time.sleep(rng.uniform(0.0, 0.8))
        proc.kill()
        proc.wait()
        # a hidden directory is one killed while it was being created (it is no run: readers skip it)
        runs = [p for p in out.iterdir() if not p.name.startswith(".")] if out.exists() else []
        if not runs:  # killed before the run directory existed: nothing to resume
            continue
        (run_dir,) = runs
        if json.loads((run_dir / "meta.json").read_text())["status"] != "complete":
            resumed_somewhere += 1
            r = arena("run", "human_in_the_loop", "--resume", str(run_dir))
            assert r.returncode == 0, r.stderr
        assert _content(run_dir) == want, f"trial {trial}"
        lines = (run_dir / "results.jsonl").read_text().splitlines()
        assert len(lines) == len(ITEMS) == len({json.loads(l)["item_id"] for l in lines})
    assert resumed_somewhere >= 5  # the kills did land mid-run


# -- property-based: any arguments, any damage to a run directory ------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
_NUMBER = st.sampled_from(["inf", "-inf", "nan", "0", "-1", "1e12", "1e308", "0.5", "30", "abc", ""])


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arena_name=st.sampled_from(["human_in_the_loop", "doc_review"]) | _TEXT,
       options=st.lists(st.tuples(st.sampled_from(["--adapter", "--model", "--timeout", "--item", "--concurrency",
                                                   "--base-url"]),  # --out: the explicit cases above
                                  st.sampled_from(["vanilla", "hitl-01", "scripted", "x[/bogus]", "../../x"]) | _NUMBER
                                  | _TEXT), max_size=4))
def test_any_run_arguments_end_in_a_result_or_one_line(tmp_path, arena_name, options):
    import tempfile

    out = tempfile.mkdtemp(dir=tmp_path)  # one folder per example (tmp_path is shared by them)
    args = ["run", arena_name, "--item", "hitl-01", "--adapter", "vanilla", "--out", out]
    for flag, value in options:
        args += [flag, value]
    r = arena(*args, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.returncode in (0, 2, 3), (r.returncode, r.stderr[-500:])
    if r.returncode == 2:
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena: error: "), r.stderr


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fuzz-runs")
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "--item", "hitl-01", "--item", "hitl-02", "--out", str(out))
    assert r.returncode == 0, r.stderr
    (run_dir,) = out.iterdir()
    return run_dir


@settings(max_examples=int(os.environ.get("ARENA_FUZZ_EXAMPLES", "60")), deadline=None, derandomize=True,
          database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["meta.json", "results.jsonl", "traces/hitl-01.jsonl", "summary.json"]),
       cut=st.floats(0, 1), junk=st.binary(max_size=40),
       replace=st.sampled_from([None, "[]", "{}", "null", '{"status": 5, "arena": [], "adapter": {}}',
                                '{"item_id": 3, "status": "passed", "checks": "x"}', '{"seq": "a"}']))
def test_any_damage_to_a_run_directory_is_skipped_or_read_never_a_crash(tmp_path, a_run, which, cut, junk, replace):
    import shutil
    import tempfile

    from arena.report import compute_matrix, write_reports

    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # one folder per example (tmp_path is shared by them)
    root = tmp_path / "runs"
    copy = root / a_run.name
    shutil.copytree(a_run, copy)
    target = copy / which
    data = target.read_bytes()
    target.write_bytes(replace.encode() if replace is not None else data[: int(len(data) * cut)] + junk)
    warnings: list[str] = []
    runs = collect_runs([root], on_skip=warnings.append)
    skipped = [w for w in warnings if w.startswith("skipped a damaged run directory")]
    assert len(runs) + len(skipped) == 1
    assert runs or which == "meta.json"  # only a run directory without its meta.json is skipped
    assert all(which.split("/")[-1] in w for w in warnings)  # each warning names the damaged file
    write_reports(compute_matrix(runs), tmp_path / "rep", tmp_path / "findings.md")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to follow the process tree")
def test_a_harness_killed_with_sigkill_leaves_no_worker_or_fork_server_behind(tmp_path):
    """A leg hung in its worker (durable_state: every leg in a worker, forked or spawned), then kill -9 of
    the harness: the fork server and the workers it started go too."""
    env = _module(tmp_path, "slowmod", SLOW_ADAPTER)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "arena", "run", "durable_state", "-a", "slowmod:Slow",
                             "--out", str(out), "--concurrency", "2"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _started(out)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the hung workers are up
            workers = [p for p in procs.descendants(proc.pid)
                       if b"arena.worker" in Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")]
            if len(workers) >= 2:
                break
            time.sleep(0.1)
        left = procs.descendants(proc.pid)
        assert left, "the harness started no process"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(procs.alive(p) for p in left):
        time.sleep(0.1)
    alive = [p for p in left if procs.alive(p)]
    assert not alive, [Path(f"/proc/{p}/cmdline").read_bytes() for p in alive]


def test_temporary_folders_of_a_dead_harness_are_swept_and_a_live_ones_kept(tmp_path, monkeypatch):
    import tempfile

    from arena import scratch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = _dead_pid()
    left = tmp_path / f"arena-p{dead}-hitl-01-abcd"
    (left / "tmp").mkdir(parents=True)
    mine = Path(tempfile.mkdtemp(prefix=scratch.prefix("hitl-02")))
    other = tmp_path / "not-ours"
    other.mkdir()
    assert scratch.sweep() == [left]
    assert not left.exists() and mine.exists() and other.exists()


def test_an_in_process_adapter_calling_os_exit_fails_its_item_and_the_run_goes_on(tmp_path):
    env = _module(tmp_path, "exitmod", '''
import os
from arena_builtins.adapters.vanilla import VanillaAdapter


class Exits(VanillaAdapter):
    info = VanillaAdapter.info.model_copy(update={"name": "exits"})

    async def start(self, ctx):
        if ctx.item.id == "hitl-01":
            os._exit(3)
        return await super().start(ctx)
''')
    r = arena("run", "human_in_the_loop", "-a", "exitmod:Exits", "-a", "vanilla", "--item", "hitl-01", "--item",
              "hitl-02", "--out", str(tmp_path / "out"), "--json", env=env)
    summaries = [json.loads(line) for line in r.stdout.splitlines()]
    assert [s["adapter"] for s in summaries] == ["exits", "vanilla"], r.stderr  # the next adapter still ran
    assert summaries[0]["passed"] == 1 and summaries[0]["failed"] == 1 and summaries[1]["passed"] == 2
    (run_dir,) = (tmp_path / "out").glob("*-exits-*")
    first = json.loads((run_dir / "results.jsonl").read_text().splitlines()[0])
    assert "os._exit(3)" in json.dumps(first)


def test_an_environment_that_cannot_be_built_is_one_line_and_exit_1(tmp_path):
    from arena.catalog import builtin_adapters
    REGISTRY = builtin_adapters()

    isolated = next((e.name for e in REGISTRY.values() if e.isolated), None)
    if isolated is None:
        pytest.skip("no adapter with an environment of its own")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**os.environ, "ARENA_ENV_DIR": str(blocker / "envs")}  # under a file: cannot be created
    r = arena("run", "human_in_the_loop", "-a", isolated, "-a", "vanilla", "--item", "hitl-01",
              "--out", str(tmp_path / "out"), "--json", env=env)
    assert r.returncode == 1, r.stderr
    assert f"{isolated}: building the {isolated} environment failed" in r.stderr and "Traceback" not in r.stderr
    assert [json.loads(line)["adapter"] for line in r.stdout.splitlines()] == ["vanilla"]  # the others still ran


def test_a_secret_set_or_changed_after_a_redaction_is_redacted_too(monkeypatch):
    """The environment's secrets are read again whenever the environment changed (they are kept between calls)."""
    from arena.redact import MARK, redact

    monkeypatch.setenv("SOME_API_KEY", "first-secret-value")
    assert redact("a first-secret-value b") == f"a {MARK} b"
    monkeypatch.setenv("SOME_API_KEY", "second-secret-value")  # the same variables, another value
    assert redact("first-secret-value second-secret-value") == f"first-secret-value {MARK}"
    monkeypatch.setenv("OTHER_TOKEN", "third-secret-value")
    assert redact("third-secret-value") == MARK
    monkeypatch.delenv("OTHER_TOKEN")
    assert redact("third-secret-value") == "third-secret-value"


def test_url_credentials_are_redacted_as_the_scheme_first_pattern_did():
    """The user:password of a URL is found from its "://" and kept only after a scheme: on random texts the
    result is the one of the plain pattern `[a-z][a-z0-9+.-]*://[^/@\\s]+@` (which took time quadratic in a
    run of letters), so the rule did not change with the speed."""
    import random
    import re

    from arena.redact import MARK, redact

    plain = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@", re.IGNORECASE)
    rng = random.Random(7)
    pieces = ["a", "Z", "9", "+", ".", "-", "://", ":", "/", "@", " ", "u:p", "http", "x1"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        assert redact(text) == redact(plain.sub(lambda m: f"{m.group('scheme')}{MARK}@", text)), text
    assert redact("see https://user:pw@example.org/x") == f"see https://{MARK}@example.org/x"
    assert redact("9://user:pw@host") == "9://user:pw@host"  # no scheme: a scheme starts with a letter


def test_an_item_whose_tool_backend_cannot_be_built_fails_alone_and_the_run_goes_on(tmp_path, monkeypatch):
    """An arena's backend raising while it is built (doc_review's .docx) is that item's infrastructure failure: the
    other items run, and the process lives (it once ended a matrix job, and every cell still queued on it)."""
    from arena import evaluate
    from arena_builtins.arenas.doc_review import document

    real = document.build

    def build(fixture, path):
        if "-dr-01-state-" in path.parent.name:
            raise AttributeError("'lxml.etree._Element' object has no attribute 'Relationship_lst'")
        return real(fixture, path)

    monkeypatch.setattr(document, "build", build)
    (run,) = evaluate("doc_review", ["vanilla"], items=["dr-01", "dr-02"], out=tmp_path, concurrency=2)
    first, second = sorted(run.results, key=lambda r: r.item_id)
    assert first.status == "errored" and "tool backend for this item could not be built" in (first.error or ""), first
    assert "Relationship_lst" in (first.error or "")
    assert second.status == "passed", second
    assert run.meta["status"] == "complete"
