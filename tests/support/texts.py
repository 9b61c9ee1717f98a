"""Hypothesis strategies of texts an organizer might type, for the text rules' tests."""

from __future__ import annotations

from hypothesis import strategies as st

#: Any text, the characters that matter drawn often: NUL, ESC, newlines, tabs, the
#: bidirectional overrides and isolates, zero-width and other spaces, surrogates are
#: left to st.text (it draws from every category).
TRICKY = st.sampled_from(["\x00", "\x1b", "\n", "\r", "\t", "\u202e", "\u202a", "\u2066",
                          "\u2069", "\u200b", "\u200d", "\u2028", "\u2029", "\x85", "\xa0",
                          "\u3000", " ", "\ufeff", "\U000e0001", "\ue000", "a", "Z", "é",
                          "\u0430", "-", ".", "_", "~", "'", "\\"])
TEXT = st.lists(st.one_of(TRICKY, st.characters()), max_size=80).map("".join) | st.text()
