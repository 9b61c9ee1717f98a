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

class TournamentStart(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_START_UNSPECIFIED: _ClassVar[TournamentStart]
    TOURNAMENT_START_MANUAL: _ClassVar[TournamentStart]
    TOURNAMENT_START_WHEN_CONNECTED: _ClassVar[TournamentStart]
    TOURNAMENT_START_NOW: _ClassVar[TournamentStart]

class TournamentStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_STATUS_UNSPECIFIED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_SCHEDULED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_RUNNING: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_FINISHED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_CANCELLED: _ClassVar[TournamentStatus]

class GameStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_STATUS_UNSPECIFIED: _ClassVar[GameStatus]
    GAME_STATUS_SCHEDULED: _ClassVar[GameStatus]
    GAME_STATUS_RUNNING: _ClassVar[GameStatus]
    GAME_STATUS_FINISHED: _ClassVar[GameStatus]
TOURNAMENT_START_UNSPECIFIED: TournamentStart
TOURNAMENT_START_MANUAL: TournamentStart
TOURNAMENT_START_WHEN_CONNECTED: TournamentStart
TOURNAMENT_START_NOW: TournamentStart
TOURNAMENT_STATUS_UNSPECIFIED: TournamentStatus
TOURNAMENT_STATUS_SCHEDULED: TournamentStatus
TOURNAMENT_STATUS_RUNNING: TournamentStatus
TOURNAMENT_STATUS_FINISHED: TournamentStatus
TOURNAMENT_STATUS_CANCELLED: TournamentStatus
GAME_STATUS_UNSPECIFIED: GameStatus
GAME_STATUS_SCHEDULED: GameStatus
GAME_STATUS_RUNNING: GameStatus
GAME_STATUS_FINISHED: GameStatus

class Participant(_message.Message):
    __slots__ = ("name", "token", "command", "instances")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    command: _containers.RepeatedScalarFieldContainer[str]
    instances: int
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ..., command: _Optional[_Iterable[str]] = ..., instances: _Optional[int] = ...) -> None: ...

class TournamentSpec(_message.Message):
    __slots__ = ("name", "participants", "rules", "time_control", "policies", "table_size", "games_per_pairing", "duplicate_deals", "start_time", "start_when_connected", "concurrency", "seed", "start")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    POLICIES_FIELD_NUMBER: _ClassVar[int]
    TABLE_SIZE_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_PAIRING_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_DEALS_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    START_WHEN_CONNECTED_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    name: str
    participants: _containers.RepeatedCompositeFieldContainer[Participant]
    rules: _game_pb2.RuleSet
    time_control: _game_pb2.TimeControl
    policies: _game_pb2.Policies
    table_size: int
    games_per_pairing: int
    duplicate_deals: bool
    start_time: _timestamp_pb2.Timestamp
    start_when_connected: bool
    concurrency: int
    seed: str
    start: TournamentStart
    def __init__(self, name: _Optional[str] = ..., participants: _Optional[_Iterable[_Union[Participant, _Mapping]]] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., policies: _Optional[_Union[_game_pb2.Policies, _Mapping]] = ..., table_size: _Optional[int] = ..., games_per_pairing: _Optional[int] = ..., duplicate_deals: _Optional[bool] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., start_when_connected: _Optional[bool] = ..., concurrency: _Optional[int] = ..., seed: _Optional[str] = ..., start: _Optional[_Union[TournamentStart, str]] = ...) -> None: ...

class TournamentInfo(_message.Message):
    __slots__ = ("id", "name", "status", "games_total", "games_done")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAMES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    GAMES_DONE_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    status: TournamentStatus
    games_total: int
    games_done: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., status: _Optional[_Union[TournamentStatus, str]] = ..., games_total: _Optional[int] = ..., games_done: _Optional[int] = ...) -> None: ...

class CreateTournamentRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: TournamentSpec
    def __init__(self, spec: _Optional[_Union[TournamentSpec, _Mapping]] = ...) -> None: ...

