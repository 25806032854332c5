"""run_context: the application's own run context, given at the start and again at every resume.

An application serving approvals hands its framework the context of the request each time it resumes a run
(`Runner.run(agent, state, context=...)`, Pydantic AI's `deps`, LangGraph's `context`). Each item books a meeting
room behind the framework's own tool-level gate (the scripted model books without asking, as in approval_gate),
for a user the context names; the agent's instructions are written from the context at each model call. The
decision must be honoured whatever context comes with it (openai-agents-python #4244 ignored an approval given
with a `context=`), and the context must reach every model call, the resumed ones too (`context_reached_model`).
The channel (`channel.py`) is this arena's own: adapters that do not declare it are not run here, with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.for_arenas import ArenaSpec, EvalItem
from arena.for_arenas.report import Column, rule_item_passed
from arena_builtins.arenas._rooms import policy, tools
from arena_builtins.arenas._rooms.items import APPROVED, DENIED, load_items, room_of
from arena_builtins.arenas.run_context import checks as _checks
from arena_builtins.arenas.run_context.channel import RUN_CONTEXT

HERE = Path(__file__).parent

INSTRUCTIONS = (
    "You book meeting rooms. Call search_rooms with the number of people and the weekday, pick the "
    "smallest free room and book it with book_room. If a booking is rejected, do not retry; say that "
    "the booking was denied."
)
OWN = ["context_reached_model"]


def _items(path: Path) -> list[EvalItem]:
    """approval_gate's room items (the same checks), each for the user its row names, checked for its context."""
    rows = {r["id"]: r for r in json.loads(path.read_text())}
    return [i.model_copy(update={"checks": [*i.checks, *OWN],
                                 "metadata": {**i.metadata, "user": rows[i.id]["user"], "team": rows[i.id]["team"]}})
            for i in load_items(path, APPROVED, DENIED)]


def leg_context(item: EvalItem) -> dict[str, Any]:
    """The application's context, the same on every leg of the item."""
    return {RUN_CONTEXT: {"user": item.metadata["user"], "team": item.metadata["team"]}}


ARENA = ArenaSpec(
    name="run_context",
    description="The application's own run context is handed to the framework at the start and at every resume of "
                "a gated booking: the decision must be honoured with it, and it must reach every model call.",
    instructions=INSTRUCTIONS,
    tools=tools.GATED_SPECS,
    functions=tools.GATED_FUNCTIONS,
    items=_items(HERE / "items.json"),
    readme=(HERE / "README.md").read_text(),
    policies=policy.policies("reckless"),
    profile_notes=policy.descriptions(),
    subject_of=room_of,
    checks=_checks.CHECKS,
    needs=(RUN_CONTEXT,),
    leg_context=leg_context,
    columns=(Column("context_on_resume", "run context on resume", "run_context", ("reckless",),
                    "items passed: the decision honoured with the application's context given on resume, and the "
                    "context in every model request", rule=rule_item_passed, family="resume"),),
    order=11,
)
