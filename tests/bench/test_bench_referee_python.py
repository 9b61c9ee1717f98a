"""``bench/bench_referee_python.py`` runs: the real referee plays games over in-memory
streams (every request answered) and a figure per decision comes out. Not a speed
test: nothing is compared with anything."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_referee_plays_over_in_memory_streams() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_referee_python.py"), "--lanes", "4",
         "--decisions", "2000", "--warmup", "0.2"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    found = re.search(r"([\d.]+) us of CPU per decision \((\d+) decisions, 4 games", proc.stdout)
    assert found is not None, proc.stdout
    assert float(found.group(1)) > 0 and int(found.group(2)) >= 2000
