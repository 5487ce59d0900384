#!/bin/bash
# The entrypoint of mango-compose-temporal-server (tools/docker/compose-images.sh): Temporal's own server
# (go.temporal.io/server) with the configuration template of its module (config/docker.yaml, read from the
# environment: DB=postgres12, POSTGRES_SEEDS, DB_PORT, POSTGRES_USER, POSTGRES_PWD, DBNAME, VISIBILITY_DBNAME,
# BIND_ON_IP, the *_PORT variables …), as the official temporalio/server image runs it: bound to 0.0.0.0 it
# announces the container's own address to the cluster ring.
set -euo pipefail
: "${BIND_ON_IP:=$(getent hosts "$(hostname)" | awk '{print $1; exit}')}"
export BIND_ON_IP
if [ "$BIND_ON_IP" = 0.0.0.0 ] || [ "$BIND_ON_IP" = "::0" ]; then
  : "${TEMPORAL_BROADCAST_ADDRESS:=$(getent hosts "$(hostname)" | awk '{print $1; exit}')}"
  export TEMPORAL_BROADCAST_ADDRESS
fi
cd /etc/temporal
exec temporal-server --env docker start
