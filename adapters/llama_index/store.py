"""Where the paused run is kept: llama-index's own serialisation of it (`Context.to_dict()`) and the chat memory's
messages it leaves out, in a new JSON file under the item's work directory per pause (an older state keeps pointing
at its own snapshot). Restoring puts both back; the `input` channel (emulated) writes a snapshot whose saved memory
ends with the added text."""

from __future__ import annotations

import json
import os
import uuid
import warnings
from typing import Any

from arena.for_adapters import LegContext

CONTEXT_PREFIX = "llama_index_context"  # one file per pause: <prefix>-<id>.json


async def snapshot(handler: Any, ctx: LegContext) -> str:
    """Save llama-index's own serialisation of the run and the chat memory it leaves out; the file's path."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UnserializableKeyWarning: the memory, saved below
        context = handler.ctx.to_dict()
    memory = await handler.ctx.store.get("memory")
    messages = [m.model_dump(mode="json") for m in memory.get_all()]
    return save({"context": context, "memory": messages}, ctx)


async def restore(li: dict[str, Any], agent: Any, state: dict[str, Any], llm: Any) -> Any:
    """The saved run restored (`Context.from_dict`, `agent.run(ctx=ctx)`) with its chat memory put back; its
    handler."""
    with open(state["context"]) as f:
        saved = json.load(f)
    restored = li["Context"].from_dict(agent, saved["context"])
    handler = agent.run(ctx=restored)
    history = [li["ChatMessage"].model_validate(m) for m in saved["memory"]]
    await handler.ctx.store.set("memory", li["ChatMemoryBuffer"].from_defaults(chat_history=history, llm=llm))
    return handler


def add_note(li: dict[str, Any], state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
    """A copy of the saved snapshot (a new file) whose chat memory ends with the text as a user message."""
    with open(state["context"]) as f:
        saved = json.load(f)
    note = li["ChatMessage"](role="user", content=text)
    saved["memory"] = [*saved["memory"], note.model_dump(mode="json")]
    path = save(saved, ctx)
    return {**state, "context": path}


def save(saved: dict[str, Any], ctx: LegContext) -> str:
    """Write a snapshot (context + memory) to a new file under the item's work directory; its path."""
    path = os.path.join(ctx.workdir, f"{CONTEXT_PREFIX}-{uuid.uuid4().hex[:12]}.json")
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(saved, f)
    os.replace(tmp, path)
    return path
