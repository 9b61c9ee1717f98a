"""What does remembering a twin game win? A memory bot against the same bot without memory.

With duplicate deals, the games of one deal (its twins) share the underlying shuffle of
every hand; the seats are rotated, so in the second twin a bot's opponent is dealt, hand
after hand, exactly the cards the bot itself was dealt in the first twin, and the stock
comes in the same order. The referee shows each twin under its own suit relabelling, so
the cards differ; only ranks (and which cards share a suit) are common, and a bot can
recover the relabelling from any card whose position it knows in both twins (the first
up card of every hand is one).

``MemoryBot`` plays like ``GreedyBot`` but remembers, in the first twin, each hand's
dealt hand, first up card and every stock card it drew (with its position in the
stock). In the second twin it infers the suit relabelling from the cards it sees at
known positions, and then

* knows the opponent's dealt hand (its own from the first twin, relabelled) and follows
  it through the public events (discards, draws from the discard pile, melds);
* knows the next stock card whenever it drew that position in the first twin, and
  takes whichever of it and the discard leaves it the lower deadwood, counting what the
  card it leaves in the stock would give the opponent's known cards;
* discards, among its unmatched cards, the one that helps the opponent's known cards
  least (greedy's highest-point rule only breaks ties).

It is told which game is the twin of which (a bot has to guess it from the players and
the ranks it is dealt: an upper bound on identification). It does not use the hands
shown at the end of each hand, nor the opponent's stock draws it later sees discarded:
a lower bound on exploitation.

For each deal: the first twin (the measured bot in seat 0), then the second twin (seat
1) twice, once by MemoryBot with its memory of the first and once by GreedyBot; the
opponent is GreedyBot. The first twins are the same game in both arms (MemoryBot plays
exactly like GreedyBot while it remembers), so the measured gain is the second twin's
result: the paired difference of wins (1, 1/2 for a shared win, 0) and of final-score
margins, with 95% intervals, with the suit relabelling on (what the referee does) and
off (what it did before).

    python bench/memory_twins.py                      # 600 deals, 2 processes
    python bench/memory_twins.py --deals 200 --jobs 1 --seed x
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT / "client_sdk"))

from chinchon.engine import (  # noqa: E402
    DEFAULT_RULES,
    DRAW_DISCARD,
    DRAW_STOCK,
    GreedyBot,
    Phase,
    play_game,
)
from chinchon.engine.actions import Action, Discard  # noqa: E402
from chinchon.engine.cards import CARDS, Card, mask_of  # noqa: E402
from chinchon.engine.observation import Observation  # noqa: E402
from chinchon.engine.solver import solver_for  # noqa: E402

DEALT = 7


@dataclass
class HandMemory:
    """What the bot saw of one hand of the first twin (first-twin card names)."""

    dealt: frozenset[Card] = frozenset()
    up: Card | None = None
    stock: dict[int, Card] = field(default_factory=dict)  # stock position -> card


class MemoryBot:
    """GreedyBot that remembers a first twin and exploits it in the second one."""

    name = "memory"

    def __init__(self, memory: dict[int, HandMemory] | None = None) -> None:
        self.greedy = GreedyBot()
        #: Filled while playing the first twin (``memory`` None), used in the second.
        self.recording = memory is None
        self.memory: dict[int, HandMemory] = {} if memory is None else memory
        self._hand_no = 0
        self._pending_draw: int | None = None  # stock position of the card just drawn
        self._before: frozenset[Card] = frozenset()
        # Second twin: suit map (first-twin suit -> this twin's suit), opponent's cards.
        self.suits: dict[int, int] = {}
        self._opp: set[Card] = set()  # first-twin names (the dealt hand)
        self._opp_new: set[Card] = set()  # this twin's names (taken from the discard pile)
        self._seen_events = 0

    # -- shared bookkeeping ---------------------------------------------------------------
    def _stock_total(self, obs: Observation) -> int:
        return obs.rules.deck_size - DEALT * len(obs.players) - 1

    def _new_hand(self, obs: Observation) -> None:
        self._hand_no = obs.hand_no
        self._pending_draw = None
        self._seen_events = 0
        if self.recording:
            up = obs.discard_pile[0] if obs.discard_pile else None
            for e in obs.events:
                if e.kind == "draw_discard" and e.card is not None:
                    up = e.card  # the opponent took the up card first
                    break
            self.memory[obs.hand_no] = HandMemory(frozenset(obs.hand), up, {})
        else:
            mem = self.memory.get(obs.hand_no)
            up = obs.discard_pile[0] if obs.discard_pile else None
            for e in obs.events:
                if e.kind == "draw_discard" and e.card is not None:
                    up = e.card
                    break
            if mem is not None and mem.up is not None and up is not None:
                self._learn(mem.up, up)
            self._opp = set(mem.dealt) if mem is not None else set()
            self._opp_new = set()

    def _reshuffled(self, obs: Observation) -> bool:
        return any(e.kind == "reshuffle" for e in obs.events)

    # -- the suit relabelling ----------------------------------------------------------------
    def _learn(self, old: Card, new: Card) -> None:
        if old.is_joker or new.is_joker or old.rank != new.rank:
            return
        if old.suit not in self.suits and new.suit not in self.suits.values():
            self.suits[old.suit] = new.suit
        if len(self.suits) == 3:  # the fourth by elimination
            (a,) = set(range(4)) - set(self.suits)
            (b,) = set(range(4)) - set(self.suits.values())
            self.suits[a] = b

    def _map(self, old: Card) -> Card | None:
        if old.is_joker:
            return old
        s = self.suits.get(old.suit)
        return None if s is None else CARDS[s * 12 + old.rank - 1]

    # -- playing ------------------------------------------------------------------------------
    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if obs.hand_no != self._hand_no:
            self._new_hand(obs)
        hand = frozenset(obs.hand)
        if self._pending_draw is not None and obs.phase is Phase.DISCARD:
            drawn = hand - self._before
            if len(drawn) == 1:
                (card,) = drawn
                if self.recording:
                    self.memory[obs.hand_no].stock[self._pending_draw] = card
                else:
                    old = self.memory.get(obs.hand_no, HandMemory()).stock.get(self._pending_draw)
                    if old is not None:
                        self._learn(old, card)
            self._pending_draw = None
        if not self.recording:
            self._follow_opponent(obs)
        action = self.greedy.choose(obs, legal) if self.recording else self._exploit(obs, legal)
        if action is DRAW_STOCK and not self._reshuffled(obs):
            self._pending_draw = self._stock_total(obs) - obs.stock_size
            self._before = hand
        return action

    def _follow_opponent(self, obs: Observation) -> None:
        """Keep the opponent's known cards (this twin's names) up to date."""
        events = obs.events[self._seen_events:]
        self._seen_events = len(obs.events)
        for e in events:
            if e.seat == obs.seat or e.card is None:
                continue
            if e.kind == "discard":
                self._gone(e.card)
            elif e.kind == "draw_discard":
                self._opp_new.add(e.card)
        for m in obs.table:
            for c in m.meld.cards:
                self._gone(c)

    def _gone(self, new: Card) -> None:
        self._opp_new.discard(new)
        old = self._old_of(new)
        if old is not None:
            self._opp.discard(old)

    def _old_of(self, new: Card) -> Card | None:
        if new.is_joker:
            return new
        for a, b in self.suits.items():
            if b == new.suit:
                return CARDS[a * 12 + new.rank - 1]
        return None

    def _opp_known(self) -> int:
        known = {c for c in (self._map(o) for o in self._opp) if c is not None}
        return mask_of(known | self._opp_new)

    def _exploit(self, obs: Observation, legal: Sequence[Action]) -> Action:
        solver = solver_for(obs.rules)
        hand = mask_of(obs.hand)
        if obs.phase is Phase.DRAW and DRAW_STOCK in legal and not self._reshuffled(obs):
            pos = self._stock_total(obs) - obs.stock_size
            stock = self.memory.get(obs.hand_no, HandMemory()).stock
            nxt, then = (self._map(stock[p]) if p in stock else None for p in (pos, pos + 1))
            if nxt is not None and DRAW_DISCARD in legal and obs.discard_pile:
                top = obs.discard_pile[-1]
                opp = self._opp_known()
                opp_now = solver.deadwood(opp) if opp else 0

                def after(card: int) -> int:
                    h = hand | 1 << card
                    return min(solver.deadwood(h & ~(1 << c)) for c in (*obs.hand, card))

                def gives(card: int | None) -> int:
                    """How much the opponent's known cards gain if it draws ``card``."""
                    return opp_now - solver.deadwood(opp | 1 << card) if card is not None and opp else 0

                # Taking the discard leaves the next stock card to the opponent; taking
                # the stock card leaves it the one after.
                take_discard = after(top) + gives(nxt)
                take_stock = after(nxt) + gives(then)
                return DRAW_DISCARD if take_discard < take_stock else DRAW_STOCK
        if obs.phase is Phase.DISCARD:
            action = self.greedy.choose(obs, legal)
            opp = self._opp_known()
            if not isinstance(action, Discard) or not opp:
                return action
            discards = [a for a in legal if isinstance(a, Discard)]
            mine = solver.deadwood(hand & ~(1 << action.card))
            opp_now = solver.deadwood(opp)

            def feeds(card: int) -> int:
                return opp_now - solver.deadwood(opp | 1 << card)

            best = [a for a in discards if solver.deadwood(hand & ~(1 << a.card)) <= mine]
            return min(best, key=lambda a: (feeds(a.card), a != action))
        return self.greedy.choose(obs, legal)


