"""meta.json, typed: what a run directory says about the run that made it, headed by its schema version.

Every key a run directory's meta.json may hold is a field here, with its type; a key the model does not know is an
error when the harness writes it (a typo would otherwise reach every reader as a silent None). Each field but the
run's identity is optional: run directories written before a field existed are still read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from arena.run_id import RunId

# 1: the first typed meta.json (before it, run directories had no `schema_version`: read them as 0)
SCHEMA_VERSION = 1


class RunMeta(BaseModel):
    """A run directory's meta.json."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 0
    # who ran what (arena/run_id.py's labels) and with which model profile
    arena: str
    adapter: str
    model: str
    target: str | None = None  # the registered name, `name@release`, or `module:Class` the run loaded
    # what the adapter declared (claims, shown as declared)
    framework: str | None = None
    framework_version: str | None = None
    framework_source: dict[str, Any] | None = None  # `name@path:` / `name@git+`: the checkout or ref it ran
    pause_mechanism: str | None = None
    pause_kind: str | None = None
    capabilities: dict[str, Any] | None = None
    declared_capabilities: dict[str, Any] | None = None
    body_pause: str | None = None
    body_pause_mechanism: str | None = None
    stream: bool | None = None  # a streamed run
    stream_mechanism: str | None = None
    store: dict[str, Any] | None = None  # a run on a server store: which server, and the framework's store for it
    upgrade: dict[str, Any] | None = None  # a run across an upgrade: which releases
    not_measured: dict[str, str] | None = None  # items the arena left out for this adapter, each with why
    # how the harness ran it
    restart_between_legs: bool | None = None
    base_url: str | None = None
    model_gateway: str | None = None
    process_tracking: str | None = None
    pause_dwell_s: float | None = None
    quiet_s: float | None = None
    worker_start: str | None = None
    concurrency: int | None = None
    items: list[str] | None = None
    epochs: int | None = None
    seed: int | None = None
    git_commit: str | None = None
    # its life: running, complete or interrupted, by which process, resumed when
    started_at: str | None = None
    ended_at: str | None = None
    status: str | None = None
    interrupted_by: str | None = None
    resumed: list[str] | None = None
    pid: int | None = None
    pid_start: int | None = None
    leftovers_at_end: list[str] | None = None  # threads an in-process adapter left running at the end

    @property
    def run_id(self) -> RunId:
        return RunId.parse(self.arena, self.adapter, self.model)


def checked(meta: dict[str, Any]) -> dict[str, Any]:
    """The meta as it is written (its keys in the order given), once the model has accepted every key and type:
    a RunMeta validation error otherwise."""
    RunMeta.model_validate(meta)
    return meta
