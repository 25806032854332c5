"""The public face for adapter authors: everything an adapter needs, and nothing else.

An adapter drives one framework's own pause API: `start` runs the first leg of an item and returns a
`LegResult` (`suspended` only when the framework itself stopped and holds a resumable state),
`resume` continues that state with the human's `Decision` (or a `DecisionSet`, one per pending call).
It declares what it has in `info` (an `AdapterInfo` listing its pause `Channel`s, each in its
framework's terms: a claim the harness tests, never trusts), runs
the harness's tools through `LegContext.tools` (where the harness logs them), and talks to the model
at `LegContext.model` with the framework's own OpenAI client, built on `async_client()`.

    from arena.for_adapters import Adapter, AdapterInfo, LegContext, LegResult

docs/adapters.md walks through a complete minimal adapter written against this module only.
"""

from __future__ import annotations

from arena import adapter_kit as kit
from arena.adapter import Adapter, AdapterContractError, HookNotSupported, ResumableRunner
from arena.channels import ChannelSpec
from arena.channels import register as register_channel
from arena.http import async_client
from arena.kept_records import KeptRecords
from arena.http import client as blocking_client
from arena.tools import body as bodypause
from arena.tools.box import parse_args
from arena.worker.procs import alive as process_alive
from arena.worker.procs import start_time as process_start_time
from arena.types import (
    AdapterInfo,
    Capabilities,
    Channel,
    ChannelName,
    Decision,
    DecisionKind,
    DecisionSet,
    LegContext,
    LegResult,
    ModelConfig,
    PauseKind,
    PendingRequest,
    RecoverWay,
    Store,
    ToolBox,
    ToolKind,
    ToolSpec,
)

__all__ = [
    "Adapter", "AdapterContractError", "ChannelSpec", "HookNotSupported", "KeptRecords", "Store", "blocking_client",
    "kit",
    "process_alive", "process_start_time", "register_channel",
    "AdapterInfo", "Capabilities", "Channel", "ChannelName", "Decision", "DecisionKind", "DecisionSet",
    "LegContext", "LegResult",
    "ModelConfig", "PauseKind", "PendingRequest", "RecoverWay", "ResumableRunner", "ToolBox", "ToolKind", "ToolSpec",
    "async_client", "bodypause", "parse_args",
]
