"""The spectator benchmark runs end to end (``bench/bench_spectator.py --smoke``).

Not a speed test: the windows are two seconds and no figure is compared with anything.
It checks that every part of the harness works against the current library (the
attacks, the feed cost pairs, the file limit run), so that a change in the web view
cannot silently break the benchmark that measures it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_spectator_benchmark_runs_every_part(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_spectator.py"), "--smoke",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    windows = got["attacks"]["windows"]
    kinds = {w["kind"] for w in windows}
    assert kinds == {"quiet", "replays", "pages", "connections", "streams", "unknown"}
    assert all(w["decisions_per_s"] > 0 for w in windows if w["kind"] != "unknown"), windows
    for w in windows:
        if w["kind"] in ("replays", "pages", "unknown"):
            statuses = [a["status"] for a in w["attack"]]
            assert any(s.get("200", 0) + s.get("404", 0) > 0 for s in statuses), (w["kind"], statuses)
        elif w["kind"] in ("connections", "streams"):
            assert all(a["opened"] > 0 for a in w["attack"]), w
    # Every game ended normally: no timeout, no forfeit, whatever the attacks did.
    assert set(got["attacks"]["terminations"]) <= {"TERMINATION_NORMAL", "TERMINATION_CHINCHON"}
    assert got["feed_cost"]["pairs"][0]["ratio"] > 0
    fl = got["file_limit"]
    assert fl["dropper"]["drops"] >= 1 and fl["dropper"]["streams_opened"] > 3
    assert not [k for k in fl["dropper"] if k.startswith("closed:UNAVAILABLE")], fl["dropper"]
    assert set(fl["terminations"]) <= {"TERMINATION_NORMAL", "TERMINATION_CHINCHON"}
    assert "CPU/decision" in proc.stdout and "feed cost" in proc.stdout
