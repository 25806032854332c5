"""Microsoft Agent Framework adapter tests' shared helpers: the items, the tool results the model was sent, and
vanilla's trace as this framework's denial changes it."""

from __future__ import annotations

from arena import catalog
from arena.model.script import text_of
from arena_builtins.adapters.microsoft_af.info import REJECTED_RESULT

APPROVAL = "request_approval"
ITEMS = {i.id: i for i in catalog.load_arena("human_in_the_loop").items}
# What the scripted model writes after reading the framework's fixed rejection text as the approval
# result: `_reason()` finds no "rejected: <reason>" in it, so it quotes the whole text.
REJECTED_AS_REASON = REJECTED_RESULT.strip().rstrip(".")


def _tool_results_by_item(requests) -> dict[str, dict[str, list[str]]]:
    """item input -> tool name -> every distinct tool result the model was sent for that tool."""
    seen: dict[str, dict[str, list[str]]] = {}
    for body in requests:
        messages = body["messages"]
        user = next(text_of(m.get("content")) for m in messages if m.get("role") == "user")
        names = {tc["id"]: tc["function"]["name"] for m in messages for tc in m.get("tool_calls") or []}
        per_tool = seen.setdefault(user, {})
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id") in names:
                results = per_tool.setdefault(names[m["tool_call_id"]], [])
                if text_of(m.get("content")) not in results:
                    results.append(text_of(m.get("content")))
    return seen


def _expected_deny_trace(vanilla_trace: list[dict], item_id: str) -> list[dict]:
    """Vanilla's trace with the final text the model writes when the reason never reached it."""
    reason = ITEMS[item_id].resume_with[0].text
    expected = [dict(e) for e in vanilla_trace]
    final = expected[-1]
    assert final["type"] == "final" and f"({reason})" in final["text"]
    final["text"] = final["text"].replace(f"({reason})", f"({REJECTED_AS_REASON})")
    return expected
