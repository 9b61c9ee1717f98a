"""Running tournaments durably on a referee: declaring one, choosing and seating each next
game, every game row through its life, absent bots, which bots are still needed, the
live events, and what the director hears from the other processes sharing the database."""
