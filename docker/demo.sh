#!/usr/bin/env bash
# The 3-node demo cluster from docker-compose.yml.
#   bash docker/demo.sh up      build the jar, get the images, start PostgreSQL + 3 nodes, wait for a view of 3
#   bash docker/demo.sh down    stop and remove everything, including the database volume
#   bash docker/demo.sh logs    follow the nodes' logs
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

compose() {
  if docker compose version >/dev/null 2>&1; then docker compose "$@"; else docker-compose "$@"; fi
}

up() {
  bash docker/ensure-docker.sh --compose
  echo "demo: building the provider jar" >&2
  ./mvnw -q -B -DskipTests package -pl provider
  eval "$(bash docker/images.sh)"
  export KEYCLOAK_IMAGE POSTGRES_IMAGE
  echo "demo: images $KEYCLOAK_IMAGE, $POSTGRES_IMAGE" >&2
  compose build
  # node1 first: it creates the schema; the others join it.
  compose up -d postgres keycloak1
  wait_healthy keycloak1
  compose up -d keycloak2 keycloak3
  for n in keycloak2 keycloak3; do wait_healthy "$n"; done
  for n in keycloak1 keycloak2 keycloak3; do wait_view "$n" 3; done
  cat <<MSG

Cluster of 3 is up (every node logged ISPN000094 with 3 members).
  Admin console   http://localhost:8080/admin   (admin / admin)
  Nodes           http://localhost:8080  http://localhost:8081  http://localhost:8082
  Health/metrics  http://localhost:9001/health/ready  http://localhost:9001/metrics  (9002, 9003 for nodes 2, 3)
  Logs            bash docker/demo.sh logs
  Stop            bash docker/demo.sh down
MSG
}

wait_healthy() {
  local service=$1 id
  id=$(compose ps -q "$service")
  for _ in $(seq 1 180); do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$id" 2>/dev/null)" = healthy ] && return 0
    sleep 2
  done
  echo "demo: $service did not become healthy; its last log lines:" >&2
  compose logs --tail=50 "$service" >&2
  exit 1
}

wait_view() {
  local service=$1 members=$2
  for _ in $(seq 1 90); do
    compose logs "$service" 2>/dev/null | grep -E 'ISPN00009[34]' | tail -1 | grep -q "($members)" && return 0
    sleep 2
  done
  echo "demo: $service never logged a cluster view of $members" >&2
  exit 1
}

case "${1:-up}" in
  up) up ;;
  down) compose down -v ;;
  logs) compose logs -f keycloak1 keycloak2 keycloak3 ;;
  *) echo "usage: $0 up|down|logs" >&2; exit 2 ;;
esac
