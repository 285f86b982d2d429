# hermes-emulator as a container: one static binary (CGO_ENABLED=0 — the
# SQLite driver, modernc.org/sqlite, is pure Go), no shell, non-root.
#
# UNTESTED HERE: the machine this was written on has no container engine, so
# this file has never been built. Keep it minimal.
#
#   docker build -t hermes-emulator --build-arg VERSION=1.2.3 .
#   docker run --rm -p 8827:8827 -e HERMES_EMULATOR_ADMIN_KEY=change-me hermes-emulator
#   docker run --rm -p 8827:8827 -e HERMES_EMULATOR_ADMIN_KEY=change-me -v hermes:/data hermes-emulator serve --host 0.0.0.0 --db /data/hermes.db
#
# Flags also come from HERMES_EMULATOR_* variables (e.g. HERMES_EMULATOR_ADMIN_KEY).
#
# Security (README "Security model"): the container listens on 0.0.0.0, so the
# control plane (/__admin, and the history headers of vendor requests) is
# reachable by whoever reaches the port. Set HERMES_EMULATOR_ADMIN_KEY; without
# it the process logs a WARN line at start that the control plane is open to
# the network.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.0.0-dev
# The release build (make dist → scripts/dist: static, trimmed, version stamped), for this platform only.
RUN VERSION=${VERSION} TARGETS=linux/$(go env GOARCH) DIST=/dist make dist \
    && cp /dist/hermes-emulator-linux-$(go env GOARCH) /hermes-emulator && mkdir /data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /hermes-emulator /hermes-emulator
# A writable home for --db files (the image runs as uid 65532).
COPY --from=build --chown=65532:65532 /data /data
EXPOSE 8827
# `health` exits 0 when GET http://127.0.0.1:8827/health answers 200
# (HERMES_EMULATOR_PORT changes the port it checks).
HEALTHCHECK --interval=10s --timeout=3s --start-period=2s CMD ["/hermes-emulator", "health"]
ENTRYPOINT ["/hermes-emulator"]
CMD ["serve", "--host", "0.0.0.0"]
