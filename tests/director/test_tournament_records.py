"""Game records live in the database: `chinchon tournament run` writes no file per game
unless asked (``--records``), and `chinchon tournament records DB --out DIR` writes them
on demand, compact (``.json.gz``) or indented (``.json``), each the database's record and
readable by `chinchon replay` (and its ``--view``)."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from pathlib import Path

from chinchon_referee.cli.record_files import load_record, write_record
from chinchon_referee.storage import open_store

from tests.support.tournament import CLI, PLAYED, check_record, sdk_cup
from tests.support.waits import until_sync

GAMES = 4


def _cup(tmp_path: Path) -> Path:
    return sdk_cup(tmp_path / "cup.toml", "Records cup", "records-seed",
                   games_per_pairing=GAMES, score_limit=40)


def _cli(*args: str, cwd: Path, code: int = 0) -> str:
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=150, cwd=cwd,
                          env={**os.environ, "COLUMNS": "250"})
    assert proc.returncode == code, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def test_records_stay_in_the_database_and_are_exported_on_demand(tmp_path: Path) -> None:
    out = _cli("tournament", "run", str(_cup(tmp_path)), "--quiet", cwd=tmp_path)
    results = tmp_path / "results" / "records-cup"
    db = results / "tournament.sqlite3"
    # No file per game: the folder has the standings, report and ratings; the output
    # says where the records are and the command that writes them.
    assert not (results / "records").exists()
    assert {"standings.json", "standings.csv", "ratings.svg", "report.md"} <= {
        p.name for p in results.iterdir()}
    assert f"chinchon tournament records {db.relative_to(tmp_path)} --id " in out, out
    store = open_store(str(db))
    try:
        ((tid, *_),) = [(r.id,) for r in store.tournaments()]
        stored = {gid: json.loads(text) for gid, _, text in store.record_texts(tid, -1, 1000)}
    finally:
        store.close()
    assert len(stored) == GAMES

    said = _cli("tournament", "records", str(db), "--out", str(tmp_path / "packed"), cwd=tmp_path)
    assert f"{GAMES} records of {tid}" in said, said
    said = _cli("tournament", "records", str(db), "--id", tid, "--out", str(tmp_path / "plain"),
                "--format", "json", cwd=tmp_path)
    assert f"{GAMES} records of {tid}" in said, said
    packed = sorted((tmp_path / "packed").iterdir())
    plain = sorted((tmp_path / "plain").iterdir())
    assert [p.name for p in packed] == sorted(f"{g}.json.gz" for g in stored)
    assert [p.name for p in plain] == sorted(f"{g}.json" for g in stored)
    for z, j in zip(packed, plain, strict=True):
        gid = j.name.removesuffix(".json")
        assert load_record(z) == load_record(j) == stored[gid]
        assert json.loads(j.read_text(encoding="utf-8")) == stored[gid]  # plain JSON, to read
        assert stored[gid]["result"]["termination"] in PLAYED
        check_record(stored[gid])
    # The compact files are at least 4x smaller than the JSON ones (about 10x).
    ratio = sum(p.stat().st_size for p in plain) / sum(p.stat().st_size for p in packed)
    assert ratio >= 4, ratio
    # `chinchon replay` checks either, and says the same of both.
    for z, j in zip(packed[:2], plain[:2], strict=True):
        a, b = _cli("replay", str(z), cwd=tmp_path), _cli("replay", str(j), cwd=tmp_path)
        assert a.replace(str(z), "F") == b.replace(str(j), "F")

    # Exported again over the same folder: the same files, not more.
    _cli("tournament", "records", str(db), "--out", str(tmp_path / "packed"), cwd=tmp_path)
    assert sorted((tmp_path / "packed").iterdir()) == packed
    # Bad requests: a clear error, nothing written.
    assert "no tournament t-nope" in _cli("tournament", "records", str(db), "--id", "t-nope",
                                          "--out", str(tmp_path / "x"), cwd=tmp_path, code=1)
    assert "no database at" in _cli("tournament", "records", str(tmp_path / "none.sqlite3"),
                                    "--out", str(tmp_path / "x"), cwd=tmp_path, code=2)
    assert not (tmp_path / "x").exists()


def test_replay_view_serves_a_gzipped_record(tmp_path: Path) -> None:
    """`chinchon replay FILE.json.gz --view` serves the record it read."""
    rec = tmp_path / "game.json"
    _cli("demo", "--record", str(rec), cwd=tmp_path)
    doc = load_record(rec)
    packed = tmp_path / "game.json.gz"
    write_record(packed, doc)
    out = tmp_path / "view.out"
    with open(out, "wb") as fh:
        proc = subprocess.Popen([*CLI, "replay", str(packed), "--view", "--no-browser"],
                                stdout=fh, stderr=subprocess.DEVNULL)
    try:
        until_sync(lambda: out.read_text().strip(), "replay --view printed no URL", 30)
        url = json.loads(out.read_text().splitlines()[0])["url"]
        base, _, gid = url.rpartition("/r/")
        with urllib.request.urlopen(f"{base}/api/g/{gid}/record.json", timeout=10) as r:
            assert json.loads(r.read()) == doc
    finally:
        proc.terminate()
        assert proc.wait(15) == 0
