"""Where the service may send a CDS client's FHIR bearer token: the egress policy for prefetch.

A hook call names a ``fhirServer`` and lends us a token for it, or none for an open server;
without a policy that is a request forgery service (any URL, loopback and our own ports
included, with the token or without). So, deny by default, per CDS client (the trusted-clients
file), for reads with a token and without alike:

* ``fhir_servers``: the base URLs the client's ``fhirServer`` must sit under. Decisions are
  made on the URL as the HTTP client will send it (``egress_url``): parsed by httpx, scheme and
  host lower-cased, the host IDNA-encoded, the port made explicit, dot segments resolved; a
  path segment that would still mean something else to a server (``%2e%2e``, ``..;``, an
  encoded ``/`` or ``\\``, a double encoding) is refused. Scheme, host and port must be equal
  and the path must extend the base segment by segment. ``FhirClient`` sends the very URL
  object that was checked, for every request it makes (templates, ``next`` links, redirects).
  None listed: nothing is ever fetched.
* https only; plain http only to hosts named in ``fhir_http_hosts`` (the token would travel in
  clear text).
* Every address a host resolves to must be public, and so must every IPv4 address it carries
  (IPv4-mapped and NAT64 ``64:ff9b::/96`` are that IPv4 address; 6to4, Teredo and
  IPv4-compatible addresses are checked as themselves and as the IPv4 they embed): loopback,
  private, link-local, shared, multicast and reserved addresses are refused unless inside
  ``fhir_private_networks``. Hosts written as IPv4 in a non-standard form (``2130706433``,
  ``0x7f.1``, ``0177.0.0.1``) are refused outright. The check runs after DNS resolution, inside
  the connection itself (``GuardedTransport``), and the connection goes to the very address that
  was checked, so a name cannot be re-pointed between check and use.

``EgressRefused`` carries the reason for the logs; callers answer with a message that does not
say what the network looked like. Nothing here logs.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote

import httpcore
import httpx

from service.errors import InputError, PrefetchUnavailable

__all__ = [
    "EgressPolicy",
    "EgressRefused",
    "GuardedTransport",
    "egress_url",
    "same_origin",
    "under",
]

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")  # well-known prefix: the last 32 bits
_IPV4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
# Characters that, once a segment is percent-decoded, could make a server see another path
# (an encoded separator, a backslash some servers treat as one, a second round of decoding).
_UNSAFE_IN_SEGMENT: Final = frozenset("/\\%\x00")


class EgressRefused(PrefetchUnavailable):
    """A FHIR request the client's egress policy does not allow. ``reason`` is for the logs."""

    def __init__(self, reason: str, *, public: bool = False) -> None:
        # ``public``: the reason follows from the client's own configuration or from the URL the
        # caller sent and may be told; otherwise it describes the network (what a name resolves
        # to) and is for logs only.
        super().__init__("could not read the FHIR server" + (f": {reason}" if public else ""))
        self.reason = reason


def egress_url(url: str | httpx.URL) -> httpx.URL:
    """``url`` as the HTTP client will send it, or EgressRefused (public) saying why it cannot
    be sent at all: not parseable, not http(s), user information, no host, a host that is an
    IPv4 address in a non-standard form, or a path segment that is not what it seems."""
    try:
        parsed = httpx.URL(url)
        port = parsed.port
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise EgressRefused("not a usable URL", public=True) from exc
    if parsed.scheme not in _DEFAULT_PORTS or not parsed.raw_host:
        raise EgressRefused("not an http(s) URL", public=True)
    if parsed.userinfo:
        raise EgressRefused("URL carries user information", public=True)
    if _odd_ipv4(parsed.raw_host.decode("ascii")):
        raise EgressRefused("host is an IPv4 address in a non-standard form", public=True)
    if port is not None and not 0 < port < 65536:
        raise EgressRefused("not a usable URL", public=True)
    if not all(_plain_segment(s) for s in _raw_segments(parsed)):
        raise EgressRefused("URL path has an encoded or disguised segment", public=True)
    if port == _DEFAULT_PORTS[parsed.scheme]:
        parsed = parsed.copy_with(port=None)  # httpx keeps it when the scheme was upper case
    return parsed


def _plain_segment(segment: str) -> bool:
    """A segment every server reads the same way: once decoded, not a dot segment (``..;``
    included, which some servers read as ``..``) and holding nothing that separates paths."""
    try:
        decoded = unquote(segment, errors="strict")
    except UnicodeDecodeError:
        return False
    return decoded.split(";", 1)[0] not in (".", "..") and _UNSAFE_IN_SEGMENT.isdisjoint(decoded)


