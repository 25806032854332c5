"""Adapters pinned to a framework release: `-a langgraph@1.1.0`, `-a langgraph@latest`; or to unreleased
framework source: `-a langgraph@path:<checkout>`, `-a openai_agents@git+<url>@<ref>` (docs/maintainers.md).

The same adapter code runs against another release of its framework in an isolated environment of
its own (arena/worker/envs.py), built with uv on first use and cached by its requirements. The
requirements are the adapter's extra (from arena's own package metadata) with the framework pinned
and the other packages left for uv to resolve against that release, plus the harness's own
dependencies the worker imports. Every package is resolved as the index stood the day after that
release was uploaded (`uv --exclude-newer`): the release runs with the companions it shipped with
(a later langchain may need a later langgraph), and the environment is the same whenever it is
built. `DEFAULT_VERSIONS` is the set `arena matrix --versions` runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import subprocess
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from importlib import metadata
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from arena import DISTRIBUTION
from arena.errors import UserError

if TYPE_CHECKING:
    from arena.catalog import AdapterEntry

# The default version set: the latest patch of each of the last three minor releases (the newest is the
# release the main environment installs, so its row is the adapter's own). Update with each release.
DEFAULT_VERSIONS: dict[str, tuple[str, ...]] = {
    "langgraph": ("1.0.10", "1.1.10"),
    "openai_agents": ("0.22.3", "0.23.1"),
    "pydantic_ai": ("2.64.0", "2.66.0"),
}

LATEST = "latest"


def lookup_timeout() -> float:
    """Seconds a package-index or git look-up may take (ARENA_LOOKUP_TIMEOUT, default 20): an endpoint that accepts
    the connection and never answers (a proxy, a firewall) is a one-line error after this long, not a silent wait."""
    try:
        return max(float(os.environ.get("ARENA_LOOKUP_TIMEOUT", "20")), 0.1)
    except ValueError:
        return 20.0


@contextlib.contextmanager
def _looking_up(what: str) -> Iterator[None]:
    """A progress line when a look-up that waits on the network has not answered within 2 s."""
    import sys
    import threading

    def say() -> None:
        print(f"arena: {what}: waiting for an answer (at most {lookup_timeout():g} s; ARENA_LOOKUP_TIMEOUT)",
              file=sys.stderr, flush=True)

    timer = threading.Timer(2.0, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)@(?P<version>[A-Za-z0-9_.+!\-]+)$")


class VersionError(UserError, ValueError):
    """A bad `name@version`: one line."""


PATH = "path:"  # `-a langgraph@path:/src/langgraph/libs/langgraph`: a local checkout, installed editable
GIT = "git+"  # `-a openai_agents@git+https://github.com/openai/openai-agents-python@main`: a git URL uv installs


def is_versioned(name: str) -> bool:
    """`name@release` or `name@<source>` (not `module:Class`, whose part before any `@` has a colon)."""
    return "@" in name and ":" not in name.split("@", 1)[0]


def is_source(version: str) -> bool:
    """A framework from a checkout or a git URL rather than a release on the index."""
    return version.startswith((PATH, GIT))


def split(name: str) -> tuple[str, str]:
    """`langgraph@1.1.0` -> ("langgraph", "1.1.0"); `langgraph@path:/src/lg` -> ("langgraph", "path:/src/lg");
    a malformed spec is a VersionError."""
    base, _, rest = name.partition("@")
    if is_source(rest):
        return base, _checked_source(name, rest)
    match = _SPEC.match(name)
    if match is None:
        raise VersionError(f"adapter {name!r} is not name@version (e.g. langgraph@1.1.0 or langgraph@latest)")
    version = match["version"]
    if version != LATEST:
        try:
            Version(version)
        except InvalidVersion:
            raise VersionError(f"{version!r} in {name!r} is not a release version (e.g. 1.1.0) or 'latest'") from None
    return match["name"], version


def _checked_source(name: str, source: str) -> str:
    """A path as an absolute path to a directory with a pyproject.toml or setup.py; a git URL with its ref."""
    if source.startswith(PATH):
        if not source[len(PATH):].strip():
            raise VersionError(f"{name!r} names no folder: give the checkout of the framework's package after path: "
                               "(e.g. langgraph@path:../langgraph/libs/langgraph)")
        path = os.path.abspath(os.path.expanduser(source[len(PATH):]))
        if not os.path.isdir(path):
            raise VersionError(f"{source[len(PATH):]!r} in {name!r} is not a directory (a checkout of the framework)")
        if not any(os.path.exists(os.path.join(path, f)) for f in ("pyproject.toml", "setup.py")):
            raise VersionError(f"{path} in {name!r} has no pyproject.toml or setup.py: name the package's folder "
                               "(e.g. libs/langgraph in langgraph's repository)")
        return PATH + path
    url = source[len(GIT):]
    if "://" not in url or "@" not in url.split("://", 1)[1]:
        raise VersionError(f"{source!r} in {name!r} is not git+<url>@<ref> (e.g. git+https://github.com/o/r@main)")
    return source


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def project_name(path: str) -> str | None:
    """The distribution a checkout builds: pyproject.toml's [project] name, else setup.cfg's or setup.py's name."""
    import configparser
    import tomllib

    try:
        with open(os.path.join(path, "pyproject.toml"), "rb") as f:
            found = (tomllib.load(f).get("project") or {}).get("name")
        if isinstance(found, str) and found:
            return found
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        pass
    cfg = configparser.ConfigParser()
    try:
        cfg.read(os.path.join(path, "setup.cfg"))
        if cfg.get("metadata", "name", fallback=None):
            return cfg.get("metadata", "name")
    except configparser.Error:
        pass
    try:
        with open(os.path.join(path, "setup.py"), encoding="utf-8", errors="replace") as f:
            match = re.search(r"""\bname\s*=\s*["']([A-Za-z0-9_.\-]+)["']""", f.read())
        return match.group(1) if match else None
    except OSError:
        return None


