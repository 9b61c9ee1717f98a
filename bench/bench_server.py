"""Referee server benchmarks: the gRPC echo ceiling, referee throughput and latency, idle memory.

Everything runs on loopback (127.0.0.1), in bounded loops that stop by themselves:

1. **Echo ceiling.** A tiny ``grpc.aio`` server in its own process with one bidi method
   that writes back every message it reads (generic handler, raw bytes, payload the
   size of a typical ActionRequest), and one client process holding 100 streams that
   each do request/response round trips back to back. Reported: round trips/s and the
   round-trip latency at that load.
2. **Referee.** The real referee (``start_server`` + ``Referee``) in its own process,
   with 100 games in flight at all times ("lanes": each lane calls ``referee.play`` for
   one GameSpec after another), and 200 bot streams (100 games x 2 seats) from one
   client process (50 streams per connection, as the echo's; ``--bot-per-channel 100``
   puts them on as many connections as the echo's 100 streams, each then carrying as many
   streams with a request outstanding: no difference measured, docs/benchmarks.md), of
   minimal raw bots that answer every ActionRequest with its first
   legal action (no SDK; each message is read only as far as the request id, the phase
   and the first legal action, and the answer is written as bytes: the bots do as
   little as the echo client, so what is measured is the referee). Both servers run on
   the event loop ``chinchon serve`` uses (uvloop where installed; ``--loop``), the
   clients on asyncio's (``--client-loop``). Reported: decisions/s (counted by
   ``referee.decisions``), its ratio to the echo ceiling, the CPU use of both processes,
   and the latency (below).

   **Rounds.** Both servers stay up for the whole run, and the measured time is split
   into alternating windows, echo then referee, ``--rounds`` times (3 by default; each
   with its own warm-up: a fresh echo client, the referee's lanes restarted): a change
   in the machine's load during the run then weighs on both figures alike. The rates
   are totals over the rounds; each round's ratio and their median are printed too.
   The referee's latency is measured after its last window:

   * *referee time per decision* (server side): from the moment the referee reads a
     bot's answer off the stream (``Connection`` stamps it) to the moment the next
     ActionRequest of the same game has been written (``Connection.request_written``).
     It covers reading the answer, applying it, the record, chance nodes
     and hand ends, the next observation and legal actions, and the time spent waiting
     for the event loop behind the other games. It is measured by wrapping
     ``Connection.ask`` inside the harness process only (the library is unchanged), in
     a window separate from the throughput window.
   * *bot-side draw -> discard*: a bot that answered a draw request measures the time
     until the discard request of the same seat arrives (the only case where the same
     bot acts twice in a row); minus the echo p50 at the same load, that is the
     referee's added latency as a bot sees it.

   Both are also measured with a single game in flight (the referee's own cost with no
   queueing behind other games).
3. **Memory.** A fresh referee process; its VmRSS (``/proc/<pid>/status``) before and
   after 1,000 bot streams (Hello, queue mode) are connected and idle in the lobby,
   opened from 2 client processes over 10 channels each.

    python bench/bench_server.py            # full: ~2 minutes
    python bench/bench_server.py --quick    # shorter windows: ~1 minute
    python bench/bench_server.py --smoke    # every part for a second or two: a check, no figures
    python bench/bench_server.py --json out.json

``python bench/bench_server.py bot --target HOST:PORT --token T --streams N`` runs the
fast raw bot on its own (bench/harness/tournament.py runs it for bench_tournament.py, bench_web.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chinchon_referee.host.fdlimit import raise_nofile
from harness.fastbots import bot_proc, fast_bots
from harness.measure import cpu_seconds, machine, pct, proc_status
from harness.pair_floor import floor_server_proc
from harness.procs import Procs, client_loop, raw_server, recv, server_loop
from harness.referee_load import referee_proc

ECHO_METHOD = "/bench.Echo/Echo"


def typical_request_size(games: int = 5) -> dict[str, float]:
    """Sizes of the PlayResponse{action_request} the referee sends, over a few games
    played the way the benchmark bots play (first legal action)."""
    from chinchon.engine import RuleSet, ShuffleSource, apply, legal_actions, new_game, observation
    from chinchon.v1 import referee_pb2 as pb
    from chinchon.wire import action_to_wire, hand_result_to_wire, observation_to_wire
    from google.protobuf.duration_pb2 import Duration

    sizes: list[int] = []
    per_game: list[int] = []
    for gi in range(games):
        st = new_game(RuleSet(players=2))
        src = ShuffleSource("bench-seed", f"size/{gi}")
        past: list[Any] = []
        n = 0
        while not st.is_over:
            k = len(st.results)
            if st.is_chance:
                st = apply(st, src.chance(st))
            else:
                legal = legal_actions(st)
                obs = observation_to_wire(observation(st, st.to_act, ["p0", "p1"]), past)
                msg = pb.PlayResponse(action_request=pb.ActionRequest(
                    request_id=1_000_000, game_id=f"L100-42-{gi}", observation=obs,
                    legal_actions=[action_to_wire(a) for a in legal],
                    move_time=Duration(seconds=30), bank_time=Duration(seconds=60)))
                sizes.append(msg.ByteSize())
                st = apply(st, legal[0], seat=st.to_act)
                n += 1
            if len(st.results) > k:
                past.append(hand_result_to_wire(st.results[-1]))
        per_game.append(n)
    return {"mean": statistics.mean(sizes), "p50": pct(sizes, 50), "max": max(sizes),
            "decisions_per_game": statistics.mean(per_game)}


# -- 1. the echo ceiling ------------------------------------------------------------------


def echo_server_proc(pipe: Any) -> None:
    raise_nofile()
    server_loop()
    asyncio.run(_echo_server(pipe))


async def _echo_server(pipe: Any) -> None:
    async def echo(requests: Any, context: Any) -> None:
        async for msg in requests:  # the referee reads the same way and writes with write()
            await context.write(msg)

    server, port = await raw_server("bench.Echo", "Echo", echo)
    pipe.send(("ready", port, os.getpid()))
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # "stop"
    await server.stop(0.5)


def echo_client_proc(pipe: Any, target: str, streams: int, per_channel: int, payload: int,
                     warmup: float, measure: float, server_pid: int) -> None:
    raise_nofile()
    client_loop()
    pipe.send(asyncio.run(_echo_client(target, streams, per_channel, payload, warmup, measure,
                                       server_pid)))


async def _echo_client(target: str, streams: int, per_channel: int, payload: int,
                       warmup: float, measure: float, server_pid: int) -> dict[str, Any]:
    import grpc

    channels = [grpc.aio.insecure_channel(target)
                for _ in range(max(1, -(-streams // per_channel)))]
    state = {"stop": False, "measuring": False, "n": 0}
    lat: list[float] = []
    data = os.urandom(payload)
    clock = time.perf_counter

    async def one(ch: Any) -> None:
        call = ch.stream_stream(ECHO_METHOD)()
        while not state["stop"]:
            t = clock()
            await call.write(data)
            got = await call.read()
            if got is grpc.aio.EOF:
                return
            if state["measuring"]:
                state["n"] += 1
                lat.append(clock() - t)
        await call.done_writing()

    tasks = [asyncio.ensure_future(one(channels[i % len(channels)])) for i in range(streams)]
    await asyncio.sleep(warmup)
    state["measuring"] = True
    t0, c0, s0 = time.monotonic(), time.process_time(), cpu_seconds(server_pid)
    await asyncio.sleep(measure)
    state["measuring"] = False
    t1, c1, s1 = time.monotonic(), time.process_time(), cpu_seconds(server_pid)
    n = state["n"]
    state["stop"] = True
    await asyncio.wait(tasks, timeout=10)
    for t in tasks:
        t.cancel()
    for ch in channels:
        await ch.close()
    el = t1 - t0
    return {"round_trips": n, "seconds": el, "rate": n / el, "lat": lat,
            "client_cpu": (c1 - c0) / el, "server_cpu": (s1 - s0) / el}


# -- the run --------------------------------------------------------------------------------


def _echo_round(args: argparse.Namespace, payload: int, procs: Procs, port: int, pid: int,
                measure: float) -> dict[str, Any]:
    """One echo window: fresh client process(es) against the running echo server."""
    per = args.streams // args.client_procs
    clients = [procs.start(echo_client_proc, f"127.0.0.1:{port}", per, args.per_channel, payload,
                           args.echo_warmup, measure, pid)[1]
               for _ in range(args.client_procs)]
    res = [recv(c, args.echo_warmup + measure + 60, "an echo client") for c in clients]
    return {"round_trips": sum(r["round_trips"] for r in res),
            "seconds": res[0]["seconds"], "lat": [x for r in res for x in r["lat"]],
            "server_cpu": res[0]["server_cpu"], "client_cpu": sum(r["client_cpu"] for r in res),
            "streams": per * args.client_procs}


def _merge_echo(rounds: list[dict[str, Any]], payload: int) -> dict[str, Any]:
    secs = sum(r["seconds"] for r in rounds)
    lat = [x for r in rounds for x in r["lat"]]
    return {"rate": sum(r["round_trips"] for r in rounds) / secs,
            "p50_ms": pct(lat, 50) * 1000, "p99_ms": pct(lat, 99) * 1000,
            "server_cpu": sum(r["server_cpu"] * r["seconds"] for r in rounds) / secs,
            "client_cpu": sum(r["client_cpu"] * r["seconds"] for r in rounds) / secs,
            "payload": payload, "streams": rounds[0]["streams"],
            "rounds": [r["round_trips"] / r["seconds"] for r in rounds]}


def _merge_load(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The referee's load windows of every round, as one."""
    secs = sum(r["seconds"] for r in rounds)
    terms: Counter[str] = Counter()
    for r in rounds:
        terms.update(r["terminations"])
    last = rounds[-1]
    return {
        "lanes": last["lanes"], "decisions": sum(r["decisions"] for r in rounds),
        "seconds": secs, "rate": sum(r["decisions"] for r in rounds) / secs,
        "games": sum(r["games"] for r in rounds), "windows": [r["window"] for r in rounds],
        "latency_window": last["latency_window"],
        "server_cpu": sum(r["server_cpu"] * r["seconds"] for r in rounds) / secs,
        "bot_cpu": [sum(r["bot_cpu"][k] * r["seconds"] for r in rounds) / secs
                    for k in range(len(last["bot_cpu"]))],
        "referee_ms": [x for r in rounds for x in r["referee_ms"]],
        "referee_to_discard_ms": [x for r in rounds for x in r["referee_to_discard_ms"]],
        "terminations": dict(terms), "unfinished": sum(r["unfinished"] for r in rounds),
        "gc_seconds": sum(r["gc_seconds"] for r in rounds),
        "gc_collections": sum(r["gc_collections"] for r in rounds),
        "rounds": [r["decisions"] / r["seconds"] for r in rounds],
        "write_gate": all(r["write_gate"] for r in rounds),
    }


