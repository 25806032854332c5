"""Plugins: adapters and arenas of other distributions, found through the `arena.adapters` and
`arena.arenas` entry points without importing them; built-ins win; a broken one fails alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena import catalog
from arena.errors import PluginError, UserError
from arena.evaluation import select_adapters

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "arena-plugin-example"
# what uv says when it cannot reach the index for the build backend (hatchling)
NO_NETWORK = re.compile(r"fetch|connect|dns|network|lookup address|sending request|offline|not found in the cache|timed out",
                        re.IGNORECASE)


def arena(*args: str, path: Path) -> subprocess.CompletedProcess:
    """`python -m arena` with `path` on PYTHONPATH, so that the distributions installed there are seen."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(path), os.environ.get("PYTHONPATH", "")) if p),
           "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300, env=env)


def row(stdout: str, name: str) -> list[str]:
    """The cells of `arena list`'s row for `name`."""
    line = next(line for line in stdout.splitlines() if f"│ {name} " in line)
    return [cell.strip() for cell in line.strip("│ ").split("│")]


def fake_dist(where: Path, name: str, entry_points: str, modules: dict[str, str]) -> Path:
    """An installed distribution (a dist-info folder and its modules) written straight to `where`."""
    info = where / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    for module, text in modules.items():
        (where / f"{module}.py").write_text(text)
    return where


BROKEN = """\
[arena.adapters]
broken_adapter = broken_plugin:Adapter
vanilla = clash_plugin:Adapter
misnamed = misnamed_plugin:Adapter

[arena.arenas]
broken_arena = broken_plugin
human_in_the_loop = clash_plugin
"""
MODULES = {
    "broken_plugin": "raise RuntimeError('boom')\n",
    "clash_plugin": "raise RuntimeError('a built-in of this name wins: never imported')\n",
    "misnamed_plugin": "from arena_builtins.adapters.vanilla import VanillaAdapter as Adapter\n",
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example package, installed into a folder of its own (its build backend comes from the index)."""
    # built from a fresh copy: uv reuses a local folder's cached build until its pyproject.toml changes
    source = tmp_path_factory.mktemp("source") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__", "build", "dist", "*.egg-info"))
    target = tmp_path_factory.mktemp("plugin")
    r = subprocess.run([sys.executable, "-m", "uv", "pip", "install", "--python", sys.executable, "--target", str(target),
                        str(source)], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        why = next((line.strip() for line in r.stderr.splitlines() if NO_NETWORK.search(line)), None)
        if why is not None:
            pytest.skip(f"cannot install examples/arena-plugin-example (its build backend is out of reach): {why}")
        pytest.fail(f"installing examples/arena-plugin-example failed:\n{r.stderr}")
    return target


@pytest.fixture
def broken(tmp_path, monkeypatch):
    """Broken and clashing plugins on sys.path, seen by this process's discovery (caches cleared around it)."""
    fake_dist(tmp_path, "broken-plugin", BROKEN, MODULES)
    monkeypatch.syspath_prepend(str(tmp_path))
    _forget()
    yield tmp_path
    _forget()


def _forget() -> None:
    catalog._entry_points.cache_clear()
    catalog.adapters.cache_clear()
    catalog._loaded.clear()
    catalog._skipped.clear()


def test_list_shows_the_plugin_adapter_and_arena_with_their_distribution(installed):
    r = arena("list", path=installed)
    assert r.returncode == 0, r.stderr
    assert row(r.stdout, "example_rooms") == [
        "example_rooms", "3", "Example plugin arena: three room bookings paused on request_approval (approve, deny, approve).",
        "arena-plugin-example 0.1.0"]
    assert row(r.stdout, "example_vanilla") == [
        "example_vanilla", "arena-plugin-example", "0.1.0", "yes", "shared", "arena-plugin-example 0.1.0"]
    assert row(r.stdout, "vanilla")[-1] == "arena" and row(r.stdout, "human_in_the_loop")[-1] == "arena"


def test_list_does_not_import_a_plugin_adapter(installed):
    probe = ("import sys; sys.argv = ['arena', 'list']\nfrom arena.cli import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('LOADED=' + ','.join(sorted(m for m in sys.modules if m.startswith('arena_plugin_example'))))")
    env = {**os.environ, "PYTHONPATH": str(installed)}
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env)
    loaded = r.stdout.strip().splitlines()[-1]
    assert loaded == "LOADED=arena_plugin_example,arena_plugin_example.rooms", loaded  # the arena, to count its items


