"""The shuffle keys of practice games: repeatable for the author, unknown to the bot.

A practice ``seed`` (``PracticeRequest.seed``) is not the shuffle key: the key is
HMAC-SHA256 under a secret of the referee over the seed and the names of the two
players, so

* the same seed, the same players and the same referee give the same deals (a bot's
  author repeats a session exactly);
* a bot cannot compute a deal from its seed (it does not hold the referee's secret),
  and what it learns in a session with one partner says nothing about the deals it
  gets with another (a practice partner of the same seed gets other deals);
* no seed: a fresh random key, never used again.

Every game of a session has its own deal (practice deals are never replayed), so the
record a bot receives at the end of a game reveals no deal still to come.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence

_SECRET_BYTES = 32


def new_practice_secret() -> bytes:
    return secrets.token_bytes(_SECRET_BYTES)


def practice_key(secret: bytes, seed: str, players: Sequence[str]) -> str:
    """The shuffle key of a practice session (``seed`` as the bot gave it, "" for none;
    ``players``: the bot names, house bots as ``house:<kind>``, in any order)."""
    if not seed:
        return secrets.token_hex(_SECRET_BYTES)
    label = "\x00".join(["practice", seed, *sorted(players)]).encode()
    return hmac.new(secret, label, hashlib.sha256).hexdigest()


def practice_deal_id(game_no: int) -> str:
    """The deal of a session's ``game_no``-th game (1, 2, ...): one deal per game."""
    return f"practice/{game_no}"
