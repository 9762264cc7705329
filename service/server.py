"""Server lifecycle: build the grpc.aio server, serve it, stop it gracefully.

``build_server`` wires the API, standard health checking and reflection onto a server and binds
it (port 0 in tests) without starting it. ``start_server`` starts it and keeps the health status
honest: NOT_SERVING until the model backend and the store answer ready, and again whenever they
stop answering. ``serve_forever`` is ``canoe serve``: configure logging and telemetry once,
serve gRPC, the CDS Hooks HTTP side (``http_port``; HTTPS under TLS, with ``/healthz`` and
``/livez`` for probes) and Prometheus ``/metrics`` (``metrics_port``; 0 turns it off) from one
``CarePlanService`` until
SIGTERM/SIGINT, then refuse new work (health NOT_SERVING) and give in-flight requests
``grace_period_s`` to finish.

With ``workers`` > 1 (default: every CPU this process may use) ``serve_forever`` supervises that
many worker processes, each the whole service above, all bound to the same gRPC and HTTP ports
(``SO_REUSEPORT``: the kernel spreads connections over them) and sharing the store (SQLite in
WAL mode, or PostgreSQL). Worker k serves metrics on ``metrics_port + k``. Health reflects all:
a worker is SERVING only while every worker's backend and store are ready; if one worker dies,
the supervisor stops the others and exits non-zero, so the pod is restarted whole. SIGTERM to
the supervisor stops every worker gracefully; a supervisor killed outright takes its workers
with it (parent-death signal). Every worker signs review sessions with the same key: the
configured one, or one the supervisor makes at start and hands to them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import gc
import ipaddress
import multiprocessing
import multiprocessing.connection
import os
import secrets
import signal
import socket
import sys
from collections.abc import Iterator, MutableSequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from canoe_client.v1 import careplan_pb2_grpc as pb_grpc
from service.app import CarePlanService
from service.auth import Authenticator, build_authenticator
from service.errors import CanoeError, InputError
from service.grpc_api import SERVICE_NAME, CarePlanServicer, RpcInterceptor
from service.logs import configure_logging, get_logger
from service.settings import ReviewSettings, Settings
from service.telemetry import MetricsEndpoint, Telemetry

__all__ = ["RunningServer", "build_server", "serve_forever", "start_server"]

_log = get_logger("canoe.server")
# A health name that is SERVING for as long as the process can answer: the liveness probe asks
# it, so a Triton or store outage (overall NOT_SERVING) takes pods out of rotation instead of
# having Kubernetes restart every one of them.
LIVENESS = "liveness"
SWITCH_INTERVAL_S = 0.005  # see serve_forever
GC_YOUNG_THRESHOLD = 7000  # net new objects between young collections; see _serve
_SERVING = health_pb2.HealthCheckResponse.SERVING
_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc


def _credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if not settings.tls.cert_file:
        return None
    ca = _read(settings.tls.client_ca_file) if settings.tls.client_ca_file else None
    return grpc.ssl_server_credentials(
        [(_read(settings.tls.key_file), _read(settings.tls.cert_file))],
        root_certificates=ca,
        require_client_auth=ca is not None,  # mutual TLS exactly when a client CA is configured
    )


def build_server(
    settings: Settings,
    app: CarePlanService,
    *,
    auth: Authenticator | None = None,
    telemetry: Telemetry | None = None,
    health_servicer: health.aio.HealthServicer | None = None,
) -> tuple[grpc.aio.Server, int]:
    """The server with API, health (NOT_SERVING until told otherwise) and reflection, bound to
    ``grpc_host:grpc_port`` (TLS / mTLS by settings). Returns it unstarted, with the bound port."""
    auth = auth or build_authenticator(settings, replay=app)
    server = grpc.aio.server(
        interceptors=[RpcInterceptor(app, auth, telemetry or app.telemetry)],
        options=[
            ("grpc.max_receive_message_length", settings.limits.max_message_bytes),
            (
                "grpc.max_send_message_length",
                max(settings.limits.max_message_bytes, 64 * 1024 * 1024),
            ),
            ("grpc.so_reuseport", 1),  # the workers of one `canoe serve` share the port
        ],
    )
    pb_grpc.add_CarePlanServiceServicer_to_server(CarePlanServicer(app), server)
    hs = health_servicer or health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(hs, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    address = f"{settings.server.grpc_host}:{settings.server.grpc_port}"
    creds = _credentials(settings)
    try:
        port = (
            server.add_secure_port(address, creds)
            if creds is not None
            else server.add_insecure_port(address)
        )
    except RuntimeError as exc:
        raise InputError(f"cannot bind {address}: {exc}") from exc
    return server, port


@dataclass(slots=True)
class RunningServer:
    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    app: CarePlanService
    _watch: asyncio.Task[None] | None = field(default=None, repr=False)

    async def stop(self, grace_s: float) -> None:
        """Health NOT_SERVING, refuse new RPCs, let in-flight ones finish within ``grace_s``."""
        if self._watch is not None:
            # Python 3.11's wait_for (inside app.ready) can swallow a cancellation that lands
            # just as its inner call finishes, and the watcher would loop on: cancel until done.
            while not self._watch.done():
                self._watch.cancel()
                await asyncio.wait({self._watch}, timeout=0.5)
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace_s)


async def _set_health(hs: health.aio.HealthServicer, serving: bool) -> None:
    status = _SERVING if serving else _NOT_SERVING
    for name in ("", SERVICE_NAME):
        await hs.set(name, status)


@dataclass(frozen=True, slots=True)
class _Peers:
    """This worker's place among the workers of one ``canoe serve``: ``ready[k]`` is 1 while
    worker k's backend and store answer ready (shared memory, written by k only)."""

    index: int
    ready: MutableSequence[int]

    def all_ready(self, mine: bool) -> bool:
        self.ready[self.index] = int(mine)
        return all(self.ready)


