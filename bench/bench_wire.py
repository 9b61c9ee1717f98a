"""The referee's request encoder and answer decoder (``chinchon.wire.fast``), alone.

    python bench/bench_wire.py            # 60 games, 9 repetitions, ~5 s
    python bench/bench_wire.py --quick    # 20 games, 5 repetitions

Whole games of 2, 3 and 4 players (random legal actions, fixed seeds) are played once
and every decision kept; then, per repetition, each game's ActionRequests are encoded as
the referee does (observation, legal actions, the request, the confirmation of the
answer) and each answer is read back (``answer_fields`` + ``decode_action``). Reported:
the best repetition's process CPU time per decision. The engine's own work (legal
actions, observations) is not in these figures.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from chinchon.engine import (
    Action,
    Observation,
    RuleSet,
    ShuffleSource,
    apply,
    legal_actions,
    new_game,
    observation,
)
from chinchon.wire import (
    RequestEncoder,
    action_to_wire,
    answer_fields,
    decode_action,
    delimited,
    varint,
)

Decision = tuple[Observation, list[Action], Action, bytes]


def play(games: int) -> list[tuple[RuleSet, list[Decision]]]:
    out = []
    for gi in range(games):
        rules = RuleSet(players=2 + gi % 3)
        state = new_game(rules)
        source = ShuffleSource("bench-wire", f"g{gi}")
        rng = random.Random(gi)
        names = [f"p{i}" for i in range(rules.players)]
        decisions: list[Decision] = []
        while not state.is_over:
            if state.is_chance:
                state = apply(state, source.chance(state))
                continue
            legal = list(legal_actions(state))
            action = rng.choice(legal)
            obs = observation(state, state.to_act, names)
            # PlayRequest{action: ActionReply{request_id, action}} as a bot writes it.
            reply = b"\x08" + varint(1000 + len(decisions)) + delimited(
                2, action_to_wire(action).SerializeToString())
            decisions.append((obs, legal, action, delimited(2, reply)))
            state = apply(state, action, seat=state.to_act)
        out.append((rules, decisions))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="20 games, 5 repetitions")
    args = ap.parse_args()
    games = play(20 if args.quick else 60)
    reps = 5 if args.quick else 9
    n = sum(len(d) for _, d in games)

    def encode() -> None:
        for gi, (rules, decisions) in enumerate(games):
            enc = RequestEncoder(f"L1-{gi}", rules)
            ack = b""
            for k, (obs, legal, action, _) in enumerate(decisions):
                rid = 1000 + k
                enc.request(rid, enc.observation(obs), enc.legal(legal), 30.0, 60.0, 0, ack)
                ack = enc.accepted(rid, action, 0.0123)

    def decode() -> None:
        for _, decisions in games:
            for *_, answer in decisions:
                fields = answer_fields(answer)
                assert fields is not None
                decode_action(fields[1])

    def best(f: Callable[[], None]) -> float:
        f()  # warm-up: the caches fill as in a running referee
        times = []
        for _ in range(reps):
            t = time.process_time()
            f()
            times.append(time.process_time() - t)
        return min(times) / n * 1e6

    print(f"{len(games)} games, {n:,} decisions, best of {reps}")
    print(f"encode ActionRequest + confirmation   {best(encode):6.2f} us/decision")
    print(f"read + decode the answer              {best(decode):6.3f} us/decision")


if __name__ == "__main__":
    main()
