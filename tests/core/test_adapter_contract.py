"""The adapter contract is declared in one class (arena/adapter.py) and checked when an adapter loads."""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena import catalog, channels
from arena.adapter import Adapter, AdapterContractError, HookNotSupported, as_adapter, check_adapter
from arena.evaluation import UserError, select_adapters
from arena.for_adapters import AdapterInfo, Channel, LegResult
from arena.spec import ArenaSpec

ROOT = Path(__file__).resolve().parents[2]
ME = "tests.core.test_adapter_contract"


class _Base(Adapter):
    async def start(self, ctx: Any) -> LegResult:
        return LegResult.finished("done")

    async def resume(self, state: Any, decision: Any, ctx: Any) -> LegResult:
        return LegResult.finished("done")


class InputWithoutHook(_Base):
    info = AdapterInfo(name="no_add_input", framework="openai",
                       channels=(Channel(name="ask", kind="native"), Channel(name="input", kind="native")))


class ContinueWithoutHook(_Base):
    info = AdapterInfo(name="no_continue", framework="openai",
                       channels=(Channel(name="recover", kind="native", ways=("resume", "continue")),))


class UnknownChannel(_Base):
    info = AdapterInfo(name="unknown_channel", framework="openai", channels=(Channel(name="telepathy", kind="native"),))


class InputUnsupported(_Base):
    """Declared `unsupported`: the framework has no such way, so there is no hook to implement."""
    info = AdapterInfo(name="input_unsupported", framework="openai", channels=(Channel(name="input", kind="unsupported"),))


class WithHooks(_Base):
    info = AdapterInfo(name="with_hooks", framework="openai",
                       channels=(Channel(name="input", kind="native"),
                                 Channel(name="recover", kind="native", ways=("continue",))))

    async def add_input(self, state: Any, text: str, ctx: Any) -> Any:
        return state

    async def continue_run(self, state: Any, ctx: Any) -> LegResult:
        return LegResult.finished("continued")


class OldProtocol:
    """A plugin written against the protocol before the base class: no base, `info`, `start`, `resume`."""
    info = AdapterInfo(name="old_protocol", framework="openai", channels=(Channel(name="ask", kind="native"),))

    async def start(self, ctx: Any) -> LegResult:
        return LegResult.finished("old")

    async def resume(self, state: Any, decision: Any, ctx: Any) -> LegResult:
        return LegResult.finished("old")


class NoResume:
    info = OldProtocol.info

    async def start(self, ctx: Any) -> LegResult:
        return LegResult.finished("old")


@pytest.mark.parametrize("cls, channel, hook", [
    (InputWithoutHook, "'input' channel", "add_input()"),
    (ContinueWithoutHook, "'recover' channel with way resume, continue", "continue_run()"),
])
def test_a_declared_channel_without_its_hook_is_refused_at_load(cls, channel, hook):
    with pytest.raises(ValueError) as raised:
        catalog.load_target(f"{ME}:{cls.__name__}")
    assert channel in str(raised.value) and hook in str(raised.value)
    with pytest.raises(UserError, match=hook.replace("(", r"\(").replace(")", r"\)")):  # evaluate()'s path says the same
        select_adapters([cls])


def test_the_load_error_is_one_line_from_the_cli():
    done = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "--adapter",
                           f"{ME}:InputWithoutHook", "--item", "hitl-01"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "add_input()" in done.stderr and "'input' channel" in done.stderr, done.stderr


def test_a_channel_no_arena_registers_is_refused_at_load():
    with pytest.raises(ValueError, match="'telepathy', which no arena registers"):
        catalog.load_target(f"{ME}:UnknownChannel")


def test_unsupported_channels_and_implemented_hooks_load():
    assert catalog.load_target(f"{ME}:InputUnsupported") is InputUnsupported
    assert catalog.load_target(f"{ME}:WithHooks") is WithHooks
    assert WithHooks.implements("add_input") and WithHooks.implements("continue_run")
    assert not InputUnsupported.implements("add_input") and not Adapter.implements("add_input")


