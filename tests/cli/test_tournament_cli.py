"""`chinchon tournament run` and `check` on TOML files with Python and Node bots."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from chinchon.engine import parse_card

from tests.support.helpers import NODE_BOT, ROOT
from tests.support.tournament import (
    CLI,
    PLAYED,
    check_record,
    sdk_cup,
)
from tests.support.waits import until_sync

# -- a: the CLI, Python and Node bots ------------------------------------------------------


def test_tournament_run_cli_with_python_and_node_bots(tmp_path: Path, results_dir: Path) -> None:
    toml = tmp_path / "cup.toml"
    toml.write_text(f"""
name = "Small cup"
table_size = 2
games_per_pairing = 2
duplicate_deals = true
concurrency = 2
start = "when_connected"
seed = "cup-seed"

[rules]
score_limit = 60

[time_control]
per_move = 2.0
bank = 10.0

[policies]
reconnect_grace = 5.0

[[participants]]
name = "greedy-py"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "greedy"]

[[participants]]
name = "random-py"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "random"]

[[participants]]
name = "node"
command = ["node", {json.dumps(str(NODE_BOT))}]
""", encoding="utf-8")
    assert (NODE_BOT.parent / "node_modules").is_dir()
    results = results_dir  # (the CLI creates it)
    db = tmp_path / "cup.sqlite3"
    proc = subprocess.run(
        [*CLI, "tournament", "run", str(toml), "--results", str(results), "--db", str(db),
         "--quiet", "--log-level", "info", "--log-format", "json"],
        capture_output=True, text=True, timeout=150, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # Launching bots prints nothing of gRPC's own (no fork-handler chatter).
    assert "fork_posix" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    # At the end every bot was dismissed and exited 0 by itself (no SIGTERM): the
    # Python SDK and the Node bot, each of its instances.
    logs = [json.loads(ln) for ln in proc.stderr.splitlines() if ln.startswith("{")]
    exits = [e for e in logs if e["event"] == "bot_exited"]
    assert sorted({e["bot"] for e in exits}) == sorted(["greedy-py", "random-py", "node"])
    assert len(exits) == 6, exits  # 2 instances each (concurrency 2, 3 bots, 2 seats)
    assert all(e["code"] == 0 and e["by_itself"] for e in exits), exits
    assert not [e for e in logs if e["event"] == "bot_stopped"]
    # Exiting once dismissed is what a bot is asked to do: no "ended during the run".
    assert not [e for e in logs if e["event"] == "bot_ended"], logs
    assert "ended during the run" not in proc.stdout, proc.stdout[-3000:]
    # The database's lock file goes with the run that held it.
    assert not (tmp_path / "cup.sqlite3.lock").exists()
    bots = ["greedy-py", "random-py", "node"]
    st = json.loads((results / "standings.json").read_text(encoding="utf-8"))
    assert sorted(r["bot"] for r in st["rows"]) == sorted(bots)
    assert st["games"] == 6 and st["rating_model"] == "bradley-terry"
    for r in st["rows"]:
        assert r["games"] == 4, r
        assert r["wins"] + r["draws"] + r["losses"] == 4
        assert r["forfeits"] == 0 and r["timeouts"] == 0 and r["illegal_actions"] == 0, r
    assert sum(r["match_points"] for r in st["rows"]) == 6
    csv_lines = (results / "standings.csv").read_text(encoding="utf-8").strip().splitlines()
    assert len(csv_lines) == 4 and csv_lines[0].startswith("rank,bot,")
    assert {line.split(",")[1] for line in csv_lines[1:]} == set(bots)
    report = (results / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Small cup") and "ratings.svg" in report
    assert all(f"| {b} |" in report for b in bots)
    svg = ET.parse(results / "ratings.svg").getroot()
    assert svg.tag.endswith("svg")
    assert sum(1 for el in svg.iter() if el.tag.endswith("circle")) == 3
    # Records stay in the database; `tournament records` writes them as files.
    assert not (results / "records").exists()
    subprocess.run([*CLI, "tournament", "records", str(db), "--out", str(tmp_path / "recs"),
                    "--format", "json"], check=True, capture_output=True, timeout=60)
    records = sorted((tmp_path / "recs").glob("*.json"))
    assert len(records) == 6
    pairs: Counter[frozenset[str]] = Counter()
    deals: dict[str, list[dict[str, Any]]] = {}
    for p in records:
        rec = json.loads(p.read_text(encoding="utf-8"))
        assert p.stem == rec["gameId"]
        assert rec["result"]["termination"] in PLAYED, rec["result"]
        check_record(rec)
        names = [s["name"] for s in rec["seats"]]
        pairs[frozenset(names)] += 1
        deal = rec["actions"][0]["deal"]
        ranks = [parse_card(c).rank for c in deal["deck"]]
        deals.setdefault(json.dumps([ranks, deal["starter"]]), []).append(rec)
    assert set(pairs.values()) == {2} and len(pairs) == 3
    # Duplicate deals: the two games of each pairing start from the same deal, seats
    # swapped, each under its own suit names (the same ranks, never the same cards).
    assert len(deals) == 3
    for games in deals.values():
        seatings = [[s["name"] for s in rec["seats"]] for rec in games]
        assert len(games) == 2 and seatings[0] == seatings[1][::-1]
        first, second = (rec["actions"][0]["deal"]["deck"] for rec in games)
        assert first != second
    # The database holds the same finished games; the same file run again resumes it.
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT status, voided FROM games").fetchall()
        (status,) = con.execute("SELECT status FROM tournaments").fetchone()
    finally:
        con.close()
    assert status == "finished" and rows == [("finished", 0)] * 6
    assert (results / "logs").is_dir()


def test_tournament_run_waits_for_bots_that_are_slow_to_start(tmp_path: Path, results_dir: Path) -> None:
    """start = "when_connected": a launched bot slower to start than the reconnect grace
    is waited for instead of forfeiting its first games."""
    slow = ROOT / "tests" / "bots" / "slow_start_bot.py"
    toml = tmp_path / "slow.toml"
    toml.write_text(f"""
