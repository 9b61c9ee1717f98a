"""StrongBot: a Chinchón bot that plays well enough to beat GreedyBot clearly.

Strategy (one-ply expectation, no tree search):

* **Card tracking.** From its own hand, the discard pile, the table and this hand's
  public events it knows which cards are *seen* (its hand, the pile, which is dead
  until a reshuffle, the table) and which cards each opponent *holds for sure* (taken
  from the pile and not discarded since). The rest is the *pool*: the stock plus the
  opponents' unknown cards.
* **Opponent model.** Each pool card gets a probability of being in an opponent's
  hand: the unknown hand size spread over the pool, raised for cards that fit the
  cards an opponent took from the pile (same rank, or same suit within two places)
  and lowered for cards that fit what it discarded or passed over (it drew from the
  stock while that card was on top). The chance that the next stock card is a given
  card is the chance that it is not in an opponent's hand.
* **Hand value.** A seven-card hand is valued by a one-ply expectation over the pool:
  for every card the next stock draw may bring, the best result after drawing it
  (closing, scored by its bonus and points, or else the least unmatched points after
  the best discard), weighted by that card's chance. Cards that would complete melds
  (outs) raise the value; dead cards count for nothing. From that it subtracts the
  current unmatched points (more when they would put it out of the game) times the
  chance that the opponent closes before our next turn (growing with the opponent's
  turns and pick-ups), and, for a discard, the risk of feeding the next player: the
  chance that the card completes a meld with cards the opponent is likely to hold (set
  mates, run neighbours; certain for cards it took from the pile). Equal discards are
  told apart by the bot's own ``random.Random(seed)``.
* **Draw.** Takes the pile's top card when it lets it close, or when the best hand
  after taking it (and discarding the best card) is worth more than keeping the hand
  plus the expected gain of a random stock card.
* **Close.** Closes when allowed, choosing the best bonus, then the fewest points.
  With a close worth points, it waits a turn only when the hand stays closable, the
  chance of drawing a -10 (or a chinchón, which wins the game) is good, and the
  opponent is unlikely to close first. It never waits when closing now should put the
  opponent out of the game.
* **Lay-off / lay-down.** The engine's ``layoff best`` and ``laydown best``.

Everything is exact deadwood from the engine's solver tables, sped up with per-suit
tables of its own (the best discard of an eight-card hand is four look-ups per way of
taking sets out, and so is whether it can close), so a decision takes about half a
millisecond of CPU on average. ``strict=True`` makes internal errors raise (tests);
otherwise the bot falls back to a safe legal action. Weights are class attributes and
may be overridden by keyword, e.g. ``StrongBot(seed, feed_w=8)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from chinchon.engine import (
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    Action,
    Close,
    Discard,
    Observation,
    Phase,
    RuleSet,
    cards_of,
    deck_cards,
    make_card,
    mask_of,
    solver_for,
)

INF = 1 << 20
_BONUS_NONE, _BONUS_MINUS10, _BONUS_MINUS25, _BONUS_MINUS50, _BONUS_CHINCHON = range(5)


class _Tables:
    """Per-rule-set precomputation: suit tables, card points, card relations."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.solver = solver_for(rules)
        # Wild cards (a rule set's wild_cards): the bot thinks in the solver's numbering,
        # where each wild card is a joker number (48, 49); ``to`` moves a mask there and
        # ``back`` gives the card of such a number. Without wild cards both are identity.
        self.to = self.solver.to_slots
        self.back = self.solver.card_from_slot
        t0 = self.solver.t0
        self.t0 = t0
        self.drop1 = _drop_one(t0)
        self.o1, self.o2 = _closing_cards(t0, rules.rank_points)
        self.deck_mask = self.to(mask_of(deck_cards(rules.deck, rules.jokers)))
        self.pts = [rules.card_points(c) if c < 48 else rules.joker_points for c in range(50)]
        ranks = rules.ranks
        n = len(ranks)
        self.set_mates: list[tuple[int, ...]] = [()] * 50
        self.run_pairs: list[tuple[tuple[int, int], ...]] = [()] * 50
        self.related: list[int] = [0] * 50
        for i, r in enumerate(ranks):
            for s in range(4):
                c = make_card(r, s)
                mates = tuple(make_card(r, t) for t in range(4) if t != s)
                pairs = []
                for a, b in ((i - 2, i - 1), (i - 1, i + 1), (i + 1, i + 2)):
                    if 0 <= a < n and 0 <= b < n:
                        pairs.append((make_card(ranks[a], s), make_card(ranks[b], s)))
                self.set_mates[c] = mates
                self.run_pairs[c] = tuple(pairs)
                rel = mask_of(mates)
                for a, b in pairs:
                    rel |= 1 << a | 1 << b
                self.related[c] = rel


