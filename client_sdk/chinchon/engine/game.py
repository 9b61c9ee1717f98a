"""The state machine of a whole game of Chinchón.

Pure functions over an immutable :class:`GameState`::

    state = new_game(rules)                      # waits for the first Deal (chance)
    state = apply(state, source.chance(state))   # chance comes from outside
    legal_actions(state)                         # what the player to act may do
    state = apply(state, Discard(card))          # checked; raises IllegalAction

``apply`` never changes the state it is given: it returns a new one, or raises a typed
error (:class:`IllegalAction` naming the rule, :class:`MalformedInput`) and the old
state is still the current one. What a seat may see is :func:`observation`.

Phases: ``DEAL`` and ``RESHUFFLE`` wait for a chance action; ``DRAW`` then ``DISCARD``
make a turn; after a close, ``LAYOFF`` and ``LAYDOWN`` turns follow in the order of the
rules; ``GAME_OVER`` is terminal. Turns where a player's only choice would be to pass
(nothing to lay off, nothing to lay down) are skipped by the engine.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from .actions import (
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    PASS,
    Action,
    Close,
    Deal,
    Discard,
    DrawDiscard,
    DrawStock,
    LayDown,
    LayOff,
    LayOffBest,
    Melds,
    Pass,
    Reshuffle,
)
from .cards import CARDS, DECK_RANKS, JOKERS, Card, cards_of, deck_cards, format_cards
from .errors import IllegalAction, InvalidMeld, MalformedInput, Violation
from .melds import End, Meld, extend_meld, layoff_candidates, layoff_ends, make_meld
from .rules import DEFAULT_RULES, RuleSet
from .solver import (
    BONUS_NAMES,
    BONUS_POINTS,
    Arrangement,
    Bonus,
    Solver,
    all_arrangements,
    arrangements_of,
    solver_for,
    sorted_candidates,
)


class Phase(IntEnum):
    DEAL = 0
    DRAW = 1
    DISCARD = 2
    RESHUFFLE = 3
    LAYOFF = 4
    LAYDOWN = 5
    GAME_OVER = 6


# The phases as plain module globals for the hot paths (legal_actions, apply): looking
# a member up on an Enum class (``Phase.DRAW``) costs several times a global's load.
_DEAL, _DRAW, _DISCARD, _RESHUFFLE, _LAYOFF, _LAYDOWN, _GAME_OVER = Phase


class HandEnd(IntEnum):
    CLOSED = 1
    CHINCHON = 2
    STOCK_EXHAUSTED = 3
    TURN_LIMIT = 4


class GameEnd(IntEnum):
    CHINCHON = 1
    LAST_PLAYER = 2
    LOWEST_TOTAL = 3
    DRAW = 4
    #: Nobody had won when the game reached its length limit: the lowest total among the
    #: players still in won (several: they share a draw).
    LENGTH_LIMIT = 5


#: A game's length limit: a game that nobody has won by the end of its ``MAX_HANDS``-th
#: hand, or of the hand in which its turns in all reach ``MAX_TURNS``, ends there
#: (:attr:`GameEnd.LENGTH_LIMIT`). With the rule set's own bounds (``max_turns_per_hand``
#: at most 1,000) a game is at most about 2 x (MAX_TURNS + 1,000) actions long.
MAX_HANDS = 200
MAX_TURNS = 20_000


@dataclass(frozen=True, slots=True)
class TableMeld:
    owner: int
    meld: Meld


@dataclass(frozen=True, slots=True)
class HandResult:
    """Everything shown when a hand ends."""

    hand_no: int
    end: HandEnd
    closer: int  # -1 when nobody closed
    bonus: Bonus
    #: Each seat's seven cards when the hand ended (before any lay-down); () if out.
    hands: tuple[tuple[Card, ...], ...]
    #: The closer's face-down discard (None when nobody closed).
    close_discard: Card | None
    table: tuple[TableMeld, ...]
    #: Each seat's unmatched cards at the count.
    unmatched: tuple[tuple[Card, ...], ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]
    eliminated: tuple[int, ...]

    @property
    def winner(self) -> int | None:
        """The seat that won the hand (see :func:`hand_winner`)."""
        return hand_winner(self.closer, self.points, [s for s, h in enumerate(self.hands) if h])


def hand_winner(closer: int, points: Sequence[int], in_hand: Sequence[int]) -> int | None:
    """The winner of a hand: the seat that closed it; when nobody closed, the one seat
    of those still in the hand (``in_hand``) with the fewest points; None on a tie."""
    if closer >= 0:
        return closer
    if not in_hand:
        return None
    low = min(points[s] if s < len(points) else 0 for s in in_hand)
    best = [s for s in in_hand if (points[s] if s < len(points) else 0) == low]
    return best[0] if len(best) == 1 else None


@dataclass(frozen=True, slots=True)
class GameResult:
    end: GameEnd
    winners: tuple[int, ...]  # several only for a draw
    totals: tuple[int, ...]
    hands_played: int


class EventKind(enum.StrEnum):
    """What a public event of a hand was (``chinchon.v1.EventKind`` without its prefix,
    lower case)."""

    DRAW_STOCK = "draw_stock"
    DRAW_DISCARD = "draw_discard"
    DISCARD = "discard"
    #: The discard pile, but its top card, shuffled into a new stock.
    RESHUFFLE = "reshuffle"
    CLOSE = "close"
    LAYOFF = "layoff"
    LAYDOWN = "laydown"


@dataclass(frozen=True, slots=True)
class Event:
    """A public event of the current hand (everyone sees it)."""

    kind: EventKind
    seat: int
    card: Card | None = None
    detail: str = ""


class GameState:
    """One moment of a game. Treat as read-only: ``apply`` returns new states.

    Hands are bitmasks of card numbers (see :mod:`cards`); use :meth:`hand` for cards.
    """

    rules: RuleSet
    n: int
    phase: Phase
    hand_no: int
    starter: int
    to_act: int
    hands: tuple[int, ...]
    stock: tuple[Card, ...]
    stock_top: int
    pile: tuple[Card, ...]  # bottom first
    pile_len: int
    turn: int
    #: Turns of the hands before this one (for the game's length limit).
    game_turns: int
    exhausted: int
    taken: Card | None
    scores: tuple[int, ...]
    alive: tuple[bool, ...]
    table: tuple[TableMeld, ...]
    closer: int
    closer_locked: bool
    close_discard: Card | None
    bonus: int
    shown: tuple[tuple[Card, ...], ...]
    schedule: tuple[tuple[Phase, int], ...]
    events: tuple[Event, ...]  # this hand's public events, oldest first
    results: tuple[HandResult, ...]
    result: GameResult | None

    def _evolve(self, **changes: Any) -> GameState:
        new = object.__new__(GameState)
        d = self.__dict__.copy()
        d.update(changes)
        new.__dict__ = d
        return new

    # -- convenient views ------------------------------------------------------------
    @property
    def is_chance(self) -> bool:
        ph = self.phase
        return ph is _DEAL or ph is _RESHUFFLE

    @property
    def is_over(self) -> bool:
        return self.phase is _GAME_OVER

    def hand(self, seat: int) -> list[Card]:
        # Card numbers already run by suit then rank, jokers last: the display order.
        return cards_of(self.hands[seat])

    @property
    def stock_size(self) -> int:
        return len(self.stock) - self.stock_top

    def discard_pile(self) -> list[Card]:
        """The discard pile, bottom first."""
        return list(self.pile)

    def hand_events(self) -> list[Event]:
        """This hand's public events, oldest first."""
        return list(self.events)

    @property
    def next_starter(self) -> int:
        """Who starts the next hand (the first hand's starter comes with the Deal)."""
        if self.hand_no == 0:
            return -1
        return _next_alive(self.alive, self.starter)

    def card_count(self) -> int:
        """All cards held anywhere; equals the deck size at every step."""
        table = sum(len(t.meld.cards) for t in self.table)
        hands = sum(h.bit_count() for h in self.hands)
        extra = 1 if self.close_discard is not None else 0
        return hands + self.stock_size + self.pile_len + table + extra

    def __repr__(self) -> str:
        return (
            f"<GameState hand {self.hand_no} {self.phase.name} to_act={self.to_act} "
            f"scores={self.scores}>"
        )