def _start_floor(args: argparse.Namespace, payload: int,
                 procs: Procs) -> tuple[Any, int, Any]:
    """The floor server (pair_floor.py) and its own fast bots, every pair formed: its
    pipe, the bots' pid and their pipe."""
    _, floor = procs.start(floor_server_proc, payload)
    _, port, _ = recv(floor, 30, "the floor server")
    total = args.rounds * (args.warmup + args.measure) + 600
    bots, bots_pipe = procs.start(bot_proc, f"127.0.0.1:{port}", [("floor", 2 * args.streams)],
                                  args.bot_per_channel, total)
    deadline = time.monotonic() + 60
    while True:
        floor.send(("pairs", None))
        if recv(floor, 30, "the floor server") >= args.streams:
            return floor, bots.pid, bots_pipe
        if time.monotonic() > deadline:
            raise RuntimeError("the floor server's bot streams did not all connect")
        time.sleep(0.1)


def _merge_floor(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    secs = sum(r["seconds"] for r in rounds)
    return {"rate": sum(r["decisions"] for r in rounds) / secs,
            "decisions": sum(r["decisions"] for r in rounds),
            "server_cpu": sum(r["server_cpu"] * r["seconds"] for r in rounds) / secs,
            "bot_cpu": sum(r["bot_cpu"] * r["seconds"] for r in rounds) / secs,
            "rounds": [r["rate"] for r in rounds]}


def bench_rounds(args: argparse.Namespace, payload: int, procs: Procs,
                 echo: bool, referee: bool, floor: bool = False) -> dict[str, Any]:
    """The echo ceiling, the floor of the referee's messages (pair_floor.py) and the
    referee's throughput, measured in alternating windows (echo, floor, referee, echo,
    ...) with every server up the whole time, so that a change in the machine's load
    during the run weighs on all alike; then the referee's latency (in the last
    referee window) and a single game."""
    out: dict[str, Any] = {}
    rounds = args.rounds
    if echo:
        _, srv = procs.start(echo_server_proc)
        _, eport, epid = recv(srv, 30, "the echo server")
    if floor:
        floor_pipe, floor_bots, floor_bots_pipe = _start_floor(args, payload, procs)
    if referee:
        players = ["p0", "p1"]
        _, ref = procs.start(referee_proc, players)
        _, port, _pid = recv(ref, 60, "the referee")
        target = f"127.0.0.1:{port}"
        lanes = args.streams
        total = rounds * (args.warmup + args.measure) + args.latency + 2 * args.single + 600
        bots = []
        for k in range(args.client_procs):
            share = lanes // args.client_procs + (1 if k < lanes % args.client_procs else 0)
            plan = [(f"tok-{p}", share) for p in players]
            bots.append(procs.start(bot_proc, target, plan, args.bot_per_channel, total))
        ref.send(("wait_idle", (2 * lanes, 60)))
        got = recv(ref, 90, "the referee")
        if got < 2 * lanes:
            raise RuntimeError(f"only {got} of {2 * lanes} bot streams reached the lobby")
        pids = [p.pid for p, _ in bots]
    echo_rounds: list[dict[str, Any]] = []
    floor_rounds: list[dict[str, Any]] = []
    loads: list[dict[str, Any]] = []
    for r in range(rounds):
        if echo:
            echo_rounds.append(_echo_round(args, payload, procs, eport, epid,
                                           args.echo_measure / rounds))
        if floor:
            floor_pipe.send(("measure", (args.warmup, args.measure / rounds, floor_bots)))
            floor_rounds.append(recv(floor_pipe, args.warmup + args.measure + 60,
                                      "the floor server"))
        if referee:
            ref.send(("load", {"lanes": lanes, "warmup": args.warmup,
                               "measure": args.measure / rounds,
                               "latency": args.latency if r == rounds - 1 else 0.0,
                               "players": players, "bot_pids": pids,
                               "profile": args.profile if r == 0 else ""}))
            loads.append(recv(ref, total, "the referee (load)"))
        parts = ([f"echo {echo_rounds[-1]['round_trips'] / echo_rounds[-1]['seconds']:,.0f} "
                  "round trips/s"] if echo else [])
        parts += [f"floor {floor_rounds[-1]['rate']:,.0f} decisions/s"] if floor else []
        parts += [f"referee {loads[-1]['rate']:,.0f} decisions/s"] if referee else []
        print(f"  round {r + 1} of {rounds}: " + ", ".join(parts), flush=True)
    if echo:
        srv.send("stop")
        out["echo"] = _merge_echo(echo_rounds, payload)
    if floor:
        floor_bots_pipe.send("stop")  # the bots first: then no call is open at the stop
        recv(floor_bots_pipe, 60, "the floor's bots")
        floor_pipe.send(("stop", None))
        recv(floor_pipe, 30, "the floor server (stop)")
        out["floor"] = _merge_floor(floor_rounds)
    if referee:
        many = _merge_load(loads)
        ref.send(("load", {"lanes": 1, "warmup": 1.0, "measure": args.single,
                           "latency": args.single, "players": players, "bot_pids": pids}))
        one = recv(ref, total, "the referee (single game)")
        for _, b in bots:
            b.send("stop")
        bot_res = [recv(b, 60, "a bot process") for _, b in bots]
        ref.send(("stop", None))
        recv(ref, 30, "the referee (stop)")
        samples = [s for r in bot_res for s in r["samples"]]
        counts: Counter[str] = Counter()
        for b in bot_res:
            counts.update(b["counts"])

        def within(windows: list[tuple[float, float]]) -> list[float]:
            return [d * 1000 for t, d in samples if any(a <= t <= b for a, b in windows)]

        many["bot_draw_discard_ms"] = within(many["windows"])
        one["bot_draw_discard_ms"] = within([one["window"]])
        out["referee"] = {"many": many, "one": one, "bot_counts": dict(counts)}
    procs.reap()
    return out


def bench_memory(args: argparse.Namespace, procs: Procs) -> dict[str, Any]:
    names = [f"m{i}" for i in range(10)]
    _, ref = procs.start(referee_proc, names)
    _, port, pid = recv(ref, 60, "the referee")
    time.sleep(1.0)
    ref.send(("gc", None))
    recv(ref, 30, "the referee")
    before = proc_status(pid)
    n = args.idle
    per_proc = n // args.mem_procs
    bots = []
    for k in range(args.mem_procs):
        count = per_proc + (n - per_proc * args.mem_procs if k == 0 else 0)
        plan = [(f"tok-{names[(k * 5 + i) % len(names)]}", count // 5 + (1 if i < count % 5 else 0))
                for i in range(5)]
        bots.append(procs.start(bot_proc, f"127.0.0.1:{port}", plan, max(1, count // 10), 300))
    ref.send(("wait_idle", (n, 120)))
    connected = recv(ref, 180, "the referee")
    time.sleep(2.0)
    ref.send(("gc", None))
    recv(ref, 30, "the referee")
    after = proc_status(pid)
    for _, b in bots:
        b.send("stop")
    for _, b in bots:
        recv(b, 60, "an idle bot process")
    ref.send(("stop", None))
    recv(ref, 30, "the referee (stop)")
    procs.reap()
    delta = after["VmRSS"] - before["VmRSS"]
    return {"connected": connected, "before_kib": before["VmRSS"], "after_kib": after["VmRSS"],
            "hwm_kib": after["VmHWM"], "per_conn_kib": delta / max(1, connected)}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bot"]:
        return bot_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter measurement windows")
    ap.add_argument("--smoke", action="store_true",
                    help="windows of a second or two and few streams: checks that every "
                    "part runs (tests/bench/test_bench_server.py), measures nothing")
    ap.add_argument("--streams", type=int, default=100,
                    help="echo streams = concurrent games (default 100)")
    ap.add_argument("--client-procs", type=int, default=1,
                    help="client processes for echo streams and bots (default 1)")
    ap.add_argument("--per-channel", type=int, default=50,
                    help="echo streams per gRPC channel (default 50: 100 streams over 2 "
                    "connections)")
    ap.add_argument("--bot-per-channel", type=int,
                    help="bot streams per gRPC channel (default: --per-channel; twice that "
                    "puts the bots' 2 streams per game on as many connections as the echo's "
                    "streams)")
    ap.add_argument("--rounds", type=int,
                    help="alternating echo / referee windows that share the measured time "
                    "(default 3; 2 with --quick, 1 with --smoke)")
    ap.add_argument("--idle", type=int, default=1000, help="idle bot streams for the memory test")
    ap.add_argument("--mem-procs", type=int, default=2)
    ap.add_argument("--only", choices=["echo", "floor", "referee", "memory"], action="append",
                    help="the parts to run (default all; floor: the referee's messages with "
                    "no game, bench/harness/pair_floor.py)")
    ap.add_argument("--profile", default="", help="cProfile the referee's throughput window here")
    ap.add_argument("--loop", choices=["auto", "uvloop", "asyncio"], default="auto",
                    help="event loop of both servers, echo and referee (default: as "
                    "`chinchon serve`, uvloop where installed)")
    ap.add_argument("--client-loop", choices=["uvloop", "asyncio"], default="asyncio",
                    help="event loop of the echo clients and the bots (default asyncio)")
    ap.add_argument("--write-gate", choices=["on", "off"], default="on",
                    help="the referee's WriteGate (default on, as `chinchon serve`; off: "
                    "each write goes to gRPC at once, the baseline it is measured against)")
    ap.add_argument("--lean", action="store_true",
                    help="the bots ask for lean requests (Hello.observations = "
                    "OBSERVATION_MODE_LEAN; default: full requests, as every bot before it)")
    ap.add_argument("--payload", type=int,
                    help="the echo's message size in bytes (default: the mean full "
                    "ActionRequest of first-legal-action games)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    args.bot_per_channel = args.bot_per_channel or args.per_channel
    # Measured time in all (split over the rounds); the warm-ups are per round.
    if args.smoke:
        args.echo_warmup, args.echo_measure = 0.5, 1.0
        args.warmup, args.measure, args.latency, args.single = 0.5, 1.5, 1.5, 1.0
        args.streams, args.idle = min(args.streams, 10), min(args.idle, 40)
        args.rounds = args.rounds or 1
    elif args.quick:
        args.echo_warmup, args.echo_measure = 1.0, 6.0
        args.warmup, args.measure, args.latency, args.single = 2.0, 8.0, 4.0, 3.0
        args.rounds = args.rounds or 2
    else:
        args.echo_warmup, args.echo_measure = 1.5, 15.0
        args.warmup, args.measure, args.latency, args.single = 3.0, 21.0, 10.0, 8.0
        args.rounds = args.rounds or 3
    os.environ["BENCH_LOOP"] = args.loop
    os.environ["BENCH_CLIENT_LOOP"] = args.client_loop
    os.environ["BENCH_WRITE_GATE"] = args.write_gate
    os.environ["BENCH_LEAN"] = "on" if args.lean else "off"
    nofile, _ = raise_nofile()
    only = set(args.only or ["echo", "floor", "referee", "memory"])
    procs = Procs()
    print(f"machine: {machine()}; RLIMIT_NOFILE soft {nofile}")
    print(f"event loops: servers {args.loop}, clients {args.client_loop}; "
          f"referee write gate {args.write_gate}; bots ask for "
          f"{'lean' if args.lean else 'full'} requests")
    size = typical_request_size()
    payload = args.payload or round(size["mean"])
    print(f"ActionRequest (PlayResponse) size: mean {size['mean']:.0f} B, p50 {size['p50']:.0f} B, "
          f"max {size['max']:.0f} B; {size['decisions_per_game']:.0f} decisions per game of "
          "first-legal-action bots")
    out: dict[str, Any] = {"machine": machine(), "request_size": size,
                           "loops": {"servers": args.loop, "clients": args.client_loop},
                           "write_gate": args.write_gate,
                           "streams_per_channel": {"echo": args.per_channel,
                                                   "bots": args.bot_per_channel}}
    load0 = os.getloadavg()[0]
    try:
        per_proc = args.streams // args.client_procs
        if "echo" in only:
            conns = args.client_procs * -(-per_proc // args.per_channel)
            print(f"echo: {args.streams} streams over {conns} connections, {payload} B payload",
                  flush=True)
        if "referee" in only:
            conns = args.client_procs * -(-2 * per_proc // args.bot_per_channel)
            print(f"referee: {args.streams} concurrent games, {2 * args.streams} bot streams "
                  f"over {conns} connections", flush=True)
        if "floor" in only:
            print(f"floor: {args.streams} pairs of bot streams, the referee's messages and "
                  "no game (bench/harness/pair_floor.py)", flush=True)
        if only & {"echo", "floor", "referee"}:
            out.update(bench_rounds(args, payload, procs, "echo" in only, "referee" in only,
                                    "floor" in only))
        if "memory" in only:
            print(f"memory: {args.idle} idle bot streams ...", flush=True)
            out["memory"] = bench_memory(args, procs)
    finally:
        for p, _ in procs.items:
            if p.is_alive():
                p.terminate()
        procs.reap(5)
    out["load"] = f"{load0:.2f} / {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)"
    report(out)
    if args.json:
        slim = json.loads(json.dumps(out, default=str))
        for key in ("many", "one"):
            r = slim.get("referee", {}).get(key)
            if r:
                for k in ("referee_ms", "referee_to_discard_ms", "bot_draw_discard_ms"):
                    xs = r.pop(k)
                    r[k + "_p50_p99"] = [pct(xs, 50), pct(xs, 99), len(xs)]
        with open(args.json, "w") as f:
            json.dump(slim, f, indent=2)
    return 0


def _out_per_request(counts: dict[str, int]) -> float:
    """Messages the bots read per ActionRequest (the requests, which carry the previous
    answer's ActionAccepted, and the others: game_started, hand_ended...)."""
    return (counts.get("requests", 0) + counts.get("other messages", 0)) / max(
        1, counts.get("requests", 0))


def report(out: dict[str, Any]) -> None:
    rows: list[tuple[str, str]] = []
    echo = out.get("echo")
    if echo:
        rows += [
            ("echo: round trips/s", f"{echo['rate']:,.0f}  ({echo['streams']} streams, "
                                    f"{echo['payload']} B each way)"),
            ("echo: round trip p50 / p99", f"{echo['p50_ms']:.2f} / {echo['p99_ms']:.2f} ms"),
            ("echo: CPU server / client", f"{echo['server_cpu']:.0%} / {echo['client_cpu']:.0%}"),
            ("echo: CPU per round trip server / client",
             f"{echo['server_cpu'] * 1e6 / echo['rate']:.0f} / "
             f"{echo['client_cpu'] * 1e6 / echo['rate']:.0f} us"),
        ]
    floor = out.get("floor")
    if floor:
        f_srv, f_bot = (floor[k] * 1e6 / floor["rate"] for k in ("server_cpu", "bot_cpu"))
        rows += [
            ("floor: decisions/s (the referee's messages, no game)", f"{floor['rate']:,.0f}"),
            ("floor: CPU per decision server / bots", f"{f_srv:.0f} / {f_bot:.0f} us"),
        ]
        if echo:
            rows.append(("  floor / echo, by round", ", ".join(
                f"{f / e:.3f}" for f, e in zip(floor["rounds"], echo["rounds"], strict=True))))
    ref = out.get("referee")
    if ref:
        many, one = ref["many"], ref["one"]
        rows += [
            (f"referee: decisions/s ({many['lanes']} games)",
             f"{many['rate']:,.0f}  ({many['decisions']:,} decisions, {many['games']} games "
             f"in {many['seconds']:.1f} s)"),
        ]
        if echo:
            per_round = [r / e for r, e in zip(many["rounds"], echo["rounds"], strict=True)]
            rows += [
                ("referee / echo ratio", f"{many['rate'] / echo['rate']:.3f}  (target >= 0.5)"),
                ("  by round (echo rt/s, referee dec/s: ratio)", "; ".join(
                    f"{e:,.0f}, {r:,.0f}: {r / e:.3f}"
                    for r, e in zip(many["rounds"], echo["rounds"], strict=True))),
                ("  median of the rounds' ratios", f"{statistics.median(per_round):.3f}"),
            ]
        srv_us = many["server_cpu"] * 1e6 / many["rate"]
        bot_us = sum(many["bot_cpu"]) * 1e6 / many["rate"]
        if floor:
            rows += [
                ("referee / floor, by round", ", ".join(
                    f"{r / f:.3f}" for r, f in zip(many["rounds"], floor["rounds"], strict=True))),
                ("referee CPU per decision over the floor's, server / bots",
                 f"+{srv_us - f_srv:.0f} / +{bot_us - f_bot:.0f} us"),
            ]
        rows += [
            ("referee: CPU server / bots", f"{many['server_cpu']:.0%} / "
                                           + " + ".join(f"{c:.0%}" for c in many["bot_cpu"])),
            ("referee: CPU per decision server / bots", f"{srv_us:.0f} / {bot_us:.0f} us"),
            ("  of which the server's garbage collector",
             f"{many['gc_seconds'] * 1e6 / max(1, many['decisions']):.1f} us "
             f"({many['gc_collections']} collections)"),
            ("referee: messages in / out per decision",
             "1 / " + f"{_out_per_request(ref['bot_counts']):.3f}"
             + "  (out: what the bots read, per ActionRequest)"),
            ("referee time/decision p50 / p99 (100 games)",
             f"{pct(many['referee_ms'], 50):.2f} / {pct(many['referee_ms'], 99):.2f} ms  "
             f"(n={len(many['referee_ms']):,})"),
            ("  of which draw -> discard p50 / p99 (100 games)",
             f"{pct(many['referee_to_discard_ms'], 50):.2f} / "
             f"{pct(many['referee_to_discard_ms'], 99):.2f} ms"),
            ("bot draw->discard p50 / p99 (100 games)",
             f"{pct(many['bot_draw_discard_ms'], 50):.2f} / "
             f"{pct(many['bot_draw_discard_ms'], 99):.2f} ms"),
        ]
        if echo:
            rows.append(("  minus echo p50 (added latency p50 / p99)",
                         f"{pct(many['bot_draw_discard_ms'], 50) - echo['p50_ms']:.2f} / "
                         f"{pct(many['bot_draw_discard_ms'], 99) - echo['p50_ms']:.2f} ms"))
        rows += [
        ]
        if echo:
            # What each side could do with a core to itself (the CPU cost per operation
            # is much less sensitive to other load on the machine than the rates are).
            e_ded = 1e6 / max(echo["server_cpu"] * 1e6 / echo["rate"],
                              echo["client_cpu"] * 1e6 / echo["rate"])
            r_ded = 1e6 / max(srv_us, bot_us)
            rows += [
                ("one core each: echo rt/s, referee dec/s", f"{e_ded:,.0f}, {r_ded:,.0f}"),
                ("one core each: referee / echo ratio", f"{r_ded / e_ded:.3f}"),
            ]
        terms = Counter(many["terminations"]) + Counter(one["terminations"])
        rows += [
            ("referee: decisions/s (1 game)", f"{one['rate']:,.0f}"),
            ("referee time/decision p50 / p99 (1 game)",
             f"{pct(one['referee_ms'], 50):.3f} / {pct(one['referee_ms'], 99):.3f} ms"),
            ("  of which draw -> discard p50 / p99 (1 game)",
             f"{pct(one['referee_to_discard_ms'], 50):.3f} / "
             f"{pct(one['referee_to_discard_ms'], 99):.3f} ms"),
            ("bot draw->discard p50 / p99 (1 game)",
             f"{pct(one['bot_draw_discard_ms'], 50):.3f} / "
             f"{pct(one['bot_draw_discard_ms'], 99):.3f} ms"),
            ("games: terminations", ", ".join(
                f"{k.removeprefix('TERMINATION_').lower()} {v}"
                for k, v in terms.items())),
        ]
    mem = out.get("memory")
    if mem:
        rows += [
            ("memory: idle streams connected", f"{mem['connected']:,}"),
            ("memory: server VmRSS before / after",
             f"{mem['before_kib'] / 1024:.1f} / {mem['after_kib'] / 1024:.1f} MiB "
             f"(VmHWM {mem['hwm_kib'] / 1024:.1f} MiB)"),
            ("memory: per idle connection", f"{mem['per_conn_kib']:.1f} KiB"),
        ]
    rows.append(("load average (1 min) at start / end", out.get("load", "")))
    w = max(len(k) for k, _ in rows) if rows else 0
    print()
    for k, v in rows:
        print(f"{k:<{w}}  {v}")


def bot_main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_server.py bot",
                                 description="fast raw bots: first legal action, N streams")
    ap.add_argument("--target", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--streams", type=int, default=1)
    ap.add_argument("--per-channel", type=int, default=50)
    ap.add_argument("--max-seconds", type=float, default=3600)
    a = ap.parse_args(argv)
    raise_nofile()
    res = asyncio.run(fast_bots(a.target, [(a.token, a.streams)], a.per_channel, a.max_seconds))
    print(json.dumps({"counts": res["counts"], "cpu": res["cpu"]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
