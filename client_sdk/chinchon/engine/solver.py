"""The arrangement solver: the best split of a hand into melds and unmatched cards.

How it works (and why it is fast in pure Python)
------------------------------------------------
Runs live inside one suit, sets across suits. So the solver

1. precomputes, for every 12-bit rank pattern of one suit and for exactly 0, 1 or 2
   jokers used, the least unmatched points that runs alone leave in that suit
   (``_SuitTables``, a small dynamic programme over rank-order positions), then
2. per hand, enumerates only the set choices that exist (ranks held in enough suits,
   usually none), removes those cards from the suit patterns, and
3. finishes each choice with four table look-ups, spreading the jokers still free
   over the suits by exact-usage tables (an unused joker costs its points).

A hand with no possible set and no joker is four look-ups. Everything is exact: the
property tests compare it with a brute-force enumeration of every partition.

House rules: ``jokers_per_meld = 1`` builds the tables and the set choices with at most
one joker per meld. Wild cards (``wild_cards``) are handled by :class:`_WildSolver`:
each wild card is moved to a joker number the deck does not use (48 or 49) on the way
in and back on the way out, so the tables above only ever see jokers.

Hands are bitmasks (see :mod:`cards`); the public functions accept masks or cards.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import combinations
from operator import attrgetter
from typing import Any

from .arrangement import Arrangement as Arrangement
from .arrangement import pending_kind
from .cards import CARDS, JOKER_MASK, Card, cards_of, mask_of
from .meld_tables import MeldTables
from .melds import MAX_RUN_FROM_HAND, Meld, MeldKind, make_meld
from .rules import RuleSet

INF = 1 << 20
#: Joker penalty used when the question is "can every card be melded?".
_UNMELDABLE = 1 << 12
_BONUS_NONE, _BONUS_MINUS10, _BONUS_MINUS25, _BONUS_MINUS50, _BONUS_CHINCHON = range(5)


# The hot path makes an Arrangement whose melds wait (see arrangement.py) without calling
# its __init__: object.__new__, then its two slots.
_new = object.__new__

_cards_key: Callable[[Meld], tuple[Card, ...]] = attrgetter("cards")  # melds' sort order


class _SuitTables:
    """Per-suit run tables for one deck and one scale of rank points.

    Indexed by the 12-bit rank pattern of one suit (bit ``rank - 1``):

    * ``best[k][p]``: least unmatched points in that suit when runs use exactly ``k``
      jokers (``INF`` when ``k`` jokers cannot all be used);
    * ``windows[k][p]``: the runs achieving it, as (first position, length, positions
      where a joker stands), with the fewest unmatched cards among the splits that
      achieve it;
    * ``count[k][p]``: how many cards those runs leave unmatched;
    * ``cover[k][p]``: rank bits of the cards that belong to some run with <= k jokers;
    * ``d1``/``d2``: ``best[1] - best[0]`` and ``best[2] - best[0]``;
    * ``points[p]``: points of all the cards of the pattern.
    """

    def __init__(
        self, ranks: tuple[int, ...], rank_points: tuple[int, ...], per_meld: int = 2
    ) -> None:
        n = len(ranks)
        size = 1 << 12
        pts = [rank_points[r - 1] for r in ranks]
        # Rank bits of each position pattern, built incrementally.
        to_rank = [0] * (1 << n)
        for pp in range(1, 1 << n):
            low = (pp & -pp).bit_length() - 1
            to_rank[pp] = to_rank[pp & (pp - 1)] | (1 << (ranks[low] - 1))
        # Every run window: (first position, length, position mask).
        windows = [
            (i, length, ((1 << length) - 1) << i)
            for i in range(n)
            for length in range(3, MAX_RUN_FROM_HAND + 1)
            if i + length <= n
        ]
        self.best: list[list[int]] = [[INF] * size for _ in range(3)]
        self.windows: list[list[tuple[tuple[int, int, int], ...]]] = [
            [()] * size for _ in range(3)]
        self.cover: list[list[int]] = [[0] * size for _ in range(3)]
        self.count: list[list[int]] = [[0] * size for _ in range(3)]
        self.points = [0] * size
        for pp in range(1 << n):
            rp = to_rank[pp]
            self.points[rp] = sum(pts[i] for i in range(n) if pp >> i & 1)
            cov = [0, 0, 0]
            for _first, length, wm in windows:
                held = pp & wm
                gaps = length - held.bit_count()
                if length - gaps >= 2 and gaps <= per_meld:
                    for k in range(gaps, 3):
                        cov[k] |= held
            for k in range(3):
                self.cover[k][rp] = to_rank[cov[k]]
            if per_meld < 2:
                continue  # the runs: _one_joker_runs below
            runs = _least_runs(pp, n, pts, per_meld)
            for k in range(3):
                v, c, w = runs[k]
                self.best[k][rp], self.count[k][rp], self.windows[k][rp] = v, c, w
        if per_meld < 2:
            search = _one_joker_runs(n, pts, per_meld)
            for pp in range(1 << n):
                rp = to_rank[pp]
                for k in range(3):
                    v, c, w = search(pp, k)
                    self.best[k][rp], self.count[k][rp], self.windows[k][rp] = v, c, w
        b0, b1, b2 = self.best
        self.d1 = [INF if b1[p] >= INF else b1[p] - b0[p] for p in range(size)]
        self.d2 = [INF if b2[p] >= INF else b2[p] - b0[p] for p in range(size)]


_Runs = tuple[int, int, tuple[tuple[int, int, int], ...]]


def _least_runs(pp: int, n: int, pts: list[int], per_meld: int) -> list[_Runs]:
    """For the position pattern ``pp`` of one suit: for each number of jokers k (0-2), the
    least unmatched points, then the fewest unmatched cards, and the runs that give them."""
    # f[i][k]: (least points of positions i.., then fewest unmatched cards
    # among those, runs) using exactly k jokers. The card count breaks ties:
    # 4O 5O 7O 11O with a joker leaves 9 points as 4O 5O (7O JK 11O) or as 11O
    # (4O 5O JK 7O), and best_arrangement promises the one-card split.
    f: list[list[tuple[int, int, tuple[tuple[int, int, int], ...]]]] = [
        [(INF, 0, ())] * 3 for _ in range(n + 1)
    ]
    f[n][0] = (0, 0, ())
    for i in range(n - 1, -1, -1):
        held_here = pp >> i & 1
        skip = pts[i] if held_here else 0
        row = [(v + skip, c + held_here, w) for v, c, w in f[i + 1]]
        for length in range(3, MAX_RUN_FROM_HAND + 1):
            if i + length > n:
                break
            held = (pp >> i) & ((1 << length) - 1)
            gaps = length - held.bit_count()
            if length - gaps < 2 or gaps > per_meld:
                continue
            nxt = f[i + length]
            holes = (((1 << length) - 1) << i) & ~pp
            for k in range(gaps, 3):
                v, c, w = nxt[k - gaps]
                if v < row[k][0] or (v == row[k][0] and c < row[k][1]):
                    row[k] = (v, c, ((i, length, holes),) + w)
        f[i] = row
    return f[0]


def _one_joker_runs(n: int, pts: list[int], per_meld: int) -> Callable[[int, int], _Runs]:
    """The runs of one suit when a run holds at most ``per_meld`` (1) joker, searched
    exactly: (least points, fewest unmatched cards, runs) of a position pattern with
    exactly k jokers used.

    With one joker per run, two runs of one suit may need to overlap: a joker stands for
    a card the hand holds while that card is in the other run (1O 2O JK | 3O 4O 5O JK,
    where one run of seven would hold two jokers). The table DP of _SuitTables never
    overlaps runs, so these tables come from a search instead: take the lowest card
    not yet decided; leave it unmatched, or put it in a run whose places below it are
    jokers and whose higher places hold the undecided cards (or a joker standing for
    one, whose card is decided later). The memo is on (undecided cards, jokers left),
    shared by all patterns.
    """
    memo: dict[tuple[int, int], _Runs] = {}
    longest = MAX_RUN_FROM_HAND
    none: _Runs = (INF, 0, ())

    def search(und: int, jl: int) -> _Runs:
        key = (und, jl)
        got = memo.get(key)
        if got is not None:
            return got
        if not und:
            memo[key] = out = (0, 0, ()) if jl == 0 else none
            return out
        i = (und & -und).bit_length() - 1
        v, c, w = search(und ^ (1 << i), jl)
        best = (v + pts[i], c + 1, w) if v < INF else none
        for lo in range(max(0, i - longest + 1), i + 1):
            for hi in range(max(i, lo + 2), min(n - 1, lo + longest - 1) + 1):
                win = ((1 << (hi - lo + 1)) - 1) << lo
                forced = win & ~und  # places below i, and places not held: jokers
                room = min(jl, per_meld) - forced.bit_count()
                if room < 0:
                    continue
                optional = [1 << q for q in range(i + 1, hi + 1) if und >> q & 1]
                choices = [0] + (optional if room >= 1 else [])
                if room >= 2:
                    choices += [a | b for x, a in enumerate(optional) for b in optional[x + 1:]]
                for extra in choices:
                    nat = und & win & ~extra
                    if nat.bit_count() < 2:
                        continue
                    jokers = forced | extra
                    v, c, w = search(und & ~nat, jl - jokers.bit_count())
                    if v < best[0] or (v == best[0] and v < INF and c < best[1]):
                        best = (v, c, ((lo, hi - lo + 1, jokers),) + w)
        memo[key] = best
        return best

    return search


@lru_cache(maxsize=16)
def _tables(ranks: tuple[int, ...], rank_points: tuple[int, ...], per_meld: int = 2) -> _SuitTables:
    return _SuitTables(ranks, rank_points, per_meld)


@lru_cache(maxsize=16)
def _meld_tables(ranks: tuple[int, ...], rank_points: tuple[int, ...], per_meld: int) -> MeldTables:
    t = _tables(ranks, rank_points, per_meld)
    return MeldTables(ranks, rank_points, t.windows, t.best[0])


# Subsets (as suit nibbles) of a nibble of suits, with at least 2 suits, largest first.
_SUBSETS: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        sorted(
            (s for s in range(16) if s & n == s and s.bit_count() >= 2),
            key=lambda s: -s.bit_count(),
        )
    )
    for n in range(16)
)


def _set_moves(jr: int, nib: int, per_meld: int = 2) -> tuple[tuple[int, int], ...]:
    """The sets one rank held in the suits ``nib`` can go into, with ``jr`` jokers free
    and at most ``per_meld`` in one set: (suits whose card goes into sets, jokers used)."""
    moves = [
        (sub, z)
        for sub in _SUBSETS[nib]
        for z in range(max(0, 3 - sub.bit_count()), min(jr, 4 - sub.bit_count(), per_meld) + 1)
    ]
    if nib == 15 and jr >= 2:
        # All four suits and both jokers: two sets of this rank (two suits and a joker
        # each), e.g. 12O 12C JK1 and 12E 12B JK2.
        moves.append((15, 2))
    return tuple(moves)


#: ``_SET_MOVES[jokers per meld][jokers free][suits holding the rank]``.
_SET_MOVES = {
    per_meld: tuple(tuple(_set_moves(jr, nib, per_meld) for nib in range(16)) for jr in range(3))
    for per_meld in (1, 2)
}


def _joker_allocations(jr: int) -> tuple[tuple[int, int, int, int], ...]:
    """Ways to use up to ``jr`` jokers in the runs of the four suits (jokers per suit)."""
    out = [(0, 0, 0, 0)]
    if jr >= 1:
        out += [tuple(1 if i == s else 0 for i in range(4)) for s in range(4)]  # type: ignore[misc]
    if jr >= 2:
        out += [tuple(2 if i == s else 0 for i in range(4)) for s in range(4)]  # type: ignore[misc]
        out += [
            tuple(1 if i in (s, t) else 0 for i in range(4))  # type: ignore[misc]
            for s, t in combinations(range(4), 2)
        ]
    return tuple(out)


_JOKER_ALLOCATIONS = tuple(_joker_allocations(jr) for jr in range(3))


class Solver:
    """Exact solver for one rule set. Get one with :func:`solver_for`."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        t = _tables(rules.ranks, rules.rank_points, rules.jokers_per_meld)
        self._t = t
        self.t0 = t.best[0]
        self.d1 = t.d1
        self.d2 = t.d2
        self.pts = t.points
        self.cover = t.cover
        self.jp = rules.joker_points
        #: Points of each card number when left unmatched.
        self.card_points = _points_of(rules)
        self.max_unmatched = rules.close_max_unmatched
        self.max_points = rules.close_max_points
        self._pos = {r: i for i, r in enumerate(rules.ranks)}
        self._moves = _SET_MOVES[rules.jokers_per_meld]
        self._per_meld = rules.jokers_per_meld
        #: Every card that plays as a joker, in either numbering (see _WildSolver).
        self._jokers_all = JOKER_MASK | rules.wild_naturals
        #: The melds handed out, built once per (suit, pattern, jokers) or set.
        self._melds = _meld_tables(rules.ranks, rules.rank_points, rules.jokers_per_meld)
        #: The arrangements best_arrangement hands out unsearched: melds made when read.
        self._pending = pending_kind(_plain_melds, self._melds)

    # -- wild cards (see _WildSolver; here, no wild card: the identity) ----------------
    def to_slots(self, mask: int) -> int:
        """The mask with each wild card moved to its joker number (what the tables see)."""
        return mask

    def from_slots(self, mask: int) -> int:
        """The inverse of :meth:`to_slots`."""
        return mask

    def card_from_slot(self, card: int) -> Card:
        """The card a joker number of :meth:`to_slots` stands for (others unchanged)."""
        return CARDS[card]

    # -- values -------------------------------------------------------------------
    def deadwood(self, mask: int) -> int:
        """Least unmatched points of a hand (any number of cards)."""
        # The suits are split off in halves: fewer operations on the 50-bit mask, and
        # the last suit's field is below 4096 exactly when no joker is held.
        lo = mask & 16777215  # suits 0 and 1
        hi = mask >> 24  # suits 2 and 3, the jokers above them
        d = hi >> 12
        if d < 4096:  # no joker
            a = lo & 4095
            b = lo >> 12
            c = hi & 4095
            ab, cd = a & b, c & d  # (most hands hold no rank in both suits of a pair)
            cand = (ab and ab & (c | d)) | (cd and cd & (a | b))  # ranks in 3 or 4 suits
            if cand:
                # Such a rank whose cards fit in no run of their suit (cover[0] of the
                # whole hand) is best melded as one set of all its cards: without jokers
                # those cards are otherwise unmatched. Only the other ranks need a search.
                cov = self.cover[0]
                sure = cand & ~(cov[a] | cov[b] | cov[c] | cov[d])
                if sure:
                    a &= ~sure
                    b &= ~sure
                    c &= ~sure
                    d &= ~sure
                    cand ^= sure
                if cand:
                    return self._sets_rest(a, b, c, d, 0, self.jp, cand)
            t = self.t0
            return t[a] + t[b] + t[c] + t[d]
        j = mask >> 48
        return self._sets_rest(lo & 4095, lo >> 12, hi & 4095, d & 4095, (j & 1) + (j >> 1),
                               self.jp, 4095)

    def is_full(self, mask: int) -> bool:
        """Can every card of the hand be melded?"""
        j = mask >> 48
        if not j:
            return self.deadwood(mask) == 0
        a = mask & 4095
        b = mask >> 12 & 4095
        c = mask >> 24 & 4095
        d = mask >> 36 & 4095
        return self._sets_rest(a, b, c, d, (j & 1) + (j >> 1), _UNMELDABLE, 4095) == 0

    def _sets_rest(self, a: int, b: int, c: int, d: int, jr: int, jp: int, cand: int) -> int:
        """Least points of suit patterns a..d with ``jr`` jokers (each left unmatched
        costs ``jp``), trying every set choice for the ranks in ``cand``."""
        # Candidates still to decide, restricted to ranks still held in enough suits.
        if jr:
            still = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
        else:
            still = (a & b & (c | d)) | (c & d & (a | b))
        cand &= still
        if not cand:
            # Sets decided: runs only, the jokers spread over the suits by the tables.
            t = self.t0
            base = t[a] + t[b] + t[c] + t[d]
            if not jr:
                return base
            d1 = self.d1
            if jr == 1:
                m = min(d1[a], d1[b], d1[c], d1[d])
                return base + (m if m < jp else jp)
            d2 = self.d2
            s = sorted((d1[a], d1[b], d1[c], d1[d]))
            return base + min(2 * jp, jp + s[0], s[0] + s[1], d2[a], d2[b], d2[c], d2[d])
        low = cand & -cand
        cand ^= low
        nib = (a & low and 1) | (b & low and 2) | (c & low and 4) | (d & low and 8)
        best = self._sets_rest(a, b, c, d, jr, jp, cand)
        for sub, z in self._moves[jr][nib]:
            # (sub names suits that hold this rank: XOR takes their card out)
            v = self._sets_rest(
                a ^ low if sub & 1 else a,
                b ^ low if sub & 2 else b,
                c ^ low if sub & 4 else c,
                d ^ low if sub & 8 else d,
                jr - z,
                jp,
                cand,
            )
            if v < best:
                best = v
                if not v:
                    return 0
        return best

    # -- arrangements ----------------------------------------------------------------
    def best_arrangement(self, cards: int | Iterable[int]) -> Arrangement:
        """The split with the fewest unmatched points (then the fewest unmatched cards).

        The split and its points are decided here; its melds and unmatched cards are
        made from the tables when first read (see arrangement.py)."""
        mask = cards if isinstance(cards, int) else mask_of(cards)
        lo = mask & 16777215  # the suits split off in halves, as in deadwood()
        hi = mask >> 24
        d = hi >> 12
        if d >= 4096:  # a joker
            return self._searched(mask)
        a = lo & 4095
        b = lo >> 12
        c = hi & 4095
        ab, cd = a & b, c & d
        sure = (ab and ab & (c | d)) | (cd and cd & (a | b))  # ranks held in 3 or 4 suits
        t = self.t0
        if sure:
            # As in deadwood(): without jokers, a rank held in 3-4 suits whose cards fit
            # in no run is one set of all those cards in every best split (any other
            # choice leaves some of them unmatched). When every such rank is sure, the
            # rest is runs only; otherwise the search decides.
            cov = self.cover[0]
            if sure & (cov[a] | cov[b] | cov[c] | cov[d]):
                return self._searched(mask)
            keep = ~sure
            points = t[a & keep] + t[b & keep] + t[c & keep] + t[d & keep]
        else:
            points = t[a] + t[b] + t[c] + t[d]
        arr: Arrangement = _new(self._pending)
        arr.points = points
        arr._plan = mask  # type: ignore[assignment]  # (the pending kind's plan: the mask)
        return arr

    def _searched(self, mask: int) -> Arrangement:
        """:meth:`best_arrangement` by the search over set choices and joker spreads."""
        jokers_held = _JOKERS_HELD[mask >> 48 & 3]
        pats = (mask & 4095, mask >> 12 & 4095, mask >> 24 & 4095, mask >> 36 & 4095)
        sure_sets: list[tuple[int, int, int]] = []
        if not jokers_held:
            # See best_arrangement: the sure sets first, the other ranks searched.
            a, b, c, d = pats
            cov = self.cover[0]
            sure = (a & b & (c | d)) | (c & d & (a | b))
            sure &= ~(cov[a] | cov[b] | cov[c] | cov[d])
            if sure:
                for low in (1 << r for r in range(12) if sure >> r & 1):
                    sure_sets.append((low, sum(1 << i for i in range(4) if pats[i] & low), 0))
                pats = (a & ~sure, b & ~sure, c & ~sure, d & ~sure)
        best: list[Any] = [INF, INF, [], pats, (0, 0, 0, 0)]
        a, b, c, d = pats
        _search_sets(self._t.best, self._t.count, self._moves, self.jp,
                     a, b, c, d, len(jokers_held), 0, sure_sets, best)
        v, _, sets, rest, alloc = best
        # The points: those the search found, with each joker left unmatched at its own
        # points rather than the search's penalty ``jp`` (they are the same but in
        # full_arrangement). The jokers go to the sets first, then the suits' runs.
        used = sum(alloc) + sum(z for _, _, z in sets)
        points = v - (len(jokers_held) - used) * self.jp
        card_points = self.card_points
        for j in jokers_held[used:]:
            points += card_points[j]
        return Arrangement._later(points, (_built_melds, self._melds, sets, rest, alloc, jokers_held))

    # -- closing -----------------------------------------------------------------------
    def may_close_some(self, hand8: int) -> bool:
        """Cheap necessary test: could any discard from this hand allow closing?

        The cards that belong to some meld of the whole hand must be at least
        ``7 - close_max_unmatched``; random hands fail this almost always.
        """
        return self._meldable(hand8).bit_count() >= 7 - self.max_unmatched

    def has_meld(self, mask: int) -> bool:
        """Do some of these cards form a meld?"""
        # Exact: a natural card in ``meldable`` lies in a run window the jokers held can
        # fill, or has a rank held in 3 suits (or in 2, with a joker held for the set).
        return bool(self._meldable(mask) & ~JOKER_MASK)

    def _meldable(self, mask: int) -> int:
        """The cards of a hand that may belong to some meld (jokers always may).

        A superset, cheap to get: a natural card qualifies if it lies in a run window
        of its suit that the jokers held could fill (``cover``), or if its rank is held
        in enough suits for a set. A card outside it is unmatched in every arrangement.
        """
        a = mask & 4095
        b = mask >> 12 & 4095
        c = mask >> 24 & 4095
        d = mask >> 36 & 4095
        j = mask >> 48
        cov = self.cover[(j & 1) + (j >> 1)]
        if j:
            sets = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
        else:
            sets = (a & b & (c | d)) | (c & d & (a | b))
        return (
            ((cov[a] | sets) & a)
            | ((cov[b] | sets) & b) << 12
            | ((cov[c] | sets) & c) << 24
            | ((cov[d] | sets) & d) << 36
            | j << 48
        )

    # The public name; within the solver, _meldable (a mask in the tables' numbering:
    # _WildSolver's meldable gives it back in the cards' own).
    meldable = _meldable

    def closing(self, hand7: int, score: int = 0) -> Arrangement | None:
        """The best arrangement that allows closing with these 7 cards, or ``None``.

        Best means fewest unmatched points, then fewest unmatched cards; the limits are
        the rule set's ``close_max_unmatched`` / ``close_max_points`` and
        ``score + points < score_limit``.
        """
        split = self._closing_split(hand7, score)
        if split is None:
            return None
        pts, left = split
        if not left:
            return self.full_arrangement(hand7)
        melded = self.full_arrangement(hand7 & ~mask_of(left))
        return Arrangement(melded.melds, left, pts)

    def can_close(self, hand7: int, score: int = 0) -> bool:
        """Whether :meth:`closing` finds an arrangement (without building it)."""
        return self._closing_split(hand7, score) is not None

    def _closing_split(self, hand7: int, score: int) -> tuple[int, tuple[Card, ...]] | None:
        """(points, unmatched cards) of the best closing arrangement, or ``None``."""
        limit = min(self.max_points, self.rules.score_limit - 1 - score)
        if limit < 0:
            return None
        least = self.deadwood(hand7)
        if least > limit:
            return None
        # Without jokers, every card is melded exactly when no points are left.
        full = self.is_full(hand7) if hand7 >> 48 else least == 0
        if full:
            return 0, ()
        # Cards that fit in no meld must all be among the unmatched ones.
        loose = hand7 & ~self._meldable(hand7)
        cards = cards_of(hand7)
        best: tuple[int, int, tuple[Card, ...]] | None = None
        card_points = self.card_points
        for n in range(max(1, loose.bit_count()), self.max_unmatched + 1):
            for left in combinations(cards, n):
                left_mask = mask_of(left)
                if loose & ~left_mask:
                    continue
                pts = sum([card_points[c] for c in left])
                if pts > limit or (best is not None and (pts, n) >= best[:2]):
                    continue
                if self.is_full(hand7 & ~left_mask):
                    best = (pts, n, left)
        if best is None:
            return None
        return best[0], tuple(best[2])

    def full_arrangement(self, mask: int) -> Arrangement:
        """An arrangement melding every card (caller checked :meth:`is_full`).

        Seven cards that form one run are laid down as that run.
        """
        run = self.single_run(mask)
        if run is not None:
            return Arrangement((run,), (), 0)
        saved = self.jp
        self.jp = _UNMELDABLE
        try:
            arr = self.best_arrangement(mask)
        finally:
            self.jp = saved
        return Arrangement(arr.melds, arr.unmatched, 0 if not arr.unmatched else arr.points)

    def single_run(self, mask: int) -> Meld | None:
        """These cards as one run (3 to 7 cards), or ``None``."""
        naturals_mask = mask & ~JOKER_MASK
        if all(naturals_mask & ~(4095 << 12 * suit) for suit in range(4)):
            return None  # natural cards of more than one suit (or none)
        cards = cards_of(mask)
        naturals = [c for c in cards if c < 48]
        jokers = [c for c in cards if c >= 48]
        if not 3 <= len(cards) <= MAX_RUN_FROM_HAND or len(naturals) < 2:
            return None
        if len({c.suit for c in naturals}) != 1 or len(jokers) > self._per_meld:
            return None
        pos = sorted(self._pos[c.rank] for c in naturals)
        if len(set(pos)) != len(pos):
            return None
        n = len(cards)
        top = len(self.rules.ranks) - 1
        # The run covers positions lo..lo+n-1 holding every natural; jokers fill the
        # gaps, then extend it upward, then downward.
        lo = min(pos[0], top - n + 1)
        if lo < 0 or lo + n - 1 < pos[-1]:
            return None
        by_pos = {self._pos[c.rank]: c for c in naturals}
        free = list(jokers)
        seq = [by_pos[q] if q in by_pos else free.pop(0) for q in range(lo, lo + n)]
        # Canonical already (ascending, each joker in its place): what make_meld builds.
        return Meld(MeldKind.RUN, tuple(seq), naturals[0].suit, lo)

    def bonus(self, hand7: int) -> int:
        """Bonus class of a closer's seven cards: 0 none, 1 (-10), 2 (-25), 3 (-50), 4 chinchón."""
        if not self.is_full(hand7):
            return _BONUS_NONE
        run = self.single_run(hand7) if (hand7 & ~JOKER_MASK).bit_count() >= 2 else None
        if run is not None and len(run.cards) == 7:
            j = (run.mask & self._jokers_all).bit_count()
            return _BONUS_CHINCHON if j == 0 else _BONUS_MINUS50 if j == 1 else _BONUS_MINUS25
        return _BONUS_MINUS10


