# syntax=docker/dockerfile:1
# A CPU Triton server for a laptop (compose.yaml), never for production: tests/support/llm_server.py
# runs the real tritonserver that the nvidia-pytriton wheel bundles and serves the LLM tensor
# contract of Triton's vLLM backend; tests/support/triton_models.py puts the test suite's
# scripted models behind it (the embedded expert backend), so the service exercises its Triton
# client end to end without a GPU or model weights.
#
#   docker build -f compose/triton.Dockerfile -t canoe-triton-cpu .
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
FROM ${PYTHON_IMAGE}
# tritonserver's Python backend stub links against libpython: the image's shared library.
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 \
    LD_LIBRARY_PATH=/usr/local/lib
WORKDIR /src
COPY pyproject.toml README.md ./
COPY proto/ proto/
COPY service/ service/
COPY fhir_mapping/ fhir_mapping/
COPY inference/ inference/
COPY client/ client/
# The server and the scripted models are test harness, not part of the package: copied beside it.
COPY tests/__init__.py /opt/canoe-testing/tests/__init__.py
COPY tests/support/ /opt/canoe-testing/tests/support/
ENV PYTHONPATH=/opt/canoe-testing
# canoe-client is a path dependency of the service: installed from client/ in the same run.
RUN pip install ./client ".[triton-server]" \
 && groupadd --system --gid 10001 triton \
 && useradd --system --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin triton
# Run the installed package, not the copied sources.
WORKDIR /home/triton
USER 10001:10001
EXPOSE 8000 8001 8002
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=5 \
  CMD ["python", "-c", "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:8000/v2/health/ready', timeout=3).status != 200)"]
ENTRYPOINT ["python", "-m", "tests.support.triton_models"]
CMD ["--host", "0.0.0.0", "--http-port", "8000", "--grpc-port", "8001", "--metrics-port", "8002"]
