"""Practice games: the ``practice`` hello on a real server (port 0, real bot processes)
and ``chinchon practice`` run as a user runs it (a real subprocess).

The bots are ``tests/bots/raw_bot.py`` processes: they print every message received
as one JSON line, parsed back here into ``PlayResponse`` messages.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.engine import (
    GameState,
    RuleSet,
    action_from_json,
    legal_actions,
    new_game,
    observation,
    replay,
)
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import rules_to_wire, seconds_of
from chinchon_referee.referee.house import make_house_bot
from chinchon_referee.service.server import RunningServer
from google.protobuf import json_format

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import RAW_BOT, BotProc, bot_token, printed, sdk_bot, stop
from tests.support.inproc import raw
from tests.support.waits import until

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "chinchon_referee.cli"]
PLAYED = ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")


async def _waiting_for_partner(server: RunningServer, *names: str) -> None:
    """Wait until the bots ``names`` wait in the referee's practice room for a partner."""

    def waiting() -> set[str]:
        return {conn.bot for pool in server.referee.practice_room.waiting.values()
                for conn, _ in pool}

    await until(lambda: set(names) <= waiting(), f"{names} waiting for a partner",
                detail=waiting)


def _received(proc: BotProc) -> list[pb.PlayResponse]:
    return [json_format.Parse(line, pb.PlayResponse()) for line in proc.out if line.strip()]


def _any_bot(games: int, rules: dict[str, Any], *clock: str) -> list[str]:
    """A raw bot process asking for ``games`` practice games against ``any`` other bot,
    with ``rules`` (and ``--per-move`` / ``--bank`` options, if given)."""
    return raw("first", "--practice", "any", "--games", str(games),
                   "--rules", json.dumps(rules), *clock)


def _kinds(msgs: list[pb.PlayResponse], kind: str) -> list[Any]:
    return [getattr(m, kind) for m in msgs if m.WhichOneof("kind") == kind]


async def _finish(proc: BotProc, timeout: float = 90) -> list[pb.PlayResponse]:
    """Wait for a practice bot to end (the referee ends the stream after the last game);
    what it received."""
    try:
        rc = await proc.wait(timeout)
    except TimeoutError:
        await proc.kill()
        raise AssertionError(f"the bot did not finish in {timeout:g} s; stderr: "
                             + "".join(proc.err)) from None
    assert rc == 0, "".join(proc.err)
    return _received(proc)


def _clean_session(msgs: list[pb.PlayResponse], games: int) -> None:
    """A welcome, then ``games`` games each started and ended, nothing refused, no error."""
    assert msgs[0].WhichOneof("kind") == "welcome"
    assert len(_kinds(msgs, "game_started")) == games
    assert len(_kinds(msgs, "game_ended")) == games
    for bad in ("error", "action_rejected", "default_played"):
        assert not _kinds(msgs, bad), f"{bad}: {_kinds(msgs, bad)}"


def _record_dict(ended: pb.GameEnded) -> dict[str, Any]:
    assert ended.HasField("record"), "a practice game_ended carries the whole record"
    record: dict[str, Any] = json_format.MessageToDict(ended.record)
    return record


def _first_deck(record: dict[str, Any]) -> list[str]:
    return list(record["actions"][0]["deal"]["deck"])


def _check_house_moves(record: dict[str, Any], kind: str, house_seed: int) -> int:
    """Replay ``record`` and check that every move of the house seat is the choice of
    house bot ``kind`` (seeded as the referee seeds practice opponent number
    ``house_seed``) in that position: the opponent really was that bot. Returns how many
    house moves were checked."""
    names = [s["name"] for s in record["seats"]]
    house = names.index(f"house:{kind}")
    states: list[GameState] = []
    replay(record, on_step=lambda st, _i: states.append(st))
    bot = make_house_bot(kind, house_seed)
    checked = 0
    for i, step in enumerate(record["actions"]):
        before = states[i - 1] if i else new_game(states[0].rules)
        move = step.get("move")
        if move is None or move.get("seat", 0) != house:
            continue
        want = bot.choose(observation(before, house, names), legal_actions(before))
        assert action_from_json(move["action"]) == want, f"step {i}: not the {kind} bot's move"
        checked += 1
    return checked


# -- against the house bots ------------------------------------------------------------------


