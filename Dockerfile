# encoder-server: a CPU inference service for Transformer encoders (embeddings over gRPC and HTTP).
#
#   docker build -t encoder-server .
#   docker run --rm -p 50051:50051 -p 8080:8080 -p 8081:8081 --cpus 2 -e ENCODER_THREADS=2 \
#     -v "$PWD/my-model:/models/model:ro" --stop-timeout 30 encoder-server
#
# The model directory (config.json, *.safetensors, vocab.txt or
# tokenizer.json) is mounted at /models/model (ENCODER_MODEL). Every server
# flag --foo-bar can be set with ENCODER_FOO_BAR, or passed after the image
# name (the command line wins). Podman without a Docker engine:
#   podman build --isolation=chroot --pull=never --format docker -t encoder-server .
# (--format docker keeps the HEALTHCHECK, which the OCI image format cannot hold).

# ---- build: compiles only the server and the client --------------------------
FROM docker.io/library/debian:bookworm AS build

# The -dev packages of scripts/packages.txt. googletest and benchmark are not
# built here, but the top-level CMakeLists.txt finds them at configure time.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ cmake make pkg-config binutils ccache \
      libdnnl-dev ocl-icd-opencl-dev libabsl-dev nlohmann-json3-dev libicu-dev libzip-dev \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      prometheus-cpp-dev libcivetweb-dev libboost1.74-dev libgtest-dev libgmock-dev libbenchmark-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Sources only (see .dockerignore): a change to docs or deploy files keeps the
# compiled layer cached.
COPY CMakeLists.txt ./
COPY proto proto
COPY common common
COPY engine engine
COPY server server
COPY client client
COPY tests tests
COPY bench bench
# ccache (which CMake picks up) keeps its cache in a build-cache mount that
# outlives the build and is in no layer (BuildKit and buildah/podman both
# support it): after a source change, only the changed batches recompile. A
# unity build (ENCODER_UNITY: each target's sources compiled in batches) takes
# far less CPU time than one object per source (docs/testing.md).
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake -S /src -B /build -DCMAKE_BUILD_TYPE=Release -DENCODER_UNITY=ON >/dev/null \
 && cmake --build /build --target encoder-server encoder-client -j"$(nproc)" \
 && mkdir -p /out \
 && install -m 0755 -s /build/server/app/encoder-server /build/client/encoder-client /out/

# ---- runtime: bookworm-slim with only the shared libraries the binaries use ---
FROM docker.io/library/debian:bookworm-slim

# oneDNN (+ its OpenCL loader and libgomp), gRPC (+ c-ares, re2, OpenSSL),
# protobuf, Abseil, ICU, and prometheus-cpp for the metrics endpoint.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libdnnl2 libgomp1 libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libicu72 libzip4 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libcivetweb1 \
 && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log \
 && groupadd --system --gid 10001 encoder \
 && useradd --system --uid 10001 --gid encoder --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin encoder \
 && mkdir -p /models

COPY --from=build /out/encoder-server /out/encoder-client /usr/local/bin/

# Flags through the environment (ENCODER_<FLAG>). ENCODER_THREADS=0 means every
# core the process sees: set it to the CPU limit (Kubernetes does, through the
# downward API). The server stops within ENCODER_SHUTDOWN_GRACE (+5 s) of
# SIGTERM; give `docker stop` more than that (--stop-timeout 30).
ENV ENCODER_MODEL=/models/model \
    ENCODER_HOST=0.0.0.0 \
    ENCODER_HTTP_PORT=8080 \
    ENCODER_THREADS=0 \
    ENCODER_SHUTDOWN_GRACE=20s

# gRPC (encoder.v1.Encoder, grpc.health.v1.Health, reflection), Prometheus
# metrics, and the HTTP API (OpenAI /v1/embeddings, TEI routes; ENCODER_HTTP_PORT=0 turns it off).
EXPOSE 50051/tcp 8081/tcp 8080/tcp

USER 10001:10001

# The ports follow ENCODER_PORT and ENCODER_HTTP_PORT (the server's defaults
# when unset); model load runs before the server listens, hence the start
# period. gRPC health, then (unless the HTTP API is off) GET /health on the
# HTTP port, with bash's /dev/tcp (the image has no curl).
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD encoder-client health --target "127.0.0.1:${ENCODER_PORT:-50051}" --timeout 4s \
  && { [ "${ENCODER_HTTP_PORT:-8080}" = 0 ] || bash -c 'exec 3<>"/dev/tcp/127.0.0.1/${ENCODER_HTTP_PORT:-8080}" \
  && printf "GET /health HTTP/1.0\r\n\r\n" >&3 && head -n 1 <&3 | grep -q " 200 "'; } || exit 1

STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/encoder-server"]
CMD []

# Last, so that a new version or date rebuilds none of the layers above.
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="encoder-server" \
      org.opencontainers.image.description="CPU inference service for Transformer encoders: embeddings over gRPC and HTTP (OpenAI, TEI), oneDNN" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim" \
      org.opencontainers.image.documentation="README.md: Run with Docker, Deploy on Kubernetes; docs/deploy.md"
