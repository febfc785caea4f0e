#!/usr/bin/env bash
# The benchmark (README: Performance). Not part of CI: the full run takes 60-120 minutes on 2 cores.
#   bash benchmark/run.sh            full run, results in benchmark/results/
#   bash benchmark/run.sh --quick    for iteration: 1M sessions, this loader at its defaults and the raw read, about
#                                    5 minutes (results in benchmark/results-quick/)
# Options: --sizes=250000,1000000 --batches=1000,4000,8192 --workers=2,4,8 --kc24-segments=64,2048 --refresh-tokens=10000
#          --refresh-sessions=100000 --cluster-sessions=1000000 --client-sessions=3 --heap=4g
#          --phases=ours,kc24,refresh (loaders = ours,kc24) --jfr=SECONDS (JFR profile of each load) --out=DIR
#          --other-minors=26.5.6,26.4.7 (the largest size at the defaults and with adaptive-load=false on a node of
#          each; empty for none) --no-traffic-pairs=1 (that pair of loads so many times on each version, each pair in
#          the other order than the one before: what adaptive-load costs a load with no traffic)
#          --ours-mode=persistent (the session mode of those nodes; volatile: built with
#          --features-disabled=persistent-user-sessions, loading at the shipped preloading=auto, which preloads there)
#          --phases=planning (only when named; not in the full run): one node whose offline caches hold
#          --planning-max-count=1000000 entries (it keeps that less the 10% headroom), the database seeded in SQL to
#          each of --planning-sizes=1000000,10000000: planning time, PostgreSQL's time for its queries, the heap during
#          and after planning (GC log, class histograms by SIGQUIT), and one full key scan; about 35-45 minutes, figures
#          in the progress log only (results.md and runs.csv stay as they are); docs/performance.md, "Planning at scale"
#          --phases=window (only when named): the restart window, 3 nodes restarted together, then an open-model
#          load at each of --window-rates=40 requests/s over --window-tokens=2000 real offline tokens for
#          --window-seconds=120, the database holding --window-sessions=300000, in each of --window-modes=persistent,volatile
#          and --window-mixes=refresh,introspection (introspection: three of four requests introspect an offline
#          session's access token as an API would; read-heavy: the same with userinfo calls), with each of --window-spread=few,most (few: the requests cycle over
#          the real tokens; most: each request goes to another seeded session drawn at random from all, with offline
#          tokens minted with the realm's keys); stock 26.7.4, this provider at its defaults, with adaptive-load=false,
#          and with adaptive-load=false at max-sessions-per-second=--window-cap=2000 (--window-setups=stock,defaults,
#          uncapped,fixed; also off: the jar with preloading=false, and idle: the defaults with participating-nodes naming
#          no node, every node starting as at the defaults (removal listener, started-node marker) but none loading; and
#          stock-here: stock Keycloak on the provider's cluster and database, the provider's indexes dropped for its
#          windows, so that stock and the provider meet on the same nodes and data; stock-indexed: the same with the
#          provider's indexes kept, so that only the jar differs from off; a provider's setup followed by +option=value
#          pairs gives its nodes those options too, e.g. defaults+hold-readiness=false; baseline: another build of the
#          provider, --window-baseline-jar=PATH (e.g. an earlier commit's jar), at its defaults on the provider's cluster,
#          taking +option=value pairs as well; the list's order is the first repeat's, and each
#          further repeat begins one setup later, so that over as many repeats as setups each takes each place once),
#          each window --window-repeat=1 times after --window-warmups=0 unmeasured windows of the cell on each cluster
#          (a cluster's first windows are its slowest), the traffic
#          beginning --window-traffic-delay=0 s after every node is ready (a load balancer that admits nodes late). Per cell
#          (mode, mix, rate, spread): p50/p99/max/errors per 10 s window, steady state, loads, database CPU and statements, and a
#          chart (p99 per window, loaders' rate) in restart-window/ in the results folder, written as each cell ends; a
#          rerun with the same settings keeps the cells already there (delete one to measure it again), and
#          restart-window.md gathers them all
#          --shared-buffers=4GB (PostgreSQL's shared_buffers; 128MB reproduces runs before 2026-11-23)
#          --jvm-options=-XX:MaxTenuringThreshold=0,... (appended to this provider's nodes only: what a JVM setting
#          changes; another collector, e.g. -XX:+UseParallelGC, replaces Keycloak's G1 and no live heap is read)
#          --provider-options=quiet-start-seconds=0,... (this provider's options on every node of the ours phase, both
#          loads of each no-traffic pair included; the window phase takes them per setup, as above)
set -euo pipefail
cd "$(dirname "$0")/.."

bash docker/ensure-docker.sh
export TESTCONTAINERS_RYUK_DISABLED="${TESTCONTAINERS_RYUK_DISABLED:-true}"
export TESTCONTAINERS_HOST_OVERRIDE="${TESTCONTAINERS_HOST_OVERRIDE:-localhost}"

args=("$@")
if [[ " ${args[*]-} " == *" --quick "* && " ${args[*]-} " != *" --out="* ]]; then
    args+=("--out=benchmark/results-quick")
fi
./mvnw -B -q -Pbenchmark -DskipTests -pl benchmark -am verify "-Dbenchmark.args=${args[*]-}"