@pytest.mark.parametrize("opponent", ["greedy", "strong"])
async def test_practice_against_a_house_bot_plays_that_bot_with_seats_alternating(
    servers: StartServer, bots: SpawnBot, opponent: str,
) -> None:
    server = await servers(["alice"])
    bot = await bots(raw("first", "--practice", opponent, "--games", "2",
                              "--seed", f"seed-{opponent}"), server, "alice")
    msgs = await _finish(bot)
    _clean_session(msgs, 2)
    started = _kinds(msgs, "game_started")
    ended = _kinds(msgs, "game_ended")
    house = f"house:{opponent}"
    assert [list(s.players) for s in started] == [["alice", house], [house, "alice"]]
    assert [s.seat for s in started] == [0, 1]
    assert len({s.game_id for s in started}) == 2
    assert [e.game_id for e in ended] == [s.game_id for s in started]
    assert [e.seat for e in ended] == [0, 1]
    records = [_record_dict(e) for e in ended]
    for k, (e, rec) in enumerate(zip(ended, records, strict=True)):
        assert g.Termination.Name(e.result.termination) in PLAYED
        assert rec["gameId"] == e.game_id
        assert [s["name"] for s in rec["seats"]] == list(started[k].players)
        assert rec["labels"]["practice"] == "1"
        assert _check_house_moves(rec, opponent, k) >= 5
    # Every game its own deal: the first record does not reveal the second game's deck.
    assert _first_deck(records[0]) != _first_deck(records[1])


# -- a named rule set and clock ----------------------------------------------------------------

NAMED_RULES = {"deck": 48, "jokers": 2, "figurePoints": "10-10-10", "closeMaxPoints": 3,
               "scoreLimit": 60}


async def test_practice_with_a_named_rule_set_and_clock_echoes_and_enforces_them(
    servers: StartServer, bots: SpawnBot,
) -> None:
    server = await servers(["alice"])
    bot = await bots(raw("first", "--practice", "random", "--games", "1",
                              "--rules", json.dumps(NAMED_RULES),
                              "--per-move", "0.75", "--bank", "4.5",
                              "--seed", "named"), server, "alice")
    msgs = await _finish(bot)
    _clean_session(msgs, 1)
    want = RuleSet(deck=48, jokers=2, figure_points="10-10-10", close_max_points=3,
                   score_limit=60)
    (started,) = _kinds(msgs, "game_started")
    # Every field of the rule set in force, the named ones included.
    assert started.rules == rules_to_wire(want)
    for f in g.RuleSet.DESCRIPTOR.fields:
        if f.name != "wild_cards":  # (a list: no presence; empty is none)
            assert started.rules.HasField(f.name), f.name
    assert seconds_of(started.time_control.per_move) == pytest.approx(0.75)
    assert seconds_of(started.time_control.bank) == pytest.approx(4.5)
    requests = _kinds(msgs, "action_request")
    assert requests[0].observation.rules == rules_to_wire(want)
    # The clock is in force: the first request has the whole move time and bank.
    assert seconds_of(requests[0].move_time) == pytest.approx(0.75)
    assert seconds_of(requests[0].bank_time) == pytest.approx(4.5)
    assert all(seconds_of(r.move_time) <= 0.75 + 1e-9 for r in requests)
    # The rule set is in force, not only echoed: 48 cards and 2 jokers are dealt.
    (ended,) = _kinds(msgs, "game_ended")
    rec = _record_dict(ended)
    deck = _first_deck(rec)
    assert len(deck) == 50
    assert {"JK1", "JK2", "8O", "9B"} <= set(deck)
    assert replay(rec).state.rules == want


HOUSE_RULES = {"wildCards": ["1O"], "jokersPerMeld": 1, "closeFirstRound": False,
               "jokers": 1, "scoreLimit": 40}


