"""Lean requests (``Hello.observations = OBSERVATION_MODE_LEAN``): what they carry, and
the state the SDK rebuilds from them.

Through a real server and real SDK bot processes: at every decision of several games
(2 and 3 players, jokers or none, one after another on the same streams) the
observation the SDK gives a lean bot equals the whole observation of that seat at that
point of the game (replayed from the record). The encoder's lean requests carry nothing
a full observation of the seat does not, and a new stream gets a whole one first."""

from __future__ import annotations

import asyncio
import json
import random
import sys

import pytest
from chinchon.engine import (
    GameState,
    GreedyBot,
    RuleSet,
    ShuffleSource,
    apply,
    legal_actions,
    new_game,
    observation,
    replay,
)
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import LeanDecoder, RequestEncoder, hand_result_to_wire, observation_to_wire
from chinchon_referee.config import Policies
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import ROOT, BotProc, play, printed, spec
from tests.support.referee import connected
from tests.support.waits import until

LEAN_BOT = [sys.executable, str(ROOT / "tests" / "bots" / "lean_bot.py")]

#: (seed, jokers, players) of the games played one after another on the same streams.
GAMES = [("lean-a", 0, 2), ("lean-b", 2, 2), ("lean-c", 1, 3), ("lean-d", 2, 3)]


def _views(record: dict, rules: RuleSet, seat: int, names: list[str]) -> list[bytes]:
    """The whole observation of ``seat`` at each of its decisions, from the record."""
    out: list[bytes] = []
    states: list[GameState] = []
    replay(record, on_step=lambda st, _i: states.append(st))
    state = new_game(rules)
    for step, after in zip(record["actions"], states, strict=True):
        if "move" in step and state.to_act == seat:
            out.append(observation_to_wire(observation(state, seat, names)).SerializeToString())
        state = after
    return out


def _shown(proc: BotProc) -> tuple[list[bytes], list[dict]]:
    """The observations a lean_bot process gave its bot, and the requests it read
    (its output so far, then forgotten)."""
    lines = [json.loads(ln) for ln in proc.out if ln.startswith("{")]
    proc.out.clear()
    return ([bytes.fromhex(m["obs"]) for m in lines if "obs" in m],
            [m for m in lines if "request" in m])


def _same(game_id: str, seat: int, got: list[bytes], want: list[bytes]) -> None:
    assert len(got) == len(want), (game_id, seat, len(got), len(want))
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        if a != b:
            raise AssertionError(
                f"game {game_id} seat {seat} decision {i}:\n"
                f"{json_format.MessageToDict(g.Observation.FromString(a))}\n!=\n"
                f"{json_format.MessageToDict(g.Observation.FromString(b))}")


@pytest.mark.parametrize("players", [2, 3])
async def test_the_sdk_rebuilds_every_whole_observation_from_lean_requests(
    servers: StartServer, bots: SpawnBot, players: int,
) -> None:
    names = [f"lean{i}" for i in range(players)]
    server = await servers(names)
    procs = [await bots(LEAN_BOT, server, n) for n in names]
    await connected(server, *names)
    for k, (seed, jokers, _) in enumerate(gm for gm in GAMES if gm[2] == players):
        rules = RuleSet(players=players, jokers=jokers)
        s = spec(f"{seed}-{k}", names, seed=seed, rules=rules)
        out = await play(server.referee, s)
        assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
        await printed(procs, f'"ended": "{s.game_id}"')
        for seat, p in enumerate(procs):
            got, requests = _shown(p)
            _same(s.game_id, seat, got, _views(out.record, rules, seat, names))
            # The first request of each game on the stream is whole, the rest lean.
            assert [m["delta"] for m in requests] == [False] + [True] * (len(requests) - 1)


async def test_a_bot_back_on_a_new_stream_gets_a_whole_observation_first(
    servers: StartServer, bots: SpawnBot,
) -> None:
    """A lean bot killed mid-game and started again resumes its seat: its first request
    is whole, the next ones lean, and every observation either process gave its bot is
    the seat's whole one at that decision."""
    names = ["back0", "back1"]
    rules = RuleSet(players=2, jokers=2)
    server = await servers(names)
    procs = [await bots(LEAN_BOT, server, n) for n in names]
    await connected(server, *names)
    s = spec("lean-back", names, seed="lean-back", rules=rules,
             policies=Policies(reconnect_grace=30.0))
    game = asyncio.ensure_future(play(server.referee, s))
    await until(lambda: server.referee.decisions >= 40 or game.done(), "40 decisions")
    assert not game.done()
    await procs[0].kill()
    first, _ = _shown(procs[0])
    again = await bots(LEAN_BOT, server, names[0])
    out = await game
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert out.stats[0].timeouts == 0 and out.stats[0].strikes == 0
    await printed([again, procs[1]], '"ended": "lean-back"')
    later, requests = _shown(again)
    assert requests and [m["delta"] for m in requests] == [False] + [True] * (len(requests) - 1)
    want = _views(out.record, rules, 0, names)
    # The request the old process was given last may come again to the new one.
    assert first and later and len(first) + len(later) in (len(want), len(want) + 1)
    _same("lean-back", 0, first, want[:len(first)])
    _same("lean-back", 0, later, want[-len(later):])
    got, _ = _shown(procs[1])
    _same("lean-back", 1, got, _views(out.record, rules, 1, names))


