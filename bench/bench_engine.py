"""Engine benchmarks: the solver, random self-play and record replay, beside their peers.

    python bench/bench_engine.py            # ~20-40 s
    python bench/bench_engine.py --quick    # smaller workloads, fewer repetitions

What is measured (every workload is deterministic: seeded ``random.Random``, fixed
shuffle seeds; each one runs once to warm up, then ``--reps`` times with the
contestants interleaved, and the median rate is reported):

1. **Solver.** Least unmatched points (deadwood) of random 7- and 8-card hands from the
   40-card Spanish deck, ``solver_for(rules).deadwood(mask)``. The same hands go to
   OpenSpiel's C++ ``GinRummyUtils.min_deadwood`` (10 ranks x 4 suits, hand size 10 so
   that 7-8 cards are scored as they are: no discard), called from Python, and to
   RLCard's meld enumeration. The 40-card deck maps one to one onto a gin rummy deck
   with ranks A-10 (same runs, same card points), so all three must agree on every
   hand; the script checks it. Then hands from the 42-card deck with two jokers (ours
   only: the peers have no jokers).
2. **Random self-play** through the public API: ``legal_actions`` + ``apply`` (the
   checked path) with chance actions from ``ShuffleSource``, a uniformly random legal
   action at each decision. Steps count chance actions too; decisions are the player
   actions. OpenSpiel's ``gin_rummy`` (``pyspiel.load_game``, random legal actions and
   random chance outcomes; dealing and stock draws are chance nodes there) and RLCard's
   ``GinRummyGame`` (dealing happens inside ``init_game``) play the same way.
3. **Replay** of game records (``record.replay``: JSON actions parsed, every action
   checked, results compared): records of GreedyBot vs RandomBot games (a close nearly
   every hand) and of RandomBot vs RandomBot games (long hands, few closes).

Peers are optional (``pip install -e '.[bench]'``); without them the script prints our
absolute figures and says which peer is missing.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chinchon.engine import (
    GreedyBot,
    RandomBot,
    RuleSet,
    ShuffleSource,
    apply,
    deck_cards,
    legal_actions,
    new_game,
    play_game,
    solver_for,
)
from chinchon.engine.record import replay

#: The process's CPU time: on a machine shared with other work (a load average of 3 to
#: 12 on two cores is usual here), wall time measures the neighbours as much as us.
CLOCK = time.process_time
Counts = dict[str, int]
Workload = Callable[[], Counts]

# The goals the figures are checked against (docs/benchmarks.md).
SOLVER_VS_OPENSPIEL = 1.0  # best_arrangement against best_meld_group
DEADWOOD_VS_OPENSPIEL = 2.0  # deadwood against min_deadwood
SOLVER_JOKERS_PER_S = 200_000
SELFPLAY_VS_OPENSPIEL = 1.0
REPLAY_ACTIONS_PER_S = 50_000


@dataclass(frozen=True)
class Sizes:
    hands: int  # solver hands per run (ours and OpenSpiel)
    rlcard_hands: int  # RLCard's enumeration is slower: a prefix of the same hands
    games: int  # our self-play games per run
    openspiel_games: int
    rlcard_games: int
    replay_greedy: int  # records replayed per run
    replay_random: int
    reps: int


FULL = Sizes(100_000, 10_000, 30, 200, 60, 40, 8, 7)
QUICK = Sizes(50_000, 2_000, 6, 40, 12, 10, 2, 3)


# -- measuring --------------------------------------------------------------------------


def measure(workloads: dict[str, Workload], reps: int) -> dict[str, dict[str, float]]:
    """Median rates (count per second, for every count a workload returns).

    Each workload runs once to warm up, then ``reps`` times, interleaved with the others
    so that a busy moment of the machine hits them alike.
    """
    runs = measure_runs(workloads, reps)
    return {
        name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()
    }


def measure_runs(workloads: dict[str, Workload], reps: int) -> dict[str, list[dict[str, float]]]:
    """The rates of every run (see :func:`measure`), in run order."""
    for work in workloads.values():
        work()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in workloads}
    for _ in range(reps):
        for name, work in workloads.items():
            gc.collect()
            t0 = CLOCK()
            counts = work()
            elapsed = CLOCK() - t0
            runs[name].append({k: v / elapsed for k, v in counts.items()})
    return runs


# -- peers ------------------------------------------------------------------------------


def load_openspiel() -> Any:
    try:
        import pyspiel
    except ImportError:
        return None
    return pyspiel


def load_rlcard() -> Any:
    try:
        import numpy as np
        from rlcard.games.gin_rummy.game import GinRummyGame
        from rlcard.games.gin_rummy.utils import melding
        from rlcard.games.gin_rummy.utils import utils as gin_utils
    except ImportError:
        return None
    return argparse.Namespace(np=np, Game=GinRummyGame, melding=melding, utils=gin_utils)


def version_of(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


# -- 1. solver --------------------------------------------------------------------------


def random_hands(rules: RuleSet, n: int, seed: int) -> list[int]:
    """``n`` hands of 7 or 8 cards (half each, in random order) as card masks."""
    deck = list(deck_cards(rules.deck, rules.jokers))
    rng = random.Random(seed)
    hands = []
    for _ in range(n):
        mask = 0
        for card in rng.sample(deck, rng.choice((7, 8))):
            mask |= 1 << card
        hands.append(mask)
    return hands


def spanish_to_gin(mask: int, rules: RuleSet, num_ranks: int) -> list[int]:
    """Our 40-card hand as gin rummy card ids ``suit * num_ranks + rank index``."""
    position = {rank: i for i, rank in enumerate(rules.ranks)}
    return [
        (c // 12) * num_ranks + position[c % 12 + 1] for c in range(48) if mask >> c & 1
    ]


def bench_solver(sizes: Sizes, pyspiel: Any, rl: Any) -> dict[str, Any]:
    rules = RuleSet()
    hands = random_hands(rules, sizes.hands, seed=1)
    solver = solver_for(rules)

    def ours() -> Counts:
        deadwood = solver.deadwood
        for mask in hands:
            deadwood(mask)
        return {"hands": len(hands)}

    workloads: dict[str, Workload] = {"ours": ours}
    agree: dict[str, str] = {}
    if pyspiel is not None:
        utils = pyspiel.gin_rummy.GinRummyUtils(10, 4, 10)  # ranks, suits, hand size
        os_hands = [spanish_to_gin(m, rules, 10) for m in hands]

        def openspiel() -> Counts:
            min_deadwood = utils.min_deadwood
            for hand in os_hands:
                min_deadwood(hand)
            return {"hands": len(os_hands)}

        workloads["openspiel"] = openspiel
        same = sum(solver.deadwood(m) == utils.min_deadwood(h) for m, h in zip(hands, os_hands, strict=False))
        agree["openspiel"] = f"{same:,}/{len(hands):,}"
    if rl is not None:
        rl_hands = [
            [rl.utils.get_card(i) for i in spanish_to_gin(m, rules, 13)]
            for m in hands[: sizes.rlcard_hands]
        ]

        def rlcard_deadwood(cards: list[Any]) -> int:
            # RLCard scores only 10-card hands (get_best_meld_clusters); its enumeration
            # of meld clusters works for any hand: the least points they leave.
            value = rl.utils.get_deadwood_value
            best = sum(value(c) for c in cards)
            for cluster in rl.melding.get_meld_clusters(cards):
                melded = {id(c) for meld in cluster for c in meld}
                best = min(best, sum(value(c) for c in cards if id(c) not in melded))
            return best

        def rlcard() -> Counts:
            for cards in rl_hands:
                rlcard_deadwood(cards)
            return {"hands": len(rl_hands)}

        workloads["rlcard"] = rlcard
        same = sum(
            solver.deadwood(m) == rlcard_deadwood(c) for m, c in zip(hands, rl_hands, strict=False)
        )
        agree["rlcard"] = f"{same:,}/{len(rl_hands):,}"
    runs = measure_runs(workloads, sizes.reps)
    rates = {
        name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()
    }
    ratios = []
    if "openspiel" in runs:
        ratios = [o["hands"] / p["hands"] for o, p in zip(runs["ours"], runs["openspiel"], strict=True)]

    joker_rules = RuleSet(jokers=2)
    joker_hands = random_hands(joker_rules, sizes.hands, seed=2)
    joker_solver = solver_for(joker_rules)

    def ours_jokers() -> Counts:
        deadwood = joker_solver.deadwood
        for mask in joker_hands:
            deadwood(mask)
        return {"hands": len(joker_hands)}

    with_jokers = sum(1 for m in joker_hands if m >> 48)
    rates.update({"ours_jokers": measure({"j": ours_jokers}, sizes.reps)["j"]})
    return {
        "rates": rates,
        "ratios": ratios,
        "agree": agree,
        "joker_share": with_jokers / len(joker_hands),
    }


def gin_to_spanish(cards: list[int], rules: RuleSet, num_ranks: int) -> frozenset[int]:
    """The inverse of :func:`spanish_to_gin`, as a set of our card numbers."""
    return frozenset((c // num_ranks) * 12 + rules.ranks[c % num_ranks] - 1 for c in cards)


def check_arrangements(
    solver: Any, utils: Any, hands: list[int], os_hands: list[list[int]], rules: RuleSet
) -> dict[str, int]:
    """Ours against OpenSpiel's ``best_meld_group`` on every hand: the same unmatched
    points, each side's melds valid and disjoint, and how often the melds are the same
    (several splits may be optimal; each side then picks its own)."""
    same_points = same_melds = 0
    for mask, hand in zip(hands, os_hands, strict=True):
        ours = solver.best_arrangement(mask)
        theirs = [gin_to_spanish(m, rules, 10) for m in utils.best_meld_group(hand)]
        melded = 0
        for meld in theirs:
            for c in meld:
                assert not melded >> c & 1 and mask >> c & 1, (mask, theirs)
                melded |= 1 << c
        their_points = sum(rules.card_points(c) for c in range(48) if mask >> c & 1 and not melded >> c & 1)
        ours_used = 0
        for m in ours.melds:
            assert not ours_used & m.mask
            ours_used |= m.mask
        assert ours_used | sum(1 << c for c in ours.unmatched) == mask
        same_points += ours.points == their_points
        same_melds += sorted(frozenset(m.cards) for m in ours.melds) == sorted(theirs)  # type: ignore[type-var]
    return {"hands": len(hands), "same_points": same_points, "same_melds": same_melds}


def bench_arrangement(sizes: Sizes, pyspiel: Any) -> dict[str, Any]:
    """``best_arrangement`` (the melds themselves) against OpenSpiel's ``best_meld_group``."""
    rules = RuleSet()
    hands = random_hands(rules, sizes.hands, seed=1)
    solver = solver_for(rules)

    def ours() -> Counts:
        best = solver.best_arrangement
        for mask in hands:
            best(mask)
        return {"hands": len(hands)}

    workloads: dict[str, Workload] = {"ours": ours}
    out: dict[str, Any] = {}
    if pyspiel is not None:
        utils = pyspiel.gin_rummy.GinRummyUtils(10, 4, 10)
        os_hands = [spanish_to_gin(m, rules, 10) for m in hands]

        def openspiel() -> Counts:
            best_meld_group = utils.best_meld_group
            for hand in os_hands:
                best_meld_group(hand)
            return {"hands": len(os_hands)}

        workloads["openspiel"] = openspiel
        out["check"] = check_arrangements(solver, utils, hands, os_hands, rules)
    runs = measure_runs(workloads, sizes.reps)
    out["rates"] = {name: statistics.median(r["hands"] for r in rs) for name, rs in runs.items()}
    if "openspiel" in runs:
        out["ratios"] = [
            o["hands"] / p["hands"] for o, p in zip(runs["ours"], runs["openspiel"], strict=True)]

    joker_rules = RuleSet(jokers=2)
    joker_hands = random_hands(joker_rules, sizes.hands, seed=2)
    joker_solver = solver_for(joker_rules)

    def ours_jokers() -> Counts:
        best = joker_solver.best_arrangement
        for mask in joker_hands:
            best(mask)
        return {"hands": len(joker_hands)}

    out["rates"]["ours_jokers"] = measure({"j": ours_jokers}, sizes.reps)["j"]["hands"]
    return out


