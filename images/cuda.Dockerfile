# syntax=docker/dockerfile:1
# CUDA image: NVIDIA's CUDA runtime base with gpugate as the HEALTHCHECK.
# Build from the repository root:
#   docker build -f images/cuda.Dockerfile -t gpugate-cuda .
# Run with the NVIDIA Container Toolkit: docker run --gpus all gpugate-cuda

# Builder and runtime share Ubuntu 24.04 so the binary links against the
# library versions the runtime stage has.
FROM ubuntu:24.04 AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        build-essential pkg-config \
        libyaml-dev libjansson-dev libssl-dev libseccomp-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# `make` is the project's only build entry point; cuda.Dockerfile.dockerignore
# keeps a host build/ out of the context.
RUN make -j"$(nproc)" \
    && make install PREFIX=/usr/local DESTDIR=/out

# The runtime flavour carries libcudart; libcuda.so.1 itself is the host
# driver's and is injected by the NVIDIA Container Toolkit at run time, which
# is why gpugate loads it with dlopen and reports "loader missing" without it.
FROM nvidia/cuda:12.6.3-runtime-ubuntu24.04
# One layer, no recommends, lists removed in the same layer: the gpugate
# runtime libraries are the Ubuntu 24.04 names of the Makefile's PKGS.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libyaml-0-2 libjansson4 libssl3t64 libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

COPY --from=builder /out/usr/local/bin/gpugate /usr/local/bin/gpugate
# The built-in profiles pin the Intel stack, so this image pins its own specs,
# named after the profile whose behaviour each has: the HEALTHCHECK's and the
# CI gate's (workflows/cuda-pretest-gate.yml).
COPY images/cuda-healthcheck.yaml /etc/gpugate/healthcheck.yaml
COPY images/cuda-ci.yaml /etc/gpugate/ci.yaml

# /dev/nvidia* are created mode 0666 by the toolkit, so unlike /dev/dri no
# group membership is needed; video is kept for hosts that restrict the nodes
# (NVreg_DeviceFileGID/Mode) to that group.
ARG APP_UID=10001
RUN useradd --create-home --uid "$APP_UID" --groups video --shell /bin/bash app \
    && mkdir -p /home/app/.cache/huggingface \
    && chown -R app:app /home/app/.cache

USER app
WORKDIR /home/app
# Pinned so the cache path stays the mounted one under another uid.
ENV HF_HOME=/home/app/.cache/huggingface
# The toolkit only injects the driver libraries when asked to.
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility

# Same contract as the XPU image: milliseconds, no writes, at most 4096 bytes
# of output, ends by the spec's 8 s deadline inside Docker's 10 s timeout.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["gpugate", "check", "--spec", "/etc/gpugate/healthcheck.yaml"]
