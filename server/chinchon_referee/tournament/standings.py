"""Standings and ratings from finished games.

* Match points: a win 1, a shared win (draw) 1 / number of winners, a loss 0.
* Ratings, 2-player tables: a Bradley-Terry model fitted by maximum likelihood (with a
  weak Gaussian prior so a bot that always wins keeps a finite rating), on the Elo
  scale (400 points = 10:1 odds, mean 1500), with 95% intervals from the inverse
  Hessian, and the likelihood that each bot is stronger than the next one down.
* Ratings, larger tables: openskill's Plackett-Luce model over each game's finishing
  order (winners first, then by total), scaled to the same Elo-like range.
* Duplicate deals: how much of the variance of game scores the seat rotation removed.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from chinchon.engine import Termination
from chinchon.engine.outcome import HandScore, Outcome

from ..storage import Store
from .tiebreaks import ROUND_ROBIN, Encounter, Facts, Tiebreak, opponents
from .tiebreaks import order as rank_order

#: Finished games read from the store at once.
PAGE = 200

ELO = 400.0 / math.log(10.0)
PRIOR_SD = 2.0  # on the log-strength scale: about 350 Elo; only matters for tiny samples


@dataclass
class Row:
    bot: str
    rank: int = 0
    match_points: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    hands_won: int = 0
    chinchones: int = 0
    hands: int = 0
    points: int = 0
    forfeits: int = 0
    timeouts: int = 0
    illegal_actions: int = 0
    rating: float = 1500.0
    rating_low: float = 1500.0
    rating_high: float = 1500.0
    p_better_than_next: float | None = None
    #: Swiss: rounds sat out, and the opponents' strength (when the order uses them).
    byes: int = 0
    buchholz: float | None = None
    sonneborn_berger: float | None = None

    @property
    def avg_points_per_hand(self) -> float:
        return self.points / self.hands if self.hands else 0.0


@dataclass
class Standings:
    rows: list[Row]
    head_to_head: dict[tuple[str, str], tuple[float, int]]
    games: int
    duplicate_variance_reduction: float | None
    rating_model: str
    extra: dict[str, Any] = field(default_factory=dict)
    #: The order the rows are ranked by (tiebreaks.py), written in report.md and the JSON.
    tiebreaks: tuple[Tiebreak, ...] = ROUND_ROBIN

    def reorder(self, order: Sequence[str]) -> None:
        """Rank the rows in ``order`` (a format's ranking: the ratings' order no more)."""
        if list(order) == [r.bot for r in self.rows]:
            return
        by = {r.bot: r for r in self.rows}
        self.rows = [by[b] for b in order]
        for i, r in enumerate(self.rows):
            r.rank = i + 1
            r.p_better_than_next = None  # the order is not the ratings' any more

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "tiebreaks": [t.value for t in self.tiebreaks],
            "rating_model": self.rating_model,
            "duplicate_variance_reduction": self.duplicate_variance_reduction,
            "rows": [
                {**asdict(r), "avg_points_per_hand": round(r.avg_points_per_hand, 3)}
                for r in self.rows
            ],
            "head_to_head": [
                {"bot": a, "opponent": b, "score": s, "games": n}
                for (a, b), (s, n) in sorted(self.head_to_head.items())
            ],
        }

    def to_csv(self) -> str:
        out = io.StringIO()
        cols = ["rank", "bot", "match_points", "games", "wins", "draws", "losses", "hands_won",
                "chinchones", "avg_points_per_hand", "forfeits", "timeouts", "illegal_actions",
                "rating", "rating_low", "rating_high", "p_better_than_next"]
        w = csv.writer(out)
        w.writerow(cols)
        for r in self.rows:
            d = {**asdict(r), "avg_points_per_hand": round(r.avg_points_per_hand, 3)}
            w.writerow([_fmt(d[c]) for c in cols])
        return out.getvalue()


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".")
    return "" if v is None else v


@dataclass
class GameSummary:
    """What standings need from one finished game."""

    players: list[str]
    winners: list[int]
    termination: Termination
    forfeited: int | None
    hands: list[HandScore]
    totals: list[int]
    stats: list[dict[str, Any]]
    deal_id: str = ""


def summarize_game(players: Sequence[str], result: Outcome, hands: Sequence[HandScore],
                   stats: Sequence[dict[str, Any]] | None, deal_id: str = "") -> GameSummary:
    """A finished game as the standings count it: its result and its hands' scores."""
    return GameSummary(
        players=list(players),
        winners=list(result.winners),
        termination=result.termination,
        forfeited=result.forfeited,
        hands=list(hands),
        totals=list(result.totals),
        stats=list(stats or [{} for _ in players]),
        deal_id=deal_id,
    )


