"""Evidence as an artifact: run directories packed into one content-named archive, and read back verified.

The run directories are the evidence behind every report, but they are too big to live in git. `arena matrix
--archive DIR` packs the ones its matrix was computed from into `DIR/evidence-<hash>.tar.gz`, which CI uploads;
`arena matrix --runs ARCHIVE` (and `arena site --runs ARCHIVE`) reads it back.

Layout of an archive (a gzip'd tar):
- `manifest.json`: the format version, the arena version that packed it, and per run directory its name,
  arena/adapter/model (from its meta.json), its number of files and its sha256 (`run_digest`);
- `runs/<cell>/...`: the run directories, each named by its cell (`cell_name`: `<arena>-<adapter>-<profile>`, without
  the time it started and its random suffix), so that unpacking into `reports/` gives `reports/runs/<cell>/...`,
  where the digest's (findings.md's) evidence links point, whichever run of the same matrix made the archive.

The archive's name is the first 16 hex digits of the sha256 of its manifest.json, and its bytes depend only on the
run directories' names and contents (fixed mtimes, owners, modes and order; gzip without a timestamp): packing the
same runs twice gives the same file, so a name says which evidence it holds.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ValidationError

from arena import __version__
from arena.errors import InvalidValue, UserError

FORMAT = 1  # the manifest's format: an archive of a newer format is refused rather than misread
MANIFEST = "manifest.json"
RUNS = "runs"
ARCHIVE_NAME = re.compile(r"evidence-([0-9a-f]{16})\.tar\.gz")
GZIP_MAGIC = b"\x1f\x8b"
COMPRESS_LEVEL = 6  # the full evidence (516 run directories, 98 MB): 6.7 MB; level 9 saves 3% for a fifth more time
FILE_MODE = 0o644

Progress = Callable[[int, int], None]  # (run directories packed so far, of how many)


class ArchiveError(UserError):
    """An evidence archive that cannot be packed or read back as it should: one line (exit 2 on the command line)."""


class RunEntry(BaseModel):
    """One run directory as the manifest lists it."""

    name: str
    arena: str
    adapter: str
    model: str
    files: int
    sha256: str


class Manifest(BaseModel):
    """What an archive holds: checked against every run directory when it is unpacked."""

    format: int
    arena_version: str
    runs: list[RunEntry]

    def to_bytes(self) -> bytes:
        """Deterministic bytes (sorted keys, fixed indentation): the archive's name is their hash."""
        return (json.dumps(self.model_dump(), indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


@dataclass(frozen=True)
class _Digest:
    sha256: str
    files: int


def _run_files(run_dir: Path) -> list[tuple[str, Path]]:
    """Every regular file of a run directory as (its path relative to it, in POSIX form; its path), sorted by the
    relative path. A link or a device is not evidence a run writes: refused, so that nothing outside is packed."""
    found = []
    for path in run_dir.rglob("*"):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise ArchiveError(f"{path} is not a regular file or folder: a run directory holds only those")
        if path.is_file():
            found.append((path.relative_to(run_dir).as_posix(), path))
    return sorted(found)


def _digest_lines(files: Iterable[tuple[str, bytes]]) -> _Digest:
    """The run directory's sha256: over `sha256sum`-style lines ("<file's sha256>  <relative path>\\n"), in sorted
    path order, so that it can be recomputed by hand with the usual tools."""
    outer, count = hashlib.sha256(), 0
    for rel, data in files:
        outer.update(f"{hashlib.sha256(data).hexdigest()}  {rel}\n".encode())
        count += 1
    return _Digest(outer.hexdigest(), count)


def run_digest(run_dir: Path) -> tuple[str, int]:
    """(sha256, number of files) of a run directory, as the manifest records it."""
    digest = _digest_lines((rel, path.read_bytes()) for rel, path in _run_files(run_dir))
    return digest.sha256, digest.files


_STAMPED = re.compile(r"\d{8}-\d{6}-(.+)-[0-9a-f]{4}")  # arena/rundir.py's `<start time>-<cell>-<random suffix>`


def cell_name(run_dir: Path | str) -> str:
    """A run directory's name in an archive: its cell (`<arena>-<adapter>-<profile>`) without the time it started
    and its random suffix, so the same cell of any two matrices has the same name there, and a link to one of its
    traces (findings.md's) resolves in the archive of any run of the same matrix. A name of another form is kept."""
    name = Path(run_dir).name
    stamped = _STAMPED.fullmatch(name)
    return stamped.group(1) if stamped else name


def _entry(run_dir: Path) -> RunEntry:
    try:
        meta = json.loads((run_dir / "meta.json").read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ArchiveError(f"{run_dir} is not a run directory (its meta.json cannot be read: {exc})") from None
    if not isinstance(meta, dict):
        raise ArchiveError(f"{run_dir} is not a run directory (its meta.json is not a JSON object)")
    sha256, files = run_digest(run_dir)
    return RunEntry(name=cell_name(run_dir), arena=str(meta.get("arena", "")), adapter=str(meta.get("adapter", "")),
                    model=str(meta.get("model", "")), files=files, sha256=sha256)


def _distinct(runs: list[Path]) -> list[Path]:
    """The run directories once each, by cell (the archive's folder names): two of one cell are an error."""
    by_name: dict[str, Path] = {}
    for run in runs:
        if not run.is_dir():
            raise ArchiveError(f"{run} is not a run directory")
        same = by_name.setdefault(cell_name(run), run)
        if same.resolve() != run.resolve():
            raise ArchiveError(f"two run directories of one cell, {cell_name(run)!r} ({same} and {run}): an archive "
                               "holds one run of each cell")
    return [by_name[name] for name in sorted(by_name)]


def _member(name: str, size: int) -> tarfile.TarInfo:
    """A tar member whose header depends only on its name and size (no mtime, owner or mode of this machine)."""
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, 0, FILE_MODE
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    tar.addfile(_member(name, len(data)), io.BytesIO(data))


def pack(runs: list[Path], into: Path, on_progress: Progress | None = None) -> Path:
    """Pack run directories into `into/evidence-<hash>.tar.gz` and return its path.

    Written to a hidden temporary file in `into`, then renamed: an interrupted pack leaves nothing under the final
    name. Each file is hashed again as it is packed: a run directory that changed since the manifest was made is an
    error, not an archive whose manifest lies. A file that cannot be read or written is one line, not a traceback."""
    try:
        return _pack(runs, into, on_progress)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise ArchiveError(f"cannot pack run directories into {into}: {exc.strerror or exc}{where}") from None


def _pack(runs: list[Path], into: Path, on_progress: Progress | None) -> Path:
    ordered = _distinct(runs)
    if not ordered:
        raise ArchiveError("no run directories to pack")
    entries = [_entry(run) for run in ordered]
    manifest = Manifest(format=FORMAT, arena_version=__version__, runs=entries).to_bytes()
    into.mkdir(parents=True, exist_ok=True)
    final = into / f"evidence-{hashlib.sha256(manifest).hexdigest()[:16]}.tar.gz"
    fd, tmp_name = tempfile.mkstemp(dir=into, prefix=".evidence-", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as raw:
            # filename="" and mtime=0: the gzip header holds neither this file's name nor the time
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=COMPRESS_LEVEL, mtime=0) as gz:
                with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                    _add(tar, MANIFEST, manifest)
                    for done, (run, entry) in enumerate(zip(ordered, entries), start=1):
                        _pack_run(tar, run, entry)
                        if on_progress is not None:
                            on_progress(done, len(ordered))
            raw.flush()
            os.fsync(raw.fileno())
        tmp.chmod(FILE_MODE)
        tmp.replace(final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return final


def _pack_run(tar: tarfile.TarFile, run: Path, entry: RunEntry) -> None:
    packed: list[tuple[str, bytes]] = []
    for rel, path in _run_files(run):
        data = path.read_bytes()
        _add(tar, f"{RUNS}/{entry.name}/{rel}", data)
        packed.append((rel, data))
    if _digest_lines(packed) != _Digest(entry.sha256, entry.files):
        raise ArchiveError(f"run directory {run} changed while it was being packed; pack it again once it is complete")


def is_archive(path: Path) -> bool:
    """Whether `path` is a file that looks like an evidence archive (gzip) rather than a folder of run directories."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError:
        return False


def _safe_name(name: str) -> PurePosixPath:
    """A member's path, if it is one an evidence archive can hold: `manifest.json` or `runs/<name>/<relative path>`,
    no absolute path, no `..`, no empty or `.` part."""
    path = PurePosixPath(name)
    parts = name.split("/")
    if name == MANIFEST:
        return path
    if (path.is_absolute() or len(parts) < 3 or parts[0] != RUNS or "\\" in name
            or any(p in ("", ".", "..") for p in parts)):
        raise InvalidValue("not manifest.json nor a file under runs/<run dir>/")
    return path


def _extract(archive: Path, staging: Path) -> None:
    """Extract every member into `staging`, refusing (naming it) any member that is not a plain file at a safe
    place; tarfile's "data" filter guards the extraction as well (no path or link leaving the folder, no device)."""
    if not hasattr(tarfile, "data_filter"):
        raise ArchiveError("unpacking an archive safely needs Python 3.11.4 or later (tarfile's extraction filters)")
    try:
        with tarfile.open(archive, mode="r|gz") as tar:
            for member in tar:
                try:
                    _safe_name(member.name)
                    if not (member.isreg() or member.isdir()):
                        raise InvalidValue("a link or a device, not a file")
                except InvalidValue as why:
                    raise ArchiveError(f"{archive}: refused member {member.name!r}: {why}") from None
                try:
                    tar.extract(member, staging, filter="data")
                except tarfile.FilterError as exc:
                    raise ArchiveError(f"{archive}: refused member {member.name!r}: {exc}") from None
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise ArchiveError(f"{archive} is not a readable evidence archive (a gzip'd tar): {exc}") from None


def _read_manifest(archive: Path, staging: Path) -> Manifest:
    try:
        data = (staging / MANIFEST).read_bytes()
    except FileNotFoundError:
        raise ArchiveError(f"{archive} is not an evidence archive: it holds no {MANIFEST}") from None
    try:
        manifest = Manifest.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ArchiveError(f"{archive}: its {MANIFEST} cannot be read "
                           f"({'.'.join(map(str, first['loc'])) or 'top'}: {first['msg']})") from None
    if manifest.format > FORMAT:
        raise ArchiveError(f"{archive} was packed in format {manifest.format} by arena {manifest.arena_version}; "
                           f"this arena reads format {FORMAT}: upgrade arena")
    named = ARCHIVE_NAME.fullmatch(archive.name)
    if named and hashlib.sha256(data).hexdigest()[:16] != named.group(1):
        raise ArchiveError(f"{archive}: its {MANIFEST} does not match the archive's name (altered or damaged)")
    for entry in manifest.runs:
        if entry.name in ("", ".", "..") or "/" in entry.name or "\\" in entry.name or "\0" in entry.name:
            raise ArchiveError(f"{archive}: its {MANIFEST} names a run directory {entry.name!r}, which is not a name")
    return manifest


def _differs(run_dir: Path, entry: RunEntry) -> str | None:
    """Why `run_dir` is not the run directory the manifest lists (None: it is)."""
    if not run_dir.is_dir():
        return "it is missing from the archive"
    try:
        sha256, files = run_digest(run_dir)
    except ArchiveError as exc:
        return str(exc)
    if files != entry.files:
        return f"it holds {files} files, the manifest says {entry.files}"
    if sha256 != entry.sha256:
        return "its content differs from the manifest's sha256 (altered or damaged)"
    return None


def _unpack(archive: Path, into: Path) -> list[str]:
    """Unpack and verify; the names of the run directories now under `into/runs`, as the manifest lists them."""
    runs = into / RUNS
    runs.mkdir(parents=True, exist_ok=True)
    # staged beside runs/ (the same file system: moved in by a rename), hidden (no reader takes it for runs)
    staging = Path(tempfile.mkdtemp(dir=into, prefix=".evidence-unpack-"))
    try:
        _extract(archive, staging)
        manifest = _read_manifest(archive, staging)
        listed = {entry.name for entry in manifest.runs}
        for extra in sorted(p.name for p in (staging / RUNS).iterdir()) if (staging / RUNS).is_dir() else []:
            if extra not in listed:
                raise ArchiveError(f"{archive}: run directory {extra} is not in its {MANIFEST}")
        entries = sorted(manifest.runs, key=lambda e: e.name)
        for entry in entries:  # everything verified before anything is placed
            why = _differs(staging / RUNS / entry.name, entry)
            if why is not None:
                raise ArchiveError(f"{archive}: run directory {entry.name} does not match the manifest: {why}")
        fresh = []
        for entry in entries:
            target = runs / entry.name
            if target.exists() or target.is_symlink():
                if _differs(target, entry) is not None:  # unpacked before: the same run directory is fine
                    raise ArchiveError(f"{target} already exists and differs from the archive's {entry.name}; "
                                       "move it away or unpack elsewhere")
            else:
                fresh.append(entry.name)
        for name in fresh:
            (staging / RUNS / name).rename(runs / name)
        return [entry.name for entry in entries]
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def unpack(archive: Path, into: Path) -> Path:
    """Unpack an evidence archive into `into` (its run directories under `into/runs/`) and return `into/runs`.

    Every member is checked before it is written (no absolute path, `..`, link or device), and every run directory
    against the manifest's hash before any is moved into place: a damaged archive leaves `into/runs` as it was.
    Unpacking again where the same run directories already are changes nothing."""
    _unpack(archive, into)
    return into / RUNS


def resolve_runs(paths: list[Path], scratch: Path) -> list[Path]:
    """`--runs` arguments as folders: a folder as given, an archive as its run directories unpacked under
    `scratch/runs` (only those the archive lists, not whatever else that folder already holds)."""
    resolved: list[Path] = []
    for path in paths:
        if path.is_dir():
            resolved.append(path)
        elif path.is_file():
            resolved.extend(scratch / RUNS / name for name in _unpack(path, scratch))
        else:
            raise ArchiveError(f"no such run folder or evidence archive: {path}")
    return resolved


__all__ = ["ArchiveError", "Manifest", "RunEntry", "is_archive", "pack", "resolve_runs", "run_digest", "unpack"]
