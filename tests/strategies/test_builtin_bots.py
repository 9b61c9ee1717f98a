"""One registry of built-in bots (chinchon.strategies.builtin): the referee's house bots,
``chinchon demo --bots`` and ``python -m chinchon.sdk --bot NAME`` all build them there."""

from __future__ import annotations

import pytest
from chinchon.engine import GreedyBot, RandomBot
from chinchon.sdk.__main__ import load_bot
from chinchon.strategies import BUILTIN_BOTS, StrongBot, make_bot
from chinchon_referee import cli
from chinchon_referee.referee.house import HOUSE_BOTS, make_house_bot

KINDS = {"random": RandomBot, "greedy": GreedyBot, "strong": StrongBot}


def test_the_house_bots_the_demo_and_the_sdk_read_one_registry() -> None:
    assert HOUSE_BOTS is BUILTIN_BOTS
    assert {k: type(f(0)) for k, f in BUILTIN_BOTS.items()} == KINDS
    for kind, cls in KINDS.items():
        assert type(make_house_bot(kind, 3).bot) is cls
        assert type(load_bot(kind)) is cls
        assert type(make_bot(kind, 3)) is cls


def test_unknown_names_are_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown built-in bot 'nope': choose random, greedy, strong"):
        make_bot("nope")
    with pytest.raises(ValueError, match="unknown house bot 'nope': choose random, greedy, strong"):
        make_house_bot("nope", 0)


def test_the_demo_plays_every_built_in_bot(capsys: pytest.CaptureFixture[str]) -> None:
    """``chinchon demo`` knew only greedy and random; it takes the strong bot too."""
    assert cli.main(["demo", "--bots", "strong", "greedy", "--seed", "s"]) == 0
    assert "strong-0" in capsys.readouterr().out