def _drop_one(t0: list[int]) -> list[int]:
    """drop1[p]: least change of the run-only unmatched points of suit pattern p when
    one of its cards is removed (INF for an empty pattern)."""
    drop = [INF] * 4096
    for p in range(1, 4096):
        base = t0[p]
        if base >= INF:
            continue
        best = INF
        q = p
        while q:
            low = q & -q
            v = t0[p ^ low]
            if v < best:
                best = v
            q ^= low
        drop[p] = best - base
    return drop


def _closing_cards(t0: list[int], rp: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """For closing: o1[p] = least points of a card whose removal leaves suit pattern p
    all in runs; o2[p] = least points of the cheaper card of a pair whose removal does
    (INF when there is none)."""
    o1 = [INF] * 4096
    o2 = [INF] * 4096
    for p in range(1, 4096):
        if t0[p] >= INF:
            continue
        bits = [1 << i for i in range(12) if p >> i & 1]
        for i, x in enumerate(bits):
            px = rp[x.bit_length() - 1]
            if t0[p ^ x] == 0 and px < o1[p]:
                o1[p] = px
            for u in bits[i + 1 :]:
                if t0[p ^ x ^ u] == 0:
                    m = min(px, rp[u.bit_length() - 1])
                    if m < o2[p]:
                        o2[p] = m
    return o1, o2


_TABLES: dict[RuleSet, _Tables] = {}


def _tables(rules: RuleSet) -> _Tables:
    t = _TABLES.get(rules)
    if t is None:
        t = _TABLES[rules] = _Tables(rules)
    return t


# For each nibble of suits holding a rank: the nibbles of the sets it can give (3 or 4).
_SET_SUBS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sub for sub in range(16) if sub & nib == sub and sub.bit_count() >= 3) for nib in range(16)
)


def _min_sets(t0: list[int], a: int, b: int, c: int, d: int, cand: int) -> int:
    """Least unmatched points (no jokers), ``cand`` = ranks held in three suits or more.

    Each such rank is left alone or gives a natural set (any 3 of its suits, or all 4);
    the rest is scored by the per-suit run tables.
    """
    r = cand & -cand
    rest = cand ^ r
    best = _min_sets(t0, a, b, c, d, rest) if rest else t0[a] + t0[b] + t0[c] + t0[d]
    nib = (1 if a & r else 0) | (2 if b & r else 0) | (4 if c & r else 0) | (8 if d & r else 0)
    for sub in _SET_SUBS[nib]:
        a2 = a & ~r if sub & 1 else a
        b2 = b & ~r if sub & 2 else b
        c2 = c & ~r if sub & 4 else c
        d2 = d & ~r if sub & 8 else d
        if rest:
            v = _min_sets(t0, a2, b2, c2, d2, rest)
        else:
            v = t0[a2] + t0[b2] + t0[c2] + t0[d2]
        if v < best:
            best = v
    return best


