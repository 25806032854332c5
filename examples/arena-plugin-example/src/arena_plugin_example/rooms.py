"""example_rooms: three human_in_the_loop items (book a meeting room only after a human approves it),
as a plugin arena. It reuses arena's room tools, scripted model and checks (`arena_builtins.arenas._rooms`); a real
plugin arena brings its own items, tools, policy and checks (docs/adapters.md, "Writing an arena").
"""

from __future__ import annotations

from pathlib import Path

from arena.spec import ArenaSpec
from arena_builtins.arenas._rooms import policy, tools
from arena_builtins.arenas._rooms.items import APPROVED, DENIED, load_items, room_of
from arena_builtins.arenas.human_in_the_loop import INSTRUCTIONS  # the same task as human_in_the_loop's

ARENA = ArenaSpec(
    name="example_rooms",  # must be the entry point's name
    description="Example plugin arena: three room bookings paused on request_approval (approve, deny, approve).",
    instructions=INSTRUCTIONS,
    tools=tools.SPECS,
    functions=tools.FUNCTIONS,
    items=load_items(Path(__file__).with_name("items.json"), APPROVED, DENIED),
    readme=__doc__ or "",
    policies=policy.policies("scripted", "scripted-eager"),
    profile_notes=policy.descriptions(),
    subject_of=room_of,
)
