"""The egress policy's decisions, without a network: URLs as the HTTP client sends them
(normalised, then compared segment by segment) and addresses as the socket reaches them
(embedded IPv4 included). The same cases over real connections: ``test_egress_over_http``."""

from __future__ import annotations

import ipaddress
import posixpath
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.cds_hooks.egress import EgressPolicy, EgressRefused, egress_url
from service.errors import InputError

BASE = "https://ehr.example.org/fhir"


def _policy(**spec: Any) -> EgressPolicy:
    return EgressPolicy.from_config("test-client", {"fhir_servers": [BASE], **spec})


# ------------------------------------------------------------------ URLs


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("HTTPS://EHR.Example.org:443/fhir/Patient/1", f"{BASE}/Patient/1"),
        (f"{BASE}/./Patient/../Condition?patient=1", f"{BASE}/Condition?patient=1"),
        ("https://ehr.example.org/fhir/../secret", "https://ehr.example.org/secret"),
        ("https://bücher.example/fhir", "https://xn--bcher-kva.example/fhir"),
        ("https://[2001:DB8::1]/fhir", "https://[2001:DB8::1]/fhir"),
    ],
)
def test_urls_are_normalised_as_the_client_sends_them(url: str, sent: str) -> None:
    assert str(egress_url(url)) == sent


@pytest.mark.parametrize(
    "url",
    [
        "http://0177.0.0.1/fhir",  # octal: httpx cannot parse it
        "http://2130706433/fhir",  # decimal: the resolver reads 127.0.0.1
        "http://0x7f.1/fhir",  # hexadecimal, short form
        "http://127.1/fhir",
        f"{BASE}/%2e%2e/secret",
        f"{BASE}/%2E%2E/secret",
        f"{BASE}/.%2e/secret",
        f"{BASE}/%2e/Patient",
        f"{BASE}/..%2fsecret",
        f"{BASE}/..%2Fsecret",
        f"{BASE}/Patient%2F..%2F..%2Fsecret",
        f"{BASE}/..;/secret",  # some servers read '..;' as '..'
        f"{BASE}/a%5c..%5csecret",
        f"{BASE}/a\\..\\secret",
        f"{BASE}/%252e%252e/secret",  # decoded twice by a second hop
        f"{BASE}/%ff",
        "https://user:password@ehr.example.org/fhir",
        "https://ehr.example.org:99999/fhir",
        "ftp://ehr.example.org/fhir",
        "file:///etc/passwd",
        "https:///fhir",
        "not a url",
    ],
)
def test_urls_that_cannot_be_sent_as_they_read_are_refused(url: str) -> None:
    with pytest.raises(EgressRefused) as err:
        egress_url(url)
    assert err.value.message.startswith("could not read the FHIR server: ")  # said, not hidden


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        (f"{BASE}/Patient/../Condition", True),
        ("https://EHR.example.org/fhir/Patient", True),
        ("https://ehr.example.org/fh%69r/Patient", True),  # the same segment, encoded
        ("https://ehr.example.org/fhir/../secret", False),
        ("https://ehr.example.org/fhir/Patient/../../secret/x", False),
        ("https://ehr.example.org/fhir/..", False),
        ("https://ehr.example.org/fhir/%2e%2e/secret", False),
        ("https://ehr.example.org/fhirx", False),
        ("https://ehr.example.org./fhir", False),  # another spelling is another host
        ("https://xn--ehr-example-org/fhir", False),
    ],
)
def test_the_allowlist_compares_normalised_segments(url: str, ok: bool) -> None:
    policy = _policy()
    if ok:
        sent = policy.check_url(url)
        assert sent.path.startswith("/fhir/")
    else:
        with pytest.raises(EgressRefused):
            policy.check_url(url)


def test_the_url_checked_is_the_url_returned_to_send() -> None:
    sent = _policy().check_url(f"{BASE}/Patient/x/../1")
    assert sent.raw_path == b"/fhir/Patient/1"
    assert _policy().check_url(sent) == sent


def test_ipv6_hosts_compare_by_address_not_spelling() -> None:
    policy = EgressPolicy.from_config(
        "test-client",
        {"fhir_servers": ["http://[2001:db8::1]/fhir"], "fhir_http_hosts": ["2001:DB8:0::1"]},
    )
    policy.check_url("http://[2001:DB8:0:0::1]:80/fhir/Patient/1")