async def test_practice_with_the_house_rules_echoes_and_enforces_them(
    servers: StartServer, bots: SpawnBot,
) -> None:
    """A practice request naming the house rules: echoed in game_started and
    every observation, in force (no close is offered in a first round), and in the
    record, which replays under them."""
    server = await servers(["alice"])
    bot = await bots(raw("first", "--practice", "strong", "--games", "2",
                              "--rules", json.dumps(HOUSE_RULES), "--seed", "house"),
                     server, "alice")
    msgs = await _finish(bot)
    _clean_session(msgs, 2)
    want = RuleSet(wild_cards=("1O",), jokers_per_meld=1, close_first_round=False, jokers=1,
                   score_limit=40)
    for started in _kinds(msgs, "game_started"):
        assert started.rules == rules_to_wire(want)
        assert list(started.rules.wild_cards) == ["1O"] and not started.rules.close_first_round
    requests = _kinds(msgs, "action_request")
    assert all(r.observation.rules == rules_to_wire(want) for r in requests)
    players = 2
    for r in requests:
        if r.observation.turn < players:
            assert not [a for a in r.legal_actions if a.WhichOneof("kind") == "close"]
    for ended in _kinds(msgs, "game_ended"):
        rec = _record_dict(ended)
        assert rec["rules"]["wildCards"] == ["1O"] and rec["rules"]["closeFirstRound"] is False
        assert replay(rec).state.rules == want


# -- "any": two bots paired ----------------------------------------------------------------------

PAIR_RULES = {"scoreLimit": 40, "maxTurnsPerHand": 30}
OTHER_RULES = {"scoreLimit": 41, "maxTurnsPerHand": 30}


async def test_practice_any_pairs_two_bots_with_the_same_rules_and_clock_only(
    servers: StartServer, bots: SpawnBot,
) -> None:
    server = await servers(["alice", "bob", "carol", "dave"])
    procs: list[BotProc] = []
    # Waiting first: carol (same rules, another clock), dave (same clock, other
    # rules). Neither may be paired with alice or bob, nor with each other.
    carol = await bots(_any_bot(1, PAIR_RULES, "--per-move", "1.5", "--bank", "10"),
                        server, "carol")
    dave = await bots(_any_bot(1, OTHER_RULES, "--per-move", "2", "--bank", "10"),
                       server, "dave")
    procs += [carol, dave]
    await printed([carol, dave], "welcome")
    await _waiting_for_partner(server, "carol", "dave")
    alice = await bots(_any_bot(2, PAIR_RULES, "--per-move", "2", "--bank", "10"),
                        server, "alice")
    procs.append(alice)
    await printed([alice], "welcome")
    await _waiting_for_partner(server, "alice")
    bob = await bots(_any_bot(2, PAIR_RULES, "--per-move", "2", "--bank", "10"),
                      server, "bob")
    procs.append(bob)
    a, b = await asyncio.gather(_finish(alice), _finish(bob))
    # carol and dave are still waiting, never seated.
    assert carol.returncode is None and dave.returncode is None
    await stop(carol, dave)
    c, d = _received(carol), _received(dave)
    for waiting in (c, d):
        assert [m.WhichOneof("kind") for m in waiting] == ["welcome"]
    _clean_session(a, 2)
    _clean_session(b, 2)
    sa, sb = _kinds(a, "game_started"), _kinds(b, "game_started")
    assert [s.game_id for s in sa] == [s.game_id for s in sb]
    assert len({s.game_id for s in sa}) == 2
    for x, y in zip(sa, sb, strict=True):
        assert list(x.players) == list(y.players)
        assert sorted(x.players) == ["alice", "bob"]
        assert x.players[x.seat] == "alice" and y.players[y.seat] == "bob"
        assert x.rules == rules_to_wire(RuleSet(score_limit=40, max_turns_per_hand=30))
        assert seconds_of(x.time_control.per_move) == pytest.approx(2.0)
        assert seconds_of(x.time_control.bank) == pytest.approx(10.0)
    assert sa[0].seat != sa[1].seat  # seats alternate
    ea, eb = _kinds(a, "game_ended"), _kinds(b, "game_ended")
    for x, y, s in zip(ea, eb, sa, strict=True):
        assert x.game_id == y.game_id and x.result == y.result
        assert g.Termination.Name(x.result.termination) in PLAYED
        rec = _record_dict(x)
        assert [seat["name"] for seat in rec["seats"]] == list(s.players)
        assert replay(rec).state.is_over
    # Every game its own deal: a record reveals no deal still to come.
    assert _first_deck(_record_dict(ea[0])) != _first_deck(_record_dict(ea[1]))


