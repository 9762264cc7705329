"""canoe_client: the Python client of the CANOE care-plan service (``canoe.v1`` over gRPC).

    from canoe_client import CarePlanClient

    with CarePlanClient("127.0.0.1:50051", token="...", timeout_s=120) as client:
        plan = client.plan(Path("bundle.json"))

``CarePlanClient`` (blocking), ``AsyncCarePlanClient`` (``grpc.aio``) and ``ClientOptions`` are
in ``canoe_client._client``; the errors they raise in ``canoe_client.errors``; the generated
protobuf and gRPC modules in ``canoe_client.v1``. The client classes load on first use, so that
importing the error tree (as the service's core does) never loads grpc.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from canoe_client.errors import (
    AuthError,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    CanoeError,
    ForbiddenError,
    InputError,
    Issue,
    LimitError,
    NotFoundError,
    StaleVersionError,
)
from canoe_client.tasks import aim_tasks

if TYPE_CHECKING:
    from canoe_client._client import (
        AsyncCarePlanClient,
        CarePlanClient,
        ClientOptions,
        RetryPolicy,
        error_from_rpc,
    )

__all__ = [
    "AsyncCarePlanClient",
    "AuthError",
    "BackendError",
    "BackendTimeout",
    "BackendUnavailable",
    "CanoeError",
    "CarePlanClient",
    "ClientOptions",
    "ForbiddenError",
    "InputError",
    "Issue",
    "LimitError",
    "NotFoundError",
    "RetryPolicy",
    "StaleVersionError",
    "aim_tasks",
    "error_from_rpc",
]

_CLIENT_NAMES = frozenset(
    {"AsyncCarePlanClient", "CarePlanClient", "ClientOptions", "RetryPolicy", "error_from_rpc"}
)


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from canoe_client import _client

        return getattr(_client, name)
    raise AttributeError(f"module 'canoe_client' has no attribute {name!r}")
