"""Whether the scripted policy reads smolagents' text tool history ("Calling tools:" / "Observation:"): the tests
that need it to get past search_rooms are skipped, with that reason, while it cannot (imported after smolagents is
known to be installed)."""

from __future__ import annotations

import json

import pytest

from tests.adapters.smolagents.conftest import APPROVAL


def _policy_reads_smolagents_history() -> bool:
    """Feed the real policy smolagents' own serialisation of 'task, then one search_rooms step'."""
    from smolagents.memory import ActionStep, TaskStep, ToolCall
    from smolagents.models import get_clean_message_list, tool_role_conversions
    from smolagents.monitoring import Timing

    from arena_builtins.arenas._rooms.policy import next_turn
    from arena_builtins.arenas._rooms.tools import search_rooms

    steps = TaskStep(task="Book a meeting room for 3 people on Monday.").to_messages() + ActionStep(
        step_number=1,
        timing=Timing(start_time=0.0),
        tool_calls=[ToolCall(name="search_rooms", arguments={"capacity": 3, "day": "Monday"}, id="call_0")],
        observations=search_rooms(3, "Monday"),
    ).to_messages()
    messages = json.loads(json.dumps(get_clean_message_list(steps, role_conversions=tool_role_conversions)))
    turn = next_turn([{"role": "system", "content": "x"}, *messages])
    return [c.name for c in turn.tool_calls] == [APPROVAL]


needs_text_history = pytest.mark.skipif(
    not _policy_reads_smolagents_history(),
    reason="the scripted policy does not read smolagents' text tool history ('Calling tools:' / 'Observation:') yet",
)
