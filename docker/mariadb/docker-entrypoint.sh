#!/usr/bin/env bash
# Entrypoint compatible with the official "mariadb" image's contract, so this image can stand
# in for it wherever the registry is unreachable (Testcontainers' MariaDBContainer, docker
# compose, Keycloak's jdbc:mariadb://host:3306/db):
#   MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD          (or *_FILE)
#   MARIADB_ALLOW_EMPTY_ROOT_PASSWORD / MYSQL_ALLOW_EMPTY_PASSWORD
#   MARIADB_RANDOM_ROOT_PASSWORD / MYSQL_RANDOM_ROOT_PASSWORD
#   MARIADB_ROOT_HOST (default %)
#   MARIADB_DATABASE / MYSQL_DATABASE                     (utf8mb4, utf8mb4_unicode_ci)
#   MARIADB_USER / MYSQL_USER, MARIADB_PASSWORD / MYSQL_PASSWORD (or *_FILE)
#   MARIADB_INITDB_SKIP_TZINFO / MYSQL_INITDB_SKIP_TZINFO
#   /docker-entrypoint-initdb.d/*.sh|*.sql|*.sql.gz|*.sql.xz|*.sql.zst
# The MARIADB_* name wins when both are set.
set -Eeuo pipefail

# Accept "docker run img --innodb-buffer-pool-size=64M" like the official image does.
if [ "${1:0:1}" = '-' ]; then
	set -- mariadbd "$@"
fi

