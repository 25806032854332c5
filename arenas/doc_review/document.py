"""Real Word documents with tracked changes and comment threads, built, edited and read with python-docx + lxml.

A fixture (items.json) becomes a `.docx` whose paragraphs hold plain runs, tracked insertions
(`w:ins`) and deletions (`w:del`) with their authors and dates, and comments (`comments.xml`) whose
replies and resolved state live where Word keeps them (`commentsExtended.xml`: `w15:paraIdParent`,
`w15:done`). Track changes is on (`w:trackRevisions` in settings.xml). Every edit opens the saved
file, changes it and saves it again, so the document on disk is the state; `snapshot` reads it back
for the checks, which never look at a run's words. "Opens" reads the file's bytes every time; they are
parsed again only when they are not the bytes this process last read or saved there (`_load`): parsing
was most of a tool call's cost, and most calls open what the call before saved.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import json
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
from docx.opc.packuri import PackURI
from docx.opc.part import PartFactory, XmlPart
from docx.oxml import parse_xml
from docx.oxml.ns import qn

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W14 = "http://schemas.microsoft.com/office/word/2010/wordml"
W15 = "http://schemas.microsoft.com/office/word/2012/wordml"
EX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.commentsExtended+xml"
EX_RELTYPE = "http://schemas.microsoft.com/office/2011/relationships/commentsExtended"
DATE = "2026-11-30T09:00:00Z"
AGENT = "Review Agent"

# python-docx loads parts it has no class for as opaque blobs; commentsExtended is edited as XML
PartFactory.part_type_for.setdefault(EX_CONTENT_TYPE, XmlPart)


class DocumentError(ValueError):
    """A tool call that does not fit the document (an unknown change, comment or paragraph): its result."""


# -- opening and saving -------------------------------------------------------------------------------------

OPEN_MAX = 32  # parsed documents kept (an item's is forgotten when its backend closes)
_open: OrderedDict[str, tuple[bytes, Any]] = OrderedDict()  # path -> (the file's bytes, parsed from or saved as them)
_open_lock = threading.RLock()  # one edit of a document at a time (it is one object for every caller here)


def _load(path: Path) -> Any:
    """The document at `path`, as its bytes on disk say now: the parse kept from the last load or save if the file
    still holds exactly those bytes, else a new one."""
    data = Path(path).read_bytes()
    key = str(path)
    held = _open.get(key)
    if held is not None and held[0] == data:
        _open.move_to_end(key)
        return held[1]
    document = docx.Document(io.BytesIO(data))
    _keep(key, data, document)
    return document


def _keep(key: str, data: bytes, document: Any) -> None:
    _open[key] = (data, document)
    _open.move_to_end(key)
    while len(_open) > OPEN_MAX:
        _open.popitem(last=False)


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[Any]:
    with _open_lock:
        yield _load(path)


@contextlib.contextmanager
def _editing(path: Path) -> Iterator[Any]:
    """The document to change; saved to `path` when the block ends, forgotten (parsed again next time) if it raises."""
    with _open_lock:
        document = _load(path)
        try:
            yield document
            out = io.BytesIO()
            document.save(out)
            data = out.getvalue()
            Path(path).write_bytes(data)
        except BaseException:
            _open.pop(str(path), None)  # it may be half changed, or not saved: the file is the state
            raise
        _keep(str(path), data, document)


def forget(path: Path) -> None:
    """Drop the parse kept for `path` (its item is over)."""
    with _open_lock:
        _open.pop(str(path), None)


# -- building from a fixture --------------------------------------------------------------------------


_built: dict[str, bytes] = {}  # a fixture's .docx, built once per process: every item of it starts from a copy


def build(fixture: dict[str, Any], path: Path) -> Path:
    """Write the fixture's document to `path`: paragraphs of segments ["t"|"ins"|"del", text, author?]."""
    key = json.dumps(fixture, sort_keys=True)
    if key not in _built:
        with tempfile.TemporaryDirectory(prefix="arena-docx-") as folder:
            made = _build(fixture, Path(folder) / "fixture.docx")
            _built[key] = made.read_bytes()
    path.write_bytes(_built[key])
    return path


