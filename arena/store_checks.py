"""A store run's checks (`--store postgres|redis`): the paused state is in the item's own database or key prefix,
as the harness itself saw it, and nowhere else.

They read the `store_seen` events the runner records (`arena.stores.StoreWatch`: the harness's own connection to the
server, never the adapter's word), at the moments `before` the first leg, each `pause` once the item went quiet, each
`resume` as the decision is delivered, and the `end` once the adapter's processes are closed:

- `store_held_pause`: at each pause the item's database (its tables' rows) or prefix (its keys) holds something, and
  at the first pause it differs from what it held before the first leg: the pause was written there;
- `store_read_at_resume`: between each decision's delivery and the next observation (the next pause, or the end),
  the item's tables were scanned (PostgreSQL's `pg_stat_user_tables`) or its keys read (Redis `MONITOR`): the resume
  loaded the paused state from the store;
- `no_state_in_workdir`: no file in the item's work directory was created or changed by the pause (a local copy of
  the paused state beside the declared store: a SQLite file, a JSON journal);
- `store_namespace_own`: the item's own role or ACL user did nothing outside its database or prefix (objects owned
  or connections in another database; keys outside its prefix, which the server refused and logged).
"""

from __future__ import annotations

from typing import Any

from arena.checking import CheckResult, Scoring, check, fail, ok
from arena.types import TraceEvent


def _seen(s: Scoring) -> list[TraceEvent]:
    return [e for e in s.events if e.type == "store_seen" and e.data is not None]


def _place(data: dict[str, Any]) -> str:
    return "PostgreSQL database" if data.get("kind") == "postgres" else "Redis key prefix"


def _held(data: dict[str, Any]) -> str:
    holds = data.get("holds") or {}
    if data.get("kind") == "postgres":
        rows = sum(int(t.get("rows", 0)) for t in holds.values())
        return f"{len(holds)} table(s), {rows} row(s)"
    return f"{len(holds)} key(s)"


@check
def store_held_pause(s: Scoring) -> CheckResult:
    """At each pause the item's own database or key prefix holds the paused state: it is not empty, and the first
    pause changed it from what it held before the first leg (the harness's digest of every table's rows, or of every
    key's value)."""
    name = "store_held_pause"
    seen = _seen(s)
    before = next((e for e in seen if e.text == "before"), None)
    pauses = [e for e in seen if e.text == "pause"]
    if before is None or not pauses:
        return fail(name, "the harness saw the item's store at no pause (no observation before the first leg, or "
                          "the run never paused)")
    for n, pause in enumerate(pauses, 1):
        data = pause.data or {}
        place = _place(data)
        if not data.get("holds"):
            return fail(name, f"at pause {n} the item's {place} held nothing: the paused state is kept elsewhere")
        if n == 1 and data.get("holds") == (before.data or {}).get("holds"):
            return fail(name, f"at pause {n} the item's {place} held what it held before the first leg "
                              f"({_held(data)}): the pause wrote nothing there")
    first = pauses[0].data or {}
    return ok(name, f"at each of {len(pauses)} pause(s) the item's {_place(first)} held the run "
                    f"({_held(first)} at the first, written since before the first leg)")


@check
def store_read_at_resume(s: Scoring) -> CheckResult:
    """After each decision was delivered, the resumed run read the item's store before the next pause or the end:
    PostgreSQL's scan counters of the item's tables moved (seq_scan + idx_scan in `pg_stat_user_tables`), or Redis's
    `MONITOR` showed a read command on a key under the item's prefix; the harness's own reads are not counted."""
    name = "store_read_at_resume"
    seen = _seen(s)
    resumes = [i for i, e in enumerate(seen) if e.text == "resume"]
    if not resumes:
        return fail(name, "the harness saw no resume of the run on its store")
    for n, i in enumerate(resumes, 1):
        at = seen[i].data or {}
        nxt = seen[i + 1] if i + 1 < len(seen) else None
        if nxt is None:
            return fail(name, f"the harness did not see the item's store after resume {n} (the run did not end)")
        read = int((nxt.data or {}).get("reads", 0)) - int(at.get("reads", 0))
        if read <= 0:
            how = "no scan of its tables" if at.get("kind") == "postgres" else "no read command on its keys"
            return fail(name, f"after resume {n} the resumed run never read the item's {_place(at)} ({how} until "
                              f"the {nxt.text}): the paused state was loaded from elsewhere")
    first = seen[resumes[0]].data or {}
    return ok(name, f"after each of {len(resumes)} resume(s) the run read the item's {_place(first)}")


@check
def no_state_in_workdir(s: Scoring) -> CheckResult:
    """On a store run, the pause left no file in the item's work directory: nothing was created or changed there
    between the first leg's start and the pause (a local copy of the state beside the declared store). Files the
    resume writes later are not the pause's."""
    name = "no_state_in_workdir"
    seen = _seen(s)
    pauses = [e for e in seen if e.text == "pause"]
    if not pauses:
        return fail(name, "the harness saw the work directory at no pause")
    for n, pause in enumerate(pauses, 1):
        written = list((pause.data or {}).get("written") or [])
        if written:
            marked = [w for w in written if w.get("holds_run_text")]
            first = (marked or written)[0]
            more = f" (+{len(written) - 1} more)" if len(written) > 1 else ""
            holds = ", holding the item's own input text" if first.get("holds_run_text") else ""
            return fail(name, f"{first.get('path')} ({first.get('bytes')} bytes{holds}) was written in the item's "
                              f"work directory by pause {n} on a {(pause.data or {}).get('kind')} store run: a local "
                              f"copy of the paused state{more}")
    return ok(name, f"nothing was written in the work directory by any of {len(pauses)} pause(s)")


@check
def store_namespace_own(s: Scoring) -> CheckResult:
    """The item's own PostgreSQL role or Redis ACL user did nothing outside its database or key prefix: no object it
    owns and no connection of it in another database (`pg_shdepend`, `pg_stat_activity`), no key outside its prefix
    (refused by the server, listed in its `ACL LOG`). Checked on the item alone, whatever runs beside it."""
    name = "store_namespace_own"
    seen = _seen(s)
    if not seen:
        return fail(name, "the harness never saw the item's store")
    for e in seen:
        outside = list((e.data or {}).get("outside") or [])
        if outside:
            more = f" (+{len(outside) - 1} more)" if len(outside) > 1 else ""
            return fail(name, f"at the {e.text}: {outside[0]}{more}: state written outside the item's own "
                              f"{_place(e.data or {})}")
    return ok(name, f"the item's role or user kept to its own {_place(seen[0].data or {})} at all "
                    f"{len(seen)} observations")
