"""The `arena` command line: list arenas and adapters, run an arena on adapters.

Frameworks are imported only when an adapter is about to run, so `--help` and `list` stay instant.
"""

from __future__ import annotations

import math
import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer.exceptions import Abort, Exit, TyperException
from rich.console import Console
from rich.markup import escape

from arena.errors import UserError, exited_at_import, importing
from arena.redact import redact
from rich.table import Table
from typer.core import TyperCommand, TyperGroup


class _PlainTypes:
    """typer's help shows a value type for every option, flags included (`--json <bool>`, as if the flag
    took a value), and a repeatable option's as `<list[str]>`: a flag shows none, a repeatable one its item's."""

    def get_params(self, ctx):
        params = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "metavar", "") is not None:
                continue
            if getattr(param, "is_flag", False):
                param.metavar = ""
            elif getattr(param, "multiple", False) and hasattr(param, "display_type"):
                shown = param.display_type(ctx)
                if shown.startswith("<list[") and shown.endswith("]>"):
                    param.metavar = f"<{shown[6:-2].lower()}>"
        return params


class _Command(_PlainTypes, TyperCommand):
    pass


class _RunCommand(_Command):
    """`arena run --help` lists every arena's scripted profiles under --model: the arenas are imported for
    that help alone (a quarter of a second), never for `arena --help` or `arena list`'s start."""

    def format_help(self, ctx, formatter):
        for param in self.params:
            if param.name == "model" and "Scripted profiles" not in (param.help or ""):
                param.help = f"{param.help}. Scripted profiles: {_profiles_text()}"
        return super().format_help(ctx, formatter)


def _profiles_text() -> str:
    return "; ".join(f"{name}: " + ", ".join(p + (" (default)" if n == 0 else "") for n, p in enumerate(spec.accepted_profiles))
                     for name, spec in _loadable_arenas())


def _loadable_arenas():
    """(name, spec) of every arena that loads, in name order; a broken plugin arena is left out silently
    (`arena list` shows its error in its own row)."""
    import arenas

    for name in arenas.names():
        try:
            yield name, arenas.load(name)
        except arenas.PluginError:
            continue


class _Group(_PlainTypes, TyperGroup):
    pass


app = typer.Typer(
    cls=_Group,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure how agent frameworks pause for a human and resume.",
)
err = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        from importlib import metadata

        try:
            version = metadata.version("arena")
        except metadata.PackageNotFoundError:  # run from a checkout that is not installed
            from arena import __version__ as version
        print(f"arena {version}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="print arena's version and exit", callback=_version,
                                          is_eager=True)] = False,
) -> None:
    pass


def _fail(message: str) -> None:
    raise UserError(message)


MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a week: longer is a typo (and overflows the platform's clock types)
MAX_NAME = 200  # characters of a model name or an adapter name that goes into a run directory's name
MAX_EPOCHS = 100  # runs of every item (`--epochs`)
MAX_SEED = 2**63 - 1


def _writable_dir(path: Path, what: str = "--out") -> Path:
    """`path` as a directory the run can write into (created if missing), or one clear UserError."""
    try:
        text = str(path)
        text.encode("utf-8")
    except UnicodeEncodeError:
        _fail(f"{what} must be a UTF-8 path")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if any(len(part.encode()) > 255 for part in path.parts):
        _fail(f"{what} {shown!r} has a name longer than 255 bytes")
    try:
        if path.exists() and not path.is_dir():
            _fail(f"{what} {shown!r} is a file, not a directory")
        resolved = path.resolve()
    except (OSError, RuntimeError) as exc:
        _fail(f"{what} {shown!r} cannot be used: {exc.strerror if isinstance(exc, OSError) else exc}")
    if resolved.parts[1:2] in (("proc",), ("sys",), ("dev",)):
        _fail(f"{what} {shown!r} is under /{resolved.parts[1]}, not a place for run directories")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".arena-write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        _fail(f"{what} {shown!r} is not writable: {exc.strerror or exc}")
    return path


def _check_text(value: str | None, what: str) -> None:
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        _fail(f"{what} must be UTF-8 text")
    if len(value) > MAX_NAME:
        _fail(f"{what} is {len(value)} characters long; at most {MAX_NAME}")


def _check_timeout(timeout: float) -> None:
    if not math.isfinite(timeout) or timeout > MAX_TIMEOUT_S:
        _fail(f"--timeout must be a number of seconds from 1 to {MAX_TIMEOUT_S:g}")


@app.command("list", cls=_Command)
def list_cmd() -> None:
    """Arenas, adapters, and whether each adapter's framework is installed (and which version)."""
    import arenas
    from adapters import entries

    out = _stdout_console()
    table = Table(title="Arenas")
    for col in ("arena", "items", "description", "from"):
        table.add_column(col)
    for name in arenas.names():
        try:
            spec = arenas.load(name)
        except arenas.PluginError as exc:  # a broken plugin arena: its own row says why
            table.add_row(name, "-", f"[red]{escape(str(exc))}[/red]", arenas.distribution(name))
            continue
        table.add_row(name, str(len(spec.items)), spec.description, arenas.distribution(name))
    out.print(table)
    table = Table(title="Adapters")
    for col in ("adapter", "framework", "version", "installed", "environment", "from"):
        table.add_column(col)
    for entry in entries().values():  # plugin adapters from their metadata: none is imported
        version = entry.version
        table.add_row(entry.name, entry.framework, version or "-", "yes" if entry.available else "no", entry.environment,
                      entry.distribution)
    out.print(table)
    _print_models(out)


def _print_models(out: Console) -> None:
    """What `arena run --model` takes: each arena's scripted profiles (its first the default), and a real model."""
    table = Table(title="Models (arena run --model)")
    table.add_column("arena", no_wrap=True)
    table.add_column("profile", no_wrap=True)
    table.add_column("what the scripted model does", max_width=90)  # prose: wrapped between words
    for name, spec in _loadable_arenas():
        for n, profile in enumerate(spec.accepted_profiles):
            table.add_row(name if n == 0 else "", profile + (" (default)" if n == 0 else ""),
                          escape(spec.profile_notes.get(profile, "")))
    out.print(table)
    out.print("[dim]every arena also runs a real model: openai/<model> or openai:<model> (any OpenAI-compatible API; "
              "key in OPENAI_API_KEY)[/dim]")


def _select_adapters(names: list[str]) -> list[tuple[str, object]]:
    """Resolve --adapter values to (name, AdapterEntry | class). Unknown or uninstalled: a UserError."""
    from adapters import entries, load_target
    from arena.versions import is_versioned

    registry = entries()

    def broken(entry) -> str | None:
        """Why a plugin adapter cannot run: its class is imported here, just before it runs."""
        try:
            entry.load()
        except ValueError as exc:
            return f"adapter {entry.name!r} (from {entry.distribution}): {exc}"
        return None

    chosen: list[tuple[str, object]] = []
    for name in names or ["all"]:
        if name == "all":
            available = [e for e in registry.values() if e.available]
            skipped = [e.name for e in registry.values() if not e.available]
            if skipped:
                err.print(f"[dim]not installed here, skipped: {escape(', '.join(skipped))}[/dim]")
            for entry in available:
                why = broken(entry) if entry.plugin else None
                if why is not None:  # one broken plugin does not stop the others
                    err.print(f"[yellow]{escape(why)}; skipped[/yellow]", soft_wrap=True)
                else:
                    chosen.append((entry.name, entry))
        elif name in registry:
            entry = registry[name]
            if entry.plugin:
                why = broken(entry)
                if why is not None:
                    _fail(why)
            elif not entry.available:
                _fail(f"adapter {name!r} needs {entry.framework} installed: uv sync --extra {name}")
            chosen.append((name, entry))
        elif is_versioned(name):
            chosen.append(_versioned(name, registry))
        elif ":" in name:
            try:
                cls = load_target(name)
            except ValueError as exc:
                _fail(str(exc))
            chosen.append((cls.info.name, cls))
        else:
            _fail(f"unknown adapter {name!r}; choose from {', '.join([*registry, 'all'])} or module:Class")
    seen: set[str] = set()
    return [(n, a) for n, a in chosen if not (n in seen or seen.add(n))]


def _versioned(name: str, registry) -> tuple[str, object]:
    """`adapter@version`: the registered adapter against that release of its framework, in its own environment."""
    from arena.versions import VersionError, split, versioned_entry
    from arena.worker.envs import EnvError

    try:
        base, version = split(name)
        if base not in registry:
            _fail(f"unknown adapter {base!r} in {name!r}; choose from {', '.join(registry)}")
        entry = versioned_entry(registry[base], version)
    except VersionError as exc:
        _fail(str(exc))
    except EnvError as exc:
        err.print(f"[red]{escape(name)}: {escape(str(exc))}[/red]")
        raise typer.Exit(1) from None
    return entry.name, entry


@app.command("run", cls=_RunCommand)
def run_cmd(
    arena_name: Annotated[str, typer.Argument(metavar="ARENA", help="arena to run (see `arena list`)")],
    adapter: Annotated[Optional[list[str]], typer.Option("--adapter", "-a", help=(
        "adapter name, `all`, or module:Class; repeatable. Without it: every installed adapter (see `arena list`)"))] = None,
    model: Annotated[
        Optional[str], typer.Option(help="a scripted profile of the arena (default: its first; `arena list` shows each "
                                         "arena's), or a real model: openai/<model> or openai:<model>")
    ] = None,
    base_url: Annotated[Optional[str], typer.Option(
        help="base URL of the real model's OpenAI-compatible API (default: OPENAI_BASE_URL, else https://api.openai.com/v1)")] = None,
    item: Annotated[Optional[list[str]], typer.Option("--item", help="run only this item id; repeatable")] = None,
    out: Annotated[Path, typer.Option(help="directory for run directories")] = Path("runs"),
    json_out: Annotated[bool, typer.Option("--json", help="one JSON summary line per adapter on stdout")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="with each item error: which items, and the adapter's "
                                          "full traceback where it raised")] = False,
    timeout: Annotated[float, typer.Option(help="per-item timeout in seconds", min=1)] = 180.0,
    concurrency: Annotated[Optional[int], typer.Option(
        help="items of one adapter run at once (default: what fits this machine)", min=1, max=64)] = None,
    resume: Annotated[Optional[Path], typer.Option(
        help="an interrupted run directory: run only its missing items, into it")] = None,
    epochs: Annotated[Optional[int], typer.Option(
        help="run every item this many times; pass@1, pass^k and a 95% CI are reported  [default: 1]",
        min=1, max=MAX_EPOCHS)] = None,
    seed: Annotated[Optional[int], typer.Option(
        help="seed of a sampled model's deviations (--model sampled)  [default: 0]", min=0, max=MAX_SEED)] = None,
    junit: Annotated[Optional[Path], typer.Option(help="also write a JUnit XML report of every adapter run here")] = None,
    baseline: Annotated[Optional[Path], typer.Option(
        help="a matrix.json, run directory or folder of them: list regressions against it, exit 4 if any")] = None,
) -> None:
    """Run ARENA on the adapters given with -a (default: every installed one); write a run directory per adapter
    and print the results."""
    import arenas
    from arena.model.resolve import ModelError, canonical_model, resolve_model, split_model
    from arena.results import RunSummary
    from arena.server import HarnessServer
    from arena.worker.envs import EnvError

    _check_text(arena_name, "the arena name")
    if arena_name not in arenas.names():
        _fail(f"unknown arena {arena_name!r}; choose from {', '.join(arenas.names())}")
    _check_text(model, "--model")
    _check_text(base_url, "--base-url")
    for name in adapter or []:
        _check_text(name, "--adapter")
    _check_timeout(timeout)
    spec = arenas.load(arena_name)
    if model:  # openai:<model> is openai/<model>: one run directory name, one report row
        model = canonical_model(model, spec.accepted_profiles)
    resumed: dict | None = None
    if resume is not None:
        resumed = _resumable(resume, arena_name, adapter, model, item, epochs=epochs, seed=seed)
        adapter, model = [resumed["target"]], resumed["model"]
        item = resumed["items"]
        epochs, seed = resumed["epochs"], resumed["seed"]
    epochs, seed = epochs or 1, seed or 0
    model = model or spec.profiles[0]
    items = spec.items
    if item:
        known = {i.id for i in spec.items}
        unknown = [i for i in item if i not in known]
        if unknown:
            _fail(f"unknown item {unknown[0]!r} in {arena_name}; choose from {', '.join(sorted(known))}")
        items = [i for i in spec.items if i.id in item]
    if base_url and (model in spec.accepted_profiles or split_model(model)[0] != "openai"):
        _fail("--base-url applies only to a real model (--model openai/<model>)")
    try:
        resolve_model(model, base_url, spec.accepted_profiles)  # validate before starting anything
    except ModelError as exc:
        _fail(str(exc))
    selected = _select_adapters(adapter or [])
    if not selected:
        _fail("no adapter is installed here; see `arena list`")
    if resumed is not None and resumed["status"] == "complete":
        err.print(f"{escape(str(resume))} is complete: nothing to resume")
        return
    if resumed is None:
        _writable_dir(out)
    if junit is not None:
        _writable_dir(junit.parent, "--junit's folder")
        if junit.is_dir():
            _fail(f"--junit {str(junit)!r} is a directory; give the file to write")
    against = None
    if baseline is not None:  # read before the run, so a bad path costs nothing and the run is not its own baseline
        from arena.baseline import load_baseline

        try:
            against = load_baseline(baseline)
        except ValueError as exc:
            _fail(f"--baseline {exc}")

    summaries: list[RunSummary] = []
    kept: dict[str, list] = {}  # adapter -> its item results, for the errors under the table
    failed_setup: list[str] = []
    with HarnessServer() as server:
        for name, target in selected:
            try:
                with _progress(name, len(items) * epochs, quiet=False) as advance:
                    summary = _run_one(spec, name, target, model, out, server, timeout=timeout, items=items,
                                       on_result=_keeping(advance, kept.setdefault(name, [])), base_url=base_url,
                                       concurrency=concurrency or default_concurrency(), resume=resume,
                                       epochs=epochs, seed=seed)
            except EnvError as exc:
                err.print(f"[red]{escape(name)}: {escape(str(exc))}[/red]")
                failed_setup.append(name)
                continue
            except Declined as exc:
                err.print(f"[yellow]{escape(name)}: {escape(str(exc))}[/yellow]")
                continue
            summaries.append(summary)
            if json_out:
                print(redact(summary.model_dump_json()), flush=True)
    if not json_out:
        _print_table(summaries)
    _print_errors(kept, verbose, err if json_out else _stdout_console())  # stdout stays JSON with --json
    regressed = False
    if junit is not None or against is not None:
        from arena.report.matrix import collect_runs

        done = collect_runs([Path(s.run_dir) for s in summaries if s.run_dir])
        if against is not None:
            from arena.baseline import compare

            comparison = compare(against, done)
            print("\n".join(redact(line) for line in comparison.report()), file=sys.stderr, flush=True)
            regressed = bool(comparison.regressions)
        if junit is not None:
            from arena.report.junit import write_junit

            try:
                write_junit(done, junit)
            except (OSError, UnicodeError) as exc:
                _fail(f"--junit {str(junit)!r} cannot be written: {getattr(exc, 'strerror', None) or exc}")
    if failed_setup:
        raise typer.Exit(1)
    if regressed:
        raise typer.Exit(4)  # a regression against --baseline (listed on stderr)
    if any(s.errors for s in summaries):
        raise typer.Exit(3)  # some items could not be measured (the harness's side failed, not the framework)