def _min_sets_drop(t0: list[int], dr: list[int], a: int, b: int, c: int, d: int, cand: int) -> int:
    """Like :func:`_min_sets` for eight cards, after discarding the best card."""
    r = cand & -cand
    rest = cand ^ r
    if rest:
        best = _min_sets_drop(t0, dr, a, b, c, d, rest)
    else:
        best = t0[a] + t0[b] + t0[c] + t0[d] + min(dr[a], dr[b], dr[c], dr[d])
    nib = (1 if a & r else 0) | (2 if b & r else 0) | (4 if c & r else 0) | (8 if d & r else 0)
    for sub in _SET_SUBS[nib]:
        a2 = a & ~r if sub & 1 else a
        b2 = b & ~r if sub & 2 else b
        c2 = c & ~r if sub & 4 else c
        d2 = d & ~r if sub & 8 else d
        if rest:
            v = _min_sets_drop(t0, dr, a2, b2, c2, d2, rest)
        else:
            v = t0[a2] + t0[b2] + t0[c2] + t0[d2] + min(dr[a2], dr[b2], dr[c2], dr[d2])
        if v < best:
            best = v
    return best


def _set_rests(a: int, b: int, c: int, d: int, cand: int) -> list[tuple[int, int, int, int]]:
    """The suit patterns left by each way of taking natural sets of ``cand`` ranks out."""
    out = [(a, b, c, d)]
    while cand:
        r = cand & -cand
        cand ^= r
        more = []
        for pats in out:
            nib = sum(1 << i for i in range(4) if pats[i] & r)
            for sub in _SET_SUBS[nib]:
                more.append(
                    (
                        pats[0] & ~r if sub & 1 else pats[0],
                        pats[1] & ~r if sub & 2 else pats[1],
                        pats[2] & ~r if sub & 4 else pats[2],
                        pats[3] & ~r if sub & 8 else pats[3],
                    )
                )
        out += more
    return out


def _close_points(T: _Tables, rests: Sequence[tuple[int, int, int, int]]) -> int:
    """How eight natural cards can close (one unmatched card at most).

    ``rests`` are the suit patterns left by each way of taking sets out. Returns -1
    when some discard leaves all seven cards melded, else the least points of the
    one unmatched card over all closing discards, else INF.
    """
    t0 = T.t0
    o1 = T.o1
    o2 = T.o2
    best = INF
    for pats in rests:
        bad = [p for p in pats if t0[p]]
        if not bad:
            for p in pats:
                if o1[p] < INF:
                    return -1
            for p in pats:
                if o2[p] < best:
                    best = o2[p]
        elif len(bad) == 1:
            p = bad[0]
            if o1[p] < INF:
                return -1
            if o2[p] < best:
                best = o2[p]
        elif len(bad) == 2:
            x = o1[bad[0]]
            y = o1[bad[1]]
            if x < INF and y < INF:
                m = x if x < y else y
                if m < best:
                    best = m
    return best


class _Ctx:
    """What one decision knows: hand, pool, opponent model, caches."""

    __slots__ = (
        "H",
        "T",
        "blocked",
        "close_now",
        "d_opp",
        "limit",
        "m_close",
        "m_closing",
        "m_dw",
        "m_star",
        "m_v",
        "margin",
        "opp_score",
        "opp_turns",
        "p_opp",
        "pool_w",
        "q",
        "score",
    )
    T: _Tables
    H: int  # own hand
    score: int
    limit: int  # most points a close may leave unmatched (-1: cannot close)
    margin: int  # points left before going out of the game
    blocked: int  # card that may not be discarded now (-1: none)
    close_now: bool  # may the bot close on this turn (close_first_round)
    #: Pool cards: (card, chance it is the next stock card, suit, rank bit).
    pool_w: list[tuple[int, float, int, int]]
    p_opp: list[float]  # chance that an opponent holds each card
    q: float  # chance that the next player closes before our next turn
    d_opp: float  # points the next player would likely take if we closed now
    opp_score: int
    opp_turns: int
    m_dw: dict[int, int]
    m_closing: dict[int, float | None]
    m_star: dict[int, float]
    m_close: dict[tuple[int, int], tuple[float, int] | None]
    m_v: dict[int, float]