async def _watch_readiness(
    app: CarePlanService,
    hs: health.aio.HealthServicer,
    every_s: float,
    peers: _Peers | None = None,
) -> None:
    serving: bool | None = None
    while True:
        ready = await app.ready()
        if peers is not None:
            ready = peers.all_ready(ready)
        if ready != serving:
            await _set_health(hs, ready)
            _log.info("health.changed", serving=ready)
            serving = ready
        # Poll fast until first ready (start-up), then at the steady pace.
        await asyncio.sleep(every_s if ready else min(every_s, 0.2))


async def start_server(
    settings: Settings,
    app: CarePlanService,
    *,
    auth: Authenticator | None = None,
    readiness_every_s: float = 5.0,
    peers: _Peers | None = None,
) -> RunningServer:
    hs = health.aio.HealthServicer()
    server, port = build_server(settings, app, auth=auth, health_servicer=hs)
    await _set_health(hs, False)
    await hs.set(LIVENESS, _SERVING)
    await server.start()
    # Poll faster with peers: a sibling's readiness is only seen here, at the next poll.
    every_s = readiness_every_s if peers is None else min(readiness_every_s, 1.0)
    watch = asyncio.ensure_future(_watch_readiness(app, hs, every_s, peers))
    return RunningServer(server, port, hs, app, watch)


