from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FRAMEWORKS = ("langgraph", "langchain", "agents", "pydantic_ai", "google.adk", "litellm", "agent_framework",
              "smolagents", "crewai", "openai")


def arena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "nope"], "unknown arena 'nope'; choose from approval_gate, crash_recovery, delegation, doc_review, durable_state, "
                          "flight_booking, follow_up, human_in_the_loop"),
        (["run", "human_in_the_loop", "--adapter", "nope"], "unknown adapter 'nope'; choose from vanilla"),
        (["run", "human_in_the_loop", "--model", "gpt-4"], "unknown model 'gpt-4'; choose from scripted, scripted-eager"),
        (["run", "human_in_the_loop", "--item", "zz"], "unknown item 'zz'"),
        (["run", "human_in_the_loop", "--bogus"], "No such option: --bogus"),
        (["run"], "Missing argument 'ARENA'"),
        (["run", "human_in_the_loop", "--adapter", "no.such.module:Cls"], "cannot import 'no.such.module'"),
        (["run", "human_in_the_loop", "--adapter", "json:loads"], "does not implement ResumableRunner"),
    ],
)
def test_bad_input_is_one_line_exit_2_no_traceback(args, expected, tmp_path):
    r = arena(*args, "--out", str(tmp_path))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: ") and expected in lines[0], r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_real_model_without_a_key_is_a_clear_error(monkeypatch, tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("OPENAI_API_KEY", "ARENA_API_KEY")}
    r = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "--model", "openai/gpt-x"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and "needs an API key" in r.stderr


@pytest.mark.parametrize("args", [["--help"], ["list"]])
def test_help_and_list_import_no_agent_framework(args):
    probe = (
        "import sys; sys.argv=['arena', *%r]\n"
        "from arena.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED=' + ','.join(sorted(m for m in sys.modules if m.split('.')[0] in %r or m.startswith('google.adk'))))"
    ) % (args, FRAMEWORKS)
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    loaded = r.stdout.strip().splitlines()[-1]
    assert loaded == "LOADED=", loaded


def test_list_shows_arenas_and_adapters_with_versions():
    r = subprocess.run([sys.executable, "-m", "arena", "list"], capture_output=True, text=True, timeout=60,
                       env={**__import__("os").environ, "COLUMNS": "200"})
    assert r.returncode == 0
    assert "human_in_the_loop" in r.stdout and "vanilla" in r.stdout
    crewai = next(line for line in r.stdout.splitlines() if " crewai " in line)
    assert "isolated" in crewai and "1.15." in crewai
    assert "shared" in next(line for line in r.stdout.splitlines() if " langgraph " in line)
    from importlib.metadata import version

    assert version("openai") in r.stdout