def _build(fixture: dict[str, Any], path: Path) -> Path:
    document = docx.Document()
    ids = itertools.count(1)
    for segments in fixture["paragraphs"]:
        paragraph = document.add_paragraph()
        for kind, text, *author in segments:
            run = paragraph.add_run(text)
            if kind == "t":
                continue
            _wrap_tracked(run._r, kind, next(ids), author[0] if author else "Reviewer")
    settings = document.settings.element
    if settings.find(qn("w:trackRevisions")) is None:
        settings.insert(0, settings.makeelement(qn("w:trackRevisions"), {}))
    for comment in fixture.get("comments", []):
        paragraph = document.paragraphs[comment["paragraph"]]
        made = document.add_comment(_plain_runs(paragraph), text=comment["text"], author=comment["author"],
                                    initials=comment["author"][:1])
        _para_id(made)
        for reply in comment.get("replies", []):
            _add_reply(document, made, reply["author"], reply["text"])
        if comment.get("resolved"):
            _extended(document, made)[0].set(f"{{{W15}}}done", "1")
    document.save(str(path))
    return path


def _wrap_tracked(r: Any, kind: str, change_id: int, author: str) -> None:
    tag = "w:ins" if kind == "ins" else "w:del"
    wrapper = r.makeelement(qn(tag), {qn("w:id"): str(change_id), qn("w:author"): author, qn("w:date"): DATE})
    r.addprevious(wrapper)
    wrapper.append(r)
    if kind == "del":
        for t in r.findall(qn("w:t")):
            t.tag = qn("w:delText")


def _plain_runs(paragraph: Any) -> list[Any]:
    runs = [r for r in paragraph.runs]
    if not runs:
        runs = [paragraph.add_run("")]
    return runs


# -- comments: threads and resolved state (commentsExtended.xml) ------------------------------------------


def _para_id(comment: Any) -> str:
    """The w14:paraId of a comment's first paragraph, set once (Word links threads through it)."""
    p = comment.paragraphs[0]._p
    key = f"{{{W14}}}paraId"
    if p.get(key) is None:
        p.set(key, f"{0x10000000 + int(comment.comment_id):08X}")
    return p.get(key)


def _extended_part(document: Any) -> Any:
    for rel in document.part.rels.values():
        if rel.reltype == EX_RELTYPE:
            return rel.target_part
    element = parse_xml(f'<w15:commentsEx xmlns:w15="{W15}"/>')
    part = XmlPart(PackURI("/word/commentsExtended.xml"), EX_CONTENT_TYPE, element, document.part.package)
    document.part.relate_to(part, EX_RELTYPE)
    return part


def _extended(document: Any, comment: Any) -> tuple[Any, Any]:
    """(this comment's w15:commentEx, the commentsEx root), created when missing."""
    root = _extended_part(document).element
    para = _para_id(comment)
    for ex in root.findall(f"{{{W15}}}commentEx"):
        if ex.get(f"{{{W15}}}paraId") == para:
            return ex, root
    ex = root.makeelement(f"{{{W15}}}commentEx", {f"{{{W15}}}paraId": para, f"{{{W15}}}done": "0"})
    root.append(ex)
    return ex, root


def _add_reply(document: Any, parent: Any, author: str, text: str) -> Any:
    anchor = _anchor_runs(document, parent.comment_id)
    reply = document.add_comment(anchor, text=text, author=author, initials=author[:1])
    ex, _ = _extended(document, reply)
    ex.set(f"{{{W15}}}paraIdParent", _para_id(parent))
    return reply


def _anchor_runs(document: Any, comment_id: int) -> list[Any]:
    """The runs a comment is anchored on (its comment range), in the body."""
    for paragraph in document.paragraphs:
        p = paragraph._p
        starts = [s for s in p.iter(qn("w:commentRangeStart")) if s.get(qn("w:id")) == str(comment_id)]
        if starts:
            return _plain_runs(paragraph)
    raise DocumentError(f"comment {comment_id} has no anchor in the body")