async def _serve(settings: Settings, telemetry: Telemetry, peers: _Peers | None = None) -> int:
    app = await CarePlanService.create(settings, telemetry=telemetry)
    metrics: MetricsEndpoint | None = None
    try:
        running = await start_server(settings, app, peers=peers)
        if telemetry.prometheus_registry is not None:
            offset = peers.index if peers is not None else 0
            metrics = MetricsEndpoint.start(
                telemetry.prometheus_registry,
                settings.server.grpc_host,
                settings.server.metrics_port + offset,
            )
            _log.info("metrics.started", port=metrics.port)
    except BaseException:
        if metrics is not None:
            metrics.close()
        await app.aclose()
        raise
    _log.info(
        "server.started",
        port=running.port,
        worker=peers.index if peers is not None else 0,
        tls=bool(settings.tls.cert_file),
        mtls=bool(settings.tls.client_ca_file),
        auth=settings.auth.mode,
        backend=settings.inference.backend,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    http = _HttpSide(app, settings, stop, shared_port=peers is not None)
    status = 0
    try:
        await http.start()
        # What start-up loaded (the knowledge tables, schemas, the apps) lives as long as the
        # process: frozen, the cyclic collector no longer walks it in each full collection,
        # a pause that otherwise lands on the plans in flight (the served p99).
        gc.collect()
        gc.freeze()
        # A plan makes and drops many short-lived containers: at CPython's default of 700 net
        # new objects a young collection ran about 7 times a plan and swept the plan's live
        # objects into the older generations. At 7,000 it runs well under once a plan (GC time
        # at 16 clients, one worker, load_grpc: 2.2 ms a plan -> 0.3 ms), for a few thousand
        # more young objects alive between collections.
        gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
        await stop.wait()
        _log.info("server.stopping", grace_s=settings.server.grace_period_s)
        if peers is not None:
            peers.ready[peers.index] = 0
        await asyncio.gather(running.stop(settings.server.grace_period_s), http.stop())
        status = 1 if http.failed else 0
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if metrics is not None:
            metrics.close()
        await app.aclose()
    _log.info("server.stopped", status=status)
    return status


class _HttpSide:
    """The CDS Hooks HTTP app on ``http_port``, in this process and on this event loop, over
    the same CarePlanService. It stops with the gRPC side; if it fails, the process stops."""

    def __init__(
        self, app: CarePlanService, settings: Settings, stop: asyncio.Event, *, shared_port: bool
    ) -> None:
        self.app, self.settings, self.stop_event = app, settings, stop
        # Workers share the port: each binds its own SO_REUSEPORT socket and hands it to uvicorn.
        self.sockets: list[socket.socket] | None = None
        if shared_port:
            self.sockets = [
                _reuse_port_socket(settings.server.grpc_host, settings.server.http_port)
            ]
        self.server: Any = None
        self.task: asyncio.Task[None] | None = None
        self.failed = False

    async def start(self) -> None:
        import uvicorn

        from service.cds_hooks.http import create_app, uvicorn_limits, uvicorn_tls

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield  # signals belong to serve_forever, which stops both sides together

        from service.review import build_review

        http_app = create_app(self.app, self.settings)
        http_app.router.routes.extend(build_review(self.app, self.settings))
        self.server = _Server(
            uvicorn.Config(
                http_app,
                host=self.settings.server.grpc_host,
                port=self.settings.server.http_port,
                log_config=None,
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=max(1, int(self.settings.server.grace_period_s)),
                # Slow and idle clients (slowloris) are cut off: see uvicorn_limits.
                **uvicorn_limits(self.settings),
                # HTTPS with the gRPC certificate; a client CA makes client certs optional, not
                # required, so probes without one still reach /healthz (see uvicorn_tls).
                **uvicorn_tls(self.settings),
            )
        )
        self.task = asyncio.ensure_future(self._run())
        while not self.server.started and not self.task.done():
            await asyncio.sleep(0.01)
        if self.server.started:
            ports = [s.getsockname()[1] for srv in self.server.servers for s in srv.sockets]
            _log.info("http.started", port=ports[0] if ports else self.settings.server.http_port)

    async def _run(self) -> None:
        try:
            await self.server.serve(sockets=self.sockets)
        except BaseException as exc:  # uvicorn exits via SystemExit when it cannot bind
            self.failed = True
            _log.error("http.failed", error=type(exc).__name__)
        if not self.stop_event.is_set():
            self.failed = self.failed or not self.server.should_exit
            self.stop_event.set()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self.task is not None:
            await self.task


def _reuse_port_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot bind {host}:{port}: {exc.strerror}") from exc
    return sock


def worker_count(settings: Settings) -> int:
    """``settings.server.workers``, or when 0 the CPUs this process may run on (its affinity mask,
    which is what a container's cpuset allows)."""
    return settings.server.workers or len(os.sched_getaffinity(0))


def serve_forever(settings: Settings) -> int:
    """``canoe serve``: run until SIGTERM/SIGINT; exit status 0 after a graceful stop."""
    configure_logging(settings.telemetry.log_level)
    check_exposure(settings)
    _check_store_shareable(settings, worker_count(settings))  # a setting error before any port
    check_ports_free(settings, worker_count(settings))
    # CPU-heavy work runs on a worker thread (service.app); the serving loop then waits for the
    # GIL each time it wakes (a probe, a socket, a log write), at most one switch interval.
    # CPython's 5 ms is set explicitly: 1 ms bounded the wait more tightly but cost about a
    # fifth of a worker's throughput in GIL hand-offs (load_grpc, 16 clients), and 5 ms is
    # far below any probe's timeout.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    workers = worker_count(settings)
    if workers > 1:
        return _supervise(settings, workers)
    telemetry = Telemetry.from_settings(settings, prometheus=True)
    try:
        return asyncio.run(_serve(settings, telemetry))
    finally:
        telemetry.shutdown()


def _check_store_shareable(settings: Settings, workers: int) -> None:
    if workers > 1 and settings.store.dsn.strip().lower().endswith(":memory:"):
        raise InputError(
            f"{workers} workers cannot share an in-memory store; use a SQLite file or "
            "PostgreSQL (store_dsn), or workers 1"
        )


def _supervise(settings: Settings, workers: int) -> int:
    """Start ``workers`` worker processes on the same ports, forward SIGTERM/SIGINT to them,
    and stop them all if one of them ends on its own. Exit status 0 only after a graceful stop
    of every worker."""
    _check_store_shareable(settings, workers)
    fixed = settings.server.model_copy(update=_fixed_ports(settings))
    settings = settings.model_copy(update={"server": fixed, "review": _shared_review(settings)})
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Array("b", workers, lock=False)
    procs = [
        ctx.Process(target=_worker, args=(settings, k, ready), name=f"canoe-worker-{k}")
        for k in range(workers)
    ]
    stopping = False

    def _stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for proc in procs:
            proc.start()
        _log.info("workers.started", workers=workers, pids=[p.pid for p in procs])
        while not stopping and all(p.is_alive() for p in procs):
            multiprocessing.connection.wait([p.sentinel for p in procs], timeout=0.2)
        if not stopping:
            _log.error("worker.exited", codes=[p.exitcode for p in procs])
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGTERM)
        for proc in procs:
            proc.join(settings.server.grace_period_s + 15)
            if proc.is_alive():
                proc.kill()
                proc.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    codes = [p.exitcode for p in procs]
    _log.info("workers.stopped", codes=codes)
    return 0 if stopping and all(c == 0 for c in codes) else 1


