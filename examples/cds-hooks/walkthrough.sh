#!/usr/bin/env bash
# walkthrough.sh [WORK_DIR]: the CDS Hooks bridge end to end on one machine, no EHR needed.
#
#   1. `canoe cds keys` makes what an EHR would have: a signing key and the trusted-clients file
#      that names it (and the FHIR server it may send as fhirServer);
#   2. `canoe serve` starts with that file (CANOE_CDS_JWKS_FILE); its CDS URL defaults to
#      http://localhost:$CANOE_HTTP_PORT, which is the `aud` every call is signed for;
#   3. `canoe cds call` signs each request (fresh jti, 60 s) and prints the service's answer:
#      discovery, a patient-view summary card, an order-sign card about a risky draft order;
#   4. the clinician overrides the order card with a reason: that feedback becomes a
#      contestation of the plan (a new CarePlan version), through `canoe cds call HOOK/feedback`.
#
# Environment: CANOE_HTTP_PORT (default 8080), CANOE_GRPC_PORT (default 50051), CDS_REQUESTS
# (default examples/fixtures/cds-hooks/requests: the constructed requests of the test suite).
# A port something already listens on (another `canoe serve`, say) stops it before anything
# starts, naming the port: the calls would otherwise reach that other server.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CANOE_HTTP_PORT=${CANOE_HTTP_PORT:-8080}
export CANOE_GRPC_PORT=${CANOE_GRPC_PORT:-50051}

listened_on() {  # listened_on PORT: true when a connection to it on this machine succeeds
  local host
  for host in 127.0.0.1 localhost; do
    (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null && return 0
  done
  return 1
}
for name in CANOE_HTTP_PORT CANOE_GRPC_PORT; do
  if listened_on "${!name}"; then
    echo "walkthrough.sh: port ${!name} ($name) is already taken on this machine;" \
      "stop what listens there or set $name to a free port" >&2
    exit 2
  fi
done

work=${1:-$(mktemp -d)}
mkdir -p "$work"
requests=${CDS_REQUESTS:-$here/../fixtures/cds-hooks/requests}
keys="$work/keys"

echo "== 1. keys for a sandbox EHR ($keys)"
canoe cds keys "$keys" --force --iss https://ehr.local/sandbox 2>/dev/null \
  --fhir-server https://ehr.example.org/fhir >/dev/null

echo "== 2. canoe serve on HTTP port $CANOE_HTTP_PORT"
CANOE_CDS_JWKS_FILE="$keys/trusted-clients.json" \
CANOE_STORE_DSN="sqlite:///$work/canoe.sqlite3" \
CANOE_METRICS_PORT=${CANOE_METRICS_PORT:-0} \
  canoe serve 2>"$work/serve.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  curl -fsS "http://localhost:$CANOE_HTTP_PORT/healthz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.2
done

call() { canoe cds call "$@" --client "$keys/client.json"; }

echo "== 3a. discovery"
call discovery | jq -r '.services[] | "  \(.id) (\(.hook))"'

echo "== 3b. patient-view: the care-plan summary card"
call patient-view "$requests/patient-view_trey_berge.json" > "$work/patient-view.json"
jq -r '.cards[] | "  [\(.indicator)] \(.summary)"' "$work/patient-view.json"

echo "== 3c. order-sign: the panel argues about the draft orders"
call order-sign "$requests/order-sign_adan_portillo_diphenhydramine.json" > "$work/order-sign.json"
jq -r '.cards[] | "  [\(.indicator)] \(.summary)"' "$work/order-sign.json"

echo "== 4. the clinician overrides the order card, with a reason"
jq '{feedback: [.cards[0] | {card: .uuid, outcome: "overridden",
      outcomeTimestamp: "2026-11-30T12:00:00Z",
      overrideReason: {reason: .overrideReasons[0], userComment: "short course, monitored"}}]}' \
  "$work/order-sign.json" > "$work/feedback.json"
call order-sign/feedback "$work/feedback.json" | tee "$work/feedback-answer.json" \
  | jq -r '"  recorded \(.recorded), contested \(.contested)"'