def _comment(document: Any, comment_id: Any) -> Any:
    for comment in document.comments:
        if str(comment.comment_id) == str(comment_id):
            return comment
    raise DocumentError(f"no comment {comment_id}")


def _threads(document: Any) -> tuple[dict[str, str], dict[str, bool]]:
    """(paraId -> parent paraId, paraId -> done) from commentsExtended.xml."""
    parents: dict[str, str] = {}
    done: dict[str, bool] = {}
    for rel in document.part.rels.values():
        if rel.reltype == EX_RELTYPE:
            root = rel.target_part.element
            for ex in root.findall(f"{{{W15}}}commentEx"):
                para = ex.get(f"{{{W15}}}paraId")
                if ex.get(f"{{{W15}}}paraIdParent"):
                    parents[para] = ex.get(f"{{{W15}}}paraIdParent")
                done[para] = ex.get(f"{{{W15}}}done") == "1"
    return parents, done


# -- the edits the tools make -----------------------------------------------------------------------------


def _tracked(document: Any, change_id: Any) -> Any:
    body = document.element.body
    for tag in ("w:ins", "w:del"):
        for element in body.iter(qn(tag)):
            if element.get(qn("w:id")) == str(change_id):
                return element
    raise DocumentError(f"no tracked change {change_id}")


def _unwrap(element: Any) -> None:
    for child in list(element):
        for t in child.findall(qn("w:delText")):
            t.tag = qn("w:t")
        element.addprevious(child)
    element.getparent().remove(element)


def accept_change(path: Path, change_id: Any) -> str:
    with _editing(path) as document:
        element = _tracked(document, change_id)
        kind = "insertion" if element.tag == qn("w:ins") else "deletion"
        if kind == "insertion":
            _unwrap(element)
        else:
            element.getparent().remove(element)
    return f"ok: {kind} {change_id} accepted into the text"


def reject_change(path: Path, change_id: Any) -> str:
    with _editing(path) as document:
        element = _tracked(document, change_id)
        kind = "insertion" if element.tag == qn("w:ins") else "deletion"
        if kind == "insertion":
            element.getparent().remove(element)
        else:
            _unwrap(element)
    return f"ok: {kind} {change_id} taken out of the tracked changes, the original text stays"


def propose_edit(path: Path, paragraph: int, find: str, replace: str) -> str:
    """A suggestion, not a direct change: `find` becomes a tracked deletion and `replace` a tracked insertion."""
    with _editing(path) as document:
        try:
            target = document.paragraphs[int(paragraph)]
        except (IndexError, ValueError, TypeError):
            raise DocumentError(f"no paragraph {paragraph}") from None
        # plain runs only: text inside a tracked change is not the document's yet
        r = next((r for r in target._p.findall(qn("w:r"))
                  if find and r.find(qn("w:t")) is not None and find in (r.find(qn("w:t")).text or "")), None)
        if r is None:
            raise DocumentError(f"{find!r} is not in paragraph {paragraph}'s text")
        before, _, after = r.find(qn("w:t")).text.partition(find)
        next_id = 1 + max((int(e.get(qn("w:id"))) for tag in ("w:ins", "w:del")
                           for e in document.element.body.iter(qn(tag))), default=0)
        pieces = []
        for kind, text in (("t", before), ("del", find), ("ins", replace), ("t", after)):
            if not text:
                continue
            piece = copy.deepcopy(r)
            piece.find(qn("w:t")).text = text
            piece.find(qn("w:t")).set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
            pieces.append((kind, piece))
        for kind, piece in pieces:
            r.addprevious(piece)
            if kind != "t":
                _wrap_tracked(piece, kind, next_id, AGENT)
                next_id += 1
        r.getparent().remove(r)
    return f"ok: suggested in paragraph {paragraph}: {find!r} -> {replace!r} (tracked)"


