"""The `arena` command line: list arenas and adapters, run an arena on adapters.

Frameworks are imported only when an adapter is about to run, so `--help` and `list` stay instant.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Optional


import typer
from typer.exceptions import Abort, Exit, TyperException
from rich.console import Console
from rich.markup import escape

from arena.errors import ArenaError, PluginError, SetupError, UserError, exited_at_import, importing
from arena.paths import writable_dir
from arena.redact import redact
from rich.table import Table
from typer.core import TyperCommand, TyperGroup, TyperOption

if TYPE_CHECKING:
    from arena.report.matrix import Run
    from arena.results import ItemResult
    from arena.rundir import CannotWrite
    from arena.spec import ArenaSpec


class _PlainTypes:
    """typer's help shows a value type for every option, flags included (`--json <bool>`, as if the flag
    took a value), and a repeatable option's as `<list[str]>`: a flag shows none, a repeatable one its item's."""

    def get_params(self, ctx: Any) -> list[Any]:  # typer's own (vendored) click types
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
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

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.params:
            if isinstance(param, TyperOption) and param.name == "model" and "Scripted profiles" not in (param.help or ""):
                param.help = f"{param.help}. Scripted profiles: {_profiles_text()}"
        return super().format_help(ctx, formatter)


def _profiles_text() -> str:
    return "; ".join(f"{name}: " + ", ".join(p + (" (default)" if n == 0 else "") for n, p in enumerate(spec.accepted_profiles))
                     for name, spec in _loadable_arenas())


def _loadable_arenas() -> Iterator[tuple[str, ArenaSpec]]:
    """(name, spec) of every arena that loads, in name order; a broken plugin arena is left out silently
    (`arena list` shows its error in its own row)."""
    from arena import catalog

    for name in catalog.arena_names():
        try:
            yield name, catalog.load_arena(name)
        except PluginError:
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
            from arena import DISTRIBUTION

            version = metadata.version(DISTRIBUTION)
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


def _fail(message: str) -> NoReturn:
    raise UserError(message)


MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a week: longer is a typo (and overflows the platform's clock types)
MAX_NAME = 200  # characters of a model name or an adapter name that goes into a run directory's name
MAX_EPOCHS = 100  # runs of every item (`--epochs`)
MAX_SEED = 2**63 - 1


def _check_text(value: str | None, what: str) -> None:
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        _fail(f"{what} must be UTF-8 text")
    if len(value) > MAX_NAME:
        _fail(f"{what} is {len(value)} characters long; at most {MAX_NAME}")


def _store(kind: str) -> Any:
    """A --store value, checked: one line for an unknown one."""
    from arena.stores import STORES

    if kind not in STORES:
        _fail(f"--store {kind!r}: choose from {', '.join(STORES)}")
    return kind


def _check_timeout(timeout: float) -> None:
    if not math.isfinite(timeout) or timeout > MAX_TIMEOUT_S:
        _fail(f"--timeout must be a number of seconds from 1 to {MAX_TIMEOUT_S:g}")


@app.command("list", cls=_Command)
def list_cmd() -> None:
    """Arenas, adapters, and whether each adapter's framework is installed (and which version)."""
    from arena import catalog

    out = _stdout_console()
    table = Table(title="Arenas")
    for col in ("arena", "items", "description", "from"):
        table.add_column(col)
    for name in catalog.arena_names():
        try:
            spec = catalog.load_arena(name)
        except PluginError as exc:  # a broken plugin arena: its own row says why
            table.add_row(name, "-", f"[red]{escape(str(exc))}[/red]", catalog.provider(name))
            continue
        table.add_row(name, str(len(spec.items)), spec.description, catalog.provider(name))
    out.print(table)
    table = Table(title="Adapters")
    for col in ("adapter", "framework", "version", "installed", "environment", "from"):
        table.add_column(col)
    for entry in catalog.adapters().values():  # plugin adapters from their metadata: none is imported
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