# -- 2. random self-play ----------------------------------------------------------------


def bench_selfplay(sizes: Sizes, pyspiel: Any, rl: Any) -> dict[str, dict[str, float]]:
    rules = RuleSet()

    def ours() -> Counts:
        rng = random.Random(7)
        steps = decisions = hands = 0
        for g in range(sizes.games):
            source = ShuffleSource(b"bench", f"game-{g}")
            state = new_game(rules)
            while not state.is_over:
                if state.is_chance:
                    state = apply(state, source.chance(state))
                else:
                    legal = legal_actions(state)
                    state = apply(state, legal[rng.randrange(len(legal))])
                    decisions += 1
                steps += 1
            hands += len(state.results)
        return {"steps": steps, "decisions": decisions, "hands": hands, "games": sizes.games}

    workloads: dict[str, Workload] = {"ours": ours}
    if pyspiel is not None:
        game = pyspiel.load_game("gin_rummy")

        def openspiel() -> Counts:
            rng = random.Random(7)
            steps = decisions = 0
            for _ in range(sizes.openspiel_games):
                state = game.new_initial_state()
                while not state.is_terminal():
                    if state.is_chance_node():
                        outcomes = state.chance_outcomes()
                        action = outcomes[rng.randrange(len(outcomes))][0]
                    else:
                        legal = state.legal_actions()
                        action = legal[rng.randrange(len(legal))]
                        decisions += 1
                    state.apply_action(action)
                    steps += 1
            # A gin rummy game is one hand.
            return {
                "steps": steps,
                "decisions": decisions,
                "hands": sizes.openspiel_games,
                "games": sizes.openspiel_games,
            }

        workloads["openspiel"] = openspiel
    if rl is not None:

        def rlcard() -> Counts:
            rng = random.Random(7)
            game = rl.Game()
            game.np_random = rl.np.random.RandomState(7)
            steps = 0
            for _ in range(sizes.rlcard_games):
                game.init_game()  # deals: no chance steps
                while not game.is_over():
                    legal = game.judge.get_legal_actions()
                    game.step(legal[rng.randrange(len(legal))])
                    steps += 1
            return {
                "steps": steps,
                "decisions": steps,
                "hands": sizes.rlcard_games,
                "games": sizes.rlcard_games,
            }

        workloads["rlcard"] = rlcard
    return measure(workloads, sizes.reps)


