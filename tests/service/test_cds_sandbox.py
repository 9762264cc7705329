"""The local CDS Hooks sandbox against a real ``canoe serve``: ``canoe cds keys`` writes a key
pair and the trusted-clients file the server reads, ``canoe cds call`` signs each call (fresh
jti, aud = the URL called) and prints the cards; with no ``cds_base_url`` the service's own
URL is this machine on the configured HTTP port, so the audience matches."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jwt
import pytest

from fhir_mapping.definitions import DEFAULT_BASE
from service.cds_hooks.auth import load_trusted_clients
from service.cds_hooks.sandbox import load_client, sign_token
from service.cli import main
from tests.conftest import CDS_FIXTURES, REPO_ROOT
from tests.service.test_http_side import _free_port
from tests.service.test_lifecycle import ServerProcess

EHR_FHIR = "https://ehr.example.org/fhir"
BASE = "https://fhir.hospital.test/canoe"
REQUESTS = CDS_FIXTURES / "requests"


def test_keys_writes_a_key_pair_and_a_trusted_clients_file(tmp_path: Path, capsys: Any) -> None:
    folder = tmp_path / "sandbox"
    rc = main(["cds", "keys", str(folder), "--iss", "https://ehr.test", "--fhir-server", EHR_FHIR])
    assert rc == 0, capsys.readouterr().err
    key = folder / "client.key.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    clients = load_trusted_clients(folder / "trusted-clients.json")
    assert set(clients) == {"https://ehr.test"}
    client = clients["https://ehr.test"]
    assert client.egress.servers == (EHR_FHIR,)
    client.egress.check_url(EHR_FHIR + "/Patient/1")  # under the named server: allowed
    sandbox = load_client(folder / "client.json")
    token = sign_token(sandbox, "http://localhost:1/cds-services/x")
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "ES384" and header["kid"] == sandbox.kid
    (public,) = client.jwks["keys"]  # type: ignore[index]
    claims = jwt.decode(
        token,
        jwt.PyJWK(public).key,
        algorithms=["ES384"],
        audience="http://localhost:1/cds-services/x",
    )
    assert claims["exp"] - claims["iat"] == 60
    assert (
        claims["jti"]
        != jwt.decode(sign_token(sandbox, "a"), options={"verify_signature": False})["jti"]
    )

    # Never overwritten by accident.
    assert main(["cds", "keys", str(folder)]) == 2
    assert "--force" in capsys.readouterr().err


def _canoe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


async def test_cds_call_against_a_real_canoe_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = tmp_path / "keys"
    assert main(["cds", "keys", str(keys), "--fhir-server", EHR_FHIR]) == 0
    http_port = _free_port()
    server_env = {
        "CANOE_HTTP_PORT": str(http_port),
        "CANOE_METRICS_PORT": "0",
        "CANOE_CDS_JWKS_FILE": str(keys / "trusted-clients.json"),
        "CANOE_FHIR_BASE": BASE,
    }
    client_env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    # No CANOE_CDS_BASE_URL on either side: both derive it from the HTTP port.
    client_env.update(CANOE_HTTP_PORT=str(http_port), PYTHONPATH=str(REPO_ROOT))
    client = str(keys / "client.json")

    for name in [k for k in os.environ if k.startswith("CANOE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CANOE_HTTP_PORT", str(http_port))

    async def call(*args: str) -> subprocess.CompletedProcess[str]:
        """``canoe cds call`` in this process (the console command's code path, without a
        process start per call; the first call below is a real ``canoe`` process)."""
        argv = ["cds", "call", *args, "--client", client]
        capsys.readouterr()
        rc = await asyncio.to_thread(main, argv)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(argv, rc, out.out, out.err)

    async with _serve(tmp_path / "canoe.sqlite3", server_env) as srv:
        await srv.started()
        await _until_http(http_port)
        found = await asyncio.to_thread(
            _canoe, client_env, "cds", "call", "discovery", "--client", client
        )
        assert found.returncode == 0, found.stderr
        ids = {s["id"] for s in json.loads(found.stdout)["services"]}
        assert {"careplan-patient-view", "careplan-order-sign"} <= ids

        view = await call("patient-view", str(REQUESTS / "patient-view_trey_berge.json"))
        assert view.returncode == 0, view.stderr
        (card,) = json.loads(view.stdout)["cards"]
        assert card["indicator"] in ("info", "warning") and card["source"]["label"]

        sign = await call(
            "order-sign", str(REQUESTS / "order-sign_adan_portillo_diphenhydramine.json")
        )
        assert sign.returncode == 0, sign.stderr
        (order_card,) = json.loads(sign.stdout)["cards"]
        assert "diphenhydramine" in order_card["summary"].lower()
        systems = {r["system"] for r in order_card["overrideReasons"]}
        assert systems == {f"{BASE}/CodeSystem/cds-override-reason"}, "the configured base"
        assert DEFAULT_BASE not in sign.stdout

        # Feedback through the sandbox: an override with a reason contests the plan.
        feedback = {
            "feedback": [
                {
                    "card": order_card["uuid"],
                    "outcome": "overridden",
                    "outcomeTimestamp": "2026-11-30T12:00:00Z",
                    "overrideReason": {
                        "reason": order_card["overrideReasons"][0],
                        "userComment": "short course, monitored",
                    },
                }
            ]
        }
        fb_file = tmp_path / "feedback.json"
        fb_file.write_text(json.dumps(feedback))
        fb = await call("order-sign/feedback", str(fb_file))
        assert fb.returncode == 0, fb.stderr
        assert json.loads(fb.stdout) == {"recorded": 1, "contested": 1}

        # The audience is the service's configured URL: the same port under another name is
        # a different audience, refused with the service's OperationOutcome and exit 2.
        other = await call(
            "patient-view",
            str(REQUESTS / "patient-view_trey_berge.json"),
            "--url",
            f"http://127.0.0.1:{http_port}",
        )
        assert other.returncode == 2
        refusal = json.loads(other.stdout)
        assert refusal["resourceType"] == "OperationOutcome"
        assert "aud" in json.dumps(refusal).lower() or "audience" in json.dumps(refusal).lower()
        assert "HTTP 401" in other.stderr

    # Nothing listening: exit 69 and a one-line reason, no traceback.
    gone = await call("discovery")
    assert gone.returncode == 69 and "Traceback" not in gone.stderr
    assert "cannot reach" in gone.stderr


@contextlib.asynccontextmanager
async def _serve(db: Path, env: dict[str, str]) -> AsyncIterator[ServerProcess]:
    """``canoe serve`` as a process with exactly these settings (gRPC on a free port)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    environ.update(
        CANOE_GRPC_HOST="127.0.0.1",
        CANOE_GRPC_PORT="0",
        CANOE_STORE_DSN=f"sqlite:///{db}",
        PYTHONPATH=str(REPO_ROOT),
        **env,
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "serve",
        cwd=REPO_ROOT, env=environ,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    server = ServerProcess(proc)
    try:
        yield server
    finally:
        if proc.returncode is None:
            proc.terminate()
        await server.wait()


async def _until_http(port: int) -> None:
    import httpx

    async with httpx.AsyncClient() as http:
        for _ in range(300):
            try:
                if (await http.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError("the HTTP side never became ready")


def test_call_refuses_unknown_hooks_and_missing_keys(tmp_path: Path, capsys: Any) -> None:
    assert main(["cds", "call", "discovery", "--client", str(tmp_path / "none.json")]) == 2
    assert "canoe cds keys" in capsys.readouterr().err
    main(["cds", "keys", str(tmp_path / "k")])
    capsys.readouterr()
    args = ["--client", str(tmp_path / "k" / "client.json")]
    request = str(REQUESTS / "patient-view_trey_berge.json")
    assert main(["cds", "call", "no-such-hook", request, *args]) == 2
    assert "unknown hook" in capsys.readouterr().err
    assert main(["cds", "call", "patient-view", *args]) == 2


@pytest.mark.parametrize("port", ["8080", "9999"])
def test_cds_url_defaults_to_the_http_port(port: str) -> None:
    from service.settings import load_settings

    assert load_settings(environ={"CANOE_HTTP_PORT": port}).cds_url == f"http://localhost:{port}"
    explicit = load_settings(environ={"CANOE_CDS_BASE_URL": "https://ehr.test/canoe/"})
    assert explicit.cds_url == "https://ehr.test/canoe"