def _prepare(target, server, restart_between_legs: bool = False):
    """(info, framework version, adapter factory, how workers start); an isolated adapter's environment is
    built here, and its fork server started.

    Isolated adapters always run in a worker; with `restart_between_legs` every adapter does, and
    each leg gets a fresh worker process.
    """
    from functools import partial

    from adapters import AdapterEntry
    from arena.worker import envs
    from arena.worker.client import WorkerAdapter, start_mode

    cls = target.load() if isinstance(target, AdapterEntry) else target
    info = cls.info
    if isinstance(target, AdapterEntry) and target.isolated:
        python = envs.ensure_env(target.env_name, say=lambda msg: err.print(f"[cyan]{escape(msg)}[/cyan]"))
        version = envs.installed_version(target.env_name, info.framework)
        mode = start_mode(str(python), target.target)
        return info, version, partial(WorkerAdapter, target.target, info, str(python), server, restart_between_legs,
                                      fork=mode == "fork"), mode
    version = _dist_version(info.framework)
    if restart_between_legs:
        module_target = f"{cls.__module__}:{cls.__qualname__}"
        mode = start_mode(sys.executable, module_target)
        return info, version, partial(WorkerAdapter, module_target, info, sys.executable, server, True,
                                      fork=mode == "fork"), mode
    return info, version, cls, "in-process"


