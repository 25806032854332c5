"""vanilla_durable's tools: each call of the model runs under its call id, its answer journaled as soon as it
returns, and answered from the journal when it already returned (a recovery)."""

from __future__ import annotations

from typing import Any

from .store import Journal


class JournaledTools:
    """One model call's tools: answered from the journal if it already returned, else run under its call id."""

    def __init__(self, tools: Any, call_id: str, journal: Journal) -> None:
        self.tools, self.call_id, self.journal, self.specs = tools, call_id, journal, tools.specs

    def _answered(self, name: str) -> str | None:
        answer = self.journal.data["answers"].get(f"{self.call_id}/{name}")
        return None if answer is None else str(answer)

    def _keep(self, name: str, answer: str) -> str:
        self.journal.data["answers"][f"{self.call_id}/{name}"] = answer
        self.journal.save()
        return answer

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        answered = self._answered(name)
        if answered is not None:
            return answered
        return self._keep(name, self.tools.call(name, args, call_id=self.call_id))

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        answered = self._answered(name)
        if answered is not None:
            return answered
        return self._keep(name, await self.tools.acall(name, args, call_id=self.call_id))
