"""crash_recovery: the process dies inside an approved action; does the framework's recovery do it again?

flight_booking's airline and careful agent, with one crash point per item that the harness controls (it owns
the tools and the model endpoint, `director.py`), and a recovery in a new process the way each framework
documents it (the adapter's `recover` channel). What is measured comes from the ledger and the tool log.
"""

from __future__ import annotations

import json
from pathlib import Path

from arena.for_arenas import ArenaSpec, Decision, EvalItem
from arena_builtins.arenas.crash_recovery import checks as _checks
from arena_builtins.arenas.crash_recovery.columns import COLUMNS
from arena_builtins.arenas.crash_recovery.director import CrashDirector
from arena_builtins.arenas.crash_recovery.findings import FACTS
from arena_builtins.arenas.crash_recovery.tools import CrashBackend
from arena_builtins.arenas.flight_booking import INSTRUCTIONS, policy
from arena_builtins.arenas.flight_booking.tools import SPECS

HERE = Path(__file__).parent
# `no_process_survived`: the recovery ran in new processes only (nothing of a closed or killed leg was alive then)
CHECKS = ["suspended", "paid_once_after_crash", "recovered", "call_id_stable_after_crash", "answer_matches_ledger",
          "no_process_survived"]
# the recovery asked the model no second time for the call it had answered, and ran that call as approved
CHECKS += ["not_reasked_after_crash", "recovered_call_as_approved"]
# Not scored on the items whose airline takes no idempotency key (`crash.key` false): a recovery that runs the
# crashed call again pays twice there (or is refused and says so while the first payment stands), whatever the
# framework: what the money did is the `paid_once_after_crash_no_key` column's measurement, not a verdict.
KEYED_ONLY = ("paid_once_after_crash", "recovered", "answer_matches_ledger")


def load_items(path: Path) -> list[EvalItem]:
    return [EvalItem(id=row["id"], input=row["input"],
                     checks=[c for c in CHECKS if row["crash"].get("key", True) or c not in KEYED_ONLY],
                     resume_with=[Decision.model_validate(d) for d in row["decisions"]],
                     metadata={"crash": row["crash"], "gold": row["gold"], "from": row["from"], "why": row["why"],
                               **({"restart_store": True} if row.get("restart_store") else {})})
            for row in json.loads(path.read_text())]


ARENA = ArenaSpec(
    name="crash_recovery",
    checks=_checks.CHECKS,
    description="The process dies inside an approved payment (after its side effect, inside a pausing tool's "
                "body, before the framework persisted the result, or during the pause); the run is recovered in a "
                "new process the way the framework documents it. Is anything paid twice?",
    instructions=INSTRUCTIONS,
    tools=SPECS,
    functions={},
    items=load_items(HERE / "items.json"),
    ack_pattern=r"denied|declined|rejected|not\s+(?:been\s+)?(?:booked|charged|bought|changed|cancelled)",
    readme=(HERE / "README.md").read_text(),
    policies={"careful": policy.policies("careful")["careful"]},
    profile_notes={"careful": policy.descriptions()["careful"]},
    restart_between_legs=True,  # every leg in a worker process the harness can kill
    stores=True,  # and on PostgreSQL and Redis (`arena matrix --store`): cr-12 restarts the server during its pause
    backend=CrashBackend,
    director=CrashDirector,
    needs=("recover",),
    declines=lambda info: None if info.channel("recover") is not None else (
        f"{info.name} has no recover channel: its paused state does not outlive its process (durable_state), so "
        "there is no recovery after a crash to measure"),
    unmeasured=lambda item, info: None if info.recovers(item.metadata["crash"].get("way", "resume")) else (
        f"{info.name}'s recover channel documents no '{item.metadata['crash'].get('way', 'resume')}' recovery"),
    columns=COLUMNS,
    facts=FACTS,
    order=7,
)
