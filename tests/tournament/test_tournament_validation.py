"""An organizer's mistakes in a declaration are refused alike, naming the field, by
``chinchon tournament check``, ``chinchon tournament run`` and ``CreateTournament``,
and nothing is stored or launched; results stay inside their folder whatever the name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon.wire import duration
from chinchon_referee.auth import TokenBook
from chinchon_referee.cli.main import main
from chinchon_referee.cli.tournament import _slug
from chinchon_referee.launch.launcher import instances
from chinchon_referee.tournament.model import MAX_CONCURRENCY, MAX_GAMES, TournamentSpec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fixture_types import StartAdminServer
from tests.support.helpers import ADMIN

CLI = [sys.executable, "-m", "chinchon_referee.cli"]


def declaration(top: str = "", parts: str | None = None, sections: str = "") -> str:
    """A small valid declaration with ``top`` lines added to its top level, ``parts``
    replacing its participants and ``sections`` added at the end."""
    if parts is None:
        parts = ('[[participants]]\nname = "alpha"\ntoken = "tok-alpha-test-token"\n'
                 '[[participants]]\nname = "beta"\ntoken = "tok-beta-test-token"\n')
    return f'name = "cup"\nseed = "s"\n{top}\n{sections}\n{parts}'


def many(n: int) -> str:
    return "".join(f'[[participants]]\nname = "b{i}"\n' for i in range(n))


# (declaration, the text the error must contain)
BAD = {
    "per_move-nan": (declaration(sections="[time_control]\nper_move = nan\n"),
                     "time_control.per_move: must be a finite number"),
    "bank-inf": (declaration(sections="[time_control]\nbank = inf\n"),
                 "time_control.bank: must be a finite number"),
    "grace-nan": (declaration(sections="[policies]\nreconnect_grace = nan\n"),
                  "policies.reconnect_grace: must be a finite number"),
    "grace-minus-inf": (declaration(sections="[policies]\nreconnect_grace = -inf\n"),
                        "policies.reconnect_grace: must be a finite number"),
    "per_move-year": (declaration(sections="[time_control]\nper_move = 31536000\n"),
                      "time_control.per_move: at most 86400"),
    "concurrency-100": (declaration("concurrency = 100"),
                        f"concurrency: 1 to {MAX_CONCURRENCY}, got 100"),
    "concurrency-1e20": (declaration("concurrency = 100_000_000_000_000_000_000"),
                         f"concurrency: 1 to {MAX_CONCURRENCY}"),
    "games-2e9-float": (declaration("games_per_pairing = 2e9"),
                        "games_per_pairing: must be a whole number"),
    "games-2e9": (declaration("games_per_pairing = 2000000000"),
                  f"games_per_pairing: 1 to {MAX_GAMES}"),
    "games-0": (declaration("games_per_pairing = 0"), "games_per_pairing: 1 to"),
    "schedule-too-big": (declaration("games_per_pairing = 200", many(60)),
                         "games_per_pairing: the schedule would have 354,000 games"),
    "participants-too-many": (declaration(parts=many(201)),
                              "participants: at most 200 bots, got 201"),
    "same-token": (declaration(parts='[[participants]]\nname = "alpha"\ntoken = "same"\n'
                                     '[[participants]]\nname = "beta"\ntoken = "same"\n'),
                   "participants: alpha and beta have the same token"),
    "cyrillic-a": (declaration(parts='[[participants]]\nname = "\u0430lpha"\n'
                                     '[[participants]]\nname = "alpha"\n'),
                   "participants[0].name: a bot name is 1 to 64 ASCII letters, digits, '-', '_' or "
                   "'.', beginning with a letter or a digit, got '\\u0430lpha'"),
    "instances-1000": (declaration(parts='[[participants]]\nname = "a"\ninstances = 1000\n'
                                         '[[participants]]\nname = "b"\n'),
                       "participants.instances: a: 0 (automatic) to 64, got 1000"),
    "instances-float": (declaration(parts='[[participants]]\nname = "a"\ninstances = 2.5\n'
                                          '[[participants]]\nname = "b"\n'),
                        "participants[0].instances: must be a whole number"),
    "max_strikes-float": (declaration(sections="[policies]\nmax_strikes = 2.5\n"),
                          "policies.max_strikes: must be a whole number"),
    "per_move-string": (declaration(sections='[time_control]\nper_move = "nan"\n'),
                        "time_control.per_move: must be a number"),
    # Every option bounded, so that no declaration makes a game without end.
    "score_limit-2^31": (declaration(sections="[rules]\nscore_limit = 2147483647\n"),
                         "rules.score_limit: at most 500, got 2147483647"),
    "score_limit-2^63": (declaration(sections="[rules]\nscore_limit = 9223372036854775807\n"),
                         "rules.score_limit: at most 500"),
    "turns-2^31": (declaration(sections="[rules]\nmax_turns_per_hand = 2147483647\n"),
                   "rules.max_turns_per_hand: at most 1000"),
    "per_move-1e-9": (declaration(sections="[time_control]\nper_move = 1e-9\nbank = 0\n"),
                      "time_control.per_move: at least 0.01 s"),
    "strikes-2^31": (declaration(sections="[policies]\nmax_strikes = 2147483647\n"),
                     "policies: max_strikes must be 1 to 100"),
    "name-nul": ('name = "cup\\u0000x"\nseed = "s"\n' + many(2), "name: printable text only"),
    "name-newline": ('name = "cup\\nx"\nseed = "s"\n' + many(2), "name: printable text only"),
    "bot-dot-dot": (declaration(parts='[[participants]]\nname = ".."\n' + many(1)),
                    "participants[0].name: a bot name is 1 to 64 ASCII letters"),
    "bot-dash-rf": (declaration(parts='[[participants]]\nname = "-rf"\n' + many(1)),
                    "beginning with a letter or a digit"),
    "start-9999": (declaration('start = "9999-01-01T00:00:00"'),
                   "start: 9999-01-01T00:00:00+00:00 is more than 366 days ahead"),
    "command-nested": (declaration(parts='[[participants]]\nname = "a"\ncommand = [[1]]\n'
                                         + many(1)),
                       "participants[0].command: a list of strings"),
}


@pytest.mark.parametrize(("case", "content", "message"), [
    ("utf-16", declaration().encode("utf-16"), "not UTF-8 text"),
    ("nested", b"name = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deep"),
])
def test_check_refuses_an_unreadable_file_in_one_line(
    case: str, content: bytes, message: str, tmp_path: Path,
) -> None:
    """A file that is not UTF-8 TOML (a UTF-16 file, 5,000 nested arrays) is refused by
    ``tournament check`` with one line, not a traceback."""
    f = tmp_path / "cup.toml"
    f.write_bytes(content)
    done = subprocess.run([*CLI, "tournament", "check", str(f)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1, (case, done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr
    assert message in " ".join(done.stdout.split()), done.stdout


@pytest.mark.parametrize("case", sorted(BAD))
def test_check_refuses_a_bad_declaration_naming_the_field(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    text, message = BAD[case]
    f = tmp_path / "cup.toml"
    f.write_text(text, encoding="utf-8")
    assert main(["tournament", "check", str(f)]) == 1
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert message in out, out
    assert "valid" not in out


@pytest.mark.parametrize("case", sorted(BAD))
def test_run_refuses_a_bad_declaration_and_creates_nothing(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    text, message = BAD[case]
    f = tmp_path / "cup.toml"
    f.write_text(text, encoding="utf-8")
    results = tmp_path / "results"
    db = tmp_path / "cup.sqlite3"
    assert main(["tournament", "run", str(f), "--results", str(results), "--db", str(db),
                 "--quiet"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert message in out, out
    assert not results.exists() and not db.exists()


def test_run_refuses_bad_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--concurrency 0`` was taken for "no override"; now every value is checked."""
    f = tmp_path / "cup.toml"
    f.write_text(declaration(), encoding="utf-8")
    for flag, value, message in (("--concurrency", "0", "concurrency: 1 to 64, got 0"),
                                 ("--concurrency", "65", "concurrency: 1 to 64, got 65"),
                                 ("--games-per-pairing", "0", "games_per_pairing: 1 to")):
        assert main(["tournament", "run", str(f), "--results", str(tmp_path / "r"),
                     flag, value, "--quiet"]) == 2
        out = " ".join(capsys.readouterr().out.split())
        assert message in out, out
        assert not (tmp_path / "r").exists()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(min_size=1, max_size=300))
