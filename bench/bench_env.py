"""The training environment (chinchon.env) against the engine's raw self-play, side by
side in one run.

    python bench/bench_env.py               # 5 rounds, ~1 minute
    python bench/bench_env.py --rounds 3 --games 10

Each contestant plays uniformly random legal actions in whole games of the default rules
(2 players, to 100 points), on the same game seeds:

* **engine**: ``legal_actions`` + ``apply`` with chance from ``ShuffleSource`` (as
  bench_engine.py's self-play);
* **env, step only**: ``ChinchonEnv.step`` with a random index of the legal ones, no
  observation asked for (what stepping costs: the space's codec, legality, the chance);
* **env**: ``last()`` (the observation array and the action mask) then ``step`` with a
  random index of the mask, as a learner runs it.

Decisions (player actions; chance steps not counted) per second of CPU time; each
round runs the contestants one after another, the median over rounds is reported, and
the ratio of the env's rate to the engine's in each round.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from collections.abc import Callable

import numpy as np
from chinchon.engine import RuleSet, ShuffleSource, apply, legal_actions, new_game
from chinchon.env import raw_env

CLOCK = time.process_time
RULES = RuleSet()


def engine_games(seeds: range) -> int:
    decisions = 0
    for seed in seeds:
        rng = random.Random(seed)
        source = ShuffleSource(seed.to_bytes(8, "big"), "env")
        state = new_game(RULES)
        while not state.is_over:
            if state.is_chance:
                state = apply(state, source.chance(state))
                continue
            state = apply(state, rng.choice(legal_actions(state)), seat=state.to_act)
            decisions += 1
    return decisions


def env_step_only(seeds: range) -> int:
    decisions = 0
    env = raw_env(rules=RULES)
    for seed in seeds:
        rng = random.Random(seed)
        env.reset(seed=seed)
        while not env.state_now.is_over:
            env.step(rng.choice(env.legal_now))
            decisions += 1
    return decisions


def env_games(seeds: range) -> int:
    decisions = 0
    env = raw_env(rules=RULES)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            decisions += 1
    return decisions


CONTESTANTS: dict[str, Callable[[range], int]] = {
    "engine": engine_games, "env, step only": env_step_only, "env": env_games}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--games", type=int, default=20, help="games per contestant per round")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}; {args.games} games a round, {args.rounds} rounds")
    seeds = range(args.games)
    for run in CONTESTANTS.values():  # warm up: the solver's tables, imports
        run(range(1))
    rates: dict[str, list[float]] = {name: [] for name in CONTESTANTS}
    for r in range(args.rounds):
        for name, run in CONTESTANTS.items():
            t0 = CLOCK()
            n = run(seeds)
            rates[name].append(n / (CLOCK() - t0))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}/s" for k, v in rates.items()),
              flush=True)
    base = rates["engine"]
    print("\n| contestant | decisions/s (median) | vs engine (median; per round) |\n|---|---:|---:|")
    for name, v in rates.items():
        ratios = [x / b for x, b in zip(v, base, strict=True)]
        print(f"| {name} | {statistics.median(v):,.0f} | {statistics.median(ratios):.3f}x "
              f"({', '.join(f'{x:.3f}' for x in ratios)}) |")


if __name__ == "__main__":
    main()
