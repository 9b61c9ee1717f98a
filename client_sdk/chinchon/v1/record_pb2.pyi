import datetime

from chinchon.v1 import game_pb2 as _game_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ActionOrigin(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_ORIGIN_UNSPECIFIED: _ClassVar[ActionOrigin]
    ACTION_ORIGIN_PLAYER: _ClassVar[ActionOrigin]
    ACTION_ORIGIN_DEFAULT_TIMEOUT: _ClassVar[ActionOrigin]
    ACTION_ORIGIN_DEFAULT_ILLEGAL: _ClassVar[ActionOrigin]

class SeatIncidentKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEAT_INCIDENT_KIND_UNSPECIFIED: _ClassVar[SeatIncidentKind]
    SEAT_INCIDENT_KIND_MALFORMED: _ClassVar[SeatIncidentKind]
    SEAT_INCIDENT_KIND_ILLEGAL: _ClassVar[SeatIncidentKind]
    SEAT_INCIDENT_KIND_TIMEOUT: _ClassVar[SeatIncidentKind]
    SEAT_INCIDENT_KIND_DEFAULT: _ClassVar[SeatIncidentKind]
ACTION_ORIGIN_UNSPECIFIED: ActionOrigin
ACTION_ORIGIN_PLAYER: ActionOrigin
ACTION_ORIGIN_DEFAULT_TIMEOUT: ActionOrigin
ACTION_ORIGIN_DEFAULT_ILLEGAL: ActionOrigin
SEAT_INCIDENT_KIND_UNSPECIFIED: SeatIncidentKind
SEAT_INCIDENT_KIND_MALFORMED: SeatIncidentKind
SEAT_INCIDENT_KIND_ILLEGAL: SeatIncidentKind
SEAT_INCIDENT_KIND_TIMEOUT: SeatIncidentKind
SEAT_INCIDENT_KIND_DEFAULT: SeatIncidentKind

class PlayerMove(_message.Message):
    __slots__ = ("seat", "action", "origin", "think_time", "resolved")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    THINK_TIME_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: _game_pb2.Action
    origin: ActionOrigin
    think_time: _duration_pb2.Duration
    resolved: _containers.RepeatedCompositeFieldContainer[_game_pb2.Action]
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., origin: _Optional[_Union[ActionOrigin, str]] = ..., think_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., resolved: _Optional[_Iterable[_Union[_game_pb2.Action, _Mapping]]] = ...) -> None: ...

class RecordedAction(_message.Message):
    __slots__ = ("deal", "reshuffle", "move")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    RESHUFFLE_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    deal: _game_pb2.Deal
    reshuffle: _game_pb2.Reshuffle
    move: PlayerMove
    def __init__(self, deal: _Optional[_Union[_game_pb2.Deal, _Mapping]] = ..., reshuffle: _Optional[_Union[_game_pb2.Reshuffle, _Mapping]] = ..., move: _Optional[_Union[PlayerMove, _Mapping]] = ...) -> None: ...

class Seat(_message.Message):
    __slots__ = ("seat", "name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...

class GameRecord(_message.Message):
    __slots__ = ("format", "game_id", "rules", "seats", "actions", "hands", "result", "labels", "time_control", "policies", "incidents")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    POLICIES_FIELD_NUMBER: _ClassVar[int]
    INCIDENTS_FIELD_NUMBER: _ClassVar[int]
    format: str
    game_id: str
    rules: _game_pb2.RuleSet
    seats: _containers.RepeatedCompositeFieldContainer[Seat]
    actions: _containers.RepeatedCompositeFieldContainer[RecordedAction]
    hands: _containers.RepeatedCompositeFieldContainer[_game_pb2.HandResult]
    result: _game_pb2.GameResult
    labels: _containers.ScalarMap[str, str]
    time_control: _game_pb2.TimeControl
    policies: _game_pb2.Policies
    incidents: _containers.RepeatedCompositeFieldContainer[SeatIncident]
    def __init__(self, format: _Optional[str] = ..., game_id: _Optional[str] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[Seat, _Mapping]]] = ..., actions: _Optional[_Iterable[_Union[RecordedAction, _Mapping]]] = ..., hands: _Optional[_Iterable[_Union[_game_pb2.HandResult, _Mapping]]] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., policies: _Optional[_Union[_game_pb2.Policies, _Mapping]] = ..., incidents: _Optional[_Iterable[_Union[SeatIncident, _Mapping]]] = ...) -> None: ...

class SeatIncident(_message.Message):
    __slots__ = ("step", "seat", "kind", "request_id", "attempt", "sent", "violation", "message", "strikes", "max_strikes", "waited")
    STEP_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    SENT_FIELD_NUMBER: _ClassVar[int]
    VIOLATION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    WAITED_FIELD_NUMBER: _ClassVar[int]
    step: int
    seat: int
    kind: SeatIncidentKind
    request_id: int
    attempt: int
    sent: str
    violation: str
    message: str
    strikes: int
    max_strikes: int
    waited: _duration_pb2.Duration
    def __init__(self, step: _Optional[int] = ..., seat: _Optional[int] = ..., kind: _Optional[_Union[SeatIncidentKind, str]] = ..., request_id: _Optional[int] = ..., attempt: _Optional[int] = ..., sent: _Optional[str] = ..., violation: _Optional[str] = ..., message: _Optional[str] = ..., strikes: _Optional[int] = ..., max_strikes: _Optional[int] = ..., waited: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...
