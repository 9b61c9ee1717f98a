"""Record files: `chinchon replay` reads a record as JSON or gzipped JSON, and says
clearly what is wrong with a file that is neither."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

from chinchon.engine import GreedyBot, RandomBot, RuleSet, play_game
from chinchon_referee.cli.record_files import load_record, write_record

from tests.support.tournament import CLI


def test_a_gzipped_record_replays_like_its_json(tmp_path: Path) -> None:
    _, doc = play_game(RuleSet(), [GreedyBot(), RandomBot(3)], "files", "d", ["g", "r"])
    plain, packed = tmp_path / "g.json", tmp_path / "g.json.gz"
    write_record(plain, doc)
    write_record(packed, doc)
    assert load_record(plain) == load_record(packed) == doc
    assert packed.stat().st_size * 4 <= plain.stat().st_size
    outs = [subprocess.run([*CLI, "replay", str(p)], capture_output=True, text=True, timeout=60)
            for p in (plain, packed)]
    assert [o.returncode for o in outs] == [0, 0], outs[1].stderr
    assert outs[0].stdout.replace(str(plain), "F") == outs[1].stdout.replace(str(packed), "F")


def test_a_damaged_gzip_record_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'{"format": "chinchon.v1.GameRecord"')[:-6])
    out = subprocess.run([*CLI, "replay", str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "not a readable gzip file" in out.stderr + out.stdout
