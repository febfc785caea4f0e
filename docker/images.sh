#!/usr/bin/env bash
# Usage: images.sh            Keycloak + PostgreSQL
#        images.sh mariadb    MariaDB only (opt-in)
#
# Makes sure the images are available to the local Docker engine and prints shell-sourceable
# lines on stdout - without arguments exactly these two:
#   KEYCLOAK_IMAGE=<name:tag>
#   POSTGRES_IMAGE=<name:tag>
# and with "mariadb" exactly this one:
#   MARIADB_IMAGE=<name:tag>
# Consumers (the Java test harness, the demo script) parse/eval stdout, so every other byte of
# output goes to stderr.
#
# Per image: an explicit $KEYCLOAK_IMAGE / $POSTGRES_IMAGE / $MARIADB_IMAGE wins; otherwise the
# official image (local or pulled); otherwise - no registry reachable - an equivalent is built
# locally from a debootstrapped Debian base, using only the host's apt mirror and Maven Central.
#
# Environment:
#   KEYCLOAK_IMAGE, POSTGRES_IMAGE, MARIADB_IMAGE
#                                   use exactly this image (pulled if missing, error if impossible)
#   KEYCLOAK_VERSION                default: <keycloak.version> from the parent pom
#   LOCAL_IMAGES_ONLY=1             skip the official images, always use/build the local ones
#   DEBIAN_MIRROR                   default: derived from the host's apt sources
#   DEBIAN_SUITE                    default: VERSION_CODENAME from /etc/os-release
#   TMPDIR                          where the temporary rootfs / build contexts are created
set -euo pipefail

# fd 3 = the real stdout, reserved for the result lines; everything else goes to stderr.
exec 3>&1 1>&2

DOCKER_DIR="$(cd "$(dirname "$0")" && pwd)"
REPO_ROOT="$(cd "$(dirname "$0")/.." && pwd)"

LABEL_KEY=offline-preload.inputs
OFFICIAL_KEYCLOAK_REPO=quay.io/keycloak/keycloak
OFFICIAL_POSTGRES_IMAGE=postgres:17
OFFICIAL_MARIADB_IMAGE=mariadb:11.4
# One base for all images keeps it to a single debootstrap run. MariaDB is deliberately not in
# this list: changing it rebuilds the base and with it the Keycloak/PostgreSQL images; the
# MariaDB image installs mariadb-server with apt in its own Dockerfile instead.
BASE_PACKAGES=openjdk-17-jre-headless,postgresql,ca-certificates,procps,curl,tzdata

log() { printf '[images.sh] %s\n' "$*" >&2; }
die() { printf '[images.sh] ERROR: %s\n' "$*" >&2; exit 1; }
usage() { printf 'usage: %s [mariadb]\n' "$0" >&2; exit 2; }