def _dist_version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _progress(label: str, total: int, quiet: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if quiet:
        return nullcontext(lambda result: None)

    class _Ctx:
        def __enter__(self):
            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=err, transient=False,
            )
            self.progress.start()
            self.task = self.progress.add_task(escape(label), total=total)

            def advance(result) -> None:
                self.progress.update(self.task, advance=1,
                                     description=f"{escape(label)} [dim]{escape(result.item_id)} {result.status}[/dim]")

            return advance

        def __exit__(self, *exc):
            self.progress.update(self.task, description=escape(label))
            self.progress.stop()

    return _Ctx()


def _print_table(summaries) -> None:
    from arena.stats import interval, percent

    out = _stdout_console()
    table = Table(title="Results")
    widest = max((len(s.adapter) for s in summaries), default=0)  # an adapter's name is never cut, even on a terminal
    repeated = any(s.epochs > 1 for s in summaries)  # passed/errors then count item-epochs
    right = {"justify": "right"}
    for col, kw in (("adapter", {"min_width": widest}), ("version", {}), ("pause kind", {}), ("passed", right),
                    *((("epochs", right), ("pass@1", right), ("pass^k", right), ("95% CI", right)) if repeated else ()),
                    ("not measured", right), ("failing checks (passed/total)", {"overflow": "fold"})):
        table.add_column(col, **kw)
    for s in summaries:
        short = [f"{n} {t.passed}/{t.total}" for n, t in s.checks.items() if t.passed < t.total]
        style = "green" if s.passed == s.items else ("red" if s.errors else "yellow")
        ci = (s.ci_low, s.ci_high) if s.ci_low is not None and s.ci_high is not None else None
        stats = (str(s.epochs), percent(s.pass_at_1), percent(s.pass_hat_k), interval(ci)) if s.epochs > 1 else \
            (str(s.epochs), "-", "-", "-")
        table.add_row(
            escape(s.adapter), escape(s.framework_version or "-"), s.pause_kind,
            f"[{style}]{s.passed}/{s.items}[/{style}]", *(stats if repeated else ()), str(s.errors),
            escape(", ".join(short)) or "[green]none[/green]",
        )
    out.print(table)
    dirs = {str(Path(s.run_dir).parent) for s in summaries if s.run_dir}
    if dirs:
        out.print(f"[dim]run directories (results, merged traces, metadata) under {', '.join(sorted(dirs))}/[/dim]")


