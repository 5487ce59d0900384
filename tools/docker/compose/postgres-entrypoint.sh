#!/bin/bash
# The entrypoint of mango-compose-postgres (tools/docker/compose-images.sh): Debian's PostgreSQL 15 with the
# subset of the official postgres image's interface that deployments/compose/compose.yaml uses, so either
# image runs the same file: POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB create the role and database on
# first start (data in $PGDATA), password (scram-sha-256) authentication for TCP, and `postgres <args>`
# passes the arguments to the server (`-p 5433`, `-c listen_addresses=127.0.0.1`).
set -euo pipefail
PGDATA=${PGDATA:-/var/lib/postgresql/data}
user=${POSTGRES_USER:-postgres}; db=${POSTGRES_DB:-$user}
[ "${1:-postgres}" = postgres ] && [ $# -gt 0 ] && shift
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql; chmod 700 "$PGDATA"
fi
if ! [ -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD is required" >&2; exit 1; }
  pw=$(mktemp); printf '%s\n' "$POSTGRES_PASSWORD" >"$pw"; chown postgres "$pw" 2>/dev/null || true
  as_pg initdb -D "$PGDATA" -U "$user" --pwfile="$pw" -A scram-sha-256 --auth-local=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pw"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # The database, created by a server that listens only on a private socket directory, so neither clients
  # nor a pg_isready healthcheck see a server before the database exists.
  init=$(mktemp -d); chown postgres "$init" 2>/dev/null || true
  as_pg pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -c unix_socket_directories=$init" start >/dev/null
  if [ "$db" != postgres ]; then as_pg psql -v ON_ERROR_STOP=1 -qAt -h "$init" -U "$user" -d postgres -c "create database \"$db\""; fi
  as_pg pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec_args=(postgres -D "$PGDATA")
case " $* " in *listen_addresses*) ;; *) exec_args+=(-c listen_addresses='*') ;; esac
if [ "$(id -u)" = 0 ]; then exec runuser -u postgres -- "${exec_args[@]}" "$@"; else exec "${exec_args[@]}" "$@"; fi
