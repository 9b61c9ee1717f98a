"""The sandbox benchmark runs end to end (``bench/bench_sandbox.py --smoke``): not a speed
test (no figure is compared with anything), a check that every part of the harness
works against the current launcher."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from chinchon_referee.launch.confine import Confinement

ROOT = Path(__file__).resolve().parents[2]


def test_the_sandbox_benchmark_runs_every_part(tmp_path: Path, confinement: Confinement) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_sandbox.py"), "--smoke",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = json.loads(out.read_text())
    assert got["startup"]["sandboxed_ms"] > 0 and got["throughput"]["pairs"][0]["ratio"] > 0
    if got["cgroups"]:
        assert got["neighbour"]["spinner_sandboxed"] > 0
