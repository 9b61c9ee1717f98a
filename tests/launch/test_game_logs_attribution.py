"""How launch/game_logs.py gives a bot's stderr lines to games: random interleavings of
games starting and ending and of lines written by any instance of any bot. A game's
share never holds a line written while another game (or another seat) of that bot was
in progress, or while that game was not; the bot's own log holds the others, each
written only once every game it names is over, naming every game in progress when it
was written. And the bounds count bytes."""

from __future__ import annotations

import json
from pathlib import Path

from chinchon_referee.launch.game_logs import MAX_BYTES, MAX_LINE, GameLogs
from chinchon_referee.storage.beside import bot_stderr_file, stderr_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BOTS = ("a", "b", "c")
#: An operation: ("start", players), ("end", k-th running game), ("write", bot, instance).
Op = tuple[str, tuple[str, ...] | int | tuple[str, int]]

ops = st.lists(st.one_of(
    st.tuples(st.just("start"), st.lists(st.sampled_from(BOTS), min_size=2, max_size=3).map(tuple)),
    st.tuples(st.just("end"), st.integers(0, 5)),
    st.tuples(st.just("write"), st.tuples(st.sampled_from(BOTS), st.integers(0, 2))),
), max_size=60)


def _entries(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text().splitlines()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=ops, instances=st.integers(1, 3))
def test_a_share_holds_only_lines_written_while_its_game_alone_was_in_progress(
        tmp_path_factory: object, script: list[Op], instances: int) -> None:
    root: Path = tmp_path_factory.mktemp("logs")  # type: ignore[attr-defined]
    files = {b: [root / f"{b}.{i}.log" for i in range(instances)] for b in BOTS}
    folder = root / "stderr"
    cut = GameLogs(files, lambda g, s: stderr_file(folder, g, s), ["tok_secret_0123456789"],
                   lambda b: bot_stderr_file(folder, b))
    running: dict[str, tuple[str, ...]] = {}
    #: Each line written: its bot and the (game, seat) of that bot in progress then.
    written: dict[str, tuple[str, frozenset[tuple[str, int]]]] = {}
    n_games = 0

    def check_bot_logs() -> None:
        for b in BOTS:
            for e in _entries(bot_stderr_file(folder, b)):
                assert not set(e["games"]) & set(running), "a held line out before its game's end"  # type: ignore[call-overload]

    for kind, arg in [*script, *(("end", 0) for _ in range(12))]:
        if kind == "start":
            gid = f"g{n_games:03d}"
            n_games += 1
            running[gid] = arg  # type: ignore[assignment]
            cut(gid, list(arg), True)  # type: ignore[arg-type]
        elif kind == "end" and running:
            gid = sorted(running)[arg % len(running)]  # type: ignore[operator]
            players = running.pop(gid)
            cut(gid, list(players), False)
            check_bot_logs()
        elif kind == "write":
            bot, inst = arg  # type: ignore[misc]
            units = frozenset((g, s) for g, ps in running.items() for s, p in enumerate(ps) if p == bot)
            line = f"L{len(written):04d} hand of {bot}: 7♠ 5♥ tok_secret_0123456789"
            written[line.split()[0]] = (bot, units)
            with open(files[bot][inst % instances], "a", encoding="utf-8") as f:
                f.write(line + "\n")
    cut.finish()
    check_bot_logs()
    seen: set[str] = set()
    for share in folder.glob("*.log"):
        gid, seat, _ = share.name.split(".")
        for ln in share.read_text(encoding="utf-8").splitlines():
            assert "tok_secret" not in ln
            key = ln.split()[1] if ln.startswith("[") else ln.split()[0]
            _, units = written[key]
            assert units == {(gid, int(seat))}, f"{key} was written during {sorted(units)}"
            seen.add(key)
    for b in BOTS:
        for e in _entries(bot_stderr_file(folder, b)):
            for ln in str(e["text"]).splitlines():
                key = ln.split()[1] if ln.startswith("[") else ln.split()[0]
                bot, units = written[key]
                assert bot == b and {g for g, _ in units} <= set(e["games"])  # type: ignore[call-overload]
                assert len(units) != 1
                seen.add(key)
    assert seen == set(written), "every line is kept somewhere"


def test_the_bounds_count_bytes_and_never_cut_a_character(tmp_path: Path) -> None:
    log = tmp_path / "a.0.log"
    folder = tmp_path / "stderr"
    cut = GameLogs({"a": [log]}, lambda g, s: stderr_file(folder, g, s))
    cut("g1", ["a", "x"], True)
    long_line = "é" * MAX_LINE  # 2 bytes each
    with open(log, "w", encoding="utf-8") as f:
        f.write(long_line + "\n")
        for i in range(MAX_BYTES // 100):
            f.write(f"{i:05d} " + "ñ" * 60 + "\n")
    cut("g1", ["a", "x"], False)
    data = (folder / "g1.0.log").read_bytes()
    assert len(data) <= MAX_BYTES
    text = data.decode("utf-8")  # whole characters only
    assert text.startswith(text.splitlines()[0]) and text.splitlines()[0][:5].isdigit()
    cut("g2", ["a", "x"], True)
    with open(log, "a", encoding="utf-8") as f:
        f.write(long_line + "\n")
    cut("g2", ["a", "x"], False)
    (line,) = (folder / "g2.0.log").read_text(encoding="utf-8").splitlines()
    assert line.endswith("…") and len(line[:-1].encode()) <= MAX_LINE
