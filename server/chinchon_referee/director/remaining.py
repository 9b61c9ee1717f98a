"""Which bots the tournaments still need, and dismissing those they do not.

A bot is needed while a tournament of the referee has a game left for it: a running
tournament, until each of the bot's games in it is finished (a game voided to be played
again still counts); a scheduled one (not started yet), whatever it holds. When a bot's
last game in a tournament is played, or the tournament ends (finished or cancelled),
and no other tournament needs it, its queue streams are dismissed
(``PlayResponse.dismissed``, then the stream ends with OK: referee/dismissal.py), and so
is any queue stream of it that comes to the lobby later, until a tournament needs it
again. A bot no tournament of this referee has ended for (one that connected before its
tournament was created) is never dismissed: it waits.

Driven by the director's events (a tournament is declared or runs, a game is finished,
a tournament ends); the store's list of tournaments is read once, when the referee
starts, never on the event loop after that, nor per stream (a dismissed bot reconnecting
in a loop costs a dictionary look-up).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..logs import get_logger
from ..referee import Lobby
from ..referee.dismissal import Dismissal, DismissReason
from ..storage import GameRow, Store

log = get_logger("remaining")


def participants(spec: dict[str, Any]) -> set[str]:
    """The bots of a stored tournament (its spec as ``TournamentSpec.to_dict`` wrote it)."""
    return {str(p.get("name", "")) for p in spec.get("participants", []) if isinstance(p, dict)}


class Remaining:
    """Games left per bot across one director's tournaments; dismisses the bots that
    have none (through ``lobby``, whose :attr:`Lobby.dismissal` it answers)."""

    def __init__(self, store: Store, lobby: Lobby) -> None:
        self._store = store
        self._lobby = lobby
        #: Running tournaments: bot -> its games not finished yet.
        self._left: dict[str, Counter[str]] = {}
        #: Bots dismissed, and why: a queue stream of theirs is dismissed on arrival.
        self._gone: dict[str, Dismissal] = {}
        #: The bots of each tournament not over: read from the store once, here, then
        #: kept up to date by the events below (never read again on the event loop).
        self._open: dict[str, set[str]] = {}
        #: Running tournaments of a format: the bots it may still give games to.
        self._held: dict[str, set[str]] = {}
        self.reload()
        lobby.dismissal = self.dismissal_for

    def reload(self) -> None:
        """Read the tournaments not over from the store (in the caller's thread: at
        start-up, or after a tournament was marked over directly in the store)."""
        self._open = {row.id: participants(row.spec) for row in self._store.tournaments()
                      if not row.status.over}

    def declared(self, tid: str, bots: Iterable[str]) -> None:
        """Tournament ``tid`` of ``bots`` was declared (here, or through another process
        of a shared database): it may need bots that were dismissed. Safe to call from
        a worker thread."""
        self._open[tid] = set(bots)

    def track(self, tid: str, games: Iterable[GameRow], hold: Iterable[str] = ()) -> None:
        """Tournament ``tid`` runs, with ``games`` still to be finished; ``hold``: bots
        its format may still give games to that are not created yet (a Swiss's next
        round, a bracket's next match): they wait, never dismissed meanwhile. Called
        again as a format's games are created: a bot no longer held (out of a bracket,
        not passed on to the next stage) with no game left is dismissed."""
        left: Counter[str] = Counter()
        for g in games:
            left.update(g.players)
        was = self._held.get(tid, set())
        self._left[tid] = left
        self._held[tid] = set(hold)
        for bot in [*left, *self._held[tid]]:
            self._gone.pop(bot, None)
        for bot in sorted(was - self._held[tid] - set(left)):
            self._release(bot, Dismissal(
                DismissReason.GAMES_PLAYED, tid,
                f"your games in tournament {tid} are all played (you are out of it) and "
                "no other tournament has a game for you: goodbye"))

    def played(self, tid: str, players: Sequence[str]) -> None:
        """A game of ``tid`` between ``players`` is finished (recorded for good)."""
        left = self._left.get(tid)
        if left is None:
            return
        for bot in players:
            left[bot] -= 1
            if left[bot] <= 0:
                del left[bot]
                self._release(bot, Dismissal(
                    DismissReason.GAMES_PLAYED, tid,
                    f"your games in tournament {tid} are all played and no other "
                    "tournament has a game for you: goodbye"))

    def ended(self, tid: str, bots: Iterable[str], cancelled: bool) -> None:
        """Tournament ``tid`` (of ``bots``) finished, or was cancelled (its status is
        stored already)."""
        self._left.pop(tid, None)
        self._held.pop(tid, None)
        self._open.pop(tid, None)
        if cancelled:
            why = Dismissal(DismissReason.TOURNAMENT_CANCELLED, tid,
                            f"tournament {tid} was cancelled and no other tournament has "
                            "a game for you: goodbye")
        else:
            why = Dismissal(DismissReason.GAMES_PLAYED, tid,
                            f"tournament {tid} finished and no other tournament has a "
                            "game for you: goodbye")
        for bot in bots:
            self._release(bot, why)

    def holds(self, tid: str) -> bool:
        """Whether bots are still kept for ``tid`` here (its end not yet heard)."""
        return tid in self._left or tid in self._held or tid in self._open

    def dismissed(self, bot: str) -> bool:
        """Whether ``bot`` was dismissed (told it has no game left) and not needed since."""
        return bot in self._gone

    def dismissal_for(self, bot: str) -> Dismissal | None:
        """Why ``bot``'s queue stream arriving in the lobby is dismissed, or None."""
        why = self._gone.get(bot)
        if why is None:
            return None
        if self._needed(bot):  # a tournament created since has games for it
            del self._gone[bot]
            return None
        return why

    def _release(self, bot: str, why: Dismissal) -> None:
        if self._needed(bot):
            return
        self._gone[bot] = why
        n = self._lobby.dismiss(bot, why)
        log.info("bot_dismissed", bot=bot, tournament=why.tournament_id,
                 reason=why.reason.value, streams=n)

    def _needed(self, bot: str) -> bool:
        if any(left.get(bot) for left in self._left.values()):
            return True
        if any(bot in held for held in list(self._held.values())):
            return True
        return any(tid not in self._left and bot in bots
                   for tid, bots in list(self._open.items()))
