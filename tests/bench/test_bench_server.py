"""The referee benchmark runs end to end (``bench/bench_server.py --smoke``).

Not a speed test: the windows are a second or two and no figure is compared with
anything. It checks that every part of the harness still works against the current
library (echo, the floor of the referee's messages, referee load with its latency
wrapper, one game, idle memory), so that a change in the referee cannot silently break
the benchmark that measures it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _smoke(out: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_server.py"), "--smoke", "--json", str(out),
         *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc, json.loads(out.read_text())


def test_the_server_benchmark_runs_every_part(tmp_path: Path) -> None:
    proc, got = _smoke(tmp_path / "bench.json")
    assert got["write_gate"] == "on"
    assert got["echo"]["rate"] > 0
    # The floor (bench/pair_floor.py): the referee's messages with no game, its own bots.
    assert got["floor"]["decisions"] > 0 and got["floor"]["bot_cpu"] > 0
    assert "referee / floor, by round" in proc.stdout
    for key in ("many", "one"):
        run = got["referee"][key]
        assert run["decisions"] > 0, key
        # Every game the harness started ended normally: none was aborted by an error
        # in the referee or in the latency wrapper.
        assert run["terminations"] and set(run["terminations"]) <= {
            "TERMINATION_NORMAL", "TERMINATION_CHINCHON"}, (key, run["terminations"])
        p50, p99, n = run["referee_ms_p50_p99"]
        assert n > 0 and 0 < p50 <= p99 < 5_000, (key, p50, p99, n)
    assert got["memory"]["connected"] == 40
    assert got["memory"]["per_conn_kib"] > 0
    assert "referee / echo ratio" in proc.stdout
    assert got["referee"]["many"]["write_gate"] is True  # the referee as `chinchon serve` runs


def test_the_baseline_without_the_write_gate_runs(tmp_path: Path) -> None:
    proc, got = _smoke(tmp_path / "bench.json", "--only", "referee", "--write-gate", "off")
    assert "referee write gate off" in proc.stdout
    many = got["referee"]["many"]
    assert many["write_gate"] is False  # the referee process really ran without it
    assert many["decisions"] > 0
    assert set(many["terminations"]) <= {"TERMINATION_NORMAL", "TERMINATION_CHINCHON"}


def test_the_fast_bots_read_requests_as_protobuf_does() -> None:
    """The benchmark bots read an action request's id and first legal action straight
    off its bytes: on every request of a few real games (full and lean, with the
    confirmation of the previous answer appended, ids past one byte) they read what a
    real parse reads, and nothing out of any other message."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from harness.fastbots import action_request_reader
    finally:
        sys.path.remove(str(ROOT / "bench"))
    from chinchon.engine import RuleSet, ShuffleSource, apply, legal_actions, new_game, observation
    from chinchon.v1 import referee_pb2 as pb
    from chinchon.wire import RequestEncoder

    read = action_request_reader()
    checked = 0
    for gi, rid0 in enumerate((1, 100, 20_000, 3_000_000_000)):
        rules = RuleSet(players=2)
        st, src = new_game(rules), ShuffleSource("bench-test", str(gi))
        enc = RequestEncoder(f"game-{gi}", rules)
        ack, rid, stream = b"", rid0, object()
        while not st.is_over:
            if st.is_chance:
                st = apply(st, src.chance(st))
                continue
            legal = legal_actions(st)
            view = observation(st, st.to_act, ["p0", "p1"])
            obs, delta = enc.lean(view, stream) if gi % 2 else (enc.observation(view), b"")
            raw = enc.request(rid, obs, enc.legal(legal), 30.0, 60.0, gi % 2, ack, delta)
            want = pb.PlayResponse.FromString(raw).action_request
            assert read(raw) == (want.request_id, want.legal_actions[0].SerializeToString())
            ack = enc.accepted(rid, legal[0], 0.002)
            st = apply(st, legal[0], seat=st.to_act)
            rid += 1
            checked += 1
    assert checked > 1000
    for other in (pb.PlayResponse(welcome=pb.Welcome(bot_name="p0")),
                  pb.PlayResponse(game_ended=pb.GameEnded(game_id="g")), pb.PlayResponse()):
        assert read(other.SerializeToString()) is None
