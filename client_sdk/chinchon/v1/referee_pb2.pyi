import datetime

from chinchon.v1 import game_pb2 as _game_pb2
from chinchon.v1 import record_pb2 as _record_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ObservationMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OBSERVATION_MODE_UNSPECIFIED: _ClassVar[ObservationMode]
    OBSERVATION_MODE_FULL: _ClassVar[ObservationMode]
    OBSERVATION_MODE_LEAN: _ClassVar[ObservationMode]

class DefaultReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEFAULT_REASON_UNSPECIFIED: _ClassVar[DefaultReason]
    DEFAULT_REASON_TIMEOUT: _ClassVar[DefaultReason]
    DEFAULT_REASON_ILLEGAL: _ClassVar[DefaultReason]

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_CODE_UNSPECIFIED: _ClassVar[ErrorCode]
    ERROR_CODE_MALFORMED: _ClassVar[ErrorCode]
    ERROR_CODE_ILLEGAL_ACTION: _ClassVar[ErrorCode]
    ERROR_CODE_STALE_REQUEST: _ClassVar[ErrorCode]
    ERROR_CODE_UNSOLICITED: _ClassVar[ErrorCode]
    ERROR_CODE_PROTOCOL: _ClassVar[ErrorCode]
    ERROR_CODE_BAD_REQUEST: _ClassVar[ErrorCode]

class DismissReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DISMISS_REASON_UNSPECIFIED: _ClassVar[DismissReason]
    DISMISS_REASON_GAMES_PLAYED: _ClassVar[DismissReason]
    DISMISS_REASON_TOURNAMENT_CANCELLED: _ClassVar[DismissReason]
OBSERVATION_MODE_UNSPECIFIED: ObservationMode
OBSERVATION_MODE_FULL: ObservationMode
OBSERVATION_MODE_LEAN: ObservationMode
DEFAULT_REASON_UNSPECIFIED: DefaultReason
DEFAULT_REASON_TIMEOUT: DefaultReason
DEFAULT_REASON_ILLEGAL: DefaultReason
ERROR_CODE_UNSPECIFIED: ErrorCode
ERROR_CODE_MALFORMED: ErrorCode
ERROR_CODE_ILLEGAL_ACTION: ErrorCode
ERROR_CODE_STALE_REQUEST: ErrorCode
ERROR_CODE_UNSOLICITED: ErrorCode
ERROR_CODE_PROTOCOL: ErrorCode
ERROR_CODE_BAD_REQUEST: ErrorCode
DISMISS_REASON_UNSPECIFIED: DismissReason
DISMISS_REASON_GAMES_PLAYED: DismissReason
DISMISS_REASON_TOURNAMENT_CANCELLED: DismissReason