def _canonical(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _provides(entry: AdapterEntry, source: str) -> None:
    """A checkout must build the adapter's framework distribution (not arena, not another project)."""
    path = source[len(PATH):]
    found = project_name(path)
    if found is None or _canonical(found) != _canonical(entry.framework):
        what = f"builds {found!r}" if found else "names no project"
        raise VersionError(f"{path} {what}, not {entry.framework}: give the folder of {entry.framework}'s package "
                           f"for {entry.name}@path:")


def _git_commit(source: str) -> str:
    """The commit a git source's ref names now (a branch moves: its environment is keyed by the commit)."""
    from arena.worker.envs import EnvError

    url, _, ref = source[len(GIT):].rpartition("@")
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        return ref
    limit = lookup_timeout()
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_HTTP_LOW_SPEED_LIMIT": "1",
           "GIT_HTTP_LOW_SPEED_TIME": str(max(int(limit), 1))}
    try:
        with _looking_up(f"asking {url} for {ref!r} (git ls-remote)"):
            done = subprocess.run(["git", "ls-remote", url, ref], capture_output=True, text=True, timeout=limit,
                                  env=env)
    except subprocess.TimeoutExpired:
        raise EnvError(f"git could not resolve {ref!r} in {url}: no answer within {limit:g} s "
                       "(ARENA_LOOKUP_TIMEOUT)") from None
    except OSError as exc:
        raise EnvError(f"git could not resolve {ref!r} in {url}: {exc}") from None
    found = done.stdout.split()[0] if done.returncode == 0 and done.stdout.strip() else None
    if not found:
        raise EnvError(f"git could not resolve {ref!r} in {url} (git ls-remote)")
    return found


def framework_source(source: str) -> dict[str, object]:
    """What `meta.json` records of a framework installed from source: the path or URL, and the commit."""
    if source.startswith(PATH):
        path = source[len(PATH):]
        commit = _git("-C", path, "rev-parse", "HEAD")
        dirty = bool(_git("-C", path, "status", "--porcelain", "--untracked-files=no")) if commit else None
        return {"kind": "path", "path": path, "commit": commit, "uncommitted_changes": dirty}
    url, _, ref = source[len(GIT):].rpartition("@")
    return {"kind": "git", "url": url, "ref": ref, "commit": _git_commit(source)}


