"""Isolated environments for adapters whose framework cannot share the harness's environment.

An environment is built with uv from a pinned requirements file committed under `adapters/envs/`
(or requirements registered at run time: an adapter run against another release of its framework,
arena/versions.py), once, into a cache directory keyed by their hash; later runs reuse it. Building is guarded
by a file lock so two runs never build the same environment at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from arena.errors import SetupError

ENVS_SPEC_DIR = Path(__file__).resolve().parents[2] / "adapters" / "envs"


class EnvError(SetupError, RuntimeError):
    pass


def env_root() -> Path:
    return Path(os.environ.get("ARENA_ENV_DIR") or Path.home() / ".cache" / "arena" / "envs")


# environments defined at run time: name -> requirements text
_REGISTERED: dict[str, str] = {}


def register(name: str, requirements: str) -> None:
    _REGISTERED[name] = requirements


def requirements_file(name: str) -> Path:
    return ENVS_SPEC_DIR / f"{name}.txt"


def known(name: str) -> bool:
    return name in _REGISTERED or requirements_file(name).exists()


def requirements_text(name: str) -> str:
    return _REGISTERED[name] if name in _REGISTERED else requirements_file(name).read_text()


def exclude_newer(name: str) -> str | None:
    """The `# exclude-newer: <date>` line of an environment's requirements: resolve as the index stood then."""
    found = re.search(r"^# exclude-newer: (\S+)$", requirements_text(name), re.MULTILINE)
    return found.group(1) if found else None


def env_path(name: str) -> Path:
    digest = hashlib.sha256(requirements_text(name).encode()).hexdigest()[:12]
    return env_root() / f"{name}-{digest}"


def env_python(name: str) -> Path:
    return env_path(name) / "bin" / "python"


def is_built(name: str) -> bool:
    return (env_path(name) / ".complete").exists()


def pinned_version(name: str, dist: str) -> str | None:
    """The version the committed requirements pin for `dist` (no environment needed)."""
    wanted = dist.lower().replace("_", "-")
    for line in requirements_text(name).splitlines():
        line = line.split("#", 1)[0].split(";")[0].strip().lower()
        found = re.match(r"^([a-z0-9_.\-]+)(\[[^\]]*\])?==(\S+)$", line)
        if found and found.group(1).replace("_", "-") == wanted:
            return found.group(3)
    return None


def uv_bin() -> str:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise EnvError("uv is needed to build isolated adapter environments: pip install uv")


def ensure_env(name: str, say: Callable[[str], None] = lambda _: None) -> Path:
    """Build the environment on first use; return its python. Any failure is an EnvError (one line)."""
    try:
        return _ensure_env(name, say)
    except OSError as exc:
        raise EnvError(f"building the {name} environment failed: {exc.strerror or exc}: "
                       f"{exc.filename or env_path(name)}") from None


def _ensure_env(name: str, say: Callable[[str], None]) -> Path:
    target = env_path(name)
    if is_built(name):
        return env_python(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_built(name):
            return env_python(name)
        say(f"building the {name} environment at {target} (first use; later runs reuse it)")
        if target.exists():
            shutil.rmtree(target)
        uv = uv_bin()
        base_python = getattr(sys, "_base_executable", sys.executable)
        for cmd in (
            [uv, "venv", "--quiet", "--python", base_python, str(target)],
            # byte-compiled now: a worker or fork server starting there must not compile every module it imports
            [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(target / "bin" / "python"),
             "-r", "-", *(["--exclude-newer", cutoff] if (cutoff := exclude_newer(name)) else [])],
        ):
            done = subprocess.run(cmd, capture_output=True, text=True,
                                  input=requirements_text(name) if "-r" in cmd else None)
            if done.returncode != 0:
                tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise EnvError(f"building the {name} environment failed: {tail}")
        (target / ".complete").write_text("ok\n")
    return env_python(name)


def installed_version(name: str, dist: str) -> str | None:
    """The version actually installed in a built environment."""
    done = subprocess.run(
        [str(env_python(name)), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
        capture_output=True, text=True, timeout=60,
    )
    return (done.stdout.strip() or None) if done.returncode == 0 else None
