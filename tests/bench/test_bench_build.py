"""The build benchmark runs end to end (``bench/bench_build.py --smoke``): not a speed
test (no figure is compared with anything), a check that both ways of building work
against the current launcher."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from chinchon_referee.launch.confine import Confinement

ROOT = Path(__file__).resolve().parents[2]


def test_the_build_benchmark_runs_both_ways(tmp_path: Path, confinement: Confinement) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_build.py"), "--smoke",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = json.loads(out.read_text())
    pair = got["pairs"][0]
    assert pair["bounded_s"] > 0 and pair["unbounded_s"] > 0 and got["median_ratio"] > 0