class Bonus(enum.StrEnum):
    """The closer's bonus of a hand: its value is the record's name without ``BONUS_``,
    lower case (``chinchon.v1.Bonus``)."""

    NONE = "none"
    #: Closed with every card melded.
    MINUS_10 = "minus_10"
    #: Closed with a run of seven holding two jokers (wild cards count).
    MINUS_25 = "minus_25"
    #: Closed with a run of seven holding one joker.
    MINUS_50 = "minus_50"
    #: A run of seven with no joker: the game is won.
    CHINCHON = "chinchon"


BONUS_NAMES = {
    _BONUS_NONE: Bonus.NONE,
    _BONUS_MINUS10: Bonus.MINUS_10,
    _BONUS_MINUS25: Bonus.MINUS_25,
    _BONUS_MINUS50: Bonus.MINUS_50,
    _BONUS_CHINCHON: Bonus.CHINCHON,
}
BONUS_POINTS = {
    _BONUS_NONE: 0,
    _BONUS_MINUS10: -10,
    _BONUS_MINUS25: -25,
    _BONUS_MINUS50: -50,
    _BONUS_CHINCHON: -10,
}


class _WildSolver(Solver):
    """The solver of a rule set with wild cards.

    Each wild card is moved to a joker number the deck does not use (48 + jokers, then
    the next) on the way in, and back on the way out: the tables and the search only
    ever see jokers. Both moves leave a mask already moved unchanged, so the methods
    of :class:`Solver` that call each other may pass on moved masks.
    """

    def __init__(self, rules: RuleSet) -> None:
        super().__init__(rules)
        wild = cards_of(rules.wild_naturals)
        slots = [48 + rules.jokers + i for i in range(len(wild))]
        self._pairs = tuple(zip(wild, slots, strict=True))
        self._nat = rules.wild_naturals
        self._slots = mask_of(slots)
        self._back = {s: w for w, s in self._pairs}

    def to_slots(self, mask: int) -> int:
        nat = mask & self._nat
        if not nat:
            return mask
        mask ^= nat
        for w, s in self._pairs:
            if nat >> w & 1:
                mask |= 1 << s
        return mask

    def from_slots(self, mask: int) -> int:
        moved = mask & self._slots
        if not moved:
            return mask
        mask ^= moved
        for w, s in self._pairs:
            if moved >> s & 1:
                mask |= 1 << w
        return mask

    def card_from_slot(self, card: int) -> Card:
        return CARDS[self._back.get(card, card)]

    def _meld_back(self, m: Meld) -> Meld:
        back = self._back
        cards = tuple(CARDS[back.get(c, c)] for c in m.cards)
        if m.kind is MeldKind.SET:  # naturals by suit, then the jokers in card order
            wild = self._jokers_all
            cards = tuple(c for c in cards if not wild >> c & 1) + tuple(
                sorted(c for c in cards if wild >> c & 1))
        return Meld(m.kind, cards, m.suit, m.low)

    def _back_arrangement(self, arr: Arrangement) -> Arrangement:
        melds = sorted((self._meld_back(m) for m in arr.melds), key=lambda m: m.cards)
        unmatched = sorted(self.card_from_slot(c) for c in arr.unmatched)
        return Arrangement(tuple(melds), tuple(unmatched), arr.points)

    def deadwood(self, mask: int) -> int:
        return super().deadwood(self.to_slots(mask))

    def is_full(self, mask: int) -> bool:
        return super().is_full(self.to_slots(mask))

    def meldable(self, mask: int) -> int:
        return self.from_slots(self._meldable(self.to_slots(mask)))

    def has_meld(self, mask: int) -> bool:
        return super().has_meld(self.to_slots(mask))

    def may_close_some(self, hand8: int) -> bool:
        return super().may_close_some(self.to_slots(hand8))

    def can_close(self, hand7: int, score: int = 0) -> bool:
        return super().can_close(self.to_slots(hand7), score)

    def best_arrangement(self, cards: int | Iterable[int]) -> Arrangement:
        mask = cards if isinstance(cards, int) else mask_of(cards)
        return self._back_arrangement(super().best_arrangement(self.to_slots(mask)))

    def closing(self, hand7: int, score: int = 0) -> Arrangement | None:
        arr = super().closing(self.to_slots(hand7), score)
        return None if arr is None else self._back_arrangement(arr)

    def full_arrangement(self, mask: int) -> Arrangement:
        return self._back_arrangement(super().full_arrangement(self.to_slots(mask)))

    def single_run(self, mask: int) -> Meld | None:
        run = super().single_run(self.to_slots(mask))
        return None if run is None else self._meld_back(run)

    def bonus(self, hand7: int) -> int:
        return super().bonus(self.to_slots(hand7))


