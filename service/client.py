"""The Python client, kept under its old name: ``canoe_client`` (the lean ``canoe-client``
distribution, grpcio and protobuf only) is where it lives; import it from there."""

from __future__ import annotations

from canoe_client._client import AsyncCarePlanClient, CarePlanClient, ClientOptions, error_from_rpc

__all__ = ["AsyncCarePlanClient", "CarePlanClient", "ClientOptions", "error_from_rpc"]
