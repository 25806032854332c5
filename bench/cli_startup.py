"""How fast `arena --help` and `arena list` start, against importing the frameworks they must not import.

Prints ratios measured in one run (lower is better); no thresholds, no assertions.
Run: uv run python bench/cli_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

FRAMEWORK_IMPORTS = [
    "langgraph.graph", "langchain.agents", "agents", "pydantic_ai", "agent_framework", "smolagents", "google.adk",
]


def wall(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    py = sys.executable
    baseline = wall([py, "-c", "pass"], args.repeat)
    frameworks = wall([py, "-c", "import importlib\nfor m in %r:\n    try: importlib.import_module(m)\n    except ImportError: pass" % FRAMEWORK_IMPORTS], 1)
    rows = {
        "arena --help": wall([py, "-m", "arena", "--help"], args.repeat),
        "arena list": wall([py, "-m", "arena", "list"], args.repeat),
    }
    print(f"python startup: {baseline:.3f}s; importing the shared-environment frameworks: {frameworks:.3f}s")
    for name, seconds in rows.items():
        print(f"{name:14s} {seconds:.3f}s  = {seconds / baseline:5.1f}x python startup, "
              f"{seconds / frameworks:5.2f}x the framework imports")


if __name__ == "__main__":
    main()
