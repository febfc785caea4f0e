#!/usr/bin/env bash
# The 3-node demo cluster from docker-compose.yml.
#   bash docker/demo.sh up      build the jar, get the images, start PostgreSQL + 3 nodes, wait for a view of 3
#   bash docker/demo.sh down    stop and remove everything, including the database volume
#   bash docker/demo.sh logs    follow the nodes' logs
#   bash docker/demo.sh warm-restart [N]
#                               create N offline sessions through the token endpoint (default 300), restart all
#                               three nodes, and show that their offlineSessions caches hold all N again
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

cached() { # $1 = management port; prints the node's offlineSessions entries
  curl -s "http://localhost:$1/metrics" \
    | awk -F' ' '/^vendor_statistics_approximate_entries_in_memory\{cache="offlineSessions"/ {printf "%d", $2}'
}

done_on() { # $1 = management port
  curl -s "http://localhost:$1/metrics" | grep -q '^keycloak_offline_preload_state{state="done"} 1.0'
}

warm_restart() {
  local n=${1:-300} i
  echo "demo: creating realm 'demo' with $n users, each logging in with offline_access" >&2
  compose exec -T keycloak1 /opt/keycloak/bin/kcadm.sh config credentials --server http://localhost:8080 \
    --realm master --user admin --password admin >/dev/null
  compose exec -T keycloak1 /opt/keycloak/bin/kcadm.sh create realms -s realm=demo -s enabled=true -s sslRequired=none >/dev/null
  compose exec -T keycloak1 /opt/keycloak/bin/kcadm.sh create clients -r demo -s clientId=mobile-app \
    -s publicClient=true -s directAccessGrantsEnabled=true >/dev/null
  # One partial import for all users (one kcadm call each would start a JVM per user).
  { printf '{"ifResourceExists":"SKIP","users":['
    for i in $(seq 1 "$n"); do
      [ "$i" -gt 1 ] && printf ','
      printf '{"username":"user%d","enabled":true,"email":"user%d@example.test","emailVerified":true,' "$i" "$i"
      printf '"firstName":"User","lastName":"%d","realmRoles":["default-roles-demo"],' "$i"
      printf '"credentials":[{"type":"password","value":"password","temporary":false}]}'
    done
    printf ']}'; } | compose exec -T keycloak1 /opt/keycloak/bin/kcadm.sh create partialImport -r demo -f - >/dev/null
  for i in $(seq 1 "$n"); do
    curl -sf -o /dev/null "http://localhost:$((8080 + i % 3))/realms/demo/protocol/openid-connect/token" \
      -d grant_type=password -d client_id=mobile-app -d username="user$i" -d password=password -d scope="openid offline_access" \
      || { echo "demo: offline login of user$i failed" >&2; exit 1; }
  done
  echo "demo: before the restart:  node1 $(cached 9001)  node2 $(cached 9002)  node3 $(cached 9003) offline sessions cached" >&2
  echo "demo: restarting all three nodes" >&2
  compose stop keycloak1 keycloak2 keycloak3
  compose start keycloak1
  wait_healthy keycloak1
  compose start keycloak2 keycloak3
  for s in keycloak2 keycloak3; do wait_healthy "$s"; done
  for _ in $(seq 1 120); do
    done_on 9001 && done_on 9002 && done_on 9003 && break
    sleep 2
  done
  local a b c
  a=$(cached 9001); b=$(cached 9002); c=$(cached 9003)
  echo "demo: after the restart:   node1 $a  node2 $b  node3 $c offline sessions cached, $((a + b + c)) of $n" >&2
  echo "      (stock Keycloak 26.7 would show 0 here until each session is refreshed once)" >&2
}

case "${1:-up}" in
  up) up ;;
  warm-restart) warm_restart "${2:-300}" ;;
  down) compose down -v ;;
  logs) compose logs -f keycloak1 keycloak2 keycloak3 ;;
  *) echo "usage: $0 up|down|logs|warm-restart [N]" >&2; exit 2 ;;
esac