async def test_practice_any_pairs_the_same_rule_set_however_it_is_written(
    servers: StartServer, bots: SpawnBot,
) -> None:
    """docs/protocol.md: ``any`` is "another bot waiting for practice with the same rules
    and clock". Unset fields take their defaults, so these two requests ask for the very
    same rule set (``game_started`` would echo identical rules) and the same clock."""
    same = dict(PAIR_RULES, deck=40, jokers=0)  # 40 cards and no joker are the defaults

    server = await servers(["alice", "bob"])
    procs: list[BotProc] = []
    alice = await bots(_any_bot(1, PAIR_RULES), server, "alice")
    procs.append(alice)
    await printed([alice], "welcome")
    await _waiting_for_partner(server, "alice")
    bob = await bots(_any_bot(1, same), server, "bob")
    procs.append(bob)
    await printed([alice, bob], "gameStarted")
    a, b = await asyncio.gather(_finish(alice), _finish(bob))
    assert _kinds(a, "game_started")[0].game_id == _kinds(b, "game_started")[0].game_id


async def test_practice_any_pairs_only_bots_asking_for_as_many_games(
    servers: StartServer, bots: SpawnBot,
) -> None:
    """alice asks for 1 game, bob for 3: they are not paired (before, alice was seated
    in bob's 3 games; a bot that stops after the games it asked for, as
    sample_bots/node/bot.js does, would have forfeited the others). A third bot asking
    for 1 game, like alice, is paired with her."""

    server = await servers(["alice", "bob", "carol"])
    procs: list[BotProc] = []
    alice = await bots(_any_bot(1, PAIR_RULES), server, "alice")
    procs.append(alice)
    await printed([alice], "welcome")
    bob = await bots(_any_bot(3, PAIR_RULES), server, "bob")
    procs.append(bob)
    await printed([bob], "welcome")
    await _waiting_for_partner(server, "alice", "bob")  # both came, neither was paired
    assert not _kinds(_received(alice), "game_started")
    assert not _kinds(_received(bob), "game_started")
    carol = await bots(_any_bot(1, PAIR_RULES), server, "carol")
    procs.append(carol)
    a, c = await asyncio.gather(_finish(alice), _finish(carol))
    assert len(_kinds(a, "game_started")) == 1 and len(_kinds(c, "game_started")) == 1
    assert _kinds(a, "game_started")[0].game_id == _kinds(c, "game_started")[0].game_id
    assert not _kinds(_received(bob), "game_started")


# -- practice requests that cannot be served -------------------------------------------------------


def _request(**kw: Any) -> pb.PracticeRequest:
    rules = kw.pop("rules", None)
    tc = kw.pop("time_control", None)
    wait = kw.pop("wait", None)
    req = pb.PracticeRequest(**kw)
    if wait is not None:
        req.wait.FromNanoseconds(int(wait * 1e9))
    if rules is not None:
        req.rules.CopyFrom(g.RuleSet(**rules))
    if tc is not None:
        req.time_control.per_move.FromNanoseconds(int(tc[0] * 1e9))
        req.time_control.bank.FromNanoseconds(int(tc[1] * 1e9))
    return req


BAD_REQUESTS = [
    (_request(opponent="grandmaster"),
     r"unknown opponent 'grandmaster': choose random, greedy, strong or any"),
    (_request(opponent="greedy", rules={"players": 3}),
     r"rule set: players: practice games are for 2 players"),
    (_request(opponent="any", rules={"players": 4}),
     r"rule set: players: practice games are for 2 players"),
    (_request(opponent="random", rules={"jokers": 3}), r"rule set: jokers: .+"),
    (_request(opponent="random", rules={"deck": 52}), r"rule set: deck: .+"),
    (_request(opponent="random", rules={"wild_cards": ["1O", "1C"], "jokers": 1}),
     r"rule set: wild_cards: at most 2 wild cards in all, jokers included: .+"),
    (_request(opponent="random", games=101), r"games must be 1 to 100, got 101"),
    (_request(opponent="random", games=-2), r"games must be 1 to 100, got -2"),
    (_request(opponent="random", time_control=(-1.0, 5.0)),
     r"time_control\.per_move: must be positive, got -1\.0"),
    (_request(opponent="any", wait=0.0),
     r"wait must be more than 0 s and at most 3600 s, got 0 s"),
    (_request(opponent="any", wait=7200.0),
     r"wait must be more than 0 s and at most 3600 s, got 7200 s"),
    (_request(opponent="any", wait=0.4),
     r"no other bot asked for the same practice \(rules, clock, games and seed\) within 0\.4 s"),
    # A game without end (or a clock of a nanosecond) would hold the referee: no practice.
    (_request(opponent="random", rules={"score_limit": 2**31 - 1}),
     r"rule set: score_limit: at most 500, got 2147483647"),
    (_request(opponent="random", rules={"max_turns_per_hand": 2**31 - 1}),
     r"rule set: max_turns_per_hand: at most 1000, got 2147483647"),
    (_request(opponent="random", time_control=(1e-9, 0.0)),
     r"time_control\.per_move: at least 0\.01 s, got 1e-09"),
]


