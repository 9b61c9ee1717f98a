"""The sample StrongBot beats GreedyBot by a real margin, and always plays legally.

A duplicate match: every deal is played twice with the seats swapped (same seed, same
deal id), so the luck of the cards cancels out. The seeds are fixed, so the test is
deterministic. The full-size measurement is ``bench/bot_strength.py``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from chinchon.engine import (  # noqa: E402
    DEFAULT_RULES,
    Action,
    Bot,
    GreedyBot,
    Observation,
    RandomBot,
    RuleSet,
    play_game,
)

from sample_bots.python.strong_bot import StrongBot  # noqa: E402

#: Deals of the match against GreedyBot; each is played twice (seats swapped).
DEALS = 40
SEED = "sample-bot-strength"


class CheckedBot:
    """Wraps a bot: every action must be one of the legal actions; times decisions."""

    def __init__(self, bot: StrongBot) -> None:
        self.bot = bot
        self.name = bot.name
        self.decisions = 0
        self.cpu = 0.0

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        t = time.process_time()
        action = self.bot.choose(obs, legal)
        self.cpu += time.process_time() - t
        self.decisions += 1
        assert action in legal, f"illegal action {action} (legal: {[str(a) for a in legal]})"
        return action


def wilson_lower(successes: float, n: int, z: float) -> float:
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half


def duplicate_match(
    opponent: Callable[[int], Bot], deals: int, seed: str, rules: RuleSet = DEFAULT_RULES
) -> tuple[float, int, int, float]:
    """StrongBot's score (1 a win, 1/2 a shared draw), the games played, its decisions
    and the CPU seconds they took."""
    score = 0.0
    games = 0
    decisions = 0
    cpu = 0.0
    for i in range(deals):
        for strong_seat in (0, 1):
            strong = CheckedBot(StrongBot(seed=i, strict=True))
            other = opponent(i)
            bots = [strong, other] if strong_seat == 0 else [other, strong]
            state, _ = play_game(rules, bots, seed, f"deal-{i}")
            assert state.result is not None
            if strong_seat in state.result.winners:
                score += 1.0 / len(state.result.winners)
            games += 1
            decisions += strong.decisions
            cpu += strong.cpu
    return score, games, decisions, cpu


def test_strong_beats_greedy_by_a_real_margin() -> None:
    score, games, decisions, cpu = duplicate_match(lambda i: GreedyBot(), DEALS, SEED)
    rate = score / games
    lower = wilson_lower(score, games, z=1.645)  # 90% two-sided interval
    assert rate > 0.5
    assert lower > 0.5, f"win rate {rate:.1%} over {games} games, 90% lower bound {lower:.1%}"
    # Fast: well under 5 ms of CPU per decision on average.
    assert cpu / decisions < 0.005, f"{1000 * cpu / decisions:.2f} ms per decision"


def test_strong_beats_random() -> None:
    score, games, _, _ = duplicate_match(RandomBot, 5, SEED + "-random")
    assert score == games


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet(jokers=2),
        RuleSet(deck=48, jokers=1),
        RuleSet(players=3, jokers=1),
        RuleSet(close_max_unmatched=2, close_max_points=10, open_discard=True),
        RuleSet(close_max_unmatched=0),
        RuleSet(open_discard=False),
        RuleSet(retake_discard=True, figure_points="10-10-10"),
    ],
    ids=["jokers", "deck48", "three-players", "loose-close", "full-close", "closed-pile", "retake"],
)
def test_strong_plays_legally_under_other_rules(rules: RuleSet) -> None:
    """Strict mode raises on any internal error; CheckedBot asserts legality."""
    for i in range(2):
        checked = CheckedBot(StrongBot(seed=i, strict=True))
        others = [GreedyBot() for _ in range(rules.players - 1)]
        bots = [checked, *others] if i == 0 else [*others, checked]
        state, _ = play_game(rules, bots, "other-rules", f"deal-{i}")
        assert state.is_over
        assert checked.decisions > 0


def test_strong_is_deterministic() -> None:
    records = []
    for _ in range(2):
        _, record = play_game(DEFAULT_RULES, [StrongBot(seed=3), GreedyBot()], "det", "d")
        records.append(record)
    assert records[0] == records[1]


# -- the other sample bots ----------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [RuleSet(), RuleSet(jokers=2), RuleSet(players=3, jokers=1),
     RuleSet(close_max_unmatched=2, close_max_points=10), RuleSet(open_discard=False)],
    ids=["default", "jokers", "three-players", "loose-close", "closed-pile"],
)
def test_sample_greedy_bot_plays_as_the_engines_greedy(rules: RuleSet) -> None:
    """sample_bots/python/greedy_bot.py, written out for bot authors to read, makes the
    same choice as the engine's GreedyBot (the house bot "greedy") at every decision of
    games between greedy and random players, closes included."""
    from chinchon.engine import Close, ShuffleSource, apply, legal_actions, new_game, observation

    from sample_bots.python.greedy_bot import GreedyBot as SampleGreedy

    sample, engine = SampleGreedy(), GreedyBot()
    compared = closes = 0
    for g in range(12):
        players = [engine if (s + g) % 2 else RandomBot(seed=g) for s in range(rules.players)]
        state, source = new_game(rules), ShuffleSource("sample-greedy", f"{g}")
        while not state.is_over:
            if state.is_chance:
                state = apply(state, source.chance(state))
                continue
            seat = state.to_act
            obs, legal = observation(state, seat), legal_actions(state)
            want = engine.choose(obs, legal)
            assert sample.choose(obs, legal) == want, (str(want), [str(a) for a in legal])
            compared += 1
            closes += isinstance(want, Close)
            state = apply(state, players[seat].choose(obs, legal), seat=seat)
    assert compared > 500 and closes > 0


def test_sample_random_bot_plays_legally() -> None:
    from sample_bots.python.random_bot import RandomBot as SampleRandom

    for i in range(3):
        checked = CheckedBot(SampleRandom(seed=i))  # type: ignore[arg-type]
        state, _ = play_game(DEFAULT_RULES, [checked, GreedyBot()], "sample-random", f"d{i}")
        assert state.is_over and checked.decisions > 0
