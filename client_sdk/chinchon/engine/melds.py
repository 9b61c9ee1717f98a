"""Melds: sets and runs, with and without jokers; validation with a reason; lay-offs.

A :class:`Meld` is always held in canonical form, so that two equal melds compare equal:

* a set: its natural cards by suit (oros, copas, espadas, bastos), then its jokers;
* a run: ascending in the deck's rank order, each joker at the place it stands for
  (``3O JK1 5O``). ``low`` is the rank-order position of its first card.

"Joker" here means every card that plays as one: JK1/JK2 and the rule set's
``wild_cards`` (``rules.wild_mask``). A wild card is a joker wherever it stands, even
in its own place (with ``1O`` wild, ``1O 2O 3O`` is a run of two natural cards and a
joker standing for the 1O); ``rules.jokers_per_meld`` bounds the jokers of one meld.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from .cards import CARDS, DECK_RANKS, JOKER_MASK, Card, format_cards
from .errors import InvalidMeld
from .rules import RuleSet

#: Longest run a player may lay down from a hand (lay-offs may lengthen it).
MAX_RUN_FROM_HAND = 7


class MeldKind(str, Enum):
    SET = "set"
    RUN = "run"


class End(str, Enum):
    """Which end of a run a laid-off joker takes."""

    LOW = "low"
    HIGH = "high"


@dataclass(frozen=True, slots=True)
class Meld:
    kind: MeldKind
    cards: tuple[Card, ...]
    #: Suit of a run (0..3); -1 for a set.
    suit: int = -1
    #: Rank-order position of a run's first card; -1 for a set.
    low: int = -1

    @property
    def high(self) -> int:
        return self.low + len(self.cards) - 1

    @property
    def jokers(self) -> int:
        """The jokers JK1/JK2 in the meld (wild cards not counted: see
        :func:`jokers_in`)."""
        return sum(1 for c in self.cards if c >= 48)

    @property
    def mask(self) -> int:
        m = 0
        for c in self.cards:
            m |= 1 << c
        return m

    def __str__(self) -> str:
        return format_cards(self.cards)


# Rank-order position of each rank of each deck; shared, so read only.
_POSITIONS = {deck: {r: i for i, r in enumerate(ranks)} for deck, ranks in DECK_RANKS.items()}


def _positions(rules: RuleSet) -> dict[int, int]:
    return _POSITIONS[rules.deck]


def jokers_in(meld: Meld, rules: RuleSet) -> int:
    """How many of the meld's cards play as jokers under ``rules`` (wild cards too)."""
    return (meld.mask & rules.wild_mask).bit_count()


def _check_cards(cards: Sequence[Card], rules: RuleSet) -> None:
    seen: set[int] = set()
    in_deck_ranks = _positions(rules)
    for c in cards:
        if c in seen:
            raise InvalidMeld(f"{c} appears twice")
        seen.add(c)
        if c >= 48:
            if c - 47 > rules.jokers:
                raise InvalidMeld(f"{c} is not in this deck (jokers = {rules.jokers})")
        elif c.rank not in in_deck_ranks:
            raise InvalidMeld(f"{c} is not in the {rules.deck}-card deck")


