"""Declaring a tournament: its schedule stored (a round-robin's whole, a format's first
games: the others are created as they come due, director/planner.py), its bots' tokens
registered."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator

from ..auth import TokenBook, digest, new_token
from ..logs import get_logger
from ..storage import GameRow, Store, TournamentRow
from ..tournament.model import Participant, SpecError, TournamentSpec
from ..vocabulary import TournamentStatus
from .planner import first_games

log = get_logger("director")


def declare(store: Store, tokens: TokenBook, spec: TournamentSpec, tid: str | None = None, *,
            replace_tokens: bool = False) -> tuple[str, list[Participant]]:
    """Store a tournament and its schedule (a format's first games); register the new bots' tokens.

    Returns the id and the participants with their tokens: generated ones are shown
    only here; a bot already registered keeps its token (returned empty). Refuses
    (SpecError, nothing stored) a schedule larger than MAX_GAMES, a token that is the
    admin token or another bot's, and a token for a registered bot that differs from
    its registered one (an organizer rotates a token on purpose, RotateBotToken).
    ``replace_tokens``: the caller launches the bots itself and gives every token
    (``tournament run``, on its own database): registered bots take them. Safe to call
    from a worker thread: the store is written in short transactions, so the event
    loop's own store calls are never held up for long."""
    spec = spec.with_seed()
    tid = tid or f"t-{uuid.uuid4().hex[:10]}"
    registered = dict(store.bots())
    for p in spec.participants:
        if not p.token:
            continue
        if tokens.is_admin(p.token):
            raise SpecError(f"participants: {p.name}'s token is the admin token "
                            "(a bot must never hold admin rights)")
        holder = tokens.holder(digest(p.token))
        if holder is not None and holder != p.name:
            raise SpecError(f"participants: {p.name}'s token is already the token of "
                            f"bot {holder} (each bot needs its own)")
        known = registered.get(p.name)
        if known is not None and known != digest(p.token) and not replace_tokens:
            raise SpecError(f"participants: {p.name} is registered with another token; "
                            "leave its token out to keep the registered one, or rotate it "
                            f"on purpose (chinchon admin bots rotate {p.name})")
    parts = [
        Participant(p.name, p.token or ("" if p.name in registered else new_token()),
                    p.command, p.instances)
        for p in spec.participants
    ]
    try:
        games = first_games(spec, tid)  # a round-robin's whole schedule, a format's first games
    except ValueError as e:
        raise SpecError(str(e)) from None
    counted = _Counted(games)
    stored = spec.to_dict(with_secrets=True)
    for p in stored["participants"]:
        p.pop("token", None)  # only digests are kept
    store.create_tournament(
        TournamentRow(tid, spec.name, stored, TournamentStatus.SCHEDULED, time.time()), counted
    )
    for p in parts:
        if not p.token:
            continue  # registered: keeps its token
        if p.name not in registered:
            store.add_bot(p.name, digest(p.token))
        elif replace_tokens:
            store.set_bot_token(p.name, digest(p.token))
            tokens.remove(p.name)
        tokens.add(p.name, p.token)
    log.info("tournament_created", tournament=tid, name=spec.name, games=counted.n,
             format=[str(s.kind) for s in spec.format.stages])
    return tid, parts


class _Counted:
    """The games stored, counted as they go by (a schedule may be a generator)."""

    def __init__(self, games: Iterable[GameRow]) -> None:
        self._games = games
        self.n = 0

    def __iter__(self) -> Iterator[GameRow]:
        for g in self._games:
            self.n += 1
            yield g
