"""The SDK's warnings name where they happened (for a bot author debugging a lost
game at 2 a.m.): the game, the hand, the turn and phase, the request and attempt, and
what the bot sent, for a refused answer and for a default the referee played. A real
referee on port 0; the bot runs in-process (the log's text is the point, not the
process boundary)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence

import pytest
from chinchon.engine import Action, Discard, Observation, Phase
from chinchon.sdk import BotClient, PracticeOptions
from chinchon_referee.service.server import RunningServer

from tests.support.helpers import bot_token


class OnceWrong:
    """Answers the first draw with a discard (wrong phase: refused), then plays legally;
    with ``slow``, sleeps past its clock once, on its first discard, for a default."""

    def __init__(self, slow: float = 0.0) -> None:
        self.wrong: tuple[int, int] | None = None
        self.late: tuple[int, int] | None = None
        self.slow = slow

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if self.wrong is None and obs.phase is Phase.DRAW:
            self.wrong = (obs.hand_no, obs.turn)
            return Discard(obs.hand[0])
        if self.slow and self.late is None and obs.phase is Phase.DISCARD:
            self.late = (obs.hand_no, obs.turn)
            time.sleep(self.slow)  # the referee's clock runs out meanwhile
        return legal[0]


@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_a_refused_answer_is_logged_with_its_game_and_step(
    server: RunningServer, caplog: pytest.LogCaptureFixture,
) -> None:
    bot = OnceWrong()
    client = BotClient(bot, server.target, bot_token("alice"), game_lines=False,
                       practice=PracticeOptions(opponent="random", games=1, seed="warn"))
    with caplog.at_level(logging.WARNING, logger="chinchon.sdk"):
        report = await client.run()
    assert report.games == 1 and len(report.rejected) == 1
    game_id = report.results[0].game_id
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1, caplog.text
    assert bot.wrong is not None
    hand, turn = bot.wrong
    m = re.fullmatch(rf"game {re.escape(game_id)}, hand {hand}, turn {turn} \(draw\), "
                     rf"request (\d+), attempt 0, our answer 'discard \S+': refused "
                     rf"\((\w+)\): .+; (\d+) retries left", refused[0])
    assert m, refused[0]
    assert int(m.group(1)) == report.rejected[0].request_id
    assert m.group(2) == report.rejected[0].error.violation


@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_a_default_the_referee_played_is_logged_with_its_game_and_step(
    server: RunningServer, caplog: pytest.LogCaptureFixture,
) -> None:
    bot = OnceWrong(slow=1.5)
    client = BotClient(bot, server.target, bot_token("alice"), game_lines=False,
                       practice=PracticeOptions(opponent="random", games=1, seed="late",
                                                per_move=0.3, bank=0.2))
    with caplog.at_level(logging.WARNING, logger="chinchon.sdk"):
        report = await client.run()
    assert report.games == 1 and len(report.defaults) >= 1
    game_id = report.results[0].game_id
    played = [r.getMessage() for r in caplog.records if "played" in r.getMessage()]
    assert bot.late is not None
    hand, turn = bot.late
    m = re.match(rf"game {re.escape(game_id)}, hand {hand}, turn {turn} \(discard\), "
                 rf"request (\d+), attempt 0(, our answer '[^']+')?: the referee played "
                 rf"'[^']+' for us \(timeout\), strike 1 of \d+$", played[0] if played else "")
    assert m, caplog.text
    assert int(m.group(1)) == report.defaults[0].request_id