def _next_alive(alive: Sequence[bool], seat: int) -> int:
    n = len(alive)
    for k in range(1, n + 1):
        s = (seat + k) % n
        if alive[s]:
            return s
    return -1


def new_game(rules: RuleSet = DEFAULT_RULES) -> GameState:
    """A game before its first deal: apply a :class:`Deal` to start it."""
    st = object.__new__(GameState)
    n = rules.players
    st.__dict__.update(
        rules=rules,
        n=n,
        phase=Phase.DEAL,
        hand_no=0,
        starter=-1,
        to_act=-1,
        hands=(0,) * n,
        stock=(),
        stock_top=0,
        pile=(),
        pile_len=0,
        turn=0,
        game_turns=0,
        exhausted=0,
        taken=None,
        scores=(0,) * n,
        alive=(True,) * n,
        table=(),
        closer=-1,
        closer_locked=False,
        close_discard=None,
        bonus=0,
        shown=(),
        schedule=(),
        events=(),
        results=(),
        result=None,
    )
    return st


# -- legality ---------------------------------------------------------------------------

_DISCARDS = tuple(Discard(c) for c in CARDS)
_CLOSES_BEST = tuple(Close(c, None) for c in CARDS)
_DRAWS_OPEN = (DRAW_STOCK, DRAW_DISCARD)
_DRAWS_CLOSED = (DRAW_STOCK,)
#: The action objects that :func:`legal_actions` hands out again and again (every draw,
#: discard, best close, pass and best lay-off / lay-down it lists is one of these). They
#: are module constants, alive as long as the program: a cache may key on their ``id``
#: (a C-level lookup, where hashing a dataclass calls Python).
SHARED_ACTIONS: tuple[Action, ...] = (
    *_DISCARDS, *_CLOSES_BEST, DRAW_STOCK, DRAW_DISCARD, PASS, LAYOFF_BEST, LAYDOWN_BEST)


