# syntax=docker/dockerfile:1
# The canoe service image. Two stages on one base: the builder installs the locked dependencies and
# the project's two distributions into a virtual environment at /opt/canoe: canoe-client (client/,
# whose wheel build runs its hook, so grpcio-tools generates the protobuf/gRPC code here, in pip's
# throw-away build environment) and the service, canoe-careplan, which depends on it; the runtime
# stage gets only that environment: no compiler, no pip, no grpcio-tools, no source tree, a
# non-root user.
#
# Any base with Debian's layout and python3.11 works, because nothing relies on where a base keeps
# its pip: the official image (the default) or a Debian bookworm root file system with python3.11,
# python3-pip and python3-venv (tests/image/ builds it with debootstrap and buildah).
#
#   docker build -t canoe-careplan:0.1.0 .
#   docker build --build-arg BASE_IMAGE=localhost/bookworm-python:latest -t canoe-careplan:0.1.0 .
#   docker run --rm -p 50051:50051 -p 8080:8080 canoe-careplan:0.1.0
#
# Behind a TLS-intercepting proxy, pass a CA bundle that holds the proxy's CA (and the public ones
# the build must still trust; the build machine's own bundle usually does) as the build secret
# `ca`. It is mounted only while pip runs and never stored in a layer; without it pip uses its own.
#
#   docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t canoe-careplan:0.1.0 .
#   buildah build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t canoe-careplan:0.1.0 .

ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
# Dependencies first, from the lock file (versions and hashes), so that this layer stays cached
# while the code changes. Wheels only: the builder has no compiler and needs none.
COPY requirements.lock /src/requirements.lock
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
 && python3.11 -m venv /opt/canoe \
 && /opt/canoe/bin/pip install --require-hashes --only-binary=:all: -r /src/requirements.lock
COPY pyproject.toml README.md /src/
COPY proto/ /src/proto/
COPY service/ /src/service/
COPY fhir_mapping/ /src/fhir_mapping/
COPY inference/ /src/inference/
COPY client/ /src/client/
# The project's own wheels, the client's and the service's, without dependencies (all of them
# came from the lock, and the service's dependency on canoe-client is the client's wheel; `pip
# check` fails the build when the lock no longer satisfies pyproject.toml). Then pip and
# setuptools leave the environment, and the build fails, not the pod, when code generation or the
# console script is missing or grpcio-tools slipped into the environment.
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
 && /opt/canoe/bin/pip wheel --no-deps --wheel-dir /tmp/wheels /src/client /src \
 && /opt/canoe/bin/pip install --no-deps --no-index \
      /tmp/wheels/canoe_client-*.whl /tmp/wheels/canoe_careplan-*.whl \
 && /opt/canoe/bin/pip check \
 && /opt/canoe/bin/pip uninstall -y pip setuptools \
 && test -n "$(find /opt/canoe -path '*/canoe_client/v1/*_pb2_grpc.py' -print -quit)" \
 && test -x /opt/canoe/bin/canoe \
 && ! /opt/canoe/bin/python -c 'import grpc_tools' 2>/dev/null

FROM ${BASE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="canoe-careplan" \
      org.opencontainers.image.description="Contestable multi-agent care-plan service (FHIR R4 in, CarePlan + Provenance out)" \
      org.opencontainers.image.licenses="Apache-2.0"
# A container listens on every interface; `canoe serve` then refuses to start while gRPC callers
# are not authenticated (CANOE_AUTH_MODE none) unless CANOE_ALLOW_UNAUTHENTICATED=1 says so.
ENV PATH=/opt/canoe/bin:${PATH} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    CANOE_GRPC_HOST=0.0.0.0 \
    CANOE_GRPC_PORT=50051 \
    CANOE_HTTP_PORT=8080 \
    CANOE_METRICS_PORT=9464 \
    CANOE_STORE_DSN=sqlite:////data/canoe.sqlite3
# The base's pip is a build tool too: the image never installs anything at run time. Debian
# packages it (and refuses `pip uninstall`), the official image installs it with pip itself.
RUN if dpkg-query -W python3-pip >/dev/null 2>&1; then \
      apt-get purge -y -q python3-pip python3-setuptools python3-wheel python3-venv \
        python3.11-venv python3-pip-whl python3-setuptools-whl; \
    else \
      python3.11 -m pip uninstall -y -q pip setuptools wheel; \
    fi \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && python3.11 -c 'import importlib.util as u, pathlib, shutil; s = u.find_spec("ensurepip"); \
      s and shutil.rmtree(pathlib.Path(s.origin).parent / "_bundled", ignore_errors=True)' \
 && ! python3.11 -c 'import pip' 2>/dev/null \
 && groupadd --system --gid 10001 canoe \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin canoe \
 && mkdir -p /data \
 && chown 10001:10001 /data
COPY --from=builder /opt/canoe /opt/canoe
# The console script must start on this base (shared libraries present, imports resolve).
RUN canoe --help > /dev/null
WORKDIR /data
VOLUME ["/data"]
USER 10001:10001
EXPOSE 50051 8080 9464
# For plain docker runs; Kubernetes uses the chart's native gRPC probes instead. Plaintext only.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import os, sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; ch = grpc.insecure_channel('127.0.0.1:' + os.environ['CANOE_GRPC_PORT']); r = g.HealthStub(ch).Check(h.HealthCheckRequest(service=''), timeout=3); sys.exit(r.status != h.HealthCheckResponse.SERVING)"]
ENTRYPOINT ["canoe"]
CMD ["serve"]