log()  { printf '%s [entrypoint] %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$*"; }
fail() { printf '%s [entrypoint] ERROR: %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$*" >&2; exit 1; }

want_help() {
	local arg
	for arg; do
		case "$arg" in
			-'?'|--help|--print-defaults|-V|--version) return 0 ;;
		esac
	done
	return 1
}

if { [ "$1" != 'mariadbd' ] && [ "$1" != 'mysqld' ]; } || want_help "$@"; then
	exec "$@"
fi
shift # "$@" = mariadbd options from here on

# file_env NAME: NAME := MARIADB_NAME | MARIADB_NAME_FILE | MYSQL_NAME | MYSQL_NAME_FILE
# (the MYSQL_* spelling of ALLOW_EMPTY_ROOT_PASSWORD is ALLOW_EMPTY_PASSWORD, passed as $2).
file_env() {
	local name=$1 mysql_name=${2:-$1} var file_var val=""
	for var in "MARIADB_$name" "MYSQL_$mysql_name"; do
		file_var="${var}_FILE"
		if [ -n "${!var:-}" ] && [ -n "${!file_var:-}" ]; then
			fail "both $var and $file_var are set (but are exclusive)"
		fi
		if [ -n "${!var:-}" ]; then
			val=${!var}; break
		fi
		if [ -n "${!file_var:-}" ]; then
			val="$(< "${!file_var}")"; break
		fi
	done
	printf -v "MARIADB_$name" '%s' "$val"
}

# Effective server settings (a mounted /etc/mysql/conf.d or command-line options may move them).
server_option() { # $1 = option name, rest = mariadbd options
	local opt=$1; shift
	mariadbd "$@" --verbose --help 2>/dev/null | awk -v o="$opt" '$1 == o { print $2; exit }'
}
DATADIR="$(server_option datadir "$@")"
SOCKET="$(server_option socket "$@")"
: "${DATADIR:=/var/lib/mysql/}" "${SOCKET:=/run/mysqld/mysqld.sock}"

# Started as root (the default, like the official image): fix ownership of a possibly
# bind-mounted data dir; mariadbd itself drops to "mysql" via --user.
if [ "$(id -u)" = '0' ]; then
	mkdir -p "$DATADIR" "$(dirname "$SOCKET")"
	find "$DATADIR" "$(dirname "$SOCKET")" \! -user mysql -exec chown mysql: '{}' +
	run_as=(--user=mysql)
else
	run_as=()
fi

sql_string() { # $1 -> '...' with \ and ' escaped (NO_BACKSLASH_ESCAPES is cleared below)
	local s=${1//\\/\\\\}
	printf "'%s'" "${s//\'/\\\'}"
}
sql_ident() { # $1 -> `...`
	# shellcheck disable=SC2016 # literal backticks
	printf '`%s`' "${1//\`/\`\`}"
}

if [ ! -d "$DATADIR/mysql" ]; then
	file_env ROOT_PASSWORD
	file_env PASSWORD
	file_env USER
	file_env DATABASE
	file_env ROOT_HOST
	file_env ALLOW_EMPTY_ROOT_PASSWORD ALLOW_EMPTY_PASSWORD
	file_env RANDOM_ROOT_PASSWORD
	file_env INITDB_SKIP_TZINFO
	: "${MARIADB_ROOT_HOST:=%}"

	if [ -z "$MARIADB_ROOT_PASSWORD" ] && [ -z "$MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" ] \
			&& [ -z "$MARIADB_RANDOM_ROOT_PASSWORD" ]; then
		fail 'database is uninitialized and password option is not specified.
       You need to specify one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD and
       MARIADB_RANDOM_ROOT_PASSWORD (or the MYSQL_* equivalents)'
	fi
	if [ -n "$MARIADB_USER" ] && [ -z "$MARIADB_PASSWORD" ]; then
		fail "MARIADB_USER/MYSQL_USER is set but MARIADB_PASSWORD/MYSQL_PASSWORD is not"
	fi
	if [ -n "$MARIADB_RANDOM_ROOT_PASSWORD" ] && [ -z "$MARIADB_ROOT_PASSWORD" ]; then
		MARIADB_ROOT_PASSWORD="$(tr -dc 'A-Za-z0-9' < /dev/urandom | head -c 32)" || true
		log "GENERATED ROOT PASSWORD: $MARIADB_ROOT_PASSWORD"
	fi

	log "initializing database files in $DATADIR"
	mariadb-install-db "${run_as[@]}" --datadir="$DATADIR" --rpm --skip-test-db \
		--auth-root-authentication-method=normal --default-time-zone=SYSTEM \
		--skip-log-bin --expire-logs-days=0 \
		--loose-innodb_buffer_pool_load_at_startup=0 --loose-innodb_buffer_pool_dump_at_shutdown=0 \
		"$@" > /dev/null # only its "please set a root password" banner; errors go to stderr

	# Socket-only temporary server: clients must not connect before the users/scripts exist.
	log 'starting temporary server'
	mariadbd "${run_as[@]}" "$@" --skip-networking --socket="$SOCKET" --skip-log-bin \
		--default-time-zone=SYSTEM --expire-logs-days=0 --wsrep-on=OFF \
		--loose-innodb_buffer_pool_load_at_startup=0 &
	tmp_pid=$!
	for _ in $(seq 60); do
		if mariadb-admin --no-defaults --socket="$SOCKET" -uroot ping >/dev/null 2>&1; then
			break
		fi
		kill -0 "$tmp_pid" 2>/dev/null || fail 'temporary server exited during startup'
		sleep 0.5
	done
	mariadb-admin --no-defaults --socket="$SOCKET" -uroot ping >/dev/null 2>&1 \
		|| fail 'temporary server did not start within 30 s'

	# Root still has no password until the first batch has run; later batches use it.
	passfile() { printf '[client]\npassword="%s"\n' "${MARIADB_ROOT_PASSWORD//\"/\\\"}"; }
	mariadb_root() {
		mariadb --defaults-extra-file=<(passfile) --protocol=socket --socket="$SOCKET" -uroot \
			--default-character-set=utf8mb4 "$@"
	}

	if [ -z "$MARIADB_INITDB_SKIP_TZINFO" ]; then
		mariadb-tzinfo-to-sql --skip-write-binlog /usr/share/zoneinfo 2>/dev/null \
			| mariadb --no-defaults --socket="$SOCKET" -uroot mysql
	fi

	root_pw="$(sql_string "$MARIADB_ROOT_PASSWORD")"
	{
		printf '%s\n' \
			'SET @@SESSION.SQL_LOG_BIN=0;' \
			"SET @@SESSION.SQL_MODE=REPLACE(@@SESSION.SQL_MODE, 'NO_BACKSLASH_ESCAPES', '');" \
			"DROP USER IF EXISTS root@'127.0.0.1', root@'::1', ''@'localhost';" \
			"EXECUTE IMMEDIATE CONCAT('DROP USER IF EXISTS root@\'', @@hostname, '\'');" \
			"EXECUTE IMMEDIATE CONCAT('DROP USER IF EXISTS \'\'@\'', @@hostname, '\'');" \
			"SET PASSWORD FOR 'root'@'localhost' = PASSWORD($root_pw);"
		if [ "$MARIADB_ROOT_HOST" != 'localhost' ]; then
			host="$(sql_string "$MARIADB_ROOT_HOST")"
			printf '%s\n' \
				"CREATE USER 'root'@$host IDENTIFIED BY $root_pw;" \
				"GRANT ALL ON *.* TO 'root'@$host WITH GRANT OPTION;" \
				"GRANT PROXY ON ''@'%' TO 'root'@$host WITH GRANT OPTION;"
		fi
		if [ -n "$MARIADB_DATABASE" ]; then
			printf 'CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\n' \
				"$(sql_ident "$MARIADB_DATABASE")"
		fi
		if [ -n "$MARIADB_USER" ]; then
			if [ "$MARIADB_USER" = 'root' ]; then
				# Same as the official image: root is configured by the ROOT_* variables.
				log 'MARIADB_USER/MYSQL_USER=root ignored (use MARIADB_ROOT_PASSWORD)' >&2
			else
				user="$(sql_string "$MARIADB_USER")"
				printf "CREATE USER %s@'%%' IDENTIFIED BY %s;\n" "$user" "$(sql_string "$MARIADB_PASSWORD")"
				if [ -n "$MARIADB_DATABASE" ]; then
					printf "GRANT ALL ON %s.* TO %s@'%%';\n" "$(sql_ident "$MARIADB_DATABASE")" "$user"
				fi
			fi
		fi
	} | mariadb --no-defaults --socket="$SOCKET" -uroot --default-character-set=utf8mb4

	db_arg=()
	[ -n "$MARIADB_DATABASE" ] && db_arg=(--database="$MARIADB_DATABASE")
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
			*.sql)     log "running $f"; mariadb_root "${db_arg[@]}" < "$f" ;;
			*.sql.gz)  log "running $f"; gunzip -c "$f" | mariadb_root "${db_arg[@]}" ;;
			*.sql.xz)  log "running $f"; xzcat "$f" | mariadb_root "${db_arg[@]}" ;;
			*.sql.zst) log "running $f"; zstd -dc "$f" | mariadb_root "${db_arg[@]}" ;;
			*)         log "ignoring $f" ;;
		esac
	done
	shopt -u nullglob

	log 'stopping temporary server'
	kill -TERM "$tmp_pid"
	wait "$tmp_pid" || fail 'temporary server did not shut down cleanly'
	log 'init complete; starting server'
fi

# Command-line options come last so "docker run img --port=..." etc. still override them.
exec mariadbd "${run_as[@]}" --bind-address=0.0.0.0 --port=3306 "$@"