def legal_actions(state: GameState) -> list[Action]:
    """Every legal action of the player to act (empty at chance nodes and at the end).

    In ``DISCARD``: each discard, and for each discard that allows closing ``Close(card)``
    (best arrangement) plus every named arrangement within the close limits.
    In ``LAYOFF``: ``pass``, ``layoff best`` and each single lay-off.
    In ``LAYDOWN``: ``laydown best`` and every split of the hand into melds.
    """
    ph = state.phase
    if ph is _DRAW:
        if state.rules.open_discard and state.pile:
            return list(_DRAWS_OPEN)
        return list(_DRAWS_CLOSED)
    if ph is _DISCARD:
        hand = state.hands[state.to_act]
        blocked = -1 if state.taken is None or state.rules.retake_discard else state.taken
        playable = hand if blocked < 0 else hand & ~(1 << blocked)
        out: list[Action] = [_DISCARDS[c] for c in cards_of(playable)]
        solver = solver_for(state.rules)
        if solver.may_close_some(hand) and (
            state.rules.close_first_round or not _in_first_round(state)
        ):
            out += _close_actions(state, solver, hand, blocked)
        return out
    if ph is _LAYOFF:
        lay = _layoffs(state, state.to_act)
        return [PASS, LAYOFF_BEST, *lay]
    if ph is _LAYDOWN:
        seat_hand = state.hands[state.to_act]
        out = [LAYDOWN_BEST]
        for arr in all_arrangements(seat_hand, state.rules):
            out.append(LayDown(tuple(m.cards for m in arr.melds)))
        return out
    return []


def _in_first_round(state: GameState) -> bool:
    """Is the player to act on their first turn of the hand? (The turns of a hand go
    round the players still in from the starter: the first round is the first as many
    turns as there are players.)"""
    return state.turn < sum(state.alive)


def _close_actions(state: GameState, solver: Solver, hand: int, blocked: int) -> list[Action]:
    rules = state.rules
    score = state.scores[state.to_act]
    limit = min(rules.close_max_points, rules.score_limit - 1 - score)
    out: list[Action] = []
    cands: list[Meld] | None = None
    for c in cards_of(hand):
        if c == blocked:
            continue
        rest = hand & ~(1 << c)
        if not solver.can_close(rest, score):
            continue
        out.append(_CLOSES_BEST[c])
        if cands is None:  # the melds of all eight cards, shared by every closing discard
            cands = sorted_candidates(hand, rules)
        for arr in arrangements_of(rest, cands, rules, rules.close_max_unmatched, limit):
            out.append(Close(c, tuple(m.cards for m in arr.melds)))
    return out


def _layoffs(state: GameState, seat: int) -> list[Action]:
    out: list[Action] = []
    hand = state.hands[seat]
    for i, tm in enumerate(state.table):
        if tm.owner == seat or (tm.owner == state.closer and state.closer_locked):
            continue
        for c in cards_of(hand & layoff_candidates(tm.meld, state.rules)):
            for at in layoff_ends(tm.meld, c, state.rules):
                out.append(LayOff(c, i, at))
    return out


def is_legal(state: GameState, action: Action) -> bool:
    try:
        apply(state, action)
    except (IllegalAction, MalformedInput):
        return False
    return True


# -- applying ---------------------------------------------------------------------------


def apply(state: GameState, action: Action, seat: int | None = None) -> GameState:
    """Apply ``action`` for the player to act (or chance) and return the new state.

    ``seat``, when given, must be the seat to act (the referee passes the sender's seat).
    Raises :class:`IllegalAction` (with the violated rule) or :class:`MalformedInput`;
    ``state`` itself is never modified.
    """
    ph = state.phase
    if ph is _GAME_OVER:
        raise IllegalAction(Violation.GAME_OVER, "the game is over")
    if ph is _DEAL or ph is _RESHUFFLE:
        if seat is not None:
            raise IllegalAction(Violation.NOT_YOUR_TURN, "not your turn: cards are being dealt")
        if ph is _DEAL:
            if not isinstance(action, Deal):
                raise IllegalAction(
                    Violation.CHANCE_EXPECTED, f"a deal is expected, not '{action}'"
                )
            return _deal(state, action)
        if not isinstance(action, Reshuffle):
            raise IllegalAction(
                Violation.CHANCE_EXPECTED, f"a reshuffle is expected, not '{action}'"
            )
        return _reshuffle(state, action)
    if seat is not None and seat != state.to_act:
        raise IllegalAction(
            Violation.NOT_YOUR_TURN,
            f"not your turn: seat {state.to_act} is to act ({ph.name.lower()})",
        )
    if ph is _DRAW:
        if isinstance(action, DrawStock):
            return _draw_stock(state)
        if isinstance(action, DrawDiscard):
            return _draw_discard(state)
        raise _wrong_phase(state, action, "draw: 'draw stock' or 'draw discard'")
    if ph is _DISCARD:
        if isinstance(action, Discard):
            return _discard(state, action.card)
        if isinstance(action, Close):
            return _close(state, action)
        raise _wrong_phase(state, action, "discard a card or close")
    if ph is _LAYOFF:
        if isinstance(action, LayOff):
            return _layoff(state, action)
        if isinstance(action, LayOffBest):
            return _layoff_best(state)
        if isinstance(action, Pass):
            return _next_step(state._evolve(schedule=state.schedule[1:]))
        raise _wrong_phase(state, action, "lay off cards ('layoff ...') or 'pass'")
    if isinstance(action, LayDown):
        return _laydown(state, action)
    raise _wrong_phase(state, action, "lay down your melds ('laydown best' or named melds)")