@lru_cache(maxsize=64)
def _cached_solver(rules: RuleSet) -> Solver:
    return _WildSolver(rules) if rules.wild_naturals else Solver(rules)


_last_solver: tuple[RuleSet | None, Solver | None] = (None, None)


def solver_for(rules: RuleSet) -> Solver:
    """The solver of a rule set (built once per rule set)."""
    # A game asks once a turn with the same RuleSet object: an identity check is much
    # cheaper than hashing every field of the rule set for the cache look-up.
    global _last_solver
    last_rules, solver = _last_solver
    if last_rules is rules and solver is not None:
        return solver
    solver = _cached_solver(rules)
    _last_solver = (rules, solver)
    return solver


def best_arrangement(cards: int | Iterable[int], rules: RuleSet) -> Arrangement:
    """Best split of ``cards`` (mask or cards) into melds + unmatched, fewest points."""
    return solver_for(rules).best_arrangement(cards)


def deadwood(cards: int | Iterable[int], rules: RuleSet) -> int:
    """Least unmatched points of ``cards``."""
    mask = cards if isinstance(cards, int) else mask_of(cards)
    return solver_for(rules).deadwood(mask)


def _plain_melds(tables: MeldTables, mask: int) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
    """The melds and unmatched cards of a hand without jokers that best_arrangement did
    not search: each suit's runs and cards left from the tables, and the sure sets (the
    ranks held in 3-4 suits, none of whose cards fits in a run)."""
    a = mask & 4095
    b = mask >> 12 & 4095
    c = mask >> 24 & 4095
    d = mask >> 36 & 4095
    sure = (a & b & (c | d)) | (c & d & (a | b))
    runs0, runs1, runs2, runs3 = tables.runs
    left0, left1, left2, left3 = tables.left
    if not sure:
        # Runs only: the runs are in order already (suit by suit, ascending).
        return runs0[a] + runs1[b] + runs2[c] + runs3[d], left0[a] + left1[b] + left2[c] + left3[d]
    plain_sets = tables.plain_sets
    a &= ~sure
    b &= ~sure
    c &= ~sure
    d &= ~sure
    melds: list[Meld] = list(runs0[a] + runs1[b] + runs2[c] + runs3[d])
    rest = sure
    while rest:
        low = rest & -rest
        rest ^= low
        nib = (mask & low and 1) | (mask >> 12 & low and 2) | (
            mask >> 24 & low and 4) | (mask >> 36 & low and 8)
        one = plain_sets[(low.bit_length() - 1) << 4 | nib]
        assert one is not None
        melds.append(one)
    melds.sort(key=_cards_key)  # (no joker here: the melds' order is their first cards')
    return tuple(melds), left0[a] + left1[b] + left2[c] + left3[d]


