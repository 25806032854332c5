"""The LangGraph adapter's model client offline and untraced: no tiktoken encoding, no LangSmith tracer."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langgraph.checkpoint.sqlite")


# --- offline / telemetry ------------------------------------------------------------------------------


def test_no_tiktoken_and_no_langsmith_tracer(run_adapter, monkeypatch):
    """Nothing on the adapter's path loads a tiktoken encoding (which would download one), and no
    LangSmith tracer is created even with LANGSMITH_TRACING=true in the environment."""
    import tiktoken
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tracers import langchain as lc_tracers
    from langsmith import utils as ls_utils

    def no_tiktoken(*args, **kwargs):
        raise AssertionError("tiktoken encoding requested")

    monkeypatch.setattr(tiktoken, "get_encoding", no_tiktoken)
    monkeypatch.setattr(tiktoken, "encoding_for_model", no_tiktoken)

    tracers: list[object] = []

    def no_tracer(self, *args, **kwargs):
        tracers.append(self)
        raise RuntimeError("LangSmith tracer created")  # langchain_core logs and carries on: nothing sent

    monkeypatch.setattr(lc_tracers.LangChainTracer, "__init__", no_tracer)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    ls_utils.get_env_var.cache_clear()
    try:
        RunnableLambda(lambda x: x).invoke(1)  # control: with the env var set, LangChain wants a tracer
        assert tracers, "control failed: tracing env var had no effect"
        tracers.clear()
        results = run_adapter("langgraph", items=["hitl-01", "hitl-02"])
    finally:
        monkeypatch.delenv("LANGSMITH_TRACING")
        ls_utils.get_env_var.cache_clear()
    assert [r.status for r in results] == ["passed", "passed"]
    assert tracers == []
