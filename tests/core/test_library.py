"""arena as a library: one catalog from entry points, a core that never reaches up into the built-ins,
and `arena.evaluate()` doing what `arena run` does."""

from __future__ import annotations

import ast
import re
from importlib import metadata
from pathlib import Path

import pytest

import arena
from arena import DISTRIBUTION, catalog
from arena.errors import ArenaError, SetupError, UserError
from arena.evaluation import Evaluation, evaluate
from arena.report.matrix import load_run

ROOT = Path(__file__).resolve().parents[2]


# -- the import contract ------------------------------------------------------------------------------

def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    return _imports_of(path.read_text(), _module_name(path), path.name == "__init__.py")


def _imports_of(source: str, name: str, package: bool, relative: bool = True) -> set[str]:
    """Every module the source of module `name` imports, at module level or inside functions; not what only
    a type checker reads. Without `relative`, only the imports that name their module in full."""
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
                    (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(a.name for a in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level and not relative:
                return
            if node.level:
                base = name.split(".") if package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)

    Visitor().visit(ast.parse(source))
    return found


def _core_graph() -> dict[str, set[str]]:
    """arena/'s modules -> the arena/ modules (and any other top-level packages) each imports. Importing a
    module also runs its packages' __init__ files, so those count; a module's own ancestors do not (they
    are always initialised before it, so they cannot close a loop at import time)."""
    modules = {_module_name(p): p for p in (ROOT / "arena").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for imported in _imports(path):
            if imported.split(".")[0] != "arena":  # another top-level package (arenas, adapters, a library)
                deps.add(imported.split(".")[0])
            parts = imported.split(".")
            for k in range(2, len(parts) + 1):
                candidate = ".".join(parts[:k])
                if candidate in modules and candidate != name and not name.startswith(candidate + "."):
                    deps.add(candidate)
        graph[name] = deps
    return graph


def test_nothing_under_arena_imports_the_built_in_arenas_or_adapters():
    built_ins = ("arenas", "adapters", "arena_builtins")  # by the checkout's names or the installed ones
    reaching_up = {m: sorted(d for d in deps if d in built_ins) for m, deps in _core_graph().items()}
    assert {m: d for m, d in reaching_up.items() if d} == {}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_among_the_core_modules():
    assert _cycles(_core_graph()) == []


def test_the_contract_test_itself_sees_a_cycle_and_an_upward_import():
    """The two checks above against a crafted graph: they must be able to fail."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import adapters\n"
              "def f():\n    import arenas.flight_booking\n    from ..report import matrix\n")
    assert _imports_of(source, "arena.worker.client", False) >= {"arenas.flight_booking", "arena.report.matrix"}
    assert "adapters" not in _imports_of(source, "arena.worker.client", False)  # read by a type checker only


# -- one catalog --------------------------------------------------------------------------------------

def test_the_built_ins_are_entry_points_of_arenas_own_distribution():
    for group, found in (("arena.adapters", catalog.builtin_adapters()),
                         ("arena.arenas", [n for n in catalog.arena_names() if catalog.provider(n) == "arena"])):
        ours = {ep.name for ep in metadata.entry_points(group=group) if ep.dist and ep.dist.name == DISTRIBUTION}
        assert ours and ours == set(found), group
    assert [s.name for s in catalog.arenas()][:2] == ["human_in_the_loop", "durable_state"]  # ArenaSpec.order
    assert list(catalog.builtin_adapters())[:4] == ["vanilla", "vanilla_durable", "langgraph", "langgraph_per_call"]


def test_built_in_adapters_declare_what_they_need():
    entries = catalog.builtin_adapters()
    assert entries["crewai"].isolated and not entries["vanilla"].isolated
    assert not entries["google_adk"].concurrent and entries["vanilla"].concurrent
    assert entries["langgraph"].requires == ("langchain", "langchain-openai", "langgraph-checkpoint-sqlite")


def test_errors_have_one_base_and_two_kinds():
    from arena.errors import PluginError
    from arena.model.resolve import ModelError
    from arena.report.matrix import DamagedRun
    from arena.versions import VersionError
    from arena.worker.envs import EnvError

    for bad_input in (PluginError, ModelError, VersionError):
        assert issubclass(bad_input, UserError)
    assert issubclass(EnvError, SetupError) and not issubclass(EnvError, UserError)
    assert all(issubclass(e, ArenaError) for e in (UserError, SetupError, DamagedRun))


# -- arena.evaluate() ---------------------------------------------------------------------------------

def test_evaluate_runs_an_arena_and_returns_what_its_run_directory_holds(tmp_path):
    heard: list[tuple[str, str]] = []

    class Listening:
        def say(self, message, level="info"):
            heard.append(("say", message))

        def started(self, key, label, total):
            heard.append(("started", f"{label} {total}"))

        def result(self, key, result):
            heard.append(("result", result.item_id))

        def finished(self, key, outcome):
            heard.append(("finished", outcome))

    runs = arena.evaluate("human_in_the_loop", ["vanilla"], items=["hitl-01", "hitl-02"], out=tmp_path,
                          concurrency=1, reporter=Listening())
    assert isinstance(runs, Evaluation) and not runs.failed and not runs.declined
    (run,) = runs
    assert run.summary is not None and (run.summary.items, run.summary.passed) == (2, 2)
    back = load_run(run.path)  # the same run, read back from its directory
    assert [(r.item_id, r.status, [(c.name, c.passed, c.reason) for c in r.checks]) for r in run.results] == \
        [(r.item_id, r.status, [(c.name, c.passed, c.reason) for c in r.checks]) for r in back.results]
    assert [e.type for e in run.results[0].trace] == [e.type for e in back.results[0].trace]
    assert back.meta["status"] == run.meta["status"] == "complete"
    assert heard[0] == ("started", "vanilla 2") and heard[-1] == ("finished", "2/2 passed")
    assert sorted(m for k, m in heard if k == "result") == ["hitl-01", "hitl-02"]


def test_evaluate_refuses_bad_input_with_one_line_before_writing_anything(tmp_path):
    out = tmp_path / "runs"
    for call, message in [
        (lambda: evaluate("no_such_arena", ["vanilla"], out=out), "unknown arena 'no_such_arena'"),
        (lambda: evaluate("human_in_the_loop", ["no_such_adapter"], out=out), "unknown adapter 'no_such_adapter'"),
        (lambda: evaluate("human_in_the_loop", ["vanilla"], items=["x"], out=out), "unknown item 'x'"),
        (lambda: evaluate("human_in_the_loop", [int], out=out), "does not implement ResumableRunner"),
    ]:
        with pytest.raises(UserError, match=message):
            call()
    assert not out.exists()


def test_evaluate_takes_an_adapter_class(tmp_path):
    cls = catalog.load_target("arena_builtins.adapters.vanilla:VanillaAdapter")
    (run,) = evaluate("human_in_the_loop", [cls], items=["hitl-01"], out=tmp_path, concurrency=1)
    assert run.meta["target"] == "arena_builtins.adapters.vanilla.adapter:VanillaAdapter" and run.summary.passed == 1


# -- pause channels as nouns --------------------------------------------------------------------------

def test_a_missing_channel_declines_only_where_the_adapter_pauses():
    from arena.types import AdapterInfo, Capabilities, Channel

    doc_review = catalog.load_arena("doc_review")  # gated; needs multi_call
    ask = Channel(name="ask", kind="native", mechanism="m", carries=Capabilities(deny_reason=False))
    gate = Channel(name="tool_gate", kind="native", mechanism="g")
    gated_only = AdapterInfo(name="a", framework="f", channels=(ask, gate))
    assert doc_review.missing_channels(gated_only) == ["multi_call"]
    assert "does not handle the multi_call channel" in (doc_review.declined(gated_only) or "")
    no_gate = AdapterInfo(name="b", framework="f", channels=(ask,))  # nothing pauses here: run, and measured so
    assert doc_review.declined(no_gate) is None and doc_review.pause_kind_of(no_gate) == "unsupported"
    both = AdapterInfo(name="c", framework="f", channels=(ask, gate, Channel(name="multi_call", kind="native")))
    assert doc_review.declined(both) is None
    # what a channel carries: its own, or the ask channel's
    assert doc_review.capabilities_of(both).deny_reason is False
    assert both.carries("tool_gate") == ask.carries and both.kind("body_pause") == "unsupported"
    with pytest.raises(ValueError, match="listed twice"):
        AdapterInfo(name="d", framework="f", channels=(ask, ask))
    variant = both.with_mechanisms("e", tool_gate="other")
    assert variant.name == "e" and variant.mechanism("tool_gate") == "other" and both.mechanism("tool_gate") == "g"


# -- checks belong to their arena -----------------------------------------------------------------------

def _arena_with(checks, item_checks=(), exempt=None):
    from dataclasses import replace

    from arena.types import EvalItem

    base = catalog.load_arena("human_in_the_loop")
    item = EvalItem(id="x-01", input="Book a room.", checks=list(item_checks), exempt=exempt or {})
    return replace(base, name="crafted", items=[item], checks=checks)


def test_a_check_an_item_names_must_exist_when_the_arena_loads(tmp_path):
    from arena.checks import CheckSet, ok, validate_checks

    own = CheckSet("crafted")

    @own.check
    def answer_matches(s):
        return ok("answer_matches", "fine")

    validate_checks(_arena_with(own, ["suspended", "answer_matches"]))  # the core's and its own: fine
    with pytest.raises(ValueError, match="item 'x-01' names an unknown check 'answer_matchs'"):
        validate_checks(_arena_with(own, ["answer_matchs"]))
    with pytest.raises(ValueError, match="unknown check 'nope'"):
        validate_checks(_arena_with(own, exempt={"nope": "a reason"}))
    with pytest.raises(UserError, match="arena 'crafted': item 'x-01' names an unknown check"):
        evaluate(_arena_with(own, ["answer_matchs"]), ["vanilla"], out=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_an_arenas_checks_live_in_its_namespace():
    from arena.checks import CHECKS, CheckSet, fail, named, ok, validate_checks

    first, second = CheckSet("one"), CheckSet("two")
    first.check(_named("same", ok, "one's"))
    second["same"] = lambda s: fail("same", "two's")
    assert named(_arena_with(first), "same")(None).reason == "one's"  # neither replaces the other
    assert named(_arena_with(second), "same")(None).reason == "two's"
    assert "same" not in CHECKS and first.qualified("same") == "one.same"
    with pytest.raises(ValueError, match="defined twice"):
        first.check(_named("same", ok, "again"))
    clash = CheckSet("three")
    clash["suspended"] = lambda s: ok("suspended", "mine")
    with pytest.raises(ValueError, match="has the name of a core check"):
        validate_checks(_arena_with(clash))


def _named(name, verdict, reason):
    def fn(s):
        return verdict(name, reason)

    fn.__name__ = name
    return fn


# -- the faces are typed ------------------------------------------------------------------------------

def test_the_public_faces_are_typed_so_a_misuse_is_caught(tmp_path):
    """mypy --strict (as .ci/run runs it) on code that misuses the faces must fail, naming each misuse:
    the faces carry real types, not Any."""
    import shutil
    import subprocess
    import sys

    if shutil.which("mypy", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("mypy is not installed in this environment (uv sync installs it with the dev group)")
    bad = tmp_path / "misuse.py"
    bad.write_text(
        "from arena.for_adapters import AdapterInfo, Channel, LegResult\n"
        "from arena.for_arenas import ArenaSpec, ok\n"
        "AdapterInfo(name='x', framework='f', channels=(Channel(name='ask', kind='sometimes'),))\n"
        "LegResult.finished(3)\n"
        "ok('name', reason=None)\n"
        "ArenaSpec(name='a')\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
                        str(bad)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    for line in (3, 4, 5, 6):
        assert f"misuse.py:{line}: error" in r.stdout, r.stdout


# -- installed, the built-ins shadow nothing --------------------------------------------------------------

def _python_files() -> list[Path]:
    skip = {".venv", ".git", "reports", "node_modules"}
    return [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)]


def test_the_built_ins_are_imported_only_by_their_installed_names():
    """Installed, the built-ins are `arena_builtins.arenas` / `arena_builtins.adapters`; in a checkout the
    folders `arenas/` and `adapters/` are also importable as top-level packages, and importing a module by
    both names would load it twice (two registries, two classes). Nothing imports them by the checkout's (a
    relative import, inside an adapter's package, follows the name its package was imported by)."""
    found = []
    for path in _python_files():
        for name in _imports_of(path.read_text(), _module_name(path), path.name == "__init__.py", relative=False):
            if name.split(".")[0] in ("arenas", "adapters"):
                found.append(f"{path.relative_to(ROOT)}: {name}")
    assert found == []
    for group in ("arena.adapters", "arena.arenas"):
        values = [ep.value for ep in metadata.entry_points(group=group) if ep.dist and ep.dist.name == DISTRIBUTION]
        assert values and all(v.startswith("arena_builtins.") for v in values), values


def test_the_built_in_arenas_import_only_the_public_faces():
    """Dogfooding (issue 52): what a plugin arena can use is what the built-ins use, `arena.for_arenas` and its
    modules (and `arena.for_adapters`, for an arena whose channel module adapters import), nothing deeper of the core;
    a sibling arena's modules are theirs to share."""
    found = []
    for path in sorted((ROOT / "arenas").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "arena"
                      and n != "arena.for_adapters" and n.split(".")[:2] != ["arena", "for_arenas"]]
    assert not found, "\n".join(found)


def test_every_error_class_of_the_core_is_an_arena_error():
    """Issue 52: what the core raises on purpose is an `ArenaError` (a caller catches one type); the two control-flow
    exceptions that derive from BaseException (an item's adapter told to exit, the CLI stopped) are not errors."""
    import importlib

    from arena.errors import ArenaError

    found = []
    for path in sorted((ROOT / "arena").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id.endswith(("Error", "Exception"))
                                                      or isinstance(b, ast.Attribute) and b.attr.endswith("Error")
                                                      for b in node.bases):
                cls = getattr(importlib.import_module(module), node.name)
                if issubclass(cls, Exception) and not issubclass(cls, ArenaError):
                    found.append(f"{module}.{node.name}")
    assert found == []


# Raises of a built-in exception that a protocol asks for by that name: a module's `__getattr__` (AttributeError),
# and a script's exit status (SystemExit, which is not an error).
BUILT_IN_BY_PROTOCOL = {("arena/__init__.py", "AttributeError"), ("arena/services.py", "SystemExit")}


def built_in_raises(source: str) -> list[tuple[int, str]]:
    """(line, name) of each `raise` of a built-in exception class (`raise ValueError(...)`, `raise KeyError`)."""
    import builtins

    names = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id in names:
                found.append((node.lineno, raised.id))
    return sorted(found)


def test_the_core_and_the_built_in_arenas_raise_arena_errors_only():
    """Issue 52: every error the core or a built-in arena raises is an `ArenaError` (a caller catches one type). Where
    callers caught a built-in class, the class keeps it as a base (`InvalidValue` is a ValueError, `NotFound` a
    LookupError). Adapters are left out: what they raise is their framework's behaviour, measured as the item's."""
    found = []
    for root in ("arena", "arenas"):
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            found += [f"{rel}:{line}: raise {name}" for line, name in built_in_raises(path.read_text())
                      if (rel, name) not in BUILT_IN_BY_PROTOCOL]
    assert found == [], "\n".join(found)


def test_the_raise_scan_finds_a_built_in_raise():
    source = "def f(x):\n    if x:\n        raise KeyError(x)\n    raise ValueError\n"
    assert built_in_raises(source) == [(3, "KeyError"), (4, "ValueError")]
    assert built_in_raises("from arena.errors import NotFound\nraise NotFound('x')\n") == []


def test_the_errors_that_replaced_built_ins_still_are_them():
    """Callers (and plugins) that caught the built-in class before still catch what replaced it."""
    from arena import catalog
    from arena.errors import ArenaError, InvalidValue, NotFound, PluginError

    with pytest.raises(NotFound, match="no arena 'nope' is registered") as missing:
        catalog.load_arena("nope")
    assert isinstance(missing.value, LookupError) and isinstance(missing.value, ArenaError)
    with pytest.raises(PluginError, match="has no attribute 'Nope'") as broken:
        catalog.load_target("arena.errors:Nope")
    assert isinstance(broken.value, ValueError)
    spec = catalog.load_arena("approval_gate")
    with pytest.raises(NotFound, match="no item 'nope'"):
        spec.item("nope")
    assert issubclass(InvalidValue, ValueError) and issubclass(NotFound, LookupError)


def test_the_wheel_has_no_top_level_arenas_or_adapters(tmp_path):
    import shutil
    import subprocess
    import sys
    import zipfile

    uv = [sys.executable, "-m", "uv"]
    r = subprocess.run([*uv, "build", "--wheel", "--out-dir", str(tmp_path), str(ROOT)], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0 and re.search(r"fetch|connect|dns|network|offline|timed out", r.stderr, re.IGNORECASE):
        pytest.skip(f"uv could not reach the index for the build backend: {r.stderr.strip().splitlines()[-1]}")
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.startswith("pause_arena-")  # the distribution's name: `arena` is another project's
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"arena", "arena_builtins"}, top
    assert "arena_builtins/arenas/human_in_the_loop/items.json" in names
    assert "arena_builtins/adapters/envs/crewai.txt" in names and "arena/py.typed" in names
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "vanilla = arena_builtins.adapters.vanilla:VanillaAdapter" in entry_points
    # installed where no checkout is on the path, the built-ins load by those names
    target = tmp_path / "site"
    r = subprocess.run([*uv, "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    probe = ("import sys; sys.path[:0] = [sys.argv[1]]\n"
             "import arena_builtins.arenas.human_in_the_loop as a, arena_builtins.adapters.vanilla as v\n"
             "print(a.__file__); print(v.__file__)")
    r = subprocess.run([sys.executable, "-c", probe, str(target)], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert all(line.startswith(str(target)) for line in r.stdout.split()), r.stdout
    shutil.rmtree(target)


def test_a_checkout_that_is_not_installed_finds_its_built_ins_in_pyproject(monkeypatch):
    """An isolated environment (crewai's) has the repository on its path but not arena's metadata: the
    built-ins are the same entries, read from the checkout's pyproject.toml."""
    installed = {g: sorted(ep.name for ep in metadata.entry_points(group=g) if ep.dist and ep.dist.name == DISTRIBUTION)
                 for g in ("arena.adapters", "arena.arenas")}
    monkeypatch.setattr(catalog.metadata, "entry_points", lambda group: [])
    catalog._entry_points.cache_clear()
    catalog.adapters.cache_clear()
    try:
        assert sorted(catalog.adapters()) == installed["arena.adapters"]
        assert sorted(catalog.arena_names()) == installed["arena.arenas"]
        assert all(e.distribution == "arena" for e in catalog.adapters().values())
    finally:
        catalog._entry_points.cache_clear()
        catalog.adapters.cache_clear()