def _wrong_phase(state: GameState, action: Action, want: str) -> IllegalAction:
    if isinstance(action, (Deal, Reshuffle)):
        return IllegalAction(Violation.WRONG_PHASE, "chance actions come from the referee only")
    return IllegalAction(Violation.WRONG_PHASE, f"cannot '{action}' now: time to {want}")


def _fork(state: GameState) -> tuple[GameState, dict[str, Any]]:
    """A copy of ``state`` and its attribute dict, for a transition to fill in.

    The per-turn transitions (draws, discards) use this rather than ``_evolve(**changes)``:
    storing into the copied dict skips building and merging a keyword dict every turn.
    """
    new = object.__new__(GameState)
    d = state.__dict__.copy()
    new.__dict__ = d
    return new, d


# Draw and discard events are few and immutable, so they are built once and shared:
# indexed [seat] or [seat][card]. A deck has at most 50 cards and 7 x players + 2 must
# fit, so no rule set seats more than 6 players.
_MAX_SEATS = (max(DECK_RANKS) + len(JOKERS) - 2) // 7
_DRAW_STOCK_EVENTS = tuple(Event(EventKind.DRAW_STOCK, s) for s in range(_MAX_SEATS))
_DRAW_DISCARD_EVENTS = tuple(
    tuple(Event(EventKind.DRAW_DISCARD, s, c) for c in CARDS) for s in range(_MAX_SEATS)
)
_DISCARD_EVENTS = tuple(tuple(Event(EventKind.DISCARD, s, c) for c in CARDS) for s in range(_MAX_SEATS))
#: The event objects every draw and discard records, shared like SHARED_ACTIONS (module
#: constants: a cache may key on their ``id``).
SHARED_EVENTS: tuple[Event, ...] = (
    *_DRAW_STOCK_EVENTS,
    *(e for row in _DRAW_DISCARD_EVENTS for e in row),
    *(e for row in _DISCARD_EVENTS for e in row),
)


def _deal(state: GameState, action: Deal) -> GameState:
    rules = state.rules
    deck = tuple(CARDS[c] for c in action.deck)
    if sorted(deck) != list(deck_cards(rules.deck, rules.jokers)):
        raise IllegalAction(
            Violation.BAD_DEAL,
            f"a deal must order the whole {rules.deck_size}-card deck exactly once",
        )
    if state.hand_no == 0:
        if not (0 <= action.starter < state.n):
            raise IllegalAction(Violation.BAD_DEAL, f"starter {action.starter} is not a seat")
        starter = action.starter
    else:
        starter = state.next_starter
        if action.starter != starter:
            raise IllegalAction(
                Violation.BAD_DEAL,
                f"hand {state.hand_no + 1} is started by seat {starter}, not {action.starter}",
            )
    if not state.alive[starter]:  # (an engine invariant: the turn order below needs it)
        raise IllegalAction(Violation.BAD_DEAL, f"seat {starter} is out of the game")
    order = [starter]
    s = _next_alive(state.alive, starter)
    while s != starter:
        order.append(s)
        s = _next_alive(state.alive, s)
    k = len(order)
    hands = [0] * state.n
    for i in range(7 * k):
        hands[order[i % k]] |= 1 << deck[i]
    up = deck[7 * k]
    return state._evolve(
        phase=Phase.DRAW,
        hand_no=state.hand_no + 1,
        starter=starter,
        to_act=starter,
        hands=tuple(hands),
        stock=deck[7 * k + 1 :],
        stock_top=0,
        pile=(up,),
        pile_len=1,
        turn=0,
        exhausted=0,
        taken=None,
        table=(),
        closer=-1,
        closer_locked=False,
        close_discard=None,
        bonus=0,
        shown=(),
        schedule=(),
        events=(),
    )


def _reshuffle(state: GameState, action: Reshuffle) -> GameState:
    pile = state.discard_pile()
    top = pile[-1]
    order = tuple(CARDS[c] for c in action.order)
    if sorted(order) != sorted(pile[:-1]):
        raise IllegalAction(
            Violation.BAD_RESHUFFLE,
            "a reshuffle must order exactly the discard pile's cards below its top card",
        )
    assert state.events  # a discard emptied the stock: there are events
    return state._evolve(
        phase=Phase.DRAW,
        stock=order,
        stock_top=0,
        pile=(top,),
        pile_len=1,
        # to_act is -1 while chance acts: the turn passes on from the seat whose
        # discard emptied the stock (the newest event).
        to_act=_next_alive(state.alive, state.events[-1].seat),
        events=(*state.events, Event(EventKind.RESHUFFLE, -1, None, str(len(order)))),
    )


