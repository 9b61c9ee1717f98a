"""The referee's metrics for whoever operates it, in Prometheus' text format.

Plain counters and fixed-bucket histograms, process-wide (``METRICS``), written where
things happen: a decision's time once per answer (one bisect and three additions on the
hot path, nothing else), an illegal answer, a timeout, a forfeit and a finished game in
the referee, each store write in the store-writer thread. Gauges (games running,
streams per state) are read when scraped, by the callbacks ``chinchon serve`` registers.
``render`` writes the text exposition format 0.0.4, each series with the process's
constant labels (``process``: the owner id in shared mode). Served by
:mod:`.service.metrics_http` (``chinchon serve --metrics HOST:PORT``; docs/metrics.md).

Why not ``prometheus_client``: its counters take a lock per increment and its registry
is global to the library; these are single-writer integers (the event loop's, the store
writer's) and the format is a page of text (docs/metrics.md says so too).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

#: Decision time buckets (seconds): from a fast bot's answer to a slow one's clock.
DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Store write buckets (seconds): SQLite's fsync to a remote PostgreSQL.
STORE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)

#: A gauge's samples: (labels, value).
Samples = Iterable[tuple[Mapping[str, str], float]]


class Histogram:
    """Counts by bucket (the last: above every bound), their sum and count."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1


@dataclass
class Metrics:
    """The counters; every field is written by one thread only."""

    decision_seconds: Histogram = field(default_factory=lambda: Histogram(DECISION_BUCKETS))
    illegal_answers: int = 0
    timeouts: int = 0
    #: By termination (e.g. ``forfeit_timeout``).
    forfeits: dict[str, int] = field(default_factory=dict)
    #: By termination (``normal``, ``chinchon``, a forfeit, ``aborted``...).
    games_finished: dict[str, int] = field(default_factory=dict)
    store_seconds: Histogram = field(default_factory=lambda: Histogram(STORE_BUCKETS))
    #: Gauges read at each scrape: name -> (help, samples).
    gauges: dict[str, tuple[str, Callable[[], Samples]]] = field(default_factory=dict)
    #: Labels of every series (``process`` in shared mode).
    labels: dict[str, str] = field(default_factory=dict)

    def finished(self, termination: str) -> None:
        self.games_finished[termination] = self.games_finished.get(termination, 0) + 1

    def forfeited(self, termination: str) -> None:
        self.forfeits[termination] = self.forfeits.get(termination, 0) + 1

    def render(self) -> str:
        """The text exposition of every metric."""
        out: list[str] = []
        _histogram(out, "chinchon_decision_seconds", "time bots took to answer a request "
                   "(accepted or refused), on the referee's clock", self.decision_seconds,
                   self.labels)
        _family(out, "chinchon_decisions_total", "counter", "answers bots gave (rate: "
                "decisions per second)", [({}, self.decision_seconds.count)], self.labels)
        _family(out, "chinchon_illegal_answers_total", "counter",
                "answers refused as illegal or malformed", [({}, self.illegal_answers)],
                self.labels)
        _family(out, "chinchon_timeouts_total", "counter",
                "requests whose clock ran out (the default action played)", [({}, self.timeouts)],
                self.labels)
        _family(out, "chinchon_forfeits_total", "counter", "seats that forfeited a game",
                [({"termination": k}, v) for k, v in sorted(self.forfeits.items())], self.labels)
        _family(out, "chinchon_games_finished_total", "counter", "games that ended",
                [({"termination": k}, v) for k, v in sorted(self.games_finished.items())],
                self.labels)
        _histogram(out, "chinchon_store_write_seconds", "time of one write of the store "
                   "writer (a game's row: begun, finished, voided)", self.store_seconds,
                   self.labels)
        for name, (help_text, samples) in sorted(self.gauges.items()):
            _family(out, name, "gauge", help_text, list(samples()), self.labels)
        return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Mapping[str, str], common: Mapping[str, str]) -> str:
    both = {**common, **labels}
    if not both:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in both.items()) + "}"


def _number(v: float) -> str:
    return repr(float(v)) if isinstance(v, float) and not v.is_integer() else str(int(v))


def _family(out: list[str], name: str, kind: str, help_text: str,
            samples: list[tuple[Mapping[str, str], float]], common: Mapping[str, str]) -> None:
    out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        out.append(f"{name}{_labels(labels, common)} {_number(value)}")


def _histogram(out: list[str], name: str, help_text: str, h: Histogram,
               common: Mapping[str, str]) -> None:
    out += [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
    running = 0
    for bound, n in zip((*h.bounds, float("inf")), h.counts, strict=True):
        running += n
        le = "+Inf" if bound == float("inf") else repr(bound)
        out.append(f"{name}_bucket{_labels({'le': le}, common)} {running}")
    out.append(f"{name}_sum{_labels({}, common)} {h.sum!r}")
    out.append(f"{name}_count{_labels({}, common)} {h.count}")


#: The process's metrics.
METRICS = Metrics()
