"""The harness's own cost per item, side by side with inspect_ai's marginal cost per sample, in one run.

Both are marginal costs, items one at a time, with a model that answers at once: (time of many − time
of few) / (many − few), so start-up and the first item's imports are left out.

- arena: vanilla (no framework) on human_in_the_loop, the scripted model over loopback HTTP through the
  openai SDK (each item: two legs, a pause and a resume, 3–4 model requests, tools, checks, its trace
  and run directory), unwatched (no pause dwell or quiet wait: those are latency, not work).
- inspect_ai: one `generate()` per sample and a `match()` scorer, `max_samples=1`, its log written,
  twice: with `mockllm/model` (the model in-process) and with the `openai-api` provider against a
  loopback Chat Completions server in the same process (one HTTP request per sample).

inspect-ai is installed into a scratch environment the first time (~/.cache/arena/bench/inspect-ai),
never into the project's. Run: uv run python bench/vs_inspect.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import all_results, evaluate, timed_items  # noqa: E402
from _internals import unwatched  # noqa: E402

SCRATCH = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "arena" / "bench" / "inspect-ai"
FEW, MANY = 1, 6  # epochs of human_in_the_loop's 12 items: 12 and 72
SAMPLES = (8, 108)

# Runs in the scratch environment; prints one JSON line: seconds per sample for each model.
CHILD = r'''
import json, os, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "scripted",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ["LOOPBACK_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
os.environ["LOOPBACK_API_KEY"] = "unused"

import inspect_ai
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

def outputs():
    while True:  # usage given, so mockllm does not count tokens with tiktoken (which downloads its encoding)
        out = ModelOutput.from_content(model="mockllm/model", content="x")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        yield out

def run(name, n):
    model = get_model(name, custom_outputs=outputs()) if name.startswith("mockllm") else name
    task = Task(dataset=[Sample(input=f"question {i}", target="x") for i in range(n)], solver=generate(), scorer=match())
    with tempfile.TemporaryDirectory() as logs:
        start = time.perf_counter()
        log = eval(task, model=model, log_dir=logs, display="none", max_samples=1, log_level="error")[0]
        seconds = time.perf_counter() - start
    if log.status != "success":
        raise SystemExit(f"inspect_ai: {name}: {str(log.error)[:300]}")
    return seconds

few, many = SAMPLES
out = {"version": inspect_ai.__version__}
for name in ("mockllm/model", "openai-api/loopback/scripted"):
    run(name, 2)  # imports and first-use costs
    out[name] = (run(name, many) - run(name, few)) / (many - few)
print(json.dumps(out))
'''


def scratch_python() -> Path:
    """The scratch environment's Python, with inspect-ai (and openai, for its openai-api provider) installed."""
    python = SCRATCH / "bin" / "python"
    if not python.exists():
        uv = shutil.which("uv") or sys.exit("bench: uv is needed to build inspect-ai's scratch environment")
        print(f"building {SCRATCH} (inspect-ai, openai) ...", flush=True)
        subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(SCRATCH)], check=True)
        subprocess.run([uv, "pip", "install", "-q", "-p", str(python), "inspect-ai", "openai"], check=True)
    return python


def inspect_costs() -> dict[str, float | str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OTEL_SDK_DISABLED": "true"}
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([str(scratch_python()), "-c", CHILD.replace("SAMPLES", repr(SAMPLES))], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        sys.exit(f"bench: inspect_ai failed: {done.stderr.strip()[-600:]}")
    result: dict[str, float | str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def arena_cost() -> tuple[float, float]:
    """(seconds per item, model requests per item): the marginal cost, unwatched, one at a time."""
    evaluate("human_in_the_loop", ["vanilla"], model="scripted", items=["hitl-01"])  # imports, first use
    with unwatched():
        few, _ = timed_items("human_in_the_loop", ["vanilla"], model="scripted", epochs=FEW, concurrency=1)
        many, runs = timed_items("human_in_the_loop", ["vanilla"], model="scripted", epochs=MANY, concurrency=1)
    results = all_results(runs)
    requests = sum(e.type == "model_call" for r in results for e in r.trace) / len(results)
    return (many - few) / (12 * (MANY - FEW)), requests


def main() -> None:
    print(f"{os.cpu_count()} cores")
    theirs = inspect_costs()
    ours, requests = arena_cost()
    mock, loop = float(theirs["mockllm/model"]), float(theirs["openai-api/loopback/scripted"])
    print(f"arena (vanilla, scripted model over loopback, unwatched, one at a time): {ours * 1000:6.1f} ms/item "
          f"({requests:.1f} model requests per item; target <= 10 ms)")
    print(f"inspect_ai {theirs['version']}, mockllm (model in-process):                 {mock * 1000:6.1f} ms/sample")
    print(f"inspect_ai {theirs['version']}, openai-api over loopback (1 request):       {loop * 1000:6.1f} ms/sample")
    print(f"arena / inspect_ai: {ours / mock:4.2f}x (mockllm), {ours / loop:4.2f}x (loopback)", flush=True)


if __name__ == "__main__":
    main()