def _game(seed: str, jokers: int, players: int,
          rng: random.Random | None = None) -> list[tuple[GameState, int]]:
    """Every decision of a game played by the engine: the state and the seat. Greedy
    bots, or random legal actions from ``rng``."""
    rules = RuleSet(players=players, jokers=jokers)
    source = ShuffleSource(seed, seed, False)
    state = new_game(rules)
    bot = GreedyBot()
    out = []
    names = [f"p{i}" for i in range(players)]
    while not state.is_over:
        if state.is_chance:
            state = apply(state, source.chance(state))
            continue
        seat = state.to_act
        out.append((state, seat))
        legal = legal_actions(state)
        action = (rng.choice(legal) if rng is not None
                  else bot.choose(observation(state, seat, names), legal))
        state = apply(state, action, seat=seat)
    return out


@pytest.mark.parametrize(("seed", "jokers", "players"), GAMES)
def test_a_lean_request_carries_nothing_a_full_one_does_not(seed: str, jokers: int,
                                                            players: int) -> None:
    """Each lean request parses as an ActionRequest whose observation is the full one
    less its rules, its past hands and the events kept; and the decoder, fed the lean
    requests and the hand results in order, rebuilds the full one each time."""
    _check_lean(_game(seed, jokers, players), jokers, players)


@settings(max_examples=12, deadline=None)
@given(seed=st.text(min_size=1, max_size=6), jokers=st.integers(0, 2),
       players=st.integers(2, 4), policy=st.integers(0, 2**32 - 1))
def test_lean_requests_of_random_games_rebuild_every_whole_observation(
    seed: str, jokers: int, players: int, policy: int,
) -> None:
    """The same with random legal actions (reshuffles, lay-offs, lay-downs, long
    hands), 2 to 4 players."""
    _check_lean(_game(seed, jokers, players, random.Random(policy)), jokers, players)


def _check_lean(game: list[tuple[GameState, int]], jokers: int, players: int) -> None:
    names = [f"p{i}" for i in range(players)]
    enc = RequestEncoder("g-1", RuleSet(players=players, jokers=jokers))
    streams = [object() for _ in range(players)]
    decoders = [LeanDecoder() for _ in range(players)]
    hands_seen = [0] * players
    leans = 0
    rid = 0
    for rid, (state, seat) in enumerate(game, 1):
        view = observation(state, seat, names)
        full = g.Observation.FromString(enc.observation(view))
        assert full == observation_to_wire(view)
        dec = decoders[seat]
        for hr in state.results[hands_seen[seat]:]:  # the HandEnded messages since
            dec.hand_ended(pb.HandEnded(game_id="g-1", result=hand_result_to_wire(hr)))
        hands_seen[seat] = len(state.results)
        obs_b, delta = enc.lean(view, streams[seat])
        req = _request_of(enc, rid, obs_b, delta)
        lean = req.observation
        if req.HasField("delta"):
            leans += 1
            kept = req.delta.events_kept
            assert not lean.HasField("rules") and not lean.past_hands
            assert list(lean.events) == list(full.events)[kept:]
            rest = g.Observation()
            rest.CopyFrom(full)
            rest.ClearField("rules")
            rest.ClearField("past_hands")
            del rest.events[:]
            rest.events.extend(full.events[kept:])
            assert lean == rest
        else:
            assert lean == full
        assert observation_to_wire(dec.observation(req)) == full
    assert leans > rid // 2
    # A new stream (a reconnect) gets the whole observation first, then lean ones.
    view = observation(state, seat, names)
    obs_b, delta = enc.lean(view, object())
    assert delta == b"" and obs_b == enc.observation(view)


def _request_of(enc: RequestEncoder, rid: int, obs: bytes, delta: bytes) -> pb.ActionRequest:
    msg = pb.PlayResponse.FromString(enc.request(rid, obs, b"", 1.0, 5.0, 0, b"", delta))
    assert msg.WhichOneof("kind") == "action_request"
    return msg.action_request


def test_a_lean_request_with_nothing_to_build_on_is_refused() -> None:
    req = pb.ActionRequest(game_id="g-9", delta=pb.ObservationDelta(events_kept=3))
    with pytest.raises(Exception, match="before any whole one"):
        LeanDecoder().observation(req)