PIPE_WIDTH = 100_000  # columns of stdout when it is not a terminal: as wide as a row needs


def _stdout_console() -> Console:
    """Stdout for tables. On a terminal: its width. Anywhere else (a pipe, a file, a CI log) rich would
    assume 80 columns and cut names or fold them mid-word, so there every row is printed whole."""
    out = Console()
    return out if out.is_terminal else Console(width=PIPE_WIDTH)


def _keeping(advance, into: list):
    """The progress display's `advance`, also keeping each result for `_print_errors`."""

    def on_result(result) -> None:
        into.append(result)
        advance(result)

    return on_result


MAX_ERROR_KINDS = 5  # distinct errors shown per adapter without --verbose


def _item_label(result) -> str:
    epoch = getattr(result, "epoch", 1)
    return result.item_id if epoch == 1 else f"{result.item_id} (epoch {epoch})"


def _print_errors(kept: dict[str, list], verbose: bool, out: Console) -> None:
    """What the table does not show: each adapter's item errors (`ItemResult.error`, its first line) and
    how many items share it; with `verbose`, which items, and the adapter's traceback where it raised."""
    from rich.text import Text

    lines: list[Text] = []
    for adapter, results in kept.items():
        groups: dict[str, list] = {}
        for r in results:
            if r.error:
                first = (redact(r.error).strip().splitlines() or ["(no message)"])[0]
                groups.setdefault(first, []).append(r)
        ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))  # most items first; ties keep their order
        for n, (first, items) in enumerate(ranked):
            if n == MAX_ERROR_KINDS and not verbose:
                rest = sum(len(i) for _, i in ranked[n:])
                lines.append(Text(f"  {adapter}: {rest} more item{'s' * (rest != 1)} with "
                                  f"{len(ranked) - n} other error{'s' * (len(ranked) - n != 1)}"))
                break
            line = Text("  ")
            line.append(adapter, style="bold")
            line.append(f": {len(items)} item{'s' * (len(items) != 1)}: {first}")
            lines.append(line)
            if verbose:
                items = sorted(items, key=lambda r: (getattr(r, "epoch", 1), r.item_id))
                lines.append(Text("    items: " + ", ".join(map(_item_label, items)), style="dim"))
                raised = next((r for r in items if r.traceback), None)
                if raised is not None:  # the items of one error raised alike: the first one's traceback
                    lines.append(Text(f"    traceback ({_item_label(raised)}):", style="dim"))
                    lines.extend(Text("      " + t) for t in redact(raised.traceback).rstrip().splitlines())
    if not lines:
        return
    out.print(Text("item errors (first line of each):", style="bold"), soft_wrap=True)
    for line in lines:
        out.print(line, soft_wrap=True)
    if not verbose:
        out.print(Text("(--verbose shows which items, and the adapter's traceback where it raised)", style="dim"),
                  soft_wrap=True)


def default_concurrency() -> int:
    """Items at once when not asked: most of an item's time is waiting (the model, the watched pause),
    so twice the cores, at most 8."""
    return max(1, min(8, 2 * (os.cpu_count() or 1)))


def _resumable(path: Path, arena_name: str, adapter: list[str] | None, model: str | None,
               item: list[str] | None, epochs: int | None = None, seed: int | None = None) -> dict:
    """What an interrupted run directory was running (its adapter, model, items), checked against the command."""
    import json

    from arena.rundir import status_of

    if item:
        _fail("--resume runs the run directory's own items; leave out --item")
    try:
        meta = json.loads((path / "meta.json").read_text())
        (path / "results.jsonl").stat()
    except (OSError, ValueError):
        _fail(f"--resume {str(path)!r} is not a run directory (meta.json and results.jsonl)")
    if meta.get("arena") != arena_name:
        _fail(f"--resume {str(path)!r} is a run of {meta.get('arena')!r}, not {arena_name!r}")
    status = status_of(meta)
    if status == "running":
        _fail(f"--resume {str(path)!r} is still running (pid {meta.get('pid')})")
    target = meta.get("target") or meta.get("adapter")
    if adapter and adapter != [target]:
        _fail(f"--resume {str(path)!r} is a run of adapter {target!r}; leave out --adapter or give that one")
    if model and model != meta.get("model"):
        _fail(f"--resume {str(path)!r} is a run with model {meta.get('model')!r}; leave out --model or give that one")
    ran = {"epochs": meta.get("epochs") or 1, "seed": meta.get("seed") or 0}
    for flag, value in (("epochs", epochs), ("seed", seed)):
        if value is not None and value != ran[flag]:
            _fail(f"--resume {str(path)!r} is a run with --{flag} {ran[flag]}; leave out --{flag} or give that one")
    return {"target": target, "model": meta.get("model"), "items": list(meta.get("items") or []), "status": status,
            **ran}


