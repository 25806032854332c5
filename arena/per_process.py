"""A value built once per process, on first use, that a forked child builds again for itself.

For what is costly to build and must not cross a fork: a connection pool (a child must not use its parent's
connections), an open SQLite database. `lock` is reentrant, so a caller can hold it around using the value.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerProcess(Generic[T]):
    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._made: tuple[int, T] | None = None  # (the process that built it, the value)
        self.lock = threading.RLock()

    def get(self) -> T:
        with self.lock:
            if self._made is None or self._made[0] != os.getpid():
                self._made = (os.getpid(), self._make())
            return self._made[1]
