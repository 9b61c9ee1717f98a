"""Can a spectator hurt a game? Honest decisions/s and their round trip under each
attack of docs/security.md#a-spectator, against quiet windows of the same run.

One ``chinchon serve --http --trusted-proxy 127.0.0.1`` (SQLite in a temporary folder;
its web view a process of its own) plays a round-robin of 6 fast raw bots (first legal
action; 2 bot processes, 4 streams per bot, concurrency 4) that never ends while the
bench runs. Windows alternate: quiet, then an attack, then quiet... for ``--rounds``
rounds; each attack is a process of its own (bench/spectator_attack.py) at nice 19: it
stands for another machine (on this 2-core box, its own CPU would otherwise be what
is measured), and it gives every request or connection an X-Forwarded-For of its own,
so that no per-viewer bound holds it back: only the global ones do. The attacks:

* ``replays``: 8 replay requests in flight (random finished game and view);
* ``pages``: the games list and the standings, 8 in flight;
* ``connections``: 1,000 idle connections and 1,000 slowloris ones (opened again when
  closed);
* ``streams``: 1,000 event streams that never read (home, tournament, live tables);
* ``unknown``: 60,000 requests for ids that do not exist (the web process's RSS before
  and after).

Measured in each window: honest decisions/s (counted by the bots, per 0.1 s) and the
p99 of the bot-side draw -> discard delay (the referee's round trip as a bot sees it:
the one case where the same seat acts twice in a row), the CPU of the referee and of
the web process; each attack's ratios are against the mean of the quiet windows just
before and after it. The goal: >= 0.8x decisions/s and p99 <= 2x.

Then two more runs:

* **feed cost**: serve without ``--http`` and with it, alternately (a fresh server and
  bots each time), quiet: the decisions/s ratio within each pair;
* **file limit**: serve at RLIMIT_NOFILE 1,024 (soft and hard), with a bot that drops
  its connection every few seconds and comes back, quiet and while 1,100 idle web
  connections are held: reconnects, refusals, games forfeited.

    python bench/bench_spectator.py                 # 3 rounds of 20 s windows: ~15 minutes
    python bench/bench_spectator.py --rounds 1 --window 10
    python bench/bench_spectator.py --smoke --json out.json   # every part briefly: a check
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from harness.fastbots import PLAY_METHOD, phase_of, request_view  # noqa: E402
from harness.measure import cpu_seconds, finish, proc_status  # noqa: E402
from harness.spectated import BUCKET, Run, measured, token  # noqa: E402

ATTACK = HERE / "spectator_attack.py"


# -- the honest bots (a process of their own) ---------------------------------------------


async def honest(target: str, bots: list[str], streams: int, drop_every: float,
                 out: Path) -> None:
    """Streams of the fast raw bot for each of ``bots``; every ``drop_every`` seconds
    (0: never) the connection is dropped and opened again. Until SIGTERM, then the
    counts go to ``out``."""
    import grpc
    from chinchon.v1 import game_pb2 as g
    from chinchon.v1 import referee_pb2 as pb
    from chinchon.wire import delimited, varint

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    hello = pb.PlayRequest(hello=pb.Hello(client="bench-spectator", queue=pb.QueueMode()))
    hello_bytes = hello.SerializeToString()
    parse = request_view().FromString
    draw, discard = g.PHASE_DRAW, g.PHASE_DISCARD
    mono = time.monotonic
    buckets: Counter[int] = Counter()
    samples: list[tuple[float, float]] = []
    counts: Counter[str] = Counter()

    async def one(ch: Any, tok: str) -> None:
        call = ch.stream_stream(PLAY_METHOD)(metadata=(("authorization", f"Bearer {tok}"),))
        drew_at = 0.0
        first = True
        try:
            await call.write(hello_bytes)
            while True:
                data = await call.read()
                if data is grpc.aio.EOF:
                    break
                if first:
                    counts["streams_opened"] += 1
                    first = False
                msg = parse(data)
                if not msg.HasField("action_request"):
                    continue
                now = mono()
                req = msg.action_request
                phase = phase_of(req.observation)
                if drew_at and phase == discard:
                    samples.append((now, now - drew_at))
                drew_at = 0.0
                answer = delimited(2, b"\x08" + varint(req.request_id) + delimited(2, req.legal_actions[0]))
                if phase == draw:
                    drew_at = mono()
                await call.write(answer)
                buckets[int(now / BUCKET)] += 1
        except grpc.aio.AioRpcError as e:
            counts[f"closed:{e.code().name}"] += 1
        except asyncio.CancelledError:
            call.cancel()

    while not stop.is_set():
        ch = grpc.aio.insecure_channel(target)
        tasks = [asyncio.ensure_future(one(ch, token(b))) for b in bots for _ in range(streams)]
        try:
            await asyncio.wait_for(stop.wait(), drop_every if drop_every > 0 else None)
        except TimeoutError:
            counts["drops"] += 1
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await ch.close(grace=None)
    out.write_text(json.dumps({"buckets": {str(k): v for k, v in buckets.items()},
                               "samples": samples, "counts": counts}))


def honest_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_spectator.py bots")
    ap.add_argument("--target", required=True)
    ap.add_argument("--bots", required=True)
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--drop-every", type=float, default=0.0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    asyncio.run(honest(a.target, a.bots.split(","), a.streams, a.drop_every, Path(a.out)))
    return 0


# -- a server and its bots -----------------------------------------------------------------


def attacker(mode: str, run: Run, extra: list[str]) -> subprocess.Popen[str]:
    """An attacker process, once it is ready (a SIGTERM from then on ends it with its
    counts: on a busy machine, one stopped while still starting printed nothing)."""
    p = subprocess.Popen([sys.executable, str(ATTACK), mode, run.url, "--tid", run.tid,
                          "--spread", "--nice", "19", "--seconds", "3600", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    first = p.stdout.readline()  # its "ready" line, or "" if it ended first
    if not first.startswith('{"ready"'):
        raise RuntimeError(f"attacker {mode} did not start: {first!r}")
    return p


def ended(p: subprocess.Popen[str]) -> dict[str, Any]:
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    lines = out.strip().splitlines()
    if not lines:
        return {"error": err[-500:]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


# -- the parts -------------------------------------------------------------------------------


def attacks(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    run = Run(tmp, "attacks", http=True)
    conns, streams, unknown = (args.connections, args.streams, args.unknown)
    plan: list[tuple[str, list[tuple[str, list[str]]]]] = [
        ("replays", [("replays", ["--in-flight", "8"])]),
        ("pages", [("pages", ["--in-flight", "8"])]),
        ("connections", [("idle", ["--connections", str(conns // 2)]),
                         ("slowloris", ["--connections", str(conns // 2)])]),
        ("streams", [("streams", ["--connections", str(streams)])]),
        ("unknown", [("unknown", ["--requests", str(unknown), "--in-flight", "16"])]),
    ]
    plan = [(name, kinds) for name, kinds in plan if name in args.attacks.split(",")]
    windows: list[dict[str, Any]] = []
    try:
        run.wait_playing()
        time.sleep(args.warmup)  # more games played: replays to ask for
        for rnd in range(args.rounds):
            for name, kinds in plan:
                windows.append(_quiet(run, rnd, args.window))
                rss0 = proc_status(run.web_pid)["VmRSS"]
                procs = [attacker(mode, run, extra) for mode, extra in kinds]
                if name != "unknown":  # (it is measured from its first request to its last)
                    time.sleep(args.settle)
                t0 = time.monotonic()
                cpu0 = _cpu(run)
                if name == "unknown":
                    procs[0].wait(args.window * 30)
                    t1 = time.monotonic()
                else:
                    time.sleep(args.window)
                    t1 = time.monotonic()
                cpu1 = _cpu(run)
                counts = [ended(p) for p in procs]
                windows.append({"round": rnd, "kind": name, "a": t0, "b": t1, "attack": counts,
                                "referee_cpu_s": cpu1["referee_cpu_s"] - cpu0["referee_cpu_s"],
                                "web_cpu_s": cpu1["web_cpu_s"] - cpu0["web_cpu_s"],
                                "web_rss_growth_kib": proc_status(run.web_pid)["VmRSS"] - rss0,
                                "load": os.getloadavg()[0]})
                print(f"  round {rnd + 1}: {name} done (load {os.getloadavg()[0]:.2f})", flush=True)
                time.sleep(args.wind_down)  # the attack's connections wind down
        windows.append(_quiet(run, args.rounds, args.window))
    finally:
        terms = run.terminations()  # the games of the measured time (not those the stop cuts)
        bots = run.stop()
    for w in windows:
        w.update(measured(bots, w["a"], w["b"]))
    return {"windows": windows, "terminations": dict(terms), "bots": [b["counts"] for b in bots],
            "summary": _summary(windows)}


def _quiet(run: Run, rnd: int, seconds: float) -> dict[str, Any]:
    t0, cpu0 = time.monotonic(), _cpu(run)
    time.sleep(seconds)
    cpu1 = _cpu(run)
    return {"round": rnd, "kind": "quiet", "a": t0, "b": time.monotonic(),
            "referee_cpu_s": cpu1["referee_cpu_s"] - cpu0["referee_cpu_s"],
            "web_cpu_s": cpu1["web_cpu_s"] - cpu0["web_cpu_s"], "load": os.getloadavg()[0]}


def _cpu(run: Run) -> dict[str, float]:
    return {"referee_cpu_s": cpu_seconds(run.pid), "web_cpu_s": cpu_seconds(run.web_pid)}


def _summary(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per attack: decisions/s and p99 against the quiet windows on either side."""
    out: dict[str, Any] = {}
    for i, w in enumerate(windows):
        if w["kind"] == "quiet":
            continue
        quiet = [x for x in (windows[i - 1], windows[i + 1] if i + 1 < len(windows) else None)
                 if x is not None and x["kind"] == "quiet"]
        q_rate = statistics.mean(x["decisions_per_s"] for x in quiet)
        q_p99 = statistics.mean(x["p99_ms"] for x in quiet)
        q_us = statistics.mean(_us_per_decision(x) for x in quiet)
        s = out.setdefault(w["kind"], {"rate_ratio": [], "p99_ratio": [], "rss_kib": [],
                                       "referee_cpu_s": [], "web_cpu_s": [], "us_ratio": []})
        s["us_ratio"].append(_us_per_decision(w) / q_us if q_us else float("nan"))
        s["rate_ratio"].append(w["decisions_per_s"] / q_rate if q_rate else float("nan"))
        s["p99_ratio"].append(w["p99_ms"] / q_p99 if q_p99 else float("nan"))
        s["rss_kib"].append(w["web_rss_growth_kib"])
        s["referee_cpu_s"].append(w["referee_cpu_s"] / (w["b"] - w["a"]))
        s["web_cpu_s"].append(w["web_cpu_s"] / (w["b"] - w["a"]))
    return out


