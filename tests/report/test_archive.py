"""Evidence archives (arena/report/archive.py, `arena matrix --archive` / `--runs ARCHIVE`): packed from real run
directories, named by their content, the same bytes every time, read back verified, and refused when damaged,
altered or unsafe."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.report.archive import ArchiveError, cell_name, is_archive, pack, resolve_runs, run_digest, unpack

from .conftest import arena_cli


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """Two small real run directories (the reference adapter on approval_gate's two profiles), made by the CLI:
    `<cwd>/reports/runs/<run dir>`."""
    cwd = tmp_path_factory.mktemp("archive")
    r = arena_cli("matrix", "-a", "vanilla", "--arena", "approval_gate", "--out", "reports", cwd=cwd)
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(list((cwd / "reports" / "runs").iterdir())) == 2
    return cwd


@pytest.fixture
def runs(made, tmp_path) -> list[Path]:
    """A copy of the run directories of its own (a test may alter it), in the order of their cells (the archive's)."""
    shutil.copytree(made / "reports" / "runs", tmp_path / "src" / "runs")
    return sorted((tmp_path / "src" / "runs").iterdir(), key=cell_name)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isreg()}


def _repack(archive: Path, members: dict[str, bytes], into: Path | None = None) -> Path:
    """`members` written as a gzip'd tar, by tarfile directly (not by pack): an archive made elsewhere."""
    path = into or archive
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_unpacking_gives_back_every_file_of_every_run_directory(runs, tmp_path):
    archive = pack(runs, tmp_path / "evidence")
    assert is_archive(archive) and not is_archive(runs[0]) and not is_archive(runs[0] / "meta.json")
    assert not is_archive(tmp_path / "nothing.tar.gz")
    assert unpack(archive, tmp_path / "out") == tmp_path / "out" / "runs"
    # each run directory by its cell: no start time, no random suffix (arena/rundir.py names it with both)
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == [cell_name(r) for r in runs]
    assert cell_name(runs[0]) == "approval_gate-vanilla-reckless" and runs[0].name != cell_name(runs[0])
    for run in runs:
        assert _files(tmp_path / "out" / "runs" / cell_name(run)) == _files(run)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["runs"]  # no staging folder left behind
    assert [p.name for p in (tmp_path / "evidence").iterdir()] == [archive.name]  # no temporary file either


def test_the_same_runs_pack_to_the_same_bytes_named_by_their_manifest(runs, tmp_path):
    first = pack(runs, tmp_path / "a")
    # elsewhere, in another order, with other mtimes and modes: the same names and contents are the same archive
    elsewhere = tmp_path / "copy"
    for run in runs:
        shutil.copytree(run, elsewhere / run.name)
    for f in elsewhere.rglob("*.jsonl"):
        f.chmod(0o600)
    second = pack(sorted(elsewhere.iterdir(), reverse=True), tmp_path / "b")
    assert first.name == second.name and first.read_bytes() == second.read_bytes()
    header = first.read_bytes()[:10]  # gzip: no file name (flags 0) and no time (mtime 0), whenever packed
    assert header[3] == 0 and header[4:8] == b"\0\0\0\0"

    members = _members(first)
    manifest_bytes = members.pop("manifest.json")
    assert first.name == f"evidence-{hashlib.sha256(manifest_bytes).hexdigest()[:16]}.tar.gz"
    manifest = json.loads(manifest_bytes)
    assert manifest["format"] == 1 and manifest["arena_version"]
    for entry, run in zip(manifest["runs"], runs, strict=True):
        meta = json.loads((run / "meta.json").read_text())
        files = _files(run)
        # recomputed here as `sha256sum` lines in sorted order would give it, without arena's code
        lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {rel}\n" for rel, data in sorted(files.items()))
        assert entry == {"name": cell_name(run), "arena": meta["arena"], "adapter": meta["adapter"], "model": meta["model"],
                         "files": len(files), "sha256": hashlib.sha256(lines.encode()).hexdigest()}
        assert run_digest(run) == (entry["sha256"], entry["files"])
    assert set(members) == {f"runs/{cell_name(r)}/{rel}" for r in runs for rel in _files(r)}

    with tarfile.open(first) as tar:
        headers = {(m.mtime, m.uid, m.gid, m.uname, m.gname, m.mode) for m in tar.getmembers()}
    assert headers == {(0, 0, 0, "", "", 0o644)}
    (runs[0] / "traces" / "extra.jsonl").write_text("{}\n")
    assert pack(runs, tmp_path / "c").name != first.name  # another content, another name


def test_a_tampered_trace_is_named_and_nothing_is_unpacked(runs, tmp_path):
    archive = pack(runs, tmp_path / "evidence")
    members = _members(archive)
    trace = next(n for n in members if n.startswith(f"runs/{cell_name(runs[1])}/traces/"))
    members[trace] = members[trace].replace(b'"passed"', b'"failed"', 1) + b"\n"
    _repack(archive, members)  # under the same name: its manifest (and so its name) is untouched
    with pytest.raises(ArchiveError, match=f"run directory {cell_name(runs[1])} does not match the manifest") as caught:
        unpack(archive, tmp_path / "out")
    assert "\n" not in str(caught.value)
    assert list((tmp_path / "out" / "runs").iterdir()) == []

    del members[trace]  # a file missing: said with the counts
    _repack(archive, members)
    count = len(_files(runs[1]))
    with pytest.raises(ArchiveError, match=f"{cell_name(runs[1])} does not match the manifest: "
                                           f"it holds {count - 1} files, the manifest says {count}"):
        unpack(archive, tmp_path / "out")


def test_a_manifest_altered_to_fit_is_caught_by_the_archive_name(runs, tmp_path):
    archive = pack(runs, tmp_path / "evidence")
    members = _members(archive)
    meta = f"runs/{cell_name(runs[0])}/meta.json"
    members[meta] = members[meta].replace(b"vanilla", b"vanillb")
    (tmp_path / "x" / cell_name(runs[0])).mkdir(parents=True)
    for name, data in members.items():
        if name.startswith(f"runs/{cell_name(runs[0])}/"):
            target = tmp_path / "x" / name.removeprefix("runs/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    manifest = json.loads(members["manifest.json"])
    manifest["runs"][0]["sha256"] = run_digest(tmp_path / "x" / cell_name(runs[0]))[0]
    members["manifest.json"] = json.dumps(manifest).encode()
    _repack(archive, members)
    with pytest.raises(ArchiveError, match="does not match the archive's name"):
        unpack(archive, tmp_path / "out")
    renamed = archive.rename(tmp_path / "evidence" / "mine.tar.gz")  # renamed: only the manifest vouches for it
    unpack(renamed, tmp_path / "out")


def _evil(tmp_path: Path, make: Callable[[tarfile.TarFile], None]) -> Path:
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        make(tar)
    return path


def _file(tar: tarfile.TarFile, name: str, data: bytes = b"x") -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _special(kind: bytes, name: str, target: str = "") -> Callable[[tarfile.TarFile], None]:
    def make(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = kind, target
        tar.addfile(info)
    return make


@pytest.mark.parametrize("make", [
    lambda tar: _file(tar, "../escaped"),
    lambda tar: _file(tar, "runs/r/../../../escaped"),
    lambda tar: _file(tar, "/tmp/escaped-absolute"),
    lambda tar: _file(tar, "elsewhere.txt"),
    _special(tarfile.SYMTYPE, "runs/r/link", "/etc/passwd"),
    _special(tarfile.LNKTYPE, "runs/r/hard", "../../escaped"),
    _special(tarfile.CHRTYPE, "runs/r/device"),
    _special(tarfile.FIFOTYPE, "runs/r/fifo"),
], ids=["dotdot", "dotdot-inside", "absolute", "outside-runs", "symlink", "hardlink", "device", "fifo"])
def test_unsafe_members_are_refused_before_anything_is_written_outside(tmp_path, make):
    archive = _evil(tmp_path, make)
    out = tmp_path / "deep" / "out"
    with pytest.raises(ArchiveError, match="refused member"):
        unpack(archive, out)
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "deep" / "escaped").exists()
    assert not Path("/tmp/escaped-absolute").exists()
    assert [p.name for p in out.iterdir()] == ["runs"] and list((out / "runs").iterdir()) == []


@pytest.mark.parametrize("content, says", [
    (b"not an archive at all\n", "not a readable evidence archive"),
    (b"\x1f\x8b\x08\x00garbage", "not a readable evidence archive"),
    (None, "holds no manifest.json"),
    (b'{"format": 1}', "manifest.json cannot be read"),
    (b'{"format": 9, "arena_version": "9.0", "runs": []}', "format 9"),
    (b'{"format": 1, "arena_version": "0", "runs": [{"name": "..", "arena": "a", "adapter": "b", "model": "c", '
     b'"files": 0, "sha256": ""}]}', "which is not a name"),
])
def test_a_foreign_or_damaged_archive_is_one_line(tmp_path, content, says):
    path = tmp_path / "x.tar.gz"
    if content is None or content.startswith(b"{"):
        with tarfile.open(path, "w:gz") as tar:
            _file(tar, "manifest.json" if content else "runs/r/meta.json", content or b"{}")
    else:
        path.write_bytes(content)
    with pytest.raises(ArchiveError, match=says) as caught:
        unpack(path, tmp_path / "out")
    assert "\n" not in str(caught.value)


def test_a_truncated_archive_is_refused(runs, tmp_path):
    archive = pack(runs, tmp_path / "evidence")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(ArchiveError, match="not a readable evidence archive"):
        unpack(cut, tmp_path / "out")


def test_unpacking_again_is_fine_and_a_different_run_directory_under_the_same_name_is_not(runs, tmp_path):
    archive = pack(runs, tmp_path / "evidence")
    out = tmp_path / "reports"
    (out / "runs" / "older-run").mkdir(parents=True)  # what else the folder holds stays, and is not returned
    unpack(archive, out)
    unpack(archive, out)
    assert resolve_runs([archive, runs[0].parent], out) == [out / "runs" / cell_name(r) for r in runs] + [runs[0].parent]
    assert (out / "runs" / "older-run").is_dir()
    trace = next((out / "runs" / cell_name(runs[0]) / "traces").iterdir())
    trace.write_text(trace.read_text() + "\n")
    with pytest.raises(ArchiveError, match=f"{cell_name(runs[0])} already exists and differs"):
        unpack(archive, out)
    with pytest.raises(ArchiveError, match="no such run folder or evidence archive"):
        resolve_runs([tmp_path / "missing"], out)


def test_an_interrupted_pack_leaves_nothing_under_any_name(runs, tmp_path):
    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pack(runs, tmp_path / "evidence", on_progress=interrupt)
    assert list((tmp_path / "evidence").iterdir()) == []


def test_a_run_directory_that_changes_while_packed_is_an_error(runs, tmp_path):
    def change_the_next(done: int, total: int) -> None:
        (runs[1] / "summary.json").write_text("{}")

    with pytest.raises(ArchiveError, match=f"{runs[1].name} changed while it was being packed"):
        pack(runs, tmp_path / "evidence", on_progress=change_the_next)
    assert list((tmp_path / "evidence").iterdir()) == []


def test_packing_refuses_what_is_not_one_set_of_run_directories(runs, tmp_path):
    with pytest.raises(ArchiveError, match="no run directories"):
        pack([], tmp_path / "e")
    other = tmp_path / "other" / runs[0].name.replace(runs[0].name[:15], "20000101-000000")  # the cell, another time
    shutil.copytree(runs[0], other)
    with pytest.raises(ArchiveError, match=f"two run directories of one cell, '{cell_name(runs[0])}'"):
        pack([runs[0], other], tmp_path / "e")
    assert pack([runs[0], runs[0].parent / runs[0].name], tmp_path / "e").is_file()  # the same one twice: once
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ArchiveError, match="cannot pack run directories into"):
        pack(runs, tmp_path / "a-file")
    (runs[0] / "traces" / "link").symlink_to("/etc/passwd")
    with pytest.raises(ArchiveError, match="not a regular file or folder"):
        pack(runs, tmp_path / "e")


def test_matrix_reads_an_archive_as_it_reads_the_folder(made, tmp_path):
    """`--archive` packs the matrix's run directories; `--runs ARCHIVE --out OUT` unpacks them into OUT/runs and
    writes the same matrix.md and matrix.json as from the folder (run from folders where both are `runs/`)."""
    folder, again = tmp_path / "folder", tmp_path / "again"
    shutil.copytree(made / "reports" / "runs", folder / "runs")
    r = arena_cli("matrix", "--runs", "runs", "--out", ".", "--archive", "../evidence", cwd=folder)
    assert r.returncode == 0, r.stderr[-3000:]
    [archive] = (tmp_path / "evidence").iterdir()
    assert f"packed 2 run directories into ../evidence/{archive.name}" in r.stderr
    assert archive.read_bytes() == pack(sorted((folder / "runs").iterdir()), tmp_path / "direct").read_bytes()

    again.mkdir()
    r = arena_cli("matrix", "--runs", f"../evidence/{archive.name}", "--out", ".", "--archive", "../repacked",
                  cwd=again)
    assert r.returncode == 0, r.stderr[-3000:]
    for name in ("matrix.md", "matrix.json"):  # the same, each run directory named by its cell
        expected = (folder / name).read_text()
        for run in (folder / "runs").iterdir():
            expected = expected.replace(run.name, cell_name(run))
        assert (again / name).read_text() == expected, name
    assert {cell_name(p): _files(p) for p in (folder / "runs").iterdir()} == \
        {p.name: _files(p) for p in (again / "runs").iterdir()}
    [repacked] = (tmp_path / "repacked").iterdir()
    assert repacked.name == archive.name and repacked.read_bytes() == archive.read_bytes()


def test_matrix_says_what_is_wrong_with_an_archive_in_one_line(made, tmp_path):
    archive = pack(sorted((made / "reports" / "runs").iterdir()), tmp_path / "evidence")
    members = _members(archive)
    trace = next(n for n in members if "/traces/" in n)
    _repack(archive, {**members, trace: members[trace] + b"{}\n"}, into=tmp_path / archive.name)
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "a-file").write_text("")
    for args, says in [
        (["--runs", str(tmp_path / archive.name)], f"run directory {trace.split('/')[1]} does not match the manifest"),
        (["--runs", str(tmp_path / "notes.txt")], "is not a readable evidence archive"),
        (["--runs", str(tmp_path / "missing.tar.gz")], "no such directory: "),
        (["--runs", str(archive), "--archive", str(tmp_path / "a-file")], "--archive"),
    ]:
        r = arena_cli("matrix", *args, "--out", str(tmp_path / "out"), cwd=tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("arena: error: ") and says in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
