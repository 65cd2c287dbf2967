# Chime's image: one `chime` executable for every role (coordinator, worker, CLI).
#   docker build -t chime:0.1.0 .
#   docker run --rm chime:0.1.0 version
# Build stage: the Swift 6 toolchain on Debian 12, linking the Swift runtime and Foundation
# statically, so the runtime stage needs only the C libraries (libzmq, libmicrohttpd, libcurl, libcrypto) and
# the time zone database that Chime's floating reminders read.
# scripts/image.sh builds the same image without a registry: the runtime base made by
# debootstrap from Debian's own packages (RUNTIME_BASE), and the binary built on the Debian 12
# host (BINARY=prebuilt, in a build context that holds only this file and `chime`).
ARG SWIFT_VERSION=6.3
ARG RUNTIME_BASE=debian:bookworm-slim
ARG BINARY=build
FROM swift:${SWIFT_VERSION}-bookworm AS build
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libzmq3-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN swift build -c release --static-swift-stdlib --product chime \
    && install -m 0755 "$(swift build -c release --show-bin-path)/chime" /usr/local/bin/chime

FROM scratch AS prebuilt
COPY chime /usr/local/bin/chime

FROM ${BINARY} AS binary

FROM ${RUNTIME_BASE}
# libzmq5 is built with libsodium (CURVE); tzdata holds the IANA zones; ca-certificates for
# webhooks, push services and command hooks that call HTTPS services; libcurl4 and libssl3
# are loaded at the first such request. A base that has them all (scripts/image.sh's) needs
# no package index. ($packages is split into words on purpose.)
# hadolint ignore=DL3008,SC2086
RUN packages="libzmq5 libmicrohttpd12 libcurl4 libssl3 libstdc++6 tzdata ca-certificates" \
    && if ! dpkg-query -W $packages >/dev/null 2>&1; then \
        apt-get update && apt-get install -y --no-install-recommends $packages && rm -rf /var/lib/apt/lists/*; \
    fi \
    && groupadd --system --gid 10001 chime \
    && useradd --system --uid 10001 --gid chime --home-dir /var/lib/chime --shell /usr/sbin/nologin chime \
    && install -d -o chime -g chime -m 0750 /var/lib/chime
COPY --from=binary /usr/local/bin/chime /usr/local/bin/chime
# A named volume mounted here starts owned by chime (Docker copies the directory's owner).
WORKDIR /var/lib/chime
USER 10001:10001
# control, dispatch, results, events (XPUB), events ingest (XSUB), HTTP (/metrics /healthz /readyz)
EXPOSE 7700 7701 7702 7703 7704 7705
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/chime"]
CMD ["coordinator", "--store", "/var/lib/chime/store"]
