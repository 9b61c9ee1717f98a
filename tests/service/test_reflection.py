"""Reflection serves the protos' documentation: a client that reads the
referee's descriptors by reflection, as ``grpcurl describe`` does, finds the comments
of ``protos/chinchon/v1`` on the services, messages and fields; under the service's two
names (``grpc.reflection.v1``, which grpcurl asks first, and ``v1alpha``). The client
here is grpcio-reflection's own descriptor database, against a real server on port 0."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from chinchon_referee.service.server import RunningServer
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2 as rpb
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)


def comment_of(file: descriptor_pb2.FileDescriptorProto, path: list[int]) -> str:
    for loc in file.source_code_info.location:
        if list(loc.path) == path:
            return loc.leading_comments.strip()
    return ""


@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_reflection_serves_the_protos_comments(server: RunningServer) -> None:
    # The client is a blocking one: in a thread, while the server runs on this loop.
    await asyncio.to_thread(read_the_comments, server.target)


def read_the_comments(target: str) -> None:
    with grpc.insecure_channel(target) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        services = set(db.get_services())
        assert {"chinchon.v1.RefereeService", "chinchon.v1.TournamentService",
                "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                "grpc.reflection.v1alpha.ServerReflection"} <= services
        referee = db.FindFileContainingSymbol("chinchon.v1.RefereeService")
        assert referee.name == "chinchon/v1/referee.proto"
        # service 0 (path 6, 0): RefereeService and its Play method (6, 0, 2, 0).
        assert referee.service[0].name == "RefereeService"
        assert comment_of(referee, [6, 0]), "the service's comment"
        assert comment_of(referee, [6, 0, 2, 0]), "Play's comment"
        req = next(i for i, m in enumerate(referee.message_type) if m.name == "ActionRequest")
        fid = next(i for i, f in enumerate(referee.message_type[req].field) if f.name == "request_id")
        assert comment_of(referee, [4, req, 2, fid]) == (
            "Identifies this request; answers to older requests are discarded.")
        game = db.FindFileByName("chinchon/v1/game.proto")  # a dependency, documented too
        obs = next(i for i, m in enumerate(game.message_type) if m.name == "Observation")
        assert comment_of(game, [4, obs]) == "Everything one seat may see, and nothing else."
        tournament = db.FindFileContainingSymbol("chinchon.v1.TournamentService")
        assert comment_of(tournament, [6, 0])
        # Files that are not ours still come, from the pool (without comments).
        assert db.FindFileContainingSymbol("grpc.health.v1.Health").name.endswith("health.proto")
        with pytest.raises(KeyError):
            db.FindFileContainingSymbol("chinchon.v1.NoSuchThing")


@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_reflection_answers_under_the_v1_name(server: RunningServer) -> None:
    """``grpc.reflection.v1.ServerReflection`` (the same messages as v1alpha)."""
    await asyncio.to_thread(ask_v1, server.target)


def ask_v1(target: str) -> None:
    with grpc.insecure_channel(target) as channel:
        call = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=rpb.ServerReflectionRequest.SerializeToString,
            response_deserializer=rpb.ServerReflectionResponse.FromString)
        answers = list(call(iter([
            rpb.ServerReflectionRequest(file_containing_symbol="chinchon.v1.PlayRequest"),
            rpb.ServerReflectionRequest(file_by_filename="no/such.proto"),
        ]), timeout=10))
    files = [descriptor_pb2.FileDescriptorProto.FromString(b)
             for b in answers[0].file_descriptor_response.file_descriptor_proto]
    by_name = {f.name: f for f in files}
    assert {"chinchon/v1/referee.proto", "chinchon/v1/game.proto",
            "chinchon/v1/record.proto", "google/protobuf/duration.proto"} <= set(by_name)
    assert by_name["chinchon/v1/referee.proto"].source_code_info.location
    assert answers[1].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
