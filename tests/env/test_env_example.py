"""The training example as its docs run it: a short training run improves the sample
policy over the untrained one on fixed seeds, and the trained policy plays real games on
a real referee through the SDK unchanged (``chinchon practice``, the bot a real
``python -m chinchon.sdk`` process)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots" / "python"


def test_a_short_training_run_beats_the_untrained_policy(tmp_path: Path) -> None:
    out = tmp_path / "policy.json"
    res = subprocess.run(
        [sys.executable, str(SAMPLES / "train_env.py"), "--generations", "2", "--population", "6",
         "--games", "3", "--eval-games", "20", "--out", str(out)],
        capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    rates = [float(x) for x in re.findall(r"win rate (\d\.\d\d) over 20 games", res.stdout)]
    assert len(rates) == 2, res.stdout
    before, after = rates
    assert 0.2 <= before <= 0.8, res.stdout  # untrained: random over the mask
    assert after >= before + 0.25, res.stdout
    saved = json.loads(out.read_text())
    assert len(saved["weights"]) == len(saved["features"]) == 12


def test_the_trained_policy_plays_on_a_referee_through_the_sdk(tmp_path: Path) -> None:
    policy = SAMPLES / "env_policy.json"
    env = dict(os.environ, COLUMNS="200", CHINCHON_POLICY=str(policy))
    res = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.cli", "practice", "--games", "2", "--seed", "env",
         "--json", "report.json", "--", sys.executable, "-m", "chinchon.sdk",
         "--bot", f"{SAMPLES / 'env_policy_bot.py'}:Policy"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["clean"], report
    assert not report["incidents"], report
    assert len(report["games"]) == 2 and report["bot_exit"] == 0, report
