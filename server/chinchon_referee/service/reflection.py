"""gRPC server reflection that serves the protos' comments.

grpcio-reflection's servicer copies each file's descriptor out of the descriptor pool,
and the pool keeps no source info: a ``grpcurl describe`` of the referee showed every
message and field without a word of the documentation in ``protos/``. This servicer
answers the same protocol (``grpc.reflection.v1`` and ``v1alpha``, which share their
messages) from ``descriptors.binpb``: the FileDescriptorSet that
``python -m chinchon_referee.tools.protogen`` writes with ``--include_source_info``
beside the generated code (a test fails when it is stale). Files that are not ours
(health, reflection, the well-known types) come from the pool, as before.

Lookups go through the default pool, where the generated modules registered every file;
a request for something unknown is answered NOT_FOUND in-band, as grpcio-reflection does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from importlib import resources
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_reflection.v1alpha import reflection_pb2 as rpb

#: The two names of the reflection service: grpcurl and newer clients ask v1 first.
SERVICE_NAMES = ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")


def documented_files() -> dict[str, bytes]:
    """Our .proto files' FileDescriptorProtos with source info, serialized, by file name."""
    data = resources.files(__package__).joinpath("descriptors.binpb").read_bytes()
    files = descriptor_pb2.FileDescriptorSet.FromString(data).file
    return {f.name: f.SerializeToString() for f in files}


class ReflectionServicer:
    """``ServerReflectionInfo``: one answer per request, in order."""

    def __init__(self, services: Iterable[str], documented: dict[str, bytes] | None = None,
                 pool: descriptor_pool.DescriptorPool | None = None) -> None:
        self.services = sorted(set(services) | set(SERVICE_NAMES))
        self.documented = documented_files() if documented is None else documented
        self.pool = pool or descriptor_pool.Default()

    async def ServerReflectionInfo(
        self, requests: AsyncIterator[rpb.ServerReflectionRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[rpb.ServerReflectionResponse]:
        async for request in requests:
            yield self.answer(request)

    def answer(self, request: rpb.ServerReflectionRequest) -> rpb.ServerReflectionResponse:
        kind = request.WhichOneof("message_request")
        try:
            if kind == "list_services":
                return rpb.ServerReflectionResponse(
                    original_request=request, list_services_response=rpb.ListServiceResponse(
                        service=[rpb.ServiceResponse(name=n) for n in self.services]))
            if kind == "file_by_filename":
                return self._files(request, self.pool.FindFileByName(request.file_by_filename))
            if kind == "file_containing_symbol":
                return self._files(request, self.pool.FindFileContainingSymbol(
                    request.file_containing_symbol))
            if kind == "file_containing_extension":
                ext = request.file_containing_extension
                message = self.pool.FindMessageTypeByName(ext.containing_type)
                found = self.pool.FindExtensionByNumber(message, ext.extension_number)
                return self._files(request, self.pool.FindFileContainingSymbol(found.full_name))
            if kind == "all_extension_numbers_of_type":
                message = self.pool.FindMessageTypeByName(request.all_extension_numbers_of_type)
                numbers = sorted(e.number for e in self.pool.FindAllExtensions(message))
                return rpb.ServerReflectionResponse(
                    original_request=request,
                    all_extension_numbers_response=rpb.ExtensionNumberResponse(
                        base_type_name=message.full_name, extension_number=numbers))
        except KeyError:
            return _error(request, grpc.StatusCode.NOT_FOUND, "not found")
        return _error(request, grpc.StatusCode.INVALID_ARGUMENT, f"unknown request {kind!r}")

    def _files(self, request: rpb.ServerReflectionRequest,
               file: FileDescriptor) -> rpb.ServerReflectionResponse:
        """``file`` and every file it depends on, ours with their comments."""
        found: dict[str, FileDescriptor] = {}
        todo = [file]
        while todo:
            f = todo.pop()
            if f.name not in found:
                found[f.name] = f
                todo.extend(f.dependencies)
        return rpb.ServerReflectionResponse(
            original_request=request, file_descriptor_response=rpb.FileDescriptorResponse(
                file_descriptor_proto=[self._serialized(f) for f in found.values()]))

    def _serialized(self, file: FileDescriptor) -> bytes:
        if file.name in self.documented:
            return self.documented[file.name]
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        return proto.SerializeToString()


def _error(request: rpb.ServerReflectionRequest, code: grpc.StatusCode,
           message: str) -> rpb.ServerReflectionResponse:
    return rpb.ServerReflectionResponse(original_request=request, error_response=rpb.ErrorResponse(
        error_code=code.value[0], error_message=message))


def add_reflection(server: grpc.aio.Server, services: Sequence[str]) -> ReflectionServicer:
    """Serve reflection of ``services`` (and of itself) under both service names."""
    servicer = ReflectionServicer(services)
    handler: grpc.RpcMethodHandler[Any, Any] = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=rpb.ServerReflectionRequest.FromString,
        response_serializer=rpb.ServerReflectionResponse.SerializeToString)
    for name in SERVICE_NAMES:
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": handler}),))
    return servicer