name = "Slow start"
games_per_pairing = 2
concurrency = 1
seed = "slow"
[rules]
score_limit = 30
[time_control]
per_move = 2.0
bank = 10.0
[policies]
reconnect_grace = 0.5
[[participants]]
name = "quick"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "greedy"]
[[participants]]
name = "sleepy"
command = ["{{python}}", {json.dumps(str(slow))}, "--sleep", "3", "--bot", "greedy"]
""", encoding="utf-8")
    results = results_dir  # (the CLI creates it)
    proc = subprocess.run(
        [*CLI, "tournament", "run", str(toml), "--results", str(results), "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    st = json.loads((results / "standings.json").read_text(encoding="utf-8"))
    assert st["games"] == 2
    for r in st["rows"]:
        assert (r["games"], r["forfeits"]) == (2, 0), r
    assert not (results / "records").exists()  # in the database only
    assert (results / "tournament.sqlite3").is_file()

#: How long the CLI is given, once its bots are launched, to be waiting for them (in
#: --quiet mode it prints nothing that says so).
SETTLE = 0.5


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` but its web view's (a process of its own)."""
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
        kids = [int(x) for x in f.read().split()]
    return [k for k in kids if b"chinchon_referee.web.process" not in _cmdline(k)]


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")  # a zombie has exited


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_ctrl_c_while_waiting_for_bots_stops_them_and_exits(tmp_path: Path, results_dir: Path) -> None:
    """SIGINT while ``tournament run`` waits for its bots to connect: the bots it launched
    are stopped, and it exits with 130 saying how to resume."""
    slow = ROOT / "tests" / "bots" / "slow_start_bot.py"
    toml = tmp_path / "wait.toml"
    toml.write_text(f"""
name = "Interrupted"
games_per_pairing = 2
concurrency = 1
seed = "wait"
[[participants]]
name = "sleepy1"
command = ["{{python}}", {json.dumps(str(slow))}, "--sleep", "120", "--bot", "greedy"]
[[participants]]
name = "sleepy2"
command = ["{{python}}", {json.dumps(str(slow))}, "--sleep", "120", "--bot", "greedy"]
""", encoding="utf-8")
    results = results_dir  # (the CLI creates it)
    proc = subprocess.Popen(
        [*CLI, "tournament", "run", str(toml), "--results", str(results), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    try:
        # Both launched, still asleep.
        until_sync(lambda: len(_children(proc.pid)) >= 2, "the CLI launched its two bots", 60)
        bots = _children(proc.pid)
        assert len(bots) == 2, "the CLI did not launch its two bots"
        # The quiet CLI prints nothing once it waits: give it this long to get there.
        time.sleep(SETTLE)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-3000:] + err[-3000:]
    assert "interrupted before the first game" in out, out[-3000:]
    assert "Traceback" not in err, err[-3000:]
    until_sync(lambda: not any(_running(b) for b in bots), "the launched bots exited", 60)




def test_the_demo_tournament_file_checks(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*CLI, "tournament", "check", str(ROOT / "sample_bots" / "demo_tournament.toml")],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "valid" in proc.stdout and "4 bots" in proc.stdout and "24 games" in proc.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ntable_size = 3\n[[participants]]\nname = "a"\n'
                   '[[participants]]\nname = "b"\n', encoding="utf-8")
    proc = subprocess.run([*CLI, "tournament", "check", str(bad)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and "table_size" in proc.stdout


# -- running a finished tournament again ---------------------------------------------------------


def _two_bot_cup(tmp_path: Path) -> Path:
    return sdk_cup(tmp_path / "twice.toml", "Twice cup", "twice-seed", games_per_pairing=2,
                   score_limit=30)


def _run(toml: Path, cwd: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "tournament", "run", str(toml), "--quiet", *flags],
                          capture_output=True, text=True, timeout=150, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200"})


def test_a_finished_tournament_run_again_shows_its_standings_and_launches_nothing(
        tmp_path: Path) -> None:
    toml = _two_bot_cup(tmp_path)
    first = _run(toml, tmp_path, "--records")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    results = tmp_path / "results" / "twice-cup"
    db = results / "tournament.sqlite3"

    def snapshot() -> tuple[list[str], list[tuple[Any, ...]], list[str]]:
        with sqlite3.connect(db) as c:
            games = c.execute("SELECT id, status, finished FROM games ORDER BY id").fetchall()
        return (sorted(p.name for p in (results / "logs").iterdir()), games,
                sorted(p.name for p in (results / "records").iterdir()))

    before = snapshot()
    logs_mtime = {p.name: p.stat().st_mtime_ns for p in (results / "logs").iterdir()}
    assert len(before[1]) == 2 and len(before[2]) == 2
    assert all(n.endswith(".json.gz") for n in before[2])  # --records: compact files

    second = _run(toml, tmp_path)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    out = second.stdout
    assert "is finished: it finished on " in out, out
    assert "standings after 2 games" in out and "greedy-py" in out and "random-py" in out
    assert "--again" in out
    # No bot launched (no log file created or written), no game created or played.
    assert snapshot() == before
    assert {p.name: p.stat().st_mtime_ns for p in (results / "logs").iterdir()} == logs_mtime
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM tournaments").fetchone() == (1,)
    # --fresh abandons unfinished runs only: a finished one is shown, not replayed.
    fresh = _run(toml, tmp_path, "--fresh")
    assert fresh.returncode == 0, fresh.stdout[-3000:] + fresh.stderr[-3000:]
    assert "is finished: it finished on " in fresh.stdout
    assert snapshot() == before

    # --again: a whole new run in a folder of its own; the first folder is untouched.
    third = _run(toml, tmp_path, "--again", "--records", "--record-format", "json")
    assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
    again = tmp_path / "results" / "twice-cup-2"
    assert f"results written to {again.relative_to(tmp_path)}/" in third.stdout, third.stdout
    assert "2 game records in records/" in third.stdout, third.stdout
    assert sorted(p.suffix for p in (again / "records").iterdir()) == [".json", ".json"]
    st = json.loads((again / "standings.json").read_text(encoding="utf-8"))
    assert st["games"] == 2
    assert snapshot() == before


def test_fresh_abandons_an_interrupted_run_and_keeps_its_records_apart(tmp_path: Path) -> None:
    """A run interrupted after some games wrote their records (``--records``: compact
    files); ``--fresh`` starts over in the same folder, its records as JSON: the old run
    is marked cancelled (never resumed), its records leave ``records/`` whatever their
    format (the database keeps them), and ``records/`` holds the new run's games only.
    Run again, the folder's tournament is the new one, finished."""
    toml = _two_bot_cup(tmp_path)
    toml.write_text(toml.read_text(encoding="utf-8")
                    .replace("games_per_pairing = 2", "games_per_pairing = 10")
                    .replace("concurrency = 2", "concurrency = 1"), encoding="utf-8")
    results = tmp_path / "results" / "twice-cup"
    db = results / "tournament.sqlite3"

    def finished_games() -> int:
        if not db.exists():
            return 0
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            try:
                return int(c.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'")
                           .fetchone()[0])
            except sqlite3.OperationalError:  # the schema is not written yet
                return 0

    first = subprocess.Popen([*CLI, "tournament", "run", str(toml), "--quiet", "--records"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=tmp_path)
    try:
        until_sync(lambda: finished_games() >= 1, "a game of the first run finished", 60)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, out[-3000:] + err[-3000:]
    with sqlite3.connect(db) as c:
        ((old,),) = c.execute("SELECT id FROM tournaments").fetchall()
    old_records = sorted(p.name for p in (results / "records").iterdir())
    assert old_records and all(n.startswith(f"{old}-g") for n in old_records), old_records
    assert all(n.endswith(".json.gz") for n in old_records) and len(old_records) < 10

    fresh = _run(toml, tmp_path, "--fresh", "--records", "--record-format", "json")
    assert fresh.returncode == 0, fresh.stdout[-3000:] + fresh.stderr[-3000:]
    assert f"abandoned the unfinished run {old}" in fresh.stdout
    with sqlite3.connect(db) as c:
        rows = dict(c.execute("SELECT id, status FROM tournaments").fetchall())
        kept = c.execute("SELECT COUNT(*) FROM games WHERE tournament_id = ? AND status = 'finished'",
                         (old,)).fetchone()[0]
    assert rows.pop(old) == "cancelled"
    ((new, status),) = rows.items()
    assert status == "finished"
    assert kept == len(old_records)  # the database keeps the abandoned run's games
    records = sorted(p.name for p in (results / "records").iterdir())
    assert len(records) == 10 and all(n.startswith(f"{new}-g") and n.endswith(".json")
                                      for n in records), records
    st = json.loads((results / "standings.json").read_text(encoding="utf-8"))
    assert st["games"] == 10

    again = _run(toml, tmp_path)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"({new}) is finished" in again.stdout, again.stdout