def check_exposure(settings: Settings) -> None:
    """Refuse to listen beyond loopback while gRPC callers are not authenticated, unless the
    operator said so (``allow_unauthenticated``): anyone who reaches the port could plan,
    read and contest."""
    _check_jwt_audience(settings)
    host = settings.server.grpc_host
    if settings.auth.mode != "none" or settings.server.allow_unauthenticated or _loopback(host):
        return
    raise InputError(
        f"refusing to listen on {host} with no authentication of gRPC callers (auth_mode "
        "none): set CANOE_AUTH_MODE to tokens or jwt, or listen on 127.0.0.1 "
        "(CANOE_GRPC_HOST), or accept the risk with --allow-unauthenticated "
        "(CANOE_ALLOW_UNAUTHENTICATED=1)"
    )


def _check_jwt_audience(settings: Settings) -> None:
    """In jwt mode, refuse to start without both an audience and an issuer to check, unless
    the operator accepts any (``auth_allow_any_audience``), which is logged at start-up."""
    auth = settings.auth
    missing = [name for name in ("audience", "issuer") if not getattr(auth, name)]
    if auth.mode != "jwt" or not missing:
        return
    if auth.allow_any_audience:
        _log.warning("auth.any_audience", unchecked=missing)
        return
    raise InputError(
        f"refusing to start in auth_mode jwt without auth_{' and auth_'.join(missing)}: a "
        "token minted for any service, by any issuer whose key is listed, would be accepted; "
        "set CANOE_AUTH_AUDIENCE and CANOE_AUTH_ISSUER, or accept the risk with "
        "--allow-any-audience (CANOE_AUTH_ALLOW_ANY_AUDIENCE=1)"
    )