# ---------------------------------------------------------------- temp dirs / cleanup
TEMP_DIRS=()
cleanup() {
    local d m
    for d in "${TEMP_DIRS[@]+"${TEMP_DIRS[@]}"}"; do
        [[ -d $d ]] || continue
        # A failed debootstrap can leave proc/sys mounted inside the rootfs.
        while read -r m; do umount -l "$m" 2>/dev/null || true; done \
            < <(awk -v p="$d/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r)
        rm -rf --one-file-system "$d"
    done
}
trap cleanup EXIT
new_temp_dir() { # $1 = name prefix; result in TEMP_DIR
    TEMP_DIR="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
    TEMP_DIRS+=("$TEMP_DIR")
}

# ---------------------------------------------------------------- helpers
image_present() { docker image inspect "$1" >/dev/null 2>&1; }

image_label() { # $1 = image; prints the inputs label or nothing
    docker image inspect -f "{{ index .Config.Labels \"$LABEL_KEY\" }}" "$1" 2>/dev/null \
        | grep -v '^<no value>$' || true
}

image_id() { docker image inspect -f '{{ .Id }}' "$1"; }

# True if $1 exists and was built from exactly the inputs hashed to $2.
up_to_date() { [[ -n $2 && "$(image_label "$1")" == "$2" ]]; }

pull() { # $1 = image
    log "pulling $1 ..."
    timeout 120 docker pull "$1"
}

sha256_stdin() { sha256sum | cut -d' ' -f1; }

smoke_test() { # $1 = image, $2 = text its output must contain, $3.. = command
    local image=$1 expect=$2 out
    shift 2
    out="$(docker run --rm "$image" "$@" 2>&1)" || true
    [[ $out == *"$expect"* ]] || die "smoke test failed: '$image $*' does not report $expect: $out"
}

# Images replaced by a rebuild would linger as dangling ~0.5-1 GB images; remember them
# and remove them at the end (children first, so the old base goes last).
SUPERSEDED=()
remember_superseded() { # $1 = image name about to be rebuilt
    local id
    id="$(docker image inspect -f '{{ .Id }}' "$1" 2>/dev/null)" || return 0
    SUPERSEDED=("$id" "${SUPERSEDED[@]+"${SUPERSEDED[@]}"}")
}
remove_superseded() {
    local id
    for id in "${SUPERSEDED[@]+"${SUPERSEDED[@]}"}"; do
        if docker rmi "$id" >/dev/null 2>&1; then log "removed superseded image ${id#sha256:}"; fi
    done
}

# ---------------------------------------------------------------- Keycloak version
keycloak_version() {
    local pom="$REPO_ROOT/pom.xml" v=""
    if [[ -n ${KEYCLOAK_VERSION:-} ]]; then
        printf '%s\n' "$KEYCLOAK_VERSION"; return
    fi
    if [[ -f $pom ]]; then
        v="$(sed -n 's:.*<keycloak\.version>[[:space:]]*\([^<[:space:]]*\)[[:space:]]*</keycloak\.version>.*:\1:p' \
            "$pom" | head -n1)"
    fi
    # Fallback only matters while the parent pom does not exist yet.
    printf '%s\n' "${v:-26.7.4}"
}

# ---------------------------------------------------------------- Debian suite / mirror
debian_suite() {
    if [[ -n ${DEBIAN_SUITE:-} ]]; then printf '%s\n' "$DEBIAN_SUITE"; return; fi
    local codename
    # shellcheck disable=SC1091
    codename="$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")"
    [[ -n $codename ]] || die "cannot determine the Debian suite (no VERSION_CODENAME in /etc/os-release); set DEBIAN_SUITE"
    printf '%s\n' "$codename"
}

# Never hard-code a mirror: use whatever apt on this host uses (corporate/offline mirrors,
# snapshot.debian.org, ...), which is known to be reachable.
debian_mirror() { # $1 = suite
    local suite=$1 f uri=""
    if [[ -n ${DEBIAN_MIRROR:-} ]]; then printf '%s\n' "$DEBIAN_MIRROR"; return; fi
    # deb822 (*.sources): stanzas separated by blank lines.
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        uri="$(awk -v suite="$suite" '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && enabled != "no" && (" " suites " ") ~ (" " suite " ")) {
                    n = split(uris, u, " ")
                    for (i = 1; i <= n; i++) if (u[i] ~ /^(https?|ftp|file):/) { print u[i]; done = 1; exit }
                }
                types = ""; suites = ""; uris = ""; enabled = ""
            }
            /^[[:space:]]*#/ { next }
            /^[[:space:]]*$/ { flush(); next }
            { key = tolower($1); sub(/^[^:]*:[[:space:]]*/, "") }
            key == "types:"   { types = $0 }
            key == "suites:"  { suites = $0 }
            key == "uris:"    { uris = $0 }
            key == "enabled:" { enabled = tolower($0) }
            END { if (!done) flush() }' "$f")"
        [[ -n $uri ]] && break
    done
    # Classic one-line format.
    if [[ -z $uri ]]; then
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [[ -f $f ]] || continue
            uri="$(awk -v suite="$suite" '
                $1 == "deb" {
                    i = 2
                    if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
                    if ($(i + 1) == suite && $i ~ /^(https?|ftp|file):/) { print $i; exit }
                }' "$f")"
            [[ -n $uri ]] && break
        done
    fi
    [[ -n $uri ]] || die "no apt source for suite '$suite' found in /etc/apt/sources.list{,.d/*.sources,.d/*.list}; set DEBIAN_MIRROR"
    printf '%s\n' "$uri"
}

