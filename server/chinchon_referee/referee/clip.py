"""Bounding what a bot wrote before the referee keeps it, logs it or sends it back.

Error messages quote the bot's input (``'<60 KB of text>' is not a card: write rank
1-12...``); the referee keeps such messages in its incident list, writes them to its log
and returns them in-band. Each is clipped first to its beginning and its end (where the
explanation usually is), saying how much was left out, so a bot's text costs the
referee a bounded amount whatever it sends.
"""

from __future__ import annotations

#: The most characters of a message quoting a bot's input that the referee keeps.
MAX_QUOTED = 200
#: What the mark of a cut adds at most (``… (N characters left out) …``).
MARK_SPACE = 40
_TAIL = 80


def clip(text: str, limit: int = MAX_QUOTED) -> str:
    """``text`` when it is at most ``limit + MARK_SPACE`` characters long; otherwise its
    first and last characters (``limit`` in all) around a mark saying how many were left
    out. Clipping a clipped text changes nothing."""
    if len(text) <= limit + MARK_SPACE:
        return text
    tail = min(_TAIL, limit // 2)
    head = limit - tail
    cut = len(text) - limit
    return f"{text[:head]}… ({cut} characters left out) …{text[len(text) - tail:]}"
