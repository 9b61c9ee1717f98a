"""The statistics of ``chinchon match``: Elo, interval and LOS from pentanomial counts
(tournament/elo.py) and the SPRT's log-likelihood ratio (tournament/sprt.py).

Reference values: fishtest's formulas (server/fishtest/stats/stat_util.py ``get_elo``
and LLRcalc.py ``LLR_logistic``: the most likely distribution of a given mean found
with scipy's brentq, the normal quantiles from scipy.stats), run apart from this
project on the counts below. The first count is the example in fishtest's own
stat_util.py (a real test, elo0=-3 elo1=1), whose LLR fishtest shows as 2.13.
The GLLR is also checked here against an independent method: the same maximum found
by golden-section search over theta of the concave dual, not by the root of its
derivative."""

from __future__ import annotations

import math
import random

import pytest
from chinchon_referee.tournament.elo import (
    Pentanomial,
    estimate,
    logistic_score,
    score_elo,
)
from chinchon_referee.tournament.sprt import (
    SprtError,
    SprtSpec,
    Verdict,
    llr,
    llr_approximation,
)
from hypothesis import given, settings
from hypothesis import strategies as st

#: counts, elo0, elo1 -> LLR, (elo, low, high, LOS), from fishtest's formulas with scipy.
REFERENCE = [
    ((10789, 19328, 33806, 19402, 10543), -3, 1, 2.131067811794,
     (-0.7735773359, -2.0511676917, 0.5039920998, 0.1176588580)),
    ((1187, 7410, 13475, 7378, 1164), -3, 1, 2.861527180592,
     (-0.4426077992, -2.1724777991, 1.2872402562, 0.3080138791)),
    ((39, 2226, 31451, 2412, 40), 0.2, 0.9, 2.162542580050,
     (0.9029810488, 0.2404528464, 1.5655158183, 0.9962220973)),
    ((20, 60, 100, 80, 40), 0, 5, 1.272144385264,
     (34.8600702876, 12.9777552034, 57.0219205623, 0.9991191490)),
    ((5, 12, 30, 25, 8), 0, 10, 0.841775600650,
     (41.4535673298, 2.1380216603, 81.8598158792, 0.9806367112)),
    # an empty count: regularized to 1e-3, as fishtest does
    ((0, 3, 10, 9, 4), 0, 20, 1.452461274425,
     (95.8858504489, 34.3918984654, 163.9397430658, 0.9990128062)),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "want_llr", "want_elo"), REFERENCE)
def test_llr_and_elo_match_fishtests_formulas(counts: tuple[int, ...], elo0: float,
                                              elo1: float, want_llr: float,
                                              want_elo: tuple[float, ...]) -> None:
    c = Pentanomial.of(counts)
    assert llr(c, elo0, elo1) == pytest.approx(want_llr, abs=1e-8)
    e = estimate(c)
    assert (e.elo, e.low, e.high, e.los) == pytest.approx(want_elo, abs=1e-8)
    assert e.pairs == sum(counts)
    if sum(counts) > 1000:  # many pairs, the score near the hypotheses: the Brownian
        # approximation (what a reader computes by hand) agrees to a thousandth
        assert llr_approximation(c, elo0, elo1) == pytest.approx(want_llr, abs=1e-3)


def test_elo_by_hand_on_a_small_count() -> None:
    """Two pairs of each score 0..4: mean 1/2 (0 Elo), variance 1/8, se = sqrt(1/80)."""
    e = estimate(Pentanomial.of((2, 2, 2, 2, 2)))
    assert e.score == pytest.approx(0.5)
    assert e.score_error == pytest.approx(math.sqrt(0.125 / 10))
    half = 1.959963984540054 * math.sqrt(0.125 / 10)
    assert e.low == pytest.approx(-400 * math.log10(1 / (0.5 - half) - 1))
    assert e.high == pytest.approx(-e.low)
    assert e.elo == pytest.approx(0.0, abs=1e-12) and e.los == pytest.approx(0.5)