def reply_comment(path: Path, comment_id: Any, text: str) -> str:
    with _editing(path) as document:
        parent = _comment(document, comment_id)
        reply = _add_reply(document, parent, AGENT, text)
    return f"ok: replied to comment {comment_id} (reply {reply.comment_id})"


def resolve_comment(path: Path, comment_id: Any) -> str:
    with _editing(path) as document:
        comment = _comment(document, comment_id)
        ex, _ = _extended(document, comment)
        ex.set(f"{{{W15}}}done", "1")
    return f"ok: comment {comment_id} resolved"


# -- reading it back ---------------------------------------------------------------------------------------


def _segments(paragraph: Any) -> list[list[str]]:
    out: list[list[str]] = []
    for child in paragraph._p:
        if child.tag == qn("w:r"):
            kind, author, text = "t", "", "".join(t.text or "" for t in child.iter(qn("w:t")))
        elif child.tag in (qn("w:ins"), qn("w:del")):
            kind = "ins" if child.tag == qn("w:ins") else "del"
            author = child.get(qn("w:author")) or ""
            text = "".join(t.text or "" for t in child.iter(qn("w:t"), qn("w:delText")))
        else:
            continue
        if not text:
            continue
        if out and out[-1][0] == kind and out[-1][2:] == ([author] if author else []):
            out[-1][1] += text  # adjacent runs of one kind read as one segment
        else:
            out.append([kind, text, *([author] if author else [])])
    return out


def paragraph_changes(path: Path) -> list[list[str]]:
    """The ids of the tracked changes in each paragraph."""
    with _reading(path) as document:
        return [[e.get(qn("w:id")) for e in p._p.iter(qn("w:ins"), qn("w:del"))] for p in document.paragraphs]


def read_paragraph(path: Path, index: int) -> str:
    with _reading(path) as document:
        try:
            paragraph = document.paragraphs[index]
        except IndexError:
            raise DocumentError(f"no paragraph {index}") from None
        marks = {"t": "{}", "ins": "[+{}+]", "del": "[-{}-]"}
        return "".join(marks[kind].format(text) for kind, text, *_ in _segments(paragraph))


def snapshot(path: Path) -> dict[str, Any]:
    """What the document says, as data: paragraphs as segments, tracked changes, comment threads, settings."""
    with _reading(path) as document:
        return _snapshot(document)


def _snapshot(document: Any) -> dict[str, Any]:
    changes = [{"id": e.get(qn("w:id")), "kind": "insertion" if e.tag == qn("w:ins") else "deletion",
                "author": e.get(qn("w:author")),
                "text": "".join(t.text or "" for t in e.iter(qn("w:t"), qn("w:delText")))}
               for e in document.element.body.iter(qn("w:ins"), qn("w:del"))]
    parents, done = _threads(document)
    by_para = {}
    for comment in document.comments:
        by_para[comment.paragraphs[0]._p.get(f"{{{W14}}}paraId")] = comment
    comments = []
    for comment in document.comments:
        para = comment.paragraphs[0]._p.get(f"{{{W14}}}paraId")
        parent = by_para.get(parents.get(para, ""))
        comments.append({"id": str(comment.comment_id), "author": comment.author, "text": comment.text,
                         "parent": str(parent.comment_id) if parent is not None else None,
                         "resolved": done.get(para, False)})
    return {
        "paragraphs": [_segments(p) for p in document.paragraphs],
        "changes": changes,
        "comments": comments,
        "track_revisions": document.settings.element.find(qn("w:trackRevisions")) is not None,
    }


def comparable(snap: dict[str, Any]) -> dict[str, Any]:
    """A snapshot without the ids a run assigns (new changes and replies are numbered in execution order)."""
    by_id = {c["id"]: c for c in snap["comments"]}
    return {
        "paragraphs": snap["paragraphs"],
        "comments": sorted((c["author"], c["text"], by_id[c["parent"]]["text"] if c["parent"] in by_id else None,
                            c["resolved"]) for c in snap["comments"]),
        "track_revisions": snap["track_revisions"],
    }

