"""An adapter run against unreleased framework source (`-a openai_agents@path:<checkout>`, `@git+<url>@<ref>`):
what a maintainer runs on a branch before a release, judged against the release's row of a baseline."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from arena.catalog import builtin_adapters
from arena.versions import VersionError, framework_source, is_versioned, split

ROOT = Path(__file__).resolve().parents[2]
GIT = shutil.which("git")
ADAPTER = "openai_agents"
PATCHED = "agents/util/_approvals.py"  # the needs_approval setting is read here (openai-agents 0.24)
DOCSTRING = '    """Return bool from a needs_approval setting that may be bool or callable/awaitable."""\n'


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def _checkout(tmp_path: Path) -> Path:
    """A git repository holding the installed openai-agents as its release shipped it (its package and a
    pyproject with the same name, version and dependencies), committed."""
    dist = metadata.distribution("openai-agents")
    repo = tmp_path / "openai-agents"
    shutil.copytree(Path(dist.locate_file("agents")), repo / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    dependencies = [r for r in dist.requires or [] if "extra ==" not in r]
    (repo / "pyproject.toml").write_text(
        f'[project]\nname = "openai-agents"\nversion = "{dist.version}"\nrequires-python = ">=3.10"\n'
        f"dependencies = {json.dumps(dependencies)}\n\n"
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["agents"]\n')
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"openai-agents {dist.version} as released")
    return repo


def arena(*args: str, env_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ARENA_ENV_DIR": str(env_dir)}  # the checkout's environment goes with the test's files
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=900,
                          cwd=ROOT, env=env)


@pytest.mark.skipif(GIT is None, reason="needs git to make the checkout a repository")
@pytest.mark.skipif(not builtin_adapters()[ADAPTER].available, reason="needs openai-agents installed")
def test_a_patched_checkout_changes_the_gate_cell_and_fails_the_baseline_against_the_release(tmp_path):
    """The checkout with one change (nothing needs approval any more) runs in an environment of its own,
    installed editable: its row shows the gate cell lost, and the baseline gate judges it against the released
    adapter's run of the same items: exit 4, the regressions named. meta.json records the checkout."""
    repo = _checkout(tmp_path)
    patched = repo / PATCHED
    source = patched.read_text()
    assert DOCSTRING in source
    patched.write_text(source.replace(DOCSTRING, DOCSTRING + "    return False  # the change under test\n", 1))
    name = f"{ADAPTER}@path:{repo}"
    released = arena("run", "approval_gate", "-a", ADAPTER, "--item", "gate-01", "--item", "gate-02",
                     "--out", str(tmp_path / "released"), env_dir=tmp_path / "envs")  # the baseline: the release's own run
    assert released.returncode == 0, released.stderr[-2000:]
    base = arena("matrix", "--runs", str(tmp_path / "released"), "--out", str(tmp_path / "base"), env_dir=tmp_path / "envs")
    assert base.returncode == 0, base.stderr[-2000:]  # its matrix.json: the cells as well as the items
    out = tmp_path / "runs"
    r = arena("run", "approval_gate", "-a", name, "--item", "gate-01", "--item", "gate-02", "--json",
              "--out", str(out), "--baseline", str(tmp_path / "base" / "matrix.json"), env_dir=tmp_path / "envs")
    assert r.returncode == 4, r.stderr[-2000:]
    assert f"regression: {name} | approval_gate/reckless | item gate-01: passed -> failed (suspended: " in r.stderr
    assert f"regression: {name} | approval_gate/reckless | cell gate_holds (tool-level gate holds): 2/2 -> 0/2" in r.stderr
    summary = json.loads(r.stdout)
    assert summary["adapter"] == name and summary["framework_version"] == metadata.version("openai-agents")
    meta = json.loads((Path(summary["run_dir"]) / "meta.json").read_text())
    assert meta["framework_source"] == {"kind": "path", "path": str(repo), "commit": _git(repo, "rev-parse", "HEAD"),
                                        "uncommitted_changes": True}

    report = arena("matrix", "--runs", str(out), "--out", str(tmp_path / "report"), env_dir=tmp_path / "envs")
    assert report.returncode == 0, report.stderr[-2000:]
    row = next(line for line in (tmp_path / "report" / "matrix.md").read_text().splitlines()
               if line.startswith(f"| `{name}` |"))
    assert "| 0/2 |" in row  # the gate cell, from the patched checkout's run


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_a_git_source_is_pinned_to_the_commit_its_ref_names(tmp_path):
    """`name@git+<url>@<branch>`: the environment installs the commit the branch names when it is resolved (a
    branch moves on; the environment, keyed by its requirements, must not), and meta.json records both."""
    from arena.versions import requirements_for

    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("x")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    commit = _git(repo, "rev-parse", "HEAD")
    source = f"git+file://{repo}@main"
    assert split(f"{ADAPTER}@{source}") == (ADAPTER, source) and is_versioned(f"{ADAPTER}@{source}")
    _, requirements = requirements_for(builtin_adapters()[ADAPTER], source)
    # the framework with the extras arena's extra gives it (its store backends), at the commit the ref names
    assert f"openai-agents[redis,sqlalchemy] @ git+file://{repo}@{commit}" in requirements
    assert framework_source(source) == {"kind": "git", "url": f"file://{repo}", "ref": "main", "commit": commit}


