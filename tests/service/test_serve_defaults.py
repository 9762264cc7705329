"""Safe serving defaults, with real ``canoe serve`` processes: loopback unless told otherwise, no
unauthenticated gRPC on another address unless said explicitly, and a port already listened on
(by anything, another ``canoe serve`` included) stops start-up at once, naming the port and its
holder, instead of being shared through SO_REUSEPORT."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from service.errors import InputError
from service.server import check_exposure, check_ports_free
from service.settings import load_settings
from tests.conftest import REPO_ROOT
from tests.service.test_lifecycle import canoe_serve


def _env(tmp_path: Path, **env: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    environ |= {
        "CANOE_WORKERS": "1",
        "CANOE_GRPC_PORT": "0",
        "CANOE_HTTP_PORT": "0",
        "CANOE_METRICS_PORT": "0",
        "CANOE_STORE_DSN": f"sqlite:///{tmp_path / 'plans.sqlite3'}",
        "PYTHONPATH": str(REPO_ROOT),
    }
    return environ | env


def _serve(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", "serve", *args],
        cwd=REPO_ROOT,
        env=_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_default_listen_address_is_loopback() -> None:
    assert load_settings(environ={}).server.grpc_host == "127.0.0.1"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "canoe.internal"])
def test_unauthenticated_grpc_beyond_loopback_is_refused(host: str) -> None:
    with pytest.raises(
        InputError, match=f"refusing to listen on {re.escape(host)} with no authentication"
    ):
        check_exposure(load_settings(environ={}, grpc_host=host))


@pytest.mark.parametrize(
    "overrides",
    [
        {"grpc_host": "127.0.0.1"},
        {"grpc_host": "::1"},
        {"grpc_host": "localhost"},
        {"grpc_host": "0.0.0.0", "allow_unauthenticated": True},
        {"grpc_host": "0.0.0.0", "auth_mode": "tokens", "auth_tokens_file": __file__},
    ],
)
def test_loopback_auth_or_an_explicit_flag_may_listen(overrides: dict[str, object]) -> None:
    check_exposure(load_settings(environ={}, **overrides))


def test_canoe_serve_refuses_every_interface_without_auth(tmp_path: Path) -> None:
    out = _serve(tmp_path, CANOE_GRPC_HOST="0.0.0.0")
    assert out.returncode == 2, out.stderr[-2000:]
    assert "refusing to listen on 0.0.0.0 with no authentication" in out.stderr
    assert "--allow-unauthenticated" in out.stderr


def test_a_port_held_by_another_program_stops_start_up_naming_it(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        out = _serve(tmp_path, CANOE_GRPC_PORT=str(port))
    assert out.returncode == 2, out.stderr[-2000:]
    assert f"gRPC port {port} on 127.0.0.1 is already in use by process {os.getpid()}" in (
        out.stderr
    )


async def test_a_second_canoe_serve_on_the_same_ports_fails_fast(tmp_path: Path) -> None:
    """The first server binds with SO_REUSEPORT (for its own workers); the second must not join
    it and answer part of its traffic (the baffling 401 of the CDS walk-through)."""
    async with canoe_serve(tmp_path / "first.sqlite3") as first:
        grpc_port = await first.started()
        second = _serve(tmp_path, CANOE_GRPC_PORT=str(grpc_port))
        assert second.returncode == 2, second.stderr[-2000:]
        assert f"gRPC port {grpc_port} on 127.0.0.1 is already in use by process" in second.stderr
        assert str(first.proc.pid) in second.stderr
        assert first.proc.returncode is None  # the first one is untouched


def test_free_ports_pass_the_probe() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = load_settings(environ={}, grpc_port=port, http_port=0, metrics_port=0)
    check_ports_free(settings, workers=2)


def _jwt_env(tmp_path: Path) -> dict[str, str]:
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [json.loads(RSAAlgorithm.to_jwk(key)) | {"kid": "k"}]}))
    return {"CANOE_AUTH_MODE": "jwt", "CANOE_AUTH_JWKS_FILE": str(jwks)}


@pytest.mark.parametrize("given", [{}, {"CANOE_AUTH_AUDIENCE": "canoe"}])
def test_jwt_mode_without_audience_and_issuer_refuses_to_start(
    tmp_path: Path, given: dict[str, str]
) -> None:
    out = _serve(tmp_path, **_jwt_env(tmp_path), **given)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "refusing to start in auth_mode jwt without auth_" in out.stderr
    assert ("auth_audience" in out.stderr) == ("CANOE_AUTH_AUDIENCE" not in given)
    assert "--allow-any-audience" in out.stderr


async def test_allow_any_audience_starts_and_says_so(tmp_path: Path) -> None:
    env = _jwt_env(tmp_path) | {"CANOE_AUTH_ALLOW_ANY_AUDIENCE": "1"}
    async with canoe_serve(tmp_path / "plans.sqlite3", **env) as server:
        await server.started()
        logged = [json.loads(x) for x in server.lines if x.startswith("{")]
    (warning,) = [e for e in logged if e.get("event") == "auth.any_audience"]
    assert warning["unchecked"] == ["audience", "issuer"]


def test_the_allow_any_audience_flag_sets_the_setting() -> None:
    from service.cli import _parser

    args = _parser().parse_args(["serve", "--allow-any-audience"])
    assert args.allow_any_audience is True
