"""pydantic_ai_dbos: the `pydantic_ai` adapter's agent, made durable with DBOS (`pydantic_ai.durable_exec.dbos`).

The agent is the same (adapters/pydantic_ai/, whose docstring says how each pause is made): the approval tool
raises `CallDeferred(kind='question')`, gated tools are `requires_approval=True`, a pausing body raises
`ApprovalRequired`, and every pause is the run's end with a `DeferredToolRequests` output. What this adapter
adds is DBOS durable execution, the way pydantic-ai documents it (docs/durable_execution/dbos.md):

- the agent is `Agent(..., name="arena_agent", capabilities=[DBOSDurability()])` (the current form;
  `DBOSAgent` is deprecated), and every leg's `agent.run(...)` is called inside the adapter's own
  `@DBOS.workflow(name="arena_pydantic_ai_dbos.leg")`, started with `SetWorkflowID(...)`. `DBOSDurability`
  makes each model request a DBOS step (`arena_agent__model.request`); function tools are *not* wrapped by
  DBOS (documented: "decorate with `@DBOS.step` if the function involves non-determinism or I/O"), so each
  tool's harness call, the tool's I/O, runs as a DBOS step of its own (`DBOS.run_step_async`, named
  `tool.<name>`, no retries). The code around it (the deferral, the body's branch on the approval) is
  workflow code, replayed deterministically.
- the store: DBOS's system database, a SQLite file under the item's work directory
  (`<workdir>/pydantic_ai_dbos/dbos.sqlite`), with a pinned `application_version` so that every process of
  the item recovers the others' workflows. DBOS is process-global, so the class is `concurrent = False` (each
  item runs in a worker process of its own); it is launched at the start of each leg (after the workflow and
  the agent's steps are registered) and destroyed when the leg returns, so nothing of it runs during a pause.
- on a server (`--store postgres`, the `postgres` channel): DBOS's own PostgreSQL system database, the item's
  database given as `system_database_url` (DBOS connects with `postgresql+psycopg`, and its migrations at
  `DBOS.launch()` create its tables in schema `dbos` there); the state then names no file, only the workflow id.
  DBOS has no Redis system database (SQLite or PostgreSQL only), so the `redis` channel is unsupported.
- the pause: the workflow returns (it does not block) with the run's output, `DeferredToolRequests`, and its
  message history (pydantic-ai's JSON), recorded by DBOS as the workflow's result. The leg's state is JSON
  that points at it: the database file, the paused workflow's id and the deferred call id(s).
- the resume (any process): DBOS is launched on the same database, the paused workflow's result is read back
  (`DBOS.retrieve_workflow_async(id).get_result()`), and a new workflow, whose id is the paused one's plus
  `/resume`, runs `agent.run(message_history=..., deferred_tool_results=DeferredToolResults(...))` with the
  decision, as in `pydantic_ai`. The resume's workflow id is thus an idempotency key for the pause (DBOS's
  workflow-id semantics): resuming the same pause again, with whatever decision, returns the first resume's
  recorded result once it has ended, and runs nothing again.
- recovery (crash_recovery's `recover` channel): a process killed inside the resumed workflow leaves it
  PENDING in the database. The next process's `DBOS.launch()` recovers it by itself (DBOS docs, "Workflow
  recovery": on a single server, each restart recovers every PENDING workflow of its executor, here DBOS's
  default "local"), from its last completed step: recorded steps (model responses, tool answers) are
  replayed from the database, not run again; a step that started but did not record its result (the call
  the process died in) runs again, under the same pydantic-ai tool call id, which the harness's tools get
  (`call_id=`). The adapter's `resume` with the same state and decision then reaches the same workflow id and
  waits for the recovered workflow's result: it does not run the resume again itself (`continue_run`, the
  arena's `continue` way, gives no decision at all and only waits for it). The recovered workflow runs on
  DBOS's own event loop thread, as DBOS runs recovered workflows.

Sibling calls: as in `pydantic_ai` (DBOS changes nothing here): pydantic-ai runs every ordinary function tool
of the model turn and only collects the deferred one, so a consequential call emitted beside the approval
request (scripted-eager's `book_room`) executes in that turn, as a DBOS step, before the workflow returns the
pause; its return stays in the history and is not run again on resume.

A deny reason: the decision's text is the deferred call's result (`DeferredToolResults.calls`) for the
approval tool, and `ToolDenied(message=decision text)` for a gated call: both reach the model; `ToolApproved`
has no note field (an approval note does not reach the model on the tool-level gate).

A new message instead of a decision (the `message` channel): as in `pydantic_ai`, a new run with the message as
its prompt on the paused history after `repair_messages` (pydantic-ai's documented way to add a prompt to a
history with unanswered calls; it closes the pending call with a synthesized 'interrupted' result). It runs as
the pause's resume workflow (id: the pause's + `/resume`), like any resume of that pause, so a later resume of
the same pause (a late approval) gets DBOS's recorded result of the message's run back.

A new process: the state is JSON pointing at DBOS's SQLite store; any process launches DBOS on it and resumes
(durable_state). `RequestInput` (a wait inside the run) is not used: DBOS refuses it ("DBOS does not support
waiting for external events yet").

Hostile resumes (resume_safety): the decisions are passed on as `pydantic_ai` passes them (keyed by call id,
a held call without one gets none, an unknown id is passed under its id, a null is None). A second resume of
a pause whose resume has ended (a retry after the run, a stale state) gets that resume's recorded result from
DBOS and runs nothing. A second resume *while the first is still running* in another process is different:
that process's `DBOS.launch()` takes the live, PENDING workflow for one its crashed executor left (both
processes are DBOS's default executor "local", the single-server setting DBOS documents), recovers it and
runs the step the first process is inside of again (DBOS steps are at-least-once; the first process, on
checkpointing that step, finds the conflict and waits for the workflow's recorded outcome).

Streamed (`--stream`): a durable run is the workflow's, so `run_stream_events` is not offered; DBOS's way is
`DBOSDurability(event_stream_handler=...)`, the agent built with it for a streamed run (a plain run's has
none). Model events are handled inside the model-request step and each tool event in an event-handler step of
its own, handed to the leg that runs; a recovered workflow's replayed steps are not handled again. Under a
second concurrent resume the stream can change the outcome (the item's trace ends in a KeyError): both executions
of the resume workflow in one process share DBOSDurability's event-step reservation key, and the second to end
fails on it when the two overlap, a race (findings.md section 6 does not compare raced items plain vs streamed).

Offline: `DBOS__CLOUD=false` and `OTEL_SDK_DISABLED=true` are set (setdefault) before dbos is imported (dbos
reads `DBOS__CLOUD` when imported); the DBOS config has `enable_otlp=False` (no OTLP traces or logs), no
`conductor_key`/`conductor_url` (no Conductor websocket; DBOS only logs a console URL, at INFO, which the
config's `log_level="ERROR"` drops), and a SQLite system database (no database server); the agent's
`instrument` is False as in `pydantic_ai`.
"""

from __future__ import annotations

from .adapter import PydanticAIDBOSAdapter

__all__ = ["PydanticAIDBOSAdapter"]
