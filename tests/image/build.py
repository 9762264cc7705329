"""Builds the service image with buildah on a Debian bookworm base made here, with no registry.

No container registry is reachable from CI, so the base is made with debootstrap from the same
Debian mirror apt uses on this machine (python3.11, python3-pip, python3-venv, ca-certificates)
and imported with `buildah from scratch`. Everything is kept outside the repository, under
CANOE_IMAGE_CACHE (default /var/cache/canoe-image): the base's tarball and a containers/storage
root (overlay where the kernel mounts it, else vfs), so later runs reuse the base and the
build's cached layers. The machine's CA bundle goes to the build as the secret `ca` (a
TLS-intercepting proxy sits between this machine and PyPI); it never lands in a layer.

    python3.11 -m tests.image.build   # makes the base when missing, builds, prints the timings

Needs root, buildah and debootstrap (`.ci/run` installs the last two from Debian).
"""

from __future__ import annotations

import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BASE_IMAGE",
    "BASE_PACKAGES",
    "CACHE",
    "IMAGE",
    "BuildResult",
    "Buildah",
    "build_image",
    "ca_bundle",
    "debian_mirror",
    "ensure_base",
    "missing_tools",
    "storage_driver",
]

REPO_ROOT = Path(__file__).resolve().parents[2]  # stdlib only: runs before any install
CACHE = Path(os.environ.get("CANOE_IMAGE_CACHE", "/var/cache/canoe-image"))
SUITE = "bookworm"
BASE_PACKAGES = ("python3.11", "python3-pip", "python3-venv", "ca-certificates")
BASE_TARBALL = CACHE / f"{SUITE}-python3.11.tar"
BASE_IMAGE = f"localhost/canoe-base:{SUITE}-python3.11"
IMAGE = "localhost/canoe-careplan:ci"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
STORAGE_LIMIT_BYTES = 4 * 10**9


def missing_tools() -> str:
    """Why the image cannot be built here, or "" when it can."""
    if os.geteuid() != 0:
        return "debootstrap and the vfs-backed buildah storage here need root"
    absent = [t for t in ("buildah", "debootstrap") if shutil.which(t) is None]
    if absent:
        return f"{' and '.join(absent)} not installed (Debian packages; .ci/run installs them)"
    return ""


def storage_driver() -> str:
    """overlay where the kernel mounts it here (a VM, or a container allowed to), else vfs.

    vfs works anywhere but copies the whole root file system for every build step: on a loaded
    2-core machine a build that overlay does in minutes took over ten with vfs."""
    forced = os.environ.get("CANOE_IMAGE_STORAGE_DRIVER", "")
    if forced:
        return forced
    with tempfile.TemporaryDirectory(prefix="overlay-probe-") as tmp:
        dirs = {name: Path(tmp) / name for name in ("lower", "upper", "work", "merged")}
        for d in dirs.values():
            d.mkdir()
        options = f"lowerdir={dirs['lower']},upperdir={dirs['upper']},workdir={dirs['work']}"
        mounted = subprocess.run(
            ["mount", "-t", "overlay", "overlay", "-o", options, str(dirs["merged"])],
            capture_output=True,
        )
        if mounted.returncode != 0:
            return "vfs"
        subprocess.run(["umount", str(dirs["merged"])], check=True)
        return "overlay"