def test_the_plugin_arena_runs_on_the_plugin_adapter(installed, tmp_path):
    r = arena("run", "example_rooms", "-a", "example_vanilla", "--out", str(tmp_path), "--json", path=installed)
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.strip().splitlines()
    summary = json.loads(line)
    assert (summary["arena"], summary["adapter"], summary["framework"]) == ("example_rooms", "example_vanilla", "openai")
    assert summary["items"] == 3 and summary["passed"] == 3 and summary["errors"] == 0
    assert summary["checks"]["suspended"] == {"passed": 3, "total": 3}
    assert summary["checks"]["tool_not_used"] == {"passed": 1, "total": 1}  # the denied item booked nothing
    run_dir = Path(summary["run_dir"])
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["target"] == "example_vanilla" and meta["status"] == "complete"
    assert sorted(p.name for p in (run_dir / "traces").iterdir()) == [f"example-0{i}.jsonl" for i in (1, 2, 3)]


def test_discovery_imports_no_plugin_and_built_ins_win(broken, capsys):
    entries = catalog.adapters()
    assert entries["vanilla"] == catalog.builtin_adapters()["vanilla"] and not entries["vanilla"].plugin
    assert entries["broken_adapter"].distribution == "broken-plugin 1.0" and entries["broken_adapter"].plugin
    assert entries["broken_adapter"].available  # found, not imported
    assert "broken_arena" in catalog.arena_names() and catalog.arena_names().count("human_in_the_loop") == 1
    assert catalog.provider("human_in_the_loop") == "arena"
    assert catalog.provider("broken_arena") == "broken-plugin 1.0"
    catalog.adapters(), catalog.arena_names()  # asked again: no second warning
    warnings = capsys.readouterr().err.strip().splitlines()
    assert warnings == [
        "arena: warning: adapter 'vanilla' from broken-plugin 1.0 ignored: a built-in adapter has that name",
        "arena: warning: arena 'human_in_the_loop' from broken-plugin 1.0 ignored: a built-in arena has that name",
    ]
    assert not {"broken_plugin", "clash_plugin", "misnamed_plugin"} & set(sys.modules)


def test_a_broken_plugin_is_an_error_of_one_line_when_selected(broken, capsys):
    with pytest.raises(UserError) as exc:
        select_adapters(["broken_adapter"])
    assert str(exc.value) == ("adapter 'broken_adapter' (from broken-plugin 1.0): importing 'broken_plugin' failed: "
                              "RuntimeError: boom")
    with pytest.raises(UserError, match="registered as 'misnamed' but its info.name is 'vanilla'"):
        select_adapters(["misnamed"])
    with pytest.raises(PluginError) as exc:
        catalog.load_arena("broken_arena")
    assert str(exc.value) == "arena 'broken_arena' (from broken-plugin 1.0): importing 'broken_plugin' failed: RuntimeError: boom"
    capsys.readouterr()
    assert "broken_arena" not in [s.name for s in catalog.arenas()]
    assert [s.name for s in catalog.arenas()][:3] == ["human_in_the_loop", "durable_state", "approval_gate"]
    assert capsys.readouterr().err.strip().splitlines() == [f"arena: warning: {exc.value}; left out"]


def test_all_skips_a_broken_plugin_adapter_with_one_line(broken, capsys, monkeypatch):
    chosen = [name for name, _ in select_adapters(["all"], _Printing())]
    assert "vanilla" in chosen and not {"broken_adapter", "misnamed"} & set(chosen)
    err = capsys.readouterr().err
    assert ("adapter 'broken_adapter' (from broken-plugin 1.0): importing 'broken_plugin' failed: RuntimeError: boom; "
            "skipped") in err
    assert "adapter 'misnamed' (from broken-plugin 1.0): " in err


