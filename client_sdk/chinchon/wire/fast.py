"""The referee's hot path on the wire, as bytes: ActionRequests encoded from cached pieces
(:class:`RequestEncoder`), a bot's answer read without building a message
(:func:`answer_fields`, :func:`decode_action`).

Every encoding equals protobuf's for what :mod:`chinchon.wire.convert` builds
(``tests/wire/test_encode.py``); the field keys come from the descriptors
(:mod:`chinchon.wire.tags`). Why it is built this way, and what it saves:
docs/benchmarks.md, "The referee's request encoder".
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import DecodeError

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

from .convert import (
    PHASE_TO_WIRE,
    action_from_wire,
    action_to_wire,
    event_bytes,
    hand_result_to_wire,
    meld_to_wire,
    rules_template,
)
from .tags import (
    ACTION_ACCEPTED_ACTION,
    ACTION_ACCEPTED_REQUEST_ID,
    ACTION_ACCEPTED_TIME_TAKEN,
    ACTION_CLOSE,
    ACTION_LAY_DOWN,
    ACTION_REPLY_ACTION,
    ACTION_REPLY_REQUEST_ID,
    ACTION_REQUEST_ATTEMPT,
    ACTION_REQUEST_BANK_TIME,
    ACTION_REQUEST_DELTA,
    ACTION_REQUEST_GAME_ID,
    ACTION_REQUEST_LEGAL_ACTIONS,
    ACTION_REQUEST_MOVE_TIME,
    ACTION_REQUEST_OBSERVATION,
    ACTION_REQUEST_REQUEST_ID,
    CARD_GROUP_CARDS,
    CLOSE_CARD,
    CLOSE_MELDS,
    DURATION_NANOS,
    DURATION_SECONDS,
    LAY_DOWN_MELDS,
    MELD_LIST_MELDS,
    OBSERVATION_CLOSER,
    OBSERVATION_DELTA_EVENTS_KEPT,
    OBSERVATION_DISCARD_PILE,
    OBSERVATION_HAND,
    OBSERVATION_HAND_NUMBER,
    OBSERVATION_PAST_HANDS,
    OBSERVATION_PHASE,
    OBSERVATION_PLAYERS,
    OBSERVATION_RULES,
    OBSERVATION_SEAT,
    OBSERVATION_STARTER,
    OBSERVATION_STOCK_SIZE,
    OBSERVATION_TABLE,
    OBSERVATION_TAKEN_FROM_DISCARD,
    OBSERVATION_TO_ACT,
    OBSERVATION_TURN,
    PLAY_REQUEST_ACTION,
    PLAY_RESPONSE_ACCEPTED,
    PLAY_RESPONSE_ACTION_REQUEST,
    one_byte,
)
from .varint import SMALL, SMALL_LIMIT, encode_varint, length_prefixed, read_varint, varint


def duration_bytes(seconds: float) -> bytes:
    """The encoding of a ``google.protobuf.Duration`` (whole nanoseconds, never negative)."""
    b = _DURATIONS.get(seconds)
    if b is not None:
        return b
    ns = int(seconds * 1e9)
    if ns <= 0:
        return b""
    s, n = divmod(ns, 1_000_000_000)
    b = ((DURATION_SECONDS + varint(s) if s else b"")
         + (DURATION_NANOS + encode_varint(n) if n else b""))
    if n == 0 or seconds.is_integer():
        # Whole seconds come back (a fresh move time, an untouched bank): keep them.
        if len(_DURATIONS) > 1024:
            _DURATIONS.clear()
        _DURATIONS[seconds] = b
    return b


_DURATIONS: dict[float, bytes] = {}


_PHASE_BYTES = {p: OBSERVATION_PHASE + varint(v) for p, v in PHASE_TO_WIRE.items()}
# int32 fields set to -1 (nobody): a ten-byte varint
_NOBODY_TO_ACT = OBSERVATION_TO_ACT + varint(-1)
_NOBODY_STARTS = OBSERVATION_STARTER + varint(-1)
_NOBODY_CLOSED = OBSERVATION_CLOSER + varint(-1)


class _CardField(dict[int, bytes]):
    """card -> the encoding of that card as one element of a repeated string field."""

    def __init__(self, field_key: bytes) -> None:
        super().__init__()
        self.field_key = field_key

    def __missing__(self, card: int) -> bytes:
        b = self[card] = length_prefixed(self.field_key, str(card).encode())
        return b


_HAND = _CardField(OBSERVATION_HAND)
_PILE = _CardField(OBSERVATION_DISCARD_PILE)
_TAKEN = _CardField(OBSERVATION_TAKEN_FROM_DISCARD)
_GROUP_CARD = _CardField(CARD_GROUP_CARDS)


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
            b = _GROUPS[m] = length_prefixed(MELD_LIST_MELDS, b"".join(map(_GROUP_CARD.__getitem__, m)))
        out.append(b)
    return b"".join(out)


def action_bytes(a: Action) -> bytes:
    """The encoding of ``chinchon.wire.action_to_wire(a)``."""
    if type(a) is Close and a.melds is not None:
        return length_prefixed(ACTION_CLOSE, length_prefixed(CLOSE_CARD, str(a.card).encode())
                               + length_prefixed(CLOSE_MELDS, _meld_list(a.melds)))
    if type(a) is LayDown and a.melds is not None:
        return length_prefixed(ACTION_LAY_DOWN, length_prefixed(LAY_DOWN_MELDS, _meld_list(a.melds)))
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
    _raw = action_bytes(_a)
    _SHARED_LEGAL[id(_a)] = length_prefixed(ACTION_REQUEST_LEGAL_ACTIONS, _raw)
    _SHARED_ACCEPTED[id(_a)] = length_prefixed(ACTION_ACCEPTED_ACTION, _raw)
del _a, _raw


def _past_hand(h: HandResult) -> bytes:
    """One ``Observation.past_hands`` element."""
    return length_prefixed(OBSERVATION_PAST_HANDS, hand_result_to_wire(h).SerializeToString())


class RequestEncoder:
    """Builds the ``PlayResponse`` bytes of every ActionRequest of one game."""

    def __init__(self, game_id: str, rules: RuleSet) -> None:
        self._game_id = length_prefixed(ACTION_REQUEST_GAME_ID, game_id.encode())
        self._rules = length_prefixed(OBSERVATION_RULES, rules_template(rules).SerializeToString())
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
        # Lean requests: per seat, the stream last sent one, the hand and its events then.
        self._sent: dict[int, tuple[object, int, tuple[Event, ...]]] = {}

    def observation(self, obs: Observation) -> bytes:
        """The encoding of ``chinchon.wire.observation_to_wire(obs)``."""
        parts = self._head(obs)
        events, taken, closer, past = obs[12:]
        k = len(self._events)
        if len(events) >= k and events[:k] == self._events:
            # The hand's events only grow until the next hand: extend the last encoding
            # (the tuple comparison checks identity first, so it is cheap).
            if len(events) > k:
                self._events_b += b"".join([event_bytes(e) for e in events[k:]])
        else:
            self._events_b = b"".join([event_bytes(e) for e in events])
        self._events = events
        parts.append(self._events_b)
        if taken is not None:
            parts.append(_TAKEN[taken])
        if closer:
            parts.append(_NOBODY_CLOSED if closer == -1 else OBSERVATION_CLOSER + varint(closer))
        parts.append(self._rules)
        if past is not self._past:
            self._past_b = self._past_for(past)
            self._past = past
        parts.append(self._past_b)
        return b"".join(parts)

    def lean(self, obs: Observation, stream: object) -> tuple[bytes, bytes]:
        """``(observation, delta)`` of a lean request (``Hello.observations =
        OBSERVATION_MODE_LEAN``) for ``obs``'s seat on ``stream`` (any object that stands
        for one stream: compared by identity). The first request of the game on
        ``stream`` gets the whole observation and no delta; the next ones, the
        observation without its rules, past hands and the events ``stream`` was already
        sent, and the ``ActionRequest.delta`` field that says how many events are kept
        (to pass to :meth:`request`)."""
        seat, hand_no, events = obs.seat, obs.hand_no, obs.events
        sent = self._sent.get(seat)
        self._sent[seat] = (stream, hand_no, events)
        if sent is None or sent[0] is not stream:
            return self.observation(obs), _WHOLE
        before = sent[2]
        k = len(before)
        if sent[1] != hand_no or len(events) < k or events[:k] != before:
            k = 0
        parts = self._head(obs)
        if len(events) > k:
            parts.append(b"".join([event_bytes(e) for e in events[k:]]))
        taken, closer = obs.taken_from_discard, obs.closer
        if taken is not None:
            parts.append(_TAKEN[taken])
        if closer:
            parts.append(_NOBODY_CLOSED if closer == -1 else OBSERVATION_CLOSER + varint(closer))
        return b"".join(parts), _DELTAS[k] if k < len(_DELTAS) else _delta(k)

    def _head(self, obs: Observation) -> list[bytes]:
        """The fields of the observation before ``events``."""
        (seat, _, hand_no, phase, to_act, starter, turn, hand, pile, stock_size, players,
         table, _, _, _, _) = obs
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
        t = SMALL
        parts = [
            OBSERVATION_SEAT + t[seat] if seat else b"",
            OBSERVATION_HAND_NUMBER + t[hand_no] if hand_no else b"",
            _PHASE_BYTES[phase],
            (OBSERVATION_TO_ACT + t[to_act] if to_act > 0 else _NOBODY_TO_ACT if to_act == -1
             else OBSERVATION_TO_ACT + varint(to_act) if to_act else b""),
            (OBSERVATION_STARTER + t[starter] if starter > 0 else _NOBODY_STARTS
             if starter == -1 else OBSERVATION_STARTER + varint(starter) if starter else b""),
            OBSERVATION_TURN + varint(turn) if turn else b"",
            b"".join(map(_HAND.__getitem__, hand)),
            self._pile_b,
            OBSERVATION_STOCK_SIZE + t[stock_size] if stock_size else b"",
        ]
        b = self._players.get(players)
        if b is None:
            if len(self._players) > 4096:
                self._players.clear()
            b = self._players[players] = b"".join(
                length_prefixed(OBSERVATION_PLAYERS, g.PlayerInfo(
                    seat=p.seat, name=p.name, hand_size=p.hand_size, score=p.score,
                    in_game=p.in_game).SerializeToString())
                for p in players)
        parts.append(b)
        if table:
            b = self._melds.get(table)
            if b is None:
                if len(self._melds) > 4096:
                    self._melds.clear()
                b = self._melds[table] = b"".join(
                    length_prefixed(OBSERVATION_TABLE, meld_to_wire(i, tm).SerializeToString())
                    for i, tm in enumerate(table))
            parts.append(b)
        return parts

    def _past_for(self, past: tuple[HandResult, ...]) -> bytes:
        k = len(self._past)
        if len(past) >= k and past[:k] == self._past:
            return self._past_b + b"".join(map(_past_hand, past[k:]))
        return b"".join(map(_past_hand, past))

    def action(self, a: Action) -> bytes:
        """One ``legal_actions`` element."""
        b = self._actions.get(a)
        if b is None:
            if len(self._actions) > 65536:
                self._actions.clear()
                self._accepted.clear()
            raw = action_bytes(a)
            b = self._actions[a] = length_prefixed(ACTION_REQUEST_LEGAL_ACTIONS, raw)
            self._accepted[a] = length_prefixed(ACTION_ACCEPTED_ACTION, raw)
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
        """``PlayResponse.accepted`` for ``action`` applied: to append to the
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
                took = bytes((4, _NANOS, ns & 127 | 128, ns >> 7 & 127 | 128, ns >> 14))
            else:
                took = bytes((5, _NANOS, ns & 127 | 128, ns >> 7 & 127 | 128,
                              ns >> 14 & 127 | 128, ns >> 21))
        else:
            d = duration_bytes(time_taken)
            took = SMALL[len(d)] + d
        rid = self._rid[1] if self._rid[0] == request_id else _rid_field(request_id)
        size = len(rid) + len(b) + _TIME_TAKEN_SIZE + len(took)
        return b"".join((PLAY_RESPONSE_ACCEPTED, SMALL[size], rid, b, ACTION_ACCEPTED_TIME_TAKEN,
                         took))

    def request(
        self, request_id: int, observation: bytes, legal: bytes, move_time: float,
        bank_time: float, attempt: int = 0, accepted: bytes = b"", delta: bytes = b"",
    ) -> bytes:
        """``PlayResponse{action_request}``; ``observation`` and ``legal`` from
        :meth:`observation` (or :meth:`lean`, with its ``delta``) and :meth:`legal`,
        ``accepted`` from :meth:`accepted` (the confirmation of the seat's previous
        answer, if it is still to be sent)."""
        n = len(observation)
        move = duration_bytes(move_time)
        bank = duration_bytes(bank_time)
        rid = _rid_field(request_id)
        self._rid = (request_id, rid)  # the accepted message will repeat it
        body = b"".join((
            rid,
            self._game_id,
            ACTION_REQUEST_OBSERVATION, SMALL[n] if n < SMALL_LIMIT else encode_varint(n),
            observation,
            legal,
            ACTION_REQUEST_MOVE_TIME, SMALL[len(move)], move,
            ACTION_REQUEST_BANK_TIME, SMALL[len(bank)], bank,
            ACTION_REQUEST_ATTEMPT + varint(attempt) if attempt else b"",
            delta,
        ))
        n = len(body)
        return b"".join((PLAY_RESPONSE_ACTION_REQUEST,
                         SMALL[n] if n < SMALL_LIMIT else encode_varint(n), body, accepted))