class CreateTournamentResponse(_message.Message):
    __slots__ = ("tournament", "participants")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentInfo
    participants: _containers.RepeatedCompositeFieldContainer[Participant]
    def __init__(self, tournament: _Optional[_Union[TournamentInfo, _Mapping]] = ..., participants: _Optional[_Iterable[_Union[Participant, _Mapping]]] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments",)
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[TournamentInfo]
    def __init__(self, tournaments: _Optional[_Iterable[_Union[TournamentInfo, _Mapping]]] = ...) -> None: ...

class StartTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class StartTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentInfo
    def __init__(self, tournament: _Optional[_Union[TournamentInfo, _Mapping]] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class CancelTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentInfo
    def __init__(self, tournament: _Optional[_Union[TournamentInfo, _Mapping]] = ...) -> None: ...

class StandingRow(_message.Message):
    __slots__ = ("rank", "bot", "match_points", "games", "wins", "draws", "losses", "hands_won", "chinchones", "avg_points_per_hand", "forfeits", "timeouts", "illegal_actions", "rating", "rating_low", "rating_high", "p_better_than_next")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    MATCH_POINTS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    LOSSES_FIELD_NUMBER: _ClassVar[int]
    HANDS_WON_FIELD_NUMBER: _ClassVar[int]
    CHINCHONES_FIELD_NUMBER: _ClassVar[int]
    AVG_POINTS_PER_HAND_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    RATING_LOW_FIELD_NUMBER: _ClassVar[int]
    RATING_HIGH_FIELD_NUMBER: _ClassVar[int]
    P_BETTER_THAN_NEXT_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    match_points: float
    games: int
    wins: int
    draws: int
    losses: int
    hands_won: int
    chinchones: int
    avg_points_per_hand: float
    forfeits: int
    timeouts: int
    illegal_actions: int
    rating: float
    rating_low: float
    rating_high: float
    p_better_than_next: float
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., match_points: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ..., draws: _Optional[int] = ..., losses: _Optional[int] = ..., hands_won: _Optional[int] = ..., chinchones: _Optional[int] = ..., avg_points_per_hand: _Optional[float] = ..., forfeits: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal_actions: _Optional[int] = ..., rating: _Optional[float] = ..., rating_low: _Optional[float] = ..., rating_high: _Optional[float] = ..., p_better_than_next: _Optional[float] = ...) -> None: ...

class HeadToHead(_message.Message):
    __slots__ = ("bot", "opponent", "score", "games")
    BOT_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    bot: str
    opponent: str
    score: float
    games: int
    def __init__(self, bot: _Optional[str] = ..., opponent: _Optional[str] = ..., score: _Optional[float] = ..., games: _Optional[int] = ...) -> None: ...

class GetStandingsRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class GetStandingsResponse(_message.Message):
    __slots__ = ("tournament", "rows", "head_to_head", "duplicate_variance_reduction", "standings_json")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    HEAD_TO_HEAD_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_VARIANCE_REDUCTION_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentInfo
    rows: _containers.RepeatedCompositeFieldContainer[StandingRow]
    head_to_head: _containers.RepeatedCompositeFieldContainer[HeadToHead]
    duplicate_variance_reduction: float
    standings_json: str
    def __init__(self, tournament: _Optional[_Union[TournamentInfo, _Mapping]] = ..., rows: _Optional[_Iterable[_Union[StandingRow, _Mapping]]] = ..., head_to_head: _Optional[_Iterable[_Union[HeadToHead, _Mapping]]] = ..., duplicate_variance_reduction: _Optional[float] = ..., standings_json: _Optional[str] = ...) -> None: ...

class WatchTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class WatchTournamentResponse(_message.Message):
    __slots__ = ("time", "tournament", "game_id", "result", "message")
    TIME_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    tournament: TournamentInfo
    game_id: str
    result: _game_pb2.GameResult
    message: str
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., tournament: _Optional[_Union[TournamentInfo, _Mapping]] = ..., game_id: _Optional[str] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., message: _Optional[str] = ...) -> None: ...

class ExportResultsRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class ExportResultsResponse(_message.Message):
    __slots__ = ("standings_json", "standings_csv", "records_json", "report_markdown")
    STANDINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_CSV_FIELD_NUMBER: _ClassVar[int]
    RECORDS_JSON_FIELD_NUMBER: _ClassVar[int]
    REPORT_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    standings_json: str
    standings_csv: str
    records_json: _containers.RepeatedScalarFieldContainer[str]
    report_markdown: str
    def __init__(self, standings_json: _Optional[str] = ..., standings_csv: _Optional[str] = ..., records_json: _Optional[_Iterable[str]] = ..., report_markdown: _Optional[str] = ...) -> None: ...