@pytest.mark.parametrize(
    "entry", ["http://0177.0.0.1/fhir", "http://2130706433/fhir", f"{BASE}/%2e%2e/x", f"{BASE}#x"]
)
def test_unusable_allowlist_entries_are_refused_at_start_up(entry: str) -> None:
    with pytest.raises(InputError, match=r"test-client.*fhir_servers"):
        EgressPolicy.from_config("test-client", {"fhir_servers": [entry]})


# Path pieces an attacker would combine: plain names, dot segments in every spelling, encoded
# separators and matrix parameters.
_PIECES = st.sampled_from(
    ["fhir", "Patient", "secret", "a", ".", "..", "%2e", "%2E", "%2e%2e", ".%2e", "..;", ";",
     "%2f", "%2F", "%5c", "\\", "%25", "%252e", "x;y", ""]
)  # fmt: skip


def _as_a_lax_server_reads(raw_path: bytes) -> str:
    """The path a permissive server could end up serving: decoded until nothing changes,
    backslashes as separators, matrix parameters dropped, dot segments resolved."""
    path = raw_path.split(b"?", 1)[0].decode("ascii")
    while (decoded := unquote(path)) != path:
        path = decoded
    segments = [s.split(";", 1)[0] for s in path.replace("\\", "/").split("/")]
    return posixpath.normpath("/" + "/".join(segments).lstrip("/"))


@given(st.lists(_PIECES, max_size=8).map("/".join))
def test_an_allowed_url_stays_under_the_base_however_a_server_reads_it(tail: str) -> None:
    try:
        sent = _policy().check_url(f"{BASE}/{tail}")
    except EgressRefused:
        return
    served = _as_a_lax_server_reads(sent.raw_path)
    assert served == "/fhir" or served.startswith("/fhir/"), (tail, sent, served)


@given(st.lists(_PIECES, max_size=8).map("/".join))
def test_normalising_twice_changes_nothing(tail: str) -> None:
    try:
        once = egress_url(f"https://EHR.example.org/{tail}")
    except EgressRefused:
        return
    assert egress_url(str(once)) == once


# ------------------------------------------------------------------ addresses


def _teredo(client: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    server = int(ipaddress.IPv4Address("65.54.227.120"))
    return ipaddress.IPv6Address((0x20010000 << 96) | (server << 64) | (~int(client) & 0xFFFFFFFF))


def _embeddings(v4: ipaddress.IPv4Address) -> dict[str, ipaddress.IPv6Address]:
    n = int(v4)
    return {
        "IPv4-mapped": ipaddress.IPv6Address((0xFFFF << 32) | n),
        "IPv4-compatible": ipaddress.IPv6Address(n),
        "6to4": ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | 1),
        "Teredo": _teredo(v4),
        "NAT64": ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | n),
        "NAT64 local-use": ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b:1::")) | n),
    }


@pytest.mark.parametrize(
    "address",
    [
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "2002:a9fe:a9fe::",  # 6to4 of the cloud metadata address
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b:1::7f00:1",  # local-use NAT64 prefix
        "::127.0.0.1",  # IPv4-compatible
        "::ffff:0:7f00:1",  # IPv4-translated
        "::ffff:169.254.169.254",
    ],
)
def test_addresses_embedding_a_non_public_ipv4_are_refused(address: str) -> None:
    with pytest.raises(EgressRefused) as err:
        _policy().check_address(ipaddress.ip_address(address))
    assert err.value.message == "could not read the FHIR server"  # the reason stays in logs


@pytest.mark.parametrize("address", ["64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:8.8.8.8"])
def test_addresses_reaching_a_public_ipv4_pass(address: str) -> None:
    _policy().check_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::"])
def test_an_allowed_network_covers_its_embedded_forms(address: str) -> None:
    """The socket reaches 127.0.0.1, which this client may read from."""
    _policy(fhir_private_networks=["127.0.0.0/8"]).check_address(ipaddress.ip_address(address))


@given(st.ip_addresses(v=4).filter(lambda ip: not ip.is_global))
def test_every_embedding_of_a_non_public_ipv4_is_refused(v4: ipaddress.IPv4Address) -> None:
    for form, address in _embeddings(v4).items():
        try:
            _policy().check_address(address)
        except EgressRefused:
            continue
        pytest.fail(f"the {form} form {address} of {v4} passed")
