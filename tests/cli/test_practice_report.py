"""``chinchon practice`` names the bot by its name (its manifest's, or its program's),
puts identical refusals on one row with their count and steps, and says how strict
its verdict is (``--max-refusals N``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chinchon_referee.cli.practice import UNNAMED, bot_name
from chinchon_referee.launch.confine import Confinement

from tests.support.helpers import RAW_BOT, ROOT
from tests.support.tournament import CLI


def test_the_bot_is_named_by_its_manifest_or_its_program(tmp_path: Path) -> None:
    node = ROOT / "sample_bots" / "node"
    assert bot_name(["node", str(node / "bot.js")], None) == "node-greedy"
    python = ROOT / "sample_bots" / "python"
    assert bot_name([sys.executable, str(python / "greedy_bot.py")], None) == "python-greedy"
    # A file the manifest beside it does not run: its own name.
    assert bot_name([sys.executable, str(python / "random_bot.py")], None) == "random_bot"
    assert bot_name(["python3", "-m", "chinchon.sdk", "--bot", "greedy"], str(python)) \
        == "python-greedy"
    odd = tmp_path / "my bot.v2.py"
    odd.write_text("", encoding="utf-8")
    assert bot_name([sys.executable, str(odd)], None) == "my-bot-v2"
    assert bot_name(["python3", "-m", "chinchon.sdk"], None) == UNNAMED


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, object]]:
    """One practice game of a bot that answers every request with an illegal action
    (the same one again on each retry) until it forfeits: the report's text and JSON."""
    out = tmp_path_factory.mktemp("varied")
    proc = subprocess.run(
        [*CLI, "practice", "--games", "1", "--seed", "dbg", "--out", str(out / "run"),
         "--json", str(out / "r.json"), "--", sys.executable, RAW_BOT, "--mode", "illegal"],
        capture_output=True, text=True, timeout=240, env=dict(os.environ, COLUMNS="200"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout, json.loads((out / "r.json").read_text())


def test_the_report_names_the_bot_and_says_how_strict_it_was(
        varied: tuple[str, dict[str, object]]) -> None:
    text, report = varied
    assert report["bot"] == "raw_bot" and "practice: raw_bot vs house:greedy" in text
    assert "candidate" not in text
    refusals = report["refusals"]
    assert isinstance(refusals, int) and refusals > 0 and report["max_refusals"] == 0
    assert f"strictness: any refused answer fails (--max-refusals 0); {refusals} refused" in text
    assert "FAIL" in text


def test_identical_refusals_share_a_row_with_their_count_and_steps(
        varied: tuple[str, dict[str, object]]) -> None:
    text, report = varied
    incidents = report["incidents"]
    assert isinstance(incidents, list)
    details = [f"{i['violation']}: {i['message']}" for i in incidents if i["kind"] == "illegal"]
    rows = [line for line in text.splitlines() if line.startswith("│ illegal")]
    assert len(rows) == len(set(details)) < len(details)  # some were alike: grouped
    counts = [int(line.split("│")[3].strip().rstrip("×")) for line in rows]
    assert sum(counts) == len(details)
    # Each row's steps are the record's (the web replay's numbering): digits, not "-".
    assert all(line.split("│")[4].strip()[0].isdigit() for line in rows), rows


def test_bots_check_passes_refusals_within_max_refusals_and_says_so(
        tmp_path: Path, confinement: Confinement) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "raw_bot.py").write_bytes(Path(RAW_BOT).read_bytes())
    (sub / "bot.toml").write_text(
        'name = "sloppy"\nruntime = "python3"\n'
        'run = ["{python}", "raw_bot.py", "--mode", "varied", "--varied-seed", "3"]\n',
        encoding="utf-8")

    def check(out: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "bots", "check", str(sub), "--out", str(tmp_path / out),
                               "--games", "1", "--seed", "dbg", *extra],
                              capture_output=True, text=True, timeout=240, cwd=tmp_path)

    strict = check("strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "any refused answer fails (--max-refusals 0)" in strict.stdout
    lenient = check("lenient", "--max-refusals", "100")
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    said = " ".join(lenient.stdout.split())
    assert "more than 100 refused answer(s) in all fail (--max-refusals 100)" in said
    assert "PASS: every game played" in said and "within --max-refusals 100" in said
    assert json.loads((tmp_path / "lenient" / "bot.check.json").read_text())["passed"]
    bad = check("bad", "--max-refusals", "-1")
    assert bad.returncode == 2 and "--max-refusals" in bad.stdout
