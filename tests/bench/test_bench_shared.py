"""The shared-mode benchmark runs end to end (``bench/bench_shared.py``, tiny sizes).

Not a speed test: no figure is compared with anything. It checks that every part of the
harness still works against the current referee (``chinchon serve`` alone on SQLite,
and ``--shared`` processes on one PostgreSQL database, their bots, the CPU readings),
so that a change in the referee cannot silently break the benchmark that measures it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.postgres import pg_cluster, pg_url  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[2]


def test_the_shared_benchmark_runs_every_process_count(tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    out, md = tmp_path / "bench.json", tmp_path / "bench.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_shared.py"), "--postgres", pg_url,
         "--processes", "1", "2", "--rounds", "1", "--bots", "4", "--games-per-pairing", "2",
         "--idle", "0.2", "--timeout", "120", "--json", str(out), "--markdown", str(md)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    runs = got["runs"]
    assert [(r["store"], r["processes"]) for r in runs] == [
        ("sqlite", 1), ("postgres", 1), ("postgres", 2)]
    for r in runs:
        # 6 pairings x 2 games, every one finished once, none voided, all by the bots.
        assert r["scheduled"] == 12 and r["games"] == 12 and r["statuses"] == {"finished": 12}, r
        assert r["voided"] == 0 and sum(r["games_by_process"]) == 12
        assert r["decisions"] > 12 * 20
        assert r["referee_cpu_s"] > 0 and r["bots_us_per_decision"] > 0
        assert len(r["referee_cpu_by_process"]) == r["processes"]
        if r["store"] == "postgres":
            assert r["xacts_per_game"] > 0 and r["wal_kb_per_game"] > 0
            if not os.environ.get("CHINCHON_TEST_PG"):  # the session's cluster: on this machine
                assert r["postgres_cpu_ms_per_game"] > 0
        else:
            assert r["postgres_cpu_ms_per_game"] is None
    assert [(m["store"], m["processes"]) for m in got["medians"]] == [
        ("sqlite", 1), ("postgres", 1), ("postgres", 2)]
    table = md.read_text()
    for name in ("SQLite x1", "PostgreSQL x1", "PostgreSQL x2"):
        assert table.count(f"| {name} |") == 2, name  # its run, and its median