def _odd_ipv4(host: str) -> bool:
    """True for a host the resolver would read as IPv4 but that is not a dotted quad."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return False
    try:
        socket.inet_aton(host)
    except (OSError, UnicodeError, ValueError):
        return False
    return True


def _raw_segments(url: httpx.URL) -> list[str]:
    path = url.raw_path.split(b"?", 1)[0].decode("ascii")
    return path.split("/")[1:]


def _segments(url: httpx.URL) -> list[str]:
    """The decoded path segments, without the empty ones a trailing ``/`` leaves."""
    found = [unquote(s) for s in _raw_segments(url)]
    while found and not found[-1]:
        found.pop()
    return found


def _host_key(host: str) -> str:
    """One spelling per host: an IP literal in its compressed form (httpx keeps an IPv6
    literal as written), a name lower-cased."""
    try:
        return ipaddress.ip_address(host.strip("[]")).compressed
    except ValueError:
        return host.lower()


def _origin(url: httpx.URL) -> tuple[str, str, int]:
    host = _host_key(url.raw_host.decode("ascii"))
    return url.scheme, host, url.port or _DEFAULT_PORTS[url.scheme]


def same_origin(first: httpx.URL, second: httpx.URL) -> bool:
    """Same scheme, host and port (both URLs as ``egress_url`` returns them)."""
    return _origin(first) == _origin(second)


def under(url: httpx.URL, base: httpx.URL) -> bool:
    """``url`` is ``base`` or below it: same origin, and the base's path segments begin
    ``url``'s (both as ``egress_url`` returns them, so the comparison is on what is sent)."""
    prefix = _segments(base)
    return same_origin(url, base) and _segments(url)[: len(prefix)] == prefix


@dataclass(frozen=True, slots=True)
class EgressPolicy:
    """One CDS client's allowlists (see the module docstring)."""

    servers: tuple[str, ...] = ()
    http_hosts: frozenset[str] = frozenset()
    private_networks: tuple[IPNetwork, ...] = ()
    _bases: tuple[httpx.URL, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_bases", tuple(egress_url(s) for s in self.servers))

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
            try:
                parsed = egress_url(s)
            except EgressRefused as exc:
                raise InputError(
                    f"trusted client {owner!r}: fhir_servers holds {s!r}, not a usable URL "
                    f"({exc.reason})"
                ) from exc
            if parsed.query or parsed.fragment:
                raise InputError(
                    f"trusted client {owner!r}: fhir_servers entries are plain base URLs"
                )
        return cls(
            servers=tuple(servers),
            http_hosts=frozenset(_host(h) for h in hosts),
            private_networks=tuple(nets),
        )

    def check_url(self, url: str | httpx.URL) -> httpx.URL:
        """The URL to send (``egress_url``) when this client's token may go there; refused
        otherwise, before any connection."""
        if not self.servers:
            raise EgressRefused("the CDS client names no fhir_servers", public=True)
        parsed = egress_url(url)
        if parsed.scheme == "http" and _origin(parsed)[1] not in self.http_hosts:
            raise EgressRefused("plain http to a host not in fhir_http_hosts", public=True)
        if not any(under(parsed, base) for base in self._bases):
            raise EgressRefused("URL is not under any of the client's fhir_servers", public=True)
        return parsed

    def check_address(self, address: IPAddress) -> None:
        """Refuse an address the socket would reach that is not public, nor allowed."""
        for ip in _destinations(address):
            if any(ip in net for net in self.private_networks):
                continue
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


def _host(name: str) -> str:
    """A configured host as ``check_url`` compares it (IDNA, lower case, IP literals
    compressed)."""
    try:
        return _host_key(httpx.URL(f"http://{name}/").raw_host.decode("ascii"))
    except httpx.InvalidURL:
        return _host_key(name)


def _destinations(address: IPAddress) -> Iterator[IPAddress]:
    """What a connection to ``address`` reaches: an IPv4-mapped or NAT64 address is its IPv4
    address (the packets go there); a 6to4, Teredo or IPv4-compatible one is itself and each
    IPv4 address it embeds (a relay forwards to them)."""
    if isinstance(address, ipaddress.IPv4Address):
        yield address
        return
    if address.ipv4_mapped is not None:
        yield address.ipv4_mapped  # ::ffff:127.0.0.1 is loopback, whatever Python 3.11 says
        return
    if address in _NAT64:
        yield ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        return
    yield address
    if address.sixtofour is not None:
        yield address.sixtofour
    if address.teredo is not None:
        yield from address.teredo
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        yield ipaddress.IPv4Address(int(address))


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
