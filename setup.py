"""Build hook: generate the gRPC/protobuf Python code (and .pyi stubs) from proto/ at build time.

Runs for `pip install .`, wheels and editable installs alike. The code belongs to the client
package, ``canoe_client.v1`` (``client/src``), which this distribution ships too: the service's
gRPC server and the lean ``canoe-client`` distribution use the same generated modules, written
by the same generator (``client/protogen.py``). Generated files are git-ignored and never edited
by hand. All other metadata lives in pyproject.toml.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "client"))

import protogen  # noqa: E402  (client/protogen.py: a build script, not an installed module)


class BuildWithProtos(build_py):
    def run(self) -> None:
        protogen.generate(ROOT / "proto", ROOT / "client" / "src" / "canoe_client" / "v1")
        super().run()


setup(cmdclass={"build_py": BuildWithProtos})