class _Printing:
    """A reporter that prints what it is told, as the command line does (to stderr)."""

    def say(self, message, level="info"):
        print(message, file=sys.stderr)


def test_broken_plugins_leave_the_cli_working_for_the_others(tmp_path):
    path = fake_dist(tmp_path / "site", "broken-plugin", BROKEN, MODULES)
    r = arena("list", path=path)
    assert r.returncode == 0, r.stderr
    hitl = row(r.stdout, "human_in_the_loop")
    assert hitl[1] == "12" and hitl[-1] == "arena"
    assert row(r.stdout, "broken_arena") == [
        "broken_arena", "-",
        "arena 'broken_arena' (from broken-plugin 1.0): importing 'broken_plugin' failed: RuntimeError: boom",
        "broken-plugin 1.0"]
    assert row(r.stdout, "broken_adapter")[-1] == "broken-plugin 1.0"
    assert row(r.stdout, "vanilla")[-1] == "arena"
    for args, message in [
        (["run", "broken_arena", "-a", "vanilla"], "arena 'broken_arena' (from broken-plugin 1.0): importing 'broken_plugin'"),
        (["run", "human_in_the_loop", "-a", "broken_adapter"], "adapter 'broken_adapter' (from broken-plugin 1.0): importing"),
    ]:
        r = arena(*args, "--out", str(tmp_path / "runs"), path=path)
        assert r.returncode == 2, r.stderr
        errors = [line for line in r.stderr.splitlines() if not line.startswith("arena: warning: ")]
        assert len(errors) == 1 and errors[0].startswith(f"arena: error: {message}"), r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""


EXITING = """\
[arena.adapters]
exiting_adapter = exiting_plugin:Adapter

[arena.arenas]
exiting_arena = exiting_plugin
"""


def test_a_plugin_calling_sys_exit_as_it_is_imported_is_one_line_naming_its_module(tmp_path):
    """Its own exit code and not a word, otherwise: arena says which module did it, exit 2."""
    path = fake_dist(tmp_path / "site", "exiting-plugin", EXITING, {"exiting_plugin": "import sys\nsys.exit(3)\n"})
    for args, message in [
        (["run", "exiting_arena", "-a", "vanilla"],
         "arena 'exiting_arena' (from exiting-plugin 1.0): importing 'exiting_plugin' called sys.exit(3)"),
        (["run", "human_in_the_loop", "-a", "exiting_adapter"],
         "adapter 'exiting_adapter' (from exiting-plugin 1.0): importing 'exiting_plugin' called sys.exit(3)"),
    ]:
        r = arena(*args, "--out", str(tmp_path / "runs"), path=path)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert r.stderr.strip().splitlines() == [f"arena: error: {message}"], r.stderr
        assert r.stdout == "" and not (tmp_path / "runs").exists()


def test_an_adapter_written_for_old_adapterinfo_fields_is_an_error_naming_them(tmp_path):
    """Unknown AdapterInfo fields (an older release's `pause_kind`, `pause_mechanism`) are refused when the adapter
    loads, naming them; they were dropped and the adapter ran as `unsupported`, blaming its framework."""
    (tmp_path / "old_adapter.py").write_text(
        "from arena_builtins.adapters.vanilla import VanillaAdapter\nfrom arena.types import AdapterInfo\n\n"
        "class Old(VanillaAdapter):\n"
        "    info = AdapterInfo(name='old', framework='openai', pause_kind='native', pause_mechanism='interrupt')\n")
    r = arena("run", "human_in_the_loop", "-a", "old_adapter:Old", "--out", str(tmp_path / "runs"), path=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "AdapterInfo has no field 'pause_kind', 'pause_mechanism'" in r.stderr, r.stderr[-2000:]
    assert "has no pause primitive" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