def _built_melds(
    tables: MeldTables,
    sets: list[tuple[int, int, int]],
    rest: tuple[int, int, int, int],
    alloc: tuple[int, ...],
    jokers_held: list[int],
) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
    """The melds and unmatched cards of a split the search settled: ``sets`` (rank bit,
    suits, jokers), the suits' patterns left for runs and the jokers each suit's runs
    take. Canonical form (meld_tables.py): the sets take the jokers first, in the order
    chosen, then the runs suit by suit; jokers left are unmatched after the naturals."""
    free = list(jokers_held)
    melds: list[Meld] = []
    for low, sub, z in sets:
        if z:
            melds.append(tables.set_meld(low, sub, tuple(free[:z])))
            del free[:z]
        else:
            melds.append(tables.set_meld(low, sub, ()))
    unmatched: list[Card] = []
    runs, left = tables.runs, tables.left
    for suit in range(4):
        k = alloc[suit]
        p = rest[suit]
        if k:
            suit_runs, suit_left, _ = tables.entry(suit, p, tuple(free[:k]))
            del free[:k]
            melds += suit_runs
            unmatched += suit_left
        else:
            melds += runs[suit][p]
            unmatched += left[suit][p]
    unmatched += [CARDS[j] for j in free]
    melds.sort(key=_cards_key)
    return tuple(melds), tuple(unmatched)


