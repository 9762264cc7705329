"""Generated gRPC/protobuf code for the versioned API (``canoe.v1``), under a project-owned name.

The sources are ``proto/canoe/v1/*.proto``; ``setup.py`` generates ``canoe/v1/*_pb2*.py`` here at
build time (pip install, editable installs included) and nothing else writes them. The modules
are git-ignored and never edited. Only the transports (gRPC server, client) import them.
"""
