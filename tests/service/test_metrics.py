"""The referee's Prometheus endpoint: ``chinchon serve --metrics HOST:PORT`` scraped
during a real tournament (a real server process, SDK bots as processes, one of them
answering illegally and late at times), then after it; and the exposition format itself
(the referee's counts through prometheus_client's multiprocess files to the page). Off by
default: a serve without the flag listens on nothing more. The endpoint's process and
bounds: test_metrics_process.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from chinchon_referee.metrics import Histogram, Metrics
from chinchon_referee.service.metrics_files import Publisher
from chinchon_referee.service.metrics_process import Bounds, Endpoint

from tests.support.admin import AdminCli, bots_over
from tests.support.helpers import bot_token, sdk_bot
from tests.support.serve import Serve, db_games, free_port
from tests.support.waits import until_sync

TOML = """name = "metrics cup"
games_per_pairing = 6
concurrency = 2
start = "manual"
[rules]
score_limit = 40
[time_control]
per_move = 2.0
bank = 10.0
[[participants]]
name = "alice"
[[participants]]
name = "bob"
[[participants]]
name = "carol"
"""
#: carol answers her first request of each game with an action that is never legal.
CAROL = """
from chinchon.engine import Discard, Phase
seen = set()
def choose(obs, legal, request):
    if request.game_id not in seen and obs.phase is Phase.DRAW:
        seen.add(request.game_id)
        return Discard(obs.hand[0])
    return legal[0]