class GameSummary(_message.Message):
    __slots__ = ("game_id", "seq", "players", "status", "voided", "result")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VOIDED_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seq: int
    players: _containers.RepeatedScalarFieldContainer[str]
    status: GameStatus
    voided: int
    result: _game_pb2.GameResult
    def __init__(self, game_id: _Optional[str] = ..., seq: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., status: _Optional[_Union[GameStatus, str]] = ..., voided: _Optional[int] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ("tournament_id", "page_size", "page_token", "status", "bot", "termination", "winner")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    page_size: int
    page_token: str
    status: GameStatus
    bot: str
    termination: _game_pb2.Termination
    winner: str
    def __init__(self, tournament_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., status: _Optional[_Union[GameStatus, str]] = ..., bot: _Optional[str] = ..., termination: _Optional[_Union[_game_pb2.Termination, str]] = ..., winner: _Optional[str] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games", "next_page_token")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameSummary]
    next_page_token: str
    def __init__(self, games: _Optional[_Iterable[_Union[GameSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetGameRecordRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class GetGameRecordResponse(_message.Message):
    __slots__ = ("game", "record_json")
    GAME_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    game: GameSummary
    record_json: str
    def __init__(self, game: _Optional[_Union[GameSummary, _Mapping]] = ..., record_json: _Optional[str] = ...) -> None: ...

class ExportRecordsRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class ExportedRecord(_message.Message):
    __slots__ = ("game_id", "seq", "record_json")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seq: int
    record_json: str
    def __init__(self, game_id: _Optional[str] = ..., seq: _Optional[int] = ..., record_json: _Optional[str] = ...) -> None: ...

class ExportedStandings(_message.Message):
    __slots__ = ("standings_json", "standings_csv", "report_markdown", "records")
    STANDINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_CSV_FIELD_NUMBER: _ClassVar[int]
    REPORT_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    standings_json: str
    standings_csv: str
    report_markdown: str
    records: int
    def __init__(self, standings_json: _Optional[str] = ..., standings_csv: _Optional[str] = ..., report_markdown: _Optional[str] = ..., records: _Optional[int] = ...) -> None: ...

class ExportRecordsResponse(_message.Message):
    __slots__ = ("record", "standings")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    record: ExportedRecord
    standings: ExportedStandings
    def __init__(self, record: _Optional[_Union[ExportedRecord, _Mapping]] = ..., standings: _Optional[_Union[ExportedStandings, _Mapping]] = ...) -> None: ...

class BotInfo(_message.Message):
    __slots__ = ("name", "created", "streams")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    name: str
    created: _timestamp_pb2.Timestamp
    streams: int
    def __init__(self, name: _Optional[str] = ..., created: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., streams: _Optional[int] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotInfo]
    def __init__(self, bots: _Optional[_Iterable[_Union[BotInfo, _Mapping]]] = ...) -> None: ...

class AddBotRequest(_message.Message):
    __slots__ = ("name", "token")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class AddBotResponse(_message.Message):
    __slots__ = ("bot", "token")
    BOT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    bot: BotInfo
    token: str
    def __init__(self, bot: _Optional[_Union[BotInfo, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class RotateBotTokenRequest(_message.Message):
    __slots__ = ("name", "token")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class RotateBotTokenResponse(_message.Message):
    __slots__ = ("bot", "token", "streams_ended")
    BOT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    STREAMS_ENDED_FIELD_NUMBER: _ClassVar[int]
    bot: BotInfo
    token: str
    streams_ended: int
    def __init__(self, bot: _Optional[_Union[BotInfo, _Mapping]] = ..., token: _Optional[str] = ..., streams_ended: _Optional[int] = ...) -> None: ...

class RevokeBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RevokeBotResponse(_message.Message):
    __slots__ = ("streams_ended",)
    STREAMS_ENDED_FIELD_NUMBER: _ClassVar[int]
    streams_ended: int
    def __init__(self, streams_ended: _Optional[int] = ...) -> None: ...

class ConnectedBot(_message.Message):
    __slots__ = ("name", "streams", "seated", "idle", "other", "processes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    SEATED_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    OTHER_FIELD_NUMBER: _ClassVar[int]
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    name: str
    streams: int
    seated: int
    idle: int
    other: int
    processes: int
    def __init__(self, name: _Optional[str] = ..., streams: _Optional[int] = ..., seated: _Optional[int] = ..., idle: _Optional[int] = ..., other: _Optional[int] = ..., processes: _Optional[int] = ...) -> None: ...

class ListConnectedBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListConnectedBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[ConnectedBot]
    def __init__(self, bots: _Optional[_Iterable[_Union[ConnectedBot, _Mapping]]] = ...) -> None: ...
