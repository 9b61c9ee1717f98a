"""The `chinchon` command as a user runs it (real subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "chinchon_referee.cli"]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def test_demo_plays_a_game_hand_by_hand_and_its_record_replays(tmp_path: Path) -> None:
    rec = tmp_path / "demo.json"
    out = run("demo", "--seed", "s1", "--record", str(rec))
    assert out.returncode == 0, out.stderr
    assert "hand 1:" in out.stdout and "won" in out.stdout
    check = run("replay", str(rec))
    assert check.returncode == 0, check.stderr
    assert "winner:" in check.stdout
    data = json.loads(rec.read_text())
    assert data["format"] == "chinchon.v1.GameRecord"


def test_rules_prints_defaults_and_checks_files(tmp_path: Path) -> None:
    out = run("rules")
    assert out.returncode == 0
    for name in ("close_max_unmatched", "figure_points", "score_limit", "jokers"):
        assert name in out.stdout
    good = tmp_path / "good.toml"
    good.write_text("[rules]\njokers = 2\ndeck = 48\n")
    ok = run("rules", "--check", str(good), "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["figure_points"] == "10-11-12"
    assert "valid rule set" in ok.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("jokers = 3\n")
    res = run("rules", "--check", str(bad))
    assert res.returncode == 1
    assert "jokers" in res.stderr and "Traceback" not in res.stderr
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("jokerz = 1\n")
    res = run("rules", "--check", str(unknown))
    assert res.returncode == 1 and "jokerz: unknown option" in res.stderr
    missing = run("rules", "--check", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2


def test_rules_shows_and_checks_the_house_rules(tmp_path: Path) -> None:
    house = tmp_path / "house.toml"
    house.write_text('[rules]\nwild_cards = ["1o"]\njokers_per_meld = 1\nclose_first_round = false\n')
    shown = run("rules", str(house))
    assert shown.returncode == 0, shown.stderr
    for line in ("wild_cards", "jokers_per_meld", "close_first_round"):
        assert line in shown.stdout
    assert "1O" in shown.stdout and "none" in shown.stdout  # the value and the default
    as_json = json.loads(run("rules", str(house), "--json").stdout)
    assert as_json["wild_cards"] == ["1O"] and as_json["jokers_per_meld"] == 1
    assert as_json["close_first_round"] is False
    bad = tmp_path / "bad.toml"
    bad.write_text('wild_cards = ["JK1"]\n')
    res = run("rules", "--check", str(bad))
    assert res.returncode == 1 and "wild_cards: JK1 is a joker already" in res.stderr


def test_practice_passes_a_clean_bot_and_fails_a_cheating_one(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    ok = run("practice", "--games", "2", "--json", str(report), "--out", str(tmp_path / "ok"), "--",
             sys.executable, "-m", "chinchon.sdk", "--bot", "greedy")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS" in ok.stdout
    data = json.loads(report.read_text())
    assert data["clean"] and len(data["games"]) == 2 and not data["incidents"]
    bad = run("practice", "--games", "1", "--per-move", "0.5", "--out", str(tmp_path / "bad"),
              "--", sys.executable,
              str(ROOT / "tests" / "bots" / "raw_bot.py"), "--mode", "illegal")
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout
    assert "is not in your hand" in bad.stdout or "time to draw" in bad.stdout


def test_practice_reports_a_bot_that_never_connects(tmp_path: Path) -> None:
    res = run("practice", "--games", "1", "--connect-timeout", "2", "--out", str(tmp_path / "out"),
              "--",  # a bot that never connects: it only sleeps (the behaviour under test)
              sys.executable, "-c", "import time; time.sleep(30)")
    assert res.returncode == 1
    assert "did not connect" in res.stdout