# ---------------------------------------------------------------- base image
BASE_IMAGE=""
build_base_rootfs() { # $1 = suite, $2 = mirror, $3 = inputs hash, $4 = image name
    local suite=$1 mirror=$2 hash=$3 name=$4 rootfs
    [[ $(id -u) -eq 0 ]] || die "building $name needs root (debootstrap); run as root or provide KEYCLOAK_IMAGE/POSTGRES_IMAGE"
    command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install -y debootstrap)"
    new_temp_dir offline-preload-base
    rootfs="$TEMP_DIR/rootfs"
    log "debootstrap $suite from $mirror (takes a few minutes) ..."
    debootstrap --variant=minbase --include="$BASE_PACKAGES" "$suite" "$rootfs" "$mirror"
    # The package's default cluster/config (/var/lib/postgresql/15/main) is dead weight:
    # the postgres image initialises its own PGDATA.
    rm -rf "$rootfs"/var/lib/postgresql/*/main "$rootfs"/etc/postgresql/*/main
    # Caches are useless in an image; resolv.conf/hostname are the build host's and docker
    # bind-mounts its own at run time anyway.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* \
        "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/*
    # Docs, man pages and message translations are never read in a container (~75 MB);
    # copyright files stay for licence compliance.
    rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*/
    find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    : > "$rootfs/etc/resolv.conf"
    rm -f "$rootfs/etc/hostname"
    log "importing rootfs as $name ..."
    # No PATH in an imported image unless set here; Dockerfiles extend ${PATH}.
    tar --numeric-owner --xattrs -C "$rootfs" \
        --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . \
        | docker import \
            --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
            --change 'ENV LANG=C.UTF-8' \
            --change "LABEL $LABEL_KEY=$hash" \
            --change 'CMD ["bash"]' \
            - "$name" >/dev/null
    rm -rf --one-file-system "$TEMP_DIR"
}

ensure_base() {
    [[ -n $BASE_IMAGE ]] && return
    local suite mirror hash name
    suite="$(debian_suite)"
    mirror="$(debian_mirror "$suite")"
    name="offline-preload/debian:${suite}-local"
    # The recipe itself (function body) is an input too: changing it must trigger a rebuild.
    hash="$(printf 'packages=%s\nsuite=%s\nmirror=%s\n%s\n' \
        "$BASE_PACKAGES" "$suite" "$mirror" "$(declare -f build_base_rootfs)" | sha256_stdin)"
    if up_to_date "$name" "$hash"; then
        log "reusing $name"
    else
        remember_superseded "$name"
        build_base_rootfs "$suite" "$mirror" "$hash" "$name"
    fi
    BASE_IMAGE=$name
}

# ---------------------------------------------------------------- Keycloak image
mvn_cmd() {
    if [[ -x $REPO_ROOT/mvnw ]]; then printf '%s\n' "$REPO_ROOT/mvnw"; else printf 'mvn\n'; fi
}

build_local_keycloak() { # result in RESULT
    local version=$1 name="offline-preload/keycloak:${1}-local" hash ctx
    ensure_base
    hash="$(printf 'version=%s\nbase=%s\n' "$version" "$(image_id "$BASE_IMAGE")" \
        | cat - "$DOCKER_DIR/keycloak/Dockerfile" | sha256_stdin)"
    if up_to_date "$name" "$hash"; then
        log "reusing $name"
    else
        remember_superseded "$name"
        new_temp_dir offline-preload-keycloak
        ctx=$TEMP_DIR
        cp "$DOCKER_DIR/keycloak/Dockerfile" "$ctx/"
        # Via Maven (not a download URL) so it comes from the same repositories/mirrors the
        # build already uses; the 170 MB tarball never lands in the repository.
        log "fetching org.keycloak:keycloak-quarkus-dist:$version:tar.gz via Maven ..."
        (cd "$REPO_ROOT" && "$(mvn_cmd)" -q -B -N dependency:copy \
            "-Dartifact=org.keycloak:keycloak-quarkus-dist:${version}:tar.gz" \
            "-DoutputDirectory=$ctx")
        [[ -f $ctx/keycloak-quarkus-dist-${version}.tar.gz ]] \
            || die "Maven did not provide keycloak-quarkus-dist-${version}.tar.gz"
        log "building $name ..."
        docker build --build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "KEYCLOAK_VERSION=$version" \
            --label "$LABEL_KEY=$hash" -t "$name" "$ctx"
        # The legacy builder keeps the unpack stage as a dangling image.
        docker image prune -f --filter label=offline-preload.stage=unpack >/dev/null || true
        rm -rf "$ctx"
        smoke_test "$name" "Keycloak $version" --version
    fi
    RESULT=$name
}