@pytest.mark.parametrize(("req", "message"), BAD_REQUESTS,
                         ids=["opponent", "players-3", "any-players-4", "jokers", "deck",
                              "wild-cards",
                              "games-101", "games-negative", "clock", "wait-0", "wait-2h",
                              "nobody-came", "score-limit-2^31", "turns-2^31",
                              "per-move-1ns"])
async def test_a_practice_request_that_cannot_be_served_is_refused_in_band(
    servers: StartServer, req: pb.PracticeRequest, message: str,
) -> None:
    server = await servers(["alice"])
    async with grpc.aio.insecure_channel(server.target) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play(
            metadata=(("authorization", f"Bearer {bot_token('alice')}"),))
        await call.write(pb.PlayRequest(hello=pb.Hello(client="bad", practice=req)))
        got: list[pb.PlayResponse] = []
        while (msg := await asyncio.wait_for(call.read(), 15)) is not grpc.aio.EOF:
            got.append(msg)
        code = await call.code()
    # The welcome, the error, and the end of the stream: no game, no other status.
    assert [m.WhichOneof("kind") for m in got] == ["welcome", "error"]
    err = got[1].error
    assert err.code == pb.ERROR_CODE_BAD_REQUEST
    assert re.fullmatch(message, err.message), err.message
    assert code == grpc.StatusCode.OK


# -- `chinchon practice`: the report's rows ------------------------------------------------------


