"""A small mutation check of the rules engine: do the engine tests catch plausible bugs?

    python bench/mutate_engine.py              # every mutant, one at a time (~10-20 min)
    python bench/mutate_engine.py --list       # the mutants, without running anything
    python bench/mutate_engine.py --only NAME  # one mutant (repeat --only for more)
    python bench/mutate_engine.py --jobs 2     # two mutants at a time (a quiet machine)

Each mutant is one plausible bug planted in a copy of ``client_sdk/`` (the working tree
is never touched): one exact piece of engine source replaced by another. The engine
tests, ``pytest tests/engine/test_engine_*.py -x``, then run against the copy (``PYTHONPATH``
puts it first; the script checks that the tests import it). A mutant is *caught* when a
test fails, *survives* when every test passes. The script first runs the same tests on
an unmutated copy, which must pass. It prints a table (Markdown with ``--markdown``),
and exits 1 if a mutant survived.

A mutant that makes a test run past ``--per-test`` seconds (or the whole run past
``--timeout``) is counted apart, as *timeout*, and not as caught: on a busy machine a
slow test would otherwise pass for a catch, and the count would look better than it
is. Take the count on a quiet machine; a timeout there is a mutant that loops.

Why a bench script and not a test: each mutant costs a run of the engine tests (30 s on
a quiet 2-core machine, more when it is shared, and the whole run for a survivor), so
the full check takes 10-20 minutes: more than CI's budget for it. Its latest result is
in docs/testing.md; tests/engine/test_mutation_list.py checks, in a second, that every mutant
still applies to the source (exactly one match, and the result compiles), so that the
list cannot rot silently when the engine changes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "client_sdk" / "chinchon" / "engine"
#: The engine tests, quick files first (with -x, a caught mutant stops at its first failure).
TEST_FILES = (
    "tests/engine/test_engine_rules.py",
    "tests/engine/test_engine_house_rules.py",
    "tests/engine/test_engine_layoff_best.py",
    "tests/engine/test_engine_scenarios.py",
    "tests/engine/test_engine_policies.py",
    "tests/engine/test_engine_golden.py",
    "tests/engine/test_engine_playthroughs.py",
    "tests/engine/test_engine_properties.py",
)


#: Seconds one engine test may take under a mutant, by default (the slowest takes ~10 s
#: on a quiet machine, and more than 120 s at a load of 30 on two cores).
PER_TEST_TIMEOUT = 600


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # in client_sdk/chinchon/engine/
    old: str
    new: str
    bug: str


MUTANTS: tuple[Mutant, ...] = (
    Mutant("layoff-best-most-points", "game.py",
           "            if (v, off) < best[:2]:",
           "            if (off, v) < (best[1], best[0]):",
           "layoff best lays off the most points, not the fewest points left"),
    Mutant("layoff-best-tie-fewest-off", "game.py",
           "            off -= rules.card_points(a.card)",
           "            off += rules.card_points(a.card)",
           "layoff best ties go to the fewest points laid off"),
    Mutant("layoff-best-tie-last", "game.py",
           "            if (v, off) < best[:2]:",
           "            if (v, off) <= best[:2]:",
           "layoff best ties go to the last lay-off listed, not the first"),
    Mutant("close-two-unmatched", "game.py",
           "    if n > rules.close_max_unmatched:",
           "    if n > rules.close_max_unmatched + 1:",
           "a named close may leave one unmatched card more than close_max_unmatched"),
    Mutant("close-reaches-limit", "game.py",
           "    if score + pts >= rules.score_limit:",
           "    if score + pts > rules.score_limit:",
           "a close may take the closer's total to exactly the score limit"),
    Mutant("bonus-50-25-swapped", "solver.py",
           "_BONUS_CHINCHON if j == 0 else _BONUS_MINUS50 if j == 1 else _BONUS_MINUS25",
           "_BONUS_CHINCHON if j == 0 else _BONUS_MINUS25 if j == 1 else _BONUS_MINUS50",
           "a seven-card run with one joker scores -25, with two -50"),
    Mutant("chinchon-with-a-joker", "solver.py",
           "_BONUS_CHINCHON if j == 0 else _BONUS_MINUS50 if j == 1 else _BONUS_MINUS25",
           "_BONUS_CHINCHON if j <= 1 else _BONUS_MINUS25",
           "a seven-card run with one joker is a chinchón"),
    Mutant("joker-above-the-top", "melds.py",
           "    ok = low >= 0 and low + len(cards) - 1 <= top",
           "    ok = low >= 0 and low + len(cards) - 1 <= top + 1",
           "a joker may stand above the top rank (10O 11O 12O JK1)"),
    Mutant("set-of-five", "melds.py",
           "        if len(cards) > 4:",
           "        if len(cards) > 5:",
           "a set may hold five cards (four naturals and a joker)"),
    Mutant("one-natural", "melds.py",
           "    if len(naturals) < 2:",
           "    if len(naturals) < 1:",
           "a meld needs only one natural card (3O JK1 JK2)"),
    Mutant("minus-10-not-locked", "game.py",
           "    locked = bonus > 0",
           "    locked = bonus > 1",
           "others may lay off on a closer who melded all seven for -10"),
    Mutant("own-meld-lay-off", "game.py",
           "        if tm.owner == seat or (tm.owner == state.closer and state.closer_locked):",
           "        if tm.owner == state.closer and state.closer_locked:",
           "a player may lay off on their own melds"),
    Mutant("retake-inverted", "game.py",
           "    if card == state.taken and not state.rules.retake_discard:",
           "    if card == state.taken and state.rules.retake_discard:",
           "retake_discard inverted: the card just taken may go back by default"),
    Mutant("reshuffle-forever", "game.py",
           "        if st.exhausted == 0 and st.pile_len > 1:",
           "        if st.exhausted <= 1 and st.pile_len > 1:",
           "the stock is reshuffled a second time instead of ending the hand"),
    Mutant("out-above-the-limit", "game.py",
           "        s for s in range(n) if state.alive[s] and totals[s] >= state.rules.score_limit",
           "        s for s in range(n) if state.alive[s] and totals[s] > state.rules.score_limit",
           "a player whose total reaches the score limit exactly stays in"),
    Mutant("same-starter", "game.py",
           "        return _next_alive(self.alive, self.starter)",
           "        return self.starter",
           "every hand is started by the first hand's starter"),
    Mutant("highest-total-wins", "game.py",
           "        low = min(totals[s] for s in eliminated)",
           "        low = max(totals[s] for s in eliminated)",
           "when the last players go out together, the highest total wins"),
    Mutant("ten-at-face-value", "rules.py",
           "        points = tuple(r if r <= 9 else fig[r - 10] for r in range(1, 13))",
           "        points = tuple(r if r <= 10 else fig[r - 10] for r in range(1, 13))",
           "the 10 is worth 10 with figure points 8-9-10"),
    Mutant("no-closer-counts-all-cards", "game.py",
           "        unmatched[s] = arr.unmatched\n        points[s] = arr.points",
           "        unmatched[s] = arr.unmatched\n"
           "        points[s] = sum(rules.card_points(c) for c in cards_of(state.hands[s]))",
           "a hand with no closer counts every card, not the best arrangement"),
    Mutant("best-split-more-cards", "solver.py",
           "                if v < row[k][0] or (v == row[k][0] and c < row[k][1]):",
           "                if v < row[k][0]:",
           "equal-point splits do not prefer the fewest unmatched cards"),
    # The house rules.
    Mutant("wild-card-face-value", "rules.py",
           "            table[c] = self.joker_points",
           "            table[c] = table[c]",
           "an unmatched wild card is worth its face value, not joker_points"),
    Mutant("wild-card-natural-in-chinchon", "solver.py",
           "            j = (run.mask & self._jokers_all).bit_count()",
           "            j = run.jokers",
           "a wild card in a seven-card run counts as natural: chinchón instead of -50"),
    Mutant("jokers-per-meld-ignored", "melds.py",
           "    if len(jokers) > rules.jokers_per_meld:",
           "    if len(jokers) > 2:",
           "a named meld may hold two jokers with jokers_per_meld = 1"),
    Mutant("joker-laid-off-past-the-limit", "melds.py",
           "    if is_joker and (meld.mask & wild).bit_count() >= rules.jokers_per_meld:",
           "    if is_joker and (meld.mask & wild).bit_count() > rules.jokers_per_meld:",
           "a joker may be laid off on a meld that already holds jokers_per_meld"),
    Mutant("one-joker-runs-never-overlap", "solver.py",
           "                choices = [0] + (optional if room >= 1 else [])",
           "                choices = [0]",
           "with one joker per meld, a joker never stands for a held card (no overlap)"),
    Mutant("first-round-close-accepted", "game.py",
           "    if not rules.close_first_round and _in_first_round(state):",
           "    if not rules.close_first_round and _in_first_round(state) and state.n < 0:",
           "apply accepts a first-round close that legal_actions does not list"),
    Mutant("first-round-counts-seats", "game.py",
           "    return state.turn < sum(state.alive)",
           "    return state.turn < state.n",
           "the first round counts every seat, also the players out of the game"),
    Mutant("first-round-first-hand-only", "game.py",
           "    return state.turn < sum(state.alive)",
           "    return state.hand_no <= 1 and state.turn < sum(state.alive)",
           "close_first_round holds in the game's first hand only, not in every hand"),
    Mutant("first-round-one-turn-short", "game.py",
           "    return state.turn < sum(state.alive)",
           "    return state.turn < sum(state.alive) - 1",
           "the first round ends a turn early: its last player may close"),
    Mutant("layoff-best-wild-card-one-end", "game.py",
           "            if (a.card, a.meld) in tried and not rules.is_wild(a.card):",
           "            if (a.card, a.meld) in tried and a.card < 48:",
           "layoff best tries a wild card (wild_cards) at one end of a run only"),
    Mutant("layoff-best-record-wild-no-end", "macros.py",
           "    if state.rules.is_wild(card) and meld.kind is MeldKind.RUN:",
           "    if card >= 48 and meld.kind is MeldKind.RUN:",
           "the record's lay-offs of a layoff best name no end for a wild card on a run"),
)


def mutated_source(m: Mutant) -> str:
    """The engine file ``m.file`` with the mutant planted; ValueError unless ``m.old``
    occurs exactly once."""
    text = (ENGINE / m.file).read_text(encoding="utf-8")
    n = text.count(m.old)
    if n != 1:
        raise ValueError(f"mutant {m.name}: {m.old!r} occurs {n} times in {m.file}, not once")
    return text.replace(m.old, m.new)


@dataclass
class Result:
    name: str
    outcome: str  # caught | survived | timeout | broken
    first_failure: str
    seconds: float


def _copy() -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="chinchon-mutant-"))
    shutil.copytree(ROOT / "client_sdk" / "chinchon", tmp / "chinchon",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp


def _env(where: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(where), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_one(m: Mutant | None, timeout: float, per_test: float = PER_TEST_TIMEOUT) -> Result:
    """Run the engine tests on a copy of the engine, with ``m`` planted (None: as is)."""
    where = _copy()
    try:
        if m is not None:
            (where / "chinchon" / "engine" / m.file).write_text(mutated_source(m), encoding="utf-8")
        env = _env(where)
        probe = subprocess.run([sys.executable, "-c", "import chinchon; print(chinchon.__file__)"],
                               capture_output=True, text=True, env=env, cwd=ROOT, check=True)
        if not Path(probe.stdout.strip()).is_relative_to(where):
            raise SystemExit(f"the tests would not import the copy: {probe.stdout.strip()}")
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", *TEST_FILES, "-x", "-q", "-rf", "-n", "0",
                 "-p", "no:cacheprovider", "--hypothesis-seed=0",
                 # A mutant may loop forever (a hand dealt by a player out of the game):
                 # pytest-timeout fails that test, naming it, sooner than pyproject's 300 s.
                 f"--timeout={per_test:g}"],
                capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
        except subprocess.TimeoutExpired:  # the tests hang under the mutant, or the machine is busy
            return Result(m.name if m else "(none)", "timeout",
                          f"(the tests did not end in {timeout:.0f} s)", time.perf_counter() - t0)
        secs = time.perf_counter() - t0
        name = m.name if m else "(none)"
        if proc.returncode == 0:
            return Result(name, "survived", "", secs)
        failed = re.findall(r"^FAILED (.+?)(?: - (.*))?$", proc.stdout, re.M)
        if proc.returncode == 1 and failed:
            test, why = failed[0]
            # pytest-timeout's failure: the test ran out of time, it did not fail.
            return Result(name, "timeout" if why.startswith("Failed: Timeout") else "caught",
                          test, secs)
        return Result(name, "broken", (proc.stdout + proc.stderr).strip().splitlines()[-1:][0]
                      if (proc.stdout + proc.stderr).strip() else f"exit {proc.returncode}", secs)
    finally:
        shutil.rmtree(where, ignore_errors=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--only", action="append", default=[], metavar="NAME")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at a time (default 1)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run of the tests")
    ap.add_argument("--per-test", type=float, default=PER_TEST_TIMEOUT,
                    help=f"seconds one test may take (default {PER_TEST_TIMEOUT})")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    unknown = set(args.only) - {m.name for m in MUTANTS}
    if unknown:
        ap.error(f"unknown mutant(s): {', '.join(sorted(unknown))}")
    for m in chosen:
        mutated_source(m)  # every mutant applies, before anything runs
    if args.list:
        for m in chosen:
            print(f"{m.name:32} {m.file:10} {m.bug}")
        return 0
    t0 = time.perf_counter()
    base = run_one(None, args.timeout, args.per_test)
    if base.outcome == "timeout":
        print(f"the engine tests run out of time without a mutant ({base.first_failure}): the "
              "machine is too busy for a count; take it on a quieter one (or raise --per-test)")
        return 2
    if base.outcome != "survived":
        print(f"the engine tests fail without a mutant ({base.first_failure}): fix them first")
        return 2
    print(f"unmutated engine: the tests pass in {base.seconds:.0f} s; {len(chosen)} mutants",
          flush=True)
    results = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(lambda m: run_one(m, args.timeout, args.per_test), chosen):
            print(f"  {r.outcome:9} {r.name:32} {r.seconds:5.0f} s  {r.first_failure}",
                  file=sys.stderr, flush=True)
            results.append(r)
    bugs = {m.name: m.bug for m in MUTANTS}
    if args.markdown:
        print("| mutant | bug planted | result | first failing test | s |")
        print("|---|---|---|---|---:|")
        for r in results:
            print(f"| `{r.name}` | {bugs[r.name]} | {r.outcome} | "
                  f"`{r.first_failure or '-'}` | {r.seconds:.0f} |")
    else:
        for r in results:
            print(f"{r.outcome:9} {r.name:32} {r.seconds:5.0f} s  {r.first_failure}")
    caught = sum(r.outcome == "caught" for r in results)
    timeouts = sum(r.outcome == "timeout" for r in results)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{caught} of {len(results)} mutants caught"
          + (f", {timeouts} ran out of time (not counted as caught)" if timeouts else "")
          + f"; {time.perf_counter() - t0:.0f} s in all; load average at the end {load}")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