@dataclass(frozen=True, slots=True)
class Buildah:
    """buildah (and podman, which shares the storage) bound to a storage root in the cache."""

    driver: str = "vfs"
    runroot: Path = Path("/run/canoe-image")

    @classmethod
    def here(cls) -> Buildah:
        return cls(storage_driver())

    @property
    def root(self) -> Path:
        return CACHE / f"storage-{self.driver}"

    def storage_args(self) -> list[str]:
        return [
            "--root",
            str(self.root),
            "--runroot",
            str(self.runroot / self.driver),
            "--storage-driver",
            self.driver,
        ]

    def run(
        self, *args: str, check: bool = True, timeout: float = 1200
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["buildah", *self.storage_args(), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"buildah {' '.join(args)} failed ({proc.returncode}):\n"
                f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return proc

    def has_image(self, name: str) -> bool:
        return self.run("inspect", "--type", "image", name, check=False).returncode == 0

    def image_size(self, name: str) -> int:
        """Bytes of the image's layers, uncompressed (what `buildah images` reports)."""
        out = self.run("images", "--format", "{{.Size}}", "--noheading", name).stdout.strip()
        return _parse_size(out)


def _parse_size(text: str) -> int:
    match = re.fullmatch(r"([\d.]+)\s*([kKMG]?B)", text)
    if not match:
        raise ValueError(f"unreadable size {text!r}")
    factor = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9}[match.group(2)]
    return int(float(match.group(1)) * factor)


def debian_mirror(sources: Sequence[Path] = ()) -> str:
    """The Debian archive apt uses here (deb822 `URIs:` or one-line `deb` entries)."""
    paths = list(sources) or [
        Path("/etc/apt/sources.list"),
        *sorted(Path("/etc/apt/sources.list.d").glob("*.sources")),
        *sorted(Path("/etc/apt/sources.list.d").glob("*.list")),
    ]
    for path in paths:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.strip()
            if line.startswith("URIs:"):
                urls = line.split()[1:]
            elif line.startswith("deb "):
                urls = re.sub(r"\[[^\]]*\]", " ", line).split()[1:2]  # past [options]
            else:
                continue
            for url in urls:
                if re.search(r"/debian/?$", url):
                    return url.rstrip("/")
    return DEFAULT_MIRROR


def _apt_proxy_env() -> dict[str, str]:
    """apt's configured HTTP(S) proxy, if any, for debootstrap's own downloads."""
    env: dict[str, str] = {}
    for scheme in ("http", "https"):
        proc = subprocess.run(
            ["apt-config", "shell", "P", f"Acquire::{scheme}::Proxy"],
            capture_output=True,
            text=True,
        )
        match = re.search(r"P='([^']+)'", proc.stdout)
        if match and match.group(1) not in ("DIRECT", "false"):
            env[f"{scheme}_proxy"] = match.group(1)
    return env


def ca_bundle() -> Path | None:
    """The CA bundle this machine's pip trusts (it holds any intercepting proxy's CA)."""
    candidates = [
        os.environ.get(v, "") for v in ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")
    ]
    candidates.append(ssl.get_default_verify_paths().openssl_cafile)
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    return None


def ensure_base(buildah: Buildah) -> float:
    """Makes the Debian base image unless the storage or the tarball already holds it.

    Returns the seconds spent (0 when cached)."""
    if buildah.has_image(BASE_IMAGE):
        return 0.0
    start = time.monotonic()
    if not BASE_TARBALL.is_file():
        _debootstrap(BASE_TARBALL)
    ctr = buildah.run("from", "scratch").stdout.strip()
    try:
        buildah.run("add", ctr, str(BASE_TARBALL), "/")
        buildah.run(
            "config",
            "--env",
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "--env",
            "LANG=C.UTF-8",
            "--cmd",
            "/bin/bash",
            ctr,
        )
        buildah.run("commit", "--rm", ctr, BASE_IMAGE)
    except BaseException:
        buildah.run("rm", ctr, check=False)
        raise
    return time.monotonic() - start


def _debootstrap(tarball: Path) -> None:
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rootfs-", dir=tarball.parent) as tmp:
        rootfs = Path(tmp) / "rootfs"
        proc = subprocess.run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(BASE_PACKAGES)}",
                SUITE,
                str(rootfs),
                debian_mirror(),
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            env={**os.environ, **_apt_proxy_env()},
        )
        if proc.returncode != 0:
            log = rootfs / "debootstrap" / "debootstrap.log"
            detail = log.read_text(errors="replace")[-4000:] if log.is_file() else proc.stderr
            raise RuntimeError(f"debootstrap failed ({proc.returncode}):\n{detail}")
        # Like Debian's slim images: no package lists, apt caches (the .deb files alone are a
        # sixth of the tree), manual pages; `apt-get update` brings the lists back if needed.
        excluded = (
            *("dev/*", "proc/*", "sys/*", "usr/share/man/*"),
            *("var/lib/apt/lists/*", "var/cache/apt/*.bin", "var/cache/apt/archives/*.deb"),
        )
        partial = tarball.with_suffix(".partial")
        subprocess.run(
            [
                "tar",
                "--numeric-owner",
                *(f"--exclude=./{pattern}" for pattern in excluded),
                "-C",
                str(rootfs),
                "-cf",
                str(partial),
                ".",
            ],
            check=True,
            timeout=600,
        )
        partial.replace(tarball)  # atomic: a killed run never leaves half a base behind


@dataclass(frozen=True, slots=True)
class BuildResult:
    image: str
    seconds: float
    size_bytes: int


def build_image(buildah: Buildah, *, layers: bool = True, tag: str = IMAGE) -> BuildResult:
    """buildah build of the repository's Dockerfile on the Debian base, CA bundle as a secret."""
    args = [
        "build",
        "--isolation",
        "chroot",
        "--network",
        "host",
        "--format",
        "docker",  # OCI images have no HEALTHCHECK
        f"--layers={str(layers).lower()}",
        "--build-arg",
        f"BASE_IMAGE={BASE_IMAGE}",
        "--tag",
        tag,
    ]
    bundle = ca_bundle()
    if bundle is not None:
        args += ["--secret", f"id=ca,src={bundle}"]
    start = time.monotonic()
    buildah.run(*args, str(REPO_ROOT))
    seconds = time.monotonic() - start
    _prune_when_over(buildah, STORAGE_LIMIT_BYTES)
    return BuildResult(tag, seconds, buildah.image_size(tag))


def _prune_when_over(buildah: Buildah, limit: int) -> None:
    """Every code change leaves the previous build's layers behind (the copied environment alone
    is about 235 MB); past the limit the dangling ones go. That also drops the dependency layer's
    cache, so the next build downloads the lock again (about a minute), once."""
    du = subprocess.run(["du", "-sb", str(buildah.root)], capture_output=True, text=True)
    used = int(du.stdout.split()[0]) if du.returncode == 0 else 0
    if used > limit:
        buildah.run("rmi", "--prune", check=False)


def main() -> int:
    reason = missing_tools()
    if reason:
        print(f"cannot build the image here: {reason}", file=sys.stderr)
        return 1
    buildah = Buildah.here()
    base_s = ensure_base(buildah)
    made = "cached" if base_s == 0 else f"made in {base_s:.0f} s"
    print(f"base {BASE_IMAGE}: {made} ({buildah.driver} storage in {buildah.root})")
    result = build_image(buildah)
    print(
        f"image {result.image}: built in {result.seconds:.0f} s, {result.size_bytes / 1e6:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
