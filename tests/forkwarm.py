"""An adapter whose fork server must skip a preload module it cannot import, run its `warm()` once and build the
deferred pydantic model it names in `complete` (skipping the names it cannot find), and whose forked workers must
use their own item's temporary folder although the server asked for its own first (as crewai does at import),
and start no subprocess the server could have run once for all of them."""

from __future__ import annotations

import os
import subprocess
import tempfile

from pydantic import BaseModel, ConfigDict

from arena_builtins.adapters.vanilla import VanillaAdapter

WARMED: dict[str, object] = {}


class Deferred(BaseModel):
    """A model whose schema its library leaves to its first use (as the openai SDK, LiteLLM and google-genai do)."""

    model_config = ConfigDict(defer_build=True)
    text: str


class WarmedInServer(VanillaAdapter):
    preload = ("tests.forkwarm", "arena_no_such_module_for_tests", *VanillaAdapter.preload)
    complete = ("arena_no_such_module_for_tests.Model", "tests.forkwarm.NoSuchModel", "tests.forkwarm.Deferred")

    @staticmethod
    def warm() -> None:
        WARMED["pid"] = os.getpid()
        WARMED["tmp"] = tempfile.gettempdir()  # tempfile keeps what it found first

    async def start(self, ctx):  # type: ignore[no-untyped-def]
        if WARMED.get("pid") in (None, os.getpid()):
            raise RuntimeError(f"not warmed in the fork server: {WARMED}")
        if not Deferred.__pydantic_complete__:
            raise RuntimeError("a deferred model left for every worker to build (not completed in the fork server)")
        if tempfile.gettempdir() != os.environ["TMPDIR"]:
            raise RuntimeError(f"the server's temporary folder, not the item's: {tempfile.gettempdir()}")
        from arena.worker import deathsig

        if not deathsig.libc.cache_info().hits:  # the worker asked for it at its start: the server's, inherited
            raise RuntimeError("libc looked up again in the child (ldconfig -p run per worker)")
        from openai._base_client import platform_headers

        if not platform_headers.cache_info().currsize:  # built by the SDK's first request: rehearsed in the server
            raise RuntimeError("the SDK's first request was not rehearsed in the fork server")
        started: list[object] = []
        original = subprocess.Popen.__init__

        def record(self, args, *more, **kwargs):  # type: ignore[no-untyped-def]
            started.append(args)
            original(self, args, *more, **kwargs)

        subprocess.Popen.__init__ = record  # type: ignore[method-assign]  # this child only
        try:
            result = await super().start(ctx)  # the SDK's first request: it reports the platform (`uname -p`)
        finally:
            subprocess.Popen.__init__ = original  # type: ignore[method-assign]
        if started:
            raise RuntimeError(f"a leg started subprocesses the server could have run once: {started}")
        return result


class AlsoWarmedInServer(WarmedInServer):
    """Another adapter of this module that prepares a fork server as WarmedInServer does: it shares that server (its
    workers are warmed by the warm() the server ran, loaded as their own class)."""

    info = WarmedInServer.info.model_copy(update={"name": "also_warmed_in_server"})

    async def start(self, ctx):  # type: ignore[no-untyped-def]
        await super().start(ctx)  # raises unless the server warmed this worker
        raise RuntimeError("ran as AlsoWarmedInServer, warmed by its fork server")  # which class the worker ran


class PreparedOtherwise(WarmedInServer):
    """An adapter of this module whose server imports something else first: a server of its own."""

    preload = ("tests.forkwarm",)
