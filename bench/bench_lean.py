"""Lean requests against full ones, side by side in one run (docs/benchmarks.md, "Lean
requests").

    python bench/bench_lean.py                 # 40 games; 3 x 2 tournaments of 4 SDK bots
    python bench/bench_lean.py --quick         # 10 games; 2 x 2 small tournaments
    python bench/bench_lean.py --no-tournament # the first two figures only (~20 s)

1. Request size: whole games between the engine's greedy bots (2 and 3 players, fixed
   seeds) are played once and every decision kept; each one's ActionRequest is encoded
   as the referee writes it, in full mode and in lean mode (one stream per seat). The
   mean ``PlayResponse`` bytes of each, and the part of a full request lean mode leaves
   out.
2. SDK decode: per request, what the Python SDK does before the bot's ``choose``:
   parse the ``PlayResponse`` and build the engine's Observation, with
   ``observation_from_wire`` (full mode) or a ``LeanDecoder`` fed the lean requests and
   the ``HandEnded`` messages (lean mode). Repetitions alternate the two; the best of
   each is kept (process CPU time).
3. Tournament throughput: the round-robin of bench_tournament.py between SDK bot
   processes (``python -m chinchon.sdk --bot greedy``, one per stream), with full
   observations (``--full-observations``) and lean ones, same seed and tournament id
   (so the same deals and, the bots being deterministic, the same games), alternated.
   Reported: games/s and CPU (referee + bots) per decision of each run, and lean/full
   of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

from chinchon.engine import (
    GreedyBot,
    Observation,
    RuleSet,
    ShuffleSource,
    apply,
    legal_actions,
    new_game,
    observation,
)
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import LeanDecoder, RequestEncoder, hand_result_to_wire, observation_from_wire

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

Message = tuple[str, bytes]  # ("request" | "hand_ended", encoded PlayResponse)


def play(games: int) -> list[tuple[int, list[tuple[Observation, list]], RuleSet]]:
    """Greedy games: per game, the players, each decision's view and legal actions."""
    out = []
    for gi in range(games):
        players = 2 if gi % 4 else 3
        rules = RuleSet(players=players, jokers=gi % 3)
        state = new_game(rules)
        source = ShuffleSource("bench-lean", f"g{gi}")
        names = [f"bot{i}" for i in range(players)]
        bot = GreedyBot()
        decisions = []
        while not state.is_over:
            if state.is_chance:
                state = apply(state, source.chance(state))
                continue
            seat = state.to_act
            legal = legal_actions(state)
            view = observation(state, seat, names)
            decisions.append((view, legal))
            state = apply(state, bot.choose(view, legal), seat=seat)
        out.append((players, decisions, rules))
    return out


def streams(games: list, lean: bool) -> list[list[Message]]:
    """What each seat's stream reads of each game: its requests and the hand results."""
    out = []
    for gi, (players, decisions, rules) in enumerate(games):
        enc = RequestEncoder(f"g-{gi}", rules)
        per_seat: list[list[Message]] = [[] for _ in range(players)]
        tokens = [object() for _ in range(players)]
        results_sent = 0
        for rid, (view, legal) in enumerate(decisions, 1):
            for hr in view.past_hands[results_sent:]:
                raw = pb.PlayResponse(hand_ended=pb.HandEnded(
                    game_id=f"g-{gi}", result=hand_result_to_wire(hr))).SerializeToString()
                for s in per_seat:
                    s.append(("hand_ended", raw))
            results_sent = len(view.past_hands)
            if lean:
                obs, delta = enc.lean(view, tokens[view.seat])
            else:
                obs, delta = enc.observation(view), b""
            per_seat[view.seat].append(("request", enc.request(
                rid, obs, enc.legal(legal), 1.0, 30.0, 0, b"", delta)))
        out.extend(per_seat)
    return out


def decode_full(stream: list[Message]) -> None:
    for kind, raw in stream:
        msg = pb.PlayResponse.FromString(raw)
        if kind == "request":
            observation_from_wire(msg.action_request.observation)


def decode_lean(stream: list[Message]) -> None:
    dec = LeanDecoder()
    for kind, raw in stream:
        msg = pb.PlayResponse.FromString(raw)
        if kind == "request":
            dec.observation(msg.action_request)
        else:
            dec.hand_ended(msg.hand_ended)


