"""The training environment's benchmark runs end to end (``bench/bench_env.py``, tiny
sizes). Not a speed test: no figure is compared with anything; it checks that the
harness still runs every contestant and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_env_benchmark_prints_every_contestant() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_env.py"), "--rounds", "1",
                           "--games", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for row in ("| engine | ", "| env, step only | ", "| env | "):
        assert row in proc.stdout, proc.stdout
    assert "| engine | " in proc.stdout and "1.000x" in proc.stdout
