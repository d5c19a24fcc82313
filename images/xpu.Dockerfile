# syntax=docker/dockerfile:1
# XPU image: the Intel GPU user-mode driver stack from Ubuntu's Intel graphics
# PPA, with gpugate as the HEALTHCHECK. Build from the repository root:
#   docker build -f images/xpu.Dockerfile --build-arg RENDER_GID=$(getent group render | cut -d: -f3) -t gpugate-xpu .
# images/README.md has the run line (devices, by-path, groups, HF cache).

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

# The driver stack, its own stage so that everything below it is the same
# on any base: `make test` cannot reach Ubuntu's archive or the PPA, so it
# builds the last stage on a Debian 12 stand-in for this one (buildah
# --build-context stack=docker-image://...; images/README.md).
FROM ubuntu:24.04 AS stack
# One layer for the whole driver stack: every package comes from the same PPA
# snapshot (a half-upgraded compute runtime is the failure gpugate looks for),
# --no-install-recommends keeps out the desktop and firmware recommends, and
# the apt lists are removed in the same layer or they would stay in the image.
# software-properties-common is only needed to add the PPA, so it goes again.
# The gpugate runtime libraries (yaml, jansson, libssl; libcurl and libarchive
# for gpugate-provision, libmicrohttpd for gpugate-serve) are the Ubuntu 24.04 names of the Makefile's PKGS and
# PROV_PKGS (the seccomp filter is compiled in: no libseccomp at run time);
# tests/container/test_image_build.py checks them against what the built
# executables link.
RUN apt-get update \
    && apt-get install -y --no-install-recommends software-properties-common gpg-agent ca-certificates \
    && add-apt-repository -y ppa:kobuk-team/intel-graphics \
    && apt-get update \
    && apt-get install -y --no-install-recommends \
        libze-intel-gpu1 libze1 intel-metrics-discovery intel-opencl-icd clinfo intel-gsc \
        intel-media-va-driver-non-free libmfx-gen1 libvpl2 libvpl-tools libva-glx2 va-driver-all vainfo \
        libze-dev intel-ocloc \
        libyaml-0-2 libjansson4 libssl3t64 libcurl4t64 libarchive13t64 libmicrohttpd12t64 \
    && apt-get purge -y --auto-remove software-properties-common gpg-agent \
    && rm -rf /var/lib/apt/lists/*

FROM stack
COPY --from=builder /out/usr/local/bin/gpugate /usr/local/bin/gpugate
COPY --from=builder /out/usr/local/libexec/gpugate/gpugate-provision /usr/local/libexec/gpugate/gpugate-provision
COPY --from=builder /out/usr/local/libexec/gpugate/gpugate-serve /usr/local/libexec/gpugate/gpugate-serve
# The spec this image pins: its exact driver stack, for `gpugate check --spec`
# by operators and CI jobs that run inside the image.
COPY images/gpugate.yaml /etc/gpugate/gpugate.yaml

# Render nodes keep the host's numeric GID inside the container, and that GID
# differs between hosts (992, 993, 109...). Naming it `render` here lets the
# non-root user open /dev/dri/renderD* without running as root; pass the host's
# value at build time, or use `docker run --group-add <gid>` with any image.
# Declared after the driver layer so changing it does not rebuild that layer.
# setpriv: .github/workflows/pretest-gate.yml runs the checks and the tests
# as app with it (util-linux; the base has it, checked here).
# APP_UID: the uid of the non-root user `app`. Build with your own
# (--build-arg APP_UID="$(id -u)") and the Hugging Face cache you mount from
# your home is writable in the container as it is on the host; a user the
# base already has at that uid (Ubuntu 24.04's `ubuntu` is 1000) gives way.
ARG RENDER_GID=993
ARG APP_UID=10001
RUN test "$APP_UID" != 0 || { echo "APP_UID must not be 0: the image's user is not root" >&2; exit 1; } \
    && if taken=$(getent passwd "$APP_UID" | cut -d: -f1) && [ -n "$taken" ]; then userdel "$taken"; fi \
    && if getent group render >/dev/null; then groupmod --gid "$RENDER_GID" render; \
    else groupadd --system --gid "$RENDER_GID" render; fi \
    && useradd --create-home --uid "$APP_UID" --groups render,video --shell /bin/bash app \
    && mkdir -p /home/app/.cache/huggingface \
    && chown -R app:app /home/app/.cache \
    && { command -v setpriv >/dev/null || { echo "setpriv (util-linux) is missing: the pre-test gate runs the checks as app with it" >&2; exit 1; }; }

# The workload never needs root; card nodes are group video, render nodes
# group render, and the user is in both.
USER app
WORKDIR /home/app
# Pinned so the cache path stays the mounted one even when Kubernetes runs the
# container under another uid whose HOME is not /home/app.
ENV HF_HOME=/home/app/.cache/huggingface

# Every 30 s Docker runs this; the healthcheck profile answers in
# milliseconds, writes only its state cache (the last GPU probe), stays under
# the 4096 bytes Docker keeps and ends by its own 8 s deadline, inside the
# 10 s timeout. The start period
# covers the first driver initialisation of a cold container.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["gpugate", "check", "--profile", "healthcheck"]
