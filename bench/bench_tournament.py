"""Tournament throughput: a 6-bot round-robin run by the Director, at several concurrencies.

For each concurrency: a fresh in-process referee (``Referee`` + ``start_server`` on
127.0.0.1, port 0) with a ``Director`` on a ``SqliteStore`` in a temporary folder, a
round-robin of 6 bots (15 pairings x ``--games-per-pairing`` games, duplicate deals,
the default 1 s + 30 s clock), and 6 bot processes: the fast raw bot of
bench/bench_server.py (first legal action, no SDK), each offering as many streams as
the concurrency so that streams never limit it. Measured: the wall time of
``Director.run`` (bots already connected), games/s, decisions/s, the speed-up against
concurrency 1, and the CPU use of the referee process and of the bots; and the time the
event loop spent inside store calls (each call timed when it runs on the loop's thread:
the longest, and the total per game), the figure behind "storage never blocks the loop".
The referee runs as ``chinchon serve`` runs it: on uvloop where installed (``--loop``)
and with its garbage-collector settings (``tune_gc``).

    python bench/bench_tournament.py                            # 100 games per pairing, c = 1 2 4 8
    python bench/bench_tournament.py --quick                    # 4 games per pairing
    python bench/bench_tournament.py --games-per-pairing 20 --concurrency 1 2 4 8
    python bench/bench_tournament.py --games-per-pairing 100 --concurrency 4
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from harness.tournament import run_one


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games-per-pairing", type=int, default=100)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--bots", type=int, default=6)
    ap.add_argument("--quick", action="store_true", help="4 games per pairing")
    ap.add_argument("--timeout", type=float, default=3600,
                    help="give up on one tournament after this many seconds")
    ap.add_argument("--progress", type=float, default=60.0,
                    help="print progress to stderr every this many seconds")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--postgres", metavar="URL",
                    help="also run each concurrency on PostgreSQL (a new database on this "
                    "server each time; its user must be allowed to create databases)")
    ap.add_argument("--loop", default="auto", choices=("auto", "uvloop", "asyncio"),
                    help="the event loop (auto: uvloop where installed, as chinchon serve)")
    args = ap.parse_args()
    from chinchon_referee.service.server import use_loop

    loop = use_loop(args.loop)
    gpp = 4 if args.quick else args.games_per_pairing
    pairs = args.bots * (args.bots - 1) // 2
    print(f"{args.bots} bots, {pairs} pairings x {gpp} games = {pairs * gpp} games per run; "
          f"concurrency {' '.join(map(str, args.concurrency))}; {loop} loop; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    backends = ["sqlite", "postgres"] if args.postgres else ["sqlite"]
    for c in args.concurrency:
        for backend in backends:  # the backends one after the other, same work
            r = asyncio.run(run_one(c, gpp, args.bots, args.timeout, args.progress,
                                    postgres=args.postgres if backend == "postgres" else None))
            r["backend"] = backend
            rows.append(r)
            print(f"  c={c} {backend}: {r['games']} games in {r['wall']:.1f} s", flush=True)
    base = next((r for r in rows if r["concurrency"] == 1 and r["backend"] == "sqlite"), None)
    print()
    head = (f"{'store':>8} {'conc':>4} {'games':>6} {'wall s':>8} {'games/s':>8} {'speed-up':>8} "
            f"{'decisions/s':>11} {'referee CPU':>11} {'bots CPU':>8} {'games/ref-CPU-s':>15}  unusual")
    print(head)
    for r in rows:
        sp = f"{r['games_per_s'] / base['games_per_s']:.2f}x" if base else "-"
        odd = {k: v for k, v in r["terminations"].items()
               if k not in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")}
        unusual = ", ".join(f"{k} {v}" for k, v in odd.items())
        if r["timeouts"] or r["illegal"]:
            unusual += f" timeouts {r['timeouts']} illegal {r['illegal']}"
        print(f"{r['backend']:>8} {r['concurrency']:>4} {r['games']:>6} {r['wall']:>8.1f} "
              f"{r['games_per_s']:>8.2f} "
              f"{sp:>8} {r['decisions_per_s']:>11,.0f} {r['referee_cpu']:>11.0%} "
              f"{r['bots_cpu']:>8.0%} {r['games_per_s'] / r['referee_cpu']:>15.2f}  "
              f"{unusual or 'none'}")
    for r in rows:
        print(f"{r['backend']} c={r['concurrency']}: games/s over the first / last tenth of the games "
              f"{r['first_tenth_games_per_s']:.2f} / {r['last_tenth_games_per_s']:.2f}; "
              f"Director.counts() with every game stored: {r['counts_ms_at_end']:.0f} ms "
              "(run on every progress event, 2 per game)")
        print(f"{r['backend']} c={r['concurrency']}: store calls on the event loop while playing: "
              f"{r['store_on_loop_calls']}, the longest {r['store_on_loop_ms_max']:.2f} ms, "
              f"{r['store_on_loop_ms_per_game']:.2f} ms per game")
        print(f"{r['backend']} c={r['concurrency']}: database "
              f"{r['db_bytes_per_game'] / 1000:.1f} kB per game "
              f"(records' JSON {r['record_json_bytes_per_game'] / 1000:.1f} kB per game)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
