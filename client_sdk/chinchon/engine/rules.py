"""The rule set: every option of the rules as one frozen, validated value.

Build one with :meth:`RuleSet.from_dict`, :meth:`RuleSet.from_toml` or
:meth:`RuleSet.from_json`; unknown keys, values of the wrong type, impossible values
and contradictions are refused with a :class:`RuleSetError` naming the field.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, fields
from typing import Any

from .cards import DECK_RANKS, JOKER_MASK, parse_card
from .errors import MalformedInput, RuleSetError

FIGURE_POINTS = ("8-9-10", "10-11-12", "10-10-10")
_DEFAULT_FIGURES = {40: "8-9-10", 48: "10-11-12"}


@dataclass(frozen=True, slots=True)
class Option:
    """Description of one option, for ``rules`` listings and docs."""

    name: str
    default: object
    help: str


OPTIONS: tuple[Option, ...] = (
    Option("players", 2, "players at the table; 7 x players + 2 must fit in the deck"),
    Option("deck", 40, "40 (ranks 1-7, 10, 11, 12) or 48 (ranks 1-12)"),
    Option("jokers", 0, "number of jokers in the deck: 0, 1 or 2"),
    Option(
        "figure_points",
        "8-9-10 (40 cards) / 10-11-12 (48 cards)",
        "points of an unmatched 10/11/12: '8-9-10', '10-11-12' or '10-10-10'",
    ),
    Option("joker_points", 25, "points of an unmatched joker"),
    Option("open_discard", True, "players may draw the top card of the discard pile"),
    Option("retake_discard", False, "a player may discard the card just taken from the pile"),
    Option("close_max_unmatched", 1, "most cards a closer may leave unmatched"),
    Option("close_max_points", 5, "most points a closer's unmatched cards may be worth"),
    Option("max_turns_per_hand", 200, "turns after which a hand ends with no closer"),
    Option("score_limit", 100, "a player whose total reaches this is out of the game"),
)
#: The house rules, after the first eleven options. Records leave them out
#: while they hold their defaults (``to_dict(compact=True)``): a record of rules without
#: them reads as it did before they existed, and an older reader refuses (unknown
#: option) a record that uses them rather than replaying it wrong.
HOUSE_OPTIONS: tuple[Option, ...] = (
    Option("wild_cards", (), "natural cards that are wild, jokers in every respect (the ace of coins, say)"),
    Option("jokers_per_meld", 2, "most jokers (wild cards included) in one meld: 1 or 2"),
    Option("close_first_round", True, "a player may close on their first turn of a hand"),
)
OPTIONS = OPTIONS + HOUSE_OPTIONS
OPTION_NAMES = tuple(o.name for o in OPTIONS)
#: The largest value of each whole-number option without another bound: a game under any
#: rule set ends in bounded time (see also the game's length limit, ``game.MAX_HANDS``).
MAXIMA = {"joker_points": 100, "close_max_points": 100, "max_turns_per_hand": 1000,
          "score_limit": 500}
#: Most wild cards in a deck, jokers included: bonuses and the solver's tables count
#: at most two, and -50 / -25 are defined for one and two.
MAX_WILD = 2


@dataclass(frozen=True)
class RuleSet:
    """One variant of Chinchón. Immutable; compare and hash by value."""

    players: int = 2
    deck: int = 40
    jokers: int = 0
    figure_points: str = ""  # "" means: the deck's default, resolved in __post_init__
    joker_points: int = 25
    open_discard: bool = True
    retake_discard: bool = False
    close_max_unmatched: int = 1
    close_max_points: int = 5
    max_turns_per_hand: int = 200
    score_limit: int = 100
    # House rules (HOUSE_OPTIONS); checked in _check_house_rules.
    wild_cards: tuple[str, ...] = ()
    jokers_per_meld: int = 2
    close_first_round: bool = True
    # Derived tables, not options.
    rank_points: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)
    ranks: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)
    #: Bits of every card that plays as a joker: the deck's jokers and the wild cards.
    wild_mask: int = field(default=0, init=False, repr=False, compare=False)
    #: Bits of the wild natural cards only (``wild_cards``).
    wild_naturals: int = field(default=0, init=False, repr=False, compare=False)
    #: Points of each card number (0..49) left unmatched; a wild card's are joker_points.
    points_by_card: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_types()
        figures = self._check_deck()
        self._check_counts()
        fig = [int(x) for x in figures.split("-")]
        points = tuple(r if r <= 9 else fig[r - 10] for r in range(1, 13))
        object.__setattr__(self, "rank_points", points)
        object.__setattr__(self, "ranks", DECK_RANKS[self.deck])
        self._check_house_rules()

    def _check_types(self) -> None:
        """Every option of the type it is declared with (a bool is not a whole number)."""
        for f in fields(self):
            if not f.init or f.name == "wild_cards":  # (a list: _check_house_rules)
                continue
            value = getattr(self, f.name)
            want = bool if f.type in ("bool", bool) else int if f.type in ("int", int) else str
            if want is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise RuleSetError(f.name, f"must be a whole number, got {value!r}")
            if want is bool and not isinstance(value, bool):
                raise RuleSetError(f.name, f"must be true or false, got {value!r}")
            if want is str and not isinstance(value, str):
                raise RuleSetError(f.name, f"must be text, got {value!r}")

    def _check_deck(self) -> str:
        """The deck, the jokers and the figures' points; the figures' spelling."""
        if self.deck not in DECK_RANKS:
            raise RuleSetError("deck", f"must be 40 or 48, got {self.deck}")
        if not 0 <= self.jokers <= 2:
            raise RuleSetError("jokers", f"must be 0, 1 or 2, got {self.jokers}")
        figures = self.figure_points or _DEFAULT_FIGURES[self.deck]
        if figures not in FIGURE_POINTS:
            raise RuleSetError(
                "figure_points", f"must be one of {', '.join(FIGURE_POINTS)}, got {figures!r}"
            )
        if self.deck == 48 and figures == "8-9-10":
            raise RuleSetError(
                "figure_points",
                "'8-9-10' contradicts deck = 48: the 10 would be worth no more than the 8",
            )
        object.__setattr__(self, "figure_points", figures)
        return figures

    def _check_counts(self) -> None:
        """Players, points and limits within their bounds."""
        if self.players < 2:
            raise RuleSetError("players", f"at least 2 players, got {self.players}")
        size = self.deck + self.jokers
        if 7 * self.players + 2 > size:
            raise RuleSetError(
                "players",
                f"{self.players} players need 7 x {self.players} + 2 = {7 * self.players + 2}"
                f" cards, the deck has {size} (deck = {self.deck}, jokers = {self.jokers})",
            )
        if self.joker_points < 0:
            raise RuleSetError("joker_points", f"cannot be negative, got {self.joker_points}")
        if not 0 <= self.close_max_unmatched <= 7:
            raise RuleSetError(
                "close_max_unmatched", f"must be 0 to 7, got {self.close_max_unmatched}"
            )
        if self.close_max_points < 0:
            raise RuleSetError(
                "close_max_points", f"cannot be negative, got {self.close_max_points}"
            )
        if self.max_turns_per_hand < self.players:
            raise RuleSetError(
                "max_turns_per_hand",
                f"must give every player a turn: at least {self.players}, "
                f"got {self.max_turns_per_hand}",
            )
        if self.score_limit < 1:
            raise RuleSetError("score_limit", f"must be at least 1, got {self.score_limit}")
        for name, top in MAXIMA.items():
            if getattr(self, name) > top:
                raise RuleSetError(name, f"at most {top}, got {getattr(self, name)}")

    def _check_house_rules(self) -> None:
        """Check and normalise the house-rule options; set the wild-card tables."""
        given = self.wild_cards
        if isinstance(given, str) or not isinstance(given, (list, tuple)):
            raise RuleSetError(
                "wild_cards", f'must be a list of cards, like ["1O"], got {given!r}'
            )
        wild: list[int] = []
        for text in given:
            try:
                card = parse_card(text)
            except MalformedInput as e:
                raise RuleSetError("wild_cards", str(e)) from None
            if card.is_joker:
                raise RuleSetError(
                    "wild_cards",
                    f"{card} is a joker already: name natural cards (the jokers option "
                    "adds jokers)",
                )
            if card.rank not in self.ranks:
                raise RuleSetError("wild_cards", f"{card} is not in the {self.deck}-card deck")
            if card in wild:
                raise RuleSetError("wild_cards", f"{card} is named twice")
            wild.append(card)
        if self.jokers + len(wild) > MAX_WILD:
            raise RuleSetError(
                "wild_cards",
                f"at most {MAX_WILD} wild cards in all, jokers included: jokers = "
                f"{self.jokers} and {len(wild)} wild card(s) make {self.jokers + len(wild)}",
            )
        wild.sort()
        object.__setattr__(self, "wild_cards", tuple(str(c) for c in wild))
        if self.jokers_per_meld not in (1, 2):
            raise RuleSetError(
                "jokers_per_meld",
                f"must be 1 or 2 (2: a meld may hold both jokers), got {self.jokers_per_meld}",
            )
        naturals = 0
        for c in wild:
            naturals |= 1 << c
        object.__setattr__(self, "wild_naturals", naturals)
        deck_jokers = JOKER_MASK & ((1 << 48 + self.jokers) - 1)
        object.__setattr__(self, "wild_mask", deck_jokers | naturals)
        table = [self.rank_points[c % 12] for c in range(48)] + [self.joker_points] * 2
        for c in wild:
            table[c] = self.joker_points
        object.__setattr__(self, "points_by_card", tuple(table))

    # -- construction -------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        if not isinstance(data, dict):
            raise RuleSetError("(rule set)", f"must be a table of options, got {type(data).__name__}")
        unknown = sorted(set(data) - set(OPTION_NAMES))
        if unknown:
            raise RuleSetError(
                unknown[0],
                f"unknown option; the options are: {', '.join(OPTION_NAMES)}",
            )
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> RuleSet:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise RuleSetError("(file)", f"not valid JSON: {e}") from None
        return cls.from_dict(data)

    @classmethod
    def from_toml(cls, text: str) -> RuleSet:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise RuleSetError("(file)", f"not valid TOML: {e}") from None
        # A rule set file may hold the options at top level or under [rules].
        if set(data) == {"rules"} and isinstance(data["rules"], dict):
            data = data["rules"]
        return cls.from_dict(data)

    @classmethod
    def from_file(cls, path: str) -> RuleSet:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if path.endswith(".json"):
            return cls.from_json(text)
        return cls.from_toml(text)

    def to_dict(self, compact: bool = False) -> dict[str, Any]:
        """Every option and its value (``wild_cards`` as a list of card texts).

        ``compact``: leave out the house rules (HOUSE_OPTIONS) that hold their defaults,
        as records do.
        """
        d = {name: getattr(self, name) for name in OPTION_NAMES}
        d["wild_cards"] = list(self.wild_cards)
        if compact:
            for o in HOUSE_OPTIONS:
                if d[o.name] == o.default or (o.name == "wild_cards" and not d[o.name]):
                    del d[o.name]
        return d

    def replace(self, **changes: Any) -> RuleSet:
        d = self.to_dict()
        d.update(changes)
        return RuleSet.from_dict(d)

    # -- derived facts ------------------------------------------------------------
    @property
    def deck_size(self) -> int:
        return self.deck + self.jokers

    def card_points(self, card: int) -> int:
        """Points of the card when it is left unmatched (a wild card's: joker_points)."""
        return self.points_by_card[card]

    def is_wild(self, card: int) -> bool:
        """Does the card play as a joker: a joker of the deck, or one of the wild cards?"""
        return bool(self.wild_mask >> card & 1)


DEFAULT_RULES = RuleSet()
