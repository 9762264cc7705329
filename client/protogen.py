"""Generate the canoe.v1 gRPC/protobuf Python code (and .pyi stubs) into ``canoe_client.v1``.

The one code generator of the repository, called by the client's build hook
(``client/setup.py``): only canoe-client ships ``canoe_client``, and the service depends on it
for these modules. Generated files are git-ignored and never edited by hand.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE / "proto"  # a link to the repository's proto/, so the sdist carries the sources
OUT_DIR = HERE / "src" / "canoe_client" / "v1"
OUT_PACKAGE = "canoe_client.v1"


def generate(proto_root: Path = PROTO_ROOT, out_dir: Path = OUT_DIR) -> None:
    """proto/canoe/v1/x.proto -> canoe_client/v1/x_pb2.py, x_pb2.pyi, x_pb2_grpc.py.

    protoc names Python modules after the proto path (``canoe.v1``); the files are moved into the
    client's own package and the gRPC module's import of its message module is rewritten to it,
    so nothing installs a top-level ``canoe`` or ``proto`` package (the latter is proto-plus's
    import name). The descriptor keeps the wire names (``canoe/v1/careplan.proto``).
    """
    from grpc_tools import protoc

    include = _grpc_tools_include()
    protos = sorted(proto_root.rglob("*.proto"))
    if not protos:
        raise RuntimeError(f"no .proto sources under {proto_root}")
    with tempfile.TemporaryDirectory() as tmp:
        for proto in protos:
            args = [
                "grpc_tools.protoc",
                f"-I{proto_root}",
                f"-I{include}",
                f"--python_out={tmp}",
                f"--pyi_out={tmp}",
                f"--grpc_python_out={tmp}",
                str(proto),
            ]
            if protoc.main(args) != 0:
                raise RuntimeError(f"protoc failed for {proto}")
        for proto in protos:
            relative = proto.relative_to(proto_root)
            package = ".".join(relative.parent.parts)
            for generated in (Path(tmp) / relative.parent).glob(f"{proto.stem}_pb2*"):
                text = generated.read_text()
                fixed = text.replace(f"from {package} import ", f"from {OUT_PACKAGE} import ")
                target = out_dir / generated.name
                if not target.exists() or target.read_text() != fixed:
                    out_dir.mkdir(parents=True, exist_ok=True)
                    target.write_text(fixed)


def _grpc_tools_include() -> str:
    """The well-known .proto files grpc_tools ships (google/protobuf/*.proto)."""
    import importlib.resources

    return str(importlib.resources.files("grpc_tools") / "_proto")


def main() -> None:  # pragma: no cover - a manual rebuild: python client/protogen.py
    generate()
    print(f"generated into {OUT_DIR}")


if __name__ == "__main__":
    main()
