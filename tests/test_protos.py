"""The generated code matches the .proto files, and the wire package is what the docs say."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from chinchon.v1 import game_pb2, record_pb2, referee_pb2, tournament_pb2
from google.protobuf.descriptor import FileDescriptor

PROTOS = Path(__file__).resolve().parents[1] / "protos"
BOT_PROTOS = ("chinchon/v1/game.proto", "chinchon/v1/record.proto", "chinchon/v1/referee.proto")


def test_generated_code_is_not_stale() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.tools.protogen", "--check"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "generated code is current" in proc.stdout


def test_versioned_package_and_services() -> None:
    for mod in (game_pb2, record_pb2, referee_pb2, tournament_pb2):
        assert mod.DESCRIPTOR.package == "chinchon.v1"
    assert set(referee_pb2.DESCRIPTOR.services_by_name) == {"RefereeService"}
    play = referee_pb2.DESCRIPTOR.services_by_name["RefereeService"].methods_by_name["Play"]
    assert play.client_streaming and play.server_streaming
    assert set(tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"].methods_by_name) == {
        "CreateTournament", "ListTournaments", "StartTournament", "CancelTournament",
        "GetStandings", "WatchTournament", "ExportResults", "ListGames", "GetGameRecord",
        "ExportRecords", "ListBots", "AddBot", "RotateBotToken", "RevokeBot", "ListConnectedBots",
        "GetServerStatus",
    }
    export = tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"].methods_by_name[
        "ExportRecords"]
    assert export.server_streaming and not export.client_streaming


def test_every_enum_starts_with_unspecified() -> None:
    for mod in (game_pb2, record_pb2, referee_pb2, tournament_pb2):
        for enum in mod.DESCRIPTOR.enum_types_by_name.values():
            assert enum.values[0].number == 0
            assert enum.values[0].name.endswith("_UNSPECIFIED"), enum.name


def imports_of(fd: FileDescriptor) -> set[str]:
    """Every file ``fd`` needs, itself included."""
    seen = {fd.name}
    for dep in fd.dependencies:
        seen |= imports_of(dep)
    return seen


def test_a_bot_needs_only_the_game_record_and_referee_protos() -> None:
    """referee.proto pulls in no admin service: tournament.proto is the organizer's."""
    assert imports_of(referee_pb2.DESCRIPTOR) == {
        *BOT_PROTOS, "google/protobuf/duration.proto"}


def test_the_bot_protos_compile_alone(tmp_path: Path) -> None:
    """protoc, given only the three files docs/bots.md lists, generates a client."""
    for name in BOT_PROTOS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROTOS / name, tmp_path / name)
    out = tmp_path / "out"
    out.mkdir()
    import grpc_tools

    include = Path(grpc_tools.__file__).parent / "_proto"
    proc = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}", f"-I{include}",
         f"--python_out={out}", f"--grpc_python_out={out}", *BOT_PROTOS],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "chinchon" / "v1" / "referee_pb2_grpc.py").is_file()


def test_policies_kept_its_full_name_and_field_numbers() -> None:
    """Policies moved from tournament.proto to game.proto: same wire, same JSON."""
    desc = game_pb2.Policies.DESCRIPTOR
    assert desc.full_name == "chinchon.v1.Policies"
    assert {f.name: (f.number, f.json_name) for f in desc.fields} == {
        "max_illegal_retries": (1, "maxIllegalRetries"),
        "max_strikes": (2, "maxStrikes"),
        "reconnect_grace": (3, "reconnectGrace"),
        "absence_limit": (4, "absenceLimit"),  # added since, as a new field number
    }
    for holder in (record_pb2.GameRecord, tournament_pb2.TournamentSpec):
        assert holder.DESCRIPTOR.fields_by_name["policies"].message_type is desc
