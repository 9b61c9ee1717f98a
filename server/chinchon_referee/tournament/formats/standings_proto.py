"""The protobuf spelling of standings: a table's rows, and each stage's standings with its
rounds or bracket (``chinchon.v1.StageStandings``), what ``GetStandings`` answers.

Built from :func:`.stage_standings.stage_standings` and the JSON shape of
:func:`.structure.structure`; the enums' names are the model's values upper-cased
behind their prefix (``needs games`` is ``MATCH_STATUS_NEEDS_GAMES``), mapped here only.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

from chinchon.v1 import tournament_pb2 as tpb

from ..standings import Standings
from ..tiebreaks import Tiebreak
from .bracket import Section, Status
from .match import Decider
from .proto import tiebreak_to_proto
from .spec import Kind
from .stage_standings import StageStandings


def _names(kind: type[enum.StrEnum], prefix: str, enum_name: str) -> dict[str, Any]:
    values = tpb.DESCRIPTOR.enum_types_by_name[enum_name].values_by_name
    return {m.value: values[f"{prefix}_{m.value.upper().replace(' ', '_')}"].number
            for m in kind}


_KIND = _names(Kind, "STAGE_KIND", "StageKind")
_SECTION = _names(Section, "BRACKET_SECTION", "BracketSection")
_STATUS = _names(Status, "MATCH_STATUS", "MatchStatus")
_DECIDER = _names(Decider, "MATCH_DECIDER", "MatchDecider")
_STATE: dict[str, Any] = {"not_started": tpb.STAGE_STATE_NOT_STARTED, "playing": tpb.STAGE_STATE_PLAYING,
          "over": tpb.STAGE_STATE_OVER}


def rows_to_proto(st: Standings) -> list[tpb.StandingRow]:
    return [
        tpb.StandingRow(
            rank=r.rank, bot=r.bot, match_points=r.match_points, games=r.games, wins=r.wins,
            draws=r.draws, losses=r.losses, hands_won=r.hands_won, chinchones=r.chinchones,
            avg_points_per_hand=r.avg_points_per_hand, forfeits=r.forfeits,
            timeouts=r.timeouts, illegal_actions=r.illegal_actions, rating=r.rating,
            rating_low=r.rating_low, rating_high=r.rating_high,
            p_better_than_next=r.p_better_than_next or 0.0, byes=r.byes,
            buchholz=r.buchholz, sonneborn_berger=r.sonneborn_berger,
        )
        for r in st.rows
    ]


def stages_to_proto(per: Sequence[StageStandings], structure: Mapping[str, Any]
                    ) -> list[tpb.StageStandings]:
    """Every stage of ``structure`` (those not reached: their name, kind and state
    only), with the standings ``per`` gives for those reached."""
    by = {s.index: s for s in per}
    out = []
    for d in structure["stages"]:
        msg = tpb.StageStandings(index=d["index"], name=d["name"], kind=_KIND[d["kind"]],
                                 state=_STATE[d["status"]],
                                 tiebreaks=[tiebreak_to_proto(Tiebreak(t))
                                            for t in d["tiebreaks"]],
                                 ranking=d.get("ranking") or [])
        mine = by.get(d["index"])
        if mine is not None:
            msg.rows.extend(rows_to_proto(mine.standings))
            del msg.tiebreaks[:]
            msg.tiebreaks.extend(tiebreak_to_proto(t) for t in mine.standings.tiebreaks)
        msg.challengers.extend(d.get("challengers", []))
        msg.field.extend(d.get("field", []))
        msg.rounds.extend(_round(r) for r in d.get("rounds", []))
        bracket = d.get("bracket")
        if bracket is not None:
            msg.bracket_size = bracket["size"]
            msg.matches.extend(_match(m) for m in bracket["matches"])
        out.append(msg)
    return out


def _round(r: Mapping[str, Any]) -> tpb.SwissRound:
    return tpb.SwissRound(round=r["round"], byes=r["byes"], bye_points=r["bye_points"], tables=[
        tpb.SwissTable(table=t["table"], players=t["players"], points=t["points"],
                       game_ids=t["games"], finished=t["finished"]) for t in r["tables"]])


def _match(m: Mapping[str, Any]) -> tpb.BracketMatch:
    decided = m.get("decided_by")
    return tpb.BracketMatch(
        match=m["match"], section=_SECTION[m["section"]], round=m["round"], slot=m["slot"],
        a=m["a"] or "", b=m["b"] or "", sources=m["from"], status=_STATUS[m["status"]],
        wins_a=m["wins"][0], wins_b=m["wins"][1], game_ids=m["games"],
        winner=m["winner"] or "", loser=m["loser"] or "",
        decided_by=_DECIDER[decided] if decided is not None else tpb.MATCH_DECIDER_UNSPECIFIED)
