"""The release machinery, read rather than run: the GitHub Actions workflows, LICENSE and CHANGELOG.md.

The workflows cannot run from here, so each is parsed (yaml.safe_load) and held to what it must do: CI runs
`.ci/run` and keeps the evidence archive, Pages deploys the site with the permissions Pages needs, a tag publishes
`pause-arena` by trusted publishing (never a password or token) and attaches the evidence and the site. Every
`arena ...` command the workflows (and the docs' rebuild recipe) run must parse with the real CLI: each command
and option is looked up in that command's --help.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EVIDENCE_OUT = "${{ github.workspace }}/evidence"


@cache
def workflow(name: str) -> dict[str, Any]:
    parsed = yaml.safe_load((WORKFLOWS / name).read_text())
    assert isinstance(parsed, dict), f"{name} is not a mapping"
    return parsed


def triggers(wf: dict[str, Any]) -> dict[str, Any]:
    """The `on:` mapping (YAML 1.1 reads the bare key `on` as True)."""
    on = wf.get("on", wf.get(True))
    assert isinstance(on, dict), "triggers are written as a mapping"
    return {event: spec or {} for event, spec in on.items()}


def steps(wf: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for job_name, job in wf["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, step


def uses(step: dict[str, Any], action: str) -> bool:
    return str(step.get("uses", "")).split("@")[0] == action


def permissions(wf: dict[str, Any], job: str) -> dict[str, str]:
    """What a job's token may do: its own `permissions`, else the workflow's."""
    granted = wf["jobs"][job].get("permissions", wf.get("permissions"))
    assert isinstance(granted, dict), f"job {job}: permissions are listed (never the default, never write-all)"
    return granted


def job_of(wf: dict[str, Any], action: str) -> str:
    (found,) = {job for job, step in steps(wf) if uses(step, action)}
    return found


def command_lines(script: str) -> Iterator[list[str]]:
    """Each simple command of a shell script, as words (continuations joined, comments dropped)."""
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True  # `evidence/evidence-*.tar.gz`, `--out=site` stay one word each
        words = list(lexer)
        command: list[str] = []
        for word in words + [";"]:
            if word in (";", "&&", "||", "|"):
                if command:
                    yield command
                command = []
            else:
                command.append(word)


def arena_commands(script: str) -> Iterator[list[str]]:
    """Every `arena <command> ...` in a script (also after `uv run ...`): the words from the command on."""
    for words in command_lines(script):
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value before the command
            words = words[1:]
        if "arena" in words[:-1] and words[0] in ("arena", "uv", "python", "python3"):
            yield words[words.index("arena") + 1:]


def workflow_arena_commands() -> list[tuple[str, list[str]]]:
    return [(f"{path.name}: {' '.join(cmd)}", cmd) for path in sorted(WORKFLOWS.glob("*.yml"))
            for _, step in steps(workflow(path.name)) for cmd in arena_commands(str(step.get("run", "")))]


def docs_rebuild_commands() -> list[tuple[str, list[str]]]:
    """The commands of each doc's "Rebuilding the site from an archive" section."""
    found = []
    for doc in ("methodology.md", "maintainers.md"):
        text = (ROOT / "docs" / doc).read_text()
        section = re.search(r"^##+ [\w. ]*Rebuilding the site from an archive\n(.*?)(?=^## )", text + "\n## ",
                            re.MULTILINE | re.DOTALL)
        assert section, f"docs/{doc} has a section 'Rebuilding the site from an archive'"
        for block in re.findall(r"^```bash\n(.*?)^```", section.group(1), re.MULTILINE | re.DOTALL):
            found += [(f"docs/{doc}: {' '.join(cmd)}", cmd) for cmd in arena_commands(block)]
    return found


def readme_commands() -> list[tuple[str, list[str]]]:
    """The commands of the README's bash blocks (the quick start's and "Using it"'s)."""
    blocks = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(), re.MULTILINE | re.DOTALL)
    return [(f"README.md: {' '.join(cmd)}", cmd) for block in blocks for cmd in arena_commands(block)]


@cache
def cli_help(command: str) -> str:
    """`python -m arena <command> --help`, wide enough that no option name is wrapped."""
    env = {**os.environ, "COLUMNS": "250", "TERM": "dumb", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "arena", command, "--help"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, f"`arena {command} --help` exits {done.returncode}: {done.stderr.strip()[-300:]}"
    return done.stdout


def assert_parses(cmd: list[str]) -> None:
    command, *rest = cmd
    assert not command.startswith("-"), f"no command in `arena {' '.join(cmd)}`"
    text = cli_help(command)
    for word in rest:
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), \
                f"`arena {command} --help` has no {option}"


