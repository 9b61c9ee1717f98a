"""`chinchon match` end to end: real bot processes (the SDK's built-in bots) on a private
referee; duplicate pairs with the seats swapped, the results folder, the exit codes of
the SPRT, and a match killed (-9) mid-run and resumed."""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from tests.support.tournament import CLI
from tests.support.waits import until_sync


def _bot(kind: str) -> str:
    return f"{{python}} -m chinchon.sdk --bot {kind}"


def _rules(tmp: Path) -> Path:
    path = tmp / "short.toml"
    path.write_text("score_limit = 30\n", encoding="utf-8")  # short games
    return path


def _match(tmp: Path, out: str, candidate: str, baseline: str, *flags: str
           ) -> list[str]:
    return [*CLI, "match", "--candidate", _bot(candidate), "--baseline", _bot(baseline),
            "--out", str(tmp / out), "--rules", str(_rules(tmp)), "--quiet",
            "--per-move", "5", "--bank", "30", *flags]


def _run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_match(tmp, *args[:3], *args[3:]), capture_output=True, text=True,
                          cwd=tmp, timeout=600)


def _ranks(record: dict[str, Any]) -> list[str]:
    deck = record["actions"][0]["deal"]["deck"]
    return [c.rstrip("OCEB") for c in deck]


def test_a_match_plays_duplicate_pairs_with_seats_swapped_and_writes_its_folder(
        tmp_path: Path) -> None:
    proc = _run(tmp_path, "m", "greedy", "random", "--games", "3", "--seed", "s1")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = tmp_path / "m"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    side = summary["opponents"]["baseline"]
    assert side["pairs"] == 3 and side["games"] == 6 and sum(side["pentanomial"]) == 3
    assert side["wins"] + side["draws"] + side["losses"] == 6
    assert side["elo_low"] <= side["elo"] <= side["elo_high"]
    assert summary["end"]["complete"] is True and summary["end"]["verdict"] is None
    records = {p.name.split("-baseline-")[1].removesuffix(".json.gz"):
               json.loads(gzip.decompress(p.read_bytes())) for p in (out / "records").iterdir()}
    assert sorted(records) == ["p1a", "p1b", "p2a", "p2b", "p3a", "p3b"]
    for k in (1, 2, 3):
        a, b = records[f"p{k}a"], records[f"p{k}b"]
        assert [s["name"] for s in a["seats"]] == ["candidate", "baseline"]
        assert [s["name"] for s in b["seats"]] == ["baseline", "candidate"]
        # one deal: the same ranks in the same places, under other suit names
        assert _ranks(a) == _ranks(b)
        assert a["actions"][0]["deal"]["deck"] != b["actions"][0]["deal"]["deck"]
    assert (out / "pairs.csv").read_text(encoding="utf-8").count("\n") == 7
    assert "| baseline | 3 |" in (out / "summary.md").read_text(encoding="utf-8")
    # run again: finished, nothing played, the same exit code
    again = _run(tmp_path, "m", "greedy", "random", "--games", "3", "--seed", "s1")
    assert again.returncode == 0 and "this match is finished" in again.stdout
    # other settings in the same folder: refused, nothing changed
    other = _run(tmp_path, "m", "greedy", "random", "--games", "4", "--seed", "s1")
    assert other.returncode == 2 and "another --out" in other.stdout


def test_sprt_exit_codes_h1_h0_and_inconclusive(tmp_path: Path) -> None:
    h1 = _run(tmp_path, "h1", "greedy", "random", "--games", "200",
              "--sprt", "elo0=0", "elo1=100")
    assert h1.returncode == 0, h1.stdout[-3000:] + h1.stderr[-3000:]
    s = json.loads((tmp_path / "h1" / "summary.json").read_text(encoding="utf-8"))
    assert s["end"]["verdict"] == "H1" and s["end"]["llr"] >= s["sprt"]["upper_bound"]
    assert s["opponents"]["baseline"]["pairs"] < 200  # stopped early
    h0 = _run(tmp_path, "h0", "random", "greedy", "--games", "200",
              "--sprt", "elo0=0", "elo1=100")
    assert h0.returncode == 1, h0.stdout[-3000:] + h0.stderr[-3000:]
    assert "H0 accepted" in h0.stdout
    limit = _run(tmp_path, "lim", "greedy", "random", "--games", "1",
                 "--sprt", "elo0=0", "elo1=5")
    assert limit.returncode == 3, limit.stdout[-3000:] + limit.stderr[-3000:]
    assert "inconclusive" in limit.stdout
    bad = _run(tmp_path, "bad", "greedy", "random", "--sprt", "elo0=5", "elo1=0")
    assert bad.returncode == 2 and "below elo1" in bad.stdout


def test_a_match_killed_mid_run_resumes_without_playing_a_game_twice(tmp_path: Path) -> None:
    db = tmp_path / "k" / "match.sqlite3"

    def finished() -> int:
        if not db.exists():
            return 0
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            try:
                return int(c.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'")
                           .fetchone()[0])
            except sqlite3.OperationalError:
                return 0

    # Enough pairs that the first run is still playing when the kill lands, however
    # long the poll below takes on a busy machine.
    pairs = 20
    args = ("k", "greedy", "greedy", "--games", str(pairs), "--concurrency", "2", "--seed", "kill")
    # its own process group: the match and the bots it launched die together, as in a crash
    first = subprocess.Popen(_match(tmp_path, *args[:3], *args[3:]), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=tmp_path, start_new_session=True)
    try:
        until_sync(lambda: finished() >= 3, "three games of the first run finished", 120)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate(timeout=60)
    before = finished()
    assert 3 <= before < 2 * pairs
    again = _run(tmp_path, *args)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "resuming" in again.stdout
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT id, status FROM games").fetchall()
    assert len(rows) == 2 * pairs and all(status == "finished" for _, status in rows)
    s = json.loads((tmp_path / "k" / "summary.json").read_text(encoding="utf-8"))
    side = s["opponents"]["baseline"]
    assert side["games"] == 2 * pairs and side["pairs"] == pairs and side["unpaired_games"] == 0
    assert len(list((tmp_path / "k" / "records").iterdir())) == 2 * pairs