def base_name(adapter: str) -> str:
    return adapter.split("@", 1)[0]


def order_key(adapter: str) -> tuple[int, Version, str]:
    """Unversioned first, then releases oldest to newest."""
    if "@" not in adapter:
        return (0, Version("0"), "")
    try:
        return (1, Version(adapter.split("@", 1)[1]), "")
    except InvalidVersion:
        return (2, Version("0"), adapter)


def _extra_of(entry: AdapterEntry, requirements: list[Requirement]) -> tuple[str, str] | None:
    """(the extra of arena's that installs the adapter's framework, its marker)."""
    for req in requirements:
        marker = str(req.marker or "")
        found = re.search(r"extra == ['\"]([^'\"]+)['\"]", marker)
        if req.name == entry.framework and found and found.group(1) != "all":
            return found.group(1), marker
    return None


def requirements_for(entry: AdapterEntry, version: str) -> tuple[str, list[str]]:
    """What the environment of `entry` at `version` installs: its extra with the framework pinned to the
    release, the extra's other packages unpinned (uv picks what fits that release), the harness's deps.
    Returns (the extra's name, the requirements)."""
    try:
        declared = [Requirement(r) for r in metadata.requires(DISTRIBUTION) or []]
    except (metadata.PackageNotFoundError, InvalidRequirement) as exc:
        raise VersionError(f"arena's package metadata is not readable ({exc}); install arena first") from None
    found = _extra_of(entry, declared)
    if found is None:
        raise VersionError(f"adapter {entry.name!r} has no extra of arena's that installs {entry.framework}")
    extra_name, extra = found
    out = []
    for req in declared:
        marker = str(req.marker or "")
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        if marker == extra:
            if req.name == entry.framework and is_source(version):
                out.append(_from_source(req.name, extras, version))
            else:
                pin = f"=={version}" if req.name == entry.framework else ""
                out.append(f"{req.name}{extras}{pin}")
        elif not marker and req.name != "uv":  # the harness's own: the worker imports arena's core
            out.append(f"{req.name}{extras}")
    return extra_name, sorted(out)


def _from_source(dist: str, extras: str, source: str) -> str:
    """The requirement line of a framework from source: an editable checkout, or a git URL at a commit."""
    if source.startswith(PATH):
        return f"-e {source[len(PATH):]}{extras}"
    url, _, _ref = source[len(GIT):].rpartition("@")
    return f"{dist}{extras} @ git+{url}@{_git_commit(source)}"


