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

class StageKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STAGE_KIND_UNSPECIFIED: _ClassVar[StageKind]
    STAGE_KIND_ROUND_ROBIN: _ClassVar[StageKind]
    STAGE_KIND_GAUNTLET: _ClassVar[StageKind]
    STAGE_KIND_SWISS: _ClassVar[StageKind]
    STAGE_KIND_KNOCKOUT: _ClassVar[StageKind]
    STAGE_KIND_DOUBLE_ELIMINATION: _ClassVar[StageKind]

class Seeding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEEDING_UNSPECIFIED: _ClassVar[Seeding]
    SEEDING_ORDER: _ClassVar[Seeding]
    SEEDING_RATINGS: _ClassVar[Seeding]
    SEEDING_RANDOM: _ClassVar[Seeding]
    SEEDING_STANDINGS: _ClassVar[Seeding]
    SEEDING_LIST: _ClassVar[Seeding]

class MatchMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_MODE_UNSPECIFIED: _ClassVar[MatchMode]
    MATCH_MODE_BEST_OF: _ClassVar[MatchMode]
    MATCH_MODE_FIRST_TO: _ClassVar[MatchMode]

class Tiebreak(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIEBREAK_UNSPECIFIED: _ClassVar[Tiebreak]
    TIEBREAK_POINTS: _ClassVar[Tiebreak]
    TIEBREAK_HEAD_TO_HEAD: _ClassVar[Tiebreak]
    TIEBREAK_BUCHHOLZ: _ClassVar[Tiebreak]
    TIEBREAK_SONNEBORN_BERGER: _ClassVar[Tiebreak]
    TIEBREAK_RATING: _ClassVar[Tiebreak]
    TIEBREAK_POINTS_PER_HAND: _ClassVar[Tiebreak]
    TIEBREAK_SEED: _ClassVar[Tiebreak]

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

class StageState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STAGE_STATE_UNSPECIFIED: _ClassVar[StageState]
    STAGE_STATE_NOT_STARTED: _ClassVar[StageState]
    STAGE_STATE_PLAYING: _ClassVar[StageState]
    STAGE_STATE_OVER: _ClassVar[StageState]

class BracketSection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BRACKET_SECTION_UNSPECIFIED: _ClassVar[BracketSection]
    BRACKET_SECTION_WINNERS: _ClassVar[BracketSection]
    BRACKET_SECTION_LOSERS: _ClassVar[BracketSection]
    BRACKET_SECTION_THIRD_PLACE: _ClassVar[BracketSection]
    BRACKET_SECTION_GRAND_FINAL: _ClassVar[BracketSection]
    BRACKET_SECTION_GRAND_FINAL_RESET: _ClassVar[BracketSection]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_PLAYING: _ClassVar[MatchStatus]
    MATCH_STATUS_NEEDS_GAMES: _ClassVar[MatchStatus]
    MATCH_STATUS_DECIDED: _ClassVar[MatchStatus]
    MATCH_STATUS_WALKOVER: _ClassVar[MatchStatus]
    MATCH_STATUS_EMPTY: _ClassVar[MatchStatus]
    MATCH_STATUS_SKIPPED: _ClassVar[MatchStatus]

class MatchDecider(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_DECIDER_UNSPECIFIED: _ClassVar[MatchDecider]
    MATCH_DECIDER_WINS: _ClassVar[MatchDecider]
    MATCH_DECIDER_EXTRA_GAMES: _ClassVar[MatchDecider]
    MATCH_DECIDER_SUDDEN_DEATH: _ClassVar[MatchDecider]
    MATCH_DECIDER_SEED: _ClassVar[MatchDecider]
    MATCH_DECIDER_WALKOVER: _ClassVar[MatchDecider]
    MATCH_DECIDER_OUT_OF_GAMES: _ClassVar[MatchDecider]

class GameStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_STATUS_UNSPECIFIED: _ClassVar[GameStatus]
    GAME_STATUS_SCHEDULED: _ClassVar[GameStatus]
    GAME_STATUS_RUNNING: _ClassVar[GameStatus]
    GAME_STATUS_FINISHED: _ClassVar[GameStatus]

class StoreState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STORE_STATE_UNSPECIFIED: _ClassVar[StoreState]
    STORE_STATE_OK: _ClassVar[StoreState]
    STORE_STATE_UNREACHABLE: _ClassVar[StoreState]
    STORE_STATE_FULL: _ClassVar[StoreState]
STAGE_KIND_UNSPECIFIED: StageKind
STAGE_KIND_ROUND_ROBIN: StageKind
STAGE_KIND_GAUNTLET: StageKind
STAGE_KIND_SWISS: StageKind
STAGE_KIND_KNOCKOUT: StageKind
STAGE_KIND_DOUBLE_ELIMINATION: StageKind
SEEDING_UNSPECIFIED: Seeding
SEEDING_ORDER: Seeding
SEEDING_RATINGS: Seeding
SEEDING_RANDOM: Seeding
SEEDING_STANDINGS: Seeding
SEEDING_LIST: Seeding
MATCH_MODE_UNSPECIFIED: MatchMode
MATCH_MODE_BEST_OF: MatchMode
MATCH_MODE_FIRST_TO: MatchMode
TIEBREAK_UNSPECIFIED: Tiebreak
TIEBREAK_POINTS: Tiebreak
TIEBREAK_HEAD_TO_HEAD: Tiebreak
TIEBREAK_BUCHHOLZ: Tiebreak
TIEBREAK_SONNEBORN_BERGER: Tiebreak
TIEBREAK_RATING: Tiebreak
TIEBREAK_POINTS_PER_HAND: Tiebreak
TIEBREAK_SEED: Tiebreak
TOURNAMENT_START_UNSPECIFIED: TournamentStart
TOURNAMENT_START_MANUAL: TournamentStart
TOURNAMENT_START_WHEN_CONNECTED: TournamentStart
TOURNAMENT_START_NOW: TournamentStart
TOURNAMENT_STATUS_UNSPECIFIED: TournamentStatus
TOURNAMENT_STATUS_SCHEDULED: TournamentStatus
TOURNAMENT_STATUS_RUNNING: TournamentStatus
TOURNAMENT_STATUS_FINISHED: TournamentStatus
TOURNAMENT_STATUS_CANCELLED: TournamentStatus
STAGE_STATE_UNSPECIFIED: StageState
STAGE_STATE_NOT_STARTED: StageState
STAGE_STATE_PLAYING: StageState
STAGE_STATE_OVER: StageState
BRACKET_SECTION_UNSPECIFIED: BracketSection
BRACKET_SECTION_WINNERS: BracketSection
BRACKET_SECTION_LOSERS: BracketSection
BRACKET_SECTION_THIRD_PLACE: BracketSection
BRACKET_SECTION_GRAND_FINAL: BracketSection
BRACKET_SECTION_GRAND_FINAL_RESET: BracketSection
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_PLAYING: MatchStatus
MATCH_STATUS_NEEDS_GAMES: MatchStatus
MATCH_STATUS_DECIDED: MatchStatus
MATCH_STATUS_WALKOVER: MatchStatus
MATCH_STATUS_EMPTY: MatchStatus
MATCH_STATUS_SKIPPED: MatchStatus
MATCH_DECIDER_UNSPECIFIED: MatchDecider
MATCH_DECIDER_WINS: MatchDecider
MATCH_DECIDER_EXTRA_GAMES: MatchDecider
MATCH_DECIDER_SUDDEN_DEATH: MatchDecider
MATCH_DECIDER_SEED: MatchDecider
MATCH_DECIDER_WALKOVER: MatchDecider
MATCH_DECIDER_OUT_OF_GAMES: MatchDecider
GAME_STATUS_UNSPECIFIED: GameStatus
GAME_STATUS_SCHEDULED: GameStatus
GAME_STATUS_RUNNING: GameStatus
GAME_STATUS_FINISHED: GameStatus
STORE_STATE_UNSPECIFIED: StoreState
STORE_STATE_OK: StoreState
STORE_STATE_UNREACHABLE: StoreState
STORE_STATE_FULL: StoreState

class Participant(_message.Message):
    __slots__ = ("name", "token", "command", "instances", "rating")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    command: _containers.RepeatedScalarFieldContainer[str]
    instances: int
    rating: float
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ..., command: _Optional[_Iterable[str]] = ..., instances: _Optional[int] = ..., rating: _Optional[float] = ...) -> None: ...

class MatchSpec(_message.Message):
    __slots__ = ("games", "mode", "extra_games", "sudden_death", "duplicate_deals")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_GAMES_FIELD_NUMBER: _ClassVar[int]
    SUDDEN_DEATH_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_DEALS_FIELD_NUMBER: _ClassVar[int]
    games: int
    mode: MatchMode
    extra_games: int
    sudden_death: int
    duplicate_deals: bool
    def __init__(self, games: _Optional[int] = ..., mode: _Optional[_Union[MatchMode, str]] = ..., extra_games: _Optional[int] = ..., sudden_death: _Optional[int] = ..., duplicate_deals: _Optional[bool] = ...) -> None: ...

class Stage(_message.Message):
    __slots__ = ("kind", "name", "advance", "seeding", "seeds", "challengers", "games_per_pairing", "groups", "rounds", "bye_points", "match", "third_place", "grand_final_reset", "tiebreaks")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ADVANCE_FIELD_NUMBER: _ClassVar[int]
    SEEDING_FIELD_NUMBER: _ClassVar[int]
    SEEDS_FIELD_NUMBER: _ClassVar[int]
    CHALLENGERS_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_PAIRING_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    BYE_POINTS_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    THIRD_PLACE_FIELD_NUMBER: _ClassVar[int]
    GRAND_FINAL_RESET_FIELD_NUMBER: _ClassVar[int]
    TIEBREAKS_FIELD_NUMBER: _ClassVar[int]
    kind: StageKind
    name: str
    advance: int
    seeding: Seeding
    seeds: _containers.RepeatedScalarFieldContainer[str]
    challengers: _containers.RepeatedScalarFieldContainer[str]
    games_per_pairing: int
    groups: int
    rounds: int
    bye_points: float
    match: MatchSpec
    third_place: bool
    grand_final_reset: bool
    tiebreaks: _containers.RepeatedScalarFieldContainer[Tiebreak]
    def __init__(self, kind: _Optional[_Union[StageKind, str]] = ..., name: _Optional[str] = ..., advance: _Optional[int] = ..., seeding: _Optional[_Union[Seeding, str]] = ..., seeds: _Optional[_Iterable[str]] = ..., challengers: _Optional[_Iterable[str]] = ..., games_per_pairing: _Optional[int] = ..., groups: _Optional[int] = ..., rounds: _Optional[int] = ..., bye_points: _Optional[float] = ..., match: _Optional[_Union[MatchSpec, _Mapping]] = ..., third_place: _Optional[bool] = ..., grand_final_reset: _Optional[bool] = ..., tiebreaks: _Optional[_Iterable[_Union[Tiebreak, str]]] = ...) -> None: ...

class TournamentFormat(_message.Message):
    __slots__ = ("stages",)
    STAGES_FIELD_NUMBER: _ClassVar[int]
    stages: _containers.RepeatedCompositeFieldContainer[Stage]
    def __init__(self, stages: _Optional[_Iterable[_Union[Stage, _Mapping]]] = ...) -> None: ...

class TournamentSpec(_message.Message):
    __slots__ = ("name", "participants", "rules", "time_control", "policies", "table_size", "games_per_pairing", "duplicate_deals", "start_time", "start_when_connected", "concurrency", "seed", "start", "format")
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
    FORMAT_FIELD_NUMBER: _ClassVar[int]
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
    format: TournamentFormat
    def __init__(self, name: _Optional[str] = ..., participants: _Optional[_Iterable[_Union[Participant, _Mapping]]] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., policies: _Optional[_Union[_game_pb2.Policies, _Mapping]] = ..., table_size: _Optional[int] = ..., games_per_pairing: _Optional[int] = ..., duplicate_deals: _Optional[bool] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., start_when_connected: _Optional[bool] = ..., concurrency: _Optional[int] = ..., seed: _Optional[str] = ..., start: _Optional[_Union[TournamentStart, str]] = ..., format: _Optional[_Union[TournamentFormat, _Mapping]] = ...) -> None: ...

class TournamentInfo(_message.Message):
    __slots__ = ("id", "name", "status", "games_total", "games_done", "format")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAMES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    GAMES_DONE_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    status: TournamentStatus
    games_total: int
    games_done: int
    format: TournamentFormat
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., status: _Optional[_Union[TournamentStatus, str]] = ..., games_total: _Optional[int] = ..., games_done: _Optional[int] = ..., format: _Optional[_Union[TournamentFormat, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("rank", "bot", "match_points", "games", "wins", "draws", "losses", "hands_won", "chinchones", "avg_points_per_hand", "forfeits", "timeouts", "illegal_actions", "rating", "rating_low", "rating_high", "p_better_than_next", "byes", "buchholz", "sonneborn_berger")
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
    BYES_FIELD_NUMBER: _ClassVar[int]
    BUCHHOLZ_FIELD_NUMBER: _ClassVar[int]
    SONNEBORN_BERGER_FIELD_NUMBER: _ClassVar[int]
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
    byes: int
    buchholz: float
    sonneborn_berger: float
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., match_points: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ..., draws: _Optional[int] = ..., losses: _Optional[int] = ..., hands_won: _Optional[int] = ..., chinchones: _Optional[int] = ..., avg_points_per_hand: _Optional[float] = ..., forfeits: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal_actions: _Optional[int] = ..., rating: _Optional[float] = ..., rating_low: _Optional[float] = ..., rating_high: _Optional[float] = ..., p_better_than_next: _Optional[float] = ..., byes: _Optional[int] = ..., buchholz: _Optional[float] = ..., sonneborn_berger: _Optional[float] = ...) -> None: ...

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
    __slots__ = ("tournament", "rows", "head_to_head", "duplicate_variance_reduction", "standings_json", "damaged_games", "tiebreaks", "stages", "structure_json", "final_ranking")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    HEAD_TO_HEAD_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_VARIANCE_REDUCTION_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    DAMAGED_GAMES_FIELD_NUMBER: _ClassVar[int]
    TIEBREAKS_FIELD_NUMBER: _ClassVar[int]
    STAGES_FIELD_NUMBER: _ClassVar[int]
    STRUCTURE_JSON_FIELD_NUMBER: _ClassVar[int]
    FINAL_RANKING_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentInfo
    rows: _containers.RepeatedCompositeFieldContainer[StandingRow]
    head_to_head: _containers.RepeatedCompositeFieldContainer[HeadToHead]
    duplicate_variance_reduction: float
    standings_json: str
    damaged_games: _containers.RepeatedScalarFieldContainer[str]
    tiebreaks: _containers.RepeatedScalarFieldContainer[Tiebreak]
    stages: _containers.RepeatedCompositeFieldContainer[StageStandings]
    structure_json: str
    final_ranking: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tournament: _Optional[_Union[TournamentInfo, _Mapping]] = ..., rows: _Optional[_Iterable[_Union[StandingRow, _Mapping]]] = ..., head_to_head: _Optional[_Iterable[_Union[HeadToHead, _Mapping]]] = ..., duplicate_variance_reduction: _Optional[float] = ..., standings_json: _Optional[str] = ..., damaged_games: _Optional[_Iterable[str]] = ..., tiebreaks: _Optional[_Iterable[_Union[Tiebreak, str]]] = ..., stages: _Optional[_Iterable[_Union[StageStandings, _Mapping]]] = ..., structure_json: _Optional[str] = ..., final_ranking: _Optional[_Iterable[str]] = ...) -> None: ...

class StageStandings(_message.Message):
    __slots__ = ("index", "name", "kind", "state", "rows", "tiebreaks", "challengers", "field", "rounds", "bracket_size", "matches", "ranking")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TIEBREAKS_FIELD_NUMBER: _ClassVar[int]
    CHALLENGERS_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    BRACKET_SIZE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    index: int
    name: str
    kind: StageKind
    state: StageState
    rows: _containers.RepeatedCompositeFieldContainer[StandingRow]
    tiebreaks: _containers.RepeatedScalarFieldContainer[Tiebreak]
    challengers: _containers.RepeatedScalarFieldContainer[str]
    field: _containers.RepeatedScalarFieldContainer[str]
    rounds: _containers.RepeatedCompositeFieldContainer[SwissRound]
    bracket_size: int
    matches: _containers.RepeatedCompositeFieldContainer[BracketMatch]
    ranking: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, index: _Optional[int] = ..., name: _Optional[str] = ..., kind: _Optional[_Union[StageKind, str]] = ..., state: _Optional[_Union[StageState, str]] = ..., rows: _Optional[_Iterable[_Union[StandingRow, _Mapping]]] = ..., tiebreaks: _Optional[_Iterable[_Union[Tiebreak, str]]] = ..., challengers: _Optional[_Iterable[str]] = ..., field: _Optional[_Iterable[str]] = ..., rounds: _Optional[_Iterable[_Union[SwissRound, _Mapping]]] = ..., bracket_size: _Optional[int] = ..., matches: _Optional[_Iterable[_Union[BracketMatch, _Mapping]]] = ..., ranking: _Optional[_Iterable[str]] = ...) -> None: ...