@dataclass
class _Tally:
    """What the games say, counted once: the rows, head-to-head, and what the ratings
    and the opponents' tie-breaks are fitted on."""

    rows: dict[str, Row]
    h2h: dict[tuple[str, str], list[float]]
    pairwise: list[tuple[int, int, float]]  # (i, j, score of i against j)
    orders: list[list[list[str]]]
    #: Each table of bots that met: each bot's [match points, games] at it.
    tables: dict[frozenset[str], dict[str, list[float]]]


def _tally(bots: Sequence[str], games: Sequence[GameSummary]) -> _Tally:
    rows = {b: Row(b) for b in bots}
    h2h: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    pairwise: list[tuple[int, int, float]] = []  # (i, j, score of i against j)
    orders: list[list[list[str]]] = []
    tables: dict[frozenset[str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0, 0]))
    index = {b: i for i, b in enumerate(bots)}
    for gm in games:
        if gm.termination is Termination.ABORTED:
            continue
        names = gm.players
        w = set(gm.winners)
        for s, name in enumerate(names):
            row = rows[name]
            row.games += 1
            if s in w:
                share = 1.0 / len(w)
                row.match_points += share
                if len(w) == 1:
                    row.wins += 1
                else:
                    row.draws += 1
            else:
                row.losses += 1
            if gm.forfeited == s and gm.termination.forfeit:
                row.forfeits += 1
            st = gm.stats[s] if s < len(gm.stats) else {}
            row.timeouts += int(st.get("timeouts", 0))
            row.illegal_actions += int(st.get("illegal", 0))
        for hand in gm.hands:
            points = hand.points
            for s in hand.in_hand:
                rows[names[s]].hands += 1
                rows[names[s]].points += points[s] if s < len(points) else 0
            if hand.winner is not None:
                rows[names[hand.winner]].hands_won += 1
            if hand.chinchon:
                rows[names[hand.closer]].chinchones += 1
        for a, b in _pairs(len(names)):
            sa = 1.0 if (a in w and b not in w) else 0.0 if (b in w and a not in w) else 0.5
            na, nb = names[a], names[b]
            h2h[(na, nb)][0] += sa
            h2h[(na, nb)][1] += 1
            h2h[(nb, na)][0] += 1.0 - sa
            h2h[(nb, na)][1] += 1
            pairwise.append((index[na], index[nb], sa))
        orders.append(_finishing_order(gm))
        met = tables[frozenset(names)]
        for s, name in enumerate(names):
            met[name][0] += (1.0 / len(w)) if s in w else 0.0
            met[name][1] += 1
    return _Tally(rows, h2h, pairwise, orders, tables)


def compute(bots: Sequence[str], games: Sequence[GameSummary], table_size: int = 2, *,
            tiebreaks: Sequence[Tiebreak] = ROUND_ROBIN, byes: Mapping[str, int] | None = None,
            bye_points: float = 0.0, seeds: Mapping[str, int] | None = None) -> Standings:
    """The standings of ``bots`` over ``games``, ranked by ``tiebreaks`` (then seed,
    then name: :mod:`.tiebreaks`). ``byes``: rounds each bot sat out (a Swiss), each
    worth ``bye_points``; ``seeds``: the seeding (1 first), default none."""
    t = _tally(bots, games)
    if table_size == 2:
        model = "bradley-terry"
        cov = _bradley_terry(bots, t.pairwise, t.rows)
    else:
        model = "openskill-plackett-luce"
        cov = _openskill(bots, t.orders, t.rows)
    facts = _facts(bots, t, tiebreaks, byes or {}, bye_points, seeds or {},
                   lambda: {b: r.rating for b, r in t.rows.items()})
    ordered = [t.rows[b] for b in rank_order(bots, tiebreaks, facts)]
    for i, r in enumerate(ordered):
        r.rank = i + 1
    _p_next(ordered, model, cov)
    return Standings(
        rows=ordered,
        head_to_head={k: (v[0], int(v[1])) for k, v in t.h2h.items()},
        games=sum(1 for g in games if g.termination is not Termination.ABORTED),
        duplicate_variance_reduction=duplicate_variance_reduction(games),
        rating_model=model,
        tiebreaks=tuple(tiebreaks),
    )


