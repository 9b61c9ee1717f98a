"""No game is without end: every rule option is bounded, and a game that
nobody has won by its length limit (``game.MAX_HANDS`` hands, or the hand in which its
turns in all reach ``game.MAX_TURNS``) ends there, the lowest total winning, with its own
termination (TERMINATION_LENGTH_LIMIT) on the wire and in its record."""

from __future__ import annotations

import pytest
from chinchon.engine import (
    Action,
    Discard,
    DrawDiscard,
    DrawStock,
    Observation,
    Outcome,
    RuleSet,
    RuleSetError,
    ShuffleSource,
    Termination,
    apply,
    deadwood,
    legal_actions,
    new_game,
    observation,
    replay,
)
from chinchon.engine.game import MAX_HANDS, MAX_TURNS, GameEnd, GameState
from chinchon.engine.play import play_game
from chinchon.strategies.builtin import make_bot
from chinchon.v1 import game_pb2 as g
from chinchon.wire import outcome_to_wire

from tests.support.engine import crafted
from tests.support.tournament import strict_record


@pytest.mark.parametrize(("option", "value", "message"), [
    ("score_limit", 2**31 - 1, "at most 500"),
    ("score_limit", 2**63, "at most 500"),
    ("max_turns_per_hand", 2**31 - 1, "at most 1000"),
    ("joker_points", 10**6, "at most 100"),
    ("close_max_points", 10**6, "at most 100"),
])
def test_every_rule_option_is_bounded(option: str, value: int, message: str) -> None:
    with pytest.raises(RuleSetError) as err:
        RuleSet.from_dict({option: value})
    assert err.value.field == option and message in err.value.message
    RuleSet.from_dict({option: int(message.split()[-1])})  # the bound itself is fine


class Hoarder:
    """Never closes: draws from the stock while it holds more than two cards, then
    from the discard pile; keeps the cards that leave it the least deadwood. Two of them
    play every hand to its turn limit, scoring little: a game nobody wins."""

    name = "hoarder"

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules

    def choose(self, obs: Observation, legal: list[Action]) -> Action:
        draws = {type(a): a for a in legal if isinstance(a, DrawDiscard | DrawStock)}
        if draws:
            if DrawStock in draws and (obs.stock_size > 2 or DrawDiscard not in draws):
                return draws[DrawStock]
            return draws.get(DrawDiscard) or draws[DrawStock]
        discards = [a for a in legal if isinstance(a, Discard)]
        if discards:
            hand = list(obs.hand)
            return min(discards, key=lambda a: (
                deadwood([c for c in hand if c != a.card], self.rules), -int(a.card)))
        return legal[0]


def test_a_game_nobody_wins_ends_at_its_length_limit() -> None:
    rules = RuleSet(score_limit=500, max_turns_per_hand=1000)
    state, record = play_game(rules, [Hoarder(rules), Hoarder(rules)], "length", "deal",
                              names=["a", "b"])
    res = state.result
    assert res is not None and res.end is GameEnd.LENGTH_LIMIT
    # Every hand went to its turn limit: the game ended at the end of the hand in which
    # its turns reached MAX_TURNS, before anyone reached the score limit.
    assert state.game_turns == MAX_TURNS and res.hands_played == MAX_TURNS // 1000
    assert all(state.alive) and max(res.totals) < rules.score_limit
    low = min(res.totals)
    assert res.winners == tuple(s for s, t in enumerate(res.totals) if t == low)
    moves = sum(1 for step in record["actions"] if "move" in step)
    assert moves <= 2 * (MAX_TURNS + 1000)
    # Its own termination, mapped to the protocol's names in one place, in the record
    # and on the wire; it counts (the table decided it).
    out = Outcome.of(state, ["a", "b"])
    assert out.termination is Termination.LENGTH_LIMIT and out.termination.played
    assert "length limit" in out.summary
    wire = outcome_to_wire(out)
    assert wire.termination == g.TERMINATION_LENGTH_LIMIT
    assert wire.end == g.GAME_END_KIND_LENGTH_LIMIT
    assert strict_record(record).result.termination == g.TERMINATION_LENGTH_LIMIT
    assert replay(record).state.result == res
    assert Outcome.from_json(out.to_json()) == out


def _play_hand_out(state: GameState, seed: str) -> GameState:
    """Play the hand in progress to its end with two greedy bots."""
    bots = [make_bot("greedy", 0), make_bot("greedy", 1)]
    source = ShuffleSource(seed, "hand")
    hands = len(state.results)
    while not state.is_over and len(state.results) == hands:
        if state.is_chance:
            state = apply(state, source.chance(state))
            continue
        seat = state.to_act
        state = apply(state, bots[seat].choose(observation(state, seat), legal_actions(state)),
                      seat=seat)
    return state


@pytest.mark.parametrize(("field", "value"), [("hand_no", MAX_HANDS),
                                              ("game_turns", MAX_TURNS - 1)])
def test_the_hand_that_reaches_the_limit_ends_the_game(field: str, value: int) -> None:
    """A game in its 200th hand (or at its 20,000th turn) ends with that hand, unless
    the hand ends it by the rules first; the lowest total among those still in wins."""
    rules = RuleSet(score_limit=500)
    for n in range(20):
        seed = f"limit-{n}"
        start = apply(new_game(rules), ShuffleSource(seed, "hand").chance(new_game(rules)))
        ended = _play_hand_out(crafted(start, **{field: value}), seed)
        assert ended.results, "the hand did not end"
        res = ended.result
        assert res is not None
        if res.end is GameEnd.CHINCHON:
            continue  # the rules ended it first
        assert res.end is GameEnd.LENGTH_LIMIT
        low = min(res.totals)
        assert res.winners == tuple(s for s, t in enumerate(res.totals) if t == low)
        return
    raise AssertionError("every hand was a chinchón")