def test_any_tournament_name_gives_a_folder_inside_the_results_root(name: str) -> None:
    root = Path("/srv/results")
    slug = _slug(name)
    assert 0 < len(slug) <= 64 and not slug.startswith(".")
    assert (root / slug).resolve().parent == root


def test_a_tournament_named_dot_dot_writes_inside_its_results_folder(tmp_path: Path) -> None:
    """It wrote into the current folder (overwriting ./report.md); now its results go
    to results/tournament/ under the current folder."""
    (tmp_path / "report.md").write_text("mine", encoding="utf-8")
    f = tmp_path / "dots.toml"
    f.write_text(
        'name = ".."\nseed = "s"\ngames_per_pairing = 1\nconcurrency = 1\n'
        '[rules]\nscore_limit = 30\n'
        '[[participants]]\nname = "a"\ncommand = ["{python}", "-m", "chinchon.sdk", '
        '"--bot", "greedy"]\n'
        '[[participants]]\nname = "b"\ncommand = ["{python}", "-m", "chinchon.sdk", '
        '"--bot", "random"]\n', encoding="utf-8")
    proc = subprocess.run([*CLI, "tournament", "run", str(f), "--quiet"], capture_output=True,
                          text=True, timeout=150, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "standings.json").exists()
    assert (tmp_path / "results" / "tournament" / "report.md").is_file()
    st = json.loads((tmp_path / "results" / "tournament" / "standings.json").read_text())
    assert st["games"] == 2
    assert (tmp_path / "results" / "tournament" / "tournament.sqlite3").is_file()


