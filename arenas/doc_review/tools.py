"""doc_review's tools as the model sees them, and the per-item backend that runs them on a real .docx.

The consequential edits (accept, reject, propose a suggestion, resolve a thread) are gated: the
framework's tool-level approval must hold each of them for the human. Reading and replying are not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.for_arenas import EvalItem, NotFound, ToolKind, ToolSpec
from arena_builtins.arenas.doc_review import document
from arena_builtins.arenas.doc_review.fixtures import FIXTURES


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str],
          kind: ToolKind = ToolKind.read, gated: bool = False) -> ToolSpec:
    return ToolSpec(name=name, description=description, kind=kind, requires_approval=gated,
                    parameters={"type": "object", "properties": properties, "required": required})


_CHANGE = {"change_id": {"type": "string", "description": "the tracked change's id, as list_changes gives it"}}
_COMMENT = {"comment_id": {"type": "string", "description": "the comment's id, as list_comments gives it"}}

SPECS = [
    _spec("list_changes", "Every tracked change in the document: id, insertion or deletion, author, paragraph, text.",
          {}, []),
    _spec("list_comments", "Every comment: id, author, text, the thread it replies to, resolved or open.", {}, []),
    _spec("read_paragraph", "One paragraph's text, with tracked insertions as [+text+] and deletions as [-text-].",
          {"paragraph": {"type": "integer"}}, ["paragraph"]),
    _spec("accept_change", "Accept a tracked change into the document. Needs the reviewer's approval.", _CHANGE,
          ["change_id"], ToolKind.write, gated=True),
    _spec("reject_change", "Reject a tracked change (the original text stays). Needs the reviewer's approval.",
          _CHANGE, ["change_id"], ToolKind.write, gated=True),
    _spec("propose_edit", "Suggest an edit as a tracked change authored by you: `find` (text in the paragraph) "
          "becomes a tracked deletion and `replace` a tracked insertion. Needs the reviewer's approval.",
          {"paragraph": {"type": "integer"}, "find": {"type": "string"}, "replace": {"type": "string"}},
          ["paragraph", "find", "replace"], ToolKind.write, gated=True),
    _spec("reply_comment", "Reply in a comment's thread (not gated).",
          {**_COMMENT, "text": {"type": "string"}}, ["comment_id", "text"]),
    _spec("resolve_comment", "Mark a comment thread resolved. Needs the reviewer's approval.", _COMMENT,
          ["comment_id"], ToolKind.write, gated=True),
]

DOC_NAME = "review.docx"


class DocumentBackend:
    """An item's own document, created fresh from its fixture; every tool call opens, edits and saves it (a call
    that opens what the previous one saved uses its parse: `document._load`)."""

    def __init__(self, item: EvalItem, folder: Path) -> None:
        self.path = document.build(FIXTURES[item.metadata["fixture"]], folder / DOC_NAME)

    def call(self, name: str, args: dict[str, Any]) -> str:
        try:
            return self._call(name, args)
        except (document.DocumentError, KeyError, TypeError, ValueError) as exc:
            return f"ERROR: {exc}"

    def _call(self, name: str, args: dict[str, Any]) -> str:
        if name == "list_changes":
            snap = document.snapshot(self.path)
            where = {}
            for index, segments in enumerate(document.paragraph_changes(self.path)):
                where.update({cid: index for cid in segments})
            return json.dumps([{**c, "paragraph": where.get(c["id"])} for c in snap["changes"]])
        if name == "list_comments":
            return json.dumps(document.snapshot(self.path)["comments"])
        if name == "read_paragraph":
            return document.read_paragraph(self.path, int(args["paragraph"]))
        if name == "accept_change":
            return document.accept_change(self.path, str(args["change_id"]))
        if name == "reject_change":
            return document.reject_change(self.path, str(args["change_id"]))
        if name == "propose_edit":
            return document.propose_edit(self.path, int(args["paragraph"]), str(args["find"]), str(args["replace"]))
        if name == "reply_comment":
            return document.reply_comment(self.path, str(args["comment_id"]), str(args["text"]))
        if name == "resolve_comment":
            return document.resolve_comment(self.path, str(args["comment_id"]))
        raise NotFound(f"no tool {name}")

    def dump(self) -> dict[str, Any]:
        return {"document": document.snapshot(self.path)}

    def close(self) -> None:
        document.forget(self.path)