def _draw_stock(state: GameState) -> GameState:
    p = state.to_act
    top = state.stock_top
    hands = list(state.hands)
    hands[p] |= 1 << state.stock[top]
    st, d = _fork(state)
    d["phase"] = _DISCARD
    d["hands"] = tuple(hands)
    d["stock_top"] = top + 1
    d["taken"] = None
    d["events"] = (*state.events, _DRAW_STOCK_EVENTS[p])
    return st


def _draw_discard(state: GameState) -> GameState:
    if not state.rules.open_discard:
        raise IllegalAction(
            Violation.DISCARD_PILE_CLOSED,
            "cannot draw from the discard pile: this game is played with open_discard off",
        )
    if not state.pile:
        raise IllegalAction(Violation.DISCARD_PILE_CLOSED, "the discard pile is empty")
    p = state.to_act
    card = state.pile[-1]
    hands = list(state.hands)
    hands[p] |= 1 << card
    st, d = _fork(state)
    d["phase"] = _DISCARD
    d["hands"] = tuple(hands)
    d["pile"] = state.pile[:-1]
    d["pile_len"] = state.pile_len - 1
    d["taken"] = card
    d["events"] = (*state.events, _DRAW_DISCARD_EVENTS[p][card])
    return st


def _check_discard(state: GameState, card: Card, verb: str) -> int:
    hand = state.hands[state.to_act]
    if not (hand >> card) & 1:
        raise IllegalAction(Violation.CARD_NOT_IN_HAND, f"{card} is not in your hand")
    if card == state.taken and not state.rules.retake_discard:
        raise IllegalAction(
            Violation.RETAKE_DISCARD,
            f"cannot {verb} {card}: you just took it from the discard pile "
            "(retake_discard is off)",
        )
    return hand


def _discard(state: GameState, card: Card) -> GameState:
    card = CARDS[card]
    hand = _check_discard(state, card, "discard")
    p = state.to_act
    hands = list(state.hands)
    hands[p] = hand & ~(1 << card)
    turn = state.turn + 1
    st, d = _fork(state)
    d["hands"] = tuple(hands)
    d["pile"] = (*state.pile, card)
    d["pile_len"] = state.pile_len + 1
    d["taken"] = None
    d["turn"] = turn
    d["events"] = (*state.events, _DISCARD_EVENTS[p][card])
    if turn >= state.rules.max_turns_per_hand:
        return _end_hand(st, HandEnd.TURN_LIMIT)
    if st.stock_top >= len(st.stock):
        if st.exhausted == 0 and st.pile_len > 1:
            return st._evolve(phase=Phase.RESHUFFLE, to_act=-1, exhausted=1)
        return _end_hand(st, HandEnd.STOCK_EXHAUSTED)
    d["phase"] = _DRAW
    d["to_act"] = _next_alive(st.alive, p)
    return st


def _as_melds(melds: Melds, available: int, rules: RuleSet, what: str) -> list[Meld]:
    """Validate named melds against the cards available; raise IllegalAction."""
    out: list[Meld] = []
    used = 0
    for group in melds:
        try:
            meld = make_meld([CARDS[c] for c in group], rules)
        except InvalidMeld as e:
            raise IllegalAction(Violation.INVALID_MELD, f"{what}: {e.reason}") from None
        for c in meld.cards:
            if used >> c & 1:
                raise IllegalAction(
                    Violation.CARD_USED_TWICE, f"{what}: {c} is in two melds"
                )
            if not available >> c & 1:
                raise IllegalAction(
                    Violation.CARD_NOT_IN_HAND, f"{what}: {c} is not among your cards"
                )
            used |= 1 << c
        out.append(meld)
    return out


def _close(state: GameState, action: Close) -> GameState:
    rules = state.rules
    card = CARDS[action.card]
    hand = _check_discard(state, card, "close with")
    if not rules.close_first_round and _in_first_round(state):
        raise IllegalAction(
            Violation.CLOSE_FIRST_ROUND,
            "cannot close in the first round of the hand: every player has a turn first "
            "(close_first_round is off)",
        )
    p = state.to_act
    rest = hand & ~(1 << card)
    solver = solver_for(rules)
    arr = _closing_melds(state, action, rest)
    bonus = solver.bonus(rest)
    hands = list(state.hands)
    shown = tuple(tuple(state.hand(s)) if state.alive[s] else () for s in range(state.n))
    shown_list = list(shown)
    shown_list[p] = tuple(cards_of(rest))  # (display order, as in GameState.hand)
    used = 0
    for m in arr.melds:
        used |= m.mask
    hands[p] = rest & ~used
    table = tuple(TableMeld(p, m) for m in arr.melds)
    locked = bonus > 0
    schedule = _after_close(state, p, locked)
    st = state._evolve(
        hands=tuple(hands),
        table=table,
        closer=p,
        closer_locked=locked,
        close_discard=card,
        bonus=bonus,
        shown=tuple(shown_list),
        taken=None,
        schedule=tuple(schedule),
        events=(*state.events, Event(EventKind.CLOSE, p, None, " | ".join(str(m) for m in arr.melds))),
    )
    if BONUS_NAMES[bonus] is Bonus.CHINCHON:
        return _end_hand(st, HandEnd.CHINCHON)
    return _next_step(st)