class PlayRequest(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("client", "queue", "practice", "observations")
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PRACTICE_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    client: str
    queue: QueueMode
    practice: PracticeRequest
    observations: ObservationMode
    def __init__(self, client: _Optional[str] = ..., queue: _Optional[_Union[QueueMode, _Mapping]] = ..., practice: _Optional[_Union[PracticeRequest, _Mapping]] = ..., observations: _Optional[_Union[ObservationMode, str]] = ...) -> None: ...

class QueueMode(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PracticeRequest(_message.Message):
    __slots__ = ("opponent", "games", "rules", "time_control", "seed", "wait")
    OPPONENT_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    opponent: str
    games: int
    rules: _game_pb2.RuleSet
    time_control: _game_pb2.TimeControl
    seed: str
    wait: _duration_pb2.Duration
    def __init__(self, opponent: _Optional[str] = ..., games: _Optional[int] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., seed: _Optional[str] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("request_id", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: _game_pb2.Action
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("welcome", "game_started", "action_request", "action_rejected", "default_played", "hand_ended", "game_ended", "error", "dismissed", "accepted")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    GAME_STARTED_FIELD_NUMBER: _ClassVar[int]
    ACTION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    ACTION_REJECTED_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_PLAYED_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DISMISSED_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    game_started: GameStarted
    action_request: ActionRequest
    action_rejected: ActionRejected
    default_played: DefaultPlayed
    hand_ended: HandEnded
    game_ended: GameEnded
    error: Error
    dismissed: Dismissed
    accepted: ActionAccepted
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., game_started: _Optional[_Union[GameStarted, _Mapping]] = ..., action_request: _Optional[_Union[ActionRequest, _Mapping]] = ..., action_rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., default_played: _Optional[_Union[DefaultPlayed, _Mapping]] = ..., hand_ended: _Optional[_Union[HandEnded, _Mapping]] = ..., game_ended: _Optional[_Union[GameEnded, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., dismissed: _Optional[_Union[Dismissed, _Mapping]] = ..., accepted: _Optional[_Union[ActionAccepted, _Mapping]] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("max_message_bytes", "max_unsolicited_messages", "max_illegal_retries", "max_strikes", "reconnect_grace")
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_UNSOLICITED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MAX_ILLEGAL_RETRIES_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_FIELD_NUMBER: _ClassVar[int]
    max_message_bytes: int
    max_unsolicited_messages: int
    max_illegal_retries: int
    max_strikes: int
    reconnect_grace: _duration_pb2.Duration
    def __init__(self, max_message_bytes: _Optional[int] = ..., max_unsolicited_messages: _Optional[int] = ..., max_illegal_retries: _Optional[int] = ..., max_strikes: _Optional[int] = ..., reconnect_grace: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_name", "server_version", "protocol", "limits")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    server_version: str
    protocol: str
    limits: Limits
    def __init__(self, bot_name: _Optional[str] = ..., server_version: _Optional[str] = ..., protocol: _Optional[str] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("game_id", "seat", "players", "rules", "time_control", "tournament_id", "resumed")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    players: _containers.RepeatedScalarFieldContainer[str]
    rules: _game_pb2.RuleSet
    time_control: _game_pb2.TimeControl
    tournament_id: str
    resumed: bool
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., tournament_id: _Optional[str] = ..., resumed: _Optional[bool] = ...) -> None: ...

class ActionRequest(_message.Message):
    __slots__ = ("request_id", "game_id", "observation", "legal_actions", "move_time", "bank_time", "attempt", "delta")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_FIELD_NUMBER: _ClassVar[int]
    BANK_TIME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    game_id: str
    observation: _game_pb2.Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[_game_pb2.Action]
    move_time: _duration_pb2.Duration
    bank_time: _duration_pb2.Duration
    attempt: int
    delta: ObservationDelta
    def __init__(self, request_id: _Optional[int] = ..., game_id: _Optional[str] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[_game_pb2.Action, _Mapping]]] = ..., move_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., bank_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., attempt: _Optional[int] = ..., delta: _Optional[_Union[ObservationDelta, _Mapping]] = ...) -> None: ...

class ObservationDelta(_message.Message):
    __slots__ = ("events_kept",)
    EVENTS_KEPT_FIELD_NUMBER: _ClassVar[int]
    events_kept: int
    def __init__(self, events_kept: _Optional[int] = ...) -> None: ...

class ActionAccepted(_message.Message):
    __slots__ = ("request_id", "action", "time_taken")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    TIME_TAKEN_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: _game_pb2.Action
    time_taken: _duration_pb2.Duration
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., time_taken: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("request_id", "error", "retries_left")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RETRIES_LEFT_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    error: Error
    retries_left: int
    def __init__(self, request_id: _Optional[int] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., retries_left: _Optional[int] = ...) -> None: ...

class DefaultPlayed(_message.Message):
    __slots__ = ("request_id", "action", "reason", "strikes", "max_strikes", "time_taken")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    TIME_TAKEN_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: _game_pb2.Action
    reason: DefaultReason
    strikes: int
    max_strikes: int
    time_taken: _duration_pb2.Duration
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., reason: _Optional[_Union[DefaultReason, str]] = ..., strikes: _Optional[int] = ..., max_strikes: _Optional[int] = ..., time_taken: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class HandEnded(_message.Message):
    __slots__ = ("game_id", "result")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    result: _game_pb2.HandResult
    def __init__(self, game_id: _Optional[str] = ..., result: _Optional[_Union[_game_pb2.HandResult, _Mapping]] = ...) -> None: ...

class GameEnded(_message.Message):
    __slots__ = ("game_id", "result", "seat", "record")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    result: _game_pb2.GameResult
    seat: int
    record: _record_pb2.GameRecord
    def __init__(self, game_id: _Optional[str] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., seat: _Optional[int] = ..., record: _Optional[_Union[_record_pb2.GameRecord, _Mapping]] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("code", "violation", "message", "request_id")
    CODE_FIELD_NUMBER: _ClassVar[int]
    VIOLATION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    code: ErrorCode
    violation: str
    message: str
    request_id: int
    def __init__(self, code: _Optional[_Union[ErrorCode, str]] = ..., violation: _Optional[str] = ..., message: _Optional[str] = ..., request_id: _Optional[int] = ...) -> None: ...

class Dismissed(_message.Message):
    __slots__ = ("reason", "tournament_id", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: DismissReason
    tournament_id: str
    message: str
    def __init__(self, reason: _Optional[_Union[DismissReason, str]] = ..., tournament_id: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...
