"""Generated gRPC/protobuf code for the versioned API (``canoe.v1``), under the client's name.

The sources are ``proto/canoe/v1/*.proto``; the client distribution's build hook
(``client/protogen.py``, run by ``client/setup.py``) generates ``*_pb2.py``, ``*_pb2.pyi`` and
``*_pb2_grpc.py`` here, and nothing else writes them. The modules are git-ignored and never
edited. The service's gRPC server imports them from here too, so one process never registers
the protocol twice.
"""
