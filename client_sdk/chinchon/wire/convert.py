"""Translation between the wire types (``chinchon.v1`` protobuf) and the engine types.

Used by the referee (engine -> wire for observations and legal actions, wire -> engine
for bot actions) and by the Python SDK (the other way round), so both sides agree by
construction. Nothing here knows about gRPC. The referee's byte-level shortcut for the
same messages is :mod:`chinchon.wire.fast`.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.duration_pb2 import Duration

from chinchon.engine import (
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYOFF_BEST,
    PASS,
    Action,
    Bonus,
    Close,
    Discard,
    DrawDiscard,
    DrawStock,
    End,
    Event,
    EventKind,
    HandEnd,
    HandResult,
    LayDown,
    LayOff,
    LayOffBest,
    MalformedInput,
    Meld,
    MeldKind,
    Observation,
    Pass,
    Phase,
    PlayerView,
    RuleSet,
    TableMeld,
    parse_card,
)
from chinchon.engine.game import SHARED_EVENTS
from chinchon.v1 import game_pb2 as g


def duration(seconds: float) -> Duration:
    """``seconds`` as a ``google.protobuf.Duration`` (a negative time counts as 0)."""
    d = Duration()
    d.FromNanoseconds(max(0, int(seconds * 1e9)))
    return d


def seconds_of(d: Duration) -> float:
    """A ``google.protobuf.Duration`` in seconds."""
    return float(d.seconds + d.nanos / 1e9)


PHASE_TO_WIRE = {
    Phase.DEAL: g.PHASE_DEAL,
    Phase.DRAW: g.PHASE_DRAW,
    Phase.DISCARD: g.PHASE_DISCARD,
    Phase.RESHUFFLE: g.PHASE_RESHUFFLE,
    Phase.LAYOFF: g.PHASE_LAY_OFF,
    Phase.LAYDOWN: g.PHASE_LAY_DOWN,
    Phase.GAME_OVER: g.PHASE_GAME_OVER,
}
_PHASE_FROM_WIRE = {v: k for k, v in PHASE_TO_WIRE.items()}
_EVENT_TO_WIRE = {
    EventKind.DRAW_STOCK: g.EVENT_KIND_DRAW_STOCK,
    EventKind.DRAW_DISCARD: g.EVENT_KIND_DRAW_DISCARD,
    EventKind.DISCARD: g.EVENT_KIND_DISCARD,
    EventKind.RESHUFFLE: g.EVENT_KIND_RESHUFFLE,
    EventKind.CLOSE: g.EVENT_KIND_CLOSE,
    EventKind.LAYOFF: g.EVENT_KIND_LAY_OFF,
    EventKind.LAYDOWN: g.EVENT_KIND_LAY_DOWN,
}
_EVENT_FROM_WIRE = {v: k for k, v in _EVENT_TO_WIRE.items()}
_HAND_END_TO_WIRE = {
    HandEnd.CLOSED: g.HAND_END_KIND_CLOSED,
    HandEnd.CHINCHON: g.HAND_END_KIND_CHINCHON,
    HandEnd.STOCK_EXHAUSTED: g.HAND_END_KIND_STOCK_EXHAUSTED,
    HandEnd.TURN_LIMIT: g.HAND_END_KIND_TURN_LIMIT,
}
_HAND_END_FROM_WIRE = {v: k for k, v in _HAND_END_TO_WIRE.items()}
_BONUS_TO_WIRE = {
    Bonus.NONE: g.BONUS_NONE,
    Bonus.MINUS_10: g.BONUS_MINUS_10,
    Bonus.MINUS_25: g.BONUS_MINUS_25,
    Bonus.MINUS_50: g.BONUS_MINUS_50,
    Bonus.CHINCHON: g.BONUS_CHINCHON,
}
_BONUS_FROM_WIRE = {v: k for k, v in _BONUS_TO_WIRE.items()}


# -- rule sets ---------------------------------------------------------------------------


# RuleSet.to_dict (dataclasses.asdict) is slow and the referee sends the rules in every
# observation: keep one wire template per rule set (RuleSet hashes by value) and copy it.
_RULES_WIRE: dict[RuleSet, g.RuleSet] = {}


def rules_template(rules: RuleSet) -> g.RuleSet:
    """The cached wire form of ``rules``: never mutate it (copy it, or pass it to a
    message constructor, which copies)."""
    m = _RULES_WIRE.get(rules)
    if m is None:
        if len(_RULES_WIRE) >= 256:
            _RULES_WIRE.clear()
        # Every option set, the house rules too (wild_cards: the list, empty for none).
        m = _RULES_WIRE[rules] = g.RuleSet(**rules.to_dict())
    return m


def rules_to_wire(rules: RuleSet) -> g.RuleSet:
    m = g.RuleSet()
    m.CopyFrom(rules_template(rules))
    return m


def rules_from_wire(msg: g.RuleSet, base: RuleSet | None = None) -> RuleSet:
    """A rule set from the wire: unset fields keep ``base``'s values (or the defaults).

    Raises RuleSetError on an invalid combination.
    """
    values = (base or RuleSet()).to_dict()
    if msg.HasField("deck") and not msg.HasField("figure_points"):
        values["figure_points"] = ""  # the new deck's default figure points
    for f in g.RuleSet.DESCRIPTOR.fields:
        if f.name == "wild_cards":  # repeated: no presence; empty is unset
            if getattr(msg, f.name):
                values[f.name] = list(getattr(msg, f.name))
        elif msg.HasField(f.name):
            values[f.name] = getattr(msg, f.name)
    return RuleSet.from_dict(values)


# -- actions -----------------------------------------------------------------------------


def _groups(melds: Sequence[Sequence[int]]) -> g.MeldList:
    return g.MeldList(melds=[g.CardGroup(cards=[str(c) for c in m]) for m in melds])


def action_to_wire(a: Action) -> g.Action:
    if isinstance(a, DrawStock):
        return g.Action(draw_stock=g.DrawStock())
    if isinstance(a, DrawDiscard):
        return g.Action(draw_discard=g.DrawDiscard())
    if isinstance(a, Discard):
        return g.Action(discard=g.Discard(card=str(a.card)))
    if isinstance(a, Close):
        if a.melds is None:
            return g.Action(close=g.Close(card=str(a.card), best=True))
        return g.Action(close=g.Close(card=str(a.card), melds=_groups(a.melds)))
    if isinstance(a, LayOff):
        end = {None: g.RUN_END_UNSPECIFIED, End.LOW: g.RUN_END_LOW, End.HIGH: g.RUN_END_HIGH}
        return g.Action(lay_off=g.LayOff(card=str(a.card), meld=a.meld, end=end[a.at]))
    if isinstance(a, LayOffBest):
        return g.Action(lay_off_best=g.LayOffBest())
    if isinstance(a, LayDown):
        if a.melds is None:
            return g.Action(lay_down=g.LayDown(best=True))
        return g.Action(lay_down=g.LayDown(melds=_groups(a.melds)))
    if isinstance(a, Pass):
        msg = g.Action()
        getattr(msg, "pass").SetInParent()  # ``pass`` is a Python keyword
        return msg
    raise TypeError(f"not a player action: {a!r}")


def _melds_from_wire(ml: g.MeldList) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(parse_card(c) for c in grp.cards) for grp in ml.melds)


def action_from_wire(msg: g.Action) -> Action:
    """Read a bot's action; raise :class:`MalformedInput` with what is wrong."""
    kind = msg.WhichOneof("kind")
    if kind is None:
        raise MalformedInput("the action is empty: set one of draw_stock, draw_discard, "
                             "discard, close, lay_off, lay_off_best, lay_down, pass")
    if kind == "draw_stock":
        return DRAW_STOCK
    if kind == "draw_discard":
        return DRAW_DISCARD
    if kind == "discard":
        if not msg.discard.card:
            raise MalformedInput("discard: the card is missing")
        return Discard(parse_card(msg.discard.card))
    if kind == "close":
        c = msg.close
        if not c.card:
            raise MalformedInput("close: the face-down card is missing")
        which = c.WhichOneof("arrangement")
        if which is None:
            raise MalformedInput("close: set best = true or name the melds")
        if which == "best":
            if not c.best:
                raise MalformedInput("close: best = false; name the melds instead")
            return Close(parse_card(c.card), None)
        return Close(parse_card(c.card), _melds_from_wire(c.melds))  # type: ignore[arg-type]
    if kind == "lay_off":
        lo = msg.lay_off
        if not lo.card:
            raise MalformedInput("lay_off: the card is missing")
        at = {g.RUN_END_LOW: End.LOW, g.RUN_END_HIGH: End.HIGH}.get(lo.end)
        return LayOff(parse_card(lo.card), lo.meld, at)
    if kind == "lay_off_best":
        return LAYOFF_BEST
    if kind == "lay_down":
        ld = msg.lay_down
        which = ld.WhichOneof("arrangement")
        if which is None:
            raise MalformedInput("lay_down: set best = true or name the melds")
        if which == "best":
            return LayDown(None)
        return LayDown(_melds_from_wire(ld.melds))  # type: ignore[arg-type]
    return PASS


