import datetime

from chinchon.v1 import game_pb2 as _game_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LadderStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LADDER_STATUS_UNSPECIFIED: _ClassVar[LadderStatus]
    LADDER_STATUS_OPEN: _ClassVar[LadderStatus]
    LADDER_STATUS_PAUSED: _ClassVar[LadderStatus]
    LADDER_STATUS_CLOSED: _ClassVar[LadderStatus]
LADDER_STATUS_UNSPECIFIED: LadderStatus
LADDER_STATUS_OPEN: LadderStatus
LADDER_STATUS_PAUSED: LadderStatus
LADDER_STATUS_CLOSED: LadderStatus

class LadderInfo(_message.Message):
    __slots__ = ("id", "name", "status", "games_rated", "entrants", "k", "declaration")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAMES_RATED_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    status: LadderStatus
    games_rated: int
    entrants: int
    k: float
    declaration: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., status: _Optional[_Union[LadderStatus, str]] = ..., games_rated: _Optional[int] = ..., entrants: _Optional[int] = ..., k: _Optional[float] = ..., declaration: _Optional[str] = ...) -> None: ...

class LadderEntrant(_message.Message):
    __slots__ = ("name", "token")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class CreateLadderRequest(_message.Message):
    __slots__ = ("declaration",)
    DECLARATION_FIELD_NUMBER: _ClassVar[int]
    declaration: str
    def __init__(self, declaration: _Optional[str] = ...) -> None: ...

class CreateLadderResponse(_message.Message):
    __slots__ = ("ladder", "entrants")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    ladder: LadderInfo
    entrants: _containers.RepeatedCompositeFieldContainer[LadderEntrant]
    def __init__(self, ladder: _Optional[_Union[LadderInfo, _Mapping]] = ..., entrants: _Optional[_Iterable[_Union[LadderEntrant, _Mapping]]] = ...) -> None: ...

class ListLaddersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListLaddersResponse(_message.Message):
    __slots__ = ("ladders",)
    LADDERS_FIELD_NUMBER: _ClassVar[int]
    ladders: _containers.RepeatedCompositeFieldContainer[LadderInfo]
    def __init__(self, ladders: _Optional[_Iterable[_Union[LadderInfo, _Mapping]]] = ...) -> None: ...

class SetLadderStatusRequest(_message.Message):
    __slots__ = ("ladder_id", "status")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    status: LadderStatus
    def __init__(self, ladder_id: _Optional[str] = ..., status: _Optional[_Union[LadderStatus, str]] = ...) -> None: ...

class SetLadderStatusResponse(_message.Message):
    __slots__ = ("ladder", "changed")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    ladder: LadderInfo
    changed: bool
    def __init__(self, ladder: _Optional[_Union[LadderInfo, _Mapping]] = ..., changed: _Optional[bool] = ...) -> None: ...

class EnterLadderRequest(_message.Message):
    __slots__ = ("ladder_id", "bot", "token", "inherits")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    INHERITS_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    bot: str
    token: str
    inherits: str
    def __init__(self, ladder_id: _Optional[str] = ..., bot: _Optional[str] = ..., token: _Optional[str] = ..., inherits: _Optional[str] = ...) -> None: ...

class EnterLadderResponse(_message.Message):
    __slots__ = ("entrant",)
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    entrant: LadderEntrant
    def __init__(self, entrant: _Optional[_Union[LadderEntrant, _Mapping]] = ...) -> None: ...

class RemoveFromLadderRequest(_message.Message):
    __slots__ = ("ladder_id", "bot")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    bot: str
    def __init__(self, ladder_id: _Optional[str] = ..., bot: _Optional[str] = ...) -> None: ...

class RemoveFromLadderResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    def __init__(self, removed: _Optional[bool] = ...) -> None: ...

class ReinstateLadderBotRequest(_message.Message):
    __slots__ = ("ladder_id", "bot")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    bot: str
    def __init__(self, ladder_id: _Optional[str] = ..., bot: _Optional[str] = ...) -> None: ...

class ReinstateLadderBotResponse(_message.Message):
    __slots__ = ("row",)
    ROW_FIELD_NUMBER: _ClassVar[int]
    row: LeaderboardRow
    def __init__(self, row: _Optional[_Union[LeaderboardRow, _Mapping]] = ...) -> None: ...

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("ladder_id",)
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    def __init__(self, ladder_id: _Optional[str] = ...) -> None: ...