def make_meld(
    cards: Sequence[Card], rules: RuleSet, max_run: int | None = MAX_RUN_FROM_HAND
) -> Meld:
    """Validate ``cards`` as one meld and return it in canonical form.

    Runs with jokers must be written ascending with each joker where it stands
    (``3O JK1 5O``); runs without jokers may come in any order. ``max_run`` bounds
    the length of a run (7 for a run laid down from a hand; ``None`` for no bound).
    Raises :class:`InvalidMeld` with the reason.
    """
    cards = [CARDS[c] for c in cards]
    if len(cards) < 3:
        raise InvalidMeld(f"'{format_cards(cards)}': a meld needs at least 3 cards, got {len(cards)}")
    _check_cards(cards, rules)
    wild = rules.wild_mask
    naturals = [c for c in cards if not wild >> c & 1]
    jokers = sorted(c for c in cards if wild >> c & 1)
    if len(naturals) < 2:
        raise InvalidMeld(
            f"'{format_cards(cards)}': a meld needs at least 2 natural cards, it has {len(naturals)}"
            + (f" (wild cards: {' '.join(rules.wild_cards)})" if rules.wild_cards else "")
        )
    if len(jokers) > rules.jokers_per_meld:
        raise InvalidMeld(
            f"'{format_cards(cards)}': a meld holds at most {rules.jokers_per_meld} joker "
            f"(jokers_per_meld = {rules.jokers_per_meld}), it has {len(jokers)}"
        )
    if len({c.rank for c in naturals}) == 1:
        if len(cards) > 4:
            raise InvalidMeld(f"'{format_cards(cards)}': a set has at most 4 cards, got {len(cards)}")
        return Meld(MeldKind.SET, tuple(sorted(naturals)) + tuple(jokers))
    suits = {c.suit for c in naturals}
    if len(suits) != 1:
        raise InvalidMeld(
            f"'{format_cards(cards)}' is neither a set (one rank, distinct suits) nor a run (one suit)"
        )
    suit = naturals[0].suit
    if max_run is not None and len(cards) > max_run:
        raise InvalidMeld(
            f"'{format_cards(cards)}': a run laid down from a hand has at most {max_run} cards"
        )
    if not jokers:
        return _plain_run(naturals, suit, rules)
    return _joker_run(cards, suit, rules)


def _plain_run(naturals: list[Card], suit: int, rules: RuleSet) -> Meld:
    """A run without jokers, in any written order: consecutive ranks, no wrap."""
    pos = _positions(rules)
    ordered = sorted(naturals, key=lambda c: pos[c.rank])
    low = pos[ordered[0].rank]
    for i, c in enumerate(ordered):
        if pos[c.rank] != low + i:
            raise InvalidMeld(
                f"'{format_cards(ordered)}': not consecutive in rank order "
                f"({' '.join(str(r) for r in rules.ranks)}; runs do not wrap)"
            )
    return Meld(MeldKind.RUN, tuple(ordered), suit, low)


def _joker_run(cards: list[Card], suit: int, rules: RuleSet) -> Meld:
    """A run with jokers: the written order says where each joker stands."""
    wild = rules.wild_mask
    pos = _positions(rules)
    top = len(rules.ranks) - 1
    first = next(i for i, c in enumerate(cards) if not wild >> c & 1)
    low = pos[cards[first].rank] - first
    ok = low >= 0 and low + len(cards) - 1 <= top
    if ok:
        for i, c in enumerate(cards):
            if not wild >> c & 1 and pos[c.rank] != low + i:
                ok = False
                break
    if not ok:
        raise InvalidMeld(
            f"'{format_cards(cards)}' is not a run: write it ascending with each joker in the place it "
            f"stands for (e.g. '3O JK1 5O'); a joker cannot stand below "
            f"{rules.ranks[0]} or above {rules.ranks[-1]}"
        )
    return Meld(MeldKind.RUN, tuple(cards), suit, low)

