"""`chinchon match` against in-process play: games/s of the same bots, in one run.

Two fast bots that answer at once (the fast raw bot of bench/harness/fastbots.py: the first
legal action, no SDK, launched by the match as a command: ``bench_match.py bot``) play
``--pairs`` duplicate pairs through ``chinchon match`` (its code called in this process:
the private referee, the director and its SQLite database in a temporary folder, the
bots over gRPC) at ``--concurrency``; then the engine's in-process ``play_game`` plays
the same number of games between two bots of the same policy (first legal action), on
one core, no referee. Printed: both games/s and their ratio, and the referee's share of
the match's wall time (the CPU time of this process, which is the referee, while the
match ran, over the wall time; the bots are processes of their own).

    python bench/bench_match.py                      # 300 pairs, --concurrency 2
    python bench/bench_match.py --pairs 100 --concurrency 2 --profile match.prof
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def bot_main(argv: list[str]) -> int:
    """A match's bot: the fast raw bot, its token from CHINCHON_TOKEN."""
    from chinchon_referee.host.fdlimit import raise_nofile
    from harness.fastbots import fast_bots

    ap = argparse.ArgumentParser(prog="bench_match.py bot")
    ap.add_argument("--target", required=True)
    a = ap.parse_args(argv)
    raise_nofile()
    asyncio.run(fast_bots(a.target, [(os.environ["CHINCHON_TOKEN"], 1)], 50, 3600))
    return 0


def in_process(games: int) -> float:
    """games/s of ``play_game`` between two first-legal-action bots."""
    from chinchon.engine import RuleSet, play_game

    class First:
        name = "first"

        def choose(self, obs: Any, legal: Any) -> Any:
            return legal[0]

    rules = RuleSet()
    t = time.perf_counter()
    for i in range(games):
        play_game(rules, [First(), First()], "bench-seed", deal_id=f"d{i}")
    return games / (time.perf_counter() - t)


def match(pairs: int, concurrency: int, out: Path, profile: str | None) -> dict[str, Any]:
    from chinchon_referee.cli.match import plan_of, register, run_match

    ap = argparse.ArgumentParser()
    register(ap.add_subparsers())
    bot = f"{sys.executable} {HERE / 'bench_match.py'} bot"
    args = ap.parse_args(["match", "--candidate", bot, "--baseline", bot, "--games", str(pairs),
                          "--concurrency", str(concurrency), "--out", str(out), "--quiet",
                          "--seed", "bench-seed"])
    plan = plan_of(args)
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    code = asyncio.run(run_match(plan, args))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile or "")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    seconds = summary["end"]["seconds"]
    games = summary["opponents"]["baseline"]["games"]
    return {"exit": code, "games": games, "games_per_s": games / seconds,
            "seconds_playing": seconds, "wall_with_start": wall,
            "referee_cpu_share": cpu / wall}


def main() -> int:
    if sys.argv[1:2] == ["bot"]:
        return bot_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--profile", help="write a cProfile of the match (the referee) here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        m = match(a.pairs, a.concurrency, Path(tmp) / "m", a.profile)
    local = in_process(m["games"])
    print(f"chinchon match (--concurrency {a.concurrency}, {m['games']} games over gRPC): "
          f"{m['games_per_s']:.1f} games/s")
    print(f"in-process play_game (same policy, same games): {local:.1f} games/s")
    print(f"ratio: {m['games_per_s'] / local:.2f}x of in-process")
    print(f"referee's share of the match's wall time (its CPU): {m['referee_cpu_share']:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