def _dual_llr(counts: Pentanomial, elo0: float, elo1: float) -> float:
    """The GLLR by another road: for each mean s, the most likely distribution's
    log-likelihood is sum phat log phat - max_theta sum phat log(1 + theta (a - s)), the
    maximum (of a concave function) found by golden-section search."""
    n, probs = counts.distribution()
    values = (0.0, 0.25, 0.5, 0.75, 1.0)

    def dual(s: float) -> float:
        a = [v - s for v in values]
        lo, hi = -1 / max(a) + 1e-12, -1 / min(a) - 1e-12

        def g(t: float) -> float:
            return sum(p * math.log(1 + t * x) for p, x in zip(probs, a, strict=True))

        r = (math.sqrt(5) - 1) / 2
        for _ in range(120):
            m1, m2 = hi - r * (hi - lo), lo + r * (hi - lo)
            if g(m1) < g(m2):
                lo = m1
            else:
                hi = m2
        return g((lo + hi) / 2)

    return n * (dual(logistic_score(elo0)) - dual(logistic_score(elo1)))


counts_st = st.tuples(*[st.integers(0, 400)] * 5).filter(lambda c: sum(c) > 0)


@settings(max_examples=40, deadline=None)
@given(counts_st, st.floats(-50, 50), st.floats(0.5, 30))
def test_llr_agrees_with_the_dual(
        counts: tuple[int, ...], elo0: float, width: float) -> None:
    c = Pentanomial.of(counts)
    exact = llr(c, elo0, elo0 + width)
    assert exact == pytest.approx(_dual_llr(c, elo0, elo0 + width), abs=1e-6, rel=1e-6)


