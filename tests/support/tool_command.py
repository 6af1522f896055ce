"""How the benchmark scripts run pqscope: as host-tools/pqscope does (this checkout's package, with
Python's module cache allowed even where the environment forbids it), so that a timed command
costs what a user's does: without the cache each process compiles numpy, scipy and matplotlib
again, seconds of CPU a command."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PQSCOPE = (sys.executable, "-m", "pqscope")


def tool_environment() -> dict[str, str]:
    """The environment pqscope runs in from these scripts."""
    kept = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**kept, "PQSCOPE_ROOT": str(ROOT)}