# -- 3. replay --------------------------------------------------------------------------


def game_records(n: int, greedy: bool) -> list[dict[str, Any]]:
    rules = RuleSet()
    records = []
    for g in range(n):
        bots = [GreedyBot() if greedy else RandomBot(g), RandomBot(1000 + g)]
        _, record = play_game(rules, bots, seed=b"bench-replay", deal_id=f"{greedy}-{g}")
        records.append(record)
    return records


def bench_replay(sizes: Sizes) -> dict[str, dict[str, float]]:
    workloads: dict[str, Workload] = {}
    for name, greedy, n in (
        ("greedy_vs_random", True, sizes.replay_greedy),
        ("random_vs_random", False, sizes.replay_random),
    ):
        records = game_records(n, greedy)
        actions = sum(len(r["actions"]) for r in records)

        def run(records: list[dict[str, Any]] = records, actions: int = actions) -> Counts:
            for record in records:
                replay(record)
            return {"actions": actions, "records": len(records)}

        workloads[name] = run
    return measure(workloads, sizes.reps)


# -- report -----------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def ratio(a: float, b: float | None) -> str:
    return "-" if not b else f"{a / b:.2f}x"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else "MET" if ok else "NOT MET"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads, 3 repetitions")
    ap.add_argument("--reps", type=int, help="repetitions per measurement (median reported)")
    ap.add_argument("--only", choices=("solver", "selfplay", "replay"),
                    help="run one part only (solver: deadwood and arrangement)")
    args = ap.parse_args()
    sizes = QUICK if args.quick else FULL
    if args.reps:
        sizes = Sizes(**{**sizes.__dict__, "reps": args.reps})

    pyspiel, rl = load_openspiel(), load_rlcard()
    print(f"Python {platform.python_version()} on {cpu_model()}, {os.cpu_count()} CPUs")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, mod in (("open-spiel", pyspiel), ("rlcard", rl)):
        if mod is None:
            print(f"{name} not installed: its figures are left out (pip install -e '.[bench]')")
        else:
            print(f"peer: {name} {version_of(name)}")
    print(f"median of {sizes.reps} runs after a warm-up run\n", flush=True)

    solver = bench_solver(sizes, pyspiel, rl) if args.only in (None, "solver") else None
    arrangement = bench_arrangement(sizes, pyspiel) if args.only in (None, "solver") else None
    selfplay = bench_selfplay(sizes, pyspiel, rl) if args.only in (None, "selfplay") else None
    replays = bench_replay(sizes) if args.only in (None, "replay") else None
    rows: list[Row] = []
    if solver is not None and arrangement is not None:
        rows += solver_rows(solver, arrangement)
    if selfplay is not None:
        rows += selfplay_rows(selfplay)
    if replays is not None:
        rows += replay_rows(replays)
    print_table(rows)
    print()
    if solver is not None and arrangement is not None:
        print_solver_notes(solver, arrangement)
    if selfplay is not None:
        print_selfplay_notes(selfplay)
    if replays is not None:
        for name, r in replays.items():
            per = r["actions"] / r["records"]
            print(f"replay {name.replace('_', ' ')}: {per:.0f} actions/record, {r['records']:,.1f} records/s")
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    sys.stdout.flush()