@app.command("run", cls=_RunCommand)
def run_cmd(
    arena_name: Annotated[str, typer.Argument(metavar="ARENA", help="arena to run (see `arena list`)")],
    adapter: Annotated[Optional[list[str]], typer.Option("--adapter", "-a", help=(
        "adapter name, `all`, module:Class, name@<release>, name@path:<checkout> or name@git+<url>@<ref>; repeatable. Without it: every installed adapter (see `arena list`)"))] = None,
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
    stream: Annotated[bool, typer.Option("--stream", help=(
        "stream every leg through the framework's streaming API and check what the stream tells; adapters that "
        "cannot are not measured"))] = False,
    store: Annotated[str, typer.Option("--store", metavar="sqlite|postgres|redis", help=(
        "where the framework keeps the paused state: its own local file (sqlite), or its own store for a PostgreSQL "
        "or Redis server (scripts/services up, or ARENA_POSTGRES_URL / ARENA_REDIS_URL); adapters without one are "
        "not measured"))] = "sqlite",
    resume_on: Annotated[Optional[str], typer.Option("--resume-on", metavar="ADAPTER[@RELEASE]", help=(
        "run every leg after the first on this adapter (another release of the same framework), the paused state "
        "passing only through the framework's own store, as in a rolling deploy (durable_state, crash_recovery)"))] = None,
) -> None:
    """Run ARENA on the adapters given with -a (default: every installed one); write a run directory per adapter
    and print the results."""
    from arena import catalog
    from arena.evaluation import evaluate, run_summary_json

    _check_text(arena_name, "the arena name")
    if catalog.find_arena(arena_name) is None:
        _fail(f"unknown arena {arena_name!r}; choose from {', '.join(catalog.arena_names())}")
    _check_text(model, "--model")
    _check_text(base_url, "--base-url")
    for name in adapter or []:
        _check_text(name, "--adapter")
    _check_timeout(timeout)
    if junit is not None:
        writable_dir(junit.parent, "--junit's folder")
        if junit.is_dir():
            _fail(f"--junit {str(junit)!r} is a directory; give the file to write")
    against = None
    if baseline is not None:  # read before the run, so a bad path costs nothing and the run is not its own baseline
        from arena.baseline import load_baseline

        try:
            against = load_baseline(baseline)
        except ValueError as exc:
            _fail(f"--baseline {exc}")

    reporter = _RunProgress()
    try:
        runs = evaluate(arena_name, adapter or [], model=model, base_url=base_url, items=item, out=out, timeout=timeout,
                        concurrency=concurrency, epochs=epochs, seed=seed, resume=resume, reporter=reporter,
                        stream=stream, store=_store(store), resume_on=resume_on)
    except SetupError as exc:  # an adapter@version whose release could not be looked up
        err.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(1) from None
    if runs.nothing_to_do:
        return
    if json_out:
        for run in runs:
            print(run_summary_json(run), flush=True)
    else:
        _print_table(runs)
    _print_errors(reporter.kept, verbose, err if json_out else _stdout_console())  # stdout stays JSON with --json
    regressed = False
    done = sorted(runs, key=lambda r: r.key)  # in report order, as a reader of the run directories lists them
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
    if runs.failed:
        raise typer.Exit(1)
    if not done:  # every adapter was declined (not measured): a table of nothing is no success
        err.print("[yellow]nothing was measured: every adapter was declined (why is said above)[/yellow]")
        raise typer.Exit(3)
    if regressed:
        raise typer.Exit(4)  # a regression against --baseline (listed on stderr)
    if any(s.errors for s in runs.summaries):
        raise typer.Exit(3)  # some items could not be measured (the harness's side failed, not the framework)


_STYLE = {"info": "cyan", "dim": "dim", "warning": "yellow", "error": "red"}


def _say(message: str, level: str) -> None:
    style = _STYLE.get(level)
    err.print(f"[{style}]{escape(message)}[/{style}]" if style else escape(message), soft_wrap=level == "warning")


class _RunProgress:
    """`arena run`'s display of an evaluation: a progress bar per adapter on stderr, each result kept for the
    errors printed under the table."""

    def __init__(self) -> None:
        self.kept: dict[str, list[ItemResult]] = {}
        self._bars: dict[str, tuple[Any, Any, str]] = {}

    def say(self, message: str, level: str = "plain") -> None:
        _say(message, level)

    def started(self, key: str, label: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=err, transient=False)
        progress.start()
        self._bars[key] = (progress, progress.add_task(escape(label), total=total), label)
        self.kept.setdefault(label, [])

    def result(self, key: str, result: ItemResult) -> None:
        progress, task, label = self._bars[key]
        self.kept[label].append(result)
        progress.update(task, advance=1, description=f"{escape(label)} [dim]{escape(result.item_id)} {result.status}[/dim]")

    def finished(self, key: str, outcome: str) -> None:
        progress, task, label = self._bars.pop(key)
        progress.update(task, description=escape(label))
        progress.stop()


