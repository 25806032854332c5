"""An adapter whose framework starts a thread when it is imported: not safe to fork after (see forkserver.py)."""

from __future__ import annotations

import threading
import time

from arena_builtins.adapters.vanilla import VanillaAdapter

_KEEPER = threading.Thread(target=time.sleep, args=(3600,), name="telemetry-exporter", daemon=True)
_KEEPER.start()


class ThreadAtImport(VanillaAdapter):
    preload = ("tests.forkunsafe",)