Row = tuple[str, float, float | None, float | None, str, bool | None]


def solver_rows(solver: dict[str, Any], arrangement: dict[str, Any]) -> list[Row]:
    s = solver["rates"]
    ours_dw = s["ours"]["hands"]
    os_dw = s.get("openspiel", {}).get("hands")
    rl_dw = s.get("rlcard", {}).get("hands")
    jk = s["ours_jokers"]["hands"]
    a = arrangement["rates"]
    ours_ar, os_ar, jk_ar = a["ours"], a.get("openspiel"), a["ours_jokers"]
    share = f"{solver['joker_share']:.0%} hold one"
    return [
        ("deadwood: deadwood vs min_deadwood, 7-8 cards (hands/s)", ours_dw, os_dw, rl_dw,
         f">= {DEADWOOD_VS_OPENSPIEL}x OpenSpiel",
         None if os_dw is None else ours_dw >= DEADWOOD_VS_OPENSPIEL * os_dw),
        (f"deadwood: 7-8 cards, 2 jokers in deck (hands/s; {share})",
         jk, None, None, f">= {SOLVER_JOKERS_PER_S:,}/s", jk >= SOLVER_JOKERS_PER_S),
        ("arrangement: best_arrangement vs best_meld_group, 7-8 cards (hands/s)", ours_ar, os_ar,
         None, f">= {SOLVER_VS_OPENSPIEL}x OpenSpiel",
         None if os_ar is None else ours_ar >= SOLVER_VS_OPENSPIEL * os_ar),
        (f"arrangement: 7-8 cards, 2 jokers in deck (hands/s; {share})",
         jk_ar, None, None, f">= {SOLVER_JOKERS_PER_S:,}/s", jk_ar >= SOLVER_JOKERS_PER_S),
    ]


