"""The referee's hot path on the wire: ``PlayResponse{action_request}`` built as bytes.

An ActionRequest carries the seat's whole observation (about 900 bytes: the hand, the
discard pile, every public event of the hand, the results of past hands, the rule set)
and every legal action. Most of it is the same as in the previous request of the game:
the rule set never changes, the events and past hands only grow, the legal actions come
from a small set. Building it as protobuf objects costs more than everything else the
referee does per decision, so :class:`RequestEncoder` writes the protobuf encoding
directly, from cached pieces:

* a message's encoding is the concatenation of its fields' encodings, in any order, and
  a repeated field is one encoded element after another; so the encoding of a list that
  grows (the hand's events, the past hands) is kept and extended, and that of the
  discard pile, which gains or loses its top card, is kept and adjusted;
* each piece that does not change (the rule set, one event, one meld, one legal action,
  the game id) is encoded once, mostly by protobuf itself, and reused.

The result parses to exactly the message protobuf builds from
:func:`chinchon.wire.observation_to_wire` (``tests/test_encode.py`` checks this over
many games and rule variants). The Play method has no response serializer: the referee
writes bytes, these or a message it has serialized itself (``Connection.send``).

The other way, :func:`answer_fields` reads a bot's answer (request id and action) from
the bytes of its PlayRequest without building a message, and :func:`decode_action`
turns the action's bytes into the engine's action through a cache; anything else is
parsed by protobuf.
"""

from __future__ import annotations

from collections.abc import Sequence