# -- observations ------------------------------------------------------------------------


def meld_to_wire(i: int, tm: TableMeld) -> g.Meld:
    """Table meld number ``i``."""
    return g.Meld(
        index=i,
        owner=tm.owner,
        kind=g.MELD_KIND_SET if tm.meld.kind is MeldKind.SET else g.MELD_KIND_RUN,
        cards=[str(c) for c in tm.meld.cards],
    )


def hand_result_to_wire(hr: HandResult) -> g.HandResult:
    return g.HandResult(
        hand_number=hr.hand_no,
        end=_HAND_END_TO_WIRE[hr.end],
        closer=hr.closer,
        bonus=_BONUS_TO_WIRE[hr.bonus],
        hands=[g.CardGroup(cards=[str(c) for c in h]) for h in hr.hands],
        close_discard=str(hr.close_discard) if hr.close_discard is not None else "",
        table=[meld_to_wire(i, t) for i, t in enumerate(hr.table)],
        unmatched=[g.CardGroup(cards=[str(c) for c in h]) for h in hr.unmatched],
        points=list(hr.points),
        totals=list(hr.totals),
        eliminated=list(hr.eliminated),
    )


def observation_to_wire(obs: Observation, history: Sequence[g.HandResult] = ()) -> g.Observation:
    """``history``: the wire form of ``obs.past_hands`` if the caller keeps it cached."""
    past = list(history) if len(history) == len(obs.past_hands) else [
        hand_result_to_wire(h) for h in obs.past_hands
    ]
    msg = g.Observation(
        seat=obs.seat,
        hand_number=obs.hand_no,
        phase=PHASE_TO_WIRE[obs.phase],
        to_act=obs.to_act,
        starter=obs.starter,
        turn=obs.turn,
        hand=[str(c) for c in obs.hand],
        discard_pile=[str(c) for c in obs.discard_pile],
        stock_size=obs.stock_size,
        players=[
            g.PlayerInfo(
                seat=p.seat, name=p.name, hand_size=p.hand_size, score=p.score, in_game=p.in_game
            )
            for p in obs.players
        ],
        table=[meld_to_wire(i, t) for i, t in enumerate(obs.table)],
        taken_from_discard=str(obs.taken_from_discard) if obs.taken_from_discard is not None else "",
        closer=obs.closer,
        rules=rules_template(obs.rules),  # the constructor copies the template
        past_hands=past,
    )
    if obs.events:
        msg.MergeFromString(b"".join([event_bytes(e) for e in obs.events]))
    return msg