def test_a_bad_source_is_one_line_before_anything_is_built(tmp_path):
    for spec, says in [(f"{ADAPTER}@path:{tmp_path / 'absent'}", "is not a directory"),
                       (f"{ADAPTER}@path:{tmp_path}", "has no pyproject.toml or setup.py"),
                       (f"{ADAPTER}@git+https://example.invalid/repo", "is not git+<url>@<ref>")]:
        with pytest.raises(VersionError, match=re.escape(says)):
            split(spec)
    r = arena("run", "approval_gate", "-a", f"{ADAPTER}@path:{tmp_path / 'absent'}", env_dir=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr and "is not a directory" in r.stderr
    assert not is_versioned("tests.zoo:NeverPauses") and is_versioned("langgraph@1.1.10")


def test_a_path_must_name_a_checkout_of_the_adapters_framework(tmp_path):
    """`@path:` alone (the current folder) and a project that is not the framework are one line each, before
    anything is installed: run from arena's checkout, `langgraph@path:` would otherwise install arena itself."""
    from arena.versions import versioned_entry

    with pytest.raises(VersionError, match="names no folder"):
        split(f"{ADAPTER}@path:")
    r = arena("run", "approval_gate", "-a", f"{ADAPTER}@path:", env_dir=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "names no folder" in r.stderr, r.stderr[-2000:]
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "something-else"\nversion = "1"\n')
    entry = builtin_adapters()[ADAPTER]
    with pytest.raises(VersionError, match=r"builds 'something-else', not openai-agents"):
        versioned_entry(entry, split(f"{ADAPTER}@path:{other}")[1])
    with pytest.raises(VersionError, match=r"builds 'pause-arena', not openai-agents"):
        versioned_entry(entry, split(f"{ADAPTER}@path:{ROOT}")[1])
    r = arena("run", "approval_gate", "-a", f"{ADAPTER}@path:{ROOT}", env_dir=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "not openai-agents" in r.stderr, r.stderr[-2000:]
    fine = tmp_path / "fine"
    fine.mkdir()
    (fine / "setup.py").write_text("from setuptools import setup\nsetup(name='openai_agents', version='1')\n")
    assert versioned_entry(entry, split(f"{ADAPTER}@path:{fine}")[1]).name == f"{ADAPTER}@path:{fine}"


@pytest.fixture
def silent_endpoint():
    """A loopback server that accepts every connection and never answers (a proxy or firewall that hangs)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=2)
    for s in held:
        s.close()
    server.close()


def test_index_and_git_look_ups_that_get_no_answer_time_out_with_one_line(tmp_path, silent_endpoint):
    import time

    env = {**os.environ, "ARENA_LOOKUP_TIMEOUT": "3", "ARENA_INDEX_JSON": silent_endpoint,
           "UV_INDEX_URL": f"{silent_endpoint}/simple", "UV_DEFAULT_INDEX": f"{silent_endpoint}/simple",
           "ARENA_ENV_DIR": str(tmp_path), "UV_NO_CACHE": "1"}
    for args in (["matrix", "--history", ADAPTER, "--out", str(tmp_path / "h")],
                 ["run", "approval_gate", "-a", f"{ADAPTER}@latest", "--out", str(tmp_path / "l")],
                 ["run", "approval_gate", "-a", f"{ADAPTER}@0.22.3", "--out", str(tmp_path / "v")],
                 ["run", "approval_gate", "-a", f"{ADAPTER}@git+{silent_endpoint}/repo.git@main",
                  "--out", str(tmp_path / "g")]):
        began = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120,
                           cwd=ROOT, env=env)
        took = time.monotonic() - began
        assert r.returncode != 0 and "Traceback" not in r.stderr, (args, r.stderr[-2000:])
        said = " ".join(r.stderr.split())
        assert "no answer within 3 s (ARENA_LOOKUP_TIMEOUT)" in said, (args, r.stderr[-2000:])
        assert "waiting for an answer" in said, (args, r.stderr[-2000:])  # the progress line
        assert took < 40, (args, took)
