"""Single and double elimination brackets, as matches whose sides come from seeds or
from other matches' winners and losers.

The bracket has a power-of-two number of slots (:func:`.layout.bracket_size`); seeds
beyond the bots are byes. Slots are filled in the standard order (:func:`slot_order`:
1 v 8, 4 v 5, 2 v 7, 3 v 6 for 8), so the top seeds get the byes, seeds 1 and 2 are in
opposite halves and can meet only in the final (1 to 4 only in the semi-finals...).

A match whose side is nobody (a bye, or the loser of a bye) is a walkover: the other
side goes on without a game, and no loss is counted. Double elimination: the losers
of the winners' bracket drop into the losers' bracket (each drop round's losers in
reverse order, then halves swapped, to put off rematches), whose winner meets the
winners' bracket's winner in the grand final; with ``grand_final_reset``, a grand
final won by the losers' side (each finalist has lost once) is followed by a second
one. A bot is out after one match lost (knockout) or two (double elimination).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .match import Decided, Decider, Needs, Playing


class Section(enum.StrEnum):
    WINNERS = "winners"          # the knockout's rounds, or the winners' bracket
    LOSERS = "losers"
    THIRD_PLACE = "third_place"
    GRAND_FINAL = "grand_final"
    RESET = "grand_final_reset"


class From(enum.StrEnum):
    SEED = "seed"
    WINNER = "winner"
    LOSER = "loser"


@dataclass(frozen=True)
class Source:
    kind: From
    #: A seed (0-based: 0 is seed 1), or a match's index.
    ref: int


@dataclass(frozen=True)
class Node:
    """A match of the bracket; its sides' sources come before it."""

    index: int
    section: Section
    round: int  # from 1, within its section
    slot: int   # from 0, within its round
    a: Source
    b: Source
    #: Elimination order of its loser (later: better placed), for the ranking.
    depth: float


def slot_order(size: int) -> list[int]:
    """Seeds (0-based) in bracket order for ``size`` slots: neighbours meet first."""
    order = [0]
    while len(order) < size:
        n = 2 * len(order)
        order = [x for s in order for x in (s, n - 1 - s)]
    return order


def single_elimination(size: int, third_place: bool) -> list[Node]:
    """A knockout of ``size`` slots (a power of two, at least 2)."""
    nodes: list[Node] = []
    rounds = size.bit_length() - 1
    _winners_rounds(nodes, size, rounds)
    if third_place and rounds >= 2:
        semis = [n.index for n in nodes if n.round == rounds - 1]
        nodes.append(Node(len(nodes), Section.THIRD_PLACE, 1, 0, Source(From.LOSER, semis[0]),
                          Source(From.LOSER, semis[1]), rounds - 0.5))
    return nodes


def _winners_rounds(nodes: list[Node], size: int, rounds: int) -> list[list[int]]:
    """The winners' rounds, appended to ``nodes``; each round's match indices."""
    order = slot_order(size)
    by_round: list[list[int]] = []
    for r in range(1, rounds + 1):
        count = size >> r
        ids = []
        for s in range(count):
            if r == 1:
                a, b = Source(From.SEED, order[2 * s]), Source(From.SEED, order[2 * s + 1])
            else:
                prev = by_round[-1]
                a, b = Source(From.WINNER, prev[2 * s]), Source(From.WINNER, prev[2 * s + 1])
            ids.append(len(nodes))
            nodes.append(Node(len(nodes), Section.WINNERS, r, s, a, b, float(r)))
        by_round.append(ids)
    return by_round


