"""The organizer benchmark runs end to end (``bench/bench_organizer.py``, briefly).

Not a speed test: one round of two-second windows over a 600-game tournament, and no
figure is compared with anything. It checks that every part of the harness works (the
prepared database, the canned answers, the plain server, each load against both sides)
and that it prints its ratio lines, so that a change in the admin service cannot
silently break the benchmark that measures it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_organizer_benchmark_runs_every_load(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_organizer.py"), "--rounds", "1",
         "--window", "2", "--settle", "0.5", "--games", "600", "--cache", str(tmp_path / "cache"),
         "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    for kind in ("a", "b", "c", "all"):
        assert f"ratio {kind}: " in proc.stdout, proc.stdout
    got = json.loads(out.read_text())
    sides = {(w["kind"], w.get("side")) for w in got["windows"]}
    assert sides == {("quiet", None)} | {(k, s) for k in ("a", "b", "c", "all")
                                         for s in ("referee", "control")}
    assert all(w["decisions_per_s"] > 0 for w in got["windows"]), got["windows"]
    # Every load reached the side it was aimed at.
    for w in got["windows"]:
        if w["kind"] in ("a", "all"):
            assert w["calls"].get("export_messages", 0) > 0, w
        if w["kind"] in ("c", "all"):
            assert w["calls"].get("scrapes", 0) > 0, w