def test_hooks_say_not_supported_by_default():
    adapter = InputUnsupported()
    with pytest.raises(HookNotSupported, match="add_input"):
        asyncio.run(adapter.add_input(None, "note", None))
    with pytest.raises(HookNotSupported, match="continue_run"):
        asyncio.run(adapter.continue_run(None, None))
    with pytest.raises(HookNotSupported):
        adapter.crash()
    assert adapter.in_process and adapter.terminate() is None and asyncio.run(adapter.aclose()) is None


def test_a_class_of_the_old_protocol_keeps_working():
    adopted = catalog.load_target(f"{ME}:OldProtocol")
    assert issubclass(adopted, Adapter) and issubclass(adopted, OldProtocol)
    assert adopted is catalog.load_target(f"{ME}:OldProtocol")  # made once
    assert adopted.order == 100 and adopted.preload == () and adopted.info.name == "old_protocol"
    with pytest.raises(AdapterContractError, match="does not implement ResumableRunner .* it has no resume"):
        as_adapter(NoResume)


class NoResumeSubclass(Adapter):
    info = OldProtocol.info

    async def start(self, ctx: Any) -> LegResult:
        return LegResult.finished("half")


def test_a_subclass_that_leaves_a_leg_abstract_is_refused_at_load():
    with pytest.raises(ValueError, match="does not implement ResumableRunner .*: resume is abstract"):
        catalog.load_target(f"{ME}:NoResumeSubclass")


def test_every_built_in_adapter_subclasses_the_base_class():
    for name, entry in catalog.builtin_adapters().items():
        cls = entry.load()
        assert issubclass(cls, Adapter) and "Adapter" in [k.__name__ for k in cls.__mro__], name
        check_adapter(cls)


def test_an_arena_that_needs_an_unregistered_channel_is_refused():
    with pytest.raises(channels.ChannelError, match="arena 'odd' needs channel 'telepathy'"):
        ArenaSpec(name="odd", description="", instructions="", tools=[], functions={}, items=[], needs=("telepathy",))


def test_an_arena_can_register_a_channel_of_its_own():
    spec = channels.register(channels.ChannelSpec("elicitation_test", "a server asks the human through the client",
                                                   hooks=("add_input",), provider=ME))
    assert channels.register(spec) is spec  # the same spec again: harmless (a module imported twice)
    with pytest.raises(channels.ChannelError, match="already registered"):
        channels.register(channels.ChannelSpec("elicitation_test", "something else"))

    class Elicits(WithHooks):
        info = AdapterInfo(name="elicits", framework="openai", channels=(Channel(name="elicitation_test", kind="native"),))

    check_adapter(Elicits)
    ArenaSpec(name="elicit", description="", instructions="", tools=[], functions={}, items=[],
              needs=("elicitation_test",))


# what the harness reads of an adapter: Adapter's members, never looked up by name
_MEMBERS = {name for name in dir(Adapter) if not name.startswith("__")} | {"info"}
# every getattr/hasattr under arena/ with a computed attribute name, and what it reads (none is an adapter)
_DYNAMIC = {
    ("arena/__init__.py", "evaluation"),  # the library's lazy names
    ("arena/catalog.py", "module"),  # an entry point's "module:attr"
    ("arena/checks.py", "s.declared"),  # a Capabilities field
    ("arena/leftovers.py", "threading"),  # the module function that starts an OS thread (its name by release)
    ("arena/adapter.py", "self"),  # Adapter.run_hook: a registered channel's hook, which the adapter implements
    ("arena/worker/forkserver.py", "importlib.import_module(module)"),  # a pydantic model to complete
}


