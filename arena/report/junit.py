"""JUnit XML of adapter runs, for CI servers: one testsuite per run directory, one testcase per item.

A failed item (a check failed: measured) is a <failure>; an item the harness could not measure is an
<error>, so a CI server keeps the two apart as arena does. Each check is a property,
`<item>.check.<name>`, of the testsuite (the common junit-10 schema has properties only there), and
is listed again in its testcase's system-out.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from arena.checks import CheckResult
from arena.redact import redact
from arena.report.matrix import Run
from arena.results import ItemResult
from arena.rundir import trace_name

# Characters XML 1.0 cannot carry at all (control characters an adapter may print): written as \xNN.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", redact(str(value)))


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def _timestamp(value: object) -> str | None:
    """UTC without an offset: the form the common JUnit schema accepts."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat(timespec="seconds")


def _check_lines(result: ItemResult) -> list[str]:
    return [f"{c.name}: {c.reason}" for c in result.checks if not c.passed]


def _case_name(item_id: str, epoch: int) -> str:
    """The item id; with --epochs, `<item>@<k>` for its k-th run (k > 1), as its trace file is named."""
    return item_id if epoch <= 1 else f"{item_id}@{epoch}"


def _testcase(run: Run, result: ItemResult) -> ET.Element:
    case = ET.Element("testcase", name=_text(_case_name(result.item_id, result.epoch)),
                      classname=_text(f"{run.arena}.{run.adapter}"), time=_seconds(result.duration_s))
    failing = _check_lines(result)
    if result.verdict == "could_not_measure":
        message = result.error or "the harness could not measure this item"
        outcome = ET.SubElement(case, "error", message=_text(message), type="could_not_measure")
        outcome.text = _text("\n".join([message, *failing]))
    elif result.verdict == "failed":
        lines = failing or [result.error or "failed"]
        outcome = ET.SubElement(case, "failure", message=_text("; ".join(lines)),
                                type=_text(",".join(c.name for c in result.checks if not c.passed) or "failed"))
        outcome.text = _text("\n".join([*lines, *([f"error: {result.error}"] if result.error and failing else [])]))
    out = ET.SubElement(case, "system-out")
    out.text = _text("\n".join([f"trace: {run.path / 'traces' / trace_name(result.item_id, result.epoch)}",
                                 f"legs: {result.legs}", *(f"check {c.name}: {_verdict(c)}" for c in result.checks)]))
    return case


def _verdict(check: CheckResult) -> str:
    return "passed" if check.passed else f"failed: {check.reason}"


def _testsuite(run: Run) -> ET.Element:
    results = sorted([*run.results, *run.later], key=lambda r: r.epoch)  # every epoch, each in item order
    cases = [_testcase(run, r) for r in results]
    done = {(r.item_id, r.epoch) for r in results}
    for epoch in range(1, int(run.meta.get("epochs") or 1) + 1):  # what an interrupted run did not get to
        for item_id in (str(i) for i in run.meta.get("items") or [] if (str(i), epoch) not in done):
            case = ET.Element("testcase", name=_text(_case_name(item_id, epoch)),
                              classname=_text(f"{run.arena}.{run.adapter}"), time="0.000")
            ET.SubElement(case, "skipped", message=_text(f"not run: the run is {run.status}"))
            cases.append(case)
    suite = ET.Element("testsuite", name=_text(f"{run.arena}/{run.adapter}"), tests=str(len(cases)),
                       failures=str(sum(r.verdict == "failed" for r in results)),
                       errors=str(sum(r.verdict == "could_not_measure" for r in results)),
                       skipped=str(len(cases) - len(results)),
                       time=_seconds(sum(r.duration_s for r in results)))
    stamp = _timestamp(run.meta.get("started_at"))
    if stamp:
        suite.set("timestamp", stamp)
    props = ET.SubElement(suite, "properties")
    for key in ("model", "framework", "framework_version", "pause_kind", "pause_mechanism", "epochs", "status"):
        value = run.status if key == "status" else run.meta.get(key)
        if value is not None:
            ET.SubElement(props, "property", name=key, value=_text(value))
    ET.SubElement(props, "property", name="run_dir", value=_text(run.path))
    for r in results:  # each item's checks
        for c in r.checks:
            ET.SubElement(props, "property", name=_text(f"{_case_name(r.item_id, r.epoch)}.check.{c.name}"),
                          value=_text(_verdict(c)))
    suite.extend(cases)
    return suite


def junit_xml(runs: Sequence[Run]) -> bytes:
    """The JUnit XML document (UTF-8) of these runs."""
    root = ET.Element("testsuites", name="arena")
    for run in runs:
        root.append(_testsuite(run))
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in root)))
    root.set("time", _seconds(sum(float(s.get("time", "0")) for s in root)))
    ET.indent(root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml + b"\n"


def write_junit(runs: Sequence[Run], path: Path) -> Path:
    """Write the JUnit XML of these runs to `path` (whole or not at all); raises OSError."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(junit_xml(runs))
    tmp.replace(path)
    return path
