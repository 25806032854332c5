"""The examples in docs/adapters.md and docs/arenas.md are complete, use the public faces only, and work.

Each document holds one fenced python block that starts with `# docs-example: <what>`. The block is
written to a file and imported as a module; its imports are read with `ast` (only the face, the
standard library and, for the adapter, `openai`); then it runs: the doc arena with the built-in
`vanilla`, the doc adapter on `human_in_the_loop` and on the doc arena, every item passing; and the
doc arena's own check fails where the outcome is wrong.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

import arena
from arena.for_adapters import LegContext
from arena.for_arenas import Scoring, TraceEvent

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"^```python\n(# docs-example: (?P<what>[\w-]+)\n.*?)^```$", re.MULTILINE | re.DOTALL)
FACES = {"adapter": ("adapters.md", "arena.for_adapters", {"openai"}),
         "arena": ("arenas.md", "arena.for_arenas", set()),
         # an arena's own channel, with the adapter side: both faces, and the two examples above
         "arena_channel": ("arenas.md", "arena.for_arenas", {"arena.for_adapters", "docs_example_adapter",
                                                             "docs_example_arena"})}


def _block(what: str) -> str:
    doc, _, _ = FACES[what]
    found = [m.group(1) for m in BLOCK.finditer((DOCS / doc).read_text()) if m.group("what") == what]
    assert len(found) == 1, f"docs/{doc} has {len(found)} blocks marked '# docs-example: {what}', expected 1"
    return found[0]


def _imports(source: str) -> set[str]:
    """Every module the source imports, at module level or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a docs example imports nothing relative"
            found.add(node.module or "")
    return found


def _load(what: str, folder: Path) -> ModuleType:
    name = f"docs_example_{what}"
    path = folder / f"{name}.py"
    path.write_text(_block(what))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("docs_examples")
    loaded = {what: _load(what, folder) for what in FACES}
    yield loaded
    for what in FACES:
        sys.modules.pop(f"docs_example_{what}", None)


def _passed(runs) -> dict[str, str]:
    """Item id -> its status, and why when it did not pass (the failing checks, or its error)."""
    (run,) = runs
    return {r.item_id: r.status if r.status == "passed" else
            f"{r.status}: {r.error or '; '.join(f'{c.name}: {c.reason}' for c in r.checks if not c.passed)}"
            for r in run.results}


# -- the examples are written against the public faces -----------------------------------------------

@pytest.mark.parametrize("what", list(FACES))
def test_an_example_imports_only_its_public_face(what):
    _, face, extra = FACES[what]
    imported = _imports(_block(what))
    assert face in imported
    for module in imported - {face, "__future__"}:
        top = module.split(".")[0]
        assert module in extra or top in extra or top in sys.stdlib_module_names, f"the {what} example imports {module!r}"


def test_the_examples_are_minimal_and_say_how_to_register_them():
    assert len(_block("adapter").splitlines()) <= 100 and len(_block("arena").splitlines()) <= 130
    adapters_md, arenas_md = (DOCS / "adapters.md").read_text(), (DOCS / "arenas.md").read_text()
    assert '[project.entry-points."arena.adapters"]\nmini = "mypkg.mini:MiniAdapter"' in adapters_md
    assert '[project.entry-points."arena.arenas"]\nemail_approval = "mypkg.email_approval"' in arenas_md
    assert 'arena.evaluate(ARENA, ["vanilla"]' in arenas_md and "arena run email_approval -a vanilla" in arenas_md


def test_the_example_names_are_their_entry_point_names(examples):
    assert examples["adapter"].MiniAdapter.info.name == "mini"
    assert examples["arena"].ARENA.name == "email_approval"


# -- and they work ------------------------------------------------------------------------------------

def test_the_doc_arena_passes_with_vanilla(examples, tmp_path):
    spec = examples["arena"].ARENA
    runs = arena.evaluate(spec, ["vanilla"], out=tmp_path, concurrency=1)
    assert _passed(runs) == {"mail-01": "passed", "mail-02": "passed"}
    (run,) = runs
    assert (run.summary.items, run.summary.passed) == (2, 2)
    approved = next(r for r in run.results if r.item_id == "mail-01")
    own = next(c for c in approved.checks if c.name == "sent_as_tasked")
    assert own.passed and own.reason == "one email to alice@example.com, as the task asked"
    sent = [e for e in approved.trace if e.type == "tool_call" and e.tool == "send_email"]
    assert [e.result for e in sent] == ["SENT to alice@example.com: Update"]


