"""The feed from the referee to its web view: one JSON object per line, over a Unix
stream socket (an inherited socket pair, or a 0600 socket file for a web process run
apart). The referee writes; the web process writes only ``ready``.

=========  ====================================================================
``hello``  first: ``boot`` (the referee's), ``admin`` (the admin token's SHA-256, or
           null: no full view), ``delay`` (the full view's), ``sharing`` (a shared
           database); to a child only: ``web`` (its settings), ``db``, ``log``
``g``      a game started: ``g`` id, ``t`` tournament, ``p`` names, ``r`` rules,
           ``tc`` [per move, bank], ``ms`` max strikes, ``remote`` per seat,
           ``practice``, ``at``
``s``      its new record actions ``a`` from index ``n``, marks ``m`` (step -> illegal
           answers before it), seats ``s`` [bank, strikes, illegal, timeouts],
           ``since`` (when the last step was played)
``e``      the game ``g`` ended (or is no longer followed)
``l``      the bots' streams here: ``bots`` [[name, streams, seated, idle], ...]
``c``      sharing the database: the other processes' web views ``urls`` (owner ->
           URL) and their bots' streams ``elsewhere`` (bot -> [streams, seated, idle])
``ready``  (web -> referee) serving: ``pid``
=========  ====================================================================

The feed carries every card of the games in progress (the deals are record actions):
it is as secret as the database, and its socket is readable by its owner only."""

from __future__ import annotations

import json
from typing import Any

#: The longest line a reader accepts (a message holds at most MAX_ACTIONS actions).
LINE_LIMIT = 16 * 1024 * 1024
#: Record actions per ``s`` message, at most.
MAX_ACTIONS = 256


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