def _closing_melds(state: GameState, action: Close, rest: int) -> Arrangement:
    """The closer's melds: the best close (``close CARD best``) or the named split,
    checked against the close limits. IllegalAction if the hand cannot close so."""
    rules = state.rules
    solver = solver_for(rules)
    score = state.scores[state.to_act]
    if action.melds is None:
        arr = solver.closing(rest, score)
        if arr is None:
            raise _cannot_close(state, solver.best_arrangement(rest), score)
        return arr
    melds = _as_melds(action.melds, rest, rules, "cannot close")
    used = 0
    for m in melds:
        used |= m.mask
    unmatched = tuple(cards_of(rest & ~used))
    arr = Arrangement(tuple(melds), unmatched, sum(rules.card_points(c) for c in unmatched))
    err = _close_limits(arr, score, rules)
    if err is not None:
        raise err
    if unmatched and solver.is_full(rest):
        # Bonuses are judged on the seven cards: when they can all be melded, the
        # closer melds them all, whatever split was named.
        return solver.full_arrangement(rest)
    return arr


def _after_close(state: GameState, closer: int, locked: bool) -> list[tuple[Phase, int]]:
    """Who acts after a close, in order: each other player lays off on the closer's melds
    (unless they are locked), then in turn lays down, and the others lay off on them."""
    others = []
    s = _next_alive(state.alive, closer)
    while s != closer:
        others.append(s)
        s = _next_alive(state.alive, s)
    schedule: list[tuple[Phase, int]] = []
    if not locked:
        schedule += [(Phase.LAYOFF, o) for o in others]
    for q in others:
        schedule.append((Phase.LAYDOWN, q))
        schedule += [(Phase.LAYOFF, o) for o in others if o != q]
    return schedule


def _close_limits(arr: Arrangement, score: int, rules: RuleSet) -> IllegalAction | None:
    n, pts = len(arr.unmatched), arr.points
    if n > rules.close_max_unmatched:
        return IllegalAction(
            Violation.CLOSE_TOO_MANY_UNMATCHED,
            f"cannot close: {n} unmatched cards, at most {rules.close_max_unmatched}",
        )
    if pts > rules.close_max_points:
        return IllegalAction(
            Violation.CLOSE_TOO_MANY_POINTS,
            f"cannot close: unmatched cards worth {pts} points, at most "
            f"{rules.close_max_points}",
        )
    if score + pts >= rules.score_limit:
        return IllegalAction(
            Violation.CLOSE_OVER_SCORE_LIMIT,
            f"cannot close: your score {score} plus {pts} unmatched points would reach "
            f"the score limit {rules.score_limit}",
        )
    return None


def _cannot_close(state: GameState, best: Arrangement, score: int) -> IllegalAction:
    err = _close_limits(best, score, state.rules)
    if err is None:  # the fewest points fit; only a count constraint can fail elsewhere
        err = IllegalAction(
            Violation.CLOSE_TOO_MANY_UNMATCHED,
            f"cannot close: no split leaves at most {state.rules.close_max_unmatched} "
            "unmatched cards",
        )
    return IllegalAction(err.code, f"{err.message} (best split: {best})")


def _next_step(state: GameState) -> GameState:
    """Move to the next lay-off / lay-down turn that has a choice, or count the hand."""
    schedule = state.schedule
    while schedule:
        ph, seat = schedule[0]
        if ph is Phase.LAYOFF:
            if _layoffs(state, seat):
                return state._evolve(phase=ph, to_act=seat, schedule=schedule)
        elif solver_for(state.rules).has_meld(state.hands[seat]):
            # Some meld to lay down, so more than the empty split: a choice.
            return state._evolve(phase=ph, to_act=seat, schedule=schedule)
        schedule = schedule[1:]
    return _end_hand(state._evolve(schedule=()), HandEnd.CLOSED)


