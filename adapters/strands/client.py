"""strands imported lazily with its network switches off, and the model every Agent is given: a strands
OpenAIModel on the harness endpoint."""

from __future__ import annotations

import os
from typing import Any

from arena.for_adapters import LegContext


def import_strands() -> Any:
    """Import strands with its network switches off (set before the first import)."""
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")  # never reach the EC2 metadata service
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")  # no OpenTelemetry SDK, whatever else sets it up
    import strands
    import strands.models.openai
    import strands.session.file_session_manager

    return strands


def openai_model(client: Any, ctx: LegContext) -> Any:
    """A strands OpenAIModel on `client` (the shared AsyncOpenAI client)."""
    from strands.models.openai import OpenAIModel

    return OpenAIModel(client=client, model_id=ctx.model.name)
