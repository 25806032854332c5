"""smolagents: no pause primitive. `SmolagentsAdapter` is `unsupported` (request_approval is just a tool and
the run goes to completion); `SmolagentsEmulatedAdapter` is `emulated` (step callback + agent.interrupt(),
resumed with agent.run(task, reset=False) on the live agent).

smolagents sends its tool history as TEXT ("Calling tools:\\n[...]" assistant messages answered by
"Observation:\\n..." user messages), never as native tool_calls / role "tool" messages. The tests that need
the scripted policy to follow that history (to get past search_rooms) are skipped, with that reason, while
the policy cannot read it; the wire-format and unsupported-never-suspends tests run regardless.

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs
ends, traces equal to vanilla's, nothing past loopback) is test_conformance.py's; this folder holds what
is smolagents' own, on the same runs, a file per concern of the adapters' package. This conftest holds what
those files share: the arena's items, the cells' fixtures and how a message reads as text; `history.py` whether
the scripted policy reads smolagents' text history.
"""

from __future__ import annotations

import pytest

from arena import catalog

APPROVAL = "request_approval"
ITEMS = {i.id: i for i in catalog.load_arena("human_in_the_loop").items}
NOT_APPROVED = "NOT APPROVED: request_approval was executed instead of pausing for a human"


# Every run's connections stay on loopback: test_conformance.py's test_nothing_left_loopback, per run.


@pytest.fixture(scope="module")
def emulated(cell):
    return cell("smolagents_emulated").wire


@pytest.fixture(scope="module")
def emulated_eager(cell):
    return cell("smolagents_emulated", profile="scripted-eager").results


@pytest.fixture(scope="module")
def unsupported(cell):
    return cell("smolagents").wire


@pytest.fixture(scope="module")
def unsupported_eager(cell):
    return cell("smolagents", profile="scripted-eager").results


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content)
    return content or ""