def _cli_practice(*args: str, timeout: float = 120,
                  cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # A wide terminal: each table row on one line. The run's folder (practice-SEED/ by
    # default) goes in ``cwd``, a fresh temporary folder unless given.
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([*CLI, "practice", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or tempfile.mkdtemp(), env=env)


def _rows(stdout: str, kind: str) -> list[tuple[str, str]]:
    """(game, detail) of each problem of kind ``kind`` in the problems table: a row
    says how many times it came (identical ones share a row), and counts that many."""
    rows = re.findall(rf"^│ {kind}\s*│ (\S+)\s*│ (\d+)×\s*│ [^│]*│ (.*?)\s*│$", stdout,
                      re.MULTILINE)
    return [(game, detail) for game, times, detail in rows for _ in range(int(times))]


def test_cli_practice_reports_each_timeout_with_the_time_waited(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    res = _cli_practice("--games", "2", "--per-move", "0.2", "--bank", "0.3",
                        "--json", str(report), "--",
                        sys.executable, RAW_BOT, "--mode", "stall")
    out = res.stdout
    assert res.returncode == 1, out + res.stderr
    assert "FAIL" in out and "PASS" not in out
    timeouts = _rows(out, "timeout")
    assert len(timeouts) == 6, out
    games = [game for game, _ in timeouts]
    assert games == ["practice-1"] * 3 + ["practice-2"] * 3
    allowed_seen = []
    for _game, detail in timeouts:
        m = re.fullmatch(r"no answer in (\d+\.\d{3}) s \(allowed (\d+\.\d{3}) s\)", detail)
        assert m, detail
        waited, allowed = float(m[1]), float(m[2])
        allowed_seen.append(allowed)
        # The time taken is how long the referee waited: the allowance, give or take
        # the timer's resolution and a busy machine.
        assert allowed - 0.1 <= waited <= allowed + 2.0, detail
    # The first timeout may use move time and bank; it empties the bank.
    assert allowed_seen == [0.5, 0.2, 0.2] * 2
    forfeits = _rows(out, "forfeit")
    assert forfeits == [("practice-1", "3 strikes (timeouts)"),
                        ("practice-2", "3 strikes (timeouts)")]
    assert out.count("forfeit_timeout") == 2
    assert "counts: forfeit 2, timeout 6" in out
    data = json.loads(report.read_text())
    assert not data["clean"]
    assert [i["kind"] for i in data["incidents"]] == (["timeout"] * 3 + ["forfeit"]) * 2
    assert [g_["termination"] for g_ in data["games"]] == ["TERMINATION_FORFEIT_TIMEOUT"] * 2


def test_cli_practice_reports_each_stale_answer_in_its_game(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    res = _cli_practice("--games", "2", "--json", str(report), "--",
                        sys.executable, RAW_BOT, "--mode", "stale", "--count", "2")
    out = res.stdout
    assert res.returncode == 1, out + res.stderr
    assert "FAIL" in out
    protocol = _rows(out, "protocol")
    assert len(protocol) == 4, out
    # Attributed to the game in progress: two stale answers in each game.
    assert [game for game, _ in protocol] == ["practice-1"] * 2 + ["practice-2"] * 2
    for _game, detail in protocol:
        m = re.fullmatch(r"request (\d+) is not outstanding: answered already or too late "
                         r"\(request (\d+) is outstanding\)", detail)
        assert m, detail
        assert int(m[2]) > int(m[1])
    assert "counts: protocol 4" in out
    # Nothing else went wrong: the games were played to the end.
    assert not _rows(out, "timeout") and not _rows(out, "illegal")
    data = json.loads(report.read_text())
    assert not data["clean"]
    assert all(g_["termination"] in PLAYED for g_ in data["games"])
    assert [(i["kind"], i["code"], i["game_id"]) for i in data["incidents"]] == [
        ("protocol", "ERROR_CODE_STALE_REQUEST", "practice-1")] * 2 + [
        ("protocol", "ERROR_CODE_STALE_REQUEST", "practice-2")] * 2


async def test_practice_any_waits_as_long_as_asked_and_a_bot_may_meet_itself(servers: StartServer) -> None:
    """A bot asking for ``any`` with ``wait`` set hears, once that time has passed with
    nobody asking for the same practice, that nobody came (and is not paired later
    with a stream that comes after it left). Two streams of the same bot with the same
    request meet: a bot may practice against itself."""
    from tests.support.referee import Bot

    server = await servers(["alice"])
    loop = asyncio.get_running_loop()
    lone = Bot(server.target, "alice")
    t0 = loop.time()
    await lone.back(_request(opponent="any", games=1, wait=0.3))
    err = (await lone.next("error")).error
    waited = loop.time() - t0
    assert err.code == pb.ERROR_CODE_BAD_REQUEST
    assert err.message == ("no other bot asked for the same practice (rules, clock, "
                           "games and seed) within 0.3 s")
    assert 0.3 <= waited < 5
    assert await asyncio.wait_for(lone.call.read(), 5) is grpc.aio.EOF
    assert await lone.call.code() == grpc.StatusCode.OK
    await lone.channel.close()

    one, two = Bot(server.target, "alice"), Bot(server.target, "alice")
    await one.back(_request(opponent="any", games=1, seed="self", wait=0.3))
    await two.back(_request(opponent="any", games=1, seed="self", wait=0.3))
    ended = await asyncio.wait_for(asyncio.gather(one.play_on(), two.play_on()), 60)
    seats = sorted(m.game_ended.seat for m in ended)
    assert seats == [0, 1]
    for m in ended:
        assert m.game_ended.result.termination in (
            g.TERMINATION_NORMAL, g.TERMINATION_CHINCHON)
        assert [s.name for s in m.game_ended.record.seats] == ["alice", "alice"]
    for bot in (one, two):
        await bot.channel.close()


async def test_an_answer_too_late_for_its_game_is_reported_in_that_game(servers: StartServer) -> None:
    """A bot lets its first request of game 1 time out, plays game 1 to its end, and
    answers that request once game 2 has started: the stale answer is reported with
    game 1's id (the game the request belonged to), not with the game in progress."""
    from chinchon_referee.config import TimeControl

    from tests.support.helpers import spec as game_spec
    from tests.support.referee import Bot

    server = await servers(["a", "b"])
    a, b = Bot(server.target, "a"), Bot(server.target, "b")
    await a.back()
    await b.back()
    tc = TimeControl(0.3, 0.1)
    held: list[pb.ActionRequest] = []

    async def a_game() -> None:
        while True:
            msg = await asyncio.wait_for(a.call.read(), 30)
            kind = msg.WhichOneof("kind")
            if kind == "game_ended":
                return
            if kind == "action_request":
                if not held:
                    held.append(msg.action_request)  # left to time out
                else:
                    await a.answer(msg.action_request)

    first = asyncio.ensure_future(server.referee.play(game_spec("late-1", ["a", "b"], tc=tc)))
    await asyncio.wait_for(asyncio.gather(a_game(), b.play_on(), first), 60)
    second = asyncio.ensure_future(server.referee.play(game_spec("late-2", ["a", "b"], tc=tc)))
    await a.next("game_started")
    await a.answer(held[0])  # far too late: game 1 is over
    await asyncio.wait_for(asyncio.gather(a.play_on(), b.play_on(), second), 60)
    for bot in (a, b):
        await bot.channel.close()
    incidents = list(server.referee.incidents)
    stale = [i for i in incidents if i.get("code") == "ERROR_CODE_STALE_REQUEST"]
    assert len(stale) == 1, incidents
    assert stale[0]["game_id"] == "late-1"
    assert stale[0]["bot"] == "a"
    timeouts = [i for i in incidents if i["kind"] == "timeout"]
    assert [i["game_id"] for i in timeouts] == ["late-1"]


# -- a failure of the referee is not the bot's -------------------------------------------------


async def test_chinchon_practice_tells_a_referee_failure_from_a_bot_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`chinchon practice` (in process, a real SDK bot process) with an internal error of
    the referee injected in its second game: the game is listed as ABORTED with an
    "aborted" problem, the report says it is not the bot's fault, and the verdict is
    INCONCLUSIVE, not FAIL. With a problem of the bot's as well, it is FAIL."""
    from chinchon_referee.cli import practice
    from chinchon_referee.config import TimeControl

    from tests.support.referee import referee_fails

    failed = referee_fails(monkeypatch, "practice-2", 1)
    rep = await practice.run_practice(sdk_bot("greedy"), 3, "greedy", RuleSet(),
                                      TimeControl(5.0, 30.0), "referee-fails")
    assert failed == ["practice-2"]
    terms = [o.termination for o in rep.outcomes]
    assert terms[1] == "TERMINATION_ABORTED" and len(terms) == 3
    assert {terms[0], terms[2]} <= {"TERMINATION_NORMAL", "TERMINATION_CHINCHON"}
    assert [(i["kind"], i["game_id"]) for i in rep.incidents] == [("aborted", "practice-2")]
    assert not rep.clean and rep.referee_only_failed

    def printed_report() -> str:
        with practice.console.capture() as cap:
            practice.print_report(rep)
        return cap.get()

    out = printed_report()
    assert "1 game(s) stopped by an internal error of the referee: not your bot's fault" in out
    assert "INCONCLUSIVE: your bot played cleanly, but the referee failed" in out
    assert "FAIL" not in out
    rep.incidents.append({"kind": "timeout", "game_id": "practice-3", "waited": 6.0,
                          "allowed": 5.0})
    assert not rep.referee_only_failed
    assert "FAIL: see the problems above" in printed_report()


# -- `chinchon practice`: what it leaves for the author ------------------------------------------


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return str(path)


def test_cli_practice_prints_the_bots_stderr_verbatim_and_saves_it(tmp_path: Path) -> None:
    """Brackets in the bot's stderr are the bot's words, not rich markup: ``[cppbot]`` and
    ``[a, b]`` are printed as they are, and ``[/oops]`` does not crash the report."""
    lines = ["[cppbot] starting", "state [a, b]", "closing [/oops] tag", "[bold]not bold[/]"]
    bot = _script(tmp_path, "noisy.py",
                  "import sys\n"
                  f"for line in {lines!r}:\n"
                  "    print(line, file=sys.stderr)\n"
                  "sys.exit(1)\n")
    out = tmp_path / "practice-noisy"
    res = _cli_practice("--games", "1", "--seed", "noisy", "--", sys.executable, bot,
                        cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and "MarkupError" not in res.stderr, res.stderr
    assert "FAIL" in res.stdout
    for line in lines:
        assert line in res.stdout, res.stdout
    saved = out / "bot-stderr.log"
    assert saved.read_text(encoding="utf-8").splitlines() == lines
    assert "bot stderr saved in practice-noisy/bot-stderr.log" in res.stdout


def test_cli_practice_reports_the_exit_code_of_a_bot_that_never_connected(
        tmp_path: Path) -> None:
    bot = _script(tmp_path, "quits.py", "import sys\nsys.exit(3)\n")
    out = tmp_path / "run"
    res = _cli_practice("--games", "1", "--out", str(out), "--", sys.executable, bot)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "the bot exited before connecting (exit code 3)" in res.stdout, res.stdout
    assert "FAIL" in res.stdout
    assert f"bot stderr saved in {out / 'bot-stderr.log'}" in res.stdout


def test_cli_practice_names_the_signal_that_killed_a_bot_before_connecting(
        tmp_path: Path) -> None:
    bot = _script(tmp_path, "killed.py", "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    res = _cli_practice("--games", "1", "--", sys.executable, bot)
    assert res.returncode == 1, res.stdout + res.stderr
    assert ("the bot exited before connecting (killed by signal SIGTERM)"
            in res.stdout), res.stdout


def test_cli_practice_keeps_each_game_record_for_replay(tmp_path: Path) -> None:
    """A clean run (default folder ``practice-SEED/`` in the current directory) keeps the
    bot's stderr and each game's record; ``chinchon replay`` accepts every record."""
    bot = str(ROOT / "sample_bots" / "python" / "random_bot.py")
    res = _cli_practice("--games", "2", "--seed", "keep", "--json", "report.json", "--",
                        sys.executable, "-m", "chinchon.sdk", "--bot", f"{bot}:RandomBot",
                        cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout
    out = tmp_path / "practice-keep"
    assert "bot stderr saved in practice-keep/bot-stderr.log" in res.stdout, res.stdout
    assert "saved in practice-keep/" in res.stdout
    assert (out / "bot-stderr.log").is_file()
    records = sorted(out.glob("practice-*.json"))
    assert [r.name for r in records] == ["practice-1.json", "practice-2.json"]
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["clean"] and report["bot_stderr_file"] == "practice-keep/bot-stderr.log"
    # Dismissed after its games, the SDK bot exited 0 by itself (no SIGTERM).
    assert report["bot_exit"] == 0 and report["exited_by_itself"] is True, report
    assert report["records"] == ["practice-keep/practice-1.json",
                                 "practice-keep/practice-2.json"]
    for record in records:
        rep = subprocess.run([*CLI, "replay", str(record)], capture_output=True, text=True,
                             timeout=120, cwd=tmp_path)
        assert rep.returncode == 0, rep.stdout + rep.stderr
        assert "all legal" in rep.stdout
    # The folder is the run's own: a second run into it is refused, changing nothing.
    again = _cli_practice("--games", "1", "--seed", "keep", "--", sys.executable, bot,
                          cwd=tmp_path)
    assert again.returncode == 2
    assert "--out practice-keep: the folder is not empty" in again.stdout
    # (each game's share of the bot's stderr, where it wrote some, beside its record)
    per_game = sorted(out.glob("practice-*.stderr.log"))
    assert {p.name for p in per_game} <= {"practice-1.stderr.log", "practice-2.stderr.log"}
    assert sorted(out.iterdir()) == sorted([*records, out / "bot-stderr.log", *per_game])


def test_practice_report_prints_incident_details_verbatim(
        capsys: pytest.CaptureFixture[str]) -> None:
    """An incident's detail quotes the bot (its protocol errors, its illegal actions):
    brackets in it are text, and a stray closing tag does not crash the report."""
    from chinchon_referee.cli.practice import PracticeReport, print_report

    message = "unknown action [/oops] in [a, b] from [cppbot]"
    rep = PracticeReport("candidate", "greedy", seed="s", connected=True,
                         incidents=[{"kind": "protocol", "game_id": "practice-1",
                                     "message": message}])
    print_report(rep)
    out = capsys.readouterr().out
    assert "[/oops]" in out and "[a, b]" in out and "[cppbot]" in out, out
    assert "FAIL" in out