def extend_meld(meld: Meld, card: Card, at: End | None, rules: RuleSet) -> Meld:
    """The meld with ``card`` laid off on it, or :class:`InvalidMeld` saying why not.

    ``at`` says which end of a run a joker takes; for a natural card it may be given
    but must agree with the card. Sets never take ``at``.
    """
    card = CARDS[card]
    if card >= 48 and card - 47 > rules.jokers:
        raise InvalidMeld(f"{card} is not in this deck")
    wild = rules.wild_mask
    is_joker = wild >> card & 1
    if is_joker and (meld.mask & wild).bit_count() >= rules.jokers_per_meld:
        raise InvalidMeld(
            f"{card} does not fit '{meld}': a meld holds at most {rules.jokers_per_meld} "
            f"joker (jokers_per_meld = {rules.jokers_per_meld})"
        )
    if meld.kind is MeldKind.SET:
        if at is not None:
            raise InvalidMeld(f"{card} on set '{meld}': a set has no ends, give no end")
        if len(meld.cards) >= 4:
            raise InvalidMeld(f"{card} does not fit set '{meld}': a set has at most 4 cards")
        naturals = [c for c in meld.cards if not wild >> c & 1]
        jokers = [c for c in meld.cards if wild >> c & 1]
        if is_joker:
            return Meld(MeldKind.SET, tuple(naturals) + tuple(sorted([*jokers, card])))
        rank = naturals[0].rank
        if card.rank != rank:
            raise InvalidMeld(f"{card} does not fit set '{meld}': the set is of {rank}s")
        if card in meld.cards:
            raise InvalidMeld(f"{card} is already in set '{meld}'")
        return Meld(MeldKind.SET, tuple(sorted([*naturals, card])) + tuple(jokers))
    top = len(rules.ranks) - 1
    if is_joker:
        if at is None:
            raise InvalidMeld(
                f"{card} on run '{meld}': say which end the joker takes (low or high)"
            )
        if at is End.LOW:
            if meld.low == 0:
                raise InvalidMeld(
                    f"{card} cannot go below '{meld}': a joker cannot stand below "
                    f"{rules.ranks[0]}"
                )
            return Meld(MeldKind.RUN, (card,) + meld.cards, meld.suit, meld.low - 1)
        if meld.high >= top:
            raise InvalidMeld(
                f"{card} cannot go above '{meld}': a joker cannot stand above {rules.ranks[-1]}"
            )
        return Meld(MeldKind.RUN, meld.cards + (card,), meld.suit, meld.low)
    if card.suit != meld.suit:
        raise InvalidMeld(f"{card} does not fit run '{meld}': wrong suit")
    pos = _positions(rules).get(card.rank, -99)
    if pos == meld.low - 1 and at in (None, End.LOW):
        return Meld(MeldKind.RUN, (card,) + meld.cards, meld.suit, meld.low - 1)
    if pos == meld.high + 1 and at in (None, End.HIGH):
        return Meld(MeldKind.RUN, meld.cards + (card,), meld.suit, meld.low)
    raise InvalidMeld(
        f"{card} does not fit run '{meld}': it must be next to either end"
        + (f" (the {at.value} end was named)" if at is not None else "")
    )


def layoff_candidates(meld: Meld, rules: RuleSet) -> int:
    """A mask of the cards that might be laid off on ``meld`` (a superset, cheap to get):
    the jokers (wild cards too), every card of a set's rank, the cards just below and
    above a run."""
    out = JOKER_MASK | rules.wild_naturals
    if meld.kind is MeldKind.SET:
        rank_bit = 1 << (meld.cards[0].rank - 1)
        return out | rank_bit | rank_bit << 12 | rank_bit << 24 | rank_bit << 36
    ranks = rules.ranks
    for q in (meld.low - 1, meld.high + 1):
        if 0 <= q < len(ranks):
            out |= 1 << (meld.suit * 12 + ranks[q] - 1)
    return out


def layoff_ends(meld: Meld, card: Card, rules: RuleSet) -> tuple[End | None, ...]:
    """Every ``at`` with which ``card`` can be laid off on ``meld`` (canonical form)."""
    wild = rules.wild_mask
    if not wild >> card & 1:
        # Quick refusals first, which are most calls: extend_meld would build an error.
        if meld.kind is MeldKind.SET:
            if len(meld.cards) >= 4 or CARDS[card].rank != meld.cards[0].rank:
                return ()
        elif CARDS[card].suit != meld.suit:
            return ()
    elif meld.kind is MeldKind.RUN:
        if (meld.mask & wild).bit_count() >= rules.jokers_per_meld:
            return ()
        low_end = (End.LOW,) if meld.low > 0 else ()
        high_end = (End.HIGH,) if meld.high < len(rules.ranks) - 1 else ()
        return low_end + high_end
    try:
        extend_meld(meld, card, None, rules)
    except InvalidMeld:
        return ()
    return (None,)
