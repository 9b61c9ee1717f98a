"""The metrics-scrape benchmark runs end to end (``bench/bench_metrics.py --smoke``).

Not a speed test: the windows are a second and no figure is compared with anything. It
checks that the harness works against the current library (the server with its metrics
process, the scrapers, the control), so that a change in the endpoint cannot silently
break the benchmark that measures it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_metrics_benchmark_runs(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_metrics.py"), "--smoke",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    assert {w["kind"] for w in got["windows"]} == {"metrics", "control"}
    assert all(w["decisions_per_s"] > 0 for w in got["windows"]), got["windows"]
    for w in got["windows"]:
        # The scrapers were answered: the page (or 429 past the rate), the control's 200.
        assert sum(v for k, v in w["statuses"].items() if k in ("200", "429")) > 0, w
    assert got["ratio"] > 0
    assert set(got["terminations"]) <= {"TERMINATION_NORMAL", "TERMINATION_CHINCHON"}
    assert "metrics / control" in proc.stdout