# -- CreateTournament ----------------------------------------------------------------------


def admin_spec(**changes: object) -> tpb.TournamentSpec:
    spec = tpb.TournamentSpec(
        name="cup", participants=[tpb.Participant(name="alpha", token="tok-alpha-test-token"),
                                  tpb.Participant(name="beta", token="tok-beta-test-token")],
        start_when_connected=False, seed="s",
    )
    for k, v in changes.items():
        if k == "participants":
            del spec.participants[:]
            spec.participants.extend(v)  # type: ignore[arg-type]
        elif isinstance(v, g.TimeControl | g.Policies | g.RuleSet):
            getattr(spec, k).CopyFrom(v)
        else:
            setattr(spec, k, v)
    return spec


ADMIN_BAD = {
    "games_per_pairing-0": (admin_spec(games_per_pairing=0), "games_per_pairing: 1 to"),
    "games_per_pairing-2e9": (admin_spec(games_per_pairing=2_000_000_000),
                              f"games_per_pairing: 1 to {MAX_GAMES}"),
    "concurrency-0": (admin_spec(concurrency=0), "concurrency: 1 to 64, got 0"),
    "concurrency-100": (admin_spec(concurrency=100), "concurrency: 1 to 64, got 100"),
    "table_size-0": (admin_spec(table_size=0), "table_size"),
    "schedule-too-big": (
        admin_spec(participants=[tpb.Participant(name=f"b{i}") for i in range(60)],
                   games_per_pairing=200),
        "games_per_pairing: the schedule would have 354,000 games"),
    "same-token": (admin_spec(participants=[tpb.Participant(name="alpha", token="same-token-for-both"),
                                            tpb.Participant(name="beta", token="same-token-for-both")]),
                   "participants: alpha and beta have the same token"),
    "admin-token": (admin_spec(participants=[tpb.Participant(name="alpha", token=ADMIN),
                                             tpb.Participant(name="beta")]),
                    "participants: alpha's token is the admin token"),
    "another-bots-token": (
        admin_spec(participants=[tpb.Participant(name="alpha", token="tok-known-test-token"),
                                 tpb.Participant(name="beta")]),
        "participants: alpha's token is already the token of bot known"),
    "cyrillic-a": (admin_spec(participants=[tpb.Participant(name="\u0430lpha"),
                                            tpb.Participant(name="alpha")]),
                   "participants[0].name: a bot name is 1 to 64 ASCII letters, digits, '-', '_' or "
                   "'.', beginning with a letter or a digit, got '\\u0430lpha'"),
    "per_move-2-days": (admin_spec(time_control=g.TimeControl(per_move=duration(172800.0))),
                        "time_control.per_move: at most 86400"),
    "grace-2-days": (admin_spec(policies=g.Policies(reconnect_grace=duration(172800.0))),
                     "policies.reconnect_grace: at most 86400"),
    "score_limit-2^31": (admin_spec(rules=g.RuleSet(score_limit=2147483647)),
                         "rules.score_limit: at most 500"),
    "turns-2^31": (admin_spec(rules=g.RuleSet(max_turns_per_hand=2147483647)),
                   "rules.max_turns_per_hand: at most 1000"),
    "per_move-1e-9": (admin_spec(time_control=g.TimeControl(per_move=duration(1e-9))),
                      "time_control.per_move: at least 0.01 s"),
    "name-nul": (admin_spec(name="cup\x00x"), "name: printable text only"),
    "name-newline": (admin_spec(name="cup\nx"), "name: printable text only"),
    "bot-dash-rf": (admin_spec(participants=[tpb.Participant(name="-rf"),
                                             tpb.Participant(name="alpha")]),
                    "beginning with a letter or a digit"),
}


