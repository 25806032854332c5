"""What the smolagents adapters declare: `SmolagentsAdapter` (`INFO`, no pause: `unsupported`) and
`SmolagentsEmulatedAdapter` (`EMULATED_INFO`, an interrupt from a step callback: `emulated`), and the channels they
share."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel

# both adapters stream the same way (`stream.run_agent`)
STREAM = Channel(
    name="stream",
    kind="native",
    mechanism=(
        "agent.run(task, stream=True) read to its end on an agent with stream_outputs=True "
        "(model answers via generate_stream; ToolCall and ToolOutput events, the FinalAnswerStep)"
    ),
)
# `--store postgres|redis`: smolagents keeps no run anywhere, so neither adapter has a store on a server
STORES = tuple(
    Channel(
        name=kind,
        kind="unsupported",
        mechanism=(
            "smolagents 1.26.0 cannot persist a run: agent.to_dict()/save() keep the agent's definition (tools, "
            "model, prompts), not its AgentMemory, which has no loader, so there is no paused state to keep in "
            f"{title}"
        ),
    )
    for kind, title in (("postgres", "PostgreSQL"), ("redis", "Redis"))
)

INFO = AdapterInfo(
    name="smolagents",
    framework="smolagents",
    channels=(
        Channel(
            name="ask",
            kind="unsupported",
            mechanism=(
                "none: smolagents has no interrupt/approval primitive; request_approval is an ordinary tool "
                "(the harness's own), and agent.run(task) runs to completion in one leg"
            ),
            carries=Capabilities(
                deny_reason=False,
                approve_note=False,
                free_text=False,
                notes=(
                    "No decision ever reaches the model: the run never pauses, and the request_approval tool is "
                    "executed by the harness, which answers 'NOT APPROVED: request_approval was executed instead "
                    "of pausing for a human'."
                ),
            ),
        ),
        STREAM,
        *STORES,
    ),
)

EMULATED_INFO = AdapterInfo(
    name="smolagents_emulated",
    framework="smolagents",
    channels=(
        Channel(
            name="ask",
            kind="emulated",
            mechanism=(
                "emulated: an ActionStep step callback calls agent.interrupt() after the step that called "
                "request_approval (adapter-owned tool, placeholder observation); agent.run raises "
                "AgentError('Agent interrupted.'); resume writes the decision as that call's observation in "
                "agent.memory and calls agent.run(task, reset=False). State = the live agent object."
            ),
            carries=Capabilities(
                deny_reason=True,
                approve_note=True,
                free_text=True,
                notes=(
                    "The decision text replaces the request_approval call's observation in the agent's memory, "
                    "so notes, reasons and answers reach the model as that call's result (sent, like all "
                    "smolagents tool results, as 'Observation:' text in a user message). smolagents checks "
                    "agent.interrupt() only between steps: sibling tool calls of the approval step run before "
                    "the pause. The state is the in-memory agent: smolagents cannot persist and reload a run."
                ),
            ),
        ),
        STREAM,
        *STORES,
    ),
)
