"""The local PostgreSQL and Redis servers that `--store postgres|redis` keeps paused runs in.

Real servers from the distribution's packages, started by the project itself (`scripts/services up|down|status`,
which is this module's command line): each with a data directory of its own and a port on 127.0.0.1, no systemd,
stopped cleanly. The same code starts a private server for an item that restarts its store during the pause
(`arena/stores.py`), so restarting it touches no other item's state.

PostgreSQL refuses to run as root: as root its commands run as the distribution's `postgres` user. Redis keeps an
append-only file (`appendonly yes`), as a Redis holding sessions does, so what it held survives a clean restart.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError

POSTGRES_PORT = 54329
REDIS_PORT = 63799
USER = "arena"  # the PostgreSQL role the servers are made with (trust authentication, loopback only)


class ServiceError(ArenaError, RuntimeError):
    """A server could not be found, started or stopped: one line saying which and why."""


def services_dir() -> Path:
    """Where the project's servers keep their data: $ARENA_SERVICES_DIR, else arena-services-<uid> in the temporary
    directory (a place the `postgres` user can reach when the servers are started as root)."""
    found = os.environ.get("ARENA_SERVICES_DIR")
    return Path(found) if found else Path(tempfile.gettempdir()) / f"arena-services-{os.getuid()}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _pg_bin() -> Path:
    """The PostgreSQL server's binaries: $ARENA_PG_BIN, else the newest /usr/lib/postgresql/<version>/bin."""
    if os.environ.get("ARENA_PG_BIN"):
        return Path(os.environ["ARENA_PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise ServiceError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): "
                       "apt-get install postgresql, or set ARENA_PG_BIN")


def _run(cmd: list[str], *, as_user: str | None = None, timeout: float = 120.0) -> str:
    if as_user is not None:
        cmd = ["runuser", "-u", as_user, "--", *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise ServiceError(f"{Path(cmd[4 if as_user else 0]).name} failed: {lines[-1].strip() if lines else done.returncode}")
    return done.stdout


@dataclass
class PostgresServer:
    """One PostgreSQL server: its data directory and port."""

    datadir: Path
    port: int = POSTGRES_PORT
    kind = "postgres"

    @property
    def _user(self) -> str | None:
        """As root, the server runs as the distribution's `postgres` user (it refuses root)."""
        return "postgres" if os.geteuid() == 0 else None

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def version(self) -> str:
        return _run([str(_pg_bin() / "postgres"), "--version"]).strip().replace("postgres (PostgreSQL) ", "PostgreSQL ")

    def start(self) -> None:
        pg = _pg_bin()
        self.datadir.mkdir(parents=True, exist_ok=True)
        if self._user is not None:  # it must reach its data directory: the directories above it open to traverse
            for parent in self.datadir.parents:
                if parent.owner() == "root" and str(parent).startswith(tempfile.gettempdir() + os.sep):
                    os.chmod(parent, parent.stat().st_mode | 0o711)
            shutil.chown(self.datadir, self._user, self._user)
            os.chmod(self.datadir, 0o700)
        if not (self.datadir / "PG_VERSION").exists():
            _run([str(pg / "initdb"), "-D", str(self.datadir), "-U", USER, "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--no-instructions"], as_user=self._user)
        if self.running():
            return
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.datadir} -c max_connections=300"
        _run([str(pg / "pg_ctl"), "-D", str(self.datadir), "-o", options, "-l", str(self.datadir / "server.log"),
              "-w", "-t", "60", "start"], as_user=self._user)

    def stop(self) -> None:
        if self.running():
            _run([str(_pg_bin() / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "-w", "stop"], as_user=self._user)

    def running(self) -> bool:
        if not (self.datadir / "PG_VERSION").exists():
            return False
        done = subprocess.run(
            (["runuser", "-u", self._user, "--"] if self._user else []) +
            [str(_pg_bin() / "pg_ctl"), "-D", str(self.datadir), "status"], capture_output=True)
        return done.returncode == 0


@dataclass
class RedisServer:
    """One Redis server: its data directory (append-only file, pid file, log) and port."""

    datadir: Path
    port: int = REDIS_PORT
    kind = "redis"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @staticmethod
    def _binary(name: str) -> str:
        found = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if found is None:
            raise ServiceError(f"Redis is not installed (no {name}): apt-get install redis-server")
        return found

    def version(self) -> str:
        out = _run([self._binary("redis-server"), "--version"])
        return "Redis " + next((w.split("=", 1)[1] for w in out.split() if w.startswith("v=")), out.strip())

    def start(self) -> None:
        self.datadir.mkdir(parents=True, exist_ok=True)
        if self.running():
            return
        _run([self._binary("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.datadir),
              "--daemonize", "yes", "--pidfile", str(self.datadir / "redis.pid"),
              "--logfile", str(self.datadir / "server.log"), "--appendonly", "yes", "--save", ""])
        deadline = time.monotonic() + 30
        while not self.running():
            if time.monotonic() > deadline:
                raise ServiceError(f"redis-server did not answer on port {self.port}; see {self.datadir / 'server.log'}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.running():
            subprocess.run([self._binary("redis-cli"), "-p", str(self.port), "shutdown"], capture_output=True)
            deadline = time.monotonic() + 30
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)

    def running(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False


Server = PostgresServer | RedisServer
KINDS = ("postgres", "redis")


def server(kind: str, datadir: Path | None = None, port: int | None = None) -> Server:
    """The project's server of that kind (its data under `services_dir()`), or one in `datadir` on `port`."""
    if kind == "postgres":
        return PostgresServer(datadir or services_dir() / "postgres", port or POSTGRES_PORT)
    if kind == "redis":
        return RedisServer(datadir or services_dir() / "redis", port or REDIS_PORT)
    raise ServiceError(f"unknown service {kind!r}; choose from {', '.join(KINDS)}")


def main(argv: list[str] | None = None) -> int:
    """`scripts/services up|down|status [postgres|redis ...]`: one line per server, non-zero on failure."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("up", "down", "status"):
        print("usage: scripts/services up|down|status [postgres] [redis]", file=sys.stderr)
        return 2
    command, kinds = args[0], args[1:] or list(KINDS)
    code = 0
    for kind in kinds:
        try:
            one = server(kind)
            if command == "up":
                one.start()
            elif command == "down":
                one.stop()
            state = "running" if one.running() else "stopped"
            print(f"{kind}: {state} on 127.0.0.1:{one.port} ({one.version()}, data in {one.datadir})"
                  + (f"; ARENA_{kind.upper()}_URL={one.url}" if state == "running" else ""))
            if command == "status" and state != "running":
                code = 1
        except (ServiceError, OSError, subprocess.SubprocessError) as exc:
            print(f"{kind}: {exc}", file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