_JOKERS_HELD: tuple[list[int], ...] = ([], [48], [49], [48, 49])  # by mask >> 48 (read only)
# Joker spreads over the four suits' runs with ``jr`` jokers free: (per suit..., left).
_ALLOCS = tuple(tuple((*al, jr - sum(al)) for al in _JOKER_ALLOCATIONS[jr]) for jr in range(3))


# A module-level function rather than a closure that calls itself: such a closure is a
# reference cycle, left for the garbage collector after every call.
def _search_sets(
    run_best: list[list[int]],
    count: list[list[int]],
    moves: tuple[tuple[tuple[tuple[int, int], ...], ...], ...],
    jp: int,
    a: int,
    b: int,
    c: int,
    d: int,
    jr: int,
    done: int,
    acc: list[tuple[int, int, int]],
    best: list[Any],
) -> None:
    """Every way of forming sets from the suit patterns a..d with ``jr`` jokers free,
    each finished by every spread of the jokers left over the suits' runs; ``best``
    becomes [points, unmatched cards, sets, rest, spread] of the first least (points,
    cards). The sets are (rank bit, suit nibble, jokers); the lowest rank first, with
    no set first, then its moves in ``_SET_MOVES`` order."""
    if jr:
        cand = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
    else:
        cand = (a & b & (c | d)) | (c & d & (a | b))
    cand &= ~done
    if not cand:
        for ka, kb, kc, kd, left in _ALLOCS[jr]:
            v = run_best[ka][a] + run_best[kb][b] + run_best[kc][c] + run_best[kd][d] + left * jp
            if v >= INF or v > best[0]:
                continue  # (the count only breaks ties in points)
            n = count[ka][a] + count[kb][b] + count[kc][c] + count[kd][d] + left
            if v < best[0] or n < best[1]:
                best[:] = v, n, acc, (a, b, c, d), (ka, kb, kc, kd)
        return
    low = cand & -cand
    done |= low
    nib = (a & low and 1) | (b & low and 2) | (c & low and 4) | (d & low and 8)
    _search_sets(run_best, count, moves, jp, a, b, c, d, jr, done, acc, best)
    for sub, z in moves[jr][nib]:
        if sub == 15 and z == 2:  # two sets of this rank, two suits and a joker each
            sets = acc + [(low, 3, 1), (low, 12, 1)]
        else:
            sets = acc + [(low, sub, z)]
        _search_sets(
            run_best, count, moves, jp,
            a ^ low if sub & 1 else a,
            b ^ low if sub & 2 else b,
            c ^ low if sub & 4 else c,
            d ^ low if sub & 8 else d,
            jr - z, done, sets, best,
        )