class Declined(Exception):
    """The arena does not run this adapter (ArenaSpec.declines): nothing would be measured."""


def _run_one(arena, adapter_name: str, target, model: str, out: Path, server, *, timeout: float = 60.0,
             items=None, on_result=None, base_url: str | None = None, concurrency: int = 1,
             resume: Path | None = None, epochs: int = 1, seed: int = 0):
    """Run one arena (an ArenaSpec) on one adapter with one model; write its run directory; return its RunSummary.

    With `epochs` > 1 every item runs that many times (a resumed run completes its missing (item, epoch) pairs).

    Raises EnvError when an isolated adapter's environment cannot be built.
    """
    from arena.model.resolve import resolve_model
    from arena.results import RunSummary
    from arena.rundir import RunDir, fold_late
    from arena.runner import PAUSE_DWELL_S, QUIET_MAX_S, QUIET_S, run_items, settle
    from arena.worker.procs import tracking_mode

    items = arena.items if items is None else items
    model_target = resolve_model(model, base_url, arena.accepted_profiles)
    info, version, factory, worker_start = _prepare(target, server, arena.restart_between_legs)
    why = arena.declined(info)
    if why is not None:
        raise Declined(why)
    if worker_start == "in-process" and not _concurrent(target):
        concurrency = 1
    pause_kind, mechanism = arena.pause_kind_of(info), arena.pause_mechanism_of(info)
    if pause_kind == "unsupported":
        what = "tool-level approval gate" if arena.gated else "pause primitive"
        err.print(f"[yellow]{escape(adapter_name)}: {escape(info.framework)} has no {what} (pause kind unsupported); "
                  "items still run to show what happens without one[/yellow]")
    meta = {"framework": info.framework, "framework_version": version, "pause_mechanism": mechanism,
            "pause_kind": pause_kind, "capabilities": info.capabilities.model_dump(),
            "restart_between_legs": arena.restart_between_legs,
            "declared_capabilities": arena.capabilities_of(info).model_dump(),
            "base_url": "loopback (scripted)" if model_target.scripted else model_target.upstream,
            "model_gateway": "scripted" if model_target.scripted else "recording proxy",
            "process_tracking": tracking_mode() if (arena.restart_between_legs or _isolated(target)) else "in-process",
            "body_pause": info.body_pause, "body_pause_mechanism": info.body_pause_mechanism,
            "pause_dwell_s": PAUSE_DWELL_S, "quiet_s": QUIET_S,
            "worker_start": worker_start, "concurrency": concurrency, "items": [i.id for i in items],
            "epochs": epochs, "seed": seed,
            "target": target.name if hasattr(target, "target") else f"{target.__module__}:{target.__qualname__}"}
    done: list = []
    if resume is not None:  # complete an interrupted run: only its missing items, into it
        run_dir, done = RunDir.reopen(resume)
        for result in done:
            if on_result is not None:
                on_result(result)
    else:
        run_dir = RunDir(out, arena.name, adapter_name, model, meta)
    finished = {(r.item_id, r.epoch): r for r in done}

    def record(result) -> None:
        run_dir.add(result)
        if on_result is not None:
            on_result(result)

    todo = [i for i in items if any((i.id, e) not in finished for e in range(1, epochs + 1))]
    fresh = run_items(factory, arena, todo, server=server, model=model_target, timeout_s=timeout,
                      on_result=record, on_late=run_dir.add_late, concurrency=concurrency,
                      spare_factory=_second_process(target, info, worker_start, server, todo),
                      epochs=epochs, seed=seed, skip=set(finished))
    if todo:  # what the last items left running still lands in late.jsonl: give it a last quiet period
        settle(lambda: run_dir.last_late, QUIET_S, QUIET_MAX_S)
    finished.update(((r.item_id, r.epoch), r) for r in fresh)
    results = [finished[(i.id, e)] for e in range(1, epochs + 1) for i in items if (i.id, e) in finished]
    results = fold_late(run_dir.path, results, arena)  # so the summary, table and --json show it too
    summary = RunSummary.tally(
        results, epochs=epochs, arena=arena.name, adapter=adapter_name, framework=info.framework, framework_version=version,
        pause_mechanism=mechanism, pause_kind=pause_kind, model=model, run_dir=str(run_dir.path),
    )
    run_dir.finish(summary, results)
    return summary