def resolve_latest(dist: str) -> str:
    """The newest release of `dist` on the package index uv is configured for."""
    from arena.worker.envs import EnvError, uv_bin

    limit = lookup_timeout()
    env = {**os.environ, "UV_HTTP_TIMEOUT": str(max(int(limit), 1)), "UV_HTTP_RETRIES": "0"}
    try:
        with _looking_up(f"asking the package index for the latest {dist}"):
            done = subprocess.run([uv_bin(), "pip", "compile", "-", "--no-deps", "--no-header", "--quiet"],
                                  input=dist + "\n", capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        raise EnvError(f"asking the package index for the latest {dist} failed: no answer within {limit:g} s "
                       "(ARENA_LOOKUP_TIMEOUT)") from None
    except OSError as exc:
        raise EnvError(f"asking the package index for the latest {dist} failed: {exc}") from None
    found = re.search(rf"^{re.escape(dist)}==(\S+)", done.stdout, re.MULTILINE | re.IGNORECASE)
    if done.returncode != 0 or found is None:
        tail = (done.stderr.strip().splitlines() or ["no answer"])[-1]
        raise EnvError(f"asking the package index for the latest {dist} failed: {tail}")
    return found.group(1)


def _index_releases(dist: str) -> dict[str, list[dict[str, object]]]:
    """Every release of `dist` on the index with its files (the index's JSON API, ARENA_INDEX_JSON)."""
    import httpx

    from arena.worker.envs import EnvError

    base = os.environ.get("ARENA_INDEX_JSON", "https://pypi.org").rstrip("/")
    limit = lookup_timeout()
    try:
        with _looking_up(f"asking {base} for the releases of {dist}"):
            reply = httpx.get(f"{base}/pypi/{dist}/json", timeout=limit, follow_redirects=True)
        reply.raise_for_status()
        releases = reply.json()["releases"]
    except httpx.TimeoutException:
        raise EnvError(f"asking {base} for the releases of {dist} failed: no answer within {limit:g} s "
                       "(ARENA_LOOKUP_TIMEOUT)") from None
    except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
        raise EnvError(f"asking {base} for the releases of {dist} failed: {exc}") from None
    return releases if isinstance(releases, dict) else {}


def recent_releases(dist: str, minors: int = 6) -> list[str]:
    """The latest patch of each of the last `minors` minor releases of `dist` (final releases with files, not
    yanked), oldest first: what `arena matrix --history` runs."""
    latest: dict[tuple[int, int], Version] = {}
    for text, files in _index_releases(dist).items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version.is_prerelease or version.is_devrelease or not files:
            continue
        if all(isinstance(f, dict) and f.get("yanked") for f in files):
            continue
        key = (version.major, version.minor)
        if key not in latest or version > latest[key]:
            latest[key] = version
    return [str(latest[k]) for k in sorted(latest)[-minors:]]


def released(dist: str, version: str) -> str:
    """When `dist==version` was uploaded, plus a day, as uv's `--exclude-newer` takes it (ISO 8601, UTC).

    Read from the index's JSON API (ARENA_INDEX_JSON, default https://pypi.org)."""
    from arena.worker.envs import EnvError

    base = os.environ.get("ARENA_INDEX_JSON", "https://pypi.org").rstrip("/")
    files = _index_releases(dist).get(version)
    if not files:
        raise EnvError(f"{dist} {version} is not a release on {base}")
    try:
        first = min(datetime.fromisoformat(str(f["upload_time_iso_8601"]).replace("Z", "+00:00")) for f in files)
    except (KeyError, ValueError, TypeError) as exc:
        raise EnvError(f"{base} gave no upload time for {dist} {version}: {exc}") from None
    return (first + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


def versioned_entry(entry: AdapterEntry, version: str) -> AdapterEntry:
    """The registry entry run against `version` of its framework, in an isolated environment of its own.

    `latest` is resolved here (from the package index), so the row and its environment name the release."""
    from arena.worker import envs

    if entry.isolated:
        raise VersionError(f"adapter {entry.name!r} already has an environment of its own "
                           f"(adapters/envs/{entry.env_name}.txt); pin its release there")
    if is_source(version):
        if version.startswith(PATH):
            _provides(entry, version)
        # Unreleased: resolved against the index as it stands. A checkout is installed editable (its code as it is
        # at each run); a git ref is pinned to the commit it names now. The environment is keyed by either.
        extra, requirements = requirements_for(entry, version)
        digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:10]
        env = f"{extra}@{'path' if version.startswith(PATH) else 'git'}-{digest}"
        envs.register(env, f"# {entry.framework} from {version}\n" + "\n".join(requirements) + "\n")
        return dataclasses.replace(entry, name=f"{entry.name}@{version}", environment="isolated", env=env, source=version)
    if version == LATEST:
        version = resolve_latest(entry.framework)
    extra, requirements = requirements_for(entry, version)
    env = f"{extra}@{version}"  # adapters of one extra (langgraph, langgraph_per_call) share it
    header = f"# {entry.framework} {version} with the index as it stood then\n# exclude-newer: {released(entry.framework, version)}\n"
    envs.register(env, header + "\n".join(requirements) + "\n")
    name = f"{entry.name}@{version}"
    return dataclasses.replace(entry, name=name, environment="isolated", env=env)


def default_set(registry: Mapping[str, object]) -> list[str]:
    """`name@version` for the default version set, for adapters of this registry."""
    return [f"{name}@{v}" for name, versions in DEFAULT_VERSIONS.items() if name in registry for v in versions]
