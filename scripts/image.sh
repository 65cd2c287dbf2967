#!/usr/bin/env bash
# Builds Chime's image on this machine without a registry, and checks it in a compose run
# (Docs/Chime.docc/Operations/Deployment.md, "The image built here"):
#   1. the runtime base from Debian's own packages: `debootstrap --variant=minbase` of
#      bookworm with the runtime libraries (libzmq5, libmicrohttpd12, libcurl4, libssl3,
#      tzdata, ca-certificates), imported with `podman import` as localhost/chime-base:bookworm
#      (kept; --rebuild-base makes it again);
#   2. `chime` built here in release with the static Swift standard library and Foundation;
#   3. `podman build` of the repository's Dockerfile with BINARY=prebuilt and that base, as
#      chime:0.1.0;
#   4. with --check: `chime version` in a container, then deploy/compose/compose.yaml run by
#      podman-compose (a copy with its own keys and free host ports): a reminder scheduled from
#      the host fires in the containers, and after `down` and `up` the store still holds the
#      pending one.
# Usage: scripts/image.sh [--check] [--rebuild-base]
# Needs root (debootstrap, rootful podman) and Debian's podman, runc, debootstrap and
# podman-compose. Podman runs with deploy/podman/containers.conf (runc, cgroupfs, no default
# ulimits: what these machines need) unless CONTAINERS_CONF names another.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0 rebuild_base=0
for argument in "$@"; do
    case "$argument" in
        --check) check=1 ;;
        --rebuild-base) rebuild_base=1 ;;
        --help|-h) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "image.sh: unknown argument $argument (see --help)" >&2; exit 2 ;;
    esac
done
for tool in podman debootstrap; do
    command -v "$tool" >/dev/null || { echo "image.sh: $tool is not installed (apt-get install podman runc debootstrap podman-compose)" >&2; exit 1; }
done
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/deploy/podman/containers.conf}"
work=.build/image
mkdir -p "$work"
base=localhost/chime-base:bookworm

if [ "$rebuild_base" = 1 ] || ! podman image exists "$base"; then
    echo "image.sh: debootstrap bookworm (minbase + runtime libraries) into $work/rootfs"
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase \
        --include=libzmq5,libmicrohttpd12,libcurl4,libssl3,libstdc++6,tzdata,ca-certificates \
        bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log"
    rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin \
        "$work/rootfs/usr/share/doc/"* "$work/rootfs/usr/share/man/"* "$work/rootfs/usr/share/info/"*
    tar -C "$work/rootfs" -c . | podman import --change 'CMD ["/bin/sh"]' - "$base" >/dev/null
    rm -rf "$work/rootfs"
fi
echo "image.sh: base $base ($(podman image inspect --format '{{.Size}}' "$base" | awk '{printf "%.0f MB", $1 / 1e6}'))"

echo "image.sh: swift build -c release --static-swift-stdlib --product chime"
swift build -c release --static-swift-stdlib --product chime
rm -rf "$work/context" && mkdir -p "$work/context"
install -m 0755 "$(swift build -c release --show-bin-path)/chime" "$work/context/chime"
cp Dockerfile "$work/context/Dockerfile"
podman build --quiet --build-arg BINARY=prebuilt --build-arg RUNTIME_BASE="$base" -t chime:0.1.0 "$work/context" >/dev/null
echo "image.sh: built chime:0.1.0 ($(podman image inspect --format '{{.Size}}' chime:0.1.0 | awk '{printf "%.0f MB", $1 / 1e6}'))"
[ "$check" = 1 ] || exit 0

echo "image.sh: check: chime version in a container"
podman run --rm chime:0.1.0 version

chime="$work/context/chime"
scratch="$(mktemp -d)"
project="chime-image-check-$$"
compose() { podman-compose -p "$project" -f "$scratch/compose.yaml" "$@" >>"$scratch/compose.log" 2>&1; }
cleanup() {
    [ -n "${IMAGE_KEEP:-}" ] || compose down -v || true
    [ -n "${IMAGE_KEEP:-}" ] || rm -rf "$scratch"
}
trap cleanup EXIT
cp deploy/compose/compose.yaml deploy/compose/chime.json "$scratch/"
"$chime" keys init "$scratch/keys" >/dev/null
# The dashboard's certificate and token (podman-compose 1.0 starts every profile).
mkdir -p "$scratch/dashboard"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
    -keyout "$scratch/dashboard/tls.key" -out "$scratch/dashboard/tls.crt" 2>/dev/null
openssl rand -hex 32 >"$scratch/dashboard/token"
chmod 600 "$scratch/dashboard/tls.key" "$scratch/dashboard/token"
# Free host ports for control, events, HTTP and the dashboard (the containers keep theirs).
read -r control events http dashboard < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(4)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')
sed -i -e "s/\"7700:7700\", \"7703:7703\", \"127.0.0.1:7705:7705\"/\"127.0.0.1:$control:7700\", \"127.0.0.1:$events:7703\", \"127.0.0.1:$http:7705\"/" \
    -e "s/\"127.0.0.1:7790:7790\"/\"127.0.0.1:$dashboard:7790\"/" -e '/build: { context/d' "$scratch/compose.yaml"
grep -q "127.0.0.1:$control:7700" "$scratch/compose.yaml" && grep -q "127.0.0.1:$dashboard:7790" "$scratch/compose.yaml" \
    || { echo "image.sh: could not move the compose file's ports" >&2; exit 1; }
client=(--control "tcp://127.0.0.1:$control" --events "tcp://127.0.0.1:$events" --keys "$scratch/keys")

wait_for() { # seconds, description, command…
    local deadline=$((SECONDS + $1)) what="$2"; shift 2
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "image.sh: check failed: $what within the deadline" >&2; tail -40 "$scratch/compose.log" >&2; exit 1; }
        sleep 0.5
    done
}
echo "image.sh: check: podman-compose up (coordinator, 2 workers, keys)"
compose up -d
wait_for 60 "the coordinator answers ping" "$chime" ctl ping "${client[@]}"
worker_alive() { "$chime" ctl workers --json "${client[@]}" | grep -q '"alive" *: *true'; }
wait_for 60 "a worker is live" worker_alive
"$chime" schedule --recipient imagecheck --id soon --in 2s --title "from a container" "${client[@]}" >/dev/null
"$chime" schedule --recipient imagecheck --id later --in 1d --title "kept across down and up" "${client[@]}" >/dev/null
states() { # the state of each of imagecheck's reminders, as "id=state" lines
    "$chime" list --all --recipient imagecheck --json "${client[@]}" | python3 -c '
import json, sys
for row in json.load(sys.stdin)["result"]["reminders"]:
    print(row["reminder"]["id"] + "=" + row["state"])'
}
fired() { states | grep -qx soon=delivered; }
wait_for 30 "the reminder fires in the containers" fired
wait_for 30 "the dashboard answers /healthz over TLS" python3 -c "
import ssl, urllib.request
urllib.request.urlopen('https://127.0.0.1:$dashboard/healthz', context=ssl._create_unverified_context(), timeout=2)"
echo "image.sh: check: fired; podman-compose down and up"
compose down
compose up -d
wait_for 60 "the coordinator answers ping after up" "$chime" ctl ping "${client[@]}"
after="$(states | sort | tr '\n' ' ')"
[ "$after" = "later=pending soon=delivered " ] \
    || { echo "image.sh: check failed: after down and up the store holds: $after" >&2; exit 1; }
echo "image.sh: check passed: fired in containers, the dashboard served over TLS, and after down and up the store holds: $after"