async def test_create_tournament_refuses_each_mistake_naming_the_field(
    tmp_path: Path, admin_servers: StartAdminServer,
) -> None:
    tokens = TokenBook(ADMIN)
    tokens.add("known", "tok-known-test-token")
    server, store = await admin_servers(tokens, tmp_path / "admin.sqlite3")
    md = (("authorization", f"Bearer {ADMIN}"),)
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        for case, (spec, message) in ADMIN_BAD.items():
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                            metadata=md, timeout=30)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, case
            assert message in (err.value.details() or ""), (case, err.value.details())
        assert store.tournaments() == []
        assert store.bots() == []  # no token was registered either
        assert tokens.bot_for(ADMIN) is None and tokens.bot_for("same-token-for-both") is None
        # Unset fields take the declaration's defaults.
        made = await stub.CreateTournament(
            tpb.CreateTournamentRequest(spec=admin_spec()), metadata=md, timeout=30)
        assert made.tournament.games_total == 2
        assert store.tournament(made.tournament.id) is not None


@settings(max_examples=200, deadline=None, derandomize=True)
@given(n=st.integers(2, 200), k=st.integers(2, 5), conc=st.integers(1, MAX_CONCURRENCY),
       declared=st.integers(0, MAX_CONCURRENCY))
def test_the_launcher_never_starts_more_copies_than_games_at_once(
    n: int, k: int, conc: int, declared: int,
) -> None:
    """100 games at once with 2 bots launched 200 processes: now the concurrency is at
    most MAX_CONCURRENCY and no bot gets more copies than games it can be in at once."""
    k = min(k, n)
    spec = TournamentSpec.from_dict({
        "name": "cup", "table_size": k, "concurrency": conc,
        "participants": [{"name": f"b{i}", "instances": declared if i == 0 else 0}
                         for i in range(n)],
    })
    counts = [instances(p.instances, concurrency=spec.concurrency, bots=len(spec.participants),
                        table_size=spec.table_size) for p in spec.participants]
    assert all(1 <= c <= conc for c in counts)
    if declared:
        assert counts[0] == min(declared, conc)


async def test_create_tournament_takes_a_declaration_of_200_bots(
    tmp_path: Path, admin_servers: StartAdminServer,
) -> None:
    """A valid declaration of 200 bots, each with its command line, is some 85 kB: over
    the bots' 64 KiB message limit, within the organizer's service's own (1 MiB)."""
    tokens = TokenBook(ADMIN)
    server, store = await admin_servers(tokens, tmp_path / "admin.sqlite3")
    command = ["{python}", "-m", "chinchon.sdk", "--bot", "greedy", "--target",
               "referee.example.org:50051", "--reconnect-for", "300", "--seed", "x" * 280]
    spec = tpb.TournamentSpec(
        name="the big league", seed="s", games_per_pairing=1, start_when_connected=False,
        participants=[tpb.Participant(name=f"bot-{i:03d}", token=f"token-of-bot-{i:03d}-test",
                                      command=command) for i in range(200)])
    assert spec.ByteSize() > 80_000
    async with grpc.aio.insecure_channel(server.target) as ch:
        made = await tpb_grpc.TournamentServiceStub(ch).CreateTournament(
            tpb.CreateTournamentRequest(spec=spec), metadata=(("authorization", f"Bearer {ADMIN}"),),
            timeout=120)
    assert made.tournament.games_total == 200 * 199  # every pair once, both seatings
    assert len(store.bots()) == 200
