"""The referee benchmark runs end to end (``bench/bench_server.py --smoke``).

Not a speed test: the windows are a second or two and no figure is compared with
anything. It checks that every part of the harness still works against the current
library (echo, referee load with its latency wrapper, one game, idle memory), so that a
change in the referee cannot silently break the benchmark that measures it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _smoke(out: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_server.py"), "--smoke", "--json", str(out),
         *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc, json.loads(out.read_text())


def test_the_server_benchmark_runs_every_part(tmp_path: Path) -> None:
    proc, got = _smoke(tmp_path / "bench.json")
    assert got["write_gate"] == "on"
    assert got["echo"]["rate"] > 0
    for key in ("many", "one"):
        run = got["referee"][key]
        assert run["decisions"] > 0, key
        # Every game the harness started ended normally: none was aborted by an error
        # in the referee or in the latency wrapper.
        assert run["terminations"] and set(run["terminations"]) <= {
            "TERMINATION_NORMAL", "TERMINATION_CHINCHON"}, (key, run["terminations"])
        p50, p99, n = run["referee_ms_p50_p99"]
        assert n > 0 and 0 < p50 <= p99 < 5_000, (key, p50, p99, n)
    assert got["memory"]["connected"] == 40
    assert got["memory"]["per_conn_kib"] > 0
    assert "referee / echo ratio" in proc.stdout
    assert got["referee"]["many"]["write_gate"] is True  # the referee as `chinchon serve` runs


def test_the_baseline_without_the_write_gate_runs(tmp_path: Path) -> None:
    proc, got = _smoke(tmp_path / "bench.json", "--only", "referee", "--write-gate", "off")
    assert "referee write gate off" in proc.stdout
    many = got["referee"]["many"]
    assert many["write_gate"] is False  # the referee process really ran without it
    assert many["decisions"] > 0
    assert set(many["terminations"]) <= {"TERMINATION_NORMAL", "TERMINATION_CHINCHON"}
