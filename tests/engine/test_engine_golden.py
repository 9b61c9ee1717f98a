"""Golden game records: replay, regenerate byte for byte, parse strictly with protobuf,
and refuse corrupted copies with a clear message (engine and CLI)."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chinchon.engine import RecordError, replay
from chinchon.engine.record import hand_result_to_json
from chinchon.v1 import record_pb2
from google.protobuf import json_format

GOLDEN = Path(__file__).resolve().parent / "golden"
ROOT = GOLDEN.parents[1]


def _load_maker() -> Any:
    spec = importlib.util.spec_from_file_location("make_golden", GOLDEN / "make_golden.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_golden", mod)  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


MAKER = _load_maker()
NAMES = [g.name for g in MAKER.GAMES]


def text_of(name: str) -> str:
    return (GOLDEN / f"{name}.json").read_text(encoding="utf-8")


def record_of(name: str) -> dict[str, Any]:
    return json.loads(text_of(name))


def test_golden_files_are_the_games_of_make_golden() -> None:
    assert len(NAMES) >= 3
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_golden_record_replays_to_its_stored_results(name: str) -> None:
    record = record_of(name)
    rep = replay(record)
    got = [hand_result_to_json(h) for h in rep.state.results]
    assert got == record["hands"]  # every field: hands, table, unmatched, points...
    assert rep.state.result is not None
    assert list(rep.state.result.winners) == record["result"]["winners"]
    assert list(rep.state.scores) == record["result"]["totals"]
    assert rep.state.result.hands_played == record["result"]["handsPlayed"]
    assert rep.actions == len(record["actions"])
    assert rep.names == [s["name"] for s in record["seats"]]


@pytest.mark.parametrize("name", NAMES)
def test_golden_game_played_again_is_byte_identical(name: str) -> None:
    (game,) = [g for g in MAKER.GAMES if g.name == name]
    assert MAKER.render(game) == text_of(name), (
        f"{name}: the engine now plays this seeded game differently; if intended, run "
        "python tests/engine/golden/make_golden.py and explain the change"
    )


@pytest.mark.parametrize("name", NAMES)
def test_golden_record_parses_strictly_with_protobuf(name: str) -> None:
    text = text_of(name)
    msg = json_format.Parse(text, record_pb2.GameRecord())  # no ignore_unknown_fields
    assert msg.format == "chinchon.v1.GameRecord"
    assert len(msg.actions) == len(json.loads(text)["actions"])
    assert msg.actions[0].WhichOneof("kind") == "deal"
    # What protobuf writes back (defaults left out) is read by the engine the same way.
    again = json_format.MessageToDict(msg)
    rep = replay(again)
    orig = replay(json.loads(text))
    assert rep.state.results == orig.state.results
    assert rep.state.result == orig.state.result


def test_golden_games_cover_what_they_claim() -> None:
    def kinds(name: str) -> set[str]:
        out = set()
        for a in record_of(name)["actions"]:
            k = next(iter(a))
            out.add(next(iter(a["move"]["action"])) if k == "move" else k)
        return out

    assert "reshuffle" in kinds("deck48")
    assert {"layDown", "layOffBest"} <= kinds("jokers2_3players")
    assert "layOff" in kinds("retake_close2")
    bonuses = {h["bonus"] for n in NAMES for h in record_of(n)["hands"]}
    assert "BONUS_MINUS_10" in bonuses
    rules = record_of("jokers2_3players")["rules"]
    assert rules["jokers"] == 2 and rules["players"] == 3
    assert record_of("deck48")["rules"]["deck"] == 48
    r = record_of("retake_close2")["rules"]
    assert r["retakeDiscard"] is True and r["closeMaxUnmatched"] == 2

    # The retake game does retake: a discard of the card just taken from the pile.
    record = record_of("retake_close2")
    retakes = []

    def on_step(state, i):  # type: ignore[no-untyped-def]
        ev = state.hand_events()
        if (
            len(ev) >= 2 and ev[-1].kind == "discard" and ev[-2].kind == "draw_discard"
            and ev[-1].card == ev[-2].card and ev[-1].seat == ev[-2].seat
        ):
            retakes.append(i)

    replay(record, on_step)
    assert retakes


# -- corrupted records ------------------------------------------------------------------------


def _move_indexes(record: dict[str, Any], kind: str) -> list[int]:
    return [
        i for i, a in enumerate(record["actions"])
        if "move" in a and kind in a["move"]["action"]
    ]


def _state_before(record: dict[str, Any], index: int) -> Any:
    """The state in which action number ``index`` (0-based) is applied."""
    seen: dict[str, Any] = {}

    def on_step(state, k):  # type: ignore[no-untyped-def]
        if k == index - 1:
            seen["state"] = state

    replay(record, on_step)
    return seen["state"]


def corrupt_illegal_discard(record: dict[str, Any]) -> int:
    """Discard the very card just taken from the discard pile (retake_discard is off)."""
    i = next(
        k for k in _move_indexes(record, "drawDiscard")
        if "discard" in record["actions"][k + 1]["move"]["action"]
    )
    taken = _state_before(record, i + 1).taken
    assert taken is not None
    record["actions"][i + 1]["move"]["action"] = {"discard": {"card": str(taken)}}
    return i + 2  # 1-based number of the corrupted action


def corrupt_card_not_in_hand(record: dict[str, Any]) -> int:
    """Discard a card of the deck that the seat does not hold."""
    i = _move_indexes(record, "discard")[3]
    state = _state_before(record, i)
    held = {str(c) for c in state.hand(state.to_act)}
    card = next(c for c in record["actions"][0]["deal"]["deck"] if c not in held)
    record["actions"][i]["move"]["action"] = {"discard": {"card": card}}
    return i + 1


def corrupt_bad_deal(record: dict[str, Any]) -> int:
    deck = record["actions"][0]["deal"]["deck"]
    deck[1] = deck[0]  # one card twice, another missing
    return 1


def corrupt_second_deal_starter(record: dict[str, Any]) -> int:
    deals = [i for i, a in enumerate(record["actions"]) if "deal" in a]
    i = deals[1]
    n = len(record["seats"])
    deal = record["actions"][i]["deal"]
    deal["starter"] = (deal.get("starter", 0) + 1) % n
    return i + 1


def corrupt_wrong_seat(record: dict[str, Any]) -> int:
    i = _move_indexes(record, "drawStock")[0]
    mv = record["actions"][i]["move"]
    mv["seat"] = (mv.get("seat", 0) + 1) % len(record["seats"])
    return i + 1


@pytest.mark.parametrize(
    ("corrupt", "violation"),
    [
        (corrupt_illegal_discard, "RETAKE_DISCARD"),
        (corrupt_card_not_in_hand, "CARD_NOT_IN_HAND"),
        (corrupt_bad_deal, "BAD_DEAL"),
        (corrupt_second_deal_starter, "BAD_DEAL"),
        (corrupt_wrong_seat, "NOT_YOUR_TURN"),
    ],
)
def test_corrupted_record_names_the_action(corrupt, violation: str) -> None:  # type: ignore[no-untyped-def]
    record = record_of("default_greedy_vs_random")
    number = corrupt(record)
    with pytest.raises(RecordError) as e:
        replay(record)
    msg = str(e.value)
    assert msg.startswith(f"action {number} ("), msg
    assert msg.endswith(f"[{violation}]"), msg


def test_wrong_recorded_total_is_refused() -> None:
    record = record_of("default_greedy_vs_random")
    record["hands"][1]["totals"][0] += 1
    with pytest.raises(RecordError) as e:
        replay(record)
    assert str(e.value).startswith("hand 2: recorded totals")


def test_wrong_recorded_winner_is_refused() -> None:
    record = record_of("default_greedy_vs_random")
    record["result"]["winners"] = [1 - record["result"]["winners"][0]]
    with pytest.raises(RecordError) as e:
        replay(record)
    assert "recorded winners" in str(e.value)


def test_truncated_record_is_refused() -> None:
    record = record_of("default_greedy_vs_random")
    del record["actions"][-5:]
    with pytest.raises(RecordError):
        replay(record)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r.__setitem__("format", "something.else"),
        lambda r: r.__setitem__("rules", {"players": 2, "deck": 52}),
        lambda r: r.__setitem__("seats", r["seats"][:1]),
        lambda r: r.__setitem__("seats", 5),
        lambda r: r.__setitem__("actions", {}),
        lambda r: r["actions"].__setitem__(1, {"jump": {}}),
        lambda r: r["actions"].__setitem__(1, {"move": {"seat": 0, "action": {"fly": {}}}}),
        lambda r: r["actions"].__setitem__(1, {"move": 3}),
        lambda r: r["actions"][0]["deal"].__setitem__("deck", "1O 2O"),
        lambda r: r["actions"][0]["deal"].__setitem__("starter", "x"),
        lambda r: r["actions"][0]["deal"]["deck"].__setitem__(0, "7X"),
        lambda r: r.__setitem__("hands", [1, 2]),
        lambda r: r.__setitem__("result", []),
        lambda r: r["result"].__setitem__("termination", "TERMINATION_BORED"),
    ],
)
def test_malformed_record_raises_record_error_only(mutate) -> None:  # type: ignore[no-untyped-def]
    record = record_of("default_greedy_vs_random")
    mutate(record)
    with pytest.raises(RecordError) as e:
        replay(record)
    assert str(e.value)


# -- the CLI ----------------------------------------------------------------------------------


def run_cli(*paths: Path) -> list[subprocess.CompletedProcess[str]]:
    """``chinchon replay PATH`` for each path, run side by side (the CLI starts slowly)."""
    procs = [
        (
            p,
            subprocess.Popen(
                [sys.executable, "-m", "chinchon_referee.cli", "replay", str(p)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            ),
        )
        for p in paths
    ]
    out = []
    for p, proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        out.append(subprocess.CompletedProcess([str(p)], proc.returncode, stdout, stderr))
    return out


def test_cli_replay_accepts_every_golden_file() -> None:
    for cp in run_cli(*(GOLDEN / f"{name}.json" for name in NAMES)):
        assert cp.returncode == 0, cp.stderr
        assert "Traceback" not in cp.stderr
        assert "all legal" in " ".join(cp.stdout.split())


def test_cli_replay_refuses_bad_files_without_traceback(tmp_path: Path) -> None:
    cases: dict[str, str] = {}
    for corrupt in (corrupt_illegal_discard, corrupt_card_not_in_hand, corrupt_bad_deal):
        record = record_of("default_greedy_vs_random")
        number = corrupt(record)
        cases[f"{corrupt.__name__}.json"] = json.dumps(record)
        cases[f"{corrupt.__name__}.expect"] = f"action {number}"
    record = record_of("default_greedy_vs_random")
    record["hands"][0]["totals"][1] += 3
    cases["wrong_total.json"] = json.dumps(record)
    cases["wrong_total.expect"] = "hand 1: recorded totals"
    bad_shape = copy.deepcopy(record_of("default_greedy_vs_random"))
    bad_shape["seats"] = "two"
    cases["bad_shape.json"] = json.dumps(bad_shape)
    cases["not_json.json"] = "{ this is not json"
    paths = []
    for fname, text in cases.items():
        if fname.endswith(".json"):
            path = tmp_path / fname
            path.write_text(text, encoding="utf-8")
            paths.append(path)
    paths.append(tmp_path / "does_not_exist.json")
    for cp in run_cli(*paths):
        fname = Path(cp.args[0]).name
        assert cp.returncode != 0, fname
        assert "Traceback" not in cp.stderr and "Traceback" not in cp.stdout, cp.stderr
        assert "error" in cp.stderr, (fname, cp.stderr)
        expect = cases.get(fname.replace(".json", ".expect"))
        if expect:
            assert expect in " ".join(cp.stderr.split()), (fname, cp.stderr)
