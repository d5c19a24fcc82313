# syntax=docker/dockerfile:1
# CUDA image: NVIDIA's CUDA runtime base with gpugate as the HEALTHCHECK.
# Build from the repository root:
#   docker build -f images/cuda.Dockerfile -t gpugate-cuda .
# Run with the NVIDIA Container Toolkit: docker run --gpus all gpugate-cuda

# The builder is Debian 12, the platform gpugate's CI builds and tests on
# (.ci/install-deps lists the same build packages). Its executables need
# glibc >= 2.34 and the library sonames the stack stage installs; Ubuntu
# 24.04 has both. Every package `make` needs: the C toolchain and pkg-config,
# the -dev packages of the Makefile's PKGS and PROV_PKGS (libyaml, jansson,
# OpenSSL, libcurl, libarchive), libseccomp (the sandbox filter is built at
# build time), the Level Zero headers (libze-dev), clang + llvm-spirv-14 +
# spirv-tools for the SPIR-V smoke kernel, python3 for the baselines check.
# `make test` builds this stage with buildah (tests/container/test_image_build.py).
FROM debian:12 AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        build-essential pkg-config python3 \
        libyaml-dev libjansson-dev libssl-dev libseccomp-dev \
        libcurl4-openssl-dev libarchive-dev libmicrohttpd-dev libze-dev \
        clang llvm-spirv-14 spirv-tools \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# `make` is the project's only build entry point (the .dockerignore beside
# this file keeps a host build/ out of the context); DESTDIR keeps the install
# in one folder that the runtime stage copies from: gpugate in bin, and
# gpugate-provision (hf fetch, stack, bundle) and gpugate-serve (serve) in
# libexec/gpugate, where gpugate looks for them.
RUN make -j"$(nproc)" \
    && make install PREFIX=/usr/local DESTDIR=/out

# The runtime flavour carries libcudart; libcuda.so.1 itself is the host
# driver's and is injected by the NVIDIA Container Toolkit at run time, which
# is why gpugate loads it with dlopen and reports "loader missing" without it.
#
# The stack stage is its own so that everything below it is the same on any
# base: `make test` cannot pull NVIDIA's image, so it builds the last stage on
# a Debian 12 stand-in for this one (buildah --build-context
# stack=docker-image://...; images/README.md).
FROM nvidia/cuda:12.6.3-runtime-ubuntu24.04 AS stack
# One layer, no recommends, lists removed in the same layer: the gpugate
# runtime libraries are the Ubuntu 24.04 names of the Makefile's PKGS and
# PROV_PKGS (libcurl and libarchive: gpugate-provision; libmicrohttpd: gpugate-serve; the seccomp filter is
# compiled in, so no libseccomp); tests/container/test_image_build.py checks
# them against what the built executables link. ca-certificates:
# gpugate-provision's HTTPS.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libyaml-0-2 libjansson4 libssl3t64 libcurl4t64 libarchive13t64 libmicrohttpd12t64 \
        ca-certificates \
    && rm -rf /var/lib/apt/lists/*

FROM stack

COPY --from=builder /out/usr/local/bin/gpugate /usr/local/bin/gpugate
COPY --from=builder /out/usr/local/libexec/gpugate/gpugate-provision /usr/local/libexec/gpugate/gpugate-provision
COPY --from=builder /out/usr/local/libexec/gpugate/gpugate-serve /usr/local/libexec/gpugate/gpugate-serve
# The image's own specs extend the built-in profiles (devices, runtime, hf,
# system) with the CUDA packages of this base and the NVIDIA vendor, named
# after the profile each extends: the HEALTHCHECK's and the CI gate's
# (.github/workflows/cuda-pretest-gate.yml).
COPY images/cuda-healthcheck.yaml /etc/gpugate/healthcheck.yaml
COPY images/cuda-ci.yaml /etc/gpugate/ci.yaml

# /dev/nvidia* are created mode 0666 by the toolkit, so unlike /dev/dri no
# group membership is needed; video is kept for hosts that restrict the nodes
# (NVreg_DeviceFileGID/Mode) to that group.
# setpriv: .github/workflows/pretest-gate.yml runs the checks and the tests
# as app with it (util-linux; the base has it, checked here).
# APP_UID: the uid of the non-root user `app`; build with your own
# (--build-arg APP_UID="$(id -u)") so that the Hugging Face cache mounted from
# your home is writable (a base user at that uid gives way).
ARG APP_UID=10001
RUN test "$APP_UID" != 0 || { echo "APP_UID must not be 0: the image's user is not root" >&2; exit 1; } \
    && if taken=$(getent passwd "$APP_UID" | cut -d: -f1) && [ -n "$taken" ]; then userdel "$taken"; fi \
    && useradd --create-home --uid "$APP_UID" --groups video --shell /bin/bash app \
    && mkdir -p /home/app/.cache/huggingface \
    && chown -R app:app /home/app/.cache \
    && { command -v setpriv >/dev/null || { echo "setpriv (util-linux) is missing: the pre-test gate runs the checks as app with it" >&2; exit 1; }; }

USER app
WORKDIR /home/app
# Pinned so the cache path stays the mounted one under another uid.
ENV HF_HOME=/home/app/.cache/huggingface
# The toolkit only injects the driver libraries when asked to.
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility

# Same contract as the XPU image: milliseconds, writes only its state cache
# (the last GPU probe), at most 4096 bytes of output, ends by the spec's 8 s
# deadline inside Docker's 10 s timeout.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["gpugate", "check", "--spec", "/etc/gpugate/healthcheck.yaml"]
