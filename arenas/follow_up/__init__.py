"""follow_up: the conversation goes on after a run that paused for an approval.

Each item books a meeting room behind the framework's own tool-level gate (the scripted model books without asking,
as in approval_gate), approved or denied; once the run finished, the user asks in the same conversation which room
was booked (the `follow_up` channel, `channel.py`). The framework sends that question with the history it kept: the
run's booking must be in it, its call paired with its result (`history_kept`), and the request must be one the real
API takes (the universal `requests_well_formed`: the gateway refuses a tool result without its call as the API does,
HTTP 400). Half the items ask the framework's output validation of the agent's answer and an application rule for
when a tool's result is the run's answer (`output_guard`): the conditions under which openai-agents-python #4827 kept
the tool result without its call. Adapters without a channel are not run on the items that need it, with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.for_arenas import ArenaSpec, AdapterInfo, EvalItem
from arena.for_arenas.report import Column, rule_item_passed
from arena_builtins.arenas._rooms import tools
from arena_builtins.arenas._rooms.items import APPROVED, DENIED, load_items, room_of
from arena_builtins.arenas.follow_up import checks as _checks
from arena_builtins.arenas.follow_up import policy
from arena_builtins.arenas.follow_up.channel import FOLLOW_UP, OUTPUT_GUARD
from arena_builtins.arenas.follow_up.director import FollowUpDirector

HERE = Path(__file__).parent

INSTRUCTIONS = (
    "You book meeting rooms. Call search_rooms with the number of people and the weekday, pick the "
    "smallest free room and book it with book_room. If a booking is rejected, do not retry; say that "
    "the booking was denied. Answer the user's later questions from this conversation."
)
OWN = ["follow_up_answered", "history_kept"]


def _items(path: Path) -> list[EvalItem]:
    """approval_gate's room items (the same checks), each followed up after the run; `guarded`: under output_guard."""
    rows = {r["id"]: r for r in json.loads(path.read_text())}
    return [i.model_copy(update={"checks": [*i.checks, *OWN],
                                 "metadata": {**i.metadata, "guarded": bool(rows[i.id]["guarded"])}})
            for i in load_items(path, APPROVED, DENIED)]


def leg_context(item: EvalItem) -> dict[str, Any]:
    """Whether the item's agent checks its answer and stops at the booking's result, on every leg."""
    return {FOLLOW_UP: True, OUTPUT_GUARD: item.metadata["guarded"]}


def unmeasured(item: EvalItem, info: AdapterInfo) -> str | None:
    if item.metadata["guarded"] and info.channel(OUTPUT_GUARD) is None:
        return (f"{info.name} has no output_guard channel (AdapterInfo.channels): how its framework checks an agent's "
                "answer and takes a tool's result as the answer is not written yet")
    return None


ARENA = ArenaSpec(
    name="follow_up",
    description="After a gated booking is approved or denied and the run finished, the user asks a follow-up in the "
                "same conversation: the framework must send it with the booking's call and result, as the API takes it.",
    instructions=INSTRUCTIONS,
    tools=tools.GATED_SPECS,
    functions=tools.GATED_FUNCTIONS,
    items=_items(HERE / "items.json"),
    readme=(HERE / "README.md").read_text(),
    policies=policy.policies(),
    profile_notes=policy.descriptions(),
    subject_of=room_of,
    checks=_checks.CHECKS,
    needs=(FOLLOW_UP,),
    leg_context=leg_context,
    unmeasured=unmeasured,
    director=FollowUpDirector,
    columns=(Column("history_after_approval", "conversation after an approval", "follow_up", ("reckless",),
                    "items passed: after the approved or denied run, the user's follow-up was sent with the booking's "
                    "call and result and answered", rule=rule_item_passed, family="resume"),),
    order=12,
)
