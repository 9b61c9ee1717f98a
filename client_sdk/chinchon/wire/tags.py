"""The keys (field number and wire type) of the fields the fast encoder writes and reads.

Each key is derived from the message descriptors of ``chinchon.v1`` (and of
``google.protobuf.Duration``), once, at import: a field renumbered or retyped in the
protos changes the bytes here, never silently the encoder. ``tests/wire/test_encode.py``
checks every key against the descriptors and against protobuf's own serialization.
"""

from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor as F
from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import Message

from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb

from .varint import key

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5

#: The wire type protobuf writes one value of a field of each type with.
WIRE_TYPES = {
    **dict.fromkeys((F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_SINT32,
                     F.TYPE_SINT64, F.TYPE_BOOL, F.TYPE_ENUM), VARINT),
    **dict.fromkeys((F.TYPE_FIXED64, F.TYPE_SFIXED64, F.TYPE_DOUBLE), FIXED64),
    **dict.fromkeys((F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_MESSAGE), LENGTH_DELIMITED),
    **dict.fromkeys((F.TYPE_FIXED32, F.TYPE_SFIXED32, F.TYPE_FLOAT), FIXED32),
}


def field_key(message: type[Message], name: str) -> bytes:
    """The key protobuf writes before a value of ``message``'s field ``name`` (a packed
    repeated scalar, written as one length-delimited field, has no key per value)."""
    field = message.DESCRIPTOR.fields_by_name[name]
    if field.is_packed:
        raise ValueError(f"{field.full_name}: a repeated scalar is packed; no key per value")
    return key(field.number, WIRE_TYPES[field.type])


def one_byte(k: bytes) -> int:
    """A key that fits in one byte, as that byte (to compare with ``buf[i]``)."""
    if len(k) != 1:
        raise ValueError(f"the key {k!r} takes {len(k)} bytes, not one")
    return k[0]


# chinchon.v1.Observation
OBSERVATION_SEAT = field_key(g.Observation, "seat")
OBSERVATION_HAND_NUMBER = field_key(g.Observation, "hand_number")
OBSERVATION_PHASE = field_key(g.Observation, "phase")
OBSERVATION_TO_ACT = field_key(g.Observation, "to_act")
OBSERVATION_STARTER = field_key(g.Observation, "starter")
OBSERVATION_TURN = field_key(g.Observation, "turn")
OBSERVATION_HAND = field_key(g.Observation, "hand")
OBSERVATION_DISCARD_PILE = field_key(g.Observation, "discard_pile")
OBSERVATION_STOCK_SIZE = field_key(g.Observation, "stock_size")
OBSERVATION_PLAYERS = field_key(g.Observation, "players")
OBSERVATION_TABLE = field_key(g.Observation, "table")
OBSERVATION_TAKEN_FROM_DISCARD = field_key(g.Observation, "taken_from_discard")
OBSERVATION_CLOSER = field_key(g.Observation, "closer")
OBSERVATION_RULES = field_key(g.Observation, "rules")
OBSERVATION_PAST_HANDS = field_key(g.Observation, "past_hands")

# Actions that name their melds: chinchon.v1.Action{close, lay_down} and their parts
ACTION_CLOSE = field_key(g.Action, "close")
ACTION_LAY_DOWN = field_key(g.Action, "lay_down")
CLOSE_CARD = field_key(g.Close, "card")
CLOSE_MELDS = field_key(g.Close, "melds")
LAY_DOWN_MELDS = field_key(g.LayDown, "melds")
MELD_LIST_MELDS = field_key(g.MeldList, "melds")
CARD_GROUP_CARDS = field_key(g.CardGroup, "cards")

# chinchon.v1.PlayResponse{action_request, accepted}
PLAY_RESPONSE_ACTION_REQUEST = field_key(pb.PlayResponse, "action_request")
PLAY_RESPONSE_ACCEPTED = field_key(pb.PlayResponse, "accepted")
ACTION_REQUEST_REQUEST_ID = field_key(pb.ActionRequest, "request_id")
ACTION_REQUEST_GAME_ID = field_key(pb.ActionRequest, "game_id")
ACTION_REQUEST_OBSERVATION = field_key(pb.ActionRequest, "observation")
ACTION_REQUEST_LEGAL_ACTIONS = field_key(pb.ActionRequest, "legal_actions")
ACTION_REQUEST_MOVE_TIME = field_key(pb.ActionRequest, "move_time")
ACTION_REQUEST_BANK_TIME = field_key(pb.ActionRequest, "bank_time")
ACTION_REQUEST_ATTEMPT = field_key(pb.ActionRequest, "attempt")
ACTION_REQUEST_DELTA = field_key(pb.ActionRequest, "delta")
OBSERVATION_DELTA_EVENTS_KEPT = field_key(pb.ObservationDelta, "events_kept")
ACTION_ACCEPTED_REQUEST_ID = field_key(pb.ActionAccepted, "request_id")
ACTION_ACCEPTED_ACTION = field_key(pb.ActionAccepted, "action")
ACTION_ACCEPTED_TIME_TAKEN = field_key(pb.ActionAccepted, "time_taken")

# google.protobuf.Duration
DURATION_SECONDS = field_key(Duration, "seconds")
DURATION_NANOS = field_key(Duration, "nanos")

# chinchon.v1.PlayRequest{action}: a bot's answer
PLAY_REQUEST_ACTION = field_key(pb.PlayRequest, "action")
ACTION_REPLY_REQUEST_ID = field_key(pb.ActionReply, "request_id")
ACTION_REPLY_ACTION = field_key(pb.ActionReply, "action")