def _print_table(runs: list[Run]) -> None:
    """One row per run made: its summary, and as "not measured" its errors and the items the arena left out for
    its adapter (meta `not_measured`)."""
    from arena.stats import interval, percent

    summaries = [r.summary for r in runs if r.summary is not None]
    left_out = {id(r.summary): len(r.meta.get("not_measured") or {}) for r in runs}
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
            f"[{style}]{s.passed}/{s.items}[/{style}]", *(stats if repeated else ()), str(s.errors + left_out.get(id(s), 0)),
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


MAX_ERROR_KINDS = 5  # distinct errors shown per adapter without --verbose


def _item_label(result: ItemResult) -> str:
    epoch = getattr(result, "epoch", 1)
    return result.item_id if epoch == 1 else f"{result.item_id} (epoch {epoch})"


def _print_errors(kept: dict[str, list[ItemResult]], verbose: bool, out: Console) -> None:
    """What the table does not show: each adapter's item errors (`ItemResult.error`, its first line) and
    how many items share it; with `verbose`, which items, and the adapter's traceback where it raised."""
    from rich.text import Text

    from arena.report.render_md import printable  # an endpoint's error text may hold terminal escapes

    lines: list[Text] = []
    for adapter, results in kept.items():
        groups: dict[str, list[ItemResult]] = {}
        for r in results:
            if r.error:
                first = printable((redact(r.error).strip().splitlines() or ["(no message)"])[0])
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
                    lines.extend(Text("      " + printable(t)) for t in redact(raised.traceback or "").rstrip().splitlines())
    if not lines:
        return
    out.print(Text("item errors (first line of each):", style="bold"), soft_wrap=True)
    for line in lines:
        out.print(line, soft_wrap=True)
    if not verbose:
        out.print(Text("(--verbose shows which items, and the adapter's traceback where it raised)", style="dim"),
                  soft_wrap=True)


def _history_adapters(name: str) -> list[str]:
    """`name@release` for the latest patch of each of the last six minor releases of its framework, oldest
    first, and `name` itself for the installed release."""
    from arena import catalog
    from arena.versions import recent_releases

    entry = catalog.adapters().get(name)
    if entry is None:
        _fail(f"--history: unknown adapter {name!r}; choose from {', '.join(catalog.adapters())}")
    if entry.isolated or not entry.available:
        _fail(f"--history: {name!r} must be installed in this environment (an isolated adapter pins its release "
              "in its own requirements)")
    try:
        releases = recent_releases(entry.framework)
    except SetupError as exc:
        _fail(f"--history: {exc}")
    return [f"{name}@{v}" for v in releases if v != entry.version] + [name]


