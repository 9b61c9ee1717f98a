"""Write the playthrough goldens of tests/engine/golden/playthrough_*.txt.

    python tests/engine/golden/make_playthroughs.py          # rewrite every playthrough file
    python tests/engine/golden/make_playthroughs.py --check  # exit 1 if a file would change

A playthrough (after OpenSpiel's ``playthroughs/*.txt``) is a short game between
engine bots with a fixed seed, written out step by step: for every step the state
(everything, hidden cards included), what ``observation(state, seat)`` gives each seat,
the legal actions of the seat to act (``legal_actions``, as text, in the engine's
order), and the action taken or the chance outcome. The test suite
(tests/engine/test_engine_playthroughs.py) plays each game again in memory and requires the
same text, naming the first step that differs: a change of what a bot sees, of what it
may do, or of the rules' outcomes shows up as a readable diff here. Regenerate only
when the change is intended, and say so in the commit message.

The rule set is written as records write it (``RuleSet.to_dict(compact=True)``: the
house rules only where they differ from their defaults), so the files of games under
the first eleven options read as they did before the house rules existed.

How an observation is written: its fields in the order of ``Observation._fields``. A
field with the same value for every seat is written once, on the ``obs *`` lines; a
field that differs is written on each seat's ``obs <seat>`` line. ``rules`` is written
only when it differs from the game's rule set in the header. ``events`` and
``past_hands`` grow through a hand and a game: a step writes only the entries added
since the previous step (``+``) when the old ones are unchanged, or the whole list
(``=``) when they are not (a new hand empties ``events``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chinchon.engine import (
    Bot,
    Event,
    GameState,
    GreedyBot,
    HandResult,
    Observation,
    PlayerView,
    RandomBot,
    RuleSet,
    ShuffleSource,
    TableMeld,
    apply,
    format_cards,
    legal_actions,
    new_game,
    observation,
)

HERE = Path(__file__).resolve().parent
REGENERATE = "python tests/engine/golden/make_playthroughs.py"


@dataclass(frozen=True)
class Playthrough:
    name: str
    rules: RuleSet
    bots: Callable[[], list[Bot]]
    seed: str
    #: Steps written at most (chance outcomes count); the game may go on after them.
    max_steps: int
    note: str


PLAYTHROUGHS: tuple[Playthrough, ...] = (
    Playthrough(
        "default_2p",
        RuleSet(),
        lambda: [GreedyBot(), RandomBot(3)],
        "playthrough-default-13",
        60,
        "default rules, two players: draws and discards, a close, a lay-off turn, a lay-down",
    ),
    Playthrough(
        "jokers2",
        RuleSet(jokers=2, score_limit=40),
        lambda: [GreedyBot(), GreedyBot()],
        "playthrough-jokers-2",
        60,
        "two jokers, score limit 40: jokers in melds, three hands, a player out, game over",
    ),
    Playthrough(
        "three_players",
        RuleSet(players=3),
        lambda: [GreedyBot(), RandomBot(5), GreedyBot()],
        "playthrough-3p-1",
        70,
        "three players: the lay-off and lay-down order after a close",
    ),
    Playthrough(
        "deck48",
        RuleSet(deck=48),
        lambda: [GreedyBot(), RandomBot(2)],
        "playthrough-deck48-51",
        60,
        "the 48-card deck (ranks 1-12, figures 10-11-12)",
    ),
    Playthrough(
        "wild_1O",
        RuleSet(wild_cards=("1O",)),
        lambda: [GreedyBot(), GreedyBot()],
        "seed-0",
        40,
        "the ace of coins wild: 1O in a run (3O 4O 5O 1O, -10) and in a set (3O 3C 3B 1O)",
    ),
    Playthrough(
        "jokers_per_meld_1",
        RuleSet(jokers=2, jokers_per_meld=1),
        lambda: [GreedyBot(), GreedyBot()],
        "seed-0",
        40,
        "two jokers, one per meld: both jokers go down in two melds (2O 2E 2B JK1 | 10B JK2 12B)",
    ),
    Playthrough(
        "no_first_round_close",
        RuleSet(close_first_round=False),
        lambda: [GreedyBot(), GreedyBot()],
        "first-round-122",
        30,
        "close_first_round off: the starter's first turn could close (default rules) and may not",
    ),
)


# -- writing one step ----------------------------------------------------------------------


def _cards(cards: Sequence[int]) -> str:
    return format_cards(cards) or "-"


def _table(table: Sequence[TableMeld]) -> str:
    if not table:
        return "-"
    return " | ".join(f"{i}: {t.meld} (seat {t.owner})" for i, t in enumerate(table))


def _players(players: Sequence[PlayerView]) -> str:
    return " | ".join(
        f"{p.seat} {p.name}: {p.hand_size} cards, {p.score} points" + ("" if p.in_game else ", out")
        for p in players
    )


def _event(e: Event) -> str:
    text = f"{e.kind} seat {e.seat}"
    if e.card is not None:
        text += f" {e.card}"
    if e.detail:
        text += f" ({e.detail})"
    return text


def _hand_result(h: HandResult) -> str:
    seats = "; ".join(
        f"seat {s}: {_cards(h.hands[s])}, unmatched {_cards(h.unmatched[s])}, "
        f"{h.points[s]:+d} -> {h.totals[s]}"
        for s in range(len(h.hands))
    )
    return (
        f"hand {h.hand_no} {h.end.name} closer {h.closer} bonus {h.bonus} "
        f"close_discard {h.close_discard if h.close_discard is not None else '-'}; "
        f"table {_table(h.table)}; {seats}; eliminated {list(h.eliminated)}"
    )


def _field(name: str, value: Any) -> str:
    """One observation field as text (events and past_hands are written apart)."""
    if name in ("hand", "discard_pile"):
        return _cards(value)
    if name == "players":
        return _players(value)
    if name == "table":
        return _table(value)
    if name == "phase":
        return str(value.name)
    if name == "taken_from_discard":
        return "-" if value is None else str(value)
    if name == "rules":
        return repr(value.to_dict(compact=True))
    return repr(value)


def _growth(old: Sequence[Any], new: Sequence[Any], text: Callable[[Any], str]) -> list[str]:
    """The entries added to a growing list, or the whole list if the old part changed."""
    if tuple(new[: len(old)]) == tuple(old):
        return [f"+ {text(x)}" for x in new[len(old) :]]
    return [f"= {text(x)}" for x in new] or ["= (empty)"]


class _Writer:
    def __init__(self, pt: Playthrough, names: Sequence[str]) -> None:
        self.pt = pt
        self.names = list(names)
        self.lines: list[str] = []
        self.events: dict[int, tuple[Event, ...]] = {}
        self.past: dict[int, tuple[HandResult, ...]] = {}

    def state(self, state: GameState) -> None:
        """The whole state, hidden cards included (what no single seat sees)."""
        hands = " | ".join(f"{s}: {_cards(state.hand(s))}" for s in range(state.n))
        stock = state.stock[state.stock_top :]
        close = "-" if state.close_discard is None else str(state.close_discard)
        self.lines += [
            f"state: hand {state.hand_no}, {state.phase.name}, to act {state.to_act}, "
            f"turn {state.turn}, scores {list(state.scores)}, closer {state.closer}, "
            f"face-down close discard {close}",
            f"  hands {hands}",
            f"  stock {len(stock)} (top first) {_cards(stock)}; pile (bottom first) {_cards(state.pile)}",
        ]

    def observations(self, state: GameState) -> None:
        obs = [observation(state, s, self.names) for s in range(state.n)]
        common: list[str] = []
        own: list[list[str]] = [[] for _ in obs]
        for name in Observation._fields:
            if name in ("seat", "events", "past_hands"):
                continue
            values = [getattr(o, name) for o in obs]
            if name == "rules" and all(v == self.pt.rules for v in values):
                continue
            if all(v == values[0] for v in values):
                common.append(f"{name}={_field(name, values[0])}")
            else:
                for s, v in enumerate(values):
                    own[s].append(f"{name}={_field(name, v)}")
        self.lines.append("  obs *: " + "; ".join(common))
        for s, o in enumerate(obs):
            if o.seat != s:  # pragma: no cover - the engine's own contract
                raise AssertionError(f"observation(state, {s}).seat is {o.seat}")
            if own[s]:
                self.lines.append(f"  obs {s}: " + "; ".join(own[s]))
        self._growing("events", [o.events for o in obs], self.events, _event)
        self._growing("past_hands", [o.past_hands for o in obs], self.past, _hand_result)

    def _growing(
        self,
        name: str,
        lists: list[tuple[Any, ...]],
        before: dict[int, tuple[Any, ...]],
        text: Callable[[Any], str],
    ) -> None:
        """A growing field: once for all seats (``obs *``) when every seat had and has
        the same list (public events, past hands), else seat by seat."""
        olds = [before.get(s, ()) for s in range(len(lists))]
        if all(v == lists[0] for v in lists) and all(v == olds[0] for v in olds):
            rows = [("*", olds[0], lists[0])]
        else:
            rows = [(str(s), olds[s], lists[s]) for s in range(len(lists))]
        for who, old, new in rows:
            for line in _growth(old, new, text):
                self.lines.append(f"  obs {who} {name} {line}")
        for s, v in enumerate(lists):
            before[s] = v


def render(pt: Playthrough) -> str:
    """The playthrough as the exact text of its golden file."""
    bots = pt.bots()
    names = [f"{b.name}-{i}" for i, b in enumerate(bots)]
    source = ShuffleSource(pt.seed, "playthrough")
    state = new_game(pt.rules)
    out = _Writer(pt, names)
    out.lines += [
        f"# Playthrough {pt.name}: {pt.note}",
        f"# Regenerate with: {REGENERATE}",
        f"rules: {pt.rules.to_dict(compact=True)!r}",
        f"seats: {', '.join(names)}",
        f"seed: {pt.seed!r}, deal id 'playthrough'; at most {pt.max_steps} steps",
    ]
    step = 0
    while not state.is_over and step < pt.max_steps:
        out.lines += ["", f"## step {step}"]
        out.state(state)
        out.observations(state)
        if state.is_chance:
            action: Any = source.chance(state)
            out.lines.append("legal: chance node")
            out.lines.append(f"chance: {action}")
            state = apply(state, action)
        else:
            seat = state.to_act
            legal = legal_actions(state)
            out.lines.append(f"legal (seat {seat}, {len(legal)}): " + " | ".join(map(str, legal)))
            action = bots[seat].choose(observation(state, seat, names), legal)
            out.lines.append(f"action: seat {seat} {action}")
            state = apply(state, action, seat=seat)
        step += 1
    out.lines += ["", f"## after {step} steps"]
    out.state(state)
    out.observations(state)
    if state.is_over:
        assert state.result is not None
        r = state.result
        out.lines.append(
            f"game over: {r.end.name}, winners {list(r.winners)}, totals {list(r.totals)}, "
            f"{r.hands_played} hands"
        )
    else:
        out.lines.append(f"stopped after {step} steps; the game goes on")
    return "\n".join(out.lines) + "\n"


def path_of(pt: Playthrough) -> Path:
    return HERE / f"playthrough_{pt.name}.txt"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for pt in PLAYTHROUGHS:
        text = render(pt)
        path = path_of(pt)
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({text.count(chr(10))} lines)")
    if stale:
        print("playthroughs out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
