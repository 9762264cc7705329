"""Where the service may send a CDS client's FHIR bearer token: the egress policy for prefetch.

A hook call names a ``fhirServer`` and lends us a token for it; without a policy that is a
request forgery service (any URL, loopback and our own ports included, with the token). So,
deny by default, per CDS client (the trusted-clients file):

* ``fhir_servers``: the URL prefixes the client's ``fhirServer`` must sit under (scheme, host
  and port equal, path on a segment boundary). None listed: nothing is ever fetched.
* https only; plain http only to hosts named in ``fhir_http_hosts`` (the token would travel in
  clear text).
* Every address a host resolves to must be public: loopback, private, link-local, shared,
  multicast and reserved addresses are refused unless inside ``fhir_private_networks``. The
  check runs after DNS resolution, inside the connection itself (``GuardedTransport``), and the
  connection goes to the very address that was checked, so a name cannot be re-pointed between
  check and use. Redirects are followed by ``FhirClient`` only within the same origin.

``EgressRefused`` carries the reason for the logs; callers answer with a message that does not
say what the network looked like. Nothing here logs.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, urlsplit

import httpcore
import httpx

from service.errors import InputError, PrefetchUnavailable

__all__ = ["EgressPolicy", "EgressRefused", "GuardedTransport", "same_origin"]

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


class EgressRefused(PrefetchUnavailable):
    """A FHIR request the client's egress policy does not allow. ``reason`` is for the logs."""

    def __init__(self, reason: str, *, public: bool = False) -> None:
        # ``public``: the reason follows from the client's own configuration and may be told;
        # otherwise it describes the network (what a name resolves to) and is for logs only.
        super().__init__("could not read the FHIR server" + (f": {reason}" if public else ""))
        self.reason = reason


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return None


def same_origin(a: str, b: str) -> bool:
    """Same scheme, host and port."""
    pa, pb = urlsplit(a), urlsplit(b)
    return (
        pa.scheme.lower() == pb.scheme.lower()
        and (pa.hostname or "") == (pb.hostname or "")
        and _port(pa) == _port(pb)
    )


def _under(url: SplitResult, prefix: SplitResult) -> bool:
    if url.scheme.lower() != prefix.scheme.lower() or url.hostname != prefix.hostname:
        return False
    if _port(url) != _port(prefix):
        return False
    base = prefix.path.rstrip("/")
    return url.path == base or url.path.startswith(base + "/") or (not base and not url.path)


@dataclass(frozen=True, slots=True)
class EgressPolicy:
    """One CDS client's allowlists (see the module docstring)."""

    servers: tuple[str, ...] = ()
    http_hosts: frozenset[str] = frozenset()
    private_networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_config(cls, owner: str, spec: Mapping[str, object]) -> EgressPolicy:
        """From a trusted client's entry; InputError naming the client when malformed."""
        servers = _strings(spec.get("fhir_servers", ()), owner, "fhir_servers")
        hosts = _strings(spec.get("fhir_http_hosts", ()), owner, "fhir_http_hosts")
        nets: list[IPNetwork] = []
        for raw in _strings(spec.get("fhir_private_networks", ()), owner, "fhir_private_networks"):
            try:
                nets.append(ipaddress.ip_network(raw, strict=False))
            except ValueError as exc:
                raise InputError(f"trusted client {owner!r}: fhir_private_networks: {exc}") from exc
        for s in servers:
            parts = urlsplit(s)
            if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
                raise InputError(f"trusted client {owner!r}: fhir_servers holds {s!r}, not a URL")
            if parts.username or parts.password or parts.query or parts.fragment:
                raise InputError(
                    f"trusted client {owner!r}: fhir_servers entries are plain base URLs"
                )
        return cls(
            servers=tuple(servers),
            http_hosts=frozenset(h.lower() for h in hosts),
            private_networks=tuple(nets),
        )

    def check_url(self, url: str) -> None:
        """Refuse a URL this client's token may not be sent to (before any connection)."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        if not self.servers:
            raise EgressRefused("the CDS client names no fhir_servers", public=True)
        if scheme not in _DEFAULT_PORTS or not host or _port(parts) is None:
            raise EgressRefused("not an http(s) URL", public=True)
        if parts.username is not None or parts.password is not None:
            raise EgressRefused("URL carries user information", public=True)
        if scheme == "http" and host not in self.http_hosts:
            raise EgressRefused("plain http to a host not in fhir_http_hosts", public=True)
        if not any(_under(parts, urlsplit(p)) for p in self.servers):
            raise EgressRefused("URL is not under any of the client's fhir_servers", public=True)

    def check_address(self, address: IPAddress) -> None:
        ip = address
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is loopback, whatever Python 3.11 says
        if any(ip in net for net in self.private_networks):
            return
        if not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
            raise EgressRefused("host resolves to a non-public address")

    async def resolve(self, host: str, port: int) -> str:
        """The address to connect to: every address ``host`` resolves to must pass."""
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except (OSError, UnicodeError) as exc:
            raise EgressRefused(f"name resolution failed ({type(exc).__name__})") from exc
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        if not addresses:
            raise EgressRefused("name resolves to nothing")
        for a in addresses:
            self.check_address(a)
        return str(addresses[0])


def _strings(value: object, owner: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InputError(f"trusted client {owner!r}: {key!r} is a list of strings")
    items = tuple(value)
    if not all(isinstance(v, str) and v for v in items):
        raise InputError(f"trusted client {owner!r}: {key!r} is a list of strings")
    return tuple(str(v) for v in items)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses the policy allows, to the address it checked."""

    def __init__(self, policy: EgressPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        address = await self._policy.resolve(host, port)
        # TLS still verifies the certificate against the URL's host name (httpcore passes the
        # origin's host as server_hostname), not against the address.
        return await self._inner.connect_tcp(
            address,
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise EgressRefused("unix sockets are not a FHIR server")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport (pooling, TLS, HTTP/1.1), over the guarded network backend. No
    proxy from the environment: a proxy would connect to addresses we never checked."""

    def __init__(self, policy: EgressPolicy, *, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        # httpx has no public switch for the network backend; the pool it builds is replaced
        # by the same pool over ours (same settings as httpx's defaults).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=10,
            max_keepalive_connections=5,
            keepalive_expiry=5.0,
            network_backend=_GuardedBackend(policy),
        )
