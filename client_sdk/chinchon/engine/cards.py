"""Cards of the Spanish deck, their text form (``7O``, ``12B``, ``JK1``) and bitmasks.

A card is a :class:`Card`, a small ``int`` subclass, so that sets of cards can be held
as plain integer bitmasks (bit ``card`` set) and the hot paths of the engine stay cheap.

Card numbering, fixed for both decks so that records and tables never depend on the deck:

* natural card: ``suit * 12 + (rank - 1)`` with suits in the order oros, copas,
  espadas, bastos (0..3) and ranks 1..12; so ``1O`` is 0, ``12B`` is 47;
* jokers: ``JK1`` is 48, ``JK2`` is 49.

With this layout the 12 bits ``(mask >> (12 * suit)) & 0xFFF`` of a hand mask are the
ranks the hand holds in that suit (bit ``rank - 1``), which the solver's tables index.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from .errors import MalformedInput

SUITS = "OCEB"
SUIT_NAMES = ("oros", "copas", "espadas", "bastos")
JOKER_IDS = (48, 49)
RANK_MASK = 0xFFF
#: Bits of the two jokers in a hand mask.
JOKER_MASK = (1 << 48) | (1 << 49)
#: Ranks of each deck, in run order. In the 40-card deck 7 and 10 are neighbours.
DECK_RANKS: dict[int, tuple[int, ...]] = {
    40: (1, 2, 3, 4, 5, 6, 7, 10, 11, 12),
    48: tuple(range(1, 13)),
}


class Card(int):
    """One card. Compare, hash and use as a bit index like an ``int``; prints as text."""

    __slots__ = ()

    @property
    def is_joker(self) -> bool:
        return self >= 48

    @property
    def suit(self) -> int:
        """Suit index 0..3 (oros, copas, espadas, bastos); -1 for a joker."""
        return -1 if self >= 48 else self // 12

    @property
    def rank(self) -> int:
        """Rank 1..12; 0 for a joker."""
        return 0 if self >= 48 else self % 12 + 1

    @property
    def text(self) -> str:
        return _TEXT[self]

    def __str__(self) -> str:
        return _TEXT[self]

    def __repr__(self) -> str:
        return f"Card({_TEXT[self]!r})"


def _text_of(i: int) -> str:
    if i >= 48:
        return f"JK{i - 47}"
    return f"{i % 12 + 1}{SUITS[i // 12]}"


_TEXT = [_text_of(i) for i in range(50)]
#: The 50 card objects; ``CARDS[i]`` is the card numbered ``i``. Always reuse these.
CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(50))
_BY_TEXT = {t: CARDS[i] for i, t in enumerate(_TEXT)}
JOKERS: tuple[Card, Card] = (CARDS[48], CARDS[49])


def make_card(rank: int, suit: int) -> Card:
    """The natural card of ``rank`` (1..12) and ``suit`` (0..3)."""
    return CARDS[suit * 12 + rank - 1]


def parse_card(text: str) -> Card:
    """Parse the text form (``7O``, ``12b``, ``JK1``); raise :class:`MalformedInput`."""
    if not isinstance(text, str):
        raise MalformedInput(f"a card must be text like '7O' or 'JK1', got {text!r}")
    card = _BY_TEXT.get(text)  # records and the wire use the canonical form: try it first
    if card is None:
        card = _BY_TEXT.get(text.strip().upper())
    if card is None:
        raise MalformedInput(
            f"'{text}' is not a card: write rank 1-12 then suit O/C/E/B (e.g. '7O', '12B'), "
            "or JK1/JK2 for a joker"
        )
    return card


def parse_cards(texts: Iterable[str] | str) -> list[Card]:
    """Parse several cards, from an iterable of texts or one space-separated string."""
    if isinstance(texts, str):
        texts = texts.split()
    return [parse_card(t) for t in texts]


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(_TEXT[c] for c in cards)


@cache
def deck_cards(deck: int, jokers: int) -> tuple[Card, ...]:
    """All cards of a deck of 40 or 48 naturals plus 0-2 jokers, in numbering order."""
    ranks = DECK_RANKS[deck]
    naturals = [make_card(r, s) for s in range(4) for r in ranks]
    return tuple(sorted(naturals)) + JOKERS[:jokers]


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# Cards of each 8-bit slice of a mask, precomputed so that listing the cards of a
# 50-bit mask costs seven table look-ups instead of fifty bit tests.
_BYTE_CARDS: tuple[tuple[tuple[Card, ...], ...], ...] = tuple(
    tuple(
        tuple(CARDS[base + b] for b in range(8) if v >> b & 1 and base + b < 50)
        for v in range(256)
    )
    for base in range(0, 56, 8)
)


_B0, _B1, _B2, _B3, _B4, _B5, _B6 = _BYTE_CARDS


def cards_of(mask: int) -> list[Card]:
    """The cards of a mask, in numbering order (oros first, jokers last)."""
    # Unrolled over the seven bytes of a 50-bit mask: one list display beats a loop.
    return [
        *_B0[mask & 255],
        *_B1[mask >> 8 & 255],
        *_B2[mask >> 16 & 255],
        *_B3[mask >> 24 & 255],
        *_B4[mask >> 32 & 255],
        *_B5[mask >> 40 & 255],
        *_B6[mask >> 48 & 255],
    ]