class StrongBot:
    """A strong Chinchón bot (see the module docstring for its strategy)."""

    name = "strong"

    # Tunable weights (points-like units).
    CLOSE_BASE = 20.0  # value of being able to close (beyond minus its points)
    LOCK = 4.0  # extra for melding all seven: nobody lays off on our melds
    WIN = 60.0  # value of a chinchón, which wins the game at once
    FEED_W = 6.0  # cost of handing the next player a meld
    FEED_PART = 0.5  # cost of handing the next player a two-card start
    GAMMA = 1.0  # how much the expected stock gain counts against taking the top card
    M_TAKEN = 1.8  # opponent model: weight of cards related to what it took
    M_DISC = 0.6  # ... related to what it discarded
    M_PASS = 0.7  # ... related to what it passed over
    Q0, Q1, QT, QMAX = 0.015, 0.018, 0.04, 0.35  # chance the opponent closes next turn
    D0, D1, DMIN = 25.0, 2.2, 4.0  # opponent's expected points when we close
    ELIM = 25.0  # extra cost of being caught with enough points to go out of the game

    def __init__(self, seed: int | str | None = None, strict: bool = False, **params: float) -> None:
        self._rng = random.Random(seed)
        self.strict = strict
        self._fixed: tuple[Any, ...] | None = None
        self._pooled: tuple[Any, ...] | None = None
        for k, v in params.items():
            if not hasattr(StrongBot, k.upper()):
                raise TypeError(f"unknown parameter {k}")
            setattr(self, k.upper(), v)

    # -- protocol ---------------------------------------------------------------------
    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        try:
            action = self._decide(obs, legal)
        except Exception:
            if self.strict:
                raise
            action = None
        if action is None or action not in legal:
            if self.strict and action is not None:
                raise AssertionError(f"strong bot chose an illegal action {action}")
            action = self._fallback(obs, legal)
        # Hand back the engine's own object (cards as Card, so they print as text).
        return legal[legal.index(action)]

    def _fallback(self, obs: Observation, legal: Sequence[Action]) -> Action:
        for a in (LAYOFF_BEST, LAYDOWN_BEST, DRAW_STOCK):
            if a in legal:
                return a
        discards = [a for a in legal if isinstance(a, Discard)]
        if discards:
            rules = obs.rules
            return max(discards, key=lambda a: rules.card_points(a.card))
        return legal[0]

    def _decide(self, obs: Observation, legal: Sequence[Action]) -> Action | None:
        phase = obs.phase
        if phase is Phase.LAYOFF:
            return LAYOFF_BEST
        if phase is Phase.LAYDOWN:
            return LAYDOWN_BEST
        if phase is Phase.DRAW:
            if DRAW_DISCARD not in legal or not obs.discard_pile:
                return DRAW_STOCK
            return self._draw(self._context(obs), obs, legal)
        if phase is Phase.DISCARD:
            return self._discard(self._context(obs), obs, legal)
        return None

    # -- knowledge ----------------------------------------------------------------------
    def _context(self, obs: Observation) -> _Ctx:
        T = _tables(obs.rules)
        rules = obs.rules
        me = obs.seat
        ctx = _Ctx()
        ctx.T = T
        to = T.to
        H = to(mask_of(obs.hand))
        ctx.H = H
        # close_first_round off: no close on this turn if it is the player's first.
        ctx.close_now = rules.close_first_round or obs.turn >= sum(
            1 for pv in obs.players if pv.in_game)
        ctx.score = obs.players[me].score
        ctx.limit = min(rules.close_max_points, rules.score_limit - 1 - ctx.score)
        ctx.margin = rules.score_limit - ctx.score
        ctx.blocked = -1
        if obs.taken_from_discard is not None and not rules.retake_discard:
            ctx.blocked = to(1 << obs.taken_from_discard).bit_length() - 1
        pile = to(mask_of(obs.discard_pile))
        table = 0
        for tm in obs.table:
            table |= tm.meld.mask
        table = to(table)
        nxt = _next_in_game(obs)
        known, disc, passed, opp_turns = _public_events(obs, nxt, to)
        known &= ~(H | pile | table)
        pool = T.deck_mask & ~(H | pile | table | known)
        unknown = sum(p.hand_size for p in obs.players if p.seat != me and p.in_game) - known.bit_count()
        p_opp, ctx.pool_w = self._opponent_odds(T, pool, known, disc, passed, unknown)
        ctx.p_opp = p_opp
        ctx.opp_turns = opp_turns
        held = known.bit_count()
        ctx.q = min(self.QMAX, self.Q0 + self.Q1 * opp_turns + self.QT * held)
        ctx.d_opp = max(self.DMIN, self.D0 - self.D1 * opp_turns)
        ctx.opp_score = obs.players[nxt].score
        # Caches. Values of hands depend on the score (closing limit) and, for the
        # expectations, on the pool and its weights: reuse them while those stay put
        # (after taking the pile's top card, the discard decision reuses the draw's).
        fixed = self._fixed
        if fixed is None or fixed[0] != (rules, ctx.score) or len(fixed[1]) + len(fixed[3]) > 200_000:
            fixed = self._fixed = ((rules, ctx.score), {}, {}, {}, {})
        ctx.m_dw, ctx.m_closing, ctx.m_star, ctx.m_close = fixed[1:]
        key = (rules, ctx.score, obs.hand_no, pool, known, disc, passed, unknown)
        if self._pooled is None or self._pooled[0] != key:
            self._pooled = (key, {})
        ctx.m_v = self._pooled[1]
        return ctx

    def _opponent_odds(
        self, T: _Tables, pool: int, known: int, disc: int, passed: int, unknown: int,
    ) -> tuple[list[float], list[tuple[int, float, int, int]]]:
        """Each card's chance of being in an opponent's hand (1 for cards seen taken), and
        the weighted pool of cards this seat may yet draw: the cards related to what
        opponents took, discarded or passed over are weighed by the bot's multipliers."""
        pool_cards = cards_of(pool)
        related = T.related
        mult = dict.fromkeys(pool_cards, 1.0)
        for e in cards_of(known):
            for u in cards_of(related[e] & pool):
                mult[u] *= self.M_TAKEN
        for e in cards_of(disc):
            for u in cards_of(related[e] & pool):
                mult[u] *= self.M_DISC
        for e in cards_of(passed & ~disc):
            for u in cards_of(related[e] & pool):
                mult[u] *= self.M_PASS
        p_opp = [0.0] * 50
        for e in cards_of(known):
            p_opp[e] = 1.0
        tot = sum(mult.values())
        if pool_cards and unknown > 0 and tot > 0:
            scale = unknown / tot
            for c in pool_cards:
                p_opp[c] = min(0.95, mult[c] * scale)
        ws = [(c, 1.0 - p_opp[c]) for c in pool_cards]
        wt = sum(w for _, w in ws)
        if wt <= 0:
            return p_opp, []
        pool_w: list[tuple[int, float, int, int]] = [
            (c, w / wt, c // 12 if c < 48 else -1, 1 << c % 12) for c, w in ws]
        return p_opp, pool_w

    # -- evaluation -----------------------------------------------------------------------
    @staticmethod
    def _dw(ctx: _Ctx, h: int) -> int:
        """Least unmatched points of a hand."""
        a = h & 4095
        b = h >> 12 & 4095
        c = h >> 24 & 4095
        d = h >> 36 & 4095
        t0 = ctx.T.t0
        if h >> 48:
            v = ctx.m_dw.get(h)
            if v is None:
                v = ctx.m_dw[h] = ctx.T.solver.deadwood(h)
            return v
        cand = (a & b & (c | d)) | (c & d & (a | b))
        if not cand:
            return t0[a] + t0[b] + t0[c] + t0[d]
        v = ctx.m_dw.get(h)
        if v is None:
            v = ctx.m_dw[h] = _min_sets(t0, a, b, c, d, cand)
        return v

    def _closing(self, ctx: _Ctx, h7: int) -> float | None:
        """Value of closing with these seven cards, or None if they do not allow it."""
        if h7 in ctx.m_closing:
            return ctx.m_closing[h7]
        T = ctx.T
        v: float | None = None
        limit = ctx.limit
        rules = T.rules
        if limit < 0:
            pass
        elif not h7 >> 48 and rules.close_max_unmatched <= 1:
            dw = self._dw(ctx, h7)
            if dw == 0:
                v = self._full_value(T.solver.bonus(h7))
            elif dw <= limit and rules.close_max_unmatched == 1:
                pts = T.pts
                best = INF
                for u in cards_of(h7):
                    p = pts[u]
                    if p < best and p <= limit and self._dw(ctx, h7 & ~(1 << u)) == 0:
                        best = p
                if best < INF:
                    v = self.CLOSE_BASE - best
        else:
            arr = T.solver.closing(h7, ctx.score)
            if arr is not None:
                if not arr.unmatched:
                    v = self._full_value(T.solver.bonus(h7))
                else:
                    v = self.CLOSE_BASE - arr.points
        ctx.m_closing[h7] = v
        return v

    def _full_value(self, bonus: int) -> float:
        if bonus == _BONUS_CHINCHON:
            return self.CLOSE_BASE + self.WIN
        if bonus == _BONUS_MINUS50:
            return self.CLOSE_BASE + 50 + self.LOCK
        if bonus == _BONUS_MINUS25:
            return self.CLOSE_BASE + 25 + self.LOCK
        return self.CLOSE_BASE + 10 + self.LOCK

    def _close_eval(self, ctx: _Ctx, h8: int, blocked: int) -> tuple[float, int] | None:
        """Best close from eight cards: (value, card put face down), or None."""
        key = (h8, blocked)
        if key in ctx.m_close:
            return ctx.m_close[key]
        best: tuple[float, int] | None = None
        if ctx.limit >= 0 and ctx.T.solver.may_close_some(h8):
            for x in cards_of(h8):
                if x == blocked:
                    continue
                h7 = h8 & ~(1 << x)
                if self._dw(ctx, h7) > ctx.limit:
                    continue
                v = self._closing(ctx, h7)
                if v is not None and (best is None or v > best[0]):
                    best = (v, x)
        ctx.m_close[key] = best
        return best

    def _star(self, ctx: _Ctx, h8: int) -> float:
        """Value of eight cards after a draw: close if possible, else best discard."""
        v = ctx.m_star.get(h8)
        if v is not None:
            return v
        T = ctx.T
        a = h8 & 4095
        b = h8 >> 12 & 4095
        c = h8 >> 24 & 4095
        d = h8 >> 36 & 4095
        t0 = T.t0
        dr = T.drop1
        if h8 >> 48:
            dw = min(self._dw(ctx, h8 & ~(1 << x)) for x in cards_of(h8))
        else:
            cand = (a & b & (c | d)) | (c & d & (a | b))
            if not cand:
                dw = t0[a] + t0[b] + t0[c] + t0[d] + min(dr[a], dr[b], dr[c], dr[d])
            else:
                dw = _min_sets_drop(t0, dr, a, b, c, d, cand)
        v = -float(dw)
        if dw <= ctx.limit:
            if h8 >> 48 or T.rules.close_max_unmatched != 1:
                cv = self._close_eval(ctx, h8, -1)
                if cv is not None:
                    v = cv[0]
            else:  # no joker: ``cand`` was computed above
                rests = _set_rests(a, b, c, d, cand) if cand else ((a, b, c, d),)
                pts = _close_points(T, rests)
                if pts == -1:  # all seven melded: the exact bonus needs a closer look
                    cv = self._close_eval(ctx, h8, -1)
                    if cv is not None:
                        v = cv[0]
                elif pts <= ctx.limit:
                    v = self.CLOSE_BASE - pts
        ctx.m_star[h8] = v
        return v

    def _V(self, ctx: _Ctx, h7: int) -> float:
        """Expected value after the next stock draw from these seven cards."""
        v = ctx.m_v.get(h7)
        if v is not None:
            return v
        total = 0.0
        star = self._star
        if h7 >> 48:
            for c, w, _, _ in ctx.pool_w:
                total += w * star(ctx, h7 | 1 << c)
            ctx.m_v[h7] = total
            return total
        # Fast path, inlined: adding one natural card changes one suit pattern, so
        # the best discard after drawing it is a few table look-ups per way of
        # taking sets out of the seven cards. Cards that could make a new set, and
        # hands that might close, go through the full evaluation.
        T = ctx.T
        t0 = T.t0
        dr = T.drop1
        limit = ctx.limit
        a, b, c_, d = h7 & 4095, h7 >> 12 & 4095, h7 >> 24 & 4095, h7 >> 36 & 4095
        two = (a & (b | c_ | d)) | (b & (c_ | d)) | (c_ & d)
        three = (a & b & (c_ | d)) | (c_ & d & (a | b))
        choices = []
        for pats in _set_rests(a, b, c_, d, three) if three else ((a, b, c_, d),):
            w_, x_, y_, z_ = pats
            dw_, dx_, dy_, dz_ = dr[w_], dr[x_], dr[y_], dr[z_]
            choices.append(
                (
                    pats,
                    t0[w_] + t0[x_] + t0[y_] + t0[z_],
                    (
                        min(dx_, dy_, dz_),
                        min(dw_, dy_, dz_),
                        min(dw_, dx_, dz_),
                        min(dw_, dx_, dy_),
                    ),
                )
            )
        if len(choices) == 1:
            pats, base, others = choices[0]
            for card, w, suit, rb in ctx.pool_w:
                if rb & two or suit < 0:
                    total += w * star(ctx, h7 | 1 << card)
                    continue
                p = pats[suit]
                np = p | rb
                dn = dr[np]
                o = others[suit]
                dw = base - t0[p] + t0[np] + (dn if dn < o else o)
                if dw <= limit:
                    total += w * star(ctx, h7 | 1 << card)
                else:
                    total -= w * dw
        else:
            for card, w, suit, rb in ctx.pool_w:
                if rb & two or suit < 0:
                    total += w * star(ctx, h7 | 1 << card)
                    continue
                dw = INF
                for pats, base, others in choices:
                    p = pats[suit]
                    np = p | rb
                    dn = dr[np]
                    o = others[suit]
                    v = base - t0[p] + t0[np] + (dn if dn < o else o)
                    if v < dw:
                        dw = v
                if dw <= limit:
                    total += w * star(ctx, h7 | 1 << card)
                else:
                    total -= w * dw
        ctx.m_v[h7] = total
        return total

    def _feed(self, ctx: _Ctx, card: int) -> float:
        """Expected cost of putting ``card`` where the next player can take it."""
        if card >= 48:
            return self.FEED_W
        T = ctx.T
        p = ctx.p_opp
        # Set: at least two of the other three of this rank in the opponent's hand.
        ps = [p[u] for u in T.set_mates[card]]
        p_set = 0.0
        if len(ps) >= 2:
            p0 = 1.0
            for x in ps:
                p0 *= 1.0 - x
            p1 = 0.0
            for i, x in enumerate(ps):
                term = x
                for j, y in enumerate(ps):
                    if j != i:
                        term *= 1.0 - y
                p1 += term
            p_set = max(0.0, 1.0 - p0 - p1)
        no_run = 1.0
        for u, v in T.run_pairs[card]:
            no_run *= 1.0 - p[u] * p[v]
        p_meld = 1.0 - (1.0 - p_set) * no_run
        # A two-card start with a card the opponent surely holds.
        p_part = 1.0 if any(p[u] >= 1.0 for u in cards_of(T.related[card])) else 0.0
        return self.FEED_W * p_meld + self.FEED_PART * p_part

    def _value(self, ctx: _Ctx, h7: int, discard: int) -> float:
        dw = self._dw(ctx, h7)
        caught = dw + self.ELIM if dw >= ctx.margin else dw
        return self._V(ctx, h7) - ctx.q * caught - self._feed(ctx, discard)

    # -- decisions ------------------------------------------------------------------------
    def _draw(self, ctx: _Ctx, obs: Observation, legal: Sequence[Action]) -> Action:
        h_top = ctx.T.to(1 << obs.discard_pile[-1])
        top = h_top.bit_length() - 1
        H = ctx.H
        h8 = H | h_top
        blocked = -1 if obs.rules.retake_discard else top
        if ctx.close_now and self._close_eval(ctx, h8, blocked) is not None:
            return DRAW_DISCARD
        best_top = max(self._value(ctx, h8 & ~(1 << d), d) for d in cards_of(H) if d != blocked)
        dw = self._dw(ctx, H)
        v = self._V(ctx, H)
        keep = v - ctx.q * (dw + self.ELIM if dw >= ctx.margin else dw)
        gain = v + dw
        if best_top > keep + self.GAMMA * gain:
            return DRAW_DISCARD
        return DRAW_STOCK

    def _discard(self, ctx: _Ctx, obs: Observation, legal: Sequence[Action]) -> Action:
        H = ctx.H
        to, back = ctx.T.to, ctx.T.back
        discards = [to(1 << a.card).bit_length() - 1 for a in legal if isinstance(a, Discard)]
        scored = sorted(((self._value(ctx, H & ~(1 << d), d), d) for d in discards), reverse=True)
        closes = [a for a in legal if isinstance(a, Close) and a.melds is None]
        if closes:
            cv = self._close_eval(ctx, H, ctx.blocked)
            if cv is not None and Close(back(cv[1]), None) in legal:
                value, card = cv
                if self._should_close(ctx, value, scored):
                    return Close(back(card), None)
            else:
                # Any legal close beats discarding; take the first offered.
                return closes[0]
        # Equal values (symmetric cards): break the tie with the bot's own generator.
        ties = [d for v, d in scored if v >= scored[0][0] - 1e-9]
        return Discard(back(ties[0] if len(ties) == 1 else self._rng.choice(ties)))

    def _should_close(self, ctx: _Ctx, value: float, scored: list[tuple[float, int]]) -> bool:
        pts = self.CLOSE_BASE - value
        if pts <= 0:  # -10 or better
            return True
        if ctx.opp_score + ctx.d_opp >= ctx.T.rules.score_limit:
            return True
        # Consider waiting with the best discard that keeps the hand closable.
        for _, d in scored[:3]:
            h7 = ctx.H & ~(1 << d)
            if self._closing(ctx, h7) is None:
                continue
            r10 = 0.0
            rch = 0.0
            lo = self.CLOSE_BASE + 10
            for c, w, _, _ in ctx.pool_w:
                s = self._star(ctx, h7 | 1 << c)
                if s >= lo:
                    if s >= self.CLOSE_BASE + self.WIN:
                        rch += w
                    else:
                        r10 += w
            q = ctx.q
            gain = (1 - q) * (r10 * (10 + pts + self.LOCK) + rch * self.WIN)
            loss = q * (ctx.d_opp + self._dw(ctx, h7)) + self._feed(ctx, d)
            return gain <= loss
        return True


__all__ = ["StrongBot"]


def _next_in_game(obs: Observation) -> int:
    """The next seat after this one still in the game (this seat if none)."""
    me, n = obs.seat, len(obs.players)
    for k in range(1, n + 1):
        s = (me + k) % n
        if obs.players[s].in_game:
            return s
    return me


def _public_events(obs: Observation, nxt: int, to: Callable[[int], int]) -> tuple[int, int, int, int]:
    """What the opponents showed, as card masks in the solver's numbering (``to`` maps a
    mask to it): cards they took from the pile and still hold, cards they discarded, cards
    on top of the pile they passed over; and how many turns the next seat has had."""
    me = obs.seat
    known = disc = passed = 0
    opp_turns = 0
    for ev in obs.events:
        if ev.seat == me or ev.seat < 0 or ev.card is None:
            continue
        bit = to(1 << ev.card)
        if ev.kind == "draw_discard":
            known |= bit
        elif ev.kind == "discard":
            known &= ~bit
            disc |= bit
            if ev.seat == nxt:
                opp_turns += 1

    def num(card: int) -> int:  # a card's number in the solver's numbering
        return to(1 << card).bit_length() - 1

    tops = [num(c) for c in obs.discard_pile]
    for ev in reversed(obs.events):
        kind = ev.kind
        if kind == "discard":
            if not tops or ev.card is None or tops[-1] != num(ev.card):
                break
            tops.pop()
        elif kind == "draw_discard" and ev.card is not None:
            tops.append(num(ev.card))
        elif kind == "draw_stock":
            if ev.seat != me and tops:
                passed |= 1 << tops[-1]
        elif kind == "reshuffle":
            break
    return known, disc, passed, opp_turns
