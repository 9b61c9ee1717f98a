"""Every door an organizer types a name or a token through refuses a bad one alike,
naming the field and quoting no more than a clip of the value: a TOML declaration
(tournament or ladder), ``CreateTournament``, ``CreateLadder``, ``EnterLadder``,
``AddBot`` over real gRPC, and ``chinchon admin`` as a subprocess against a real
``chinchon serve``. Nothing is created by a refused call."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from chinchon.v1 import ladder_pb2 as lpb
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import TokenBook
from chinchon_referee.ladder.spec import LadderError, LadderSpec
from chinchon_referee.texts import MAX_MESSAGE, MAX_NAME, MAX_STAGE_NAME, name_problem
from chinchon_referee.tournament.model import SpecError, TournamentSpec
from hypothesis import given, settings

from tests.support.admin import AdminCli
from tests.support.fixture_types import StartAdminServer
from tests.support.helpers import ADMIN, bot_token
from tests.support.serve import Serve, free_port
from tests.support.texts import TEXT

MD = (("authorization", f"Bearer {ADMIN}"),)

#: Bad names, each with what the refusal must say of it (besides the field).
BAD_NAMES = {
    "nul": ("cup\x00x", "a NUL"),
    "escape": ("cup\x1b[31mred", "a control character"),
    "rtl-override": ("Final \u202eevil", "a bidirectional override"),
    "isolate": ("Final \u2066x", "a bidirectional override"),
    "newline": ("two\nlines", "a newline"),
    "line-separator": ("two\u2028lines", "a newline"),
    "leading-space": (" Final", "no space at its beginning or its end"),
    "overlong": ("x" * 100_000, "at most"),
}


def stages_toml(first: str, second: str) -> str:
    return (f'name = "cup"\nseed = "s"\n[[format.stages]]\nkind = "round_robin"\n'
            f'name = {toml_string(first)}\nadvance = 2\n[[format.stages]]\nkind = "knockout"\n'
            f'name = {toml_string(second)}\n'
            + "".join(f'[[participants]]\nname = "b{i}"\n' for i in range(4)))


def toml_string(s: str) -> str:
    """``s`` as a TOML basic string (every character TOML would refuse raw escaped)."""
    out = []
    for ch in s:
        out.append(ch if ch.isprintable() and ch not in '"\\' else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def assert_refusal(message: str, field: str, said: str) -> None:
    assert message.startswith(f"{field}: ") or f" {field}: " in message, message
    assert said in message, message
    assert len(message) <= 400 and all(ch.isprintable() for ch in message), message


@pytest.mark.parametrize("kind", list(BAD_NAMES))
def test_a_toml_declaration_refuses_a_bad_name_naming_its_field(kind: str, tmp_path: Path) -> None:
    bad, said = BAD_NAMES[kind]
    cases = {
        "name": f"name = {toml_string(bad)}\n" + "".join(
            f'[[participants]]\nname = "b{i}"\n' for i in range(2)),
        "format.stages[1].name": stages_toml("Groups", bad),
        "format.stages[0].name": stages_toml(bad, "Final"),
    }
    for field, text in cases.items():
        path = tmp_path / "cup.toml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SpecError) as e:
            TournamentSpec.from_toml(path)
        assert_refusal(str(e.value), field, said)
    # A plain round-robin with a bad stage name: its format is one stage, checked alike.
    one = ('name = "cup"\n[format]\nkind = "round_robin"\n'
           f'name = {toml_string(bad)}\n[[participants]]\nname = "a"\n[[participants]]\nname = "b"\n')
    with pytest.raises(SpecError) as e:
        TournamentSpec.from_dict(tomllib.loads(one))
    assert_refusal(str(e.value), "format.name", said)
    with pytest.raises(LadderError) as le:
        LadderSpec.from_toml_text(f"name = {toml_string(bad)}\n")
    assert_refusal(str(le.value), "name", said)


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_each_declaration_takes_a_name_exactly_when_it_meets_the_rule(name: str) -> None:
    """The doors of a declaration (tournament, stage, ladder) hold to the rule itself:
    a name is taken there exactly when texts.py takes it."""
    parts = [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]
    doors: list[tuple[Callable[[], object], type[Exception], bool]] = [
        (lambda: TournamentSpec.from_dict({"name": name, "participants": parts}),
         SpecError, name_problem(name, MAX_NAME) is None),
        (lambda: TournamentSpec.from_dict({"name": "cup", "participants": parts, "format": {
            "stages": [{"kind": "round_robin", "advance": 2, "name": "Groups"},
                       {"kind": "knockout", "name": name}]}}), SpecError,
         name == "" or (name_problem(name, MAX_STAGE_NAME) is None and name != "Groups")),
        (lambda: LadderSpec.from_dict({"name": name}), LadderError,
         name_problem(name, MAX_NAME) is None),
    ]
    for door, error, expected in doors:
        try:
            door()
            taken = True
        except error as e:
            taken = False
            assert len(str(e)) <= 400 and all(ch.isprintable() for ch in str(e)), str(e)
        assert taken == expected, (repr(name), door)


def test_two_stages_of_one_name_are_refused_naming_both() -> None:
    with pytest.raises(SpecError) as e:
        TournamentSpec.from_dict(tomllib.loads(stages_toml("Final", "Final")))
    assert str(e.value) == ("format.stages[1].name: 'Final' is also the name of "
                            "format.stages[0]: each stage needs its own")


def test_bot_names_and_tokens_of_a_declaration_are_checked_alike() -> None:
    base = 'name = "cup"\n[[participants]]\nname = "b"\n[[participants]]\n'
    with pytest.raises(SpecError) as e:
        TournamentSpec.from_dict(tomllib.loads(base + 'name = "a\\u0000"\n'))
    assert_refusal(str(e.value), "participants[1].name", "'a\\x00'")
    with pytest.raises(SpecError) as e:
        TournamentSpec.from_dict(tomllib.loads(
            base + 'name = "a"\ntoken = "a-long-enough-token-\\u0000"\n'))
    assert_refusal(str(e.value), "participants[1].token (bot 'a')", "printable ASCII only")
    with pytest.raises(LadderError) as le:
        LadderSpec.from_toml_text('name = "l"\n[[entrants]]\nname = "a"\n'
                                  'token = "a-long-enough-token-\\u0000"\n')
    assert_refusal(str(le.value), "entrants[0].token (bot 'a')", "printable ASCII only")


def _spec(name: str = "cup", stage_names: tuple[str, str] | None = None) -> tpb.TournamentSpec:
    spec = tpb.TournamentSpec(name=name, participants=[
        tpb.Participant(name=f"b{i}", token=bot_token(f"b{i}")) for i in range(4)])
    if stage_names is not None:
        spec.format.CopyFrom(tpb.TournamentFormat(stages=[
            tpb.Stage(kind=tpb.STAGE_KIND_ROUND_ROBIN, name=stage_names[0], advance=2),
            tpb.Stage(kind=tpb.STAGE_KIND_KNOCKOUT, name=stage_names[1])]))
    return spec


async def test_the_grpc_doors_refuse_bad_names_and_tokens_naming_the_field(
    tmp_path: Path, admin_servers: StartAdminServer,
) -> None:
    server, store = await admin_servers(TokenBook(ADMIN), tmp_path / "doors.sqlite3")
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub, ladders = tpb_grpc.TournamentServiceStub(ch), lpb_grpc.LadderServiceStub(ch)

        async def refused(call: object, field: str, said: str) -> None:
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await call  # type: ignore[misc]
            assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT, e.value
            assert_refusal(e.value.details() or "", field, said)

        for bad, said in BAD_NAMES.values():
            await refused(stub.CreateTournament(tpb.CreateTournamentRequest(spec=_spec(bad)),
                                                metadata=MD, timeout=30), "name", said)
            await refused(stub.CreateTournament(
                tpb.CreateTournamentRequest(spec=_spec(stage_names=("Groups", bad))),
                metadata=MD, timeout=30), "format.stages[1].name", said)
            await refused(ladders.CreateLadder(lpb.CreateLadderRequest(
                declaration=f"name = {toml_string(bad)}\n"), metadata=MD, timeout=30),
                "name", said)
            await refused(stub.AddBot(tpb.AddBotRequest(name=bad), metadata=MD, timeout=30),
                          "name", "a bot name is 1 to 64 ASCII letters")
        await refused(stub.CreateTournament(
            tpb.CreateTournamentRequest(spec=_spec(stage_names=("Final", "Final"))),
            metadata=MD, timeout=30), "format.stages[1].name", "also the name of format.stages[0]")
        nul_token = "a-long-enough-token-\x00-inside"
        await refused(stub.AddBot(tpb.AddBotRequest(name="nul", token=nul_token),
                                  metadata=MD, timeout=30), "token", "printable ASCII only")
        await refused(stub.AddBot(tpb.AddBotRequest(name="long", token="t" * 5000),
                                  metadata=MD, timeout=30), "token", "at most 256")
        lid = (await ladders.CreateLadder(lpb.CreateLadderRequest(declaration='name = "l"\n'),
                                          metadata=MD, timeout=30)).ladder.id
        await refused(ladders.EnterLadder(lpb.EnterLadderRequest(
            ladder_id=lid, bot="nul", token=nul_token), metadata=MD, timeout=30),
            "entrant.token (bot 'nul')", "printable ASCII only")
        await refused(ladders.EnterLadder(lpb.EnterLadderRequest(
            ladder_id=lid, bot="x\u202e"), metadata=MD, timeout=30),
            "entrant.name", "'x\\u202e'")
    assert store.tournaments() == [] and store.bots() == []
    assert [r.id for r in store.ladders()] == [lid]


async def test_a_100000_character_ladder_name_is_refused_as_a_field_not_by_grpc(
    tmp_path: Path, admin_servers: StartAdminServer,
) -> None:
    """The whole name in the error would pass gRPC's 8 KB of trailing metadata: the
    client would read 'metadata size exceeds hard limit' instead of the field."""
    server, store = await admin_servers(TokenBook(ADMIN), tmp_path / "l.sqlite3")
    async with grpc.aio.insecure_channel(server.target) as ch:
        ladders = lpb_grpc.LadderServiceStub(ch)
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await ladders.CreateLadder(lpb.CreateLadderRequest(
                declaration='name = "' + "n" * 100_000 + '"\n'), metadata=MD, timeout=30)
        assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        details = e.value.details() or ""
        assert details.startswith("name: at most 200 characters, got 100,000"), details
        assert len(details) <= MAX_MESSAGE
        # Unknown ids quoted back are clipped too.
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await ladders.GetLeaderboard(lpb.GetLeaderboardRequest(ladder_id="l" * 100_000),
                                         metadata=MD, timeout=30)
        assert e.value.code() is grpc.StatusCode.NOT_FOUND
        assert len(e.value.details() or "") <= MAX_MESSAGE
    assert store.ladders() == []


def test_the_admin_command_refuses_bad_names_and_tokens_before_any_call(tmp_path: Path) -> None:
    port = free_port()
    server = Serve(tmp_path, port, tmp_path / "cli.sqlite3", 1)
    try:
        admin = AdminCli(tmp_path, port)
        out = admin("bots", "add", "evil\u202eexe", code=2)
        assert_refusal(out.split("error: ", 1)[1].strip(), "bots add NAME", "'evil\\u202eexe'")
        token = tmp_path / "nul.token"
        token.write_bytes(b"a-long-enough-token-\x00-inside\n")
        out = admin("bots", "add", "ok", "--token-from", str(token), code=2)
        assert f"--token-from {token}: a token is printable ASCII only" in out
        ladder = tmp_path / "ladder.toml"
        ladder.write_text('name = "two\\nlines"\n', encoding="utf-8")
        out = admin("ladder", "create", str(ladder), code=2)
        assert f"{ladder}: name: printable text only" in out and "a newline" in out
        cup = tmp_path / "cup.toml"
        cup.write_text(stages_toml("Groups", "Fi\u202enal"), encoding="utf-8")
        out = admin("create", str(cup), code=2)
        assert "format.stages[1].name: printable text only" in out
        assert "\u202e" not in out and "'Fi\\u202enal'" in out
        listed = admin("bots", "list") + admin("list") + admin("ladder", "list")
        assert "ok" not in listed and "evil" not in listed
        assert not re.search(r"\b[tl]-[0-9a-f]+", listed), listed
    finally:
        server.stop()