def selfplay_rows(selfplay: dict[str, dict[str, float]]) -> list[Row]:
    sp = selfplay["ours"]
    os_sp = selfplay.get("openspiel")
    rl_sp = selfplay.get("rlcard")
    return [
        ("self-play: steps/s (chance included)", sp["steps"],
         os_sp and os_sp["steps"], rl_sp and rl_sp["steps"], f">= {SELFPLAY_VS_OPENSPIEL}x OpenSpiel",
         None if os_sp is None else sp["steps"] >= SELFPLAY_VS_OPENSPIEL * os_sp["steps"]),
        ("self-play: decisions/s", sp["decisions"],
         os_sp and os_sp["decisions"], rl_sp and rl_sp["decisions"], "", None),
        ("self-play: hands/s", sp["hands"], os_sp and os_sp["hands"], rl_sp and rl_sp["hands"],
         "", None),
        ("self-play: games/s", sp["games"], os_sp and os_sp["games"], rl_sp and rl_sp["games"],
         "", None),
    ]


def replay_rows(replays: dict[str, dict[str, float]]) -> list[Row]:
    return [
        (f"replay, {name.replace('_vs_', ' vs ')} records (actions/s)", r["actions"], None, None,
         f">= {REPLAY_ACTIONS_PER_S:,}/s", r["actions"] >= REPLAY_ACTIONS_PER_S)
        for name, r in replays.items()
    ]


def print_table(rows: list[Row]) -> None:
    head = ("benchmark", "ours", "OpenSpiel", "vs OS", "RLCard", "vs RL", "target", "result")
    table = [head] + [
        (name, fmt(o), fmt(p), ratio(o, p), fmt(r), ratio(o, r), target, verdict(ok))
        for name, o, p, r, target, ok in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for i, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=False)]
        print("  ".join(cells))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def print_solver_notes(solver: dict[str, Any], arrangement: dict[str, Any]) -> None:
    for peer, agreed in solver["agree"].items():
        print(f"deadwood: {peer} gives the same deadwood on {agreed} hands")
    for name, rs in (("deadwood", solver["ratios"]), ("arrangement", arrangement.get("ratios"))):
        if rs:
            print(f"{name}: ours / OpenSpiel in each run: {' '.join(f'{r:.2f}' for r in rs)}"
                  f" (min {min(rs):.2f}, median {statistics.median(rs):.2f})")
    check = arrangement.get("check")
    if check:
        print(f"arrangement: the same unmatched points as best_meld_group on {check['same_points']:,}"
              f"/{check['hands']:,} hands, the same melds on {check['same_melds']:,} (the others: "
              "another split, as good)")


def print_selfplay_notes(selfplay: dict[str, dict[str, float]]) -> None:
    sp = selfplay["ours"]
    os_sp = selfplay.get("openspiel")
    print(
        f"self-play: ours {sp['steps'] / sp['games']:.0f} steps/game, "
        f"{sp['decisions'] / sp['steps']:.0%} of them decisions, "
        f"{sp['hands'] / sp['games']:.1f} hands/game"
    )
    if os_sp is not None:
        print(
            f"self-play: OpenSpiel {os_sp['steps'] / os_sp['games']:.0f} steps/game, "
            f"{os_sp['decisions'] / os_sp['steps']:.0%} of them decisions"
        )


if __name__ == "__main__":
    main()
