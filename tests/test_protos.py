"""The generated code matches the .proto files, and the wire package is what the docs say."""

from __future__ import annotations

import subprocess
import sys

from chinchon.v1 import game_pb2, record_pb2, referee_pb2, tournament_pb2


def test_generated_code_is_not_stale() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.protogen", "--check"],
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
        "GetStandings", "WatchTournament", "ExportResults",
    }


def test_every_enum_starts_with_unspecified() -> None:
    for mod in (game_pb2, record_pb2, referee_pb2, tournament_pb2):
        for enum in mod.DESCRIPTOR.enum_types_by_name.values():
            assert enum.values[0].number == 0
            assert enum.values[0].name.endswith("_UNSPECIFIED"), enum.name
