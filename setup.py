"""Build hook: generate the gRPC/protobuf Python code (and .pyi stubs) from proto/ at build time.

Runs for `pip install .`, wheels and editable installs alike, writing into service/api/ so that
the source tree and the installed package see the same modules. Generated files are
git-ignored and never edited by hand. All other metadata lives in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


PROTO_ROOT = ROOT / "proto"
OUT_ROOT = ROOT / "service" / "api"
OUT_PACKAGE = "service.api"


def generate_protos() -> None:
    """proto/canoe/v1/x.proto -> service/api/canoe/v1/x_pb2.py, x_pb2.pyi, x_pb2_grpc.py.

    protoc names Python modules after the proto path (``canoe.v1``); the generated gRPC module's
    import of its message module is rewritten to the project-owned package, so nothing installs a
    top-level ``canoe`` or ``proto`` package (the latter is proto-plus's import name).
    """
    from grpc_tools import protoc

    try:
        import importlib.resources as resources

        include = str(resources.files("grpc_tools") / "_proto")
    except Exception:  # pragma: no cover - very old grpc_tools layouts
        import grpc_tools

        include = str(Path(grpc_tools.__file__).parent / "_proto")
    for proto in sorted(PROTO_ROOT.rglob("*.proto")):
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{include}",
            f"--python_out={OUT_ROOT}",
            f"--pyi_out={OUT_ROOT}",
            f"--grpc_python_out={OUT_ROOT}",
            str(proto),
        ]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed for {proto}")
        package = ".".join(proto.relative_to(PROTO_ROOT).parent.parts)
        grpc_module = OUT_ROOT.joinpath(*proto.relative_to(PROTO_ROOT).parts[:-1]) / (
            proto.stem + "_pb2_grpc.py"
        )
        text = grpc_module.read_text()
        fixed = text.replace(f"from {package} import ", f"from {OUT_PACKAGE}.{package} import ")
        if fixed != text:
            grpc_module.write_text(fixed)


class BuildWithProtos(build_py):
    def run(self) -> None:
        generate_protos()
        super().run()


setup(cmdclass={"build_py": BuildWithProtos})