def test_run_vanilla_json_and_run_directory(tmp_path):
    r = arena("run", "human_in_the_loop", "--adapter", "vanilla", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.strip().splitlines()
    summary = json.loads(line)
    assert summary["items"] == 12 and summary["passed"] == 12 and summary["errors"] == 0
    assert summary["pause_kind"] == "emulated" and summary["model"] == "scripted"
    assert all(t["passed"] == t["total"] for t in summary["checks"].values())
    assert set(summary["checks"]) == {"suspended", "no_tool_before_suspend", "tool_called_once_after_resume",
                                      "tool_not_used", "acknowledged", "args_as_requested", "decision_reached_model",
                                      "no_replay", "completed", "final_from_model", "nothing_after_final",
                                      "shown_as_asked", "denied_not_executed", "continued_own_run",
                                      "requests_well_formed"}
    for key in ("arena", "adapter", "framework_version", "pause_mechanism", "run_dir"):
        assert summary[key]
    run_dir = Path(summary["run_dir"])
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["framework_version"] == summary["framework_version"]
    assert meta["started_at"] and meta["ended_at"] and "git_commit" in meta
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 12
    trace = [json.loads(l) for l in (run_dir / "traces" / "hitl-01.jsonl").read_text().splitlines()]
    assert [e["type"] for e in trace] == ["model_call", "tool_call", "model_call", "suspended", "resumed",
                                          "model_call", "tool_call", "model_call", "final"]
    assert "arena-local" not in (run_dir / "meta.json").read_text()
    assert meta["model_gateway"] == "scripted" and meta["pause_dwell_s"] > 0
    assert not (run_dir / "late.jsonl").exists()


def test_run_single_item_with_eager_model_and_table_output(tmp_path):
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "--item", "hitl-02", "--model", "scripted-eager",
              "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "vanilla" in r.stdout and "1/1" in r.stdout


def test_user_adapter_by_module_path(tmp_path):
    r = arena("run", "human_in_the_loop", "-a", "tests.zoo:BooksFirst", "--item", "hitl-01", "--json",
              "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["adapter"] == "books_first" and summary["passed"] == 0 and summary["failed"] == 1


def test_approval_gate_defaults_to_its_reckless_profile(tmp_path):
    r = arena("run", "approval_gate", "-a", "vanilla", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["model"] == "reckless" and summary["passed"] == 12 and summary["pause_kind"] == "emulated"


def test_durable_state_shows_that_an_emulated_pause_does_not_survive_a_restart(tmp_path):
    r = arena("run", "durable_state", "-a", "vanilla", "--item", "durable-01", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["errors"] == 0 and summary["failed"] == 1 and summary["passed"] == 0  # measured, not an error
    result = json.loads((Path(summary["run_dir"]) / "results.jsonl").read_text())
    assert "keeps its paused state in memory only; it cannot resume in a new process" in result["error"]
    completed = next(c for c in result["checks"] if c["name"] == "completed")
    assert not completed["passed"] and "cannot resume in a new process" in completed["reason"]


def test_activity_after_the_seal_is_written_to_the_run_directory_and_fails_the_item(tmp_path):
    r = arena("run", "human_in_the_loop", "-a", "tests.zoo:BooksLongAfterFinal", "--item", "hitl-02", "--item", "hitl-04",
              "--item", "hitl-06", "--concurrency", "1", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    late = [json.loads(l) for l in (run_dir / "late.jsonl").read_text().splitlines()]
    assert late and late[0]["item_id"] == "hitl-02" and late[0]["type"] == "tool_call" and late[0]["late"] is True
    assert late[0]["result"].startswith("ERROR: item sealed")  # refused, never executed
    results = {json.loads(l)["item_id"]: json.loads(l) for l in (run_dir / "results.jsonl").read_text().splitlines()}
    assert results["hitl-02"]["status"] == "failed"
    check = next(c for c in results["hitl-02"]["checks"] if c["name"] == "nothing_after_final")
    assert not check["passed"] and "after the item was sealed: book_room" in check["reason"]
    trace = [json.loads(l) for l in (run_dir / "traces" / "hitl-02.jsonl").read_text().splitlines()]
    assert trace[-1]["late"] is True


def _run_dir_content(run_dir: Path) -> dict:
    """A run directory without its timings, process ids and the concurrency it was run with."""
    def clean(line: str) -> dict:
        data = json.loads(line)
        for key in ("ts", "duration_s", "pid"):
            data.pop(key, None)
        if isinstance(data.get("response"), dict):  # how long the model took: a timing
            data["response"].pop("latency_s", None)
        return data

    meta = json.loads((run_dir / "meta.json").read_text())
    for key in ("started_at", "ended_at", "concurrency", "pid", "pid_start"):
        meta.pop(key)
    return {
        "meta": meta,
        "results": [clean(l) for l in (run_dir / "results.jsonl").read_text().splitlines()],
        "traces": {p.name: [clean(l) for l in p.read_text().splitlines()] for p in sorted((run_dir / "traces").iterdir())},
        "summary": {k: v for k, v in json.loads((run_dir / "summary.json").read_text()).items() if k != "run_dir"},
    }


@pytest.mark.parametrize("arena_name", ["human_in_the_loop", "flight_booking"])
def test_items_at_once_leave_the_run_directory_a_serial_run_leaves(tmp_path, arena_name):
    dirs = []
    for n in (1, 6):
        r = arena("run", arena_name, "-a", "vanilla", "--json", "--concurrency", str(n), "--out", str(tmp_path / str(n)))
        assert r.returncode == 0, r.stderr
        dirs.append(Path(json.loads(r.stdout)["run_dir"]))
    serial, concurrent = (_run_dir_content(d) for d in dirs)
    assert json.loads((dirs[1] / "meta.json").read_text())["concurrency"] == 6
    assert serial == concurrent
