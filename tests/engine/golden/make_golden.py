"""Write the golden game records of tests/engine/golden/*.json.

    python tests/engine/golden/make_golden.py          # rewrite every golden file
    python tests/engine/golden/make_golden.py --check  # exit 1 if a file would change

Each golden game is a complete game between engine bots with a fixed seed. The test
suite (tests/engine/test_engine_golden.py) replays each file and plays each game again,
requiring byte-identical JSON: any change of the engine's behaviour shows up as a
diff here. Regenerate only when a change of behaviour is intended, and say so in the
commit message.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from chinchon.engine import Bot, GreedyBot, RandomBot, RuleSet, play_game
from chinchon.engine.record import dumps

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Golden:
    name: str
    rules: RuleSet
    bots: Callable[[], list[Bot]]
    seed: str
    note: str


GAMES: tuple[Golden, ...] = (
    Golden(
        "default_greedy_vs_random",
        RuleSet(),
        lambda: [GreedyBot(), RandomBot(1)],
        "golden-default-1",
        "default rules, greedy vs random; a -10 close in hand 3",
    ),
    Golden(
        "jokers2_3players",
        RuleSet(players=3, jokers=2),
        lambda: [GreedyBot(), RandomBot(1), GreedyBot()],
        "golden-jokers3p-2",
        "two jokers, three players: lay-offs, lay-downs, two -10 closes",
    ),
    Golden(
        "deck48",
        RuleSet(deck=48),
        lambda: [GreedyBot(), GreedyBot()],
        "golden-deck48-3",
        "48-card deck, greedy vs greedy; the stock runs out once (a reshuffle)",
    ),
    Golden(
        "retake_close2",
        RuleSet(retake_discard=True, close_max_unmatched=2),
        lambda: [RandomBot(7), GreedyBot()],
        "golden-retake-5",
        "retake_discard on, close_max_unmatched = 2; single lay-offs",
    ),
)


def render(game: Golden) -> str:
    """The record of the game as the exact text of its golden file."""
    _, record = play_game(game.rules, game.bots(), game.seed, "golden", game_id=game.name)
    record["labels"] = {"golden": game.note}
    return dumps(record) + "\n"


def path_of(game: Golden) -> Path:
    return HERE / f"{game.name}.json"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for game in GAMES:
        text = render(game)
        path = path_of(game)
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print("golden records out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