# The same melds turn up in hand after hand: each is validated once per rule set. And
# the melds of a hand are those of each rank held and each suit held, which repeat far
# more often than whole hands do: those lists are kept too, per rule set, keyed by the
# cards of that rank (or suit) and the jokers held.
class _MeldCache:
    LIMIT = 200_000  # entries of each kind; then it starts afresh

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.per_meld = rules.jokers_per_meld
        self.pos = {r: i for i, r in enumerate(rules.ranks)}
        self.melds: dict[tuple[Card, ...], Meld] = {}
        self.sets: dict[tuple[tuple[Card, ...], int], list[Meld]] = {}
        self.runs: dict[tuple[int, int, int], list[Meld]] = {}

    def bound(self) -> None:
        if max(len(self.melds), len(self.sets), len(self.runs)) > self.LIMIT:
            self.melds.clear()
            self.sets.clear()
            self.runs.clear()

    def meld(self, cards: tuple[Card, ...]) -> Meld:
        m = self.melds.get(cards)
        if m is None:
            m = self.melds[cards] = make_meld(cards, self.rules)
        return m

    def sets_of(self, group: tuple[Card, ...], jokers: list[Card]) -> list[Meld]:
        """The sets made of cards of one rank (``group``) and the jokers held."""
        out: list[Meld] = []
        for n in range(2, len(group) + 1):
            for nat in combinations(group, n):
                for z in range(max(0, 3 - n), min(len(jokers), 4 - n, self.per_meld) + 1):
                    for jk in combinations(jokers, z):
                        out.append(self.meld(nat + jk))
        return out

    def runs_of(self, have: dict[int, Card], jokers: list[Card]) -> list[Meld]:
        """The runs made of cards of one suit (``have``: rank position -> card) and
        the jokers held."""
        out: list[Meld] = []
        top = len(self.rules.ranks)
        usable = min(len(jokers), self.per_meld)  # jokers one run may hold
        for lo in range(top):
            for length in range(3, min(MAX_RUN_FROM_HAND, top - lo) + 1):
                window = range(lo, lo + length)
                holes = [q for q in window if q not in have]
                if len(holes) > usable:
                    break  # not enough jokers, nor for the longer windows from lo
                held = [q for q in window if q in have]
                # A joker may also stand for a card that is held (that card then goes
                # elsewhere, e.g. 2C JK1 4C with 3C in a set of threes).
                for extra in range(usable - len(holes) + 1):
                    for sub in combinations(held, extra):
                        gaps = sorted(holes + list(sub))
                        if length - len(gaps) < 2:
                            continue
                        # Runs are only listed once per joker placement and joker identity.
                        for jk in _ordered_jokers(jokers, len(gaps)):
                            fill = dict(zip(gaps, jk, strict=True))
                            seq = [fill[q] if q in fill else have[q] for q in window]
                            out.append(self.meld(tuple(seq)))
        return out