def ranking(bots: Sequence[str], games: Sequence[GameSummary], table_size: int = 2, *,
            tiebreaks: Sequence[Tiebreak] = ROUND_ROBIN, byes: Mapping[str, int] | None = None,
            bye_points: float = 0.0, seeds: Mapping[str, int] | None = None) -> list[str]:
    """The order of :func:`compute`'s rows, fitting the ratings only if the criteria
    before ``rating`` left bots level (what a stage passes on to the next)."""
    t = _tally(bots, games)

    def rate() -> Mapping[str, float]:
        if table_size == 2:
            _bradley_terry(bots, t.pairwise, t.rows)
        else:
            _openskill(bots, t.orders, t.rows)
        return {b: r.rating for b, r in t.rows.items()}

    return rank_order(bots, tiebreaks, _facts(bots, t, tiebreaks, byes or {}, bye_points,
                                         seeds or {}, rate))


def _facts(bots: Sequence[str], t: _Tally, tiebreaks: Sequence[Tiebreak],
           byes: Mapping[str, int], bye_points: float, seeds: Mapping[str, int],
           rate: Callable[[], Mapping[str, float]]) -> Facts:
    """The tie-breaks' inputs; byes added to the points; Buchholz and Sonneborn-Berger
    written into the rows when the order uses them."""
    for b, n in byes.items():
        t.rows[b].byes = n
        t.rows[b].match_points += n * bye_points
    points = {b: r.match_points for b, r in t.rows.items()}
    facts = Facts(points=points, head_to_head={k: (v[0], int(v[1])) for k, v in t.h2h.items()},
                  points_per_hand={b: r.avg_points_per_hand for b, r in t.rows.items()},
                  rating=rate, seeds=seeds)
    if Tiebreak.BUCHHOLZ in tiebreaks or Tiebreak.SONNEBORN_BERGER in tiebreaks:
        encounters = [Encounter({b: p / n for b, (p, n) in met.items() if n})
                      for met in t.tables.values()]
        facts.buchholz, facts.sonneborn_berger = opponents(bots, points, encounters, byes)
        for b, r in t.rows.items():
            r.buchholz, r.sonneborn_berger = facts.buchholz[b], facts.sonneborn_berger[b]
    return facts


def _pairs(n: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(n) for b in range(a + 1, n)]


def _finishing_order(gm: GameSummary) -> list[list[str]]:
    """Teams (one bot each) from first to last, for Plackett-Luce."""
    w = set(gm.winners)
    seats = sorted(range(len(gm.players)),
                   key=lambda s: (s not in w, gm.totals[s] if s < len(gm.totals) else 0))
    return [[gm.players[s]] for s in seats]


# -- Bradley-Terry --------------------------------------------------------------------------


Cov = dict[tuple[str, str], float]