# An observation lists every public event of the hand (about 50 on average), mostly the
# same ones as the previous observation. Building (or copying) 50 submessages costs more
# than the rest of the observation, so each event's encoding as a one-element
# ``Observation.events`` is kept (Event hashes by value) and the concatenation is parsed
# once: protobuf appends repeated fields met while parsing, in order.
_EVENTS_WIRE: dict[Event, bytes] = {}
# The draw and discard events are shared objects (game.SHARED_EVENTS): found by identity
# first, which spares hashing a dataclass (a Python call) for most events.
_SHARED_EVENT_IDS = frozenset(id(e) for e in SHARED_EVENTS)
_EVENTS_BY_ID: dict[int, bytes] = {}


def event_bytes(e: Event) -> bytes:
    """The encoding of ``e`` as one element of ``Observation.events`` (cached)."""
    b = _EVENTS_BY_ID.get(id(e))
    if b is not None:
        return b
    b = _EVENTS_WIRE.get(e)
    if b is None:
        if len(_EVENTS_WIRE) >= 8192:
            _EVENTS_WIRE.clear()
        b = _EVENTS_WIRE[e] = g.Observation(events=[g.PublicEvent(
            kind=_EVENT_TO_WIRE[e.kind],
            seat=e.seat,
            card=str(e.card) if e.card is not None else "",
            detail=e.detail,
        )]).SerializeToString()
    if id(e) in _SHARED_EVENT_IDS:
        _EVENTS_BY_ID[id(e)] = b
    return b


