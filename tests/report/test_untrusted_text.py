"""Text that comes from outside the harness (an endpoint's error, a run directory's names) is written inert:
no terminal escape sequence reaches the terminal, none a Markdown file, and no Markdown it holds goes live."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .conftest import arena_cli

ESC = "\x1b[2J\x1b[31mRED"
EVIL = ESC + "|pipe|[x](http://evil.invalid)"


def test_an_error_with_terminal_escapes_is_printed_inert_under_the_table(tmp_path):
    (tmp_path / "escapes.py").write_text(
        "from arena_builtins.adapters.vanilla import VanillaAdapter\n\n"
        "class Escapes(VanillaAdapter):\n"
        "    async def start(self, ctx):\n"
        f"        raise RuntimeError({ESC + ' the endpoint said no'!r})\n")
    r = arena_cli("run", "human_in_the_loop", "-a", "escapes:Escapes", "--item", "hitl-01", "--out", "runs",
                  "--verbose", cwd=tmp_path)
    assert "the endpoint said no" in r.stdout, r.stdout + r.stderr
    assert "\x1b" not in r.stdout and "\x1b" not in r.stderr


def test_names_read_from_a_run_directory_are_escaped_in_the_markdown(tmp_path):
    r = arena_cli("run", "human_in_the_loop", "-a", "vanilla", "--item", "hitl-01", "--item", "hitl-02",
                  "--out", "runs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    (run,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    results[0]["item_id"] += EVIL
    results[0]["status"] = results[0]["verdict"] = "failed"
    results[0]["checks"][0]["passed"] = False
    (run / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in results))
    for name in ("summary.json", "meta.json"):
        meta = json.loads((run / name).read_text())
        if "model" in meta:
            meta["model"] += EVIL
        (run / name).write_text(json.dumps(meta))
    r = arena_cli("matrix", "--runs", "runs", "--out", "rep", "--findings", "rep/findings.md", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    for doc in (Path(tmp_path / "rep/findings.md"), Path(tmp_path / "rep/matrix.md"), Path(tmp_path / "rep/details.md")):
        text = doc.read_text()
        assert "RED" in text or doc.name == "findings.md", doc  # the names are shown (the digest names no profile here) ...
        assert "\x1b" not in text, doc  # ... with no escape sequence
        assert not re.search(r"(?<!\\)\]\(http://evil", text), doc  # no live link
        assert not re.search(r"(?<!\\)\|pipe", text), doc  # no cell break