"""

#: Every series the page may have, and every label a series may carry: counts, times
#: and states, nothing of a game's cards, a bot's token or a game's id.
SERIES = {"chinchon_decision_seconds_bucket", "chinchon_decision_seconds_sum",
          "chinchon_decision_seconds_count", "chinchon_decisions_total",
          "chinchon_illegal_answers_total", "chinchon_timeouts_total", "chinchon_forfeits_total",
          "chinchon_games_finished_total", "chinchon_store_write_seconds_bucket",
          "chinchon_store_write_seconds_sum", "chinchon_store_write_seconds_count",
          "chinchon_games_running", "chinchon_streams"}
LABELS = {"le", "termination", "state", "process"}


def scrape(url: str) -> dict[str, float]:
    """Every sample of the page: ``name{labels}`` -> value."""
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def test_metrics_during_a_tournament(tmp_path: Path) -> None:
    files = {b: tmp_path / f"{b}.token" for b in ("alice", "bob", "carol")}
    for b, f in files.items():
        f.write_text(bot_token(b))
    port = free_port()
    server = Serve(tmp_path, port, tmp_path / "m.sqlite3", 1,
                   # Polled every 20 ms below: past the default rate bound.
                   ["--metrics", "127.0.0.1:0", "--metrics-client-rate", "1000", *[x for b, f in files.items()
                                                  for x in ("--bot", f"{b}=@{f}")]])
    procs: list[subprocess.Popen[bytes]] = []
    try:
        event = next(json.loads(x) for x in server.out.read_text().splitlines()
                     if '"metrics"' in x)
        url = event["url"]
        before = scrape(url)
        assert before["chinchon_games_running"] == 0
        assert before['chinchon_streams{state="idle"}'] == 0
        admin = AdminCli(tmp_path, port)
        (tmp_path / "cup.toml").write_text(TOML)
        made = admin("create", str(tmp_path / "cup.toml"), "--quiet")  # stdout, then stderr
        tid = made.split("\n", 1)[0]
        assert re.fullmatch(r"t-[0-9a-f]+", tid), made
        procs = bots_over(port, {"alice": bot_token("alice"), "bob": bot_token("bob")}, tmp_path)
        (tmp_path / "carol.py").write_text(CAROL)
        procs.append(subprocess.Popen(
            [*sdk_bot(f"{tmp_path / 'carol.py'}:choose"), "--target", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "carol.log", "wb"),  # noqa: SIM115
            env=dict(os.environ, CHINCHON_TOKEN=bot_token("carol"))))
        until_sync(lambda: scrape(url)['chinchon_streams{state="idle"}'] >= 3,
                   "the bots did not connect", 60, lambda: scrape(url))
        admin("start", tid)
        # During: a game running, decisions counted, seated streams.
        until_sync(lambda: scrape(url)["chinchon_decisions_total"] > 0, "no decision", 60)
        until_sync(lambda: scrape(url)["chinchon_games_running"] >= 1
                   or scrape(url).get('chinchon_games_finished_total{termination="normal"}', 0) > 0,
                   "no game ran", 60)
        assert f"tournament {tid} is finished" in admin("watch", tid)

        def finished(page: dict[str, float]) -> float:
            return sum(v for k, v in page.items() if k.startswith("chinchon_games_finished_total"))

        # The referee copies its counts out once a second: the last game's shows soon.
        until_sync(lambda: finished(scrape(url)) == 18, "not every game counted", 30, lambda: scrape(url))
        after = scrape(url)
        assert finished(after) == 18
        assert after["chinchon_games_running"] == 0
        # Every refused answer the records hold (carol's, about one per game of hers) is
        # counted, no more and no fewer.
        refused = sum(1 for g in db_games(tmp_path / "m.sqlite3", tid).values()
                      for i in json.loads(g["record"]).get("incidents", [])
                      if i.get("kind") in ("SEAT_INCIDENT_KIND_ILLEGAL",
                                           "SEAT_INCIDENT_KIND_MALFORMED"))
        assert refused >= 6
        assert after["chinchon_illegal_answers_total"] == refused
        assert after["chinchon_decision_seconds_count"] == after["chinchon_decisions_total"] > 100
        assert after['chinchon_decision_seconds_bucket{le="+Inf"}'] == after["chinchon_decisions_total"]
        assert 0 < after["chinchon_decision_seconds_sum"] < 2.0 * after["chinchon_decisions_total"]
        assert after["chinchon_store_write_seconds_count"] >= 18  # a row per game at least
        # Nothing but the documented series and labels, no token anywhere on the page.
        with urllib.request.urlopen(url, timeout=10) as r:
            page = r.read().decode()
        for key in after:
            name, _, labels = key.partition("{")
            assert name in SERIES, key
            assert {kv.split("=", 1)[0] for kv in labels.rstrip("}").split(",") if kv} <= LABELS, key
        for secret in (bot_token("alice"), bot_token("bob"), bot_token("carol"), tid):
            assert secret not in page
        # Not found, and a bad method.
        for path, method, code in (("/", "GET", 404), ("/metrics", "POST", 405)):
            req = urllib.request.Request(url.replace("/metrics", path), method=method)
            try:
                urllib.request.urlopen(req, timeout=10)
                raise AssertionError(f"{method} {path} answered 200")
            except urllib.error.HTTPError as e:
                assert e.code == code
    finally:
        for p in procs:
            p.kill()
            p.wait()
        server.stop()


def test_the_exposition_format(tmp_path: Path) -> None:
    m = Metrics(labels={"process": 'p"1'})
    h = m.decision_seconds
    for v in (0.0005, 0.003, 0.003, 20.0):
        h.observe(v)
    m.timeouts = 2
    m.finished("normal")
    m.forfeited("forfeit_timeout")
    m.gauges["chinchon_games_running"] = ("games being played now", lambda: [({}, 3)])
    publisher = Publisher(tmp_path, m)
    publisher.publish()
    text = Endpoint(str(tmp_path), Bounds()).page(0.0).decode()
    assert '# TYPE chinchon_decision_seconds histogram' in text
    assert 'chinchon_decision_seconds_bucket{le="0.001",process="p\\"1"} 1.0' in text
    assert 'chinchon_decision_seconds_bucket{le="0.005",process="p\\"1"} 3.0' in text
    assert 'chinchon_decision_seconds_bucket{le="+Inf",process="p\\"1"} 4.0' in text
    assert 'chinchon_decision_seconds_count{process="p\\"1"} 4.0' in text
    assert '# TYPE chinchon_timeouts_total counter' in text
    assert 'chinchon_timeouts_total{process="p\\"1"} 2.0' in text
    assert 'chinchon_forfeits_total{process="p\\"1",termination="forfeit_timeout"} 1.0' in text
    assert 'chinchon_games_running{process="p\\"1"} 3.0' in text
    assert text.endswith("\n")
    # Published again: the totals as they are now, not added to the last ones.
    m.timeouts = 5
    publisher.publish()
    again = Endpoint(str(tmp_path), Bounds()).page(0.0).decode()
    assert 'chinchon_timeouts_total{process="p\\"1"} 5.0' in again
    assert 'chinchon_decision_seconds_count{process="p\\"1"} 4.0' in again
    bare = Histogram((1.0,))
    bare.observe(1.0)  # a bound is inclusive ("le")
    assert bare.counts == [1, 0]