def _layoff(state: GameState, action: LayOff) -> GameState:
    p = state.to_act
    card = CARDS[action.card]
    if not state.hands[p] >> card & 1:
        raise IllegalAction(Violation.CARD_NOT_IN_HAND, f"{card} is not in your hand")
    if not (0 <= action.meld < len(state.table)):
        raise IllegalAction(
            Violation.NO_SUCH_MELD,
            f"there is no meld {action.meld} on the table (melds 0..{len(state.table) - 1})",
        )
    tm = state.table[action.meld]
    if tm.owner == p:
        raise IllegalAction(Violation.OWN_MELD, "you cannot lay off on your own meld")
    if tm.owner == state.closer and state.closer_locked:
        raise IllegalAction(
            Violation.CLOSER_MELDS_LOCKED,
            "nobody lays off on the closer's melds: the closer melded all seven cards",
        )
    at = action.at
    if state.rules.is_wild(card) and at is None and tm.meld.kind.value == "run":
        ends = list(layoff_ends(tm.meld, card, state.rules))
        if len(ends) == 1:
            at = ends[0]
    try:
        meld = extend_meld(tm.meld, card, at, state.rules)
    except InvalidMeld as e:
        raise IllegalAction(Violation.LAYOFF_DOES_NOT_FIT, e.reason) from None
    table = list(state.table)
    table[action.meld] = TableMeld(tm.owner, meld)
    hands = list(state.hands)
    hands[p] &= ~(1 << card)
    st = state._evolve(
        hands=tuple(hands),
        table=tuple(table),
        events=(*state.events, Event(EventKind.LAYOFF, p, card, str(action.meld))),
    )
    if not _layoffs(st, p):
        return _next_step(st._evolve(schedule=st.schedule[1:]))
    return st


def _layoff_best(state: GameState) -> GameState:
    """Make the lay-offs best for the player, end the turn.

    Best = the fewest points left in the hand once this turn is over: counted after the
    best lay-down of the cards that remain when the player's own lay-down is still to come,
    and as the cards' points when it is not. Every subset of the possible lay-offs is
    searched, in every order, onto every meld and (for a joker on a run) at either end.
    Ties go to the lay-offs worth the most points, then to the first found in the order
    :func:`legal_actions` lists single lay-offs (table meld, card, end).
    """
    p = state.to_act
    rules = state.rules
    solver = solver_for(rules) if (Phase.LAYDOWN, p) in state.schedule[1:] else None

    # The outcome depends only on the hand left and the table, not on the order the
    # cards went down in: remember it, or every order of the same lay-offs is searched.
    # A result is (points left, minus the points laid off, the lay-offs): least is best.
    memo: dict[tuple[int, tuple[Meld, ...]], tuple[int, int, list[LayOff]]] = {}

    def search(st: GameState) -> tuple[int, int, list[LayOff]]:
        hand = st.hands[p]
        key = (hand, tuple(t.meld for t in st.table))
        if key in memo:
            return memo[key]
        left = (solver.deadwood(hand) if solver is not None
                else sum(rules.card_points(c) for c in cards_of(hand)))
        best: tuple[int, int, list[LayOff]] = (left, 0, [])
        tried: set[tuple[int, int]] = set()
        for a in _layoffs(st, p):
            assert isinstance(a, LayOff)
            if (a.card, a.meld) in tried and not rules.is_wild(a.card):
                continue
            tried.add((a.card, a.meld))
            v, off, seq = search(_apply_layoff_raw(st, a))  # noqa: F821 (deleted once over)
            off -= rules.card_points(a.card)
            if (v, off) < best[:2]:
                best = (v, off, [a, *seq])
        memo[key] = best
        return best

    try:
        _, _, seq = search(state)
    finally:
        del search  # it refers to itself: a cycle the garbage collector would have to find
    st = state
    for a in seq:
        st = _apply_layoff_raw(st, a)
    return _next_step(st._evolve(schedule=st.schedule[1:]))


def _apply_layoff_raw(state: GameState, action: LayOff) -> GameState:
    tm = state.table[action.meld]
    meld = extend_meld(tm.meld, action.card, action.at, state.rules)
    table = list(state.table)
    table[action.meld] = TableMeld(tm.owner, meld)
    hands = list(state.hands)
    hands[state.to_act] &= ~(1 << action.card)
    return state._evolve(
        hands=tuple(hands),
        table=tuple(table),
        events=(*state.events, Event(EventKind.LAYOFF, state.to_act, action.card, str(action.meld))),
    )


def _laydown(state: GameState, action: LayDown) -> GameState:
    p = state.to_act
    hand = state.hands[p]
    if action.melds is None:
        melds = list(solver_for(state.rules).best_arrangement(hand).melds)
    else:
        melds = _as_melds(action.melds, hand, state.rules, "cannot lay down")
    used = 0
    for m in melds:
        used |= m.mask
    hands = list(state.hands)
    hands[p] = hand & ~used
    table = state.table + tuple(TableMeld(p, m) for m in melds)
    st = state._evolve(
        hands=tuple(hands),
        table=table,
        schedule=state.schedule[1:],
        events=(*state.events, Event(EventKind.LAYDOWN, p, None, " | ".join(str(m) for m in melds))),
    )
    return _next_step(st)


