"""The standing ladder: bots enter at any time, are seated again and again
against bots close in rating while its window is open, and a leaderboard lives across
days.

The pure core: :mod:`.spec` (the declaration and its TOML codec), :mod:`.ratings`
(openskill's Plackett-Luce model, one update per finished game), :mod:`.matchmaking`
(the next tables, as a function of the idle bots, their ratings and their last games)
and :mod:`.leaderboard` (the ratings ordered by a conservative estimate). Beside it, with
I/O: :mod:`.store` (the ladder's rows, a rating update per game in the transaction that
finishes it), :mod:`.reads` (a ladder's leaderboard read from the store alone: also
the organizer's worker's) and :mod:`.runner` (seating the connected idle bots on a
referee).
docs/ladder.md says the rule, its parameters and why.
"""
