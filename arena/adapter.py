"""The adapter contract, declared in one place: the class every adapter subclasses.

`start` and `resume` are abstract; every other member the harness uses is declared here with its documented
default, so the harness reads an adapter's members directly (never by `getattr`/`hasattr`), and an adapter says
what it has by overriding them. Optional hooks that implement a channel (`add_input`, `continue_run`) raise
`HookNotSupported` by default: an adapter that declares such a channel without the hook is refused when it loads
(`check_adapter`), naming both, rather than failing inside an item.

A class written against the older protocol (a plugin with `info`, `start` and `resume` and no base class) is
taken as it is: `as_adapter` gives it this class's defaults beneath its own members.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from arena import channels
from arena.errors import ArenaError
from arena.types import AdapterInfo, Decision, DecisionSet, LegContext, LegResult

Environment = Literal["shared", "isolated"]


class HookNotSupported(ArenaError):
    """An optional adapter hook the adapter does not implement (its channel is not one it declares)."""


class AdapterContractError(ArenaError, ValueError):
    """An adapter class that does not keep the contract: said at load, naming what is missing."""


class Adapter(ABC):
    """One framework's own pause API, driven leg by leg.

    `start` runs the first leg of an item and returns a `LegResult` (`suspended` only when the framework itself
    stopped and holds a resumable state); `resume` continues that state with the human's `Decision` (or a
    `DecisionSet`, one per pending call). `info` declares the framework's pause channels: a claim the harness
    tests, never trusts.
    """

    info: AdapterInfo  # a class attribute of each adapter (a worker proxy's is its instance's)
    # where it stands in `arena list` and the reports (lower first)
    order: ClassVar[int] = 100
    # distributions that must be installed besides `info.framework`
    requires: ClassVar[tuple[str, ...]] = ()
    # "isolated": its framework cannot share the harness's environment; it runs in a worker of its own
    environment: ClassVar[Environment] = "shared"
    # whether items may run at once in one process: not when the framework keeps process-wide state bound to one
    # event loop (each item runs in an event loop of its own)
    concurrent: ClassVar[bool] = True
    # modules a fork server (or the harness, once per process) imports before the first item
    preload: ClassVar[tuple[str, ...]] = ()
    # "module:attr" pydantic models a fork server completes before it forks (their schema built once)
    complete: ClassVar[tuple[str, ...]] = ()
    # whether the adapter runs in the harness's process; False for a proxy to a worker process, whose
    # `terminate` ends what the item started
    in_process: ClassVar[bool] = True
    # a worker proxy only: kill the paused worker (SIGKILL) instead of closing it at a suspension, when a director
    # wants a crash during the pause (crash_recovery); an in-process adapter has no process of its own to kill
    kill_at_pause: bool = False
    killed: str | None = None  # what the latest such crash ended, as a trace says it (a worker proxy's)
    leg_pid: int | None = None  # the process that ran the latest leg: a worker proxy's spawned process

    @staticmethod
    def warm() -> None:
        """What the framework builds once per process, before the first item (a fork server's too): nothing."""

    @abstractmethod
    async def start(self, ctx: LegContext) -> LegResult:
        """Run the first leg of an item."""

    @abstractmethod
    async def resume(self, state: Any, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        """Continue a suspended leg's state with the human's decision."""

    async def add_input(self, state: Any, text: str, ctx: LegContext) -> Any:
        """The `input` channel: add `text` to the paused run without deciding anything; returns the state to
        resume. Not supported unless overridden."""
        raise HookNotSupported(f"{self.info.name} does not implement add_input (the `input` channel)")

    async def continue_run(self, state: Any, ctx: LegContext) -> LegResult:
        """The `recover` channel's `continue` way: continue a crashed run from what the framework persisted after
        the resume, without the decision. Not supported unless overridden."""
        raise HookNotSupported(f"{self.info.name} does not implement continue_run (`recover` with `continue`)")

    async def run_hook(self, hook: str, state: Any, *args: Any, ctx: LegContext) -> Any:
        """A channel's hook, by the name its registered channel gives it (`add_input`, `continue_run`, or a hook an
        arena's own channel adds), on the paused run's `state` with the channel's `args`: what a director calls, so
        that the hook reaches the adapter wherever it runs (a worker's proxy sends it over the wire, and the worker
        calls this). Returns what the hook returns: a `LegResult` when it runs a leg, else the state to resume.
        HookNotSupported when no registered channel has such a hook, or the adapter keeps this class's default."""
        if hook not in channel_hooks() or not type(self).implements(hook):
            raise HookNotSupported(f"{self.info.name} does not implement {hook} (no channel it declares has it)")
        method = getattr(self, hook)
        return await method(state, *args, ctx)

    async def aclose(self) -> None:
        """Release what the adapter holds once its item ended (clients, connections): nothing by default."""

    def terminate(self) -> None:
        """End, from any thread, whatever processes the adapter's item started (a hung item): only a proxy to a
        worker process can; an in-process adapter's threads cannot be ended, so nothing by default."""

    def crash(self) -> str:
        """Kill (SIGKILL) every process the adapter's legs started and say what was killed: only a proxy to a
        worker process can (an arena's crash point); an in-process adapter runs in the harness's own process."""
        raise HookNotSupported(f"{self.info.name} runs in the harness's process: it has no process to kill")

    async def close_worker(self) -> None:
        """Close the process that holds the paused run, when a director hands the run to another adapter: only a
        proxy to a worker process has one."""

    @classmethod
    def implements(cls, hook: str) -> bool:
        """Whether the class overrides an optional hook of this base class (its own or an ancestor's code)."""
        for klass in cls.__mro__:
            if klass is Adapter:
                return False
            if hook in vars(klass):
                return vars(klass)[hook] is not None  # a member set to None takes the hook away
        return False


# the old name of the contract, kept so plugins written against it keep working
ResumableRunner = Adapter

# a declared channel and the hooks that must implement it (beyond start/resume): checked when an adapter loads
_HOOKS_OF_WAYS = {"continue": "continue_run"}
_ADOPTED: dict[type, type[Adapter]] = {}  # an older-protocol class -> its Adapter, made once


def as_adapter(cls: object, name: str | None = None, discover: Callable[[], object] | None = None) -> type[Adapter]:
    """The class as an `Adapter`: itself when it subclasses it; an older-protocol class (`info`, `start`, `resume`,
    no base class) under this class's defaults, its own members first. Raises AdapterContractError naming what is
    missing (as `name`, the class's name by default), and checks its channels (`check_adapter`, with `discover`)."""
    what = name or (cls.__qualname__ if isinstance(cls, type) else repr(cls))
    if not isinstance(cls, type):
        raise AdapterContractError(f"{what} does not implement ResumableRunner (info, start, resume): not a class")
    if issubclass(cls, Adapter):
        adapter: type[Adapter] = cls
        abstract = sorted(unimplemented(cls))
        if abstract:
            raise AdapterContractError(f"{what} does not implement ResumableRunner (info, start, resume): "
                                       f"{', '.join(abstract)} {'is' if len(abstract) == 1 else 'are'} abstract")
    else:
        own = {member for klass in cls.__mro__ for member in vars(klass)}
        missing = [member for member in ("info", "start", "resume") if member not in own]
        if missing:
            raise AdapterContractError(f"{what} does not implement ResumableRunner (info, start, resume): it has no "
                                       f"{', '.join(missing)} (subclass arena.for_adapters.Adapter)")
        adapter = adopted(cls)
    check_adapter(adapter, discover)
    return adapter


def adopted(cls: type) -> type[Adapter]:
    """An older-protocol class under this class's defaults, its own members first (made once per class); an
    `Adapter` subclass as it is. No check: `as_adapter` checks, a worker takes what the harness checked."""
    if issubclass(cls, Adapter):
        return cls
    return _ADOPTED.get(cls) or _ADOPTED.setdefault(cls, type(cls.__name__, (cls, Adapter), {
        "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}))


def channel_hooks() -> frozenset[str]:
    """Every hook a registered channel has an adapter implement (what `run_hook` may call)."""
    return frozenset({hook for name in channels.names() for hook in (channels.require(name, "run_hook").hooks)}
                     | set(_HOOKS_OF_WAYS.values()))


def unimplemented(cls: type) -> frozenset[str]:
    """The abstract methods a class leaves unimplemented (what ABC would refuse to instantiate)."""
    return frozenset(vars(cls).get("__abstractmethods__", frozenset()))


def check_adapter(cls: type[Adapter], discover: Callable[[], object] | None = None) -> None:
    """Refuse a class whose declaration and code disagree: `info` is an AdapterInfo, each channel it declares is a
    registered one, and each channel's hook is implemented (`input` -> `add_input`, `recover` with `continue` ->
    `continue_run`). One error naming the channel and the hook. A channel not registered yet may be an arena's own:
    `discover` (the catalog's: load every installed arena, each registering its channels) runs once, and the
    registry is asked again."""
    info = next((vars(k)["info"] for k in cls.__mro__ if "info" in vars(k)), None)
    if not isinstance(info, AdapterInfo):
        raise AdapterContractError(f"{cls.__qualname__}: info must be an arena.types.AdapterInfo, not "
                                   f"{type(info).__name__} (declare the framework and its pause channels: "
                                   "info = AdapterInfo(name=..., framework=..., channels=(...)))")
    for channel in info.channels:
        spec = channels.get(channel.name)
        if spec is None and discover is not None:
            discover()
            discover, spec = None, channels.get(channel.name)
        if spec is None:
            raise AdapterContractError(f"{info.name} declares channel {channel.name!r}, which no arena registers "
                                       f"(known channels: {', '.join(channels.names())})")
        if channel.kind == "unsupported":
            continue
        hooks = [*spec.hooks, *(_HOOKS_OF_WAYS[w] for w in channel.ways if w in _HOOKS_OF_WAYS)]
        for hook in hooks:
            if not cls.implements(hook):
                way = f" with way {', '.join(channel.ways)}" if channel.ways else ""
                raise AdapterContractError(f"{info.name} declares the {channel.name!r} channel{way} but does not "
                                           f"implement {hook}() ({cls.__qualname__} keeps Adapter's default)")