class LeaderboardRow(_message.Message):
    __slots__ = ("rank", "bot", "mu", "sigma", "score", "low", "high", "games", "wins", "last_game", "connected", "idle_streams", "trend", "suspended", "suspension", "time_forfeits_in_a_row", "last_time_forfeit", "suspended_since")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    LAST_GAME_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    IDLE_STREAMS_FIELD_NUMBER: _ClassVar[int]
    TREND_FIELD_NUMBER: _ClassVar[int]
    SUSPENDED_FIELD_NUMBER: _ClassVar[int]
    SUSPENSION_FIELD_NUMBER: _ClassVar[int]
    TIME_FORFEITS_IN_A_ROW_FIELD_NUMBER: _ClassVar[int]
    LAST_TIME_FORFEIT_FIELD_NUMBER: _ClassVar[int]
    SUSPENDED_SINCE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    mu: float
    sigma: float
    score: float
    low: float
    high: float
    games: int
    wins: float
    last_game: _timestamp_pb2.Timestamp
    connected: bool
    idle_streams: int
    trend: float
    suspended: bool
    suspension: str
    time_forfeits_in_a_row: int
    last_time_forfeit: _timestamp_pb2.Timestamp
    suspended_since: _timestamp_pb2.Timestamp
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., score: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[float] = ..., last_game: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., connected: _Optional[bool] = ..., idle_streams: _Optional[int] = ..., trend: _Optional[float] = ..., suspended: _Optional[bool] = ..., suspension: _Optional[str] = ..., time_forfeits_in_a_row: _Optional[int] = ..., last_time_forfeit: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., suspended_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetLeaderboardResponse(_message.Message):
    __slots__ = ("ladder", "rows")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    ladder: LadderInfo
    rows: _containers.RepeatedCompositeFieldContainer[LeaderboardRow]
    def __init__(self, ladder: _Optional[_Union[LadderInfo, _Mapping]] = ..., rows: _Optional[_Iterable[_Union[LeaderboardRow, _Mapping]]] = ...) -> None: ...

class GetLadderBotRequest(_message.Message):
    __slots__ = ("ladder_id", "bot", "limit")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    bot: str
    limit: int
    def __init__(self, ladder_id: _Optional[str] = ..., bot: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class LadderGame(_message.Message):
    __slots__ = ("game_id", "players", "rated", "finished", "place", "mu", "sigma", "result", "timeouts", "illegal")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    players: _containers.RepeatedScalarFieldContainer[str]
    rated: int
    finished: _timestamp_pb2.Timestamp
    place: int
    mu: float
    sigma: float
    result: _game_pb2.GameResult
    timeouts: int
    illegal: int
    def __init__(self, game_id: _Optional[str] = ..., players: _Optional[_Iterable[str]] = ..., rated: _Optional[int] = ..., finished: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., place: _Optional[int] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., timeouts: _Optional[int] = ..., illegal: _Optional[int] = ...) -> None: ...

class GetLadderBotResponse(_message.Message):
    __slots__ = ("row", "games", "forfeits", "median_answer_seconds")
    ROW_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    MEDIAN_ANSWER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    row: LeaderboardRow
    games: _containers.RepeatedCompositeFieldContainer[LadderGame]
    forfeits: int
    median_answer_seconds: float
    def __init__(self, row: _Optional[_Union[LeaderboardRow, _Mapping]] = ..., games: _Optional[_Iterable[_Union[LadderGame, _Mapping]]] = ..., forfeits: _Optional[int] = ..., median_answer_seconds: _Optional[float] = ...) -> None: ...

class ExportLadderRequest(_message.Message):
    __slots__ = ("ladder_id", "snapshot_every", "records")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_EVERY_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    snapshot_every: int
    records: bool
    def __init__(self, ladder_id: _Optional[str] = ..., snapshot_every: _Optional[int] = ..., records: _Optional[bool] = ...) -> None: ...

class LadderGameExport(_message.Message):
    __slots__ = ("game_id", "players", "rated", "finished", "places", "mu", "sigma", "result", "record_json")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    players: _containers.RepeatedScalarFieldContainer[str]
    rated: int
    finished: _timestamp_pb2.Timestamp
    places: _containers.RepeatedScalarFieldContainer[int]
    mu: _containers.RepeatedScalarFieldContainer[float]
    sigma: _containers.RepeatedScalarFieldContainer[float]
    result: _game_pb2.GameResult
    record_json: str
    def __init__(self, game_id: _Optional[str] = ..., players: _Optional[_Iterable[str]] = ..., rated: _Optional[int] = ..., finished: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., places: _Optional[_Iterable[int]] = ..., mu: _Optional[_Iterable[float]] = ..., sigma: _Optional[_Iterable[float]] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., record_json: _Optional[str] = ...) -> None: ...

class LadderSnapshot(_message.Message):
    __slots__ = ("games", "finished", "rows")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    games: int
    finished: _timestamp_pb2.Timestamp
    rows: _containers.RepeatedCompositeFieldContainer[LeaderboardRow]
    def __init__(self, games: _Optional[int] = ..., finished: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rows: _Optional[_Iterable[_Union[LeaderboardRow, _Mapping]]] = ...) -> None: ...

class ExportLadderResponse(_message.Message):
    __slots__ = ("game", "snapshot")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    game: LadderGameExport
    snapshot: LadderSnapshot
    def __init__(self, game: _Optional[_Union[LadderGameExport, _Mapping]] = ..., snapshot: _Optional[_Union[LadderSnapshot, _Mapping]] = ...) -> None: ...
