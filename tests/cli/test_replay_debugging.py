"""``chinchon replay`` tells a bot's author everything a record holds: ``-v`` lists every
refused answer, timeout and default at its step (the web replay's numbering), ``--step
N`` prints what the bot received there (the web view's ``/api/g/G/step/N``, the same
JSON), and ``--view`` serves the practice's stderr files kept beside the record."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from chinchon.engine.steps import incident_step, index_of_step, step_of_index
from chinchon_referee.web.replay import steps
from chinchon_referee.web.step_view import step_request
from hypothesis import given
from hypothesis import strategies as st

from tests.support.helpers import RAW_BOT, ROOT, sdk_bot
from tests.support.tournament import CLI


def _practice(out: Path, *bot: str) -> Path:
    proc = subprocess.run([*CLI, "practice", "--games", "1", "--seed", "dbg", "--out", str(out),
                           "--", *bot], capture_output=True, text=True, timeout=240)
    assert (out / "practice-1.json").is_file(), proc.stdout + proc.stderr
    return out / "practice-1.json"


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real practice game of a bot that tries an illegal action on one first attempt
    in ten: a record with refused answers."""
    rec = _practice(tmp_path_factory.mktemp("refused") / "out", sys.executable, RAW_BOT,
                    "--mode", "varied", "--varied-seed", "3")
    assert json.loads(rec.read_text())["incidents"]
    return rec


def _replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "replay", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, COLUMNS="400"))


def test_verbose_lists_every_refused_answer_at_the_web_replays_step(refused: Path) -> None:
    record = json.loads(refused.read_text())
    notes = record["incidents"]
    plain = _replay(str(refused))
    assert plain.returncode == 0, plain.stderr
    assert f"{len(notes)} answers refused" in plain.stdout and "-v lists each" in plain.stdout
    proc = _replay(str(refused), "-v")
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stdout.splitlines() if "refused (illegal)" in x]
    assert len(lines) == len(notes), proc.stdout
    web = steps(record, None)["steps"]
    for line, note in zip(lines, sorted(notes, key=incident_step), strict=True):
        m = re.search(r"step (\d+): game practice-1, hand (\d+), turn (\d+) \((\w+)\), "
                      r"request (\d+), attempt (\d+)", line)
        assert m is not None, line
        n = int(m[1])
        # The same step in the web replay, in /api/g/G/step/N, and the bot's request.
        assert note in web[n - 1]["incidents"]
        sent = step_request(record, n, None)
        assert note in sent["incidents"]
        assert int(m[2]) == sent["observation"]["handNumber"]
        assert int(m[3]) == sent["observation"].get("turn", 0)
        assert m[5] == note["requestId"] and int(m[6]) == note["attempt"]
        assert note["sent"] in line and note["message"] in line


def test_step_prints_what_the_bot_received_as_the_web_view_does(refused: Path) -> None:
    record = json.loads(refused.read_text())
    n = incident_step(record["incidents"][0])
    seat = record["incidents"][0]["seat"]
    proc = _replay(str(refused), "--step", str(n), "--seat", str(seat))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(json.dumps(step_request(record, n, seat)))
    assert f"step {n}: game practice-1" in proc.stderr
    assert f"request {record['incidents'][0]['requestId']}" in proc.stderr
    # The other seat did not decide it: refused, naming that seat's nearest decisions.
    other = _replay(str(refused), "--step", str(n), "--seat", str(1 - seat))
    assert other.returncode == 2 and not other.stdout
    near = re.search(r"seat \d's decisions: nearest: step (\d+)(?: and step (\d+))?",
                     other.stderr)
    assert near is not None, other.stderr
    for s in filter(None, near.groups()):
        assert record["actions"][int(s) - 1]["move"]["seat"] == 1 - seat
    deal = _replay(str(refused), "--step", "1")
    assert deal.returncode == 2 and "chance" in deal.stderr and "nearest: step" in deal.stderr
    for bad in (["--step", "0"], ["--step", "999999"], ["--seat", "0"]):
        assert _replay(str(refused), *bad).returncode == 2, bad


@given(st.integers(min_value=0, max_value=10**6))
def test_a_step_number_and_its_record_index_convert_both_ways(index: int) -> None:
    assert index_of_step(step_of_index(index)) == index
    assert step_of_index(index) == index + 1  # step 1 is the first deal, index 0
    assert incident_step({"step": index}) == step_of_index(index)


def test_the_local_viewer_serves_the_practices_stderr_files(tmp_path: Path) -> None:
    # A bot that writes during its game (the SDK's own line comes after the game's end,
    # and so is the bot's, not the game's).
    rec = _practice(tmp_path / "out", *sdk_bot(str(ROOT / "tests" / "bots" / "chatty_bot.py")))
    game_log = (tmp_path / "out" / "practice-1.stderr.log").read_bytes()
    whole = (tmp_path / "out" / "bot-stderr.log").read_bytes()
    assert game_log and whole
    seat = next(s["seat"] for s in json.loads(rec.read_text())["seats"]
                if not s["name"].startswith("house:"))
    proc = subprocess.Popen([*CLI, "replay", str(rec), "--view", "--no-browser",
                             "--http", "127.0.0.1:0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base = json.loads(proc.stdout.readline())["url"].rsplit("/r/", 1)[0]
        with urllib.request.urlopen(f"{base}/api/g/practice-1/replay", timeout=60) as r:
            links = json.load(r)["stderr"]
        assert [link["seat"] for link in links] == [seat]
        with urllib.request.urlopen(base + links[0]["url"], timeout=60) as r:
            assert r.read() == game_log
        with urllib.request.urlopen(base + links[0]["bot_url"], timeout=60) as r:
            assert r.read() == whole
        with pytest.raises(urllib.error.HTTPError):  # the house bot's seat: no file
            urllib.request.urlopen(f"{base}/api/g/practice-1/stderr/{1 - seat}", timeout=60)
    finally:
        proc.terminate()
        proc.wait(30)
