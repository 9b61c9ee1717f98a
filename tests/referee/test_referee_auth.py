"""Identity: the Play stream and the admin service need the right token."""

from __future__ import annotations

import grpc
import pytest
from chinchon.v1 import referee_pb2 as pb
from chinchon_referee.service.server import RunningServer

from tests.support.helpers import (
    bot_token,
)
from tests.support.referee import (
    play_call,
)

# -- identity -----------------------------------------------------------------------------


@pytest.mark.parametrize("server", [["alice"]], indirect=True)
@pytest.mark.parametrize("token", [None, "wrong-token", ""])
async def test_wrong_or_missing_token_is_unauthenticated(server: RunningServer, token: str | None) -> None:
    call = await play_call(server.target, token)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        # The refusal may come before the write ends: either call raises it.
        await call.write(pb.PlayRequest(hello=pb.Hello(client="x")))
        await call.read()
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # The server still serves the right token.
    ok = await play_call(server.target, bot_token("alice"))
    await ok.write(pb.PlayRequest(hello=pb.Hello(client="x")))
    msg = await ok.read()
    assert msg.welcome.bot_name == "alice"
    ok.cancel()


@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_admin_service_needs_the_admin_token(server: RunningServer) -> None:
    from chinchon.v1 import tournament_pb2 as tpb
    from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        for md in ((), (("authorization", f"Bearer {bot_token('alice')}"),)):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=md)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
