"""What DBOS adds to each of pydantic_ai's channels, and the channels it has of its own (recover, postgres, redis,
stream): the adapter's `AdapterInfo`, pydantic_ai's with these changes."""

from __future__ import annotations

from arena.for_adapters import Capabilities, Channel
from arena_builtins.adapters.pydantic_ai import PydanticAIAdapter

_BASE = {c.name: c for c in PydanticAIAdapter.info.channels}
_DURABLE = ("; the leg runs inside the adapter's own @DBOS.workflow on an Agent(name=..., capabilities="
            "[DBOSDurability()]) (model requests and each tool's harness call are DBOS steps), the state points "
            "at the workflow's recorded result in DBOS's system database (SQLite; PostgreSQL with --store postgres)")


INFO = PydanticAIAdapter.info.model_copy(update={
    "name": "pydantic_ai_dbos",
    "channels": (
        _BASE["ask"].model_copy(update={
            "mechanism": _BASE["ask"].mechanism + _DURABLE,
            "carries": _BASE["ask"].carries.model_copy(update={"notes": (
                "As pydantic_ai: the decision is the deferred call's result (DeferredToolResults.calls); the "
                "paused history is the DBOS workflow's recorded result. Gated tools: a denial's text reaches "
                "the model as ToolDenied.message; ToolApproved has no note field.")}),
        }),
        _BASE["tool_gate"].model_copy(update={"mechanism": _BASE["tool_gate"].mechanism + _DURABLE}),
        _BASE["body_pause"].model_copy(update={"mechanism": _BASE["body_pause"].mechanism + (
            "; under DBOS the body's harness calls (prepare, commit) are steps: the resumed run is a new "
            "workflow, so prepare runs again there")}),
        _BASE["multi_call"],
        _BASE["message"].model_copy(update={"mechanism": _BASE["message"].mechanism + (
            "; under DBOS the run is a new workflow whose id is the pause's + '/resume' (the same idempotency "
            "key a decision's resume has)")}),
        _BASE["always"],
        _BASE["input"].model_copy(update={"mechanism": _BASE["input"].mechanism + (
            "; under DBOS the staged text is in the pause's JSON state and reaches the resume workflow as its "
            "prompt argument (recorded with the workflow's inputs)")}),
        Channel(
            name="recover",
            kind="native",
            mechanism=(
                "DBOS workflow recovery: the next process's DBOS.launch() recovers the PENDING resume workflow "
                "(DBOS docs, workflow recovery on a single server) from its last completed step: recorded model "
                "and tool steps are replayed from the system database (SQLite; PostgreSQL with --store postgres), "
                "the step the process died in runs "
                "again under the same tool call id; the adapter's resume with the same state reaches the same "
                "workflow id (the pause's + '/resume') and waits for that workflow's result"
            ),
            carries=Capabilities(notes="what the resumed workflow was given: the same DeferredToolResults"),
            # resume: the same state and decision reach the recovered workflow by its id; continue: the
            # adapter only waits for the workflow DBOS.launch() recovered (`continue_run`)
            ways=("resume", "continue"),
        ),
        Channel(
            name="postgres",
            kind="native",
            mechanism=(
                "DBOS's own PostgreSQL system database: DBOS(config={'system_database_url': the item's database "
                "URL}) (dbos 3.4, driver postgresql+psycopg; DBOS.launch() runs its migrations, creating its "
                "tables in schema 'dbos' there): the paused workflow's recorded result (pydantic-ai's message "
                "history JSON and the DeferredToolRequests output) and the resume workflow's steps; the state is "
                "the workflow id, and every leg's DBOS.launch() connects to it anew and recovers the PENDING "
                "workflows there"
            ),
        ),
        Channel(
            name="redis",
            kind="unsupported",
            mechanism=(
                "DBOS has no Redis system database: dbos 3.4's system database is SQLite or PostgreSQL only "
                "(system_database_url is a sqlite:// or postgresql:// URL; SystemDatabase.create picks "
                "SQLiteSystemDatabase or PostgresSystemDatabase, dbos/_sys_db.py), and pydantic-ai's DBOS "
                "integration keeps the run's state nowhere else"
            ),
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism=(
                "DBOSDurability(event_stream_handler=...), DBOS's way to stream a durable run (its "
                "run_stream_events is refused in a workflow): model events are handled inside the model-request "
                "step, each tool event in an event-handler step of its own (FunctionToolCallEvent, "
                "FunctionToolResultEvent, DeferredToolRequestsEvent for the paused calls); steps a recovered "
                "workflow replays from the database are not handled again"
            ),
        ),
    ),
})