def _us_per_decision(w: dict[str, Any]) -> float:
    """The referee's CPU per decision (µs) in a window: what an attack makes it do."""
    n = w["decisions_per_s"] * (w["b"] - w["a"])
    return float(w["referee_cpu_s"] / n * 1e6) if n else float("nan")


def feed_cost(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Quiet decisions/s without the web view and with it (fresh servers, alternately)."""
    pairs = []
    for i in range(args.pairs):
        rates = {}
        for http in (False, True):
            run = Run(tmp, f"feed{i}{'h' if http else ''}", http=http)
            run.wait_playing()
            time.sleep(args.settle)
            t0, cpu0 = time.monotonic(), cpu_seconds(run.pid)
            time.sleep(args.window)
            t1, cpu = time.monotonic(), cpu_seconds(run.pid) - cpu0
            bots = run.stop()
            got = measured(bots, t0, t1)
            rates[http] = {**got, "referee_cpu_s": cpu,
                           "us_per_decision": cpu / max(1.0, got["decisions_per_s"] * (t1 - t0)) * 1e6}
        pairs.append({"without": rates[False], "with": rates[True],
                      "ratio": rates[True]["decisions_per_s"] / rates[False]["decisions_per_s"],
                      "us_ratio": rates[True]["us_per_decision"] / rates[False]["us_per_decision"],
                      "load": os.getloadavg()[0]})
        print(f"  feed cost pair {i + 1}: ratio {pairs[-1]['ratio']:.3f}", flush=True)
    return {"pairs": pairs}


def file_limit(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """At a 1,024 file limit, a bot dropping its connection every few seconds, quiet and
    while 1,100 idle web connections are held."""
    run = Run(tmp, "fds", http=True, nofile=1024, drop_every=args.drop_every)
    windows = []
    try:
        run.wait_playing()
        time.sleep(args.settle)
        for kind in ("quiet", "held", "quiet"):
            procs = [attacker("idle", run, ["--connections", "1100"])] if kind == "held" else []
            if procs:
                time.sleep(args.settle)
            t0 = time.monotonic()
            time.sleep(args.window)
            windows.append({"kind": kind, "a": t0, "b": time.monotonic(),
                            "attack": [ended(p) for p in procs], "load": os.getloadavg()[0]})
    finally:
        terms = run.terminations()
        bots = run.stop()
    for w in windows:
        w.update(measured(bots, w["a"], w["b"]))
    quiet = statistics.mean(w["decisions_per_s"] for w in windows if w["kind"] == "quiet")
    held = next(w for w in windows if w["kind"] == "held")
    return {"windows": windows, "terminations": dict(terms), "dropper": bots[1]["counts"],
            "rate_ratio": held["decisions_per_s"] / quiet if quiet else float("nan")}


def report(out: dict[str, Any]) -> None:
    if "attacks" not in out:
        return
    def fmt(xs: list[float], f: str = "{:.2f}") -> str:
        return f"{statistics.median(xs):.2f} (" + " ".join(f.format(x) for x in xs) + ")"

    print()
    print("attack: median (each round) of decisions/s, p99 draw->discard and the referee's CPU")
    print("per decision against the quiet windows either side; the web process's RSS growth")
    for kind, s in out["attacks"]["summary"].items():
        print(f"  {kind:<12} decisions/s {fmt(s['rate_ratio'])}  p99 {fmt(s['p99_ratio'])}  "
              f"CPU/decision {fmt(s['us_ratio'])}  RSS +KiB " + " ".join(f"{x:.0f}" for x in s["rss_kib"]))
    quiet = [w for w in out["attacks"]["windows"] if w["kind"] == "quiet"]
    rates = [w["decisions_per_s"] for w in quiet]
    print(f"quiet windows: {statistics.median(rates):,.0f} decisions/s ({min(rates):,.0f}-"
          f"{max(rates):,.0f}), p99 {statistics.median(w['p99_ms'] for w in quiet):.2f} ms, load "
          f"{min(w['load'] for w in quiet):.1f}-{max(w['load'] for w in quiet):.1f}")
    print(f"games: {out['attacks']['terminations']}")
    if "feed_cost" not in out:
        return
    fc = out["feed_cost"]["pairs"]
    print("feed cost, with --http / without (quiet): decisions/s " +
          fmt([p["ratio"] for p in fc]) + ", the referee's CPU per decision " +
          fmt([p["us_ratio"] for p in fc]))
    fl = out["file_limit"]
    print(f"file limit 1,024: decisions/s held / quiet {fl['rate_ratio']:.3f}; dropper "
          f"{fl['dropper']}; games {fl['terminations']}")
    print(f"load average (1 min) at start / end: {out['load'][0]:.2f} / {out['load'][1]:.2f}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bots"]:
        return honest_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=20.0, help="seconds of a measured window")
    ap.add_argument("--settle", type=float, default=4.0, help="seconds an attack runs before it is measured")
    ap.add_argument("--warmup", type=float, default=20.0)
    ap.add_argument("--wind-down", type=float, default=2.0,
                    help="seconds after an attack before the next quiet window")
    ap.add_argument("--pairs", type=int, default=3, help="feed cost pairs")
    ap.add_argument("--connections", type=int, default=2000)
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--unknown", type=int, default=60_000)
    ap.add_argument("--drop-every", type=float, default=5.0)
    ap.add_argument("--attacks", default="replays,pages,connections,streams,unknown",
                    help="the attacks run, in this order (default: all)")
    ap.add_argument("--only", choices=["attacks", "feed_cost", "file_limit"], action="append")
    ap.add_argument("--smoke", action="store_true", help="every part for a few seconds: a check")
    ap.add_argument("--json", help="write every figure here")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rounds, args.window, args.settle, args.warmup, args.pairs = 1, 1.0, 0.5, 1.0, 1
        args.wind_down = 0.5
        args.connections, args.streams, args.unknown, args.drop_every = 100, 50, 500, 1.0
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    parts = args.only or ["attacks", "feed_cost", "file_limit"]
    print(f"bench_spectator: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          f"{args.rounds} rounds of {args.window:g} s windows", flush=True)
    out: dict[str, Any] = {"load": [os.getloadavg()[0]]}
    with tempfile.TemporaryDirectory(prefix="bench-spectator-") as tmp:
        for part in parts:
            out[part] = {"attacks": attacks, "feed_cost": feed_cost, "file_limit": file_limit}[part](
                args, Path(tmp))
    out["load"].append(os.getloadavg()[0])
    return finish(out, args.json, report)


if __name__ == "__main__":
    sys.exit(main())