if ACTION_REQUEST_REQUEST_ID != ACTION_ACCEPTED_REQUEST_ID:
    raise ImportError("ActionRequest.request_id and ActionAccepted.request_id differ in "
                      "number or type: RequestEncoder.accepted reuses one for the other")
_NANOS = one_byte(DURATION_NANOS)  # a Duration of whole nanoseconds, written in place
_TIME_TAKEN_SIZE = len(ACTION_ACCEPTED_TIME_TAKEN)
_WHOLE = b""  # no ActionRequest.delta: the observation is whole


def _delta(kept: int) -> bytes:
    """The ``ActionRequest.delta`` field of a lean request that keeps ``kept`` events."""
    return length_prefixed(ACTION_REQUEST_DELTA,
                           OBSERVATION_DELTA_EVENTS_KEPT + varint(kept) if kept else b"")


_DELTAS = [_delta(k) for k in range(256)]


def _rid_field(request_id: int) -> bytes:
    """The request_id field of ActionRequest / ActionAccepted (the same key: checked at
    import, as one encoding serves both)."""
    if not request_id:
        return b""
    return ACTION_REQUEST_REQUEST_ID + (
        SMALL[request_id] if request_id < SMALL_LIMIT else encode_varint(request_id))


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


def remembered_answers() -> int:
    """How many answers the decoding cache holds (for tests)."""
    return len(_DECODED)


_ANSWER = one_byte(PLAY_REQUEST_ACTION)
_ANSWER_REQUEST_ID = one_byte(ACTION_REPLY_REQUEST_ID)
_ANSWER_ACTION = one_byte(ACTION_REPLY_ACTION)


def answer_fields(raw: bytes) -> tuple[int, bytes] | None:
    """``(request_id, encoded action)`` of an encoded PlayRequest that is an answer laid
    out as protobuf encoders write it (``action`` holding ``request_id`` then
    ``action``), without building any message; None for anything else (the caller
    then parses it with protobuf)."""
    try:
        if raw[0] != _ANSWER:
            return None
        n = len(raw)
        length, i = read_varint(raw, 1)
        if i + length != n or raw[i] != _ANSWER_REQUEST_ID:
            return None
        rid, i = read_varint(raw, i + 1)
        if raw[i] != _ANSWER_ACTION:
            return None
        length, j = read_varint(raw, i + 1)
        if j + length != n:
            return None
        return rid, raw[j:]
    except (IndexError, ValueError):
        return None
