"""A friendlier CLI (issue 16): errors under the table, whole tables in a pipe, clear help and model names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from arena import catalog
from arena_builtins.adapters.vanilla import VanillaAdapter
from arena.model.resolve import ModelError, ModelTarget, canonical_model, resolve_model, split_model
from arena.types import Capabilities, LegContext, LegResult, PauseKind
from tests.core.test_gateway import upstream  # noqa: F401  (a fixture: the scripted model as a real endpoint)

REPO = Path(__file__).resolve().parents[2]
HITL = "human_in_the_loop"


def arena(*args: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`arena ...` with stdout and stderr as pipes (never a terminal)."""
    base = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=180,
                          cwd=REPO, env={**base, **(env or {})})


# -- adapters with one fault each, run as `-a tests.core.test_cli_friendly:<Class>` ------------------------


class ResumeReturnsADict(VanillaAdapter):
    """Starts correctly, then returns a dict from `resume` instead of a LegResult."""

    info = VanillaAdapter.info.model_copy(update={"name": "resume_returns_a_dict"})

    async def resume(self, state, decision, ctx: LegContext):
        return {"status": "finished", "final_text": "done"}


class RaisesInStart(VanillaAdapter):
    info = VanillaAdapter.info.model_copy(update={"name": "raises_in_start"})

    async def start(self, ctx: LegContext) -> LegResult:
        return self._fail_here()

    def _fail_here(self) -> LegResult:
        raise ValueError("no start here\nsecond line")


class AnAdapterWithAVeryLongNameThatARichTableWouldCut(VanillaAdapter):
    info = VanillaAdapter.info.model_copy(update={"name": "an_adapter_with_a_very_long_name_that_a_table_would_cut"})


def results_of(summary_line: str) -> list[dict]:
    run_dir = Path(json.loads(summary_line)["run_dir"])
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


# -- 1. errors under the table; --verbose shows the traceback ------------------------------------------


