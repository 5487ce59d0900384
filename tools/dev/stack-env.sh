# Sourced by tools/dev/up.sh and down.sh: where the local stack lives and listens (one definition for both).
export MANGO_SERVICES_RUN=${MANGO_SERVICES_RUN:-/tmp/mango-up}
export MANGO_PG_PORT=${MANGO_UP_PG_PORT:-55433} MANGO_TEMPORAL_PORT=${MANGO_UP_TEMPORAL_PORT:-17234} MANGO_S3_PORT=${MANGO_UP_S3_PORT:-17071}
if [ -z "${MANGO_UP_DATA:-}" ]; then
  if [ "$(id -u)" = 0 ]; then MANGO_UP_DATA=/var/lib/mango-up; else MANGO_UP_DATA=${XDG_DATA_HOME:-$HOME/.local/share}/mango-up; fi
fi
# Durable: PostgreSQL with fsync, Temporal on SQLite, S3 files, all under $MANGO_UP_DATA.
export MANGO_UP_DATA MANGO_SERVICES_DATA=$MANGO_UP_DATA MANGO_SERVICES_DURABLE=1