def _loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost: it may resolve anywhere


def check_ports_free(settings: Settings, workers: int) -> None:
    """Fail fast, naming the port and its holder, when a port this service needs is already
    listened on. The workers of one ``canoe serve`` share their ports with SO_REUSEPORT; this
    probe binds without it, so an unrelated server (another ``canoe serve`` included) cannot
    silently share them and answer part of the traffic."""
    server = settings.server
    wanted = [("gRPC", server.grpc_port), ("HTTP", server.http_port)]
    if server.metrics_port:
        wanted += [("metrics", server.metrics_port + k) for k in range(workers)]
    for what, port in wanted:
        if port == 0:
            continue
        family = socket.AF_INET6 if ":" in server.grpc_host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine
            try:
                probe.bind((server.grpc_host.strip("[]"), port))
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise InputError(f"cannot bind {what} port {port}: {exc.strerror}") from exc
                raise InputError(
                    f"{what} port {port} on {server.grpc_host} is already in use by "
                    f"{port_holder(port)}; stop it or choose another port"
                ) from exc


def port_holder(port: int) -> str:
    """Who listens on TCP ``port``, from /proc (Linux; 'another process' where it cannot
    tell, e.g. a process of another user)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                cols = line.split()
                if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:  # LISTEN
                    inodes.add(cols[9])
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) in wanted for fd in (proc / "fd").iterdir()):
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
                return f"process {proc.name} ({cmd[:120]})"
    return "another process"


def _fixed_ports(settings: Settings) -> dict[str, int]:
    """Port 0 (any free port, as tests ask) must be chosen once, for all workers alike."""
    fixed = {}
    for name in ("grpc_port", "http_port"):
        if getattr(settings.server, name) == 0:
            with _reuse_port_socket(settings.server.grpc_host, 0) as sock:
                fixed[name] = sock.getsockname()[1]
    return fixed


def _shared_review(settings: Settings) -> ReviewSettings:
    """The review settings every worker gets: with no signing key configured, one made here,
    once, so a session or SMART launch begun on one worker is honoured by every other. It
    reaches the workers inside their start-up data (a pipe only they read), never the
    environment, the command line or a log."""
    if settings.review.signing_key:
        return settings.review
    return settings.review.model_copy(update={"signing_key": secrets.token_urlsafe(48)})


def _worker(settings: Settings, index: int, ready: MutableSequence[int]) -> None:
    """One worker process: the whole single-process service, told who its peers are."""
    with contextlib.suppress(OSError, AttributeError):  # Linux: die with the supervisor
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    configure_logging(settings.telemetry.log_level)
    telemetry = Telemetry.from_settings(settings, prometheus=True)
    try:
        status = asyncio.run(_serve(settings, telemetry, _Peers(index, ready)))
    except CanoeError as exc:
        _log.error("worker.failed", worker=index, error=exc.message)
        status = 2
    finally:
        telemetry.shutdown()
    sys.exit(status)
