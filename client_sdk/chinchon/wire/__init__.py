"""The wire: ``chinchon.v1`` protobuf messages to and from the engine's types.

Two doors, side by side:

* :mod:`chinchon.wire.convert`, the readable conversion (engine <-> protobuf messages),
  used by the SDK, the tests and wherever the referee builds a message;
* :mod:`chinchon.wire.lean`, the bot's side of lean requests: the whole observation
  rebuilt from the last one and what is new;
* :mod:`chinchon.wire.results`, a game's outcome and record: the engine's ``Outcome``
  as a ``GameResult``, and a record document as a ``GameRecord``;
* :mod:`chinchon.wire.fast`, the referee's hot path: ActionRequests written as bytes from
  cached pieces, and a bot's answer read without building a message. Its encodings equal
  protobuf's for what ``convert`` builds, and its field keys come from the descriptors
  (:mod:`chinchon.wire.tags`); :mod:`chinchon.wire.varint` holds the varint helpers.
"""

from .convert import (
    action_from_wire,
    action_to_wire,
    duration,
    event_from_wire,
    hand_result_from_wire,
    hand_result_to_wire,
    observation_from_wire,
    observation_to_wire,
    rules_from_wire,
    rules_to_wire,
    seconds_of,
)
from .fast import (
    MAX_REMEMBERED,
    MAX_REMEMBERED_BYTES,
    RequestEncoder,
    action_bytes,
    answer_fields,
    decode_action,
    duration_bytes,
    remembered_answers,
    remembered_bytes,
)
from .lean import LeanDecoder
from .results import (
    duration_json,
    outcome_from_wire,
    outcome_to_wire,
    record_from_json,
    terms_json,
)
from .varint import delimited, key, read_varint, varint

__all__ = [
    "MAX_REMEMBERED",
    "MAX_REMEMBERED_BYTES",
    "LeanDecoder",
    "RequestEncoder",
    "action_bytes",
    "action_from_wire",
    "action_to_wire",
    "answer_fields",
    "decode_action",
    "delimited",
    "duration",
    "duration_bytes",
    "duration_json",
    "event_from_wire",
    "hand_result_from_wire",
    "hand_result_to_wire",
    "key",
    "observation_from_wire",
    "observation_to_wire",
    "outcome_from_wire",
    "outcome_to_wire",
    "read_varint",
    "record_from_json",
    "remembered_answers",
    "remembered_bytes",
    "rules_from_wire",
    "rules_to_wire",
    "seconds_of",
    "terms_json",
    "varint",
]
