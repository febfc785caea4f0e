#!/usr/bin/env bash
# Entrypoint compatible with the official "postgres" image's contract (POSTGRES_USER,
# POSTGRES_PASSWORD, POSTGRES_DB, PGDATA, /docker-entrypoint-initdb.d), so this image can
# stand in for it wherever the registry is unreachable (Testcontainers, docker compose).
set -Eeuo pipefail

# Accept "docker run img -c fsync=off" like the official image does.
if [ "${1:0:1}" = '-' ]; then
	set -- postgres "$@"
fi

want_help() {
	local arg
	for arg; do
		case "$arg" in
			-'?'|--help|--describe-config|-V|--version) return 0 ;;
		esac
	done
	return 1
}

log() { printf '%s [entrypoint] %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$*"; }

if [ "$1" != 'postgres' ] || want_help "$@"; then
	exec "$@"
fi

: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
: "${PGDATA:=/var/lib/postgresql/data}"
export POSTGRES_USER POSTGRES_DB PGDATA

# Started as root (the default, like the official image): fix ownership of a possibly
# bind-mounted data dir, then drop to the postgres user, because postgres refuses to run as root.
if [ "$(id -u)" = '0' ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	chown -R postgres:postgres "$PGDATA" /var/run/postgresql
	chmod 700 "$PGDATA"
	chmod 3777 /var/run/postgresql
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

mkdir -p "$PGDATA"
chmod 700 "$PGDATA" 2>/dev/null || true

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != 'trust' ]; then
		echo >&2 'Error: database is uninitialized and POSTGRES_PASSWORD is not set.'
		echo >&2 '       Set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust to allow'
		echo >&2 '       unauthenticated connections, never do that outside of tests).'
		exit 1
	fi

	log "initializing database cluster in $PGDATA"
	# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a word list on purpose
	initdb --username="$POSTGRES_USER" \
		--pwfile=<(printf '%s\n' "${POSTGRES_PASSWORD:-}") \
		--auth-host=scram-sha-256 --auth-local=trust \
		${POSTGRES_INITDB_ARGS:-}

	printf '\nhost all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD" >> "$PGDATA/pg_hba.conf"
	printf "\nlisten_addresses = '*'\n" >> "$PGDATA/postgresql.conf"

	# Socket-only temporary server: clients must not connect before init scripts ran.
	# Its log goes to stdout on purpose: the official image prints "database system is ready
	# to accept connections" twice on first start and Testcontainers waits for both lines.
	pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start

	psql_init=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
	if [ "$POSTGRES_DB" != 'postgres' ]; then
		"${psql_init[@]}" --dbname postgres --set db="$POSTGRES_DB" <<-'SQL'
			CREATE DATABASE :"db";
		SQL
	fi

	shopt -s nullglob
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
			*.sh)
				if [ -x "$f" ]; then
					log "running $f"; "$f"
				else
					log "sourcing $f"
					# shellcheck disable=SC1090
					. "$f"
				fi ;;
			*.sql)    log "running $f"; "${psql_init[@]}" --dbname "$POSTGRES_DB" -f "$f" ;;
			*.sql.gz) log "running $f"; gunzip -c "$f" | "${psql_init[@]}" --dbname "$POSTGRES_DB" ;;
			*)        log "ignoring $f" ;;
		esac
	done
	shopt -u nullglob

	pg_ctl -D "$PGDATA" -m fast -w stop
	log 'init complete; starting server'
fi

exec "$@"
