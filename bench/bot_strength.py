"""How strong is the sample StrongBot? Duplicate-deal matches against the engine bots.

Plays ``--games`` games (default 400) of StrongBot against GreedyBot, then against
RandomBot, with the default rules. Games come in duplicate pairs: each deal (same seed,
same deal id) is played twice with the seats swapped, so the luck of the cards cancels
out. Prints StrongBot's win rate with a 95% Wilson interval, its margin over 50%, the
mean final-score margin and the mean time StrongBot takes per decision.

    python bench/bot_strength.py                 # 400 games per opponent
    python bench/bot_strength.py --games 100 --jobs 2 --seed 7
    python bench/bot_strength.py --opponents greedy --param feed_w=8
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from chinchon.engine import DEFAULT_RULES, GreedyBot, RandomBot, play_game  # noqa: E402
from chinchon.engine.actions import Action  # noqa: E402
from chinchon.engine.observation import Observation  # noqa: E402

from sample_bots.python.strong_bot import StrongBot  # noqa: E402


class TimedBot:
    """Wraps a bot: times each decision and checks it is one of the legal actions."""

    def __init__(self, bot: object) -> None:
        self.bot = bot
        self.name = bot.name  # type: ignore[attr-defined]
        self.decisions = 0
        self.seconds = 0.0
        self.cpu = 0.0
        self.illegal = 0

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        t = time.perf_counter()
        c = time.process_time()
        action = self.bot.choose(obs, legal)  # type: ignore[attr-defined]
        self.cpu += time.process_time() - c
        self.seconds += time.perf_counter() - t
        self.decisions += 1
        if action not in legal:
            self.illegal += 1
        return action


@dataclass
class PairResult:
    score: float  # StrongBot's points over the two games: 1 a win, 0.5 a shared draw
    margin: int  # opponent's final total minus StrongBot's, summed over both games
    decisions: int
    seconds: float
    cpu: float
    illegal: int


def make_opponent(kind: str, seed: int) -> object:
    if kind == "greedy":
        return GreedyBot()
    if kind == "random":
        return RandomBot(seed)
    if kind == "strong":
        return StrongBot(seed)
    raise ValueError(f"unknown opponent {kind}")


def play_pair(args: tuple[str, str, int, dict[str, float]]) -> PairResult:
    """Play one deal twice, StrongBot in seat 0 then seat 1."""
    opponent, seed, index, params = args
    deal_id = f"deal-{index}"
    total = 0.0
    margin = 0
    decisions = 0
    seconds = 0.0
    cpu = 0.0
    illegal = 0
    for strong_seat in (0, 1):
        strong = TimedBot(StrongBot(seed=index, strict=True, **params))
        other = make_opponent(opponent, index)
        bots = [strong, other] if strong_seat == 0 else [other, strong]
        state, _ = play_game(DEFAULT_RULES, bots, seed, deal_id)
        result = state.result
        assert result is not None
        if strong_seat in result.winners:
            total += 1.0 / len(result.winners)
        margin += result.totals[1 - strong_seat] - result.totals[strong_seat]
        decisions += strong.decisions
        seconds += strong.seconds
        cpu += strong.cpu
        illegal += strong.illegal
    return PairResult(total, margin, decisions, seconds, cpu, illegal)


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion (successes may be fractional for draws)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (centre - half, centre + half)


@dataclass
class MatchResult:
    opponent: str
    games: int
    score: float
    margin: int
    decisions: int
    seconds: float
    cpu: float
    illegal: int

    @property
    def rate(self) -> float:
        return self.score / self.games

    def ci(self, z: float = 1.96) -> tuple[float, float]:
        return wilson(self.score, self.games, z)

    @property
    def ms_per_decision(self) -> float:
        """Wall-clock milliseconds per decision (inflated when the machine is busy)."""
        return 1000 * self.seconds / max(1, self.decisions)

    @property
    def cpu_ms_per_decision(self) -> float:
        """CPU milliseconds per decision."""
        return 1000 * self.cpu / max(1, self.decisions)


def match(
    opponent: str,
    games: int,
    seed: str = "bot-strength",
    jobs: int = 1,
    params: dict[str, float] | None = None,
    first_deal: int = 0,
) -> MatchResult:
    pairs = (games + 1) // 2
    tasks = [(opponent, seed, first_deal + i, dict(params or {})) for i in range(pairs)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            results = list(ex.map(play_pair, tasks, chunksize=4))
    else:
        results = [play_pair(t) for t in tasks]
    return MatchResult(
        opponent,
        2 * pairs,
        sum(r.score for r in results),
        sum(r.margin for r in results),
        sum(r.decisions for r in results),
        sum(r.seconds for r in results),
        sum(r.cpu for r in results),
        sum(r.illegal for r in results),
    )


def report(m: MatchResult) -> str:
    lo, hi = m.ci()
    return (
        f"strong vs {m.opponent:<6}: {m.games} games, win rate {m.rate:.1%} "
        f"(95% CI {lo:.1%}-{hi:.1%}), margin {100 * (m.rate - 0.5):+.1f} points over 50%, "
        f"mean final-score margin {m.margin / m.games:+.1f}, "
        f"{m.ms_per_decision:.3f} ms/decision ({m.cpu_ms_per_decision:.3f} ms CPU), "
        f"illegal actions {m.illegal}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=400, help="games per opponent (even)")
    ap.add_argument("--seed", default="bot-strength", help="secret seed of the deals")
    ap.add_argument("--first-deal", type=int, default=0, help="number of the first deal")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--opponents", default="greedy,random", help="comma-separated: greedy, random, strong")
    ap.add_argument("--param", action="append", default=[], help="StrongBot weight, e.g. feed_w=8")
    args = ap.parse_args(argv)
    params = {}
    for p in args.param:
        k, _, v = p.partition("=")
        params[k.strip()] = float(v)
    code = 0
    for opponent in args.opponents.split(","):
        t = time.perf_counter()
        m = match(opponent.strip(), args.games, args.seed, args.jobs, params, args.first_deal)
        print(report(m) + f"  [{time.perf_counter() - t:.0f} s]", flush=True)
        if m.illegal:
            code = 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