def test_the_doc_adapter_passes_on_human_in_the_loop(examples, tmp_path):
    runs = arena.evaluate("human_in_the_loop", [examples["adapter"].MiniAdapter], items=["hitl-01", "hitl-02"],
                          out=tmp_path, concurrency=1)
    assert _passed(runs) == {"hitl-01": "passed", "hitl-02": "passed"}
    (run,) = runs
    assert run.meta["pause_kind"] == "emulated" and run.meta["target"] == "docs_example_adapter:MiniAdapter"


def test_the_doc_adapter_passes_on_the_doc_arena(examples, tmp_path):
    runs = arena.evaluate(examples["arena"].ARENA, [examples["adapter"].MiniAdapter], out=tmp_path, concurrency=1)
    assert _passed(runs) == {"mail-01": "passed", "mail-02": "passed"}


# -- the doc arena's own check can fail -----------------------------------------------------------------

def _sent(seq: int, **args: str) -> TraceEvent:
    return TraceEvent(seq=seq, leg=1, type="tool_call", tool="send_email", args=args, result="SENT")


def test_the_doc_arenas_check_fails_on_a_wrong_outcome(examples):
    module = examples["arena"]
    spec, check = module.ARENA, module.sent_as_tasked
    item = spec.item("mail-01")
    right = {"to": "alice@example.com", "subject": "Update", "body": "the release ships on Friday"}
    verdict = lambda *trace: check(Scoring(item=item, trace=list(trace), arena=spec))  # noqa: E731
    assert verdict(_sent(0, **right)).passed
    assert verdict().reason == "0 emails were sent, expected 1"
    assert verdict(_sent(0, **right), _sent(1, **right)).reason == "2 emails were sent, expected 1"
    wrong = verdict(_sent(0, **{**right, "to": "mallory@example.com"}))
    assert not wrong.passed and "but the task was to tell alice@example.com" in wrong.reason
    assert not verdict(_sent(0, **{**right, "body": "the release slipped"})).passed


def test_an_adapter_that_changes_the_email_fails_only_the_arenas_own_check(examples, tmp_path):
    class RewritesTheBody(examples["adapter"].MiniAdapter):
        """Runs the approved send_email with a body of its own: what the human approved still goes to its recipient."""

        async def _run(self, call, ctx: LegContext) -> str:
            if call["function"]["name"] == "send_email":
                call = {**call, "function": {**call["function"], "arguments":
                                             call["function"]["arguments"].replace("Friday", "Monday")}}
            return await super()._run(call, ctx)

    runs = arena.evaluate(examples["arena"].ARENA, [RewritesTheBody], items=["mail-01"], out=tmp_path,
                          concurrency=1)
    (run,) = runs
    (result,) = run.results
    assert result.status == "failed"
    failed = {c.name: c.reason for c in result.checks if not c.passed}
    assert list(failed) == ["sent_as_tasked"]  # the core's checks compare it with the approval (same recipient)
    assert "the task was to tell alice@example.com that the release ships on Friday" in failed["sent_as_tasked"]


# -- an arena's own channel (docs/arenas.md) ------------------------------------------------------------------

def test_the_arenas_own_channel_is_registered_and_measured(examples, tmp_path):
    from arena import channels

    module = examples["arena_channel"]
    assert channels.get("app_context") is not None and "app_context" not in {
        "ask", "tool_gate", "input"} and module.ARENA.needs == ("app_context",)
    runs = arena.evaluate(module.ARENA, [module.MiniForUser], out=tmp_path, concurrency=1)
    assert _passed(runs) == {"mail-01": "passed", "mail-02": "passed"}
    (run,) = runs
    check = next(c for r in run.results if r.item_id == "mail-01" for c in r.checks if c.name == "context_reached_model")
    assert check.passed and "carried 'Alice Martin'" in check.reason


def test_an_adapter_that_declares_the_channel_and_drops_the_context_fails_it(examples, tmp_path):
    module = examples["arena_channel"]

    class Drops(module.MiniForUser):
        async def start(self, ctx):  # the channel declared, its context never used
            return await examples["adapter"].MiniAdapter.start(self, ctx)

    (run,) = arena.evaluate(module.ARENA, [Drops], items=["mail-01"], out=tmp_path, concurrency=1)
    (result,) = run.results
    failed = {c.name: c.reason for c in result.checks if not c.passed}
    assert list(failed) == ["context_reached_model"] and "carried 'Alice Martin'" in failed["context_reached_model"]


