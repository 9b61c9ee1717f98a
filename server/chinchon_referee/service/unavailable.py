"""The organizer's calls when the database is out of reach for a moment: the caller gets
UNAVAILABLE, saying so (a client retries such a call), instead of an unknown error."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from ..auth import ADMIN_PREFIX
from ..storage import StoreFull, StoreUnavailable


def _unavailable(e: StoreUnavailable) -> str:
    if isinstance(e, StoreFull):
        return f"the referee's database cannot take writes: its disk is full ({e})"
    return f"the referee's database is out of reach for a moment ({e}): try again"


class StoreErrorInterceptor(grpc.aio.ServerInterceptor):
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(details)
        if handler is None or not details.method.startswith(ADMIN_PREFIX):
            return handler
        if handler.unary_unary is not None:
            # On an aio server the behaviours are coroutines (the stubs say otherwise).
            call: Any = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                try:
                    return await call(request, context)
                except StoreUnavailable as e:
                    await context.abort(grpc.StatusCode.UNAVAILABLE, _unavailable(e))

            return grpc.unary_unary_rpc_method_handler(
                unary, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        if handler.unary_stream is not None:
            stream: Any = handler.unary_stream

            async def streamed(request: Any, context: grpc.aio.ServicerContext[Any, Any]
                               ) -> AsyncIterator[Any]:
                try:
                    async for item in stream(request, context):
                        yield item
                except StoreUnavailable as e:
                    await context.abort(grpc.StatusCode.UNAVAILABLE, _unavailable(e))

            return grpc.unary_stream_rpc_method_handler(
                streamed, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        return handler