@app.command("matrix", cls=_Command)
def matrix_cmd(
    runs: Annotated[Optional[list[Path]], typer.Option("--runs", help="existing run directory, or a folder of them (newest per arena/adapter/model), or an evidence archive (unpacked into --out's runs/); repeatable. Without it, everything is run first")] = None,
    out: Annotated[Path, typer.Option(help="where matrix.md/.html/.json (and, when running, runs/) go")] = Path("reports"),
    adapter: Annotated[Optional[list[str]], typer.Option("--adapter", "-a", help=(
        "adapter name, `all`, module:Class, name@<release>, name@path:<checkout> or name@git+<url>@<ref>; repeatable. Without it: every installed adapter (when running)"))] = None,
    arena_name: Annotated[Optional[list[str]], typer.Option("--arena", help="only this arena; repeatable (default: all)")] = None,
    findings: Annotated[Optional[Path], typer.Option(help="also write findings.md here")] = None,
    versions: Annotated[bool, typer.Option("--versions", help=(
        "also run the default version set: the adapters pinned to older releases of their framework "
        "(arena/versions.py), each in an environment of its own"))] = False,
    json_out: Annotated[bool, typer.Option("--json", help="print matrix.json on stdout")] = False,
    timeout: Annotated[float, typer.Option(help="per-item timeout in seconds (when running)", min=1)] = 180.0,
    concurrency: Annotated[Optional[int], typer.Option(
        help="items of one adapter run at once, when running (default: what fits this machine)", min=1, max=64)] = None,
    shard: Annotated[Optional[str], typer.Option(
        "--shard", metavar="K/N", help=(
            "run only shard K of N of the matrix's cells (a deterministic partition balanced by cost, for a "
            "scheduler's job array); merge the shards' run directories with --runs"))] = None,
    jobs: Annotated[int, typer.Option(
        "--jobs", help=("run the matrix as this many processes of this machine at a time (a process per framework, costliest "
                         "first, and a free one helps the framework with the most cells left; one process keeps less "
                         "than a core busy: one more than the cores keeps them busy)"),
        min=1, max=16)] = 1,
    stream: Annotated[bool, typer.Option("--stream", help=(
        "also run every cell of each adapter that streams (its installed release) streamed, as a row of its own"))] = False,
    store: Annotated[Optional[list[str]], typer.Option("--store", metavar="postgres|redis", help=(
        "also run the arenas measured on stores (durable_state, crash_recovery) with the paused state on this "
        "server, as columns of their own (repeat for both; scripts/services up starts them)"))] = None,
    history: Annotated[Optional[str], typer.Option("--history", metavar="ADAPTER", help=(
        "run ADAPTER against the latest patch of each of its framework's last six minor releases (and the "
        "installed one), and write history-ADAPTER.md: every cell's value now, since which release, and where it changed "
        "(with --stream, every release streamed too, as a section of its own; with --runs: from run directories made "
        "before)"))] = None,
    archive: Annotated[Optional[Path], typer.Option("--archive", metavar="DIR", help=(
        "also pack the matrix's run directories into DIR/evidence-<hash>.tar.gz (named by its content, with a "
        "manifest of each run directory's hash), which --runs reads back"))] = None,
) -> None:
    """The feature matrix: run every arena × adapter × model profile (or read --runs) and write the report."""
    import json

    from arena import catalog
    from arena.report import collect_runs, compute_matrix, write_reports

    unknown = [a for a in arena_name or [] if a not in catalog.arena_names()]
    if unknown and not runs:
        _fail(f"unknown arena {unknown[0]!r}; choose from {', '.join(catalog.arena_names())}")
    for name in adapter or []:
        _check_text(name, "--adapter")
    _check_timeout(timeout)
    if findings is not None and findings.is_dir():
        _fail(f"--findings {str(findings)!r} is a directory; give the file to write")
    missing = [str(r) for r in runs or [] if not (r.is_dir() or r.is_file())]  # a file: an evidence archive
    if missing:
        _fail(f"no such directory: {missing[0]}")
    if jobs > 1 and (runs or shard is not None):
        _fail("--jobs runs the matrix in several processes of this machine; it goes with neither --runs nor --shard")
    if stream and runs:
        _fail("--stream runs streamed cells; --runs reads run directories (their streamed runs included): give one")
    if store and runs:
        _fail("--store runs cells on a store; --runs reads run directories (their store runs included): give one")
    store_kinds = [_store(k) for k in store or []]
    if shard is not None:
        if runs:
            _fail("--shard runs a part of the matrix; --runs merges parts that were run: give one or the other")
        from arena.shard import Shard

        Shard.parse(shard)  # a bad K/N is one line before anything runs
    if history is not None:  # with --runs: the history of run directories made before
        if adapter or versions or shard is not None:
            _fail("--history runs one adapter's releases: it goes with none of -a, --versions, --shard")
        if not runs:
            adapter = _history_adapters(history)
    writable_dir(out)
    if findings is not None:
        writable_dir(findings.parent, "--findings' folder")
    if archive is not None:  # before anything runs: a bad --archive is one line, not the end of a long matrix
        writable_dir(archive, "--archive")
    failed_setup = False
    if runs:
        from arena.report.archive import resolve_runs

        collected = collect_runs(resolve_runs(list(runs), out))  # an archive's run directories: out/runs/<run dir>
        if adapter and "all" not in adapter:
            collected = [r for r in collected if r.adapter in adapter]
        if arena_name:
            from arena.stores import unscoped

            collected = [r for r in collected if unscoped(r.arena)[0] in arena_name]
        if not collected:
            _fail("no run directories (meta.json + results.jsonl) found in " + ", ".join(map(str, runs)))
    else:
        from arena.evaluation import evaluate_matrix

        try:
            made = evaluate_matrix(adapter or [], arena_name or [], versions=versions, out=out / "runs",
                                   timeout=timeout, concurrency=concurrency, reporter=_MatrixProgress(), shard=shard,
                                   jobs=jobs, stream=stream, store_kinds=store_kinds,
                                   stream_releases=history is not None and stream)
        except SetupError as exc:  # an adapter@version whose release could not be looked up
            err.print(f"[red]{escape(str(exc))}[/red]")
            raise typer.Exit(1) from None
        collected, failed_setup = list(made), bool(made.failed)
    matrix = compute_matrix(collected)
    if runs:  # a merge of shards: every planned cell that none delivered is named
        from arena.shard import cell_key, missing as missing_cells

        matrix.missing = [m for m in missing_cells(runs, {cell_key(r.arena, r.adapter, r.model) for r in collected})
                          if (not arena_name or m.cell.split("/")[0] in arena_name)
                          and (not adapter or "all" in adapter or m.cell.split("/")[1] in adapter)]
    packed = None
    if archive is not None and collected:  # nothing ran at all (every adapter failed to set up): nothing to pack
        from arena.report.archive import pack

        with err.status("packing run directories") as packing:
            packed = pack([r.path for r in collected], archive,
                          on_progress=lambda done, total: packing.update(f"packing run directories {done}/{total}"))
        err.print(f"packed {len(collected)} run directories into {escape(str(packed))}", highlight=False)
    paths = write_reports(matrix, out, findings, evidence=packed.name if packed is not None else None)
    if history is not None:
        from arena.report.history import history_page

        path = out / f"history-{history}.md"
        path.write_text(history_page(matrix, history, doc_dir=out))
        paths["history"] = path
    if json_out:
        print(json.dumps(matrix.to_json(), ensure_ascii=False), flush=True)
    else:
        err.print("wrote " + ", ".join(str(p) for p in paths.values()))
    if matrix.missing:
        err.print(f"[red]{len(matrix.missing)} planned cell(s) missing from the merge[/red] (listed in the report): "
                  + escape("; ".join(m.text() for m in matrix.missing[:3])) + ("; ..." if len(matrix.missing) > 3 else ""))
        raise typer.Exit(1)
    if failed_setup:
        raise typer.Exit(1)
    if not runs and any(r.status == "errored" for run in collected for r in run.results):
        raise typer.Exit(3)  # some items of this run could not be measured


