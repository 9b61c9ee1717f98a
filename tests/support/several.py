"""One bot on two independent referees at once (no tests here): each referee is an
in-process server with its own director and SQLite store (the ``envs`` fixture), runs a
small tournament of the bot under test against an opponent connected to it alone, and
the bot, started once with both addresses, plays both to the end."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from chinchon_referee.launch.bots import bot_environment
from chinchon_referee.tournament.model import TournamentSpec

from tests.support.fixture_types import SpawnBot, SpawnChild, StartEnv
from tests.support.helpers import BotProc, bot_token
from tests.support.inproc import sdk
from tests.support.tournament import InProcess, spec_dict


@dataclass
class Side:
    """One referee, its tournament and the opponent there."""

    env: InProcess
    tid: str
    opponent: str
    games: int

    @property
    def target(self) -> str:
        return self.env.server.target

    def unplayed(self) -> list[str]:
        """The tournament's games not played to their end (forfeited, not finished...),
        with how they ended."""
        return [f"{g.id}: {g.result.termination if g.result else g.status}"
                for g in self.env.store.games(self.tid)
                if g.result is None or not g.result.termination.played]


async def two_referees(envs: StartEnv, bots: SpawnBot, name: str, games: int = 2,
                       sides: Sequence[str] = ("a", "b")) -> list[Side]:
    """Referees ``sides``, each with a tournament of ``games`` games between ``name`` and
    ``opp-SIDE`` (a greedy SDK bot, connected to that referee only); ``name`` has the
    same token on each."""
    out = []
    for side in sides:
        env = await envs(side)
        opponent = f"opp-{side}"
        tid, _ = env.director.create(TournamentSpec.from_dict(spec_dict(
            f"{side}-cup", [name, opponent], games_per_pairing=games, concurrency=1)))
        await bots(sdk("greedy"), env.server, opponent)
        out.append(Side(env, tid, opponent, games))
    return out


async def start_bot(children: SpawnChild, command: Sequence[str], name: str,
                    targets: str | None) -> BotProc:
    """The bot under test: ``command``, its token in CHINCHON_TOKEN; ``targets`` in
    CHINCHON_TARGET (None: the command says ``--target``)."""
    env = bot_environment(targets or "", bot_token(name))
    if targets is None:
        del env["CHINCHON_TARGET"]
    return await children(list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


async def connected(sides: Sequence[Side], name: str) -> None:
    """Both the bot and each side's opponent wait in that side's lobby."""
    for side in sides:
        assert await side.env.server.referee.lobby.wait_all([name, side.opponent], 120), \
            f"{name} or {side.opponent} not connected to {side.target}"


async def play_both(sides: Sequence[Side], name: str, bot: BotProc) -> None:
    """Run every side's tournament at once to its end: every game played (none
    forfeited), then the bot, dismissed by each referee, exits 0 by itself."""
    await connected(sides, name)
    await asyncio.wait_for(asyncio.gather(
        *(s.env.director.run(s.tid, force_start=True) for s in sides)), 60)
    for side in sides:
        assert len(side.env.store.games(side.tid)) == side.games, side.target
        assert side.unplayed() == [], side.target
    assert await bot.wait(15) == 0, "".join(bot.err)
