"""An adapter whose model text and tool arguments carry markup: the report must show it, inert."""

from __future__ import annotations

from arena.types import AdapterInfo, Channel, Decision, LegContext, LegResult, PendingRequest

# Each payload changes the page visibly if it ever runs: the title, or an attribute on <body>.
FINAL = ("<script>document.title='PWNED'</script><b>bold</b> the booking was denied "
         "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">")
SUMMARY = "<img src=y onerror=\"document.body.setAttribute('data-pwned','2')\"> & <i>book</i> |pipe| `tick`"
MECHANISM = "<script>document.title='PWNED-META'</script> suspends on request_approval"


class MarkupAdapter:
    info = AdapterInfo(name="markup", framework="arena", channels=(Channel(name="ask", kind="native", mechanism=MECHANISM),))

    async def start(self, ctx: LegContext) -> LegResult:
        await ctx.tools.acall("search_rooms", {"capacity": ctx.item.metadata["capacity"], "day": ctx.item.metadata["day"]})
        return LegResult.suspended(PendingRequest(tool="request_approval", args={"summary": SUMMARY}), state=None)

    async def resume(self, state, decision: Decision, ctx: LegContext) -> LegResult:
        return LegResult.finished(FINAL + f" [{decision.as_text()}]")