def _hand_points(state: GameState, end: HandEnd
                 ) -> tuple[list[int], list[tuple[Card, ...]], tuple[TableMeld, ...]]:
    """Each seat's points and unmatched cards at the end of the hand, and the table then.

    After a close, the others' lay-offs are on the table already and their hands are what
    is left; after a chinchón nobody lays off: the others' best melds are laid down for
    them. A hand that ends without a close (the stock ran out, the turn limit) scores each
    hand's best arrangement."""
    rules = state.rules
    solver = solver_for(rules)
    n = state.n
    points = [0] * n
    unmatched: list[tuple[Card, ...]] = [()] * n
    table = state.table
    if end is HandEnd.CLOSED or end is HandEnd.CHINCHON:
        for s in range(n):
            if not state.alive[s]:
                continue
            if end is HandEnd.CHINCHON and s != state.closer:
                arr = solver.best_arrangement(state.hands[s])
                left = arr.unmatched
                table = table + tuple(TableMeld(s, m) for m in arr.melds)
            else:
                left = tuple(cards_of(state.hands[s]))
            unmatched[s] = left
            points[s] = sum(rules.card_points(c) for c in left)
        if state.bonus:
            points[state.closer] = BONUS_POINTS[state.bonus]
        return points, unmatched, table
    melds: list[TableMeld] = []
    for s in range(n):
        if not state.alive[s]:
            continue
        arr = solver.best_arrangement(state.hands[s])
        unmatched[s] = arr.unmatched
        points[s] = arr.points
        melds += [TableMeld(s, m) for m in arr.melds]
    return points, unmatched, tuple(melds)


def _game_result(state: GameState, end: HandEnd, totals: tuple[int, ...],
                 alive: tuple[bool, ...], eliminated: tuple[int, ...]) -> GameResult | None:
    """How the game ends after this hand, or None if it goes on."""
    n = state.n
    hands_played = state.hand_no
    if end is HandEnd.CHINCHON:
        return GameResult(GameEnd.CHINCHON, (state.closer,), totals, hands_played)
    if sum(alive) == 1:
        return GameResult(GameEnd.LAST_PLAYER, (alive.index(True),), totals, hands_played)
    if sum(alive) == 0:
        low = min(totals[s] for s in eliminated)
        winners = tuple(s for s in eliminated if totals[s] == low)
        kind = GameEnd.LOWEST_TOTAL if len(winners) == 1 else GameEnd.DRAW
        return GameResult(kind, winners, totals, hands_played)
    if hands_played >= MAX_HANDS or state.game_turns + state.turn >= MAX_TURNS:
        low = min(totals[s] for s in range(n) if alive[s])
        winners = tuple(s for s in range(n) if alive[s] and totals[s] == low)
        return GameResult(GameEnd.LENGTH_LIMIT, winners, totals, hands_played)
    return None


def _end_hand(state: GameState, end: HandEnd) -> GameState:
    n = state.n
    shown = state.shown or tuple(
        tuple(state.hand(s)) if state.alive[s] else () for s in range(n)
    )
    points, unmatched, table = _hand_points(state, end)
    totals = tuple(state.scores[s] + points[s] for s in range(n))
    eliminated = tuple(
        s for s in range(n) if state.alive[s] and totals[s] >= state.rules.score_limit
    )
    alive = tuple(state.alive[s] and s not in eliminated for s in range(n))
    hr = HandResult(
        hand_no=state.hand_no,
        end=end,
        closer=state.closer,
        bonus=BONUS_NAMES[state.bonus] if state.closer >= 0 else Bonus.NONE,
        hands=shown,
        close_discard=state.close_discard,
        table=table,
        unmatched=tuple(unmatched),
        points=tuple(points),
        totals=totals,
        eliminated=eliminated,
    )
    result = _game_result(state, end, totals, alive, eliminated)
    return state._evolve(
        game_turns=state.game_turns + state.turn,
        phase=Phase.GAME_OVER if result else Phase.DEAL,
        to_act=-1,
        scores=totals,
        alive=alive,
        results=state.results + (hr,),
        result=result,
        schedule=(),
    )


def describe_hand_result(hr: HandResult, names: Sequence[str] | None = None) -> str:
    """A few lines of text for one finished hand (CLI, logs)."""
    def nm(s: int) -> str:
        return names[s] if names else f"seat {s}"

    how = {
        HandEnd.CLOSED: f"{nm(hr.closer)} closed",
        HandEnd.CHINCHON: f"{nm(hr.closer)} made CHINCHÓN",
        HandEnd.STOCK_EXHAUSTED: "stock ran out twice, nobody closed",
        HandEnd.TURN_LIMIT: "turn limit reached, nobody closed",
    }[hr.end]
    if hr.bonus not in (Bonus.NONE, Bonus.CHINCHON):
        how += f" ({hr.bonus.replace('minus_', '-')})"
    lines = [f"hand {hr.hand_no}: {how}"]
    for s, cards in enumerate(hr.hands):
        if not cards:
            continue
        lines.append(
            f"  {nm(s):>12}: {format_cards(cards):<28} unmatched {format_cards(hr.unmatched[s]) or '-':<14}"
            f" {hr.points[s]:+4d} -> {hr.totals[s]}"
            + ("  OUT" if s in hr.eliminated else "")
        )
    return "\n".join(lines)


__all__ = [
    "End",
    "Event",
    "GameEnd",
    "GameResult",
    "GameState",
    "HandEnd",
    "HandResult",
    "MAX_HANDS",
    "MAX_TURNS",
    "Phase",
    "TableMeld",
    "apply",
    "describe_hand_result",
    "is_legal",
    "legal_actions",
    "new_game",
]
