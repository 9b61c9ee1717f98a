"""Train the sample linear policy (env_policy_bot.py) in the training environment against
the engine's random bot, and show it improving.

    pip install './client_sdk[env]'
    python sample_bots/python/train_env.py              # ~20 s; writes env_policy.json
    python sample_bots/python/train_env.py --out my.json --generations 10

A cross-entropy search over the policy's weights (numpy only): each generation draws
candidates around the mean, plays each against the random bot on the same seeded games,
and moves the mean to the best. Before and after, the win rate over the same fixed
evaluation games (their own seeds) is printed: the untrained policy (all weights zero)
plays uniformly at random over the legal actions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from chinchon.engine import RandomBot, RuleSet
from chinchon.env import raw_env

sys.path.insert(0, str(Path(__file__).resolve().parent))
from env_policy_bot import DEFAULT_FILE, FEATURES, LinearPolicy


def win_rate(weights: np.ndarray, seeds: range, rules: RuleSet) -> float:
    """The policy's wins (draws half) in seat 0 against the random bot in seat 1, one
    game per seed: the deal, the random bot's and the policy's tie-breaks all seeded."""
    score = 0.0
    for seed in seeds:
        policy = LinearPolicy(weights, rules.players, seed=seed)
        env = raw_env(rules=rules, opponents={1: RandomBot(seed)})
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                score += (reward + 1) / 2
                env.step(None)
            else:
                env.step(policy.act(obs))
    return score / len(seeds)


def train(generations: int, population: int, games: int, rules: RuleSet, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mean = np.zeros(len(FEATURES))
    spread = np.ones(len(FEATURES))
    elite = max(2, population // 4)
    for g in range(generations):
        seeds = range(1000 + g * games, 1000 + (g + 1) * games)
        cands = mean + spread * rng.standard_normal((population, len(FEATURES)))
        scores = np.array([win_rate(c, seeds, rules) for c in cands])
        best = cands[np.argsort(-scores)[:elite]]
        mean, spread = best.mean(axis=0), best.std(axis=0) + 0.05
        print(f"generation {g + 1}: best {scores.max():.2f}, mean {scores.mean():.2f}", flush=True)
    return mean


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=6)
    ap.add_argument("--population", type=int, default=10)
    ap.add_argument("--games", type=int, default=6, help="games per candidate")
    ap.add_argument("--eval-games", type=int, default=60)
    ap.add_argument("--score-limit", type=int, default=50,
                    help="shorter games train faster (the referee's default is 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DEFAULT_FILE)
    args = ap.parse_args(argv)
    rules = RuleSet(score_limit=args.score_limit)
    evaluation = range(args.eval_games)
    start = time.perf_counter()
    before = win_rate(np.zeros(len(FEATURES)), evaluation, rules)
    print(f"before training: win rate {before:.2f} over {args.eval_games} games vs random", flush=True)
    weights = train(args.generations, args.population, args.games, rules, args.seed)
    after = win_rate(weights, evaluation, rules)
    print(f"after training: win rate {after:.2f} over {args.eval_games} games vs random")
    LinearPolicy(weights, rules.players).save(args.out)
    print(f"saved {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
