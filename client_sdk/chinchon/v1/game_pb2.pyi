import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_DEAL: _ClassVar[Phase]
    PHASE_DRAW: _ClassVar[Phase]
    PHASE_DISCARD: _ClassVar[Phase]
    PHASE_RESHUFFLE: _ClassVar[Phase]
    PHASE_LAY_OFF: _ClassVar[Phase]
    PHASE_LAY_DOWN: _ClassVar[Phase]
    PHASE_GAME_OVER: _ClassVar[Phase]

class MeldKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MELD_KIND_UNSPECIFIED: _ClassVar[MeldKind]
    MELD_KIND_SET: _ClassVar[MeldKind]
    MELD_KIND_RUN: _ClassVar[MeldKind]

class RunEnd(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_END_UNSPECIFIED: _ClassVar[RunEnd]
    RUN_END_LOW: _ClassVar[RunEnd]
    RUN_END_HIGH: _ClassVar[RunEnd]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_DRAW_STOCK: _ClassVar[EventKind]
    EVENT_KIND_DRAW_DISCARD: _ClassVar[EventKind]
    EVENT_KIND_DISCARD: _ClassVar[EventKind]
    EVENT_KIND_RESHUFFLE: _ClassVar[EventKind]
    EVENT_KIND_CLOSE: _ClassVar[EventKind]
    EVENT_KIND_LAY_OFF: _ClassVar[EventKind]
    EVENT_KIND_LAY_DOWN: _ClassVar[EventKind]

class HandEndKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HAND_END_KIND_UNSPECIFIED: _ClassVar[HandEndKind]
    HAND_END_KIND_CLOSED: _ClassVar[HandEndKind]
    HAND_END_KIND_CHINCHON: _ClassVar[HandEndKind]
    HAND_END_KIND_STOCK_EXHAUSTED: _ClassVar[HandEndKind]
    HAND_END_KIND_TURN_LIMIT: _ClassVar[HandEndKind]

class Bonus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BONUS_UNSPECIFIED: _ClassVar[Bonus]
    BONUS_NONE: _ClassVar[Bonus]
    BONUS_MINUS_10: _ClassVar[Bonus]
    BONUS_MINUS_25: _ClassVar[Bonus]
    BONUS_MINUS_50: _ClassVar[Bonus]
    BONUS_CHINCHON: _ClassVar[Bonus]

class GameEndKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_END_KIND_UNSPECIFIED: _ClassVar[GameEndKind]
    GAME_END_KIND_CHINCHON: _ClassVar[GameEndKind]
    GAME_END_KIND_LAST_PLAYER: _ClassVar[GameEndKind]
    GAME_END_KIND_LOWEST_TOTAL: _ClassVar[GameEndKind]
    GAME_END_KIND_DRAW: _ClassVar[GameEndKind]
    GAME_END_KIND_LENGTH_LIMIT: _ClassVar[GameEndKind]

class Termination(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TERMINATION_UNSPECIFIED: _ClassVar[Termination]
    TERMINATION_NORMAL: _ClassVar[Termination]
    TERMINATION_CHINCHON: _ClassVar[Termination]
    TERMINATION_FORFEIT_TIMEOUT: _ClassVar[Termination]
    TERMINATION_FORFEIT_ILLEGAL: _ClassVar[Termination]
    TERMINATION_FORFEIT_DISCONNECT: _ClassVar[Termination]
    TERMINATION_FORFEIT_NO_SHOW: _ClassVar[Termination]
    TERMINATION_ABORTED: _ClassVar[Termination]
    TERMINATION_LENGTH_LIMIT: _ClassVar[Termination]
PHASE_UNSPECIFIED: Phase
PHASE_DEAL: Phase
PHASE_DRAW: Phase
PHASE_DISCARD: Phase
PHASE_RESHUFFLE: Phase
PHASE_LAY_OFF: Phase
PHASE_LAY_DOWN: Phase
PHASE_GAME_OVER: Phase
MELD_KIND_UNSPECIFIED: MeldKind
MELD_KIND_SET: MeldKind
MELD_KIND_RUN: MeldKind
RUN_END_UNSPECIFIED: RunEnd
RUN_END_LOW: RunEnd
RUN_END_HIGH: RunEnd
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_DRAW_STOCK: EventKind
EVENT_KIND_DRAW_DISCARD: EventKind
EVENT_KIND_DISCARD: EventKind
EVENT_KIND_RESHUFFLE: EventKind
EVENT_KIND_CLOSE: EventKind
EVENT_KIND_LAY_OFF: EventKind
EVENT_KIND_LAY_DOWN: EventKind
HAND_END_KIND_UNSPECIFIED: HandEndKind
HAND_END_KIND_CLOSED: HandEndKind
HAND_END_KIND_CHINCHON: HandEndKind
HAND_END_KIND_STOCK_EXHAUSTED: HandEndKind
HAND_END_KIND_TURN_LIMIT: HandEndKind
BONUS_UNSPECIFIED: Bonus
BONUS_NONE: Bonus
BONUS_MINUS_10: Bonus
BONUS_MINUS_25: Bonus
BONUS_MINUS_50: Bonus
BONUS_CHINCHON: Bonus
GAME_END_KIND_UNSPECIFIED: GameEndKind
GAME_END_KIND_CHINCHON: GameEndKind
GAME_END_KIND_LAST_PLAYER: GameEndKind
GAME_END_KIND_LOWEST_TOTAL: GameEndKind
GAME_END_KIND_DRAW: GameEndKind
GAME_END_KIND_LENGTH_LIMIT: GameEndKind
TERMINATION_UNSPECIFIED: Termination
TERMINATION_NORMAL: Termination
TERMINATION_CHINCHON: Termination
TERMINATION_FORFEIT_TIMEOUT: Termination
TERMINATION_FORFEIT_ILLEGAL: Termination
TERMINATION_FORFEIT_DISCONNECT: Termination
TERMINATION_FORFEIT_NO_SHOW: Termination
TERMINATION_ABORTED: Termination
TERMINATION_LENGTH_LIMIT: Termination

class RuleSet(_message.Message):
    __slots__ = ("players", "deck", "jokers", "figure_points", "joker_points", "open_discard", "retake_discard", "close_max_unmatched", "close_max_points", "max_turns_per_hand", "score_limit", "wild_cards", "jokers_per_meld", "close_first_round")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    JOKERS_FIELD_NUMBER: _ClassVar[int]
    FIGURE_POINTS_FIELD_NUMBER: _ClassVar[int]
    JOKER_POINTS_FIELD_NUMBER: _ClassVar[int]
    OPEN_DISCARD_FIELD_NUMBER: _ClassVar[int]
    RETAKE_DISCARD_FIELD_NUMBER: _ClassVar[int]
    CLOSE_MAX_UNMATCHED_FIELD_NUMBER: _ClassVar[int]
    CLOSE_MAX_POINTS_FIELD_NUMBER: _ClassVar[int]
    MAX_TURNS_PER_HAND_FIELD_NUMBER: _ClassVar[int]
    SCORE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    WILD_CARDS_FIELD_NUMBER: _ClassVar[int]
    JOKERS_PER_MELD_FIELD_NUMBER: _ClassVar[int]
    CLOSE_FIRST_ROUND_FIELD_NUMBER: _ClassVar[int]
    players: int
    deck: int
    jokers: int
    figure_points: str
    joker_points: int
    open_discard: bool
    retake_discard: bool
    close_max_unmatched: int
    close_max_points: int
    max_turns_per_hand: int
    score_limit: int
    wild_cards: _containers.RepeatedScalarFieldContainer[str]
    jokers_per_meld: int
    close_first_round: bool
    def __init__(self, players: _Optional[int] = ..., deck: _Optional[int] = ..., jokers: _Optional[int] = ..., figure_points: _Optional[str] = ..., joker_points: _Optional[int] = ..., open_discard: _Optional[bool] = ..., retake_discard: _Optional[bool] = ..., close_max_unmatched: _Optional[int] = ..., close_max_points: _Optional[int] = ..., max_turns_per_hand: _Optional[int] = ..., score_limit: _Optional[int] = ..., wild_cards: _Optional[_Iterable[str]] = ..., jokers_per_meld: _Optional[int] = ..., close_first_round: _Optional[bool] = ...) -> None: ...

class CardGroup(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class MeldList(_message.Message):
    __slots__ = ("melds",)
    MELDS_FIELD_NUMBER: _ClassVar[int]
    melds: _containers.RepeatedCompositeFieldContainer[CardGroup]
    def __init__(self, melds: _Optional[_Iterable[_Union[CardGroup, _Mapping]]] = ...) -> None: ...

class Meld(_message.Message):
    __slots__ = ("index", "owner", "kind", "cards")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    index: int
    owner: int
    kind: MeldKind
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, index: _Optional[int] = ..., owner: _Optional[int] = ..., kind: _Optional[_Union[MeldKind, str]] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class DrawStock(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DrawDiscard(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Discard(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: str
    def __init__(self, card: _Optional[str] = ...) -> None: ...

class Close(_message.Message):
    __slots__ = ("card", "best", "melds")
    CARD_FIELD_NUMBER: _ClassVar[int]
    BEST_FIELD_NUMBER: _ClassVar[int]
    MELDS_FIELD_NUMBER: _ClassVar[int]
    card: str
    best: bool
    melds: MeldList
    def __init__(self, card: _Optional[str] = ..., best: _Optional[bool] = ..., melds: _Optional[_Union[MeldList, _Mapping]] = ...) -> None: ...

class LayOff(_message.Message):
    __slots__ = ("card", "meld", "end")
    CARD_FIELD_NUMBER: _ClassVar[int]
    MELD_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    card: str
    meld: int
    end: RunEnd
    def __init__(self, card: _Optional[str] = ..., meld: _Optional[int] = ..., end: _Optional[_Union[RunEnd, str]] = ...) -> None: ...

class LayOffBest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LayDown(_message.Message):
    __slots__ = ("best", "melds")
    BEST_FIELD_NUMBER: _ClassVar[int]
    MELDS_FIELD_NUMBER: _ClassVar[int]
    best: bool
    melds: MeldList
    def __init__(self, best: _Optional[bool] = ..., melds: _Optional[_Union[MeldList, _Mapping]] = ...) -> None: ...

class Pass(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Action(_message.Message):
    __slots__ = ("draw_stock", "draw_discard", "discard", "close", "lay_off", "lay_off_best", "lay_down")
    DRAW_STOCK_FIELD_NUMBER: _ClassVar[int]
    DRAW_DISCARD_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    CLOSE_FIELD_NUMBER: _ClassVar[int]
    LAY_OFF_FIELD_NUMBER: _ClassVar[int]
    LAY_OFF_BEST_FIELD_NUMBER: _ClassVar[int]
    LAY_DOWN_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    draw_stock: DrawStock
    draw_discard: DrawDiscard
    discard: Discard
    close: Close
    lay_off: LayOff
    lay_off_best: LayOffBest
    lay_down: LayDown
    def __init__(self, draw_stock: _Optional[_Union[DrawStock, _Mapping]] = ..., draw_discard: _Optional[_Union[DrawDiscard, _Mapping]] = ..., discard: _Optional[_Union[Discard, _Mapping]] = ..., close: _Optional[_Union[Close, _Mapping]] = ..., lay_off: _Optional[_Union[LayOff, _Mapping]] = ..., lay_off_best: _Optional[_Union[LayOffBest, _Mapping]] = ..., lay_down: _Optional[_Union[LayDown, _Mapping]] = ..., **kwargs) -> None: ...

class Deal(_message.Message):
    __slots__ = ("deck", "starter")
    DECK_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    deck: _containers.RepeatedScalarFieldContainer[str]
    starter: int
    def __init__(self, deck: _Optional[_Iterable[str]] = ..., starter: _Optional[int] = ...) -> None: ...

class Reshuffle(_message.Message):
    __slots__ = ("order",)
    ORDER_FIELD_NUMBER: _ClassVar[int]
    order: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, order: _Optional[_Iterable[str]] = ...) -> None: ...

class PublicEvent(_message.Message):
    __slots__ = ("kind", "seat", "card", "detail")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    kind: EventKind
    seat: int
    card: str
    detail: str
    def __init__(self, kind: _Optional[_Union[EventKind, str]] = ..., seat: _Optional[int] = ..., card: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class PlayerInfo(_message.Message):
    __slots__ = ("seat", "name", "hand_size", "score", "in_game")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    IN_GAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    hand_size: int
    score: int
    in_game: bool
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., hand_size: _Optional[int] = ..., score: _Optional[int] = ..., in_game: _Optional[bool] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "hand_number", "phase", "to_act", "starter", "turn", "hand", "discard_pile", "stock_size", "players", "table", "events", "taken_from_discard", "closer", "rules", "past_hands")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PILE_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FROM_DISCARD_FIELD_NUMBER: _ClassVar[int]
    CLOSER_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    PAST_HANDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_number: int
    phase: Phase
    to_act: int
    starter: int
    turn: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    discard_pile: _containers.RepeatedScalarFieldContainer[str]
    stock_size: int
    players: _containers.RepeatedCompositeFieldContainer[PlayerInfo]
    table: _containers.RepeatedCompositeFieldContainer[Meld]
    events: _containers.RepeatedCompositeFieldContainer[PublicEvent]
    taken_from_discard: str
    closer: int
    rules: RuleSet
    past_hands: _containers.RepeatedCompositeFieldContainer[HandResult]
    def __init__(self, seat: _Optional[int] = ..., hand_number: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., to_act: _Optional[int] = ..., starter: _Optional[int] = ..., turn: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., discard_pile: _Optional[_Iterable[str]] = ..., stock_size: _Optional[int] = ..., players: _Optional[_Iterable[_Union[PlayerInfo, _Mapping]]] = ..., table: _Optional[_Iterable[_Union[Meld, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[PublicEvent, _Mapping]]] = ..., taken_from_discard: _Optional[str] = ..., closer: _Optional[int] = ..., rules: _Optional[_Union[RuleSet, _Mapping]] = ..., past_hands: _Optional[_Iterable[_Union[HandResult, _Mapping]]] = ...) -> None: ...

class HandResult(_message.Message):
    __slots__ = ("hand_number", "end", "closer", "bonus", "hands", "close_discard", "table", "unmatched", "points", "totals", "eliminated")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    CLOSER_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_DISCARD_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    UNMATCHED_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    ELIMINATED_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    end: HandEndKind
    closer: int
    bonus: Bonus
    hands: _containers.RepeatedCompositeFieldContainer[CardGroup]
    close_discard: str
    table: _containers.RepeatedCompositeFieldContainer[Meld]
    unmatched: _containers.RepeatedCompositeFieldContainer[CardGroup]
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    eliminated: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand_number: _Optional[int] = ..., end: _Optional[_Union[HandEndKind, str]] = ..., closer: _Optional[int] = ..., bonus: _Optional[_Union[Bonus, str]] = ..., hands: _Optional[_Iterable[_Union[CardGroup, _Mapping]]] = ..., close_discard: _Optional[str] = ..., table: _Optional[_Iterable[_Union[Meld, _Mapping]]] = ..., unmatched: _Optional[_Iterable[_Union[CardGroup, _Mapping]]] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., eliminated: _Optional[_Iterable[int]] = ...) -> None: ...

class GameResult(_message.Message):
    __slots__ = ("end", "termination", "winners", "totals", "hands_played", "forfeited_seat", "summary")
    END_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    HANDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_SEAT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    end: GameEndKind
    termination: Termination
    winners: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    hands_played: int
    forfeited_seat: int
    summary: str
    def __init__(self, end: _Optional[_Union[GameEndKind, str]] = ..., termination: _Optional[_Union[Termination, str]] = ..., winners: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., hands_played: _Optional[int] = ..., forfeited_seat: _Optional[int] = ..., summary: _Optional[str] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_move", "bank")
    PER_MOVE_FIELD_NUMBER: _ClassVar[int]
    BANK_FIELD_NUMBER: _ClassVar[int]
    per_move: _duration_pb2.Duration
    bank: _duration_pb2.Duration
    def __init__(self, per_move: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., bank: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class Policies(_message.Message):
    __slots__ = ("max_illegal_retries", "max_strikes", "reconnect_grace", "absence_limit")
    MAX_ILLEGAL_RETRIES_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_FIELD_NUMBER: _ClassVar[int]
    ABSENCE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    max_illegal_retries: int
    max_strikes: int
    reconnect_grace: _duration_pb2.Duration
    absence_limit: _duration_pb2.Duration
    def __init__(self, max_illegal_retries: _Optional[int] = ..., max_strikes: _Optional[int] = ..., reconnect_grace: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., absence_limit: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...
