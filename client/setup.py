"""Build hook: generate canoe_client.v1 (gRPC/protobuf code and .pyi stubs) from proto/ at build
time, for wheels, sdists and editable installs alike. All other metadata is in pyproject.toml."""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent))

import protogen  # beside this file: a build script, not an installed module


class BuildWithProtos(build_py):
    def run(self) -> None:
        protogen.generate()
        super().run()


setup(cmdclass={"build_py": BuildWithProtos})
