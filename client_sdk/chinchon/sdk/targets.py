"""Several referee addresses: one channel, one queue stream, one :class:`BotClient` each.

Several ``chinchon serve`` processes may share one database and its tournaments; a game
is played by the process that holds an idle stream of every seat's bot, so a bot holds a
stream on every process. gRPC carries all the streams of a channel on one connection
(to one address), hence one channel per address. The clients run together on one event
loop and share the bot: its ``choose`` answers each stream's requests in turn, and what
the SDK keeps per game (seats, players, the lean decoder) is per client, so two games at
once on two streams never mix.

Each address reconnects by itself (``reconnect_for``, as with one); one that stays
unreachable gives up alone, with a warning, and the others play on. The run ends when
every stream has ended; a fatal refusal on any address (bad or revoked token, bad
request) ends it at once with :class:`FatalError` naming the address; if every address
gave up unreachable, :class:`Unreachable`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from .client import BotClient, BotLike, PracticeOptions, SessionReport, Unreachable

log = logging.getLogger("chinchon.sdk")


def parse_targets(target: str | Sequence[str]) -> list[str]:
    """The referee addresses of ``target``: one HOST:PORT, several separated by commas
    (``"a:50051,b:50051"``), or a sequence of them. ValueError for an empty address, an
    address given twice, or none at all."""
    given = [target] if isinstance(target, str) else list(target)
    found = [part.strip() for item in given for part in item.split(",")]
    if not found or any(not t for t in found):
        raise ValueError(f"an empty referee address in {','.join(given)!r}: "
                         "give HOST:PORT or HOST:PORT,HOST:PORT,...")
    for i, t in enumerate(found):
        if t in found[:i]:
            raise ValueError(f"the referee address {t} is given twice")
    return found


def combined(reports: Mapping[str, SessionReport]) -> SessionReport:
    """One report summing those of several addresses (kept in ``by_target``)."""
    total = SessionReport(by_target=dict(reports))
    for r in reports.values():
        total.games += r.games
        total.wins += r.wins
        total.results.extend(r.results)
        total.rejected.extend(r.rejected)
        total.defaults.extend(r.defaults)
        total.errors.extend(r.errors)
        total.decisions += r.decisions
        total.reconnects += r.reconnects
        total.accepted += r.accepted
        total.think_time += r.think_time
        total.superseded += r.superseded
        if total.dismissed is None:
            total.dismissed = r.dismissed
    return total


async def run_clients(clients: Sequence[BotClient]) -> SessionReport:
    """Run the clients together until each has ended (see the module's docstring). One
    client: its :meth:`BotClient.run`, exactly. Raises the first :class:`FatalError`
    that is not :class:`Unreachable` (the other clients are stopped), or
    :class:`Unreachable` when every address gave up."""
    if len(clients) == 1:
        return await clients[0].run()
    tasks: dict[asyncio.Future[SessionReport], BotClient] = {
        asyncio.ensure_future(c.run()): c for c in clients}
    unreachable: list[str] = []
    try:
        pending: set[asyncio.Future[SessionReport]] = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                error = task.exception()
                if isinstance(error, Unreachable):
                    unreachable.append(tasks[task].target)
                    tasks[task].report.unreachable = True
                    log.warning("%s; giving up on that address (%d of %d still played)",
                                error, len(pending), len(clients))
                elif error is not None:
                    raise error
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if len(unreachable) == len(clients):
        raise Unreachable(f"cannot reach the referee at any of {', '.join(unreachable)}")
    return combined({c.target: c.report for c in clients})


def run_bot(
    bot: BotLike,
    target: str | Sequence[str],
    token: str,
    *,
    practice: PracticeOptions | None = None,
    root_cert: bytes | None = None,
    tls: bool = False,
    reconnect_for: float = 60.0,
    lean: bool = True,
) -> SessionReport:
    """Blocking helper: play with ``bot`` (an object with ``choose`` or a plain function,
    see :func:`chinchon.sdk.as_chooser`) until the referee ends the session (``lean``:
    see :attr:`BotClient.lean`; ``tls``, ``root_cert``: see :attr:`BotClient.tls`).

    ``target`` is one referee address (HOST:PORT), several separated by commas, or a
    sequence of them: with several, one stream per address (see the module's
    docstring); their report sums theirs. Practice is played on one referee: ValueError
    with several addresses (and for a malformed list, see :func:`parse_targets`)."""
    targets = parse_targets(target)
    if practice is not None and len(targets) > 1:
        raise ValueError(f"practice is played on one referee: give one address, not {len(targets)}")
    clients = [BotClient(bot, t, token, practice=practice, root_cert=root_cert, tls=tls,
                         reconnect_for=reconnect_for, lean=lean) for t in targets]
    return asyncio.run(run_clients(clients))
