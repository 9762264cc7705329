"""The image build's pure helpers, on any machine: which Debian mirror, which CA bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.image.build import DEFAULT_MIRROR, _parse_size, ca_bundle, debian_mirror


def test_mirror_from_deb822_sources_skips_the_security_archive(tmp_path: Path) -> None:
    sources = tmp_path / "debian.sources"
    sources.write_text(
        "Types: deb\nURIs: http://mirror.example.org/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example.org/debian/\nSuites: bookworm\n"
    )
    assert debian_mirror([sources]) == "http://mirror.example.org/debian"


def test_mirror_from_a_one_line_entry_with_options(tmp_path: Path) -> None:
    sources = tmp_path / "sources.list"
    sources.write_text(
        "# deb http://commented.example.org/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] "
        "http://proxy.example.org:3142/debian bookworm main\n"
    )
    assert debian_mirror([sources]) == "http://proxy.example.org:3142/debian"


def test_mirror_defaults_to_debians_own(tmp_path: Path) -> None:
    assert debian_mirror([tmp_path / "absent.list"]) == DEFAULT_MIRROR


def test_ca_bundle_follows_pips_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = tmp_path / "proxy-ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setenv("PIP_CERT", str(bundle))
    assert ca_bundle() == bundle
    monkeypatch.setenv("PIP_CERT", str(tmp_path / "missing.pem"))
    assert ca_bundle() != tmp_path / "missing.pem"


@pytest.mark.parametrize(("text", "size"), [("555 MB", 555_000_000), ("1.2 GB", 1_200_000_000)])
def test_image_sizes_as_buildah_prints_them(text: str, size: int) -> None:
    assert _parse_size(text) == size
