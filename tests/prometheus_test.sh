#!/usr/bin/env bash
# Observability end to end: Debian's real Prometheus server scrapes rgpud's --metrics
# endpoint every second while a configured tenant runs the matmul example through rgpud;
# the tenant's commands and device time are then read back through Prometheus's HTTP API.
#
#   prometheus_test.sh BUILD_DIR MATMUL_BINARY
set -eu
build=$1
matmul=$2
here=$(cd "$(dirname "$0")" && pwd)
prom=${PROMETHEUS:-/usr/bin/prometheus}
[ -x "$prom" ] || { echo "prometheus not installed ($prom)"; exit 1; }
dir=$(mktemp -d /tmp/rgpu-prom.XXXXXX)
trap '[ -n "${PROM_PID:-}" ] && kill $PROM_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
metrics_port=$(free_port)
prom_port=$(free_port)
token=prom-$RANDOM$RANDOM
cat >"$dir/rgpud.toml" <<TOML
[[tenant]]
id = "observed"
token_hash = "$(echo "$token" | "$build/server/rgpud" --hash-token)"
TOML
cat >"$dir/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: rgpud
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
YAML

"$prom" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$dir/prometheus.log" 2>&1 &
PROM_PID=$!

query() {  # PROMQL: prints the first result's value, or nothing
  curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null || true
}
export -f query
export RGPU_TOKEN=$token MATMUL=$matmul PROM_PORT=$prom_port

RGPUD_ARGS="--config $dir/rgpud.toml --metrics 127.0.0.1:$metrics_port" \
  "$here/with_rgpud.sh" "$build" bash -c '
    "$MATMUL" --platform rgpu --n 256 --repeat 3 || exit 1
    # Prometheus scrapes every second; give it up to 60 s (it starts slowly on a busy host).
    for i in $(seq 120); do
      commands=$(query "rgpu_commands_total{tenant=\"observed\"}")
      busy=$(query "rgpu_device_busy_seconds_total{tenant=\"observed\"}")
      if [ -n "$commands" ] && [ -n "$busy" ] &&
         python3 -c "import sys; sys.exit(not (float($commands) > 0 and float($busy) > 0))"; then
        echo "through Prometheus: tenant observed: $commands commands, ${busy} s of device time"
        exit 0
      fi
      sleep 0.5
    done
    echo "Prometheus never reported the tenant (commands=\"$commands\" busy=\"$busy\")"
    curl -s "http://127.0.0.1:$PROM_PORT/api/v1/targets" | head -c 2000; echo
    exit 1'
