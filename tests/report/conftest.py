from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.catalog import builtin_adapters

REGISTRY = builtin_adapters()

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


NO_APT = "ARENA_NO_APT_INSTALL"  # set (to anything but 0): never install Chromium, skip the browser tests


def install_chromium() -> tuple[str | None, str]:
    """Install Debian's `chromium` with apt-get (as root): (its path, "") or (None, why it could not)."""
    if os.environ.get(NO_APT, "0") not in ("", "0"):
        return None, f"{NO_APT} is set"
    if shutil.which("apt-get") is None:
        return None, "apt-get is not available here"
    if os.geteuid() != 0:
        return None, "installing it with apt-get needs root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    try:
        r = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
        if r.returncode != 0:  # the package lists may be missing or stale
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, text=True, env=env, timeout=600)
            r = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"apt-get install chromium failed: {exc}"
    exe = shutil.which("chromium")
    if exe is None:
        tail = (r.stderr.strip().splitlines() or r.stdout.strip().splitlines() or ["(no output)"])[-1]
        return None, f"apt-get install chromium failed (exit {r.returncode}): {tail}"
    return exe, ""


@pytest.fixture(scope="session")
def chromium():
    """Debian's headless Chromium; installed here if missing (as root, with apt-get), unless ARENA_NO_APT_INSTALL."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        exe, why = install_chromium()
        if exe is None:
            pytest.skip(f"the browser tests need headless Chromium, which is not installed and was not installed: {why}")
    return exe


def chromium_cmd(exe: str, profile: Path, *extra: str) -> list[str]:
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--window-size=1400,1000", *extra]
