#!/usr/bin/env bash
# Makes a Docker engine available on a Debian/Ubuntu machine: installs Debian's docker.io (and debootstrap, which
# docker/images.sh needs when no registry is reachable) if missing, and starts dockerd in the background if no engine
# answers. With --compose it also makes sure a compose command exists. Safe to run repeatedly.
set -euo pipefail

want_compose=false
[ "${1:-}" = "--compose" ] && want_compose=true

say() { echo "ensure-docker: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    say "need root to run: $*"; exit 1; fi
}

apt_updated=false
apt_install() {
  if ! command -v apt-get >/dev/null; then
    say "cannot install $* (no apt-get): install it yourself and run again"; exit 1
  fi
  if [ "$apt_updated" = false ]; then as_root apt-get update -q >&2; apt_updated=true; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2
}

packages=()
command -v dockerd >/dev/null || packages+=(docker.io)
command -v docker >/dev/null || packages+=(docker.io)
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || packages+=(debootstrap)
if [ "$want_compose" = true ] && ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
  packages+=(docker-compose)
fi
if [ ${#packages[@]} -gt 0 ]; then
  say "installing ${packages[*]}"
  apt_install $(printf '%s\n' "${packages[@]}" | sort -u)
fi

if docker info >/dev/null 2>&1; then
  exit 0
fi
say "no Docker engine answers; starting dockerd in the background (log: /var/log/dockerd.log)"
as_root sh -c 'nohup dockerd >/var/log/dockerd.log 2>&1 &'
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { say "dockerd is up"; exit 0; }
  sleep 1
done
say "dockerd did not come up within 60 s; see /var/log/dockerd.log"
tail -20 /var/log/dockerd.log >&2 || true
exit 1
