"""`chinchon tournament check` and `run` of a TOML with stages of formats (a Swiss, then
a knockout of its top two): SDK bot processes launched by the command, played to the
end, report.md and structure.json written with the rounds, the bracket and the final
ranking; run again, it is finished and launches nothing. A knockout interrupted
part-way (Ctrl-C) resumes where it stopped."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from pathlib import Path

from tests.support.tournament import CLI, PLAYED
from tests.support.waits import until_sync

BOTS = {"g1": "greedy", "r1": "random", "g2": "greedy", "r2": "random"}

TOML = """name = "Swiss then final"
table_size = 2
games_per_pairing = 2
concurrency = 2
start = "when_connected"
seed = "formats-cli"

[rules]
score_limit = 30

[[format.stages]]
kind = "swiss"
rounds = 2
advance = 2

[[format.stages]]
kind = "knockout"
name = "Final"

[format.stages.match]
games = 1
"""


def test_tournament_run_plays_stages_of_formats(tmp_path: Path) -> None:
    toml = tmp_path / "cup.toml"
    toml.write_text(TOML + "".join(
        f'\n[[participants]]\nname = "{b}"\n'
        f'command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "{kind}"]\n'
        for b, kind in BOTS.items()), encoding="utf-8")
    check = subprocess.run([*CLI, "tournament", "check", str(toml)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "2 stages" in check.stdout and "Swiss" in check.stdout and "Final" in check.stdout
    results, db = tmp_path / "results", tmp_path / "cup.sqlite3"
    run = [*CLI, "tournament", "run", str(toml), "--results", str(results), "--db", str(db),
           "--quiet", "--http", "off"]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "structure.json" in proc.stdout and "Final ranking" in proc.stdout
    shape = json.loads((results / "structure.json").read_text(encoding="utf-8"))
    assert [s["status"] for s in shape["stages"]] == ["over", "over"]
    swiss, final = shape["stages"]
    assert [r["round"] for r in swiss["rounds"]] == [1, 2]
    assert sorted(final["bots"]) == sorted(swiss["ranking"][:2])
    (match,) = [m for m in final["bracket"]["matches"] if m["status"] == "decided"]
    assert shape["ranking"][0] == match["winner"]
    assert sorted(shape["ranking"]) == sorted(BOTS)
    report = (results / "report.md").read_text(encoding="utf-8")
    assert "## Stages" in report and "### Final ranking" in report
    assert "- **format**: Swiss then Final" in report
    con = sqlite3.connect(db)
    try:
        ends = [t for (t,) in con.execute("SELECT termination FROM games")]
    finally:
        con.close()
    assert len(ends) == 2 * 2 * 2 + 1 and all(t in PLAYED for t in ends), ends
    again = subprocess.run(run, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert again.returncode == 0 and "is finished" in again.stdout, again.stdout[-2000:]


KNOCKOUT = """name = "Knockout resumed"
table_size = 2
concurrency = 1
start = "when_connected"
seed = "formats-cli-ko"

[rules]
score_limit = 30

[format]
kind = "knockout"
third_place = true

[format.match]
games = 3
"""


def test_an_interrupted_knockout_resumes_where_it_stopped(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) part-way through a knockout's matches: exit 130; the same command
    again resumes it (the games played are kept, the bracket goes on from them) and
    plays it to its end."""
    toml = tmp_path / "ko.toml"
    toml.write_text(KNOCKOUT + "".join(
        f'\n[[participants]]\nname = "{b}"\n'
        f'command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "{kind}"]\n'
        for b, kind in BOTS.items()), encoding="utf-8")
    results, db = tmp_path / "results", tmp_path / "ko.sqlite3"
    run = [*CLI, "tournament", "run", str(toml), "--results", str(results), "--db", str(db),
           "--quiet", "--http", "off"]

    def finished() -> list[str]:
        if not db.exists():
            return []
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            try:
                return [i for (i,) in c.execute(
                    "SELECT id FROM games WHERE status = 'finished' ORDER BY seq")]
            except sqlite3.OperationalError:  # the schema is not written yet
                return []

    first = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=tmp_path)
    try:
        until_sync(lambda: len(finished()) >= 3, "three games of the first run", 120)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, out[-3000:] + err[-3000:]
    before = finished()
    again = subprocess.run(run, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "resuming" in again.stdout
    after = finished()
    assert set(before) <= set(after) and len(after) > len(before)
    shape = json.loads((results / "structure.json").read_text(encoding="utf-8"))
    assert shape["stages"][0]["status"] == "over" and sorted(shape["ranking"]) == sorted(BOTS)
    with sqlite3.connect(db) as c:
        ((tournaments,),) = c.execute("SELECT COUNT(*) FROM tournaments").fetchall()
        ends = [t for (t,) in c.execute("SELECT termination FROM games")]
    assert tournaments == 1 and all(t in PLAYED for t in ends), ends
