"""What each part of VanillaAdapter (its loop, resume, delegation, interruption and follow-up mixins) uses of the
others, declared once for mypy: `VanillaParts` is their common base, empty at run time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.for_adapters import Decision, DecisionSet, LegContext, LegResult

    from .outcome import Paused


class VanillaParts:
    """The members the mixins share, as VanillaAdapter has them; nothing is defined here at run time."""

    if TYPE_CHECKING:
        _always: dict[str, dict[str, Any]]

        def _openai(self, ctx: LegContext) -> Any: ...

        async def _loop(self, messages: list[dict[str, Any]], ctx: LegContext, agent: str | None = None,
                        nested: bool = False) -> LegResult: ...

        async def _delegate(self, messages: list[dict[str, Any]], calls: list[dict[str, Any]], ctx: LegContext,
                            agent: str | None = None, nested: bool = False) -> LegResult: ...

        async def _resume(self, state: Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult: ...

        async def _resume_delegates(self, state: Paused, decision: Decision | DecisionSet,
                                    ctx: LegContext) -> LegResult: ...

        async def _interrupted(self, state: Paused, message: Decision, ctx: LegContext) -> LegResult: ...

        def _standing(self, call: dict[str, Any], gated: list[str]) -> Decision | None: ...

        def _tools(self, ctx: LegContext, call_id: str) -> Any: ...

        async def _run(self, ctx: LegContext, call: dict[str, Any], args: dict[str, Any] | None = None) -> str: ...

        @staticmethod
        def _answered(ctx: LegContext, call: dict[str, Any], result: str) -> str: ...

        async def _decided(self, ctx: LegContext, call: dict[str, Any], decision: Decision | None) -> str: ...

        @staticmethod
        def _noted(state: Paused) -> None: ...