from chinchon.engine import (
    Action,
    Card,
    Close,
    Event,
    HandResult,
    LayDown,
    MalformedInput,
    Observation,
    PlayerView,
    RuleSet,
    TableMeld,
)
from chinchon.engine.game import SHARED_ACTIONS
from chinchon.v1 import game_pb2 as g
from chinchon.wire import (
    _PHASE_TO_WIRE,
    _event_bytes,
    _meld_wire,
    _rules_template,
    action_from_wire,
    action_to_wire,
    hand_result_to_wire,
)
from google.protobuf.message import DecodeError


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    if n < 1 << 21:
        if n < 1 << 14:
            return bytes((n & 127 | 128, n >> 7)) if n >= 128 else bytes((n,))
        return bytes((n & 127 | 128, n >> 7 & 127 | 128, n >> 14))
    if n < 1 << 28:
        return bytes((n & 127 | 128, n >> 7 & 127 | 128, n >> 14 & 127 | 128, n >> 21))
    out = bytearray()
    while n >= 128:
        out.append((n & 127) | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


_TABLE = [_varint(n) for n in range(1 << 14)]  # every one- and two-byte varint


def varint(n: int) -> bytes:
    """Protobuf base-128 varint; a negative int32/int64 takes ten bytes (two's complement)."""
    return _TABLE[n] if 0 <= n < 16384 else _varint(n)


def key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def delimited(field: int, payload: bytes) -> bytes:
    """A length-delimited field: a string, bytes or an embedded message."""
    n = len(payload)
    return key(field, 2) + (_TABLE[n] if n < 16384 else _varint(n)) + payload


def duration_bytes(seconds: float) -> bytes:
    """The encoding of a ``google.protobuf.Duration`` (whole nanoseconds, never negative)."""
    b = _DURATIONS.get(seconds)
    if b is not None:
        return b
    ns = int(seconds * 1e9)
    if ns <= 0:
        return b""
    s, n = divmod(ns, 1_000_000_000)
    b = (b"\x08" + varint(s) if s else b"") + (b"\x10" + _varint(n) if n else b"")
    if n == 0 or seconds.is_integer():
        # Whole seconds come back (a fresh move time, an untouched bank): keep them.
        if len(_DURATIONS) > 1024:
            _DURATIONS.clear()
        _DURATIONS[seconds] = b
    return b


_DURATIONS: dict[float, bytes] = {}


_PHASE_BYTES = {p: b"\x18" + varint(v) for p, v in _PHASE_TO_WIRE.items()}
_MINUS_ONE = {f: key(f, 0) + varint(-1) for f in (4, 5, 14)}  # int32 fields set to -1


class _CardField(dict[int, bytes]):
    """card -> the encoding of that card as one element of a repeated string field."""

    def __init__(self, field: int) -> None:
        super().__init__()
        self.field = field

    def __missing__(self, card: int) -> bytes:
        b = self[card] = delimited(self.field, str(card).encode())
        return b


_HAND = _CardField(7)  # Observation.hand
_PILE = _CardField(8)  # Observation.discard_pile
_TAKEN = _CardField(13)  # Observation.taken_from_discard
_GROUP_CARD = _CardField(1)  # CardGroup.cards


# Closes and lay-downs that name their melds are many and rarely the same twice (a
# closing hand lists a dozen of them); their melds are not: encode those once each.
_GROUPS: dict[tuple[Card, ...], bytes] = {}


def _meld_list(melds: tuple[tuple[Card, ...], ...]) -> bytes:
    """The encoding of a ``MeldList`` (each meld a ``CardGroup``)."""
    out = []
    for m in melds:
        b = _GROUPS.get(m)
        if b is None:
            if len(_GROUPS) > 65536:
                _GROUPS.clear()
            b = _GROUPS[m] = delimited(1, b"".join(map(_GROUP_CARD.__getitem__, m)))
        out.append(b)
    return b"".join(out)


def _action_bytes(a: Action) -> bytes:
    """The encoding of ``chinchon.wire.action_to_wire(a)``."""
    if type(a) is Close and a.melds is not None:
        return delimited(4, delimited(1, str(a.card).encode()) + delimited(3, _meld_list(a.melds)))
    if type(a) is LayDown and a.melds is not None:
        return delimited(7, delimited(2, _meld_list(a.melds)))
    return action_to_wire(a).SerializeToString()


# Actions are values shared by every game: their encodings, as one
# ActionRequest.legal_actions element and as ActionAccepted.action.
_ACTIONS: dict[Action, bytes] = {}
_ACCEPTED: dict[Action, bytes] = {}


# The actions legal_actions lists most (draws, discards, best closes...) are shared
# objects that live as long as the program: their encodings are also found by identity,
# which spares hashing a dataclass (a Python call) for each legal action of each request.
_SHARED_LEGAL: dict[int, bytes] = {}
_SHARED_ACCEPTED: dict[int, bytes] = {}
for _a in SHARED_ACTIONS:
    _raw = _action_bytes(_a)
    _SHARED_LEGAL[id(_a)] = delimited(4, _raw)
    _SHARED_ACCEPTED[id(_a)] = delimited(2, _raw)
del _a, _raw


class RequestEncoder:
    """Builds the ``PlayResponse`` bytes of every ActionRequest of one game."""

    def __init__(self, game_id: str, rules: RuleSet) -> None:
        self._game_id = delimited(2, game_id.encode())
        self._rules = delimited(15, _rules_template(rules).SerializeToString())
        self._events: tuple[Event, ...] = ()
        self._events_b = b""
        self._pile: tuple[Card, ...] = ()
        self._pile_b = b""
        self._past: tuple[HandResult, ...] = ()
        self._past_b = b""
        self._players: dict[tuple[PlayerView, ...], bytes] = {}
        self._melds: dict[tuple[TableMeld, ...], bytes] = {}
        self._actions = _ACTIONS
        self._rid: tuple[int, bytes] = (-1, b"")
        self._accepted = _ACCEPTED

    def observation(self, obs: Observation) -> bytes:
        """The encoding of ``chinchon.wire.observation_to_wire(obs)``."""
        (seat, _, hand_no, phase, to_act, starter, turn, hand, pile, stock_size, players,
         table, events, taken, closer, past) = obs
        if pile is not self._pile:
            # The discard pile grows by its top card, or loses it: adjust the last encoding.
            old = self._pile
            n = len(old)
            if len(pile) == n + 1 and pile[:n] == old:
                self._pile_b += _PILE[pile[n]]
            elif len(pile) == n - 1 and n and old[:-1] == pile:
                self._pile_b = self._pile_b[:-len(_PILE[old[-1]])]
            else:
                self._pile_b = b"".join(map(_PILE.__getitem__, pile))
            self._pile = pile
        # Seats, hand numbers, turns and sizes are small non-negative numbers; to_act,
        # starter and closer are -1 when nobody is (a ten-byte varint).
        t = _TABLE
        parts = [
            b"\x08" + t[seat] if seat else b"",
            b"\x10" + t[hand_no] if hand_no else b"",
            _PHASE_BYTES[phase],
            (b"\x20" + t[to_act] if to_act > 0 else _MINUS_ONE[4] if to_act == -1
             else b"\x20" + varint(to_act) if to_act else b""),
            (b"\x28" + t[starter] if starter > 0 else _MINUS_ONE[5] if starter == -1
             else b"\x28" + varint(starter) if starter else b""),
            b"\x30" + varint(turn) if turn else b"",
            b"".join(map(_HAND.__getitem__, hand)),
            self._pile_b,
            b"\x48" + t[stock_size] if stock_size else b"",
        ]
        b = self._players.get(players)
        if b is None:
            if len(self._players) > 4096:
                self._players.clear()
            b = self._players[players] = b"".join(
                delimited(10, g.PlayerInfo(seat=p.seat, name=p.name, hand_size=p.hand_size,
                                           score=p.score, in_game=p.in_game).SerializeToString())
                for p in players)
        parts.append(b)
        if table:
            b = self._melds.get(table)
            if b is None:
                if len(self._melds) > 4096:
                    self._melds.clear()
                b = self._melds[table] = b"".join(
                    delimited(11, _meld_wire(i, tm).SerializeToString())
                    for i, tm in enumerate(table))
            parts.append(b)
        k = len(self._events)
        if len(events) >= k and events[:k] == self._events:
            # The hand's events only grow until the next hand: extend the last encoding
            # (the tuple comparison checks identity first, so it is cheap).
            if len(events) > k:
                self._events_b += b"".join([_event_bytes(e) for e in events[k:]])
        else:
            self._events_b = b"".join([_event_bytes(e) for e in events])
        self._events = events
        parts.append(self._events_b)
        if taken is not None:
            parts.append(_TAKEN[taken])
        if closer:
            parts.append(_MINUS_ONE[14] if closer == -1 else b"\x70" + varint(closer))
        parts.append(self._rules)
        if past is not self._past:
            self._past_b = self._past_for(past)
            self._past = past
        parts.append(self._past_b)
        return b"".join(parts)

    def _past_for(self, past: tuple[HandResult, ...]) -> bytes:
        k = len(self._past)
        if len(past) >= k and past[:k] == self._past:
            return self._past_b + b"".join(
                delimited(16, hand_result_to_wire(h).SerializeToString()) for h in past[k:])
        return b"".join(delimited(16, hand_result_to_wire(h).SerializeToString()) for h in past)

    def action(self, a: Action) -> bytes:
        """One ``legal_actions`` element."""
        b = self._actions.get(a)
        if b is None:
            if len(self._actions) > 65536:
                self._actions.clear()
                self._accepted.clear()
            raw = _action_bytes(a)
            b = self._actions[a] = delimited(4, raw)
            self._accepted[a] = delimited(2, raw)
        return b

    def legal(self, legal: Sequence[Action]) -> bytes:
        shared = _SHARED_LEGAL.get
        get = self._actions.get
        out = []
        for a in legal:
            b = shared(id(a))
            if b is None:
                b = get(a)
                if b is None:
                    b = self.action(a)
            out.append(b)
        return b"".join(out)

    def accepted(self, request_id: int, action: Action, time_taken: float) -> bytes:
        """``PlayResponse.accepted`` (field 10) for ``action`` applied: to append to the
        seat's next message."""
        b = _SHARED_ACCEPTED.get(id(action))
        if b is None:
            b = self._accepted.get(action)
            if b is None:
                self.action(action)
                b = self._accepted[action]
        ns = int(time_taken * 1e9)
        # Duration{nanos}: the usual case, a think time under a second.
        if 16384 <= ns < 268_435_456:
            if ns < 2_097_152:
                took = bytes((4, 0x10, ns & 127 | 128, ns >> 7 & 127 | 128, ns >> 14))
            else:
                took = bytes((5, 0x10, ns & 127 | 128, ns >> 7 & 127 | 128,
                              ns >> 14 & 127 | 128, ns >> 21))
        else:
            d = duration_bytes(time_taken)
            took = _TABLE[len(d)] + d
        rid = self._rid[1] if self._rid[0] == request_id else _rid_field(request_id)
        size = len(rid) + len(b) + 1 + len(took)
        return b"".join((b"\x52", _TABLE[size], rid, b, b"\x1a", took))

    def request(
        self, request_id: int, observation: bytes, legal: bytes, move_time: float,
        bank_time: float, attempt: int = 0, accepted: bytes = b"",
    ) -> bytes:
        """``PlayResponse{action_request}``; ``observation`` and ``legal`` from
        :meth:`observation` and :meth:`legal`, ``accepted`` from :meth:`accepted` (the
        confirmation of the seat's previous answer, if it is still to be sent)."""
        n = len(observation)
        move = duration_bytes(move_time)
        bank = duration_bytes(bank_time)
        rid = _rid_field(request_id)
        self._rid = (request_id, rid)  # the accepted message will repeat it
        body = b"".join((
            rid,
            self._game_id,
            b"\x1a", _TABLE[n] if n < 16384 else _varint(n), observation,
            legal,
            b"\x2a", _TABLE[len(move)], move,
            b"\x32", _TABLE[len(bank)], bank,
            b"\x38" + varint(attempt) if attempt else b"",
        ))
        n = len(body)
        return b"".join((b"\x1a", _TABLE[n] if n < 16384 else _varint(n), body, accepted))


def _rid_field(request_id: int) -> bytes:
    """The request_id field (number 1, a varint) of ActionRequest / ActionAccepted."""
    if not request_id:
        return b""
    return b"\x08" + (_TABLE[request_id] if request_id < 16384 else _varint(request_id))


#: Answers remembered by their encoding: at most this many, each at most
#: ``MAX_REMEMBERED_BYTES`` long. A listed action encodes in under a hundred bytes (a
#: close naming all its melds is the longest); anything longer (an answer padded with
#: unknown fields, say) is decoded every time and never kept, so what a bot sends can
#: make the cache hold at most ``MAX_REMEMBERED * MAX_REMEMBERED_BYTES`` bytes of keys.
MAX_REMEMBERED = 16384
MAX_REMEMBERED_BYTES = 128
_DECODED: dict[bytes, Action] = {}
_SHARED_BY_VALUE: dict[Action, Action] = {a: a for a in SHARED_ACTIONS}


def decode_action(raw: bytes) -> Action:
    """The engine action of an encoded ``chinchon.v1.Action``; raises MalformedInput.

    Remembered by encoding (when short): bots mostly send back one of the listed
    actions, so the same few thousand encodings come back again and again."""
    a = _DECODED.get(raw)
    if a is None:
        try:
            msg = g.Action.FromString(raw)
        except DecodeError:
            raise MalformedInput("the action could not be read as a chinchon.v1.Action") from None
        a = action_from_wire(msg)  # raises MalformedInput: nothing is remembered then
        a = _SHARED_BY_VALUE.get(a, a)  # the shared object, when there is one
        if len(raw) <= MAX_REMEMBERED_BYTES:
            if len(_DECODED) >= MAX_REMEMBERED:
                _DECODED.clear()
            _DECODED[raw] = a
    return a


def remembered_bytes() -> int:
    """How many bytes of answers the decoding cache holds as keys (for tests)."""
    return sum(map(len, _DECODED))


def read_varint(buf: bytes, i: int) -> tuple[int, int]:
    """The varint that starts at ``buf[i]``, and the index after it. Raises IndexError
    when ``buf`` ends inside it, ValueError when it runs past ten bytes."""
    value = 0
    shift = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 127) << shift
        if b < 128:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than ten bytes")


def answer_fields(raw: bytes) -> tuple[int, bytes] | None:
    """``(request_id, encoded action)`` of an encoded PlayRequest that is an answer laid
    out as protobuf encoders write it (``action`` holding ``request_id`` then
    ``action``), without building any message; None for anything else (the caller
    then parses it with protobuf)."""
    try:
        if raw[0] != 0x12:
            return None
        n = len(raw)
        length, i = read_varint(raw, 1)
        if i + length != n or raw[i] != 0x08:
            return None
        rid, i = read_varint(raw, i + 1)
        if raw[i] != 0x12:
            return None
        length, j = read_varint(raw, i + 1)
        if j + length != n:
            return None
        return rid, raw[j:]
    except (IndexError, ValueError):
        return None