def test_an_adapter_without_the_channel_is_not_run_on_the_arena(examples, tmp_path):
    module = examples["arena_channel"]
    runs = arena.evaluate(module.ARENA, [examples["adapter"].MiniAdapter], out=tmp_path, concurrency=1)
    assert list(runs) == [] and "app_context" in runs.declined["mini"]


def test_a_channel_an_arena_needs_must_be_registered(examples):
    import dataclasses

    from arena import channels

    with pytest.raises(channels.ChannelError, match="needs channel 'app_contxt', which is not registered"):
        dataclasses.replace(examples["arena_channel"].ARENA, needs=("app_contxt",))


# -- the adapter packages and the contract (docs/adapters.md) ---------------------------------------------------

ADAPTERS = DOCS.parent / "adapters"


def test_every_adapter_package_is_cut_by_the_documented_modules():
    doc = (DOCS / "adapters.md").read_text()
    table = doc.split("<!-- layout:")[1].split("<!-- /layout -->")[0]
    documented = set(re.findall(r"`(\w+)\.py`", table))
    assert {"adapter", "info", "client", "tools", "outcome", "decision", "stream", "store"} <= documented
    packages = [p for p in ADAPTERS.iterdir() if (p / "__init__.py").is_file()]
    assert len(packages) >= 13
    for package in packages:
        modules = {p.stem for p in package.glob("*.py")}
        assert {"__init__", "adapter", "info"} <= modules, package.name
        assert modules <= documented | {"__init__"}, f"{package.name}: {sorted(modules - documented)} undocumented"
        for path in package.glob("*.py"):
            assert len(path.read_text().splitlines()) <= 300, f"{path} is over 300 lines"
    assert not list(ADAPTERS.glob("[!_]*.py")) or {p.name for p in ADAPTERS.glob("*.py")} <= {
        "__init__.py", "litellm_models.py"}  # no adapter left as one module


def test_the_channel_walkthrough_names_what_exists():
    from arena import channels
    from arena_builtins.adapters.langgraph import LangGraphAdapter

    doc = (DOCS / "adapters.md").read_text()
    walk = doc.split("### One channel end to end: `input`")[1].split("\n## ")[0]
    for path in re.findall(r"`((?:arena|arenas|adapters)/[\w/]+\.py)`", walk):
        assert (DOCS.parent / path).is_file(), path
    spec = channels.get("input")
    assert spec is not None and spec.hooks == ("add_input",) and spec.events == ("input",)
    assert LangGraphAdapter.info.kind("input") == "native" and LangGraphAdapter.implements("add_input")


def test_the_files_delegation_occupies_are_listed_and_exist():
    """docs/arenas.md lists what the delegation support occupies, outside the core: each file it names exists, and
    each adapter package with a delegation module is one of the nine."""
    listed = (DOCS / "arenas.md").read_text().split("<!-- delegation-files:")[1].split("<!-- /delegation-files -->")[0]
    paths = re.findall(r"`((?:arenas|tests)/[\w/]+\.py)`", listed)
    assert len(paths) >= 5 and not any(p.startswith("arena/") for p in paths)
    for path in paths:
        assert (DOCS.parent / path).is_file(), path
    assert len(list(ADAPTERS.glob("*/delegation.py"))) == 9


def test_the_contract_table_lists_every_member_of_the_base_class_and_the_load_error_is_real(examples):
    from arena.adapter import Adapter, AdapterContractError, as_adapter
    from arena.for_adapters import Channel

    doc = (DOCS / "adapters.md").read_text()
    table = doc.split("### The contract, declared")[1].split("###")[0]
    shown = set(re.findall(r"`(\w+)(?:\(|`)", table))
    members = {n for n in vars(Adapter) if not n.startswith("_") and n not in ("implements",)} | {"info"}
    assert members <= shown, sorted(members - shown)
    mini = examples["adapter"].MiniAdapter
    undone = type("MiniAdapter", (mini,), {"info": mini.info.model_copy(update={"channels": (
        *mini.info.channels, Channel(name="input", kind="native"))})})
    with pytest.raises(AdapterContractError) as raised:
        as_adapter(undone)
    assert f"arena: error: {raised.value}" in doc
