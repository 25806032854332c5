"""human_in_the_loop: book a meeting room, but only after a human approves it."""

from __future__ import annotations

from pathlib import Path

from arena.for_arenas import ArenaSpec
from arena_builtins.arenas._rooms import policy, tools
from arena_builtins.arenas._rooms.items import APPROVED, DENIED, load_items, room_of
from arena_builtins.arenas.human_in_the_loop.columns import COLUMNS
from arena_builtins.arenas.human_in_the_loop.findings import FACTS

HERE = Path(__file__).parent

INSTRUCTIONS = (
    "You book meeting rooms. First call search_rooms with the number of people and the weekday, and "
    "pick the smallest free room. Before booking, call request_approval with a one-line summary and "
    "wait for the human's decision. Only if it is approved, call book_room. If it is denied, do not "
    "book; say that the booking was denied."
)

ARENA = ArenaSpec(
    name="human_in_the_loop",
    description="Book a meeting room; pause on request_approval; the harness injects approve/deny and resumes.",
    instructions=INSTRUCTIONS,
    tools=tools.SPECS,
    functions=tools.FUNCTIONS,
    items=load_items(HERE / "items.json", APPROVED, DENIED),
    readme=(HERE / "README.md").read_text(),
    policies=policy.policies("scripted", "scripted-eager"),
    extra_policies=policy.policies("sampled"),  # `arena run --model sampled --epochs N`; not in the matrix
    profile_notes=policy.descriptions(),
    subject_of=room_of,
    columns=COLUMNS,
    facts=FACTS,
    order=0,
)