@settings(max_examples=80, deadline=None)
@given(counts_st)
def test_interval_holds_the_estimate_and_swapping_sides_mirrors_it(
        counts: tuple[int, ...]) -> None:
    c = Pentanomial.of(counts)
    e, s = estimate(c), estimate(c.swapped())
    assert e.low <= e.elo <= e.high
    assert 0.0 <= e.los <= 1.0
    assert s.elo == pytest.approx(-e.elo, abs=1e-9)
    assert (s.low, s.high) == pytest.approx((-e.high, -e.low), abs=1e-9)
    assert s.los == pytest.approx(1 - e.los, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(counts_st, st.integers(0, 3))
def test_a_better_pair_never_lowers_the_llr_or_the_elo(counts: tuple[int, ...],
                                                       worse: int) -> None:
    """Turning one pair of score worse/4 into (worse+1)/4: the LLR of a positive test
    (elo1 > elo0) and the Elo estimate rise (or stay)."""
    c = list(counts)
    if c[worse] == 0:
        c[worse] = 1
    better = list(c)
    better[worse] -= 1
    better[worse + 1] += 1
    a, b = Pentanomial.of(c), Pentanomial.of(better)
    if 0 in c or 0 in better:  # the regularization moves with empty counts
        return
    assert llr(b, 0, 5) >= llr(a, 0, 5) - 1e-9
    assert estimate(b).elo >= estimate(a).elo - 1e-9


@settings(max_examples=40, deadline=None)
@given(counts_st, st.floats(-20, 20), st.floats(0.5, 20))
def test_swapping_the_hypotheses_and_the_sides_negates_the_llr(
        counts: tuple[int, ...], elo0: float, width: float) -> None:
    c = Pentanomial.of(counts)
    assert llr(c, elo0, elo0 + width) == pytest.approx(-llr(c, elo0 + width, elo0), abs=1e-7)
    # seen from the other side, "elo e stronger" is "elo -e": the same test, negated
    assert llr(c.swapped(), -elo0 - width, -elo0) == pytest.approx(
        -llr(c, elo0, elo0 + width), abs=1e-6, rel=1e-6)


def test_logistic_and_its_inverse() -> None:
    for elo in (-800.0, -35.0, 0.0, 5.0, 191.0):
        assert score_elo(logistic_score(elo)) == pytest.approx(elo)
    assert score_elo(1.0) == pytest.approx(1199.83, abs=0.01)  # clamped, never infinite
    assert estimate(Pentanomial()).pairs == 0


def test_sprt_bounds_and_parse() -> None:
    spec = SprtSpec.parse(["elo0=0", "elo1=5", "alpha=0.05", "beta=0.1"])
    assert spec.lower == pytest.approx(math.log(0.1 / 0.95))
    assert spec.upper == pytest.approx(math.log(0.9 / 0.05))
    assert spec.verdict(3.0) is Verdict.H1 and spec.verdict(-2.26) is Verdict.H0
    assert spec.verdict(0.0) is Verdict.CONTINUE
    assert SprtSpec.parse([]) == SprtSpec()
    for bad, says in [(["elo0=5", "elo1=0"], "below elo1"), (["alpha=0"], "alpha"),
                      (["gamma=1"], "elo0=, elo1="), (["elo1=x"], "elo1: a number"),
                      (["elo1=3", "elo1=4"], "twice"), (["beta=nan"], "beta")]:
        with pytest.raises(SprtError, match=says):
            SprtSpec.parse(bad)


# -- the test's error rates, by simulation ------------------------------------------------

def _pair_probs(elo: float, draw: float = 0.1) -> list[float]:
    """A pair's five scores when each game is won with the expected score of ``elo``
    less half the draws, drawn with ``draw``, the two games independent."""
    s = logistic_score(elo)
    w, d = s - draw / 2, draw
    lo = 1 - w - d
    g = [lo, d, w]  # a game's 0, 1/2, 1
    out = [0.0] * 5
    for i, p in enumerate(g):
        for j, q in enumerate(g):
            out[i + j] += p * q
    return out


def _run_sprt(spec: SprtSpec, probs: list[float], rng: random.Random, limit: int,
              every: int = 8) -> Verdict:
    """One sequential test, the LLR looked at every ``every`` pairs (as a match's
    progress does), up to ``limit`` pairs."""
    counts = [0] * 5
    for n in range(1, limit + 1):
        counts[rng.choices(range(5), probs)[0]] += 1
        if n % every == 0:
            v = spec.verdict(llr(Pentanomial.of(counts), spec.elo0, spec.elo1))
            if v is not Verdict.CONTINUE:
                return v
    return Verdict.CONTINUE


@pytest.mark.parametrize(("true_elo", "wrong", "rate"), [(0.0, Verdict.H1, 0.05),
                                                         (40.0, Verdict.H0, 0.10)])
def test_sprt_error_rates_come_out_near_alpha_and_beta(true_elo: float, wrong: Verdict,
                                                       rate: float) -> None:
    """300 simulated tests at elo0 (H1 accepted by error, at most ~alpha) and at elo1
    (H0 accepted by error, at most ~beta): the wide hypotheses (0 against 40 Elo) keep
    each run short. The SPRT's errors are at most alpha and beta up to its overshoot
    (it is conservative), so the observed rate must lie below rate + 3 standard errors
    of 300 Bernoulli trials, and the test must decide nearly every run."""
    spec = SprtSpec(elo0=0.0, elo1=40.0, alpha=0.05, beta=0.10)
    rng = random.Random(f"sprt-{true_elo}")
    runs = 300
    verdicts = [_run_sprt(spec, _pair_probs(true_elo), rng, limit=4000) for _ in range(runs)]
    errors = sum(v is wrong for v in verdicts) / runs
    undecided = sum(v is Verdict.CONTINUE for v in verdicts) / runs
    assert errors <= rate + 3 * math.sqrt(rate * (1 - rate) / runs)
    assert errors >= rate / 5  # not a test that never errs because it never decides
    assert undecided <= 0.02