def _second_process(target, info, worker_start: str, server, items):
    """For items that resume one paused state twice at once: the second resume's adapter, in a worker process
    of its own (a registered adapter that otherwise runs in this process), so the two resumes share only
    what the framework persisted. None: the runner uses a second instance of the item's own kind."""
    from functools import partial

    from adapters import AdapterEntry
    from arena.worker.client import WorkerAdapter, start_mode

    if not any(i.replay is not None and i.replay.when == "concurrent" for i in items):
        return None
    if worker_start != "in-process" or not isinstance(target, AdapterEntry):
        return None  # already in workers (each instance its own process), or a module:Class the worker may not import
    mode = start_mode(sys.executable, target.target)
    return partial(WorkerAdapter, target.target, info, sys.executable, server, False, fork=mode == "fork")


def _concurrent(target) -> bool:
    """Whether the adapter's items may run at once (its framework keeps no event-loop-bound state per process)."""
    from adapters import AdapterEntry

    return not isinstance(target, AdapterEntry) or target.concurrent


def _isolated(target) -> bool:
    from adapters import AdapterEntry

    return isinstance(target, AdapterEntry) and target.isolated


def _matrix_plan(adapters: list[tuple[str, object]], arena_names: list[str]) -> list[tuple[object, str, str, object]]:
    """(arena spec, profile, adapter name, target) for every arena × its runnable profiles × adapter."""
    import arenas
    from arena.report.matrix import arena_order

    plan = []
    for arena_name in sorted(arena_names, key=arena_order):
        spec = arenas.load(arena_name)
        for profile in spec.profiles:
            plan.extend((spec, profile, name, target) for name, target in adapters)
    return plan


@app.command("matrix", cls=_Command)
def matrix_cmd(
    runs: Annotated[Optional[list[Path]], typer.Option("--runs", help="existing run directory, or a folder of them (newest per arena/adapter/model); repeatable. Without it, everything is run first")] = None,
    out: Annotated[Path, typer.Option(help="where matrix.md/.html/.json (and, when running, runs/) go")] = Path("reports"),
    adapter: Annotated[Optional[list[str]], typer.Option("--adapter", "-a", help=(
        "adapter name, `all`, or module:Class; repeatable. Without it: every installed adapter (when running)"))] = None,
    arena_name: Annotated[Optional[list[str]], typer.Option("--arena", help="only this arena; repeatable (default: all)")] = None,
    findings: Annotated[Optional[Path], typer.Option(help="also write findings.md here")] = None,
    versions: Annotated[bool, typer.Option("--versions", help=(
        "also run the default version set: the adapters pinned to older releases of their framework "
        "(arena/versions.py), each in an environment of its own"))] = False,
    json_out: Annotated[bool, typer.Option("--json", help="print matrix.json on stdout")] = False,
    timeout: Annotated[float, typer.Option(help="per-item timeout in seconds (when running)", min=1)] = 180.0,
    concurrency: Annotated[Optional[int], typer.Option(
        help="items of one adapter run at once, when running (default: what fits this machine)", min=1, max=64)] = None,
) -> None:
    """The feature matrix: run every arena × adapter × model profile (or read --runs) and write the report."""
    import json

    import arenas
    from arena.report import collect_runs, compute_matrix, write_reports

    unknown = [a for a in arena_name or [] if a not in arenas.names()]
    if unknown and not runs:
        _fail(f"unknown arena {unknown[0]!r}; choose from {', '.join(arenas.names())}")
    for name in adapter or []:
        _check_text(name, "--adapter")
    _check_timeout(timeout)
    if findings is not None and findings.is_dir():
        _fail(f"--findings {str(findings)!r} is a directory; give the file to write")
    missing = [str(r) for r in runs or [] if not r.is_dir()]
    if missing:
        _fail(f"no such directory: {missing[0]}")
    _writable_dir(out)
    if findings is not None:
        _writable_dir(findings.parent, "--findings' folder")
    failed_setup: list[str] = []
    if runs:
        missing = [str(r) for r in runs if not r.is_dir()]
        if missing:
            _fail(f"no such directory: {missing[0]}")
        collected = collect_runs(list(runs))
        if adapter and "all" not in adapter:
            collected = [r for r in collected if r.adapter in adapter]
        if arena_name:
            collected = [r for r in collected if r.arena in arena_name]
        if not collected:
            _fail("no run directories (meta.json + results.jsonl) found in " + ", ".join(map(str, runs)))
    else:
        wanted = adapter or []
        if versions:
            from adapters import REGISTRY
            from arena.versions import default_set

            wanted = [*(wanted or ["all"]), *default_set(REGISTRY)]
        # every arena that loads (a broken plugin arena is left out, with one warning line)
        collected, failed_setup = _matrix_run(wanted, arena_name or [a.name for a in arenas.ordered()], out / "runs", timeout,
                                              concurrency or default_concurrency())
    matrix = compute_matrix(collected)
    paths = write_reports(matrix, out, findings)
    if json_out:
        print(json.dumps(matrix.to_json(), ensure_ascii=False), flush=True)
    else:
        err.print("wrote " + ", ".join(str(p) for p in paths.values()))
    if failed_setup:
        raise typer.Exit(1)
    if not runs and any(r.status == "errored" for run in collected for r in run.results):
        raise typer.Exit(3)  # some items of this run could not be measured