def test_item_errors_are_listed_under_the_table_with_how_many_items_share_each(tmp_path):
    r = arena("run", HITL, "-a", "tests.zoo:Raises", "--item", "hitl-01", "--item", "hitl-02", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr  # a raising adapter is measured (its items fail), not an error of the run
    out = r.stdout
    assert "vanilla: 2 items: RuntimeError: adapter blew up" in out
    assert out.index("vanilla: 2 items") > out.index("failing checks")  # after the table
    assert "second line" not in out and "Traceback" not in out  # the first line only
    assert "--verbose" in out


def test_verbose_shows_which_items_and_the_adapters_traceback(tmp_path):
    r = arena("run", HITL, "-a", "tests.zoo:Raises", "--item", "hitl-01", "--item", "hitl-02", "--verbose",
              "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "vanilla: 2 items: RuntimeError: adapter blew up" in out
    assert "items: hitl-01, hitl-02" in out
    assert "Traceback (most recent call last):" in out
    assert 'tests/zoo.py", line' in out and 'raise RuntimeError("adapter blew up\\nsecond line")' in out
    assert re.search(r"^\s+RuntimeError: adapter blew up\n\s+second line$", out, re.MULTILINE)


def test_with_json_the_errors_go_to_stderr_and_no_traceback_is_written_out(tmp_path):
    r = arena("run", HITL, "-a", "tests.zoo:Raises", "--item", "hitl-01", "--json", "--verbose", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.strip().splitlines()  # stdout stays one JSON summary line
    summary = json.loads(line)
    assert "traceback" not in line and "Traceback" not in line
    assert "vanilla: 1 item: RuntimeError: adapter blew up" in r.stderr and "Traceback (most recent" in r.stderr
    (result,) = results_of(line)
    assert result["error"] == "RuntimeError: adapter blew up" and "traceback" not in result
    run_dir = Path(summary["run_dir"])
    assert "Traceback" not in "".join(p.read_text() for p in run_dir.rglob("*") if p.is_file())


def test_an_adapter_in_a_worker_shows_the_traceback_from_the_worker(tmp_path):
    r = arena("run", "durable_state", "-a", "tests.core.test_cli_friendly:RaisesInStart", "--item", "durable-01",
              "--verbose", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "raises_in_start: 1 item: WorkerError: ValueError: no start here" in r.stdout
    # where the adapter raised, in the worker process, not where the harness re-raised it
    assert "in _fail_here" in r.stdout and 'raise ValueError("no start here\\nsecond line")' in r.stdout
    assert "arena/worker/__main__.py" in r.stdout


def test_no_errors_no_error_list(tmp_path):
    r = arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "item errors" not in r.stdout and "--verbose" not in r.stdout


# -- 2. tables in a pipe are whole ----------------------------------------------------------------------


@pytest.mark.parametrize("columns", [None, "80"])
def test_a_table_in_a_pipe_cuts_no_name_and_splits_no_word(tmp_path, columns):
    long = "tests.core.test_cli_friendly:AnAdapterWithAVeryLongNameThatARichTableWouldCut"
    r = arena("run", HITL, "-a", "tests.zoo:BooksFirst", "-a", long, "--item", "hitl-01", "--item", "hitl-02",
              "--out", str(tmp_path), env={"COLUMNS": columns} if columns else None, drop=("COLUMNS",))
    assert r.returncode == 0, r.stderr
    rows = {name: next(line for line in r.stdout.splitlines() if f" {name} " in line)
            for name in ("books_first", AnAdapterWithAVeryLongNameThatARichTableWouldCut.info.name)}
    # each adapter's row is one line that holds every check it failed, each whole
    checks = ("suspended 0/2", "no_tool_before_suspend 0/2", "decision_reached_model 0/2", "final_from_model 0/2")
    assert all(c in rows["books_first"] for c in checks), rows["books_first"]
    assert "none" in rows[AnAdapterWithAVeryLongNameThatARichTableWouldCut.info.name]
    assert "…" not in r.stdout


def test_arena_list_in_a_pipe_is_whole():
    r = arena("list", drop=("COLUMNS",))
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    for name in catalog.arena_names():
        assert catalog.load_arena(name).description in r.stdout  # on one line, uncut


# -- 3. the checks column says plainly that nothing failed ----------------------------------------------


def test_a_fully_passing_adapter_has_no_failing_checks_shown_as_none(tmp_path):
    r = arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if "adapter" in line and "passed" in line)
    assert "failing checks (passed/total)" in header and "short of" not in header
    row = next(line for line in r.stdout.splitlines() if " vanilla " in line)
    assert row.rstrip("│ ").endswith("none") and " all " not in row


# -- 4. help, --model, --version ------------------------------------------------------------------------

WIDE = {"COLUMNS": "250", "TERMINAL_WIDTH": "250"}


@pytest.mark.parametrize("command", [[], ["run"], ["matrix"], ["list"]])
def test_help_shows_no_value_type_for_a_flag(command):
    r = arena(*command, "--help", env=WIDE)
    assert r.returncode == 0, r.stderr
    assert "<bool>" not in r.stdout and "bool" not in r.stdout and "list[" not in r.stdout
    if command:
        assert re.search(r"--help\s+Show this message", r.stdout)
    if command in (["run"], ["matrix"]):
        assert re.search(r"--json\s+(one JSON|print matrix)", r.stdout)  # no value hint between flag and help


@pytest.mark.parametrize("command", ["run", "matrix"])
def test_help_says_that_without_an_adapter_every_installed_one_runs(command):
    r = arena(command, "--help", env=WIDE)
    assert "Without it: every installed adapter" in r.stdout


def test_model_help_points_to_arena_list_which_shows_every_arenas_profiles():
    r = arena("run", "--help", env=WIDE)
    assert "`arena list` shows each arena's" in r.stdout and "openai:<model>" in r.stdout
    assert "OPENAI_BASE_URL" in r.stdout  # --base-url's default
    shown = " ".join(re.sub(r"[│\s]+", " ", r.stdout).split())  # the help's own line breaks and borders away
    for name in catalog.arena_names():  # --model's help lists every arena's profiles itself
        profiles = catalog.load_arena(name).accepted_profiles
        assert f"{name}: {profiles[0]} (default)" + "".join(f", {p}" for p in profiles[1:]) in shown, name
    listed = arena("list", drop=("COLUMNS",))
    assert listed.returncode == 0, listed.stderr
    models = listed.stdout.split("Models (arena run --model)")[1]
    for name in catalog.arena_names():
        spec = catalog.load_arena(name)
        assert re.search(rf"│ {name}\s+│ {spec.profiles[0]} \(default\)", models), name
        for profile in spec.accepted_profiles:
            assert f"│ {profile} " in models or f"│ {profile} (default)" in models, (name, profile)
    assert "openai/<model> or openai:<model>" in listed.stdout


def test_version_prints_the_version_and_imports_no_framework():
    from importlib.metadata import version

    r = arena("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"arena {version('pause-arena')}" and r.stderr == ""
    probe = ("import sys; sys.argv = ['arena', '--version']\nfrom arena.cli import main\n"
             "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
             "heavy = ('langgraph', 'langchain', 'agents', 'pydantic_ai', 'google', 'litellm', 'agent_framework',"
             " 'smolagents', 'crewai', 'openai', 'arenas')\n"
             "print('LOADED=' + ','.join(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert r.stdout.strip().splitlines()[-1] == "LOADED=", r.stdout + r.stderr


def test_an_unknown_model_names_the_choices_and_never_demands_a_base_url():
    r = arena("run", HITL, "--model", "gpt-4")
    assert r.returncode == 2
    assert "unknown model 'gpt-4'; choose from scripted, scripted-eager" in r.stderr
    assert "(with --base-url)" not in r.stderr
    assert "openai/gpt-4" in r.stderr and "OPENAI_BASE_URL" in r.stderr  # what to say, and the endpoint's default


def test_base_url_is_accepted_with_either_spelling_of_a_real_model():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ARENA_API_KEY")}
    for model in ("openai/gpt-x", "openai:gpt-x"):
        r = subprocess.run([sys.executable, "-m", "arena", "run", HITL, "--model", model, "--base-url", "http://127.0.0.1:9/v1"],
                           capture_output=True, text=True, env=env, timeout=60, cwd=REPO)
        assert r.returncode == 2 and "needs an API key" in r.stderr, r.stderr  # past the --base-url check
    r = arena("run", HITL, "--model", "scripted", "--base-url", "http://127.0.0.1:9/v1")
    assert r.returncode == 2 and "--base-url applies only to a real model" in r.stderr


# -- 5. provider:model as well as provider/model ---------------------------------------------------------


def test_both_spellings_resolve_identically(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("ARENA_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    slash, colon = resolve_model("openai/gpt-4.1-mini"), resolve_model("openai:gpt-4.1-mini")
    assert slash == colon == ModelTarget(name="gpt-4.1-mini", upstream="https://api.openai.com/v1", api_key="sk-test")
    assert resolve_model("openai:gpt-x", "http://h/v1/") == resolve_model("openai/gpt-x", "http://h/v1/")
    # only the first separator splits: the rest is the model's own name
    assert resolve_model("openai:ft:gpt-4o-mini:org:abc").name == "ft:gpt-4o-mini:org:abc"
    assert resolve_model("openai/llama3:8b").name == "llama3:8b"
    assert resolve_model("openai:meta/llama-3").name == "meta/llama-3"
    assert split_model("openai:gpt") == split_model("openai/gpt") == ("openai", "gpt")
    assert split_model("scripted") == ("", "scripted")
    assert canonical_model("openai:gpt-4.1-mini") == "openai/gpt-4.1-mini"
    assert canonical_model("scripted", ("scripted",)) == "scripted"


def test_an_unknown_provider_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for model in ("anthropic/claude-x", "anthropic:claude-x"):
        with pytest.raises(ModelError) as caught:
            resolve_model(model, None, ("scripted",))
        message = str(caught.value)
        assert message.startswith("unknown model provider 'anthropic' in ")
        assert "openai/<model> or openai:<model>" in message and "scripted" in message
    with pytest.raises(ModelError, match="names no model"):
        resolve_model("openai:")
    r = arena("run", HITL, "--model", "anthropic:claude-x")
    assert r.returncode == 2 and "unknown model provider 'anthropic'" in r.stderr


def test_a_colon_model_runs_and_is_recorded_in_its_one_spelling(upstream, tmp_path):  # noqa: F811 (the fixture)
    """`openai:<m>` is `openai/<m>`: the same endpoint, one run directory name, one report row."""
    r = arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--model", "openai:scripted", "--base-url",
              upstream["url"], "--json", "--out", str(tmp_path), env={"OPENAI_API_KEY": "sk-test"})
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["passed"] == 1 and summary["model"] == "openai/scripted"
    meta = json.loads((Path(summary["run_dir"]) / "meta.json").read_text())
    assert meta["model"] == "openai/scripted" and meta["base_url"] == upstream["url"]


# -- 6. a leg that returns the wrong type ----------------------------------------------------------------


@pytest.mark.parametrize("adapter, name", [("tests.zoo:ReturnsWrongType", "vanilla"),
                                           ("tests.core.test_cli_friendly:ResumeReturnsADict", "resume_returns_a_dict")])
def test_a_leg_that_returns_a_dict_says_a_LegResult_was_expected(tmp_path, adapter, name):
    r = arena("run", HITL, "-a", adapter, "--item", "hitl-01", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    (result,) = results_of(r.stdout)
    assert result["status"] == "failed"
    assert result["error"] == "the adapter returned dict; a leg must return an arena.types.LegResult"
    completed = next(c for c in result["checks"] if c["name"] == "completed")
    assert not completed["passed"]
    assert f"{name}: 1 item: the adapter returned dict; a leg must return an arena.types.LegResult" in r.stderr


# -- 7. docs/adapters.md says what the code has -----------------------------------------------------------


def test_the_adapter_docs_name_the_types_the_kinds_and_the_capabilities():
    doc = (REPO / "docs" / "adapters.md").read_text()
    writing = doc.split("## Writing an adapter")[1].split("\n## ")[0]
    assert "from arena.types import" in writing and "`adapters/vanilla/`" in writing
    for kind in typing.get_args(PauseKind):
        assert f"`{kind}`" in writing, kind
    for field, spec in Capabilities.model_fields.items():
        shown = json.dumps(spec.default) if isinstance(spec.default, str) else repr(spec.default)
        assert f"{field}={shown}" in writing, field
    for attr in ("name", "base_url", "api_key"):
        assert f"`{attr}`" in writing and attr in LegContext.model_fields["model"].annotation.model_fields
    assert "`ctx.approval_tool`" in writing and "`LookupError`" in writing
    environments = doc.split("## Environments")[1].split("\n## ")[0]
    assert 'environment="isolated"' in environments and "adapters/envs/crewai.txt" in environments


def test_approval_tool_raises_lookup_error_in_a_gated_arena():
    from arena.tools.box import LocalToolBox

    for name in ("approval_gate", "doc_review", "resume_safety"):
        spec = catalog.load_arena(name)
        assert spec.gated
        ctx = LegContext(item=spec.items[0], instructions="", model={"name": "m", "base_url": "http://h/v1", "api_key": "k"},
                         tools=LocalToolBox(None, list(spec.tools)), workdir="/tmp")
        with pytest.raises(LookupError):
            ctx.approval_tool


# -- 8. the browser tests: a side effect, said; a skip that says why -----------------------------------


def test_readme_says_the_tests_may_install_chromium_and_the_quick_start_is_unchanged():
    readme = (REPO / "README.md").read_text()
    quick = readme.split("## Quick start")[1].split("\n## ")[0]
    assert "python3 -m pip install -q uv && python3 -m uv run --locked --extra all arena run human_in_the_loop" in quick
    assert "python3 -m pip install -q uv && python3 -m uv run --locked --extra all pytest" in quick
    assert "apt-get" in quick and "chromium" in quick and "ARENA_NO_APT_INSTALL" in quick


def test_chromium_that_cannot_be_installed_is_a_skip_with_the_reason(monkeypatch):
    from tests.report import conftest

    monkeypatch.setenv("ARENA_NO_APT_INSTALL", "1")
    assert conftest.install_chromium() == (None, "ARENA_NO_APT_INSTALL is set")
    monkeypatch.delenv("ARENA_NO_APT_INSTALL")
    monkeypatch.setattr(conftest.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(conftest.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    assert conftest.install_chromium() == (None, "installing it with apt-get needs root")
    monkeypatch.setattr(conftest.shutil, "which", lambda name: None)
    assert conftest.install_chromium() == (None, "apt-get is not available here")

    def boom(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], 900)

    monkeypatch.setattr(conftest.os, "geteuid", lambda: 0)
    monkeypatch.setattr(conftest.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(conftest.subprocess, "run", boom)
    exe, why = conftest.install_chromium()
    assert exe is None and why.startswith("apt-get install chromium failed: ") and "timed out" in why


# -- 9. crewai's skip says where crewai lives --------------------------------------------------------------


def test_the_crewai_skip_says_it_lives_in_its_own_environment():
    if subprocess.run([sys.executable, "-c", "import crewai"], capture_output=True).returncode == 0:
        pytest.skip("crewai is importable here: its tests run instead of skipping")
    # one process (-n 0): the skip is what is tested, not xdist's start-up, which under CI's load took over 120 s
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0",
                        "tests/adapters/crewai/test_adapter.py"], capture_output=True, text=True, timeout=600, cwd=REPO)
    skip = next(line for line in r.stdout.splitlines() if line.startswith("SKIPPED"))
    assert "No module named" not in skip
    assert "environment of its own" in skip and "adapters/envs/crewai.txt" in skip
    assert "python -m pytest tests/adapters/crewai" in skip


@pytest.mark.usefixtures("store_servers")  # the run checks the server first: without one it is a bad argument
def test_a_run_that_measured_nothing_exits_could_not_measure(tmp_path):
    """Every adapter declined (vanilla keeps no PostgreSQL store): an empty table is exit 3, not 0."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "arena", "run", "durable_state", "-a", "vanilla", "--store", "postgres",
                        "--out", str(tmp_path / "runs")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "vanilla has no postgres store" in r.stderr and "nothing was measured" in r.stderr
    assert "Traceback" not in r.stderr