_MELD_CACHES: dict[RuleSet, _MeldCache] = {}


def meld_candidates(mask: int, rules: RuleSet) -> list[Meld]:
    """Every valid meld (canonical form) made only of cards in ``mask``."""
    cache = _MELD_CACHES.get(rules)
    if cache is None:
        if len(_MELD_CACHES) >= 64:
            _MELD_CACHES.clear()
        cache = _MELD_CACHES[rules] = _MeldCache(rules)
    else:
        cache.bound()
    cards = cards_of(mask)
    wild_nat = rules.wild_naturals
    if wild_nat:  # wild cards: the jokers held are a mask (a key), and no natural
        wild = rules.wild_mask
        j = mask & wild
        jokers = [c for c in cards if wild >> c & 1]
        cards = [c for c in cards if not wild >> c & 1]
        mask &= ~wild_nat
    else:
        j = mask >> 48
        jokers = [c for c in cards if c >= 48]
    by_rank: dict[int, list[Card]] = {}
    for c in cards:
        if c < 48:
            by_rank.setdefault(c % 12, []).append(c)
    out: list[Meld] = []
    sets = cache.sets
    for group in by_rank.values():
        if len(group) + len(jokers) < 3:
            continue
        key = (tuple(group), j)
        ms = sets.get(key)
        if ms is None:
            ms = sets[key] = cache.sets_of(key[0], jokers)
        out += ms
    runs = cache.runs
    for suit in range(4):
        bits = mask >> 12 * suit & 4095
        if not bits:
            continue
        rkey = (suit, bits, j)
        ms = runs.get(rkey)
        if ms is None:
            pos = cache.pos
            have = {pos[c.rank]: c for c in cards if c < 48 and c // 12 == suit}
            ms = runs[rkey] = cache.runs_of(have, jokers)
        out += ms
    return out


def _ordered_jokers(jokers: list[Card], n: int) -> list[tuple[Card, ...]]:
    from itertools import permutations

    return list(permutations(jokers, n))


def all_arrangements(mask: int, rules: RuleSet) -> list[Arrangement]:
    """Every split of the cards into disjoint valid melds plus the rest (brute force).

    Used to list legal lay-downs and by the tests as the reference the fast solver
    is checked against.
    """
    return arrangements_of(mask, sorted_candidates(mask, rules), rules)


def sorted_candidates(mask: int, rules: RuleSet) -> list[Meld]:
    """:func:`meld_candidates` in the order :func:`all_arrangements` explores them."""
    cands = meld_candidates(mask, rules)
    cands.sort(key=lambda m: m.cards)
    return cands


@lru_cache(maxsize=64)
def _points_of(rules: RuleSet) -> tuple[int, ...]:
    """Each card's points (indexed by card), as ``rules.card_points`` gives them."""
    return tuple(rules.card_points(c) for c in range(50))


def arrangements_of(
    mask: int,
    cands: list[Meld],
    rules: RuleSet,
    max_unmatched: int | None = None,
    max_points: int | None = None,
) -> list[Arrangement]:
    """The splits of ``mask`` over ``cands``, in :func:`all_arrangements`' order.

    ``cands`` are :func:`sorted_candidates` of ``mask`` or of a superset of it (melds
    with a card outside ``mask`` are left out). With limits, only the splits leaving at
    most ``max_unmatched`` cards worth at most ``max_points``: the same list as
    filtering every split, but branches that cannot meet the limits are not explored.
    """
    masks = [m.mask for m in cands]
    keep = [i for i, m in enumerate(masks) if not m & ~mask]
    cands = [cands[i] for i in keep]
    masks = [masks[i] for i in keep]
    n = len(cands)
    # reach[i]: the cards that candidates i, i + 1, ... could still meld.
    reach = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        reach[i] = reach[i + 1] | masks[i]
    limited = max_unmatched is not None or max_points is not None
    most_cards = 50 if max_unmatched is None else max_unmatched
    most_points = INF if max_points is None else max_points
    points = _points_of(rules).__getitem__  # card -> its points
    out: list[Arrangement] = []

    def rec(start: int, used: int, chosen: list[Meld]) -> None:
        left = mask & ~used
        if limited:
            # Cards that no later candidate melds stay unmatched in this whole branch.
            stuck = left & ~reach[start]
            if stuck.bit_count() > most_cards or (
                sum(map(points, cards_of(stuck))) if stuck else 0
            ) > most_points:
                return
        unmatched = tuple(cards_of(left))
        if len(unmatched) <= most_cards:
            pts = sum(map(points, unmatched))
            if pts <= most_points:
                out.append(Arrangement(tuple(chosen), unmatched, pts))
        for i in range(start, n):
            if masks[i] & used:
                continue
            chosen.append(cands[i])
            rec(i + 1, used | masks[i], chosen)  # noqa: F821 (deleted only once done)
            chosen.pop()

    try:
        rec(0, 0, [])
    finally:
        del rec  # it refers to itself: a cycle the garbage collector would have to find
    return out