# -- every arena command the workflows and the docs run parses with the real CLI --------------------------------

def test_the_workflows_run_arena_commands():
    commands = [cmd for _, cmd in workflow_arena_commands()]
    assert ["site", "--runs", "evidence/evidence-*.tar.gz", "--out", "site"] in commands


@pytest.mark.parametrize("cmd", [c for _, c in workflow_arena_commands()], ids=[i for i, _ in workflow_arena_commands()])
def test_a_workflows_arena_command_parses(cmd):
    assert_parses(cmd)


@pytest.mark.parametrize("cmd", [c for _, c in docs_rebuild_commands()], ids=[i for i, _ in docs_rebuild_commands()])
def test_a_docs_rebuild_command_parses(cmd):
    assert_parses(cmd)


@pytest.mark.parametrize("cmd", [c for _, c in readme_commands()], ids=[i for i, _ in readme_commands()])
def test_a_readme_command_parses(cmd):
    assert_parses(cmd)


def test_the_readme_regenerates_the_evidence_archive_and_names_site_and_view():
    commands = [cmd for _, cmd in readme_commands()]
    assert any(cmd[0] == "matrix" and "--archive" in cmd and "--findings" in cmd for cmd in commands)
    assert {"site", "view"} <= {cmd[0] for cmd in commands}


def test_the_docs_rebuild_recipe_covers_matrix_site_and_view():
    commands = {cmd[0] for _, cmd in docs_rebuild_commands()}
    assert {"matrix", "site", "view"} <= commands
    matrix = [cmd for _, cmd in docs_rebuild_commands() if cmd[0] == "matrix"]
    assert all("--runs" in cmd and "--out" in cmd for cmd in matrix)
    for doc in ("methodology.md", "maintainers.md"):
        assert re.search(r"^##+ [\w. ]*Where the evidence lives$", (ROOT / "docs" / doc).read_text(), re.MULTILINE)


def test_no_doc_points_at_pages_or_evidence_that_left_git():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for gone in ("reports/matrix.html", "reports/framework-", "committed evidence"):
            assert gone not in text, f"{path.name} still names {gone}"


# -- ci.yml ------------------------------------------------------------------------------------------------------

def test_ci_runs_dot_ci_run_on_push_and_pull_request():
    wf = workflow("ci.yml")
    assert {"push", "pull_request"} <= set(triggers(wf))
    runs = [str(step["run"]).strip() for _, step in steps(wf) if "run" in step]
    assert ".ci/run" in runs
    assert os.access(ROOT / ".ci" / "run", os.X_OK)


def test_ci_uses_python_311_and_node_20_on_ubuntu():
    wf = workflow("ci.yml")
    job = wf["jobs"][job_of(wf, "actions/setup-python")]
    assert str(job["runs-on"]).startswith("ubuntu")
    (python,) = [s for _, s in steps(wf) if uses(s, "actions/setup-python")]
    (node,) = [s for _, s in steps(wf) if uses(s, "actions/setup-node")]
    assert str(python["with"]["python-version"]) == "3.11" and str(node["with"]["node-version"]) == "20"


def test_ci_keeps_the_evidence_archive_the_full_matrix_writes():
    wf = workflow("ci.yml")
    job_name = job_of(wf, "actions/upload-artifact")
    env = {**wf.get("env", {}), **wf["jobs"][job_name].get("env", {})}
    assert env.get("ARENA_EVIDENCE_OUT") == EVIDENCE_OUT
    (upload,) = [s for _, s in steps(wf) if uses(s, "actions/upload-artifact")]
    assert upload["with"]["name"] == "evidence" and upload["with"]["path"] == EVIDENCE_OUT


# -- pages.yml ---------------------------------------------------------------------------------------------------

def test_pages_builds_on_main_and_by_hand():
    on = triggers(workflow("pages.yml"))
    assert on["push"]["branches"] == ["main"] and "workflow_dispatch" in on


def test_pages_deploys_the_site_with_the_permissions_pages_needs():
    wf = workflow("pages.yml")
    deploy = job_of(wf, "actions/deploy-pages")
    granted = permissions(wf, deploy)
    assert granted.get("pages") == "write" and granted.get("id-token") == "write"
    assert wf["jobs"][deploy]["environment"]["name"] == "github-pages"
    (upload,) = [s for _, s in steps(wf) if uses(s, "actions/upload-pages-artifact")]
    built = [cmd for _, cmd in workflow_arena_commands() if cmd[0] == "site"]
    assert built and all(cmd[cmd.index("--out") + 1] == upload["with"]["path"] for cmd in built)
    # the archive the site is built from: one clean source, the release's asset
    script = "\n".join(str(s.get("run", "")) for _, s in steps(wf))
    assert "gh release download" in script and "evidence-*.tar.gz" in script


