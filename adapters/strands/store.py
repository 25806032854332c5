"""Where the paused run is kept: a strands `FileSessionManager` session under the item's work directory (the
conversation, agent state and interrupt state in its `agent.json` and message files), and the Agent on it, which
a resume in any process builds again to restore them."""

from __future__ import annotations

import os
from typing import Any, Callable

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import agents_of

from .client import import_strands
from .delegation import desk_tools
from .input import notes
from .tools import gate, tool

AGENT_ID = "arena"
SESSIONS = "strands"  # the session store's directory, under the item's work directory


def session_manager(session_id: str, storage_dir: str) -> Any:
    """strands' FileSessionManager on the item's session."""
    from strands.session.file_session_manager import FileSessionManager

    return FileSessionManager(session_id=session_id, storage_dir=storage_dir)


def session_agent(ctx: LegContext, session_id: str, storage_dir: str, model: Callable[[LegContext], Any],
                  manager: Any = None) -> Any:
    """A new strands Agent on the item's session: a resume restores messages, agent state and interrupt state
    from it (`manager`: the session manager to use, a new FileSessionManager on the session if None). With
    delegates called as tools (`agents_of(ctx)`, via tool), the agent is the desk, holding each delegate as
    `Agent.as_tool(...)`. `model`: the model each Agent is given."""
    strands = import_strands()
    from strands.session.file_session_manager import FileSessionManager
    from strands.vended_plugins.context_injector import ContextInjector

    if agents_of(ctx):
        tools = desk_tools(strands, ctx, model)
    else:
        tools = [tool(strands, spec, ctx) for spec in ctx.tools.specs]
    os.makedirs(storage_dir, exist_ok=True)
    return strands.Agent(
        model=model(ctx),  # always: without it strands builds a BedrockModel (boto3, EC2 metadata)
        tools=tools,
        system_prompt=ctx.instructions,
        hooks=[gate(ctx)],
        # input added while paused (add_input, agent.state[NOTES]) folded into every model call's latest user
        # message; "everyTurn": after a resume that latest message holds the held call's toolResult
        plugins=[ContextInjector(notes, name="arena:notes", trigger="everyTurn")],
        session_manager=manager or FileSessionManager(session_id=session_id, storage_dir=storage_dir),
        agent_id=AGENT_ID,
        callback_handler=None,  # no printing of the streamed text
    )