class SwissRound(_message.Message):
    __slots__ = ("round", "byes", "tables", "bye_points")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    BYES_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    BYE_POINTS_FIELD_NUMBER: _ClassVar[int]
    round: int
    byes: _containers.RepeatedScalarFieldContainer[str]
    tables: _containers.RepeatedCompositeFieldContainer[SwissTable]
    bye_points: float
    def __init__(self, round: _Optional[int] = ..., byes: _Optional[_Iterable[str]] = ..., tables: _Optional[_Iterable[_Union[SwissTable, _Mapping]]] = ..., bye_points: _Optional[float] = ...) -> None: ...

class SwissTable(_message.Message):
    __slots__ = ("table", "players", "points", "game_ids", "finished")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    GAME_IDS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    table: int
    players: _containers.RepeatedScalarFieldContainer[str]
    points: _containers.RepeatedScalarFieldContainer[float]
    game_ids: _containers.RepeatedScalarFieldContainer[str]
    finished: bool
    def __init__(self, table: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., points: _Optional[_Iterable[float]] = ..., game_ids: _Optional[_Iterable[str]] = ..., finished: _Optional[bool] = ...) -> None: ...

class BracketMatch(_message.Message):
    __slots__ = ("match", "section", "round", "slot", "a", "b", "sources", "status", "wins_a", "wins_b", "game_ids", "winner", "loser", "decided_by")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WINS_A_FIELD_NUMBER: _ClassVar[int]
    WINS_B_FIELD_NUMBER: _ClassVar[int]
    GAME_IDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    LOSER_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    match: int
    section: BracketSection
    round: int
    slot: int
    a: str
    b: str
    sources: _containers.RepeatedScalarFieldContainer[str]
    status: MatchStatus
    wins_a: int
    wins_b: int
    game_ids: _containers.RepeatedScalarFieldContainer[str]
    winner: str
    loser: str
    decided_by: MatchDecider
    def __init__(self, match: _Optional[int] = ..., section: _Optional[_Union[BracketSection, str]] = ..., round: _Optional[int] = ..., slot: _Optional[int] = ..., a: _Optional[str] = ..., b: _Optional[str] = ..., sources: _Optional[_Iterable[str]] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., wins_a: _Optional[int] = ..., wins_b: _Optional[int] = ..., game_ids: _Optional[_Iterable[str]] = ..., winner: _Optional[str] = ..., loser: _Optional[str] = ..., decided_by: _Optional[_Union[MatchDecider, str]] = ...) -> None: ...

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
    __slots__ = ("standings_json", "standings_csv", "records_json", "report_markdown", "ratings_svg", "structure_json")
    STANDINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_CSV_FIELD_NUMBER: _ClassVar[int]
    RECORDS_JSON_FIELD_NUMBER: _ClassVar[int]
    REPORT_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    RATINGS_SVG_FIELD_NUMBER: _ClassVar[int]
    STRUCTURE_JSON_FIELD_NUMBER: _ClassVar[int]
    standings_json: str
    standings_csv: str
    records_json: _containers.RepeatedScalarFieldContainer[str]
    report_markdown: str
    ratings_svg: str
    structure_json: str
    def __init__(self, standings_json: _Optional[str] = ..., standings_csv: _Optional[str] = ..., records_json: _Optional[_Iterable[str]] = ..., report_markdown: _Optional[str] = ..., ratings_svg: _Optional[str] = ..., structure_json: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("standings_json", "standings_csv", "report_markdown", "records", "ratings_svg", "damaged_games", "structure_json")
    STANDINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_CSV_FIELD_NUMBER: _ClassVar[int]
    REPORT_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    RATINGS_SVG_FIELD_NUMBER: _ClassVar[int]
    DAMAGED_GAMES_FIELD_NUMBER: _ClassVar[int]
    STRUCTURE_JSON_FIELD_NUMBER: _ClassVar[int]
    standings_json: str
    standings_csv: str
    report_markdown: str
    records: int
    ratings_svg: str
    damaged_games: _containers.RepeatedScalarFieldContainer[str]
    structure_json: str
    def __init__(self, standings_json: _Optional[str] = ..., standings_csv: _Optional[str] = ..., report_markdown: _Optional[str] = ..., records: _Optional[int] = ..., ratings_svg: _Optional[str] = ..., damaged_games: _Optional[_Iterable[str]] = ..., structure_json: _Optional[str] = ...) -> None: ...

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

class GetServerStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetServerStatusResponse(_message.Message):
    __slots__ = ("store", "store_problem", "store_problem_since", "results_waiting", "clock_offset", "clock_measured", "process")
    STORE_FIELD_NUMBER: _ClassVar[int]
    STORE_PROBLEM_FIELD_NUMBER: _ClassVar[int]
    STORE_PROBLEM_SINCE_FIELD_NUMBER: _ClassVar[int]
    RESULTS_WAITING_FIELD_NUMBER: _ClassVar[int]
    CLOCK_OFFSET_FIELD_NUMBER: _ClassVar[int]
    CLOCK_MEASURED_FIELD_NUMBER: _ClassVar[int]
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    store: StoreState
    store_problem: str
    store_problem_since: _timestamp_pb2.Timestamp
    results_waiting: int
    clock_offset: float
    clock_measured: bool
    process: str
    def __init__(self, store: _Optional[_Union[StoreState, str]] = ..., store_problem: _Optional[str] = ..., store_problem_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., results_waiting: _Optional[int] = ..., clock_offset: _Optional[float] = ..., clock_measured: _Optional[bool] = ..., process: _Optional[str] = ...) -> None: ...
