"""Read the rich error status a refused call carries, without grpcio-status.

The server puts a ``google.rpc.Status`` in the trailing ``grpc-status-details-bin`` metadata; its
details are ``google.protobuf.Any`` messages, one of them a ``canoe.v1.OperationOutcomeDetail``.
Decoding it needs only the wire layout of those two messages, declared here in a private
descriptor pool: the client depends on grpcio and protobuf alone, and registers nothing in the
default pool that googleapis-common-protos (in the server's environment) also registers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

__all__ = ["RETRY_PUSHBACK_KEY", "STATUS_DETAILS_KEY", "details", "retry_after_s"]

STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"
# gRPC's server pushback (the retry design, A6): milliseconds until the call may be retried.
# A refusal for too many requests at once carries it; gRPC's own retry policy honours it.
RETRY_PUSHBACK_KEY: Final = "grpc-retry-pushback-ms"

_F = descriptor_pb2.FieldDescriptorProto


def _status_class() -> Any:
    """A message class with google.rpc.Status's fields: code (1), message (2), details (3, each
    an Any: type_url (1), value (2))."""
    file = descriptor_pb2.FileDescriptorProto(
        name="canoe_client/rpc_status.proto", package="canoe_client.rpc", syntax="proto3"
    )
    detail = file.message_type.add(name="Detail")
    detail.field.add(name="type_url", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    detail.field.add(name="value", number=2, type=_F.TYPE_BYTES, label=_F.LABEL_OPTIONAL)
    status = file.message_type.add(name="Status")
    status.field.add(name="code", number=1, type=_F.TYPE_INT32, label=_F.LABEL_OPTIONAL)
    status.field.add(name="message", number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    status.field.add(
        name="details",
        number=3,
        type=_F.TYPE_MESSAGE,
        type_name=".canoe_client.rpc.Detail",
        label=_F.LABEL_REPEATED,
    )
    classes = message_factory.GetMessages([file], pool=descriptor_pool.DescriptorPool())
    return classes["canoe_client.rpc.Status"]


_Status: Final = _status_class()


def details(trailing: Iterable[Any] | None, type_name: str) -> bytes | None:
    """The serialised detail of full name ``type_name`` in a call's trailing metadata (its
    ``(key, value)`` pairs, as grpc and grpc.aio give them), if any.

    >>> details([("grpc-status-details-bin", bytes.fromhex("1a0b0a05782f612e4212027801"))], "a.B")
    b'x\\x01'
    >>> details([], "a.B") is None
    True
    """
    for key, value in trailing or ():
        if key != STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        try:
            status = _Status.FromString(value)
        except DecodeError:  # a malformed trailer carries no detail
            return None
        for detail in status.details:
            if str(detail.type_url).rsplit("/", 1)[-1] == type_name:
                return bytes(detail.value)
    return None


def retry_after_s(trailing: Iterable[Any] | None) -> float | None:
    """The server's retry pushback in seconds, if a call's trailing metadata carries one.

    >>> retry_after_s([("grpc-retry-pushback-ms", "250")])
    0.25
    >>> retry_after_s([("grpc-retry-pushback-ms", "-1")]) is None  # A6: negative = do not retry
    True
    """
    for key, value in trailing or ():
        if key == RETRY_PUSHBACK_KEY and isinstance(value, str) and value.isdigit():
            return int(value) / 1000.0
    return None