@app.command("matrix-job", hidden=True)
def matrix_job_cmd(request: str) -> None:
    """One process of `arena matrix --jobs N` (arena/jobs.py): its adapters' cells, progress as JSON lines."""
    import json

    from arena.evaluation import run_job
    from arena.jobs import Lines

    job = json.loads(request)
    lines = Lines(int(job["fd"]))
    made = run_job(job["adapters"], job["arenas"], out=Path(job["out"]), timeout=job["timeout"],
                   concurrency=job["concurrency"], reporter=lines, stream=bool(job.get("stream")),
                   store_kinds=job.get("stores") or [], claims=Path(job["claims"]) if job.get("claims") else None,
                   from_end=bool(job.get("from_end")), stream_releases=bool(job.get("stream_releases")))
    lines.send(ev="done", runs=[str(r.path) for r in made], failed=made.failed, declined=made.declined)


def _default_runs() -> Path:
    """Where `arena site` and `arena view` look without being told: reports/runs if it exists, else runs."""
    return Path("reports/runs") if Path("reports/runs").is_dir() else Path("runs")


@app.command("site", cls=_Command)
def site_cmd(
    runs: Annotated[Optional[list[Path]], typer.Option("--runs", help=(
        "run directory, folder of them (newest per arena/adapter/model) or evidence archive; repeatable "
        "(default: reports/runs if it exists, else runs)"))] = None,
    out: Annotated[Path, typer.Option(help="the folder the site is written into")] = Path("site"),
) -> None:
    """Build the static site from run directories: scorecard, matrix, a page per framework and per run, traces."""
    import tempfile

    from arena.report import collect_runs, compute_matrix
    from arena.report.archive import resolve_runs
    from arena.report.site import build_site

    given = list(runs or [_default_runs()])
    writable_dir(out)
    with tempfile.TemporaryDirectory(prefix="arena-site-") as scratch:  # an archive's runs, unpacked for the build
        collected = collect_runs(resolve_runs(given, Path(scratch)))
        if not collected:
            _fail("no run directories (meta.json + results.jsonl) found in " + ", ".join(map(str, given)))
        index = build_site(compute_matrix(collected), out)
    err.print(f"wrote {index} ({len(collected)} runs; its traces open when served over HTTP: `arena view`, "
              "or any static server)", highlight=False)