def _cards(xs: Sequence[str]) -> tuple[int, ...]:
    return tuple(parse_card(c) for c in xs)


def table_from_wire(ms: Sequence[g.Meld], rules: RuleSet) -> tuple[TableMeld, ...]:
    """The table melds of the wire (their ``index`` is their place in ``ms``)."""
    pos = {r: i for i, r in enumerate(rules.ranks)}
    wild = rules.wild_mask
    out = []
    for m in ms:
        cards = tuple(parse_card(c) for c in m.cards)
        if m.kind == g.MELD_KIND_RUN:
            first = next(i for i, c in enumerate(cards) if not wild >> c & 1)
            low = pos[cards[first].rank] - first
            out.append(TableMeld(m.owner, Meld(MeldKind.RUN, cards, cards[first].suit, low)))
        else:
            out.append(TableMeld(m.owner, Meld(MeldKind.SET, cards)))
    return tuple(out)


def event_from_wire(e: g.PublicEvent) -> Event:
    """An event of the wire (SDK side)."""
    return Event(
        _EVENT_FROM_WIRE.get(e.kind, EventKind.DISCARD),
        e.seat,
        parse_card(e.card) if e.card else None,
        e.detail,
    )


def hand_result_from_wire(h: g.HandResult, rules: RuleSet) -> HandResult:
    return HandResult(
        hand_no=h.hand_number,
        end=_HAND_END_FROM_WIRE.get(h.end, HandEnd.CLOSED),
        closer=h.closer,
        bonus=_BONUS_FROM_WIRE.get(h.bonus, Bonus.NONE),
        hands=tuple(_cards(x.cards) for x in h.hands),  # type: ignore[misc]
        close_discard=parse_card(h.close_discard) if h.close_discard else None,
        table=table_from_wire(h.table, rules),
        unmatched=tuple(_cards(x.cards) for x in h.unmatched),  # type: ignore[misc]
        points=tuple(h.points),
        totals=tuple(h.totals),
        eliminated=tuple(h.eliminated),
    )


def observation_from_wire(msg: g.Observation) -> Observation:
    """The engine's Observation for a wire observation (SDK side)."""
    rules = rules_from_wire(msg.rules)
    return Observation(
        seat=msg.seat,
        rules=rules,
        hand_no=msg.hand_number,
        phase=_PHASE_FROM_WIRE.get(msg.phase, Phase.DRAW),
        to_act=msg.to_act,
        starter=msg.starter,
        turn=msg.turn,
        hand=_cards(msg.hand),  # type: ignore[arg-type]
        discard_pile=_cards(msg.discard_pile),  # type: ignore[arg-type]
        stock_size=msg.stock_size,
        players=tuple(
            PlayerView(p.seat, p.name, p.hand_size, p.score, p.in_game) for p in msg.players
        ),
        table=table_from_wire(msg.table, rules),
        events=tuple([event_from_wire(e) for e in msg.events]),
        taken_from_discard=parse_card(msg.taken_from_discard) if msg.taken_from_discard else None,
        closer=msg.closer,
        past_hands=tuple(hand_result_from_wire(h, rules) for h in msg.past_hands),
    )
