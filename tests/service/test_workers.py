"""`canoe serve --workers 2` as real processes: both workers on one gRPC and one HTTP port (the
kernel spreads connections over them), one store, health that reflects every worker, a graceful
stop of all on SIGTERM, and all stopped (non-zero exit) when one of them dies."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import grpc
import httpx
import pytest

from service.server import _Peers, serve_forever, worker_count
from service.settings import load_settings
from tests.service.conftest import bundle_bytes, pb
from tests.service.test_lifecycle import _serving, canoe_serve, client

TWO = {"CANOE_WORKERS": "2", "CANOE_METRICS_PORT": "0"}
pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux only")


def workers_of(srv) -> list[int]:  # the supervisor's children that serve (not its helpers)
    children = Path(f"/proc/{srv.proc.pid}/task/{srv.proc.pid}/children").read_text().split()
    return [int(c) for c in children if "_worker" in _cmdline(int(c)) or _serves(int(c))]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _serves(pid: int) -> bool:
    return bool(_socket_inodes(pid)) and "resource_tracker" not in _cmdline(pid)


def _socket_inodes(pid: int) -> set[str]:
    found = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            target = os.readlink(fd)
            if target.startswith("socket:["):
                found.add(target[8:-1])
    except OSError:
        pass
    return found


def established_owners(port: int, pids: list[int]) -> list[int]:
    """Which worker holds each established connection to ``port`` (from /proc/net/tcp)."""
    inodes: dict[str, int] = {}
    for pid in pids:
        for inode in _socket_inodes(pid):
            inodes[inode] = pid
    owners = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            local_port = int(cols[1].rsplit(":", 1)[1], 16)
            if local_port == port and cols[3] == "01" and cols[9] in inodes:
                owners.append(inodes[cols[9]])
    return owners


async def started_workers(srv, n: int) -> list[int]:
    await srv.started()
    for _ in range(600):
        if sum('"server.started"' in line for line in srv.lines) >= n and srv.http_port:
            break
        await asyncio.sleep(0.1)
    ports = {
        line.split('"port": ')[1].split(",")[0] for line in srv.lines if "server.started" in line
    }
    assert len(ports) == 1, ports  # every worker on the one gRPC port
    return workers_of(srv)


async def test_two_workers_share_the_ports_and_the_store_and_stop_together(tmp_path: Path):
    async with canoe_serve(tmp_path / "canoe.sqlite3", **TWO) as srv:
        pids = await started_workers(srv, 2)
        assert len(pids) == 2
        port = await srv.started()
        await _serving(port)
        # Connections are spread over both workers by the kernel (SO_REUSEPORT). The spread is
        # the kernel's: on a loaded machine one batch can all land on one worker, so batches are
        # opened (at most eight) until each worker holds some; every connection is owned by one.
        own = [("grpc.use_local_subchannel_pool", 1)]  # one connection per channel
        channels: list[grpc.aio.Channel] = []
        try:
            for _ in range(8):
                batch = [
                    grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=own) for _ in range(16)
                ]
                channels += batch
                await asyncio.gather(*(c.channel_ready() for c in batch))
                owners = established_owners(port, pids)
                if set(owners) == set(pids):
                    break
            assert len(owners) == len(channels) and set(owners) == set(pids), owners
        finally:
            await asyncio.gather(*(c.close() for c in channels))
        # One store: a plan made through one connection is read back through another.
        async with client(port) as a, client(port) as b:
            made = await a.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
            for _ in range(4):
                got = await b.GetDeliberation(pb.GetDeliberationRequest(plan_id=made.plan_id))
                assert got.deliberation_json
        async with httpx.AsyncClient() as http:
            for _ in range(6):
                assert (
                    await http.get(f"http://127.0.0.1:{srv.http_port}/healthz")
                ).status_code == 200
        srv.proc.send_signal(signal.SIGTERM)
        assert await srv.wait(60) == 0
        assert sum('"server.stopped"' in line for line in srv.lines) == 2
        assert all(not Path(f"/proc/{pid}").exists() or _zombie(pid) for pid in pids)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


async def test_when_one_worker_dies_all_stop_and_the_exit_says_so(tmp_path: Path) -> None:
    async with canoe_serve(tmp_path / "canoe.sqlite3", **TWO) as srv:
        pids = await started_workers(srv, 2)
        await _serving(await srv.started())
        os.kill(pids[0], signal.SIGKILL)
        assert await srv.wait(60) == 1
        assert any('"worker.exited"' in line for line in srv.lines)
        assert not Path(f"/proc/{pids[1]}").exists() or _zombie(pids[1])


def test_health_is_serving_only_while_every_worker_is_ready() -> None:
    shared = [0, 0]
    first, second = _Peers(0, shared), _Peers(1, shared)
    assert not first.all_ready(True)  # the other has not said it is ready yet
    assert second.all_ready(True) and first.all_ready(True)
    assert not second.all_ready(False)  # its backend or store stopped answering
    assert not first.all_ready(True)


def test_workers_default_to_the_cpus_this_process_may_use() -> None:
    assert worker_count(load_settings({})) == len(os.sched_getaffinity(0))
    assert worker_count(load_settings({"CANOE_WORKERS": "3"})) == 3
    assert worker_count(load_settings({}, workers=1)) == 1


def test_an_in_memory_store_cannot_be_shared_by_workers() -> None:
    from service.errors import InputError

    settings = load_settings({"CANOE_STORE_DSN": "sqlite:///:memory:", "CANOE_WORKERS": "2"})
    with pytest.raises(InputError, match="in-memory store"):
        serve_forever(settings)