def _reads_by_name(source: str, rel: str) -> list[str]:
    """The getattr/hasattr calls of a module that read an adapter (by receiver or member name), or a computed name
    not known to read something else."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2):
            continue
        receiver, attr = ast.unparse(node.args[0]), node.args[1]
        literal = attr.value if isinstance(attr, ast.Constant) else None
        if "adapter" in receiver.lower() or receiver in ("cls", "old", "runner") or literal in _MEMBERS:
            found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
        elif literal is None and (rel, receiver) not in _DYNAMIC:
            found.append(f"{rel}:{node.lineno} {ast.unparse(node)} (a computed name: what does it read?)")
    return found


def test_nothing_under_arena_reads_an_adapter_by_getattr_or_hasattr():
    found = [line for path in sorted((ROOT / "arena").rglob("*.py"))
             for line in _reads_by_name(path.read_text(), path.relative_to(ROOT).as_posix())]
    assert not found, "\n".join(found)


def test_the_scan_finds_a_hook_read_by_name():
    """The scan above is not vacuous: each way of reading an adapter by name is caught."""
    source = ("def f(stage, item, cls, name):\n    getattr(stage.adapter, 'aclose', None)\n    hasattr(item, 'warm')\n"
              "    getattr(cls, 'order', 100)\n    getattr(item, name)\n    getattr(item, 'epoch', 1)\n")
    found = _reads_by_name(source, "arena/x.py")
    assert [line.split()[0] for line in found] == ["arena/x.py:2", "arena/x.py:3", "arena/x.py:4", "arena/x.py:5"]


def test_the_leg_context_crosses_to_a_worker_whole_with_an_arenas_own_context():
    """A field of the leg context, an arena's `extra` included, reaches a worker with no edit of the wire."""
    from arena.types import EvalItem, LegContext, ModelConfig, Store, ToolSpec
    from arena.worker.protocol import Request, WireContext

    class Tools:
        specs = [ToolSpec(name="t", description="d", parameters={"type": "object"})]

    ctx = LegContext(item=EvalItem(id="i", input="go"), instructions="be brief",
                     model=ModelConfig(name="scripted", base_url="http://127.0.0.1:1/v1", api_key="k"),
                     tools=Tools(), workdir="/tmp/w", stream=True, store=Store(kind="redis", url="redis://x", prefix="p"),
                     extra={"app_context": {"user": "Alice"}, "agents": [{"name": "a", "tools": ["t"]}]})
    sent = Request(op="start", adapter="m:C", ctx=WireContext.of(ctx, "http://127.0.0.1:1/tools/abc")).model_dump_json()
    wire = Request.model_validate_json(sent).ctx
    assert wire is not None and wire.tool_endpoint.endswith("/tools/abc") and wire.tool_specs == Tools.specs
    there = wire.context(tools="remote", stream_log=None)
    assert there.extra == ctx.extra and there.model.api_key == "k"
    local = {"tools", "stream_log"}
    assert there.model_dump(exclude=local) == ctx.model_dump(exclude=local)


def test_the_built_in_adapters_import_only_the_public_face():
    """Dogfooding: what a plugin adapter can use is what the built-ins use (arena.for_adapters, and the channel module
    of an arena whose own channels it implements: arenas/<arena>/channel.py), nothing deeper."""
    found = []
    for path in sorted((ROOT / "adapters").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names
                      if (n.split(".")[0] == "arena" and n != "arena.for_adapters")
                      or (n.startswith("arena_builtins.arenas.") and not n.endswith(".channel"))]
    assert not found, "\n".join(found)


# -- delegation lives outside the core ---------------------------------------------------------------------------

_DELEGATION_WORDS = {"AgentSpec", "agents_of", "own_tools", "nested", "handoff", "multi_nested", "agents", "agent"}


def _delegation_in(source: str, rel: str) -> list[str]:
    """Where a module's code (not its docstrings or comments) names delegation: an identifier, an attribute, a keyword
    argument or a string of its vocabulary."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        word = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                else node.arg if isinstance(node, ast.keyword) else node.name if isinstance(node, (ast.ClassDef, ast.alias))
                else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings else None)
        if word in _DELEGATION_WORDS:
            found.append(f"{rel}:{getattr(node, 'lineno', '?')} {word}")
    return found


def test_no_code_under_arena_names_delegation():
    """Issue 52's acceptance: delegation (its channels, its agents, whose call a pause holds) is the delegation arena's
    and its adapters' (arenas/delegation/channel.py), so replaying it on this layout edits no file of the core."""
    found = [line for path in sorted((ROOT / "arena").rglob("*.py"))
             for line in _delegation_in(path.read_text(), path.relative_to(ROOT).as_posix())]
    assert not found, "\n".join(found)


def test_the_delegation_scan_sees_each_form():
    source = ('"""Delegation: nested agents."""\nfrom x import AgentSpec\ndef f(ctx, p):\n    """agents"""\n'
              '    ctx.agents\n    p.agent\n    g(agents=1)\n    return "nested"\n')
    assert sorted(line.split()[1] for line in _delegation_in(source, "arena/x.py")) == [
        "AgentSpec", "agent", "agents", "agents", "nested"]
