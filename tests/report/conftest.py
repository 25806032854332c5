from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adapters import REGISTRY

REPO = Path(__file__).resolve().parents[2]
# A fast subset that still shows every colour: the reference adapter and two native ones that
# behave differently under scripted-eager; every profile of the arenas that run in seconds.
SUBSET_ADAPTERS = ("vanilla", "langgraph", "microsoft_af")
SUBSET_ARENAS = ("human_in_the_loop", "approval_gate")


def arena_cli(*args: str, cwd: Path = REPO, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env)


@pytest.fixture(scope="session")
def subset_report(tmp_path_factory):
    """`arena matrix` on the subset, run from a scratch folder with relative paths, as a user would."""
    missing = [a for a in SUBSET_ADAPTERS if not REGISTRY[a].available]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} installed (uv sync --extra all)")
    cwd = tmp_path_factory.mktemp("matrix")
    args = ["matrix", "--out", "reports", "--findings", "findings.md", "--json"]
    for a in SUBSET_ADAPTERS:
        args += ["-a", a]
    for a in SUBSET_ARENAS:
        args += ["--arena", a]
    r = arena_cli(*args, cwd=cwd)
    assert r.returncode == 0, r.stderr[-3000:]
    return {"cwd": cwd, "out": cwd / "reports", "json": json.loads(r.stdout), "stderr": r.stderr}


def _install_chromium() -> str | None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    r = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:  # the package lists may be missing or stale
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, text=True, env=env, timeout=600)
        subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    return shutil.which("chromium")


@pytest.fixture(scope="session")
def chromium():
    """Debian's headless Chromium; installed here if missing (as root, with apt-get)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or _install_chromium()
    if exe is None:
        pytest.skip("chromium is not installed and could not be installed (needs root, apt-get and the Debian archive)")
    return exe


def chromium_cmd(exe: str, profile: Path, *extra: str) -> list[str]:
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--window-size=1400,1000", *extra]