# ---------------------------------------------------------------- images built on the base
# Builds image $1 from docker/$2/ ($3.. = the context files, Dockerfile first) on top of the
# base image, unless an image built from the same base and files exists. Result in RESULT;
# BUILT=1 if it was (re)built, so the caller smoke-tests only fresh images.
build_on_base() {
    local name=$1 dir="$DOCKER_DIR/$2" hash ctx
    shift 2
    ensure_base
    hash="$(printf 'base=%s\n' "$(image_id "$BASE_IMAGE")" | (cd "$dir" && cat - "$@") | sha256_stdin)"
    BUILT=0
    if up_to_date "$name" "$hash"; then
        log "reusing $name"
    else
        remember_superseded "$name"
        new_temp_dir "offline-preload-${2}"
        ctx=$TEMP_DIR
        (cd "$dir" && cp "$@" "$ctx/")
        log "building $name ..."
        docker build --build-arg "BASE_IMAGE=$BASE_IMAGE" --label "$LABEL_KEY=$hash" -t "$name" "$ctx"
        rm -rf "$ctx"
        BUILT=1
    fi
    RESULT=$name
}

build_local_postgres() { # result in RESULT
    # Debian bookworm ships PostgreSQL 15, hence the tag (the official default is postgres:17).
    build_on_base offline-preload/postgres:15-local postgres Dockerfile docker-entrypoint.sh
    if [[ $BUILT == 1 ]]; then smoke_test "$RESULT" PostgreSQL postgres --version; fi
}

build_local_mariadb() { # result in RESULT
    # Debian bookworm ships MariaDB 10.11 (LTS), hence the tag (the official one is mariadb:11.4).
    build_on_base offline-preload/mariadb:10.11-local mariadb \
        Dockerfile docker-entrypoint.sh 90-offline-preload.cnf
    if [[ $BUILT == 1 ]]; then smoke_test "$RESULT" MariaDB mariadbd --version; fi
}

# ---------------------------------------------------------------- resolution
resolve() { # $1 = env var name, $2 = official image, $3 = local builder (+args); result in RESULT
    local var=$1 official=$2 requested
    shift 2
    requested="${!var:-}"
    if [[ -n $requested ]]; then
        if image_present "$requested" || pull "$requested"; then
            RESULT=$requested; return
        fi
        die "$var=$requested is neither present locally nor pullable"
    fi
    if [[ ${LOCAL_IMAGES_ONLY:-0} != 1 ]]; then
        if image_present "$official" || pull "$official"; then
            RESULT=$official; return
        fi
        log "$official unavailable; using a locally built equivalent"
    fi
    "$@"
}

case "$#:${1:-}" in
    0:) WANT=default ;;
    1:mariadb) WANT=mariadb ;;
    *) usage ;;
esac

command -v docker >/dev/null || die "docker CLI not found"
docker info >/dev/null 2>&1 || die "cannot talk to the Docker daemon (is dockerd running?)"

# Test JVMs / demo may run concurrently; serialise so an image is never built twice at once.
LOCK_FILE="${TMPDIR:-/tmp}/offline-preload-images.lock"
if { exec 9>>"$LOCK_FILE"; } 2>/dev/null; then
    if ! flock -n 9; then
        log "another images.sh is running; waiting for it ..."
        flock 9
    fi
else
    log "cannot open $LOCK_FILE; continuing without lock"
fi

if [[ $WANT == mariadb ]]; then
    resolve MARIADB_IMAGE "$OFFICIAL_MARIADB_IMAGE" build_local_mariadb
    remove_superseded
    printf 'MARIADB_IMAGE=%s\n' "$RESULT" >&3
    exit 0
fi

KC_VERSION="$(keycloak_version)"
resolve KEYCLOAK_IMAGE "$OFFICIAL_KEYCLOAK_REPO:$KC_VERSION" build_local_keycloak "$KC_VERSION"
kc_image=$RESULT
resolve POSTGRES_IMAGE "$OFFICIAL_POSTGRES_IMAGE" build_local_postgres
pg_image=$RESULT
remove_superseded

printf 'KEYCLOAK_IMAGE=%s\nPOSTGRES_IMAGE=%s\n' "$kc_image" "$pg_image" >&3
