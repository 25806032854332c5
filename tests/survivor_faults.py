"""Faulty adapters whose paused run lives in a process that outlives the worker (issue 50, section 3).

Each looks durable to an arena that only asks "did the resume run in a new process and finish?": the paused run is
handed to a helper that leaves the worker's process group and session (a double fork with `setsid()` between), and
is fetched back from it by the next leg's worker. The harness must see the helper (a survivor of the closed or killed
leg, `no_process_survived`), and a crash must end it (the leg's cgroup, not only its process group).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import Any

from arena.types import Decision, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter

HELPER_TAG = "#pause-helper"  # the first words of the helper's command line: what a survivor's `cmd` shows

# argv: the journal's path, the socket to serve it on. Double-forks, leaving the session in between (its parent, the
# worker, may then exit or be killed: the helper is reparented, in no group of the worker's), reads the journal and
# removes it: from then on the paused run exists only in this process's memory. Serves it once, then exits.
_HELPER = HELPER_TAG + r"""
import os, socket, sys
journal, path = sys.argv[1], sys.argv[2]
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
data = open(journal, "rb").read()
os.unlink(journal)
server = socket.socket(socket.AF_UNIX)
server.bind(path + ".tmp")
os.rename(path + ".tmp", path)  # whole or not at all: the worker waits for it
server.listen(1)
server.settimeout(120)
conn, _ = server.accept()
conn.sendall(data)
conn.close()
"""


class HoldsPauseInAHelper(VanillaDurableAdapter):
    """The reference's journal, except that at each pause it leaves the disk for a detached helper's memory.

    A resume in a new process (the journal file gone) fetches it back from the helper, so the run "recovers" only
    because a process of the paused leg survived the worker; if the helper is gone (a crash that ended it), the
    resume fails and says so. With `--store` it behaves as the reference (the helper takes only a journal file).
    """

    info = VanillaDurableAdapter.info.model_copy(update={"name": "holds_pause_in_a_helper"})

    def _ended(self, result: LegResult) -> LegResult:
        result = super()._ended(result)
        journal = self._journal
        if result.status == "suspended" and isinstance(result.state, dict) and journal is not None \
                and journal.store.kind == "sqlite":
            path = _socket(result.state)
            subprocess.run([sys.executable, "-c", _HELPER, journal.where, path], check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while not os.path.exists(path) and time.monotonic() < deadline:
                time.sleep(0.01)
        return result

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        _fetch(state)
        return await super().resume(state, decision, ctx)

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        _fetch(state)
        return await super().continue_run(state, ctx)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        _fetch(state)
        return await super().add_input(state, text, ctx)


def _socket(state: dict[str, Any]) -> str:
    return f"{state['journal']}.{state['pause_id'][:12]}.sock"


def _fetch(state: dict[str, Any]) -> None:
    """Put the journal back on disk from the helper that holds it (nothing to do if it is there: a later leg's)."""
    journal = state.get("journal")
    if not isinstance(journal, str) or not os.path.isabs(journal) or os.path.exists(journal):  # a store's, or on disk
        return
    path = _socket(state)
    client = socket.socket(socket.AF_UNIX)
    try:
        client.settimeout(10)
        client.connect(path)
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    except OSError as exc:
        raise RuntimeError(f"the helper process that held the paused run is gone ({path}: "
                           f"{exc.strerror or type(exc).__name__})") from None
    finally:
        client.close()
    with open(journal, "wb") as f:
        f.write(data)