def _matrix_run(adapter_names: list[str], arena_names: list[str], runs_dir: Path, timeout: float, concurrency: int = 1):
    """Run the whole plan under one harness server with a progress display; return (runs, failed setups)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from arena.report.matrix import load_run
    from arena.server import HarnessServer
    from arena.worker.envs import EnvError

    selected = _select_adapters(adapter_names)
    if not selected:
        _fail("no adapter is installed here; see `arena list`")
    plan = _matrix_plan(selected, arena_names)
    collected, failed = [], []
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err, transient=False)
    with HarnessServer() as server, progress:
        overall = progress.add_task("matrix (items)", total=sum(len(spec.items) for spec, *_ in plan))
        for spec, profile, name, target in plan:
            label = escape(f"{name} · {spec.name} × {profile}")
            if name in failed:
                progress.advance(overall, len(spec.items))
                continue
            task = progress.add_task(label, total=len(spec.items))

            def advance(result, _task=task, _label=label) -> None:
                progress.update(_task, advance=1,
                                description=f"{_label} [dim]{escape(result.item_id)} {result.status}[/dim]")
                progress.advance(overall)

            try:
                summary = _run_one(spec, name, target, profile, runs_dir, server, timeout=timeout, on_result=advance,
                                   concurrency=concurrency)
            except EnvError as exc:
                err.print(f"[red]{escape(name)}: {escape(str(exc))}[/red]")
                failed.append(name)
                progress.remove_task(task)
                progress.advance(overall, len(spec.items))
                continue
            except Declined as exc:
                progress.update(task, description=f"{label} [dim]not run: {escape(str(exc))}[/dim]")
                progress.advance(overall, len(spec.items))
                continue
            progress.update(task, description=f"{label} [dim]{summary.passed}/{summary.items} passed[/dim]")
            collected.append(load_run(Path(summary.run_dir)))
    return collected, failed


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that a run stops the way Ctrl-C stops it."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def _stopped(why: str, code: int) -> None:
    """A signal stopped the invocation: mark its open run directories interrupted, say so, exit."""
    from arena.rundir import interrupt_open_runs

    paths = interrupt_open_runs(why)
    where = f"; marked interrupted: {', '.join(str(p) for p in paths)}" if paths else ""
    print(f"arena: stopped by {why}{where}", file=sys.stderr)
    sys.exit(code)


def main() -> None:
    """Entry point: usage errors (and a plugin module calling sys.exit as it is imported) become one line on
    stderr and exit code 2; SIGINT/SIGTERM exit 130/143 with the open run directories marked interrupted
    (workers and temporary folders go at exit)."""
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    if len(sys.argv) > 1 and sys.argv[1] in ("run", "matrix"):
        from arena import scratch

        scratch.sweep()  # what harnesses killed earlier left in the temporary folder
    try:
        # Not standalone, typer returns an exit code instead of raising: from `raise typer.Exit(n)`,
        # and 130 for a KeyboardInterrupt it caught.
        code = app(standalone_mode=False)
        if code == 130:
            _stopped("SIGINT", 130)
        if isinstance(code, int) and code:
            sys.exit(code)
    except UserError as exc:
        print(f"arena: error: {redact(str(exc))}", file=sys.stderr)
        sys.exit(2)
    except SystemExit as exc:  # a plugin module (an arena's) that calls sys.exit while it is imported
        module = importing(exc)
        if module is None:
            raise
        print(f"arena: error: {redact(exited_at_import(module, exc))}", file=sys.stderr)
        sys.exit(2)
    except Exit as exc:
        sys.exit(exc.exit_code)
    except Abort:
        _stopped("SIGINT", 130)
    except Terminated:
        _stopped("SIGTERM", 143)
    except TyperException as exc:  # usage errors from the parser (bad flag, missing argument)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if message.strip():
            print(f"arena: error: {message}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2) or 2)
    except KeyboardInterrupt:
        _stopped("SIGINT", 130)


if __name__ == "__main__":
    main()
