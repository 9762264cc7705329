# syntax=docker/dockerfile:1
# The canoe service image. Two stages: the builder turns the repository into wheels (the build runs
# grpcio-tools, so the protobuf/gRPC code is generated here, never committed), the runtime stage
# gets only the installed files: no compiler, no pip, no source tree, a non-root user.
#
#   docker build -t canoe-careplan:0.1.0 .
#   docker run --rm -p 50051:50051 -p 8080:8080 canoe-careplan:0.1.0

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
# A C toolchain only for dependencies that might lack a wheel on the target platform; it stays here.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc g++ \
 && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
# Metadata and the build hook first, so dependency wheels stay cached while the code changes.
COPY pyproject.toml setup.py README.md ./
COPY proto/ proto/
COPY service/ service/
COPY fhir_mapping/ fhir_mapping/
COPY inference/ inference/
# One wheel per dependency plus the project's own; building the project's wheel runs setup.py's
# build_py hook, which generates service/api/canoe/v1/*_pb2*.py with grpcio-tools.
RUN pip wheel --wheel-dir /wheels . \
 && pip install --no-index --find-links /wheels --prefix /install canoe-careplan
# Fail the build, not the pod, when code generation or the console script went missing.
RUN test -n "$(find /install -path '*/service/api/canoe/v1/*_pb2_grpc.py' -print -quit)" \
 && test -x /install/bin/canoe

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="canoe-careplan" \
      org.opencontainers.image.description="Contestable multi-agent care-plan service (FHIR R4 in, CarePlan + Provenance out)" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    CANOE_GRPC_PORT=50051 \
    CANOE_HTTP_PORT=8080 \
    CANOE_METRICS_PORT=9464 \
    CANOE_STORE_DSN=sqlite:////data/canoe.sqlite3
# pip and setuptools are build tools too: the image never installs anything at run time.
RUN python -m pip uninstall -y pip setuptools wheel \
 && groupadd --system --gid 10001 canoe \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin canoe \
 && mkdir -p /data \
 && chown 10001:10001 /data
COPY --from=builder /install /usr/local
# The console script must start in the slim image (shared libraries present, imports resolve).
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