def test_pages_runs_the_site_command_as_documented():
    runs = [str(s.get("run", "")) for _, s in steps(workflow("pages.yml"))]
    assert any(r.startswith("uv run --locked --extra all arena site --runs ") for r in runs)


# -- release.yml -------------------------------------------------------------------------------------------------

def test_release_runs_on_a_tag_naming_pyprojects_version():
    on = triggers(workflow("release.yml"))
    assert set(on) == {"push"} and "branches" not in on["push"]
    patterns = on["push"]["tags"]
    version = PYPROJECT["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), "pyproject's version is MAJOR.MINOR.PATCH"
    assert all(fnmatch.fnmatchcase(f"v{version}", p) for p in patterns)
    assert not any(fnmatch.fnmatchcase(version, p) for p in patterns), "a tag is v<version>"
    script = "\n".join(str(s.get("run", "")) for _, s in steps(workflow("release.yml")))
    assert '"v$version"' in script and "GITHUB_REF_NAME" in script  # and the workflow checks it is the version


def test_release_builds_wheel_and_sdist_with_uv():
    wf = workflow("release.yml")
    build_jobs = {job for job, s in steps(wf) if str(s.get("run", "")).strip() == "uv build"}
    assert build_jobs, "a step runs `uv build` (wheel and sdist)"
    uploads = [s["with"] for job, s in steps(wf) if job in build_jobs and uses(s, "actions/upload-artifact")]
    assert any(u["name"] == "dist" and str(u["path"]).rstrip("/") == "dist" for u in uploads)


def test_release_publishes_by_trusted_publishing_without_a_secret():
    wf = workflow("release.yml")
    publish = job_of(wf, "pypa/gh-action-pypi-publish")
    job = wf["jobs"][publish]
    assert permissions(wf, publish).get("id-token") == "write"
    environment = job["environment"]
    assert (environment["name"] if isinstance(environment, dict) else environment) == "pypi"
    (step,) = [s for _, s in steps(wf) if uses(s, "pypa/gh-action-pypi-publish")]
    given = set((step.get("with") or {}))
    assert not given & {"password", "user", "username", "token", "api-token"}, given
    assert "secrets." not in (WORKFLOWS / "release.yml").read_text()
    assert PYPROJECT["project"]["name"] == "pause-arena"
    assert set(job["needs"]) >= {"build"}


def test_release_attaches_the_evidence_archive_and_the_zipped_site():
    wf = workflow("release.yml")
    script = "\n".join(str(s.get("run", "")) for _, s in steps(wf))
    create = [c for c in command_lines(script) if c[:3] == ["gh", "release", "create"]]
    assert create, "a step creates the GitHub release"
    assets = create[0]
    assert any(a.endswith("evidence-*.tar.gz") for a in assets) and any(a.endswith("site-*.zip") for a in assets)
    assert any(a.startswith("dist/") for a in assets)
    assert permissions(wf, next(j for j, s in steps(wf) if "gh release create" in str(s.get("run", "")))) \
        .get("contents") == "write"
    # the evidence is ci.yml's, read with no more than `actions: read`
    (download,) = [s for _, s in steps(wf) if uses(s, "actions/download-artifact") and "run-id" in s.get("with", {})]
    assert download["with"]["name"] == "evidence"
    assert permissions(wf, job_of_step(wf, download)).get("actions") == "read"


def job_of_step(wf: dict[str, Any], wanted: dict[str, Any]) -> str:
    return next(job for job, step in steps(wf) if step is wanted)


def test_no_workflow_may_do_everything():
    for path in sorted(WORKFLOWS.glob("*.yml")):
        wf = workflow(path.name)
        assert isinstance(wf.get("permissions"), dict), f"{path.name} sets its token's permissions"
        for job in wf["jobs"]:
            permissions(wf, job)  # a mapping for every job: never the default, never `write-all`


# -- LICENSE and CHANGELOG.md ------------------------------------------------------------------------------------

def test_the_license_is_mit_as_pyproject_says():
    assert PYPROJECT["project"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.splitlines()[0] == "MIT License"
    assert re.search(r"^Copyright \(c\) 2026 the arena authors$", text, re.MULTILINE)
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_changelog_has_an_unreleased_section_first():
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings and headings[0] == "[Unreleased]"
    assert len(text.splitlines()) <= 200
