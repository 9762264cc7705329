"""Build hook: generate the gRPC/protobuf Python code (and .pyi stubs) from proto/ at build time.

Runs for `pip install .`, wheels and editable installs alike, writing next to the .proto files so
that the source tree and the installed package see the same modules. Generated files are
git-ignored and never edited by hand. All other metadata lives in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def generate_protos() -> None:
    from grpc_tools import protoc

    try:
        import importlib.resources as resources

        include = str(resources.files("grpc_tools") / "_proto")
    except Exception:  # pragma: no cover - very old grpc_tools layouts
        import grpc_tools

        include = str(Path(grpc_tools.__file__).parent / "_proto")
    protos = sorted(str(p) for p in (ROOT / "proto").rglob("*.proto"))
    for proto in protos:
        args = [
            "grpc_tools.protoc",
            f"-I{ROOT}",
            f"-I{include}",
            f"--python_out={ROOT}",
            f"--pyi_out={ROOT}",
            f"--grpc_python_out={ROOT}",
            proto,
        ]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed for {proto}")


class BuildWithProtos(build_py):
    def run(self) -> None:
        generate_protos()
        super().run()


setup(cmdclass={"build_py": BuildWithProtos})
