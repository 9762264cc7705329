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

__all__ = ["RETRY_PUSHBACK_KEY", "STATUS_DETAILS_KEY", "details", "error_info", "retry_after_s"]

STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"
# gRPC's server pushback (the retry design, A6): milliseconds until the call may be retried.
# A refusal for too many requests at once carries it; gRPC's own retry policy honours it.
RETRY_PUSHBACK_KEY: Final = "grpc-retry-pushback-ms"

_F = descriptor_pb2.FieldDescriptorProto


def _status_classes() -> dict[str, Any]:
    """Message classes with the fields of google.rpc.Status: code (1), message (2), details (3,
    each an Any: type_url (1), value (2)); google.rpc.ErrorInfo: reason (1), domain (2),
    metadata (3, a map of strings); and google.rpc.RetryInfo: retry_delay (1, a Duration:
    seconds (1), nanos (2))."""
    file = descriptor_pb2.FileDescriptorProto(
        name="canoe_client/rpc_status.proto", package="canoe_client.rpc", syntax="proto3"
    )
    entry = file.message_type.add(name="MetadataEntry", options={"map_entry": True})
    entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    info = file.message_type.add(name="ErrorInfo")
    info.field.add(name="reason", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    info.field.add(name="domain", number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    info.field.add(
        name="metadata",
        number=3,
        type=_F.TYPE_MESSAGE,
        type_name=".canoe_client.rpc.MetadataEntry",
        label=_F.LABEL_REPEATED,
    )
    duration = file.message_type.add(name="Duration")
    duration.field.add(name="seconds", number=1, type=_F.TYPE_INT64, label=_F.LABEL_OPTIONAL)
    duration.field.add(name="nanos", number=2, type=_F.TYPE_INT32, label=_F.LABEL_OPTIONAL)
    retry = file.message_type.add(name="RetryInfo")
    retry.field.add(
        name="retry_delay",
        number=1,
        type=_F.TYPE_MESSAGE,
        type_name=".canoe_client.rpc.Duration",
        label=_F.LABEL_OPTIONAL,
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
    return dict(message_factory.GetMessages([file], pool=descriptor_pool.DescriptorPool()))


_CLASSES: Final = _status_classes()
_Status: Final = _CLASSES["canoe_client.rpc.Status"]
_ErrorInfo: Final = _CLASSES["canoe_client.rpc.ErrorInfo"]
_RetryInfo: Final = _CLASSES["canoe_client.rpc.RetryInfo"]


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


def error_info(trailing: Iterable[Any] | None) -> dict[str, str]:
    """The metadata of the google.rpc.ErrorInfo detail, if the status carries one (the service
    states a stale contest's ``current_version`` there).

    >>> status = bytes.fromhex(  # code 9, ErrorInfo STALE_VERSION {current_version: 7}
    ...     "08091a5b0a28747970652e676f6f676c65617069732e636f6d2f676f6f676c652e727063"
    ...     "2e4572726f72496e666f122f0a0d5354414c455f56455253494f4e120863616e6f652e76"
    ...     "311a140a0f63757272656e745f76657273696f6e120137"
    ... )
    >>> error_info([("grpc-status-details-bin", status)])
    {'current_version': '7'}
    >>> error_info([])
    {}
    """
    raw = details(trailing, "google.rpc.ErrorInfo")
    if raw is None:
        return {}
    try:
        return {str(k): str(v) for k, v in _ErrorInfo.FromString(raw).metadata.items()}
    except DecodeError:
        return {}


def retry_after_s(trailing: Iterable[Any] | None) -> float | None:
    """The server's retry hint in seconds: the google.rpc.RetryInfo detail, else gRPC's retry
    pushback trailer, if the call's trailing metadata carries either.

    >>> retry_after_s([("grpc-retry-pushback-ms", "250")])
    0.25
    >>> retry_after_s([("grpc-retry-pushback-ms", "-1")]) is None  # A6: negative = do not retry
    True
    """
    raw = details(trailing, "google.rpc.RetryInfo")
    if raw is not None:
        try:
            delay = _RetryInfo.FromString(raw).retry_delay
            seconds: float = delay.seconds + delay.nanos / 1e9
            return seconds
        except DecodeError:
            pass
    for key, value in trailing or ():
        if key == RETRY_PUSHBACK_KEY and isinstance(value, str) and value.isdigit():
            return int(value) / 1000.0
    return None