def wire_figures(games: int, reps: int) -> dict[str, float]:
    played = play(games)
    full, lean = streams(played, False), streams(played, True)
    sizes = {name: [len(raw) for s in ss for kind, raw in s if kind == "request"]
             for name, ss in (("full", full), ("lean", lean))}
    # The games of the default rule set (2 players, no jokers), whose streams are the
    # two after those of the games before.
    plain = [i for i, (players, _, rules) in enumerate(played)
             if players == 2 and rules.jokers == 0]
    firsts = [sum(p for p, _, _ in played[:i]) for i in range(len(played))]
    plain_sizes = {name: [len(raw) for i in plain for s in ss[firsts[i]:firsts[i] + 2]
                          for kind, raw in s if kind == "request"]
                   for name, ss in (("full", full), ("lean", lean))}
    n = len(sizes["full"])
    # The lean decoder rebuilds exactly what observation_from_wire makes of a full one.
    for f, ln in zip(full, lean, strict=True):
        dec = LeanDecoder()
        for (kind, a), (_, b) in zip(f, ln, strict=True):
            ma, mb = pb.PlayResponse.FromString(a), pb.PlayResponse.FromString(b)
            if kind == "request":
                assert dec.observation(mb.action_request) == observation_from_wire(
                    ma.action_request.observation)
            else:
                dec.hand_ended(mb.hand_ended)
    times: dict[str, list[float]] = {"full": [], "lean": []}
    for _ in range(reps):
        for name, f, ss in (("full", decode_full, full), ("lean", decode_lean, lean)):
            t = time.process_time()
            for s in ss:
                f(s)
            times[name].append((time.process_time() - t) / n * 1e6)
    decisions = sum(len(d) for _, d, _ in played)
    return {
        "games": games, "requests": n, "decisions_per_game": decisions / games,
        "bytes_full": statistics.mean(sizes["full"]), "bytes_lean": statistics.mean(sizes["lean"]),
        "bytes_full_default_rules": statistics.mean(plain_sizes["full"]),
        "bytes_lean_default_rules": statistics.mean(plain_sizes["lean"]),
        "decode_us_full": min(times["full"]), "decode_us_lean": min(times["lean"]),
        "decode_us_full_median": statistics.median(times["full"]),
        "decode_us_lean_median": statistics.median(times["lean"]),
    }


def tournament_figures(rounds: int, gpp: int, bots: int, concurrency: int) -> dict[str, list[float]]:
    from harness.tournament import run_one

    base = [sys.executable, "-m", "chinchon.sdk", "--bot", "greedy"]
    modes = {"full": [*base, "--full-observations"], "lean": base}
    out: dict[str, list[float]] = {"full": [], "lean": [], "full_cpu_us": [], "lean_cpu_us": []}
    order = ["full", "lean"]
    for r in range(rounds):
        for mode in order if r % 2 == 0 else order[::-1]:
            res = asyncio.run(run_one(
                concurrency, gpp, bots, 1800, 600, command=modes[mode], tid="t-bench-lean"))
            odd = {k: v for k, v in res["terminations"].items()
                   if k not in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")}
            out[mode].append(res["games_per_s"])
            cpu = (res["referee_cpu"] + res["bots_cpu"]) * res["wall"] / max(1, res["decisions"])
            out[mode + "_cpu_us"].append(cpu * 1e6)
            print(f"  round {r + 1} {mode}: {res['games']} games, {res['decisions']:,} decisions "
                  f"in {res['wall']:.1f} s, "
                  f"{res['games_per_s']:.3f} games/s, {cpu * 1e6:,.0f} us CPU per decision, "
                  f"referee CPU {res['referee_cpu']:.0%}, bots CPU {res['bots_cpu']:.0%}, "
                  f"timeouts {res['timeouts']}{', ' + str(odd) if odd else ''}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-tournament", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="tournaments of each mode")
    ap.add_argument("--games-per-pairing", type=int, default=4)
    ap.add_argument("--bots", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    if args.quick:
        args.games, args.reps, args.rounds, args.games_per_pairing = 10, 3, 2, 2
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}", flush=True)
    w = wire_figures(args.games, args.reps)
    print(f"{w['games']} greedy games (2 and 3 players, 0-2 jokers), {w['requests']:,} requests, "
          f"{w['decisions_per_game']:.0f} decisions per game")
    print(f"mean ActionRequest          full {w['bytes_full']:7.0f} B   lean {w['bytes_lean']:7.0f} B"
          f"   lean/full {w['bytes_lean'] / w['bytes_full']:.2f}")
    print(f"  default rules (2 players) full {w['bytes_full_default_rules']:7.0f} B   "
          f"lean {w['bytes_lean_default_rules']:7.0f} B")
    print(f"SDK decode per request      full {w['decode_us_full']:7.1f} us  "
          f"lean {w['decode_us_lean']:7.1f} us  "
          f"lean/full {w['decode_us_lean'] / w['decode_us_full']:.2f}   (best of {args.reps}; "
          f"medians {w['decode_us_full_median']:.1f} / {w['decode_us_lean_median']:.1f} us)",
          flush=True)
    if args.no_tournament:
        return 0
    pairs = args.bots * (args.bots - 1) // 2
    print(f"tournaments: {args.bots} SDK greedy bots, {pairs} pairings x {args.games_per_pairing} "
          f"games, concurrency {args.concurrency} (one bot process per stream), "
          f"{args.rounds} of each mode, alternated", flush=True)
    t = tournament_figures(args.rounds, args.games_per_pairing, args.bots, args.concurrency)
    mf, ml = statistics.median(t["full"]), statistics.median(t["lean"])
    print(f"SDK-bot tournament games/s  full {mf:7.3f}     lean {ml:7.3f}     lean/full {ml / mf:.2f}"
          f"   (medians; runs {' '.join(f'{x:.3f}' for x in t['full'])} / "
          f"{' '.join(f'{x:.3f}' for x in t['lean'])})")
    cf, cl = statistics.median(t["full_cpu_us"]), statistics.median(t["lean_cpu_us"])
    print(f"CPU per decision (all)      full {cf:7.0f} us  lean {cl:7.0f} us  lean/full {cl / cf:.2f}"
          "   (referee + bots, medians)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
