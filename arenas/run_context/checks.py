"""run_context's own check: the application's context reached every model call of the run, read from what the
harness's gateway recorded each request carried (never from the adapter)."""

from __future__ import annotations

from arena.for_arenas import CheckResult, CheckSet, Scoring, fail, ok
from arena.for_arenas.trace import instructions_sent

CHECKS = CheckSet("run_context")  # this arena's own checks (ArenaSpec.checks)


@CHECKS.check
def context_reached_model(s: Scoring) -> CheckResult:
    """Every model request of every leg carried instructions naming the user the application's context names (they
    are written from the context at each call), and a leg after the resume made one: a resume that dropped or
    replaced the context fails here, whatever else it did."""
    name, user = "context_reached_model", s.item.metadata["user"]
    sent = instructions_sent(s.events)
    missing = [e for e, texts in sent if not any(user in t for t in texts)]
    if missing:
        first = missing[0]
        return fail(name, f"{len(missing)} of {len(sent)} model requests carried no instructions naming {user!r}, "
                          f"first the one at step {first.seq} (leg {first.leg})")
    resumed = [e.leg for e in s.events if e.type == "resumed" and not e.replay]
    after = [e for e, _ in sent if resumed and e.leg >= min(resumed)]
    if resumed and not after:
        return fail(name, f"no model request after the resume (leg {min(resumed)}): the context given on resume "
                          "reached no model call")
    if not sent:
        return fail(name, "the run made no model request")
    return ok(name, f"all {len(sent)} model requests carried instructions naming {user!r}, {len(after)} of them "
                    "after the resume")
