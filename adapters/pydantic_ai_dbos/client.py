"""DBOS, imported lazily and offline, and the configuration of the DBOS instance an item's legs launch.

dbos reads `DBOS__CLOUD` when it is imported: `load_dbos` sets it (and OpenTelemetry's switch) first, so importing
the adapter's package imports no dbos (the catalog imports every adapter class to list it)."""

from __future__ import annotations

import os
from typing import Any

AGENT_NAME = "arena_agent"  # DBOS step names derive from it (`arena_agent__model.request`)
APP_NAME = "arena_pydantic_ai_dbos"
# Pinned: DBOS recovers only the PENDING workflows of the running application version; left to DBOS, the version
# is a hash of the registered workflows' sources, which every process of an item must agree on.
APP_VERSION = "arena-pydantic_ai_dbos-1"

# Read by dbos when it is imported (`GlobalParams.dbos_cloud`), and by OpenTelemetry's SDK if anything starts it.
_TELEMETRY_ENV = {
    "DBOS__CLOUD": "false",
    "OTEL_SDK_DISABLED": "true",
}


def load_dbos() -> Any:
    """Import dbos lazily, with its cloud mode and OpenTelemetry off before the first import."""
    for key, value in _TELEMETRY_ENV.items():
        os.environ.setdefault(key, value)
    import dbos

    return dbos


def dbos_config(db_path: str | None, url: str | None = None) -> dict[str, Any]:
    """The DBOS configuration of one item: its SQLite system database (`db_path`), or with `url` its PostgreSQL one
    (`--store postgres`: the item's own database on the harness's server), nothing that leaves the machine."""
    return {
        "name": APP_NAME,
        "system_database_url": url if url is not None else f"sqlite:///{os.path.abspath(str(db_path))}",
        "application_version": APP_VERSION,
        "enable_otlp": False,  # no OTLP traces or logs (DBOS's default, made explicit)
        # DBOS logs its Conductor console URL at INFO (nothing connects to it), and warns at each item's agent
        # that its step names are registered again in this process (one item after another): errors only
        "log_level": "ERROR",
        # how often DBOS's notification listener polls SQLite: its thread is joined at `DBOS.destroy()`, which
        # otherwise waits up to the default 1 s at the end of every leg
        "notification_listener_polling_interval_sec": 0.05,
    }
