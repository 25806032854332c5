"""durable_state: the room-booking pause, but the process that paused exits before the resume.

Leg 2 runs in a brand-new worker process that receives only the decision and the adapter's JSON
handle to the framework's own persisted state (checkpointer, serialised run state, session store,
persisted history). No in-memory object crosses, so an emulated pause cannot survive it.
"""

from __future__ import annotations

from pathlib import Path

from arena.for_arenas.report import Column, rule_item_passed
from arena.for_arenas import ArenaSpec
from arena_builtins.arenas._rooms import policy, tools
from arena_builtins.arenas._rooms.items import APPROVED, DENIED, load_items, room_of
from arena_builtins.arenas.durable_state.findings import FACTS
from arena_builtins.arenas.human_in_the_loop import INSTRUCTIONS

HERE = Path(__file__).parent

DURABLE = ["resumed_in_new_process", "state_survived", "not_reasked_after_resume"]

ARENA = ArenaSpec(
    name="durable_state",
    description="The human_in_the_loop task, resumed in a new process from the framework's persisted state only.",
    instructions=INSTRUCTIONS,
    tools=tools.SPECS,
    functions=tools.FUNCTIONS,
    items=load_items(HERE / "items.json", [*APPROVED, *DURABLE], [*DENIED, *DURABLE]),
    readme=(HERE / "README.md").read_text(),
    policies=policy.policies("scripted"),
    extra_policies=policy.policies("sampled"),  # `arena run --model sampled --epochs N`; not in the matrix
    profile_notes=policy.descriptions(),
    restart_between_legs=True,
    subject_of=room_of,
    upgrades=True,  # and paused by one release, resumed by the next (`--resume-on`)
    stores=True,  # and on PostgreSQL and Redis (`arena matrix --store`): durable-11 restarts the server during its pause
    columns=(Column("durable", "durable across restart", "durable_state", ("scripted",), "items passed",
                    rule=rule_item_passed, family="durability"),
             *(Column(f"durable_{kind}", f"durable on {title}", f"durable_state@{kind}", ("scripted",),
                      f"items passed with the paused state in the framework's own {title} store (`--store {kind}`; "
                      "durable-11's server is stopped and restarted during the pause)", rule=rule_item_passed)
               for kind, title in (("postgres", "PostgreSQL"), ("redis", "Redis"))),
             Column("survives_upgrade", "survives an upgrade", "durable_state@upgrade", ("scripted",),
                    "items passed when the run paused under the release before this one (the next older in the "
                    "matrix) and resumed under this one, the state passing only through the framework's own store "
                    "(`--resume-on`)", rule=rule_item_passed,
                    empty_note="no older release in the matrix to upgrade from")),
    facts=FACTS,
    order=1,
)
