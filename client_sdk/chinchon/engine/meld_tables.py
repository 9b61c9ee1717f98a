"""The melds of one suit's runs and of one rank's sets, built once per rule set.

The solver's search (:mod:`solver`) settles an arrangement as numbers: the sets chosen
(rank bit, suits, jokers), and for each suit its rank pattern left for runs and the
jokers those runs take. The runs that split a pattern best are a property of the rule
set's tables, so the :class:`Meld` objects they make, the cards they leave unmatched
and those cards' points are built the first time a (suit, pattern, jokers) is asked
for and kept: after that, an arrangement is a few look-ups and tuple concatenations,
and no meld object is built.

What it costs in memory: at most one entry per suit, rank pattern and choice of jokers
(4 suits x 1,024 patterns of the 40-card deck, 4,096 of the 48-card one, x 4 joker
choices: none, JK1, JK2, both), each a few hundred bytes with its melds, and filled only
as hands ask for them. Sets: one entry per (rank, suits, jokers). The no-joker entries
sit in a list of 4 x 4,096 slots (128 KiB) for the fastest look-up.
"""

from __future__ import annotations

from .cards import CARDS, Card, make_card
from .melds import Meld, MeldKind

#: (the runs of one suit, the cards they leave, those cards' points)
SuitEntry = tuple[tuple[Meld, ...], tuple[Card, ...], int]
#: Runs of one suit pattern: (first position, length, positions where a joker stands).
Windows = tuple[tuple[int, int, int], ...]


class MeldTables:
    """Tables of the melds one deck's solver hands out (see :func:`meld_tables`)."""

    def __init__(
        self,
        ranks: tuple[int, ...],
        rank_points: tuple[int, ...],
        windows: list[list[Windows]],
        best0: list[int],
    ) -> None:
        self._ranks = ranks
        self._best0 = best0
        self._rank_points = rank_points
        self._windows = windows
        # Without jokers, every pattern of the deck's ranks is built now (a few ms):
        # ``runs[suit][pattern]``, ``left[suit][pattern]``. Their points are the
        # solver's ``best[0]`` table.
        self.runs: tuple[list[tuple[Meld, ...]], ...] = tuple([()] * 4096 for _ in range(4))
        self.left: tuple[list[tuple[Card, ...]], ...] = tuple([()] * 4096 for _ in range(4))
        deck_bits = 0
        for r in ranks:
            deck_bits |= 1 << (r - 1)
        for suit in range(4):
            runs, left = self.runs[suit], self.left[suit]
            pattern = deck_bits
            while True:  # every subset of the deck's rank bits
                runs[pattern], left[pattern], _ = self._build(suit, pattern, ())
                if not pattern:
                    break
                pattern = (pattern - 1) & deck_bits
        self._with_jokers: dict[int, SuitEntry] = {}
        self._sets: dict[tuple[int, int, tuple[int, ...]], Meld] = {}
        #: Sets without jokers: ``plain_sets[rank bit index << 4 | suit nibble]``.
        self.plain_sets: list[Meld | None] = [None] * (12 << 4)
        for r in ranks:
            for nib in range(16):
                if nib.bit_count() >= 3:
                    self.plain_sets[(r - 1) << 4 | nib] = self.set_meld(1 << (r - 1), nib, ())

    def entry(self, suit: int, pattern: int, jokers: tuple[int, ...]) -> SuitEntry:
        """The runs of ``pattern`` in ``suit`` using exactly ``jokers`` (ascending, in
        the order the runs take them), the cards they leave and those cards' points."""
        if not jokers:
            return self.runs[suit][pattern], self.left[suit][pattern], self._best0[pattern]
        key = suit << 12 | pattern
        for j in jokers:
            key |= 1 << (j - 34)  # 48 -> bit 14, 49 -> bit 15
        entry = self._with_jokers.get(key)
        if entry is None:
            entry = self._with_jokers[key] = self._build(suit, pattern, jokers)
        return entry

    def set_meld(self, low: int, suits: int, jokers: tuple[int, ...]) -> Meld:
        """The set of rank bit ``low`` in the suits of nibble ``suits`` and ``jokers``:
        canonical form, naturals by suit then the jokers."""
        key = (low, suits, jokers)
        meld = self._sets.get(key)
        if meld is None:
            rank = low.bit_length()
            cards = [make_card(rank, s) for s in range(4) if suits >> s & 1]
            cards += [CARDS[j] for j in jokers]
            meld = self._sets[key] = Meld(MeldKind.SET, tuple(cards))
        return meld

    def _build(self, suit: int, pattern: int, jokers: tuple[int, ...]) -> SuitEntry:
        # Runs in canonical form (see melds.py): up from window position ``lo``, each
        # joker where it stands, the jokers taken in order.
        free = list(jokers)
        ranks = self._ranks
        used = 0
        melds: list[Meld] = []
        for lo, length, holes in self._windows[len(jokers)][pattern]:
            cards: list[Card] = []
            for q in range(lo, lo + length):
                if holes >> q & 1:
                    cards.append(CARDS[free.pop(0)])
                else:
                    cards.append(make_card(ranks[q], suit))
                    used |= 1 << (ranks[q] - 1)
            melds.append(Meld(MeldKind.RUN, tuple(cards), suit, lo))
        left = tuple(make_card(r + 1, suit) for r in range(12) if (pattern & ~used) >> r & 1)
        melds.sort(key=lambda m: m.cards)
        return tuple(melds), left, sum(self._rank_points[c.rank - 1] for c in left)