def _bradley_terry(bots: Sequence[str], pairwise: Sequence[tuple[int, int, float]],
                   rows: dict[str, Row]) -> Cov:
    """Penalized maximum likelihood by Newton's method; Elo scale, 95% intervals."""
    n = len(bots)
    theta = [0.0] * n
    prior = 1.0 / (PRIOR_SD**2)
    hess: list[list[float]] = [[0.0] * n for _ in range(n)]
    for _ in range(100):
        grad = [-prior * t for t in theta]
        hess = [[(prior if i == j else 0.0) for j in range(n)] for i in range(n)]
        for i, j, s in pairwise:
            p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
            grad[i] += s - p
            grad[j] -= s - p
            w = p * (1.0 - p)
            hess[i][i] += w
            hess[j][j] += w
            hess[i][j] -= w
            hess[j][i] -= w
        step = _solve(hess, grad)
        theta = [t + d for t, d in zip(theta, step, strict=True)]
        if max(abs(d) for d in step) < 1e-9:
            break
    raw = _inverse(hess)
    # Ratings are shown centred on their mean: use the covariance of theta - mean(theta)
    # (the overall level is unidentified and only the prior pins it down).
    row_mean = [sum(raw[i]) / n for i in range(n)]
    all_mean = sum(row_mean) / n
    cov = [[raw[i][j] - row_mean[i] - row_mean[j] + all_mean for j in range(n)]
           for i in range(n)]
    mean = sum(theta) / n
    for i, b in enumerate(bots):
        r = rows[b]
        r.rating = 1500.0 + ELO * (theta[i] - mean)
        half = 1.96 * ELO * math.sqrt(max(cov[i][i], 0.0))
        r.rating_low, r.rating_high = r.rating - half, r.rating + half
    return {(bots[i], bots[j]): cov[i][j] for i in range(n) for j in range(n)}


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a is small and well conditioned)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan elimination of ``[a | I]`` with partial pivoting: one O(n^3) pass
    (n separate solves were O(n^4): 3.4 s of the 3.8 s of 64 bots' standings)."""
    n = len(a)
    m = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        pivot = m[c]
        inv = 1.0 / pivot[c]
        for k in range(c, 2 * n):
            pivot[k] *= inv
        for r in range(n):
            if r != c:
                row = m[r]
                f = row[c]
                if f != 0.0:
                    for k in range(c, 2 * n):
                        row[k] -= f * pivot[k]
    return [row[n:] for row in m]


# -- openskill (tables of 3+) -------------------------------------------------------------------


def _openskill(bots: Sequence[str], orders: Sequence[list[list[str]]], rows: dict[str, Row]) -> Cov:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {b: model.rating(name=b) for b in bots}
    for order in orders:
        teams = [[ratings[t[0]]] for t in order]
        new = model.rate(teams, ranks=list(range(len(teams))))
        for team, t in zip(new, order, strict=True):
            ratings[t[0]] = team[0]
    scale = ELO / 4.0  # openskill's default beta is 25/6: map mu differences to Elo-like points
    mean = sum(r.mu for r in ratings.values()) / len(ratings)
    cov: Cov = {}
    for b in bots:
        r = ratings[b]
        row = rows[b]
        row.rating = 1500.0 + scale * (r.mu - mean)
        row.rating_low = row.rating - 1.96 * scale * r.sigma
        row.rating_high = row.rating + 1.96 * scale * r.sigma
        cov[(b, b)] = r.sigma**2
    return cov


def _p_next(ordered: list[Row], model: str, cov: Cov) -> None:
    for a, b in zip(ordered, ordered[1:], strict=False):
        if model == "bradley-terry":
            var = cov[(a.bot, a.bot)] + cov[(b.bot, b.bot)] - 2 * cov[(a.bot, b.bot)]
            diff = (a.rating - b.rating) / ELO
        else:
            var = cov[(a.bot, a.bot)] + cov[(b.bot, b.bot)]
            diff = (a.rating - b.rating) / (ELO / 4.0)
        a.p_better_than_next = _phi(diff / math.sqrt(var)) if var > 0 else 0.5


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


# -- duplicate deals ----------------------------------------------------------------------------


def duplicate_variance_reduction(games: Sequence[GameSummary]) -> float | None:
    """1 - Var(mean score over a duplicate group) / (Var(one game's score) / group size).

    Scores are the first-listed bot's match points, per bot pair, centred on the pair's
    mean so differences in strength do not count as luck. Positive: the rotation
    cancelled that share of the luck of the deal. None when there is nothing to measure.
    """
    groups: dict[tuple[str, frozenset[str]], list[tuple[str, float]]] = defaultdict(list)
    for gm in games:
        if len(gm.players) != 2 or not gm.deal_id or gm.termination is None or not (
            gm.termination.played
        ):
            continue
        w = set(gm.winners)
        for s, name in enumerate(gm.players):
            score = (1.0 / len(w)) if s in w else 0.0
            groups[(gm.deal_id, frozenset(gm.players))].append((name, score))
    per_pair_game: dict[tuple[frozenset[str], str], list[float]] = defaultdict(list)
    per_pair_group: dict[tuple[frozenset[str], str], list[float]] = defaultdict(list)
    for (_, pair), entries in groups.items():
        ref = min(pair)
        mine = [s for n, s in entries if n == ref]
        if len(mine) < 2:
            continue
        per_pair_game[(pair, ref)].extend(mine)
        per_pair_group[(pair, ref)].append(sum(mine) / len(mine))
    single: list[float] = []
    grouped: list[float] = []
    size = 2
    for key, xs in per_pair_game.items():
        m = sum(xs) / len(xs)
        single += [(x - m) ** 2 for x in xs]
        gs = per_pair_group[key]
        gm_ = sum(gs) / len(gs)
        grouped += [(x - gm_) ** 2 for x in gs]
    if len(single) < 4 or not grouped:
        return None
    var_single = sum(single) / len(single)
    var_group = sum(grouped) / len(grouped)
    if var_single == 0:
        return None
    return 1.0 - var_group / (var_single / size)


def stored_standings(store: Store, tid: str, bots: Sequence[str], table_size: int) -> Standings:
    """The standings of tournament ``tid`` over its finished games, read a page at a time
    (their scores only, not their action logs; only the summaries are kept). Seconds for
    a large tournament: call it in a worker thread."""
    games, after = [], -1
    while page := store.finished_scores(tid, after, PAGE):
        games += [summarize_game(g.players, g.result, g.hands or [], g.stats, g.deal_id)
                  for g in page if g.result is not None]
        after = page[-1].seq
    return compute(bots, games, table_size)
