"""A real Triton server (pytriton's bundled tritonserver, CPU, loopback) for the integration tier.

One server per test session serves every model in ``tests.support.triton_models.DEFAULT_MODELS``
(the scripted experts and fault modes); tests that kill a server start their own. Ports are free
loopback ports chosen per session.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests.support.triton_models import ServerHandle, start_server

SLEEPY_LATENCY_S = 0.5


def _pytriton_or_skip() -> None:
    if importlib.util.find_spec("pytriton") is None:
        pytest.skip("nvidia-pytriton is not installed (dev extra): no real Triton to test against")


@pytest.fixture(scope="session")
def triton_server() -> Iterator[ServerHandle]:
    _pytriton_or_skip()
    try:
        handle = start_server(latency_s=SLEEPY_LATENCY_S, timeout_s=180)
    except RuntimeError as exc:
        pytest.skip(f"pytriton's tritonserver did not start here: {exc}")
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def own_triton_server() -> Iterator[ServerHandle]:
    """A server of the test's own, for tests that kill it."""
    _pytriton_or_skip()
    handle = start_server(
        models={"canoe-agent": "expert", "canoe-sleepy": "sleepy"},
        latency_s=1.0,
        timeout_s=180,
    )
    try:
        yield handle
    finally:
        handle.stop()
