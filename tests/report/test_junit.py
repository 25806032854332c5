"""The JUnit XML report: valid against tests/report/junit.xsd (the common Ant/Jenkins shape), and saying
what failed, why, and what could not be measured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from arena.checks import CheckResult
from arena.report.junit import junit_xml, write_junit
from arena.results import ItemResult

from .helpers import run

REPO = Path(__file__).resolve().parents[2]
SCHEMA = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("junit.xsd"))))


def arena(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO, env=env)


def valid(document: bytes) -> etree._Element:
    root = etree.fromstring(document)
    assert SCHEMA.validate(root), SCHEMA.error_log
    return root


def result(item_id: str, *, failing: dict[str, str] | None = None, error: str | None = None, epoch: int = 1,
           status: str | None = None) -> ItemResult:
    checks = [CheckResult(name="completed", passed=True, reason="finished in leg 1")]
    checks += [CheckResult(name=name, passed=False, reason=why) for name, why in (failing or {}).items()]
    status = status or ("errored" if error else "failed" if failing else "passed")
    return ItemResult(item_id=item_id, status=status, checks=checks, error=error, legs=2, duration_s=0.25, epoch=epoch)


def case(root: etree._Element, suite: str, name: str) -> etree._Element:
    (found,) = root.xpath("testsuite[@name=$s]/testcase[@name=$n]", s=suite, n=name)
    return found


def test_each_run_is_a_testsuite_each_item_a_testcase_each_check_a_property():
    hitl = run("human_in_the_loop", "vanilla", "scripted", [
        result("hitl-01"),
        result("hitl-02", failing={"tool_not_used": "book_room{'room_id': 'R1'} executed 1x",
                                   "acknowledged": "the model's last answer does not acknowledge the denial"}),
        result("hitl-03", error="the model endpoint failed: 502", status="errored"),
    ])
    gate = run("approval_gate", "langgraph", "reckless", [result("gate-01")])
    root = valid(junit_xml([hitl, gate]))

    assert root.tag == "testsuites" and root.get("tests") == "4"
    assert (root.get("failures"), root.get("errors"), root.get("skipped")) == ("1", "1", "0")
    suite = root.find("testsuite[@name='human_in_the_loop/vanilla']")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("3", "1", "1", "0")
    assert suite.get("timestamp") == "2026-01-01T00:00:00" and float(suite.get("time")) == pytest.approx(0.75)
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["model"] == "scripted" and props["framework_version"] == "1.0" and props["status"] == "complete"
    assert root.find("testsuite[@name='approval_gate/langgraph']/testcase").get("classname") == "approval_gate.langgraph"

    passed = case(root, "human_in_the_loop/vanilla", "hitl-01")
    assert passed.get("classname") == "human_in_the_loop.vanilla" and passed.get("time") == "0.250"
    assert passed.find("failure") is None and passed.find("error") is None
    assert props["hitl-01.check.completed"] == "passed"
    assert passed.find("properties") is None  # junit-10: properties are the testsuite's only
    assert "check completed: passed" in passed.find("system-out").text

    failed = case(root, "human_in_the_loop/vanilla", "hitl-02")
    checks = {k: v for k, v in props.items() if k.startswith("hitl-02.check.")}
    assert checks == {"hitl-02.check.completed": "passed",
                      "hitl-02.check.tool_not_used": "failed: book_room{'room_id': 'R1'} executed 1x",
                      "hitl-02.check.acknowledged": "failed: the model's last answer does not acknowledge the denial"}
    failure = failed.find("failure")
    assert failure.get("message") == ("tool_not_used: book_room{'room_id': 'R1'} executed 1x; "
                                      "acknowledged: the model's last answer does not acknowledge the denial")
    assert failure.get("type") == "tool_not_used,acknowledged" and failed.find("error") is None
    assert "tool_not_used: book_room" in failure.text and "traces/hitl-02.jsonl" in failed.findtext("system-out")

    errored = case(root, "human_in_the_loop/vanilla", "hitl-03")
    error = errored.find("error")
    assert error.get("message") == "the model endpoint failed: 502" and error.get("type") == "could_not_measure"
    assert errored.find("failure") is None


def test_an_interrupted_run_lists_the_items_it_did_not_run_as_skipped():
    interrupted = run("human_in_the_loop", "vanilla", "scripted", [result("hitl-01")], status="interrupted",
                      items=["hitl-01", "hitl-02", "hitl-03"])
    root = valid(junit_xml([interrupted]))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("skipped"), suite.get("failures")) == ("3", "2", "0")
    assert case(root, "human_in_the_loop/vanilla", "hitl-02").find("skipped").get("message") == "not run: the run is interrupted"


def test_epochs_are_testcases_named_as_their_traces():
    epochs = [result("hitl-01"), result("hitl-01", epoch=2, failing={"suspended": "no"})]
    r = run("human_in_the_loop", "vanilla", "scripted", epochs, epochs=2, items=["hitl-01"])
    root = valid(junit_xml([r]))
    assert [c.get("name") for c in root.iter("testcase")] == ["hitl-01", "hitl-01@2"]
    assert "traces/hitl-01@2.jsonl" in case(root, "human_in_the_loop/vanilla", "hitl-01@2").findtext("system-out")
    assert root.get("failures") == "1"


def test_what_an_adapter_prints_is_escaped_into_valid_xml(tmp_path):
    nasty = "\x1b[31m<b>&amp;\x00 ]]> \"quoted\"\nsecond line \ud800"
    r = run("human_in_the_loop", "ev<il>", "scripted", [result("hitl-01", failing={"completed": nasty})])
    path = write_junit([r], tmp_path / "junit.xml")
    root = valid(path.read_bytes())
    failure = root.find("testsuite/testcase/failure")
    assert "\\x1b[31m<b>&amp;\\x00 ]]> \"quoted\"\nsecond line \\xd800" in failure.get("message")
    assert root.find("testsuite").get("name") == "human_in_the_loop/ev<il>"


BROKEN = {
    "a testcase without a name": '<testsuites><testsuite name="s" tests="1"><testcase classname="c"/></testsuite></testsuites>',
    "a testsuite without tests": '<testsuites><testsuite name="s"><testcase name="t"/></testsuite></testsuites>',
    "a negative count": '<testsuite name="s" tests="-1"/>',
    "a time that is not a number": '<testsuite name="s" tests="1"><testcase name="t" time="fast"/></testsuite>',
    "a timestamp with a time zone": '<testsuite name="s" tests="0" timestamp="2026-01-01T00:00:00+00:00"/>',
    "properties in a testcase": ('<testsuite name="s" tests="1"><testcase name="t"><properties/>'
                                 '</testcase></testsuite>'),
    "properties after the testcases": ('<testsuite name="s" tests="1"><testcase name="t"/><properties/></testsuite>'),
    "a property without a value": ('<testsuite name="s" tests="0"><properties><property name="p"/></properties>'
                                   '</testsuite>'),
    "an element JUnit does not have": '<testsuite name="s" tests="1"><testcase name="t"><verdict/></testcase></testsuite>',
    "a bare testcase as the document": '<testcase name="t"/>',
}


@pytest.mark.parametrize("why", sorted(BROKEN))
def test_the_schema_rejects_a_wrong_document(why):
    assert not SCHEMA.validate(etree.fromstring(BROKEN[why]))


def test_the_schema_rejects_our_own_report_with_one_thing_taken_out():
    root = valid(junit_xml([run("human_in_the_loop", "vanilla", "scripted", [result("hitl-01")])]))
    del root.find("testsuite").attrib["tests"]
    assert not SCHEMA.validate(root)


def test_arena_run_junit_writes_a_valid_report_of_every_adapter(tmp_path):
    report = tmp_path / "ci" / "junit.xml"
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "-a", "tests.zoo:BooksFirst", "--item", "hitl-01",
              "--item", "hitl-02", "--out", str(tmp_path / "runs"), "--junit", str(report))
    assert r.returncode == 0, r.stderr  # failed items were measured: not an error
    root = valid(report.read_bytes())
    assert [s.get("name") for s in root.iter("testsuite")] == ["human_in_the_loop/books_first", "human_in_the_loop/vanilla"]
    assert root.find("testsuite[@name='human_in_the_loop/vanilla']").get("failures") == "0"
    booked = case(root, "human_in_the_loop/books_first", "hitl-01").find("failure")
    assert booked.get("message").startswith("suspended: book_room executed before the run suspended")
    props = [p for p in root.findall("testsuite[@name='human_in_the_loop/vanilla']/properties/property")
             if p.get("name").startswith("hitl-01.check.")]
    assert props and all(p.get("value") == "passed" for p in props)


@pytest.mark.parametrize("where, expected", [
    ("dir", "is a directory; give the file to write"),
    ("file/junit.xml", "is a file, not a directory"),
])
def test_a_bad_junit_path_is_one_line_exit_2(tmp_path, where, expected):
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("")
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "--item", "hitl-01", "--out", str(tmp_path / "runs"),
              "--junit", str(tmp_path / where))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("arena: error: --junit") and expected in lines[0]
    assert not list((tmp_path / "runs").glob("*/meta.json"))  # refused before anything ran