@app.command("view", cls=_Command)
def view_cmd(
    folder: Annotated[Optional[Path], typer.Argument(
        metavar="DIR", help="a folder of run directories, or one (default: reports/runs if it exists, else runs)")] = None,
    host: Annotated[str, typer.Option(help="the address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="the port to listen on (0: a free one)", min=0, max=65535)] = 8765,
) -> None:
    """Serve the site's pages from run directories, re-read on every request: a run still being written shows
    what it has so far, and a reload shows what it wrote since. Ctrl-C stops it."""
    from arena.report.site.view import RunFolders, listen, serve

    where = folder if folder is not None else _default_runs()
    if not where.is_dir():
        _fail(f"no such directory: {where}")
    folders = RunFolders([where])
    site = folders.site()
    try:
        sock = listen(host, port)
    except OSError as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    shown = f"[{host}]" if ":" in host else host
    print(f"arena view: http://{shown}:{sock.getsockname()[1]}/ ({len(site.runs)} run directories in {where}; "
          "Ctrl-C stops it)", flush=True)
    try:
        serve(folders, sock)
    except KeyboardInterrupt:
        pass
    print("arena view: stopped", flush=True)


class _MatrixProgress:
    """`arena matrix`'s display of an evaluation: one bar for every item of the plan, one per run in progress.
    A run that ends leaves the live display as a line printed above it: the display redraws every row ten times
    a second, so keeping the hundreds of finished runs of a full matrix in it cost a tenth of a core by the end."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=err, transient=False)
        self.tasks: dict[str, list[Any]] = {}  # key -> [task, label, total, done, started]

    def say(self, message: str, level: str = "plain") -> None:
        _say(message, level)

    def started(self, key: str, label: str, total: int) -> None:
        if key == "matrix":
            self.progress.start()
            self.overall = self.progress.add_task(escape(label), total=total)
            return
        self.tasks[key] = [self.progress.add_task(escape(label), total=total), escape(label), total, 0, time.monotonic()]

    def result(self, key: str, result: ItemResult) -> None:
        entry = self.tasks[key]
        entry[3] += 1
        self.progress.update(entry[0], advance=1, description=f"{entry[1]} [dim]{escape(result.item_id)} {result.status}[/dim]")
        self.progress.advance(self.overall)

    def finished(self, key: str, outcome: str) -> None:
        if key == "matrix":
            self.progress.stop()
            return
        task, label, total, done, started = self.tasks.pop(key)
        self.progress.remove_task(task)
        if outcome not in ("failed", "skipped"):  # failed or skipped: no run, its items leave the plan (said apart)
            took = int(time.monotonic() - started)
            short = f" [dim]({done} of {total} items)[/dim]" if done < total else ""
            self.progress.console.print(f"{label} {escape(outcome)}{short} [dim]{took // 60}:{took % 60:02d}[/dim]",
                                        highlight=False)
        self.progress.advance(self.overall, total - done)


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


def _cannot_write(exc: CannotWrite) -> None:
    """A run directory could not be written (a full disk): one line naming it and why, the open run directories
    marked interrupted where their meta.json can still be written, exit 3 (nothing more could be measured)."""
    from arena.rundir import mark_open_runs_interrupted

    marked, unmarked = mark_open_runs_interrupted(exc.reason)
    said = [str(exc)]
    if marked:
        said.append("marked interrupted" + ("" if marked == [exc.path] else f": {', '.join(map(str, marked))}"))
    if unmarked:
        said.append(f"its meta.json could not be marked interrupted ({', '.join(map(str, unmarked))}: it says running, "
                    "which readers take for interrupted)")
    if marked or unmarked:
        said.append(("free space, then " if exc.out_of_space else "") + "`arena run <arena> --resume <run directory>` "
                    "runs only its missing items")
    else:
        said.append("no run directory was made")
    print(redact("arena: error: " + "; ".join(said)), file=sys.stderr)
    sys.exit(3)


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
    except ArenaError as exc:  # a run directory that cannot be written (a full disk); any other is not ours to catch
        from arena.rundir import CannotWrite

        if not isinstance(exc, CannotWrite):
            raise
        _cannot_write(exc)
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
