"""The referee's counts (:mod:`..metrics`) copied into prometheus_client's multiprocess
files, where the metrics process (:mod:`.metrics_process`) reads them.

A :class:`Publisher` writes, once a second (and once at start), every total of
``METRICS`` and every gauge's current samples into the files
``counter_<pid>.db``, ``histogram_<pid>.db`` and ``gauge_livesum_<pid>.db`` of a
directory, in the layout prometheus_client's own metrics write in multiprocess mode
(``PROMETHEUS_MULTIPROC_DIR``): its ``MultiProcessCollector`` reads them as it reads its
own. The totals are written as they are (not increments), so a second's copy costs
about forty small writes into a memory map, off the decision path: the game path keeps
its one bisect per decision.

The names are the metrics' names (docs/metrics.md): a counter's family is written
without ``_total`` and its sample with it, as prometheus_client's ``Counter`` does, so
the exposition names ``chinchon_decisions_total`` as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from prometheus_client.mmap_dict import MmapedDict, mmap_key

from ..metrics import METRICS, Histogram, Metrics

#: Seconds between two copies (the page a scraper reads is at most this old).
EVERY = 1.0
#: Gauges are summed over the writers of the directory (one referee process), and the
#: file of a process that is gone is dropped (prometheus_client's ``livesum``).
GAUGE_MODE = "livesum"


class _File:
    """One of prometheus_client's multiprocess files, written by this process alone.

    prometheus_client's file class has no type annotations: this is the one place
    that calls it."""

    def __init__(self, path: Path) -> None:
        self._dict = MmapedDict(str(path))  # type: ignore[no-untyped-call]
        self._last: dict[str, float] = {}

    def write(self, key: str, value: float) -> None:
        if self._last.get(key) != value:
            self._dict.write_value(key, value, 0.0)  # type: ignore[no-untyped-call]
            self._last[key] = value

    def close(self) -> None:
        self._dict.close()  # type: ignore[no-untyped-call]


@functools.lru_cache(maxsize=1024)
def _cached_key(family: str, sample: str, labels: tuple[tuple[str, str], ...],
                help_text: str) -> str:
    return mmap_key(family, sample, [k for k, _ in labels], [v for _, v in labels], help_text)


def _key(family: str, sample: str, labels: Mapping[str, str], help_text: str) -> str:
    """The file's key of a sample (a JSON text: made once per series, then remembered)."""
    return _cached_key(family, sample, tuple(labels.items()), help_text)


class Publisher:
    """``metrics`` copied into ``directory`` by this process (its pid names the files)."""

    def __init__(self, directory: Path, metrics: Metrics = METRICS) -> None:
        self.metrics = metrics
        pid = os.getpid()
        self._counters = _File(directory / f"counter_{pid}.db")
        self._histograms = _File(directory / f"histogram_{pid}.db")
        self._gauges = _File(directory / f"gauge_{GAUGE_MODE}_{pid}.db")
        self._task: asyncio.Task[None] | None = None

    def publish(self) -> None:
        """Write every total and gauge now."""
        m = self.metrics
        common = m.labels
        self._histogram("chinchon_decision_seconds", "time bots took to answer a request "
                        "(accepted or refused), on the referee's clock", m.decision_seconds)
        self._counter("chinchon_decisions", "answers bots gave (rate: decisions per second)",
                      [({}, m.decision_seconds.count)])
        self._counter("chinchon_illegal_answers", "answers refused as illegal or malformed",
                      [({}, m.illegal_answers)])
        self._counter("chinchon_timeouts", "requests whose clock ran out (the default action "
                      "played)", [({}, m.timeouts)])
        self._counter("chinchon_forfeits", "seats that forfeited a game",
                      [({"termination": k}, v) for k, v in sorted(m.forfeits.items())])
        self._counter("chinchon_games_finished", "games that ended",
                      [({"termination": k}, v) for k, v in sorted(m.games_finished.items())])
        self._histogram("chinchon_store_write_seconds", "time of one write of the store writer "
                        "(a game's row: begun, finished, voided)", m.store_seconds)
        for name, (help_text, samples) in sorted(m.gauges.items()):
            for labels, value in samples():
                self._gauges.write(_key(name, name, {**common, **labels}, help_text), value)

    def _counter(self, name: str, help_text: str,
                 samples: Sequence[tuple[Mapping[str, str], float]]) -> None:
        for labels, value in samples:
            key = _key(name, name + "_total", {**self.metrics.labels, **labels}, help_text)
            self._counters.write(key, value)

    def _histogram(self, name: str, help_text: str, h: Histogram) -> None:
        common = self.metrics.labels
        counts = list(h.counts)  # the store writer's thread may add to it meanwhile
        for bound, n in zip((*h.bounds, float("inf")), counts, strict=True):
            le = "+Inf" if bound == float("inf") else repr(bound)
            self._histograms.write(_key(name, name + "_bucket", {**common, "le": le}, help_text), n)
        self._histograms.write(_key(name, name + "_sum", common, help_text), h.sum)

    def start(self) -> None:
        """Publish now, then every :data:`EVERY` seconds on the running loop."""
        self.publish()
        self._task = asyncio.ensure_future(self._every())

    async def _every(self) -> None:
        while True:
            await asyncio.sleep(EVERY)
            self.publish()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for f in (self._counters, self._histograms, self._gauges):
            f.close()