def double_elimination(size: int, reset: bool) -> list[Node]:
    """A double-elimination bracket of ``size`` slots (a power of two, at least 2)."""
    nodes: list[Node] = []
    p = size.bit_length() - 1
    wb = _winners_rounds(nodes, size, p)
    # The winners' bracket's losses do not eliminate: their depth is never read.
    lb_champion = Source(From.LOSER, wb[0][0])
    if p >= 2:
        prev = _losers_round(nodes, 1, [(Source(From.LOSER, wb[0][2 * i]),
                                         Source(From.LOSER, wb[0][2 * i + 1]))
                                        for i in range(size // 4)])
        r = 1
        for k in range(2, p + 1):
            drops = _crossed([Source(From.LOSER, m) for m in wb[k - 1]], k)
            r += 1
            prev = _losers_round(nodes, r, [(Source(From.WINNER, prev[i]), drops[i])
                                            for i in range(len(prev))])
            if k < p:
                r += 1
                prev = _losers_round(nodes, r, [(Source(From.WINNER, prev[2 * i]),
                                                 Source(From.WINNER, prev[2 * i + 1]))
                                                for i in range(len(prev) // 2)])
        lb_champion = Source(From.WINNER, prev[0])
    lb_rounds = max(0, 2 * p - 2)
    gf = len(nodes)
    nodes.append(Node(gf, Section.GRAND_FINAL, 1, 0, Source(From.WINNER, wb[-1][0]),
                      lb_champion, lb_rounds + 1.0))
    if reset:
        # Its sides are the grand final's two bots, in the same order.
        nodes.append(Node(gf + 1, Section.RESET, 1, 0, Source(From.WINNER, wb[-1][0]),
                          lb_champion, lb_rounds + 2.0))
    return nodes


def _losers_round(nodes: list[Node], r: int, sides: list[tuple[Source, Source]]) -> list[int]:
    ids = []
    for s, (a, b) in enumerate(sides):
        ids.append(len(nodes))
        nodes.append(Node(len(nodes), Section.LOSERS, r, s, a, b, float(r)))
    return ids


def _crossed(drops: list[Source], k: int) -> list[Source]:
    """The losers of winners' round ``k`` in the order they meet the losers' bracket:
    reversed in even rounds, halves swapped in odd ones (rematches come later)."""
    if len(drops) < 2:
        return drops
    if k % 2 == 0:
        return drops[::-1]
    h = len(drops) // 2
    return drops[h:] + drops[:h]


# -- playing it out ------------------------------------------------------------------------


class Status(enum.StrEnum):
    WAITING = "waiting"        # a side is not known yet
    PLAYING = "playing"        # games created, not all finished
    NEEDS = "needs games"      # games to create now
    DECIDED = "decided"
    WALKOVER = "walkover"      # one side is nobody: the other goes on, no game
    EMPTY = "empty"            # both sides are nobody
    SKIPPED = "skipped"        # a grand final reset that is not needed


@dataclass(frozen=True)
class Resolved:
    node: Node
    a: str | None
    b: str | None
    status: Status
    winner: str | None = None
    loser: str | None = None
    decided: Decided | None = None
    needs: Needs | None = None


#: A match's state from its two bots (the caller reads their games).
Judge = Callable[[Node, str, str], Decided | Playing | Needs]


def resolve(nodes: Sequence[Node], seeds: Sequence[str], judge: Judge) -> list[Resolved]:
    """Every match of the bracket: who plays it, and where it stands."""
    out: list[Resolved] = []

    def side(src: Source) -> tuple[bool, str | None]:
        """(known, bot): a seed, or a decided match's winner or loser."""
        if src.kind is From.SEED:
            return True, seeds[src.ref] if src.ref < len(seeds) else None
        r = out[src.ref]
        if r.status not in (Status.DECIDED, Status.WALKOVER, Status.EMPTY):
            return False, None
        return True, r.winner if src.kind is From.WINNER else r.loser

    for node in nodes:
        (ka, a), (kb, b) = side(node.a), side(node.b)
        if node.section is Section.RESET:
            gf = out[node.index - 1]
            if gf.status in (Status.WALKOVER, Status.EMPTY) or (
                    gf.status is Status.DECIDED and gf.winner == gf.a):
                out.append(Resolved(node, a, b, Status.SKIPPED))
                continue
            if gf.status is not Status.DECIDED:
                ka = False
        if not (ka and kb):
            out.append(Resolved(node, a if ka else None, b if kb else None, Status.WAITING))
        elif a is None or b is None:
            winner = a or b
            out.append(Resolved(node, a, b, Status.WALKOVER if winner else Status.EMPTY, winner,
                                None, Decided(0 if a else 1, Decider.WALKOVER, (0, 0))
                                if winner else None))
        else:
            state = judge(node, a, b)
            if isinstance(state, Decided):
                w, lo = (a, b) if state.winner == 0 else (b, a)
                out.append(Resolved(node, a, b, Status.DECIDED, w, lo, state))
            elif isinstance(state, Needs):
                out.append(Resolved(node, a, b, Status.NEEDS, needs=state))
            else:
                out.append(Resolved(node, a, b, Status.PLAYING))
    return out


def over(resolved: Sequence[Resolved]) -> bool:
    return all(r.status in (Status.DECIDED, Status.WALKOVER, Status.EMPTY, Status.SKIPPED)
               for r in resolved)


def placements(resolved: Sequence[Resolved], bots: Sequence[str], double: bool
               ) -> dict[str, float]:
    """Each bot's placement key (higher is better placed): the depth of the match that
    put it out; the champion (or a bot still in) above every depth."""
    top = max((r.node.depth for r in resolved), default=0.0) + 1.0
    losses: dict[str, int] = {b: 0 for b in bots}
    out = {b: top for b in bots}
    finals = (Section.GRAND_FINAL, Section.RESET)
    for r in resolved:
        if r.status is not Status.DECIDED or r.loser is None or r.winner is None:
            continue
        losses[r.loser] += 1
        if r.node.section is Section.THIRD_PLACE:
            out[r.loser] = r.node.depth       # 4th, below the winner
            out[r.winner] = r.node.depth + 0.25
        elif r.node.section not in finals and losses[r.loser] == (2 if double else 1):
            out[r.loser] = r.node.depth
    played = [r for r in resolved if r.node.section in finals and r.status is Status.DECIDED]
    if played and played[-1].loser is not None:
        # The last final played names the runner-up (a grand final won by the losers'
        # side without a reset puts the winners' side out after one loss).
        out[played[-1].loser] = played[-1].node.depth
    return out
