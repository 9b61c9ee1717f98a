"""The fast encoder's field keys are the descriptors' and protobuf's, and the wire package
is one package whose modules share no private names.

``chinchon.wire.tags`` derives each key from the ``chinchon.v1`` descriptors at import;
here every key is checked against the descriptor's field number and type (through
protobuf's own tag encoder) and against what protobuf writes for a message with only
that field set. The list below names every key of the module, so a new key cannot go
unchecked.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import tags
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.duration_pb2 import Duration
from google.protobuf.internal import encoder, type_checkers
from google.protobuf.message import Message

ROOT = Path(__file__).resolve().parents[2]

KEYS: dict[str, tuple[type[Message], str]] = {
    "OBSERVATION_SEAT": (g.Observation, "seat"),
    "OBSERVATION_HAND_NUMBER": (g.Observation, "hand_number"),
    "OBSERVATION_PHASE": (g.Observation, "phase"),
    "OBSERVATION_TO_ACT": (g.Observation, "to_act"),
    "OBSERVATION_STARTER": (g.Observation, "starter"),
    "OBSERVATION_TURN": (g.Observation, "turn"),
    "OBSERVATION_HAND": (g.Observation, "hand"),
    "OBSERVATION_DISCARD_PILE": (g.Observation, "discard_pile"),
    "OBSERVATION_STOCK_SIZE": (g.Observation, "stock_size"),
    "OBSERVATION_PLAYERS": (g.Observation, "players"),
    "OBSERVATION_TABLE": (g.Observation, "table"),
    "OBSERVATION_TAKEN_FROM_DISCARD": (g.Observation, "taken_from_discard"),
    "OBSERVATION_CLOSER": (g.Observation, "closer"),
    "OBSERVATION_RULES": (g.Observation, "rules"),
    "OBSERVATION_PAST_HANDS": (g.Observation, "past_hands"),
    "ACTION_CLOSE": (g.Action, "close"),
    "ACTION_LAY_DOWN": (g.Action, "lay_down"),
    "CLOSE_CARD": (g.Close, "card"),
    "CLOSE_MELDS": (g.Close, "melds"),
    "LAY_DOWN_MELDS": (g.LayDown, "melds"),
    "MELD_LIST_MELDS": (g.MeldList, "melds"),
    "CARD_GROUP_CARDS": (g.CardGroup, "cards"),
    "PLAY_RESPONSE_ACTION_REQUEST": (pb.PlayResponse, "action_request"),
    "PLAY_RESPONSE_ACCEPTED": (pb.PlayResponse, "accepted"),
    "ACTION_REQUEST_REQUEST_ID": (pb.ActionRequest, "request_id"),
    "ACTION_REQUEST_GAME_ID": (pb.ActionRequest, "game_id"),
    "ACTION_REQUEST_OBSERVATION": (pb.ActionRequest, "observation"),
    "ACTION_REQUEST_LEGAL_ACTIONS": (pb.ActionRequest, "legal_actions"),
    "ACTION_REQUEST_MOVE_TIME": (pb.ActionRequest, "move_time"),
    "ACTION_REQUEST_BANK_TIME": (pb.ActionRequest, "bank_time"),
    "ACTION_REQUEST_ATTEMPT": (pb.ActionRequest, "attempt"),
    "ACTION_REQUEST_DELTA": (pb.ActionRequest, "delta"),
    "OBSERVATION_DELTA_EVENTS_KEPT": (pb.ObservationDelta, "events_kept"),
    "ACTION_ACCEPTED_REQUEST_ID": (pb.ActionAccepted, "request_id"),
    "ACTION_ACCEPTED_ACTION": (pb.ActionAccepted, "action"),
    "ACTION_ACCEPTED_TIME_TAKEN": (pb.ActionAccepted, "time_taken"),
    "DURATION_SECONDS": (Duration, "seconds"),
    "DURATION_NANOS": (Duration, "nanos"),
    "PLAY_REQUEST_ACTION": (pb.PlayRequest, "action"),
    "ACTION_REPLY_REQUEST_ID": (pb.ActionReply, "request_id"),
    "ACTION_REPLY_ACTION": (pb.ActionReply, "action"),
}


def with_only(message: type[Message], name: str) -> Message:
    """A message of ``message`` with only the field ``name`` set (to a non-default value)."""
    m = message()
    field = message.DESCRIPTOR.fields_by_name[name]
    value = getattr(m, name)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.is_repeated:
            value.add()
        else:
            value.SetInParent()
    elif field.type == FieldDescriptor.TYPE_STRING:
        if field.is_repeated:
            value.append("x")
        else:
            setattr(m, name, "x")
    else:
        setattr(m, name, 1)
    return m


def test_every_key_of_the_module_is_checked() -> None:
    in_module = {n for n, v in vars(tags).items() if n.isupper() and isinstance(v, bytes)}
    assert in_module == set(KEYS)


@pytest.mark.parametrize("name", sorted(KEYS))
def test_each_key_is_the_descriptors_field_number_and_wire_type(name: str) -> None:
    message, field_name = KEYS[name]
    field = message.DESCRIPTOR.fields_by_name[field_name]
    want = encoder.TagBytes(field.number, type_checkers.FIELD_TYPE_TO_WIRE_TYPE[field.type])
    assert getattr(tags, name) == want
    # ... and what protobuf itself writes first for a message holding only that field.
    assert with_only(message, field_name).SerializeToString().startswith(want)


def test_a_packed_field_has_no_key_per_value() -> None:
    with pytest.raises(ValueError, match="packed"):
        tags.field_key(g.HandResult, "points")


def test_one_package_no_encode_module_and_no_private_names_across_modules() -> None:
    """chinchon.wire is the one door: the old encode module is gone, and no module of the
    repository imports a ``_``-prefixed name from chinchon.wire (nor do its modules from
    one another)."""
    assert not (ROOT / "server/chinchon_referee/encode.py").exists()
    assert not (ROOT / "client_sdk/chinchon/wire.py").exists()
    offenders = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        if ".venv" in path.parts or "node_modules" in path.parts:
            continue
        tree = ast.parse(path.read_text(), str(path))
        in_wire = path.parent == ROOT / "client_sdk/chinchon/wire"
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            module = node.module or ""
            wire = module.startswith("chinchon.wire") or (in_wire and node.level > 0)
            if wire:
                offenders += [f"{path.relative_to(ROOT)}: {a.name} from {module}"
                              for a in node.names if a.name.startswith("_")]
    assert offenders == []
