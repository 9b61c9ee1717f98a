"""bench_ladder.py's measurement over the referee itself: a ladder declared on a real
``chinchon serve`` with ``chinchon admin ladder create``, its bots of known strength
as SDK bot processes over gRPC, a late StrongBot entered with ``ladder enter`` once
``--late`` games are rated, and the ladder's own runner seating whoever is idle (not
the rounds of the in-process bench). The leaderboard after every game is read back from
``chinchon admin ladder export`` (each game's ratings after it, in rating order).

    python bench/bench_ladder_served.py                 # 1 ladder of 300 games, ~1 min
    python bench/bench_ladder_served.py --games 150 --late 60

The true order is bench_ladder.py's baseline, measured in the same run (a duplicate
round-robin in-process, ``--reference`` games per pair); **N** and **M** are read as
there: the first game count after which the leaderboard's order (strong-late aside) is
the true order to the end, and strong-late's games until it ranks 1st or 2nd to the
end. The bots' own random choices are not seeded here (SDK processes), so two runs
differ by more than the deals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))
from chinchon.v1 import ladder_pb2 as lpb  # noqa: E402
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc  # noqa: E402
from chinchon_referee.ladder.leaderboard import Standing, leaderboard  # noqa: E402
from chinchon_referee.ladder.ratings import PRIOR, Rating  # noqa: E402
from harness.ladder_bots import MAKERS, reference, settled_at  # noqa: E402

from tests.support.helpers import ADMIN  # noqa: E402
from tests.support.serve import Serve, free_port  # noqa: E402
from tests.support.tournament import CLI  # noqa: E402

#: How each bot runs as an SDK process (``--bot``).
SDK_BOTS = {"strong": "strong", "noisy-strong": f"{HERE / 'harness' / 'ladder_bots.py'}:NoisyStrong",
            "greedy": "greedy", "noisy-greedy": f"{HERE / 'harness' / 'ladder_bots.py'}:NoisyGreedy",
            "random": "random", "strong-late": "strong"}
AUTH = (("authorization", f"Bearer {ADMIN}"),)


def token(bot: str) -> str:
    return f"bench-ladder-token-{bot}"


def declaration(names: list[str], concurrency: int) -> str:
    entrants = "".join(f'\n[[entrants]]\nname = "{b}"\ntoken = "{token(b)}"\n' for b in names)
    return (f'name = "served ladder"\ntable_size = 2\nconcurrency = {concurrency}\n'
            f'seed = "served-ladder"\nk = 3.0\n\n[time_control]\nper_move = 1.0\n'
            f'bank = 30.0\n{entrants}')


def admin(port: int, *args: str) -> str:
    done = subprocess.run([*CLI, "admin", "--target", f"127.0.0.1:{port}", "--admin-token",
                           ADMIN, "ladder", *args], capture_output=True, text=True, check=True)
    return done.stdout


def start_bot(tmp: Path, port: int, bot: str) -> subprocess.Popen[bytes]:
    with open(tmp / f"{bot}.log", "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "chinchon.sdk", "--bot", SDK_BOTS[bot], "--target",
             f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=err,
            env=dict(os.environ, CHINCHON_TOKEN=token(bot), PYTHONUNBUFFERED="1"))


def wait_rated(stub: Any, lid: str, n: int) -> None:
    """Until ``n`` games of the ladder are rated (read every half second)."""
    while stub.GetLeaderboard(lpb.GetLeaderboardRequest(ladder_id=lid), metadata=AUTH,
                              timeout=30).ladder.games_rated < n:
        time.sleep(0.5)


def orders_of(games: list[dict[str, Any]], names: list[str]
              ) -> tuple[list[list[str]], list[tuple[int, int]]]:
    """The leaderboard's order after each exported game (its ratings after it), and
    (games played by strong-late, its rank) after each of its games."""
    ratings = dict.fromkeys(names, PRIOR)
    played = dict.fromkeys(names, 0)
    orders: list[list[str]] = []
    late: list[tuple[int, int]] = []
    for g in sorted(games, key=lambda g: int(g["rated"])):
        for p, mu, sigma in zip(g["players"], g["mu"], g["sigma"], strict=True):
            ratings[p] = Rating(mu, sigma)
            played[p] = played.get(p, 0) + 1
        board = leaderboard([Standing(b, r, played[b]) for b, r in ratings.items()], 3.0)
        order = [row.standing.bot for row in board]
        orders.append(order)
        if "strong-late" in g["players"]:
            late.append((played["strong-late"], order.index("strong-late") + 1))
    return orders, late


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--late", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--reference", type=int, default=40, help="games per pair, true order")
    args = ap.parse_args(argv)
    names = list(MAKERS)
    t = time.perf_counter()
    truth = reference(names, args.reference)
    print(f"true order ({args.reference} games per pair, {time.perf_counter() - t:.0f} s): "
          f"{' > '.join(truth)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-ladder-served-") as d:
        tmp = Path(d)
        (tmp / "ladder.toml").write_text(declaration(names, args.concurrency), encoding="utf-8")
        port = free_port()
        server = Serve(tmp, port, tmp / "ladder.sqlite3", 0)
        bots: list[subprocess.Popen[bytes]] = []
        try:
            lid = admin(port, "create", str(tmp / "ladder.toml"), "-q").strip()
            t = time.perf_counter()
            bots = [start_bot(tmp, port, b) for b in names]
            with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
                stub = lpb_grpc.LadderServiceStub(ch)
                wait_rated(stub, lid, args.late)
                (tmp / "late.token").write_text(token("strong-late"), encoding="utf-8")
                admin(port, "enter", lid, "strong-late", "--token-from", str(tmp / "late.token"))
                bots.append(start_bot(tmp, port, "strong-late"))
                wait_rated(stub, lid, args.games)
            admin(port, "close", lid)
            wall = time.perf_counter() - t
            admin(port, "export", lid, str(tmp / "export"))
            games = json.loads((tmp / "export" / "games.json").read_text(encoding="utf-8"))
        finally:
            for p in bots:
                p.kill()
                p.wait()
            server.stop()
    orders, late = orders_of(games, names)
    n = settled_at(orders, lambda o: [b for b in o if b != "strong-late"] == truth)
    m = settled_at([[str(r)] for _, r in late], lambda o: int(o[0]) <= 2)
    m_games = late[m - 1][0] if m is not None else None
    print(f"served ladder: {len(games)} games rated in {wall:.0f} s "
          f"({len(games) / wall:.2f} games/s, {args.concurrency} tables at once); order true "
          f"from game N = {n}; strong-late (entered at game {args.late}) in its place after "
          f"M = {m_games} of its games; final: {' > '.join(orders[-1])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
