"""The Chinchón rules engine: pure (standard library only), deterministic, replayable.

Quick tour::

    from chinchon.engine import RuleSet, new_game, legal_actions, apply, observation
    from chinchon.engine import ShuffleSource, parse_card, best_arrangement

    rules = RuleSet(jokers=1)
    source = ShuffleSource(b"secret seed", "game-1")
    state = new_game(rules)
    state = apply(state, source.chance(state))       # deal
    legal_actions(state)                              # [draw stock, draw discard]

No sockets, clocks, threads or global random state in here: the referee owns those.
"""

from .actions import (
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    PASS,
    Action,
    Close,
    Deal,
    Discard,
    DrawDiscard,
    DrawStock,
    LayDown,
    LayOff,
    LayOffBest,
    Pass,
    Reshuffle,
    parse_action,
)
from .bots import Bot, GreedyBot, RandomBot
from .cards import (
    CARDS,
    JOKERS,
    Card,
    cards_of,
    deck_cards,
    format_cards,
    make_card,
    mask_of,
    parse_card,
    parse_cards,
)
from .errors import (
    ChinchonError,
    IllegalAction,
    InvalidMeld,
    MalformedInput,
    RecordError,
    RuleSetError,
    Violation,
)
from .game import (
    Event,
    EventKind,
    GameEnd,
    GameResult,
    GameState,
    HandEnd,
    HandResult,
    Phase,
    TableMeld,
    apply,
    describe_hand_result,
    is_legal,
    legal_actions,
    new_game,
)
from .melds import End, Meld, MeldKind, extend_meld, make_meld
from .observation import Observation, PlayerView, observation
from .outcome import HandScore, Outcome
from .play import play_game
from .policies import default_action
from .record import RecordBuilder, Replay, action_from_json, action_to_json, replay
from .rules import DEFAULT_RULES, OPTIONS, RuleSet
from .shuffle import ShuffleSource, attempt_deal
from .solver import Arrangement, Bonus, Solver, all_arrangements, best_arrangement, deadwood, solver_for
from .termination import Termination

__all__ = [
    "CARDS", "DEFAULT_RULES", "DRAW_DISCARD", "DRAW_STOCK", "JOKERS", "LAYDOWN_BEST",
    "LAYOFF_BEST", "OPTIONS", "PASS", "Action", "Arrangement", "Bot", "Card", "ChinchonError",
    "Bonus", "Close", "Deal", "Discard", "DrawDiscard", "DrawStock", "End", "Event", "EventKind",
    "GameEnd",
    "GameResult", "GameState", "GreedyBot", "HandEnd", "HandResult", "HandScore", "IllegalAction",
    "InvalidMeld", "LayDown", "LayOff", "LayOffBest", "MalformedInput", "Meld", "MeldKind",
    "Observation", "Outcome", "Pass", "Phase", "PlayerView", "RandomBot", "RecordBuilder", "RecordError",
    "Replay", "Reshuffle", "RuleSet", "RuleSetError", "ShuffleSource", "Solver", "TableMeld",
    "Termination", "Violation", "action_from_json", "action_to_json", "all_arrangements", "apply",
    "attempt_deal",
    "best_arrangement", "cards_of", "deadwood", "deck_cards", "default_action", "describe_hand_result",
    "extend_meld", "format_cards", "is_legal", "legal_actions", "make_card", "make_meld",
    "mask_of", "new_game", "observation", "parse_action", "parse_card", "parse_cards",
    "play_game", "replay", "solver_for",
]
