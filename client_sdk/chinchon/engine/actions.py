"""Actions: what a player (or chance) does. Immutable, hashable, comparable.

Player actions: :class:`DrawStock`, :class:`DrawDiscard`, :class:`Discard`,
:class:`Close`, :class:`LayOff`, :class:`LayOffBest`, :class:`LayDown`, :class:`Pass`.
Chance actions (supplied by the referee from its shuffle source, and kept in the
record so any game replays without the secret seed): :class:`Deal`, :class:`Reshuffle`.

Every action has a one-line text form, used in logs and by ``parse_action``::

    draw stock | draw discard | discard 7O | close 7O best
    close 7O 1O 2O 3O / 4C 4E 4B          (named melds; unmatched cards are the rest)
    layoff 5O on 2 | layoff JK1 on 0 low | layoff best | pass
    laydown best | laydown 1O 2O 3O / 5C 5E 5B
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import Card, format_cards, parse_card, parse_cards
from .errors import MalformedInput
from .melds import End

Melds = tuple[tuple[Card, ...], ...]


@dataclass(frozen=True, slots=True)
class DrawStock:
    def __str__(self) -> str:
        return "draw stock"


@dataclass(frozen=True, slots=True)
class DrawDiscard:
    def __str__(self) -> str:
        return "draw discard"


def _check_card(card: object) -> None:
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 50:
        raise MalformedInput(f"{card!r} is not a card (use parse_card('7O') or a Card)")


@dataclass(frozen=True, slots=True)
class Discard:
    card: Card

    def __post_init__(self) -> None:
        _check_card(self.card)

    def __str__(self) -> str:
        return f"discard {self.card}"


@dataclass(frozen=True, slots=True)
class Close:
    """Close, putting ``card`` face down; ``melds`` names the lay-down, ``None`` = best."""

    card: Card
    melds: Melds | None = None

    def __post_init__(self) -> None:
        _check_card(self.card)
        for meld in self.melds or ():
            for c in meld:
                _check_card(c)

    def __str__(self) -> str:
        return f"close {self.card} " + _melds_text(self.melds)


@dataclass(frozen=True, slots=True)
class LayOff:
    """Lay ``card`` off on table meld number ``meld``; ``at`` only for a joker on a run."""

    card: Card
    meld: int
    at: End | None = None

    def __post_init__(self) -> None:
        _check_card(self.card)
        if isinstance(self.meld, bool) or not isinstance(self.meld, int):
            raise MalformedInput(f"a meld is named by its number, got {self.meld!r}")

    def __str__(self) -> str:
        return f"layoff {self.card} on {self.meld}" + (f" {self.at.value}" if self.at else "")


@dataclass(frozen=True, slots=True)
class LayOffBest:
    """Let the engine make the lay-offs best for the player, ending this lay-off turn.

    Best = the fewest points left after the player's best lay-down (docs/rules.md §8).
    """

    def __str__(self) -> str:
        return "layoff best"


@dataclass(frozen=True, slots=True)
class LayDown:
    """Lay down own melds after someone closed; ``None`` = the engine's best split."""

    melds: Melds | None = None

    def __post_init__(self) -> None:
        for meld in self.melds or ():
            for c in meld:
                _check_card(c)

    def __str__(self) -> str:
        return "laydown " + _melds_text(self.melds)


@dataclass(frozen=True, slots=True)
class Pass:
    """End this lay-off turn."""

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Deal:
    """Chance: the order of the whole deck for a hand (first card dealt first), and
    for the first hand the seat that starts (later hands' starters follow the rules)."""

    deck: tuple[Card, ...]
    starter: int

    def __str__(self) -> str:
        return f"deal starter={self.starter} {format_cards(self.deck)}"


@dataclass(frozen=True, slots=True)
class Reshuffle:
    """Chance: the order of the new stock (top card first)."""

    order: tuple[Card, ...]

    def __str__(self) -> str:
        return f"reshuffle {format_cards(self.order)}"


PlayerAction = DrawStock | DrawDiscard | Discard | Close | LayOff | LayOffBest | LayDown | Pass
ChanceAction = Deal | Reshuffle
Action = PlayerAction | ChanceAction

DRAW_STOCK = DrawStock()
DRAW_DISCARD = DrawDiscard()
LAYOFF_BEST = LayOffBest()
PASS = Pass()
LAYDOWN_BEST = LayDown(None)


def _melds_text(melds: Melds | None) -> str:
    if melds is None:
        return "best"
    return " / ".join(format_cards(m) for m in melds) if melds else "nothing"


def _parse_melds(text: str) -> Melds | None:
    text = text.strip()
    if text in ("", "best"):
        return None
    if text == "nothing":
        return ()
    return tuple(tuple(parse_cards(part)) for part in text.split("/"))


def parse_action(text: str) -> Action:
    """Parse the one-line text form of a player action (see the module docstring)."""
    words = text.strip().split()
    if not words:
        raise MalformedInput("empty action")
    head = words[0].lower()
    rest = words[1:]
    try:
        if head == "draw" and rest in (["stock"], ["discard"]):
            return DRAW_STOCK if rest[0] == "stock" else DRAW_DISCARD
        if head == "discard" and len(rest) == 1:
            return Discard(parse_card(rest[0]))
        if head == "close" and rest:
            return Close(parse_card(rest[0]), _parse_melds(" ".join(rest[1:])))
        if head == "layoff" and rest == ["best"]:
            return LAYOFF_BEST
        if head == "layoff" and len(rest) in (3, 4) and rest[1] == "on":
            at = End(rest[3].lower()) if len(rest) == 4 else None
            return LayOff(parse_card(rest[0]), int(rest[2]), at)
        if head == "laydown":
            return LayDown(_parse_melds(" ".join(rest)))
        if head == "pass" and not rest:
            return PASS
    except ValueError as e:
        if isinstance(e, MalformedInput):
            raise
        raise MalformedInput(f"cannot read action '{text}': {e}") from None
    raise MalformedInput(
        f"cannot read action '{text}': expected one of 'draw stock', 'draw discard', "
        "'discard 7O', 'close 7O best', 'layoff 5O on 2', 'layoff best', 'laydown best', "
        "'pass'"
    )
