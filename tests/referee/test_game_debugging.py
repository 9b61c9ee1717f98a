"""What a bot author debugging a lost game reads: every refused answer,
timeout and default in the record at its step, with the text the bot sent; the concrete
cards behind the ``best`` macros; and each decision's observation and legal actions as
the bot received them."""

from __future__ import annotations

from typing import Any

from chinchon.engine import (
    GreedyBot,
    RandomBot,
    RuleSet,
    ShuffleSource,
    apply,
    legal_actions,
    new_game,
    observation,
    replay,
)
from chinchon.engine.actions import PASS, Close, LayDown, LayOff, LayOffBest
from chinchon.engine.game import Phase
from chinchon.engine.macros import is_macro, resolve
from chinchon.engine.record import action_from_json, action_to_json
from chinchon.wire import record_from_json
from chinchon_referee.config import Policies
from chinchon_referee.web.replay import steps as replay_steps
from chinchon_referee.web.step_view import step_request
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import play, printed, spec, stop
from tests.support.inproc import raw, sdk
from tests.support.referee import connected, messages

KIND = "SEAT_INCIDENT_KIND_"


async def _illegal_game(servers: StartServer, bots: SpawnBot) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A game of a bot that answers only illegal actions (1 retry, 2 strikes) against
    the greedy bot: its record, and the messages the cheat received."""
    server = await servers(["cheat", "good"])
    cheat = await bots(raw("illegal"), server, "cheat")
    good = await bots(sdk("greedy"), server, "good")
    await connected(server, "cheat", "good")
    out = await play(server.referee, spec("dbg", ["cheat", "good"],
                                          policies=Policies(max_illegal_retries=1, max_strikes=2)))
    await printed([cheat], "gameEnded")
    await stop(cheat, good)
    return out.record, messages(cheat.out)


async def test_refused_answers_defaults_and_strikes_are_in_the_record_at_their_step(
    servers: StartServer, bots: SpawnBot,
) -> None:
    record, msgs = await _illegal_game(servers, bots)
    notes = record["incidents"]
    record_from_json(record)  # the proto's own reader takes it
    assert replay(record).state is not None  # and the engine still replays it
    rejected = [m["actionRejected"] for m in msgs if "actionRejected" in m]
    refused = [n for n in notes if n["kind"] == KIND + "ILLEGAL"]
    assert len(refused) == len(rejected) == 4
    for note, rej in zip(refused, rejected, strict=True):
        assert note["seat"] == 0 and note["requestId"] == rej["requestId"]
        assert note["violation"] == rej["error"]["violation"]
        assert note["message"] == rej["error"]["message"]
        assert note["sent"].startswith("discard {card: ") or note["sent"].startswith("discard { card: ")
    # The first attempt, then its retry, then the default with its strike, at one step:
    # the move the default played.
    defaults = [n for n in notes if n["kind"] == KIND + "DEFAULT"]
    assert [(d["strikes"], d["maxStrikes"]) for d in defaults] == [(1, 2), (2, 2)]
    for d in defaults:
        at = [n for n in notes if n["step"] == d["step"]]
        assert [(n["kind"], n.get("attempt", 0)) for n in at] == [
            (KIND + "ILLEGAL", 0), (KIND + "ILLEGAL", 1), (KIND + "DEFAULT", 0)]
        move = record["actions"][d["step"]]["move"]
        assert move.get("seat", 0) == 0 and move["origin"] == "ACTION_ORIGIN_DEFAULT_ILLEGAL"
    # The replay shows them at that step; in the other seat's view without the text.
    shown = replay_steps(record, None)["steps"]
    for d in defaults:
        step = shown[d["step"]]
        assert [n["kind"] for n in step["incidents"]] == [KIND + "ILLEGAL"] * 2 + [KIND + "DEFAULT"]
        assert all("sent" in n for n in step["incidents"][:2])
    theirs = replay_steps(record, 1)["steps"][defaults[0]["step"]]["incidents"]
    assert theirs and all("sent" not in n and "message" not in n for n in theirs)


async def test_a_steps_observation_is_the_one_the_bot_received(
    servers: StartServer, bots: SpawnBot,
) -> None:
    record, msgs = await _illegal_game(servers, bots)
    requests = {int(m["actionRequest"]["requestId"]): m["actionRequest"]
                for m in msgs if "actionRequest" in m}
    # Every request of the cheat was refused: its incidents name the step of each.
    seen = 0
    for note in record["incidents"]:
        if note["kind"] != KIND + "ILLEGAL":
            continue
        got = step_request(record, note["step"] + 1, 0)
        sent = requests[int(note["requestId"])]
        assert got["observation"] == sent["observation"]
        assert got["legalActions"] == sent["legalActions"]
        assert note in got["incidents"]  # what it sent there, refused
        seen += 1
    assert seen == 4
    # The other seat's decisions too (the greedy bot's: same conversion).
    mine = next(i for i, a in enumerate(record["actions"]) if "move" in a and a["move"].get("seat", 0) == 1)
    got = step_request(record, mine + 1, None)
    assert got["seat"] == 1 and got["observation"]["seat"] == 1
    assert got["answer"] == record["actions"][mine]["move"]["action"]


def _check_macro(before: Any, seat: int, action: Any) -> bool:
    after = apply(before, action, seat=seat)
    done = resolve(before, after, seat, action)
    assert done is not None
    st_ = before
    if isinstance(action, LayOffBest):
        assert all(isinstance(a, LayOff) for a in done)
        for a in done:
            st_ = apply(st_, a, seat=seat)
        if st_.phase is Phase.LAYOFF and st_.to_act == seat:
            st_ = apply(st_, PASS, seat=seat)
    else:
        assert len(done) == 1 and isinstance(done[0], (Close, LayDown)) and done[0].melds is not None
        st_ = apply(st_, done[0], seat=seat)
    assert st_.hands == after.hands and [t.meld.cards for t in st_.table] == [
        t.meld.cards for t in after.table]
    return True


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.sampled_from([2, 3]), jokers=st.sampled_from([0, 2]))
def test_the_macros_concrete_actions_do_what_the_macro_did(seed: int, players: int, jokers: int) -> None:
    """Whatever ``layoff best``, ``laydown best`` or ``close … best`` did, the concrete
    actions resolve() names do the same, played one by one."""
    rules = RuleSet(players=players, jokers=jokers)
    source = ShuffleSource(str(seed), "g")
    bots = [RandomBot(seed + s) if s % 2 else GreedyBot() for s in range(players)]
    state = new_game(rules)
    macros = 0
    while not state.is_over:
        if state.is_chance:
            state = apply(state, source.chance(state))
            continue
        seat = state.to_act
        legal = legal_actions(state)
        action = bots[seat].choose(observation(state, seat), legal)
        if is_macro(action):
            macros += _check_macro(state, seat, action)
        state = apply(state, action, seat=seat)
    assert macros >= 0


async def test_the_record_and_the_replay_name_the_cards_behind_each_macro(
    servers: StartServer, bots: SpawnBot,
) -> None:
    server = await servers(["g1", "g2"])
    procs = [await bots(sdk("greedy"), server, "g1"), await bots(sdk("greedy"), server, "g2")]
    await connected(server, "g1", "g2")
    out = await play(server.referee, spec("macros", ["g1", "g2"], seed="m"))
    await stop(*procs)
    record = out.record
    record_from_json(record)
    states: list[Any] = []
    replay(record, lambda s, i: states.append(s))
    shown = replay_steps(record, None)["steps"]
    macros = 0
    for i, step in enumerate(record["actions"]):
        move = step.get("move")
        if move is None:
            continue
        action = action_from_json(move["action"])
        if not is_macro(action):
            assert "resolved" not in move
            continue
        macros += 1
        want = resolve(states[i - 1], states[i], move.get("seat", 0), action)
        assert want is not None
        assert move["resolved"] == [action_to_json(a) for a in want]
        assert " → " in shown[i]["text"] and shown[i]["resolved"]
        if isinstance(action, Close):
            assert all(c in shown[i]["text"] for m in want[0].melds or () for c in map(str, m))  # type: ignore[union-attr]
    assert macros >= 1
    # Hands shown in the replay come with their melds apart from the unmatched cards.
    dealt = next(s for s in shown if s["kind"] == "discard")
    for seat in dealt["table"]["seats"]:
        arr = seat["arranged"]
        assert sorted([c for m in arr["melds"] for c in m] + arr["unmatched"]) == sorted(seat["hand"])
    assert replay_steps(record, None)["hand_starts"][0] == 1
