"""Full games over real gRPC between SDK, Node and raw bot processes; the records replay."""

from __future__ import annotations

import asyncio

from chinchon.engine import (
    GameEnd,
    GreedyBot,
    RuleSet,
    play_game,
    replay,
)

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import (
    node_bot,
    play,
    spec,
    stop,
)
from tests.support.inproc import sdk
from tests.support.referee import (
    connected,
    raw_bots_game,
)

# -- full games ---------------------------------------------------------------------------


async def test_sdk_bots_play_a_full_game_and_the_record_replays(servers: StartServer, bots: SpawnBot) -> None:
    server = await servers(["alice", "bob"])
    await bots(sdk("greedy"), server, "alice")
    await bots(sdk("random"), server, "bob")
    await connected(server, "alice", "bob")
    out = await play(server.referee, spec("g1", ["alice", "bob"]))
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert out.record["result"]["winners"]
    rep = replay(out.record)
    assert rep.state.is_over
    assert [w for w in rep.state.result.winners] == out.winners
    assert all(s.decisions > 0 for s in out.stats)
    assert all(s.timeouts == 0 and s.illegal == 0 for s in out.stats)
    moves = [x["move"] for x in out.record["actions"] if "move" in x]
    assert all(m["origin"] == "ACTION_ORIGIN_PLAYER" for m in moves)
    assert all(m["thinkTime"].endswith("s") for m in moves)


async def test_python_and_node_bots_play_full_games(servers: StartServer, bots: SpawnBot) -> None:
    # (The commands first: without the Node dependencies this fails before a server
    # is left running.)
    js_cmd, js2_cmd = node_bot(), node_bot("--strategy", "random")
    server = await servers(["py", "js", "js2"])
    py = await bots(sdk("greedy"), server, "py")
    js = await bots(js_cmd, server, "js")
    js2 = await bots(js2_cmd, server, "js2")
    await connected(server, "py", "js", "js2")
    outs = await asyncio.gather(
        play(server.referee, spec("pj-1", ["py", "js"], seed="a")),
        play(server.referee, spec("pj-2", ["js2", "py"], seed="b")),
    )
    out3 = await play(server.referee, spec("pj-3", ["js", "js2", "py"], seed="c"))
    for out in [*outs, out3]:
        assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
        assert all(st_.illegal == 0 and st_.timeouts == 0 for st_ in out.stats)
        assert replay(out.record).state.is_over
    await stop(py, js, js2)
    assert not any("Error" in line for line in js.err), js.err[-5:]


#: A deal where two GreedyBots end the first hand with a chinchón. Found once by an
#: engine-only search (``play_game(RuleSet(players=2), [GreedyBot(), GreedyBot()],
#: seed=f"c{i}", deal_id="chinchon")`` over i = 0..199: c2, c62, c74, ... qualify; c74
#: does it in the first hand, 35 actions in). The test replays the search's game first,
#: so a change to the bot or the shuffle says so rather than failing obscurely.
CHINCHON_SEED = "c74"


def _steps(actions: list[dict]) -> list[object]:
    """A record's deals and reshuffles, and each move's seat and action."""
    return [x if "move" not in x else (x["move"]["seat"], x["move"]["action"]) for x in actions]


async def test_a_chinchon_ends_the_game_on_the_wire_and_in_the_record() -> None:
    engine_state, engine_record = play_game(
        RuleSet(players=2), [GreedyBot(), GreedyBot()], seed=CHINCHON_SEED, deal_id="chinchon")
    assert engine_state.result is not None and engine_state.result.end is GameEnd.CHINCHON, (
        f"seed {CHINCHON_SEED} no longer gives a chinchón: search again")

    out, per_seat = await raw_bots_game(
        spec("chinchon", ["p0", "p1"], seed=CHINCHON_SEED), [["greedy"], ["greedy"]])
    closer = engine_state.results[-1].closer
    # The same game as the engine's, deal for deal and move for move.
    assert _steps(out.record["actions"]) == _steps(engine_record["actions"])  # type: ignore[arg-type]
    assert out.termination == "TERMINATION_CHINCHON"
    assert out.winners == [closer] and out.forfeited is None
    result = out.record["result"]
    assert result["termination"] == "TERMINATION_CHINCHON"
    assert result["end"] == "GAME_END_KIND_CHINCHON" and result["winners"] == [closer]
    last = out.record["hands"][-1]
    assert last["end"] == "HAND_END_KIND_CHINCHON" and last["bonus"] == "BONUS_CHINCHON"
    assert last["closer"] == closer and last["points"][closer] == -10
    rep = replay(out.record)
    assert rep.state.result is not None and rep.state.result.end is GameEnd.CHINCHON
    for seat, msgs in enumerate(per_seat):
        hands = [m["handEnded"]["result"] for m in msgs if "handEnded" in m]
        assert hands[-1]["end"] == "HAND_END_KIND_CHINCHON"
        assert hands[-1]["bonus"] == "BONUS_CHINCHON"
        ended = [m["gameEnded"] for m in msgs if "gameEnded" in m]
        assert len(ended) == 1 and ended[0].get("seat", 0) == seat
        assert ended[0]["result"]["termination"] == "TERMINATION_CHINCHON"
        assert ended[0]["result"]["end"] == "GAME_END_KIND_CHINCHON"
        assert ended[0]["result"]["winners"] == [closer]