# -- the measurement ---------------------------------------------------------------------------


@dataclass
class DealResult:
    win_memory: float
    win_plain: float
    margin_memory: int
    margin_plain: int


def _score(state: object, seat: int) -> tuple[float, int]:
    result = state.result  # type: ignore[attr-defined]
    assert result is not None
    win = 1.0 / len(result.winners) if seat in result.winners else 0.0
    return win, result.totals[1 - seat] - result.totals[seat]


def play_deal(args: tuple[str, int, bool]) -> DealResult:
    seed, index, relabel = args
    deal = f"deal-{index}"
    first, second = (0, 1) if relabel else (None, None)
    recorder = MemoryBot()
    play_game(DEFAULT_RULES, [recorder, GreedyBot()], seed, deal, relabel=first)
    mem_state, _ = play_game(DEFAULT_RULES, [GreedyBot(), MemoryBot(recorder.memory)], seed, deal,
                             relabel=second)
    plain_state, _ = play_game(DEFAULT_RULES, [GreedyBot(), GreedyBot()], seed, deal,
                               relabel=second)
    wm, mm = _score(mem_state, 1)
    wp, mp = _score(plain_state, 1)
    return DealResult(wm, wp, mm, mp)


def interval(xs: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """Mean and a normal-approximation 95% interval."""
    n = len(xs)
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    half = z * math.sqrt(var / n)
    return mean, mean - half, mean + half


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=600)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", default="memory-twins")
    args = ap.parse_args(argv)
    print(f"{args.deals} deals per arm, opponent GreedyBot, default rules, seed {args.seed!r}")
    for relabel in (False, True):
        t = time.perf_counter()
        work = [(args.seed, i, relabel) for i in range(args.deals)]
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(play_deal, work, chunksize=8))
        wins = interval([r.win_memory - r.win_plain for r in results])
        margins = interval([float(r.margin_memory - r.margin_plain) for r in results])
        mem = sum(r.win_memory for r in results) / len(results)
        plain = sum(r.win_plain for r in results) / len(results)
        print(f"suit relabelling {'on ' if relabel else 'off'}: second-twin win rate "
              f"{mem:.3f} with memory, {plain:.3f} without; gain {wins[0]:+.3f} "
              f"[{wins[1]:+.3f}, {wins[2]:+.3f}]; score margin gain {margins[0]:+.1f} "
              f"[{margins[1]:+.1f}, {margins[2]:+.1f}] points ({time.perf_counter() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
