# Shared by the grpcurl examples: where the service is, how to call it, how to read errors.
#   CANOE_ADDR   host:port of the gRPC service (default 127.0.0.1:50051)
#   CANOE_TOKEN  bearer token, when the service runs with auth (CANOE_AUTH_MODE tokens|jwt)
#   CANOE_TLS    1: TLS (with CANOE_CACERT: the CA file to trust); default plaintext
#   GRPCURL      the grpcurl binary (default: grpcurl on PATH)
# FHIR payloads are protobuf `bytes`: in grpcurl's JSON they are base64 strings, so every
# script wraps its input with jq's @base64 and unwraps the answer with @base64d.
# Exit codes are the `canoe` CLI's, not grpcurl's (which exits 64 + the gRPC code, so 69 would
# mean NOT_FOUND where the CLI means "backend unavailable"):
#   2  the service refused the request (bad input, unknown plan, stale version, a limit,
#      credentials); 69 the service could not be reached, is unavailable or ran past the
#      deadline; 70 anything else. The gRPC code is in the JSON printed on stderr.
set -euo pipefail

ADDR=${CANOE_ADDR:-127.0.0.1:50051}
GRPCURL=${GRPCURL:-grpcurl}
SERVICE=canoe.v1.CarePlanService

canoe_call() {  # canoe_call METHOD < request.json  -> the reply JSON on stdout
  local method=$1 out rc
  local args=(-max-msg-sz 67108864 -format-error -d @)
  if [ "${CANOE_TLS:-0}" = 1 ]; then
    [ -n "${CANOE_CACERT:-}" ] && args+=(-cacert "$CANOE_CACERT")
  else
    args+=(-plaintext)
  fi
  [ -n "${CANOE_TOKEN:-}" ] && args+=(-H "authorization: Bearer $CANOE_TOKEN")
  local errors
  errors=$(mktemp)
  set +e
  out=$("$GRPCURL" "${args[@]}" "$ADDR" "$SERVICE/$method" 2>"$errors")
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    # -format-error prints the status as JSON on stderr; its detail's fhir_json (base64) is the
    # FHIR OperationOutcome: print the status with the outcome decoded.
    jq '{code, message, operationOutcome:
          ([.details[]? | (.fhir_json // .fhirJson // empty) | @base64d | fromjson][0])}' \
      "$errors" >&2 2>/dev/null || cat "$errors" >&2
    rm -f "$errors"
    return "$(exit_code "$rc")"
  fi
  rm -f "$errors"
  printf '%s\n' "$out"
}

exit_code() {  # exit_code GRPCURL_STATUS -> the CLI's exit code for it
  local rc=$1
  # Below 64 grpcurl failed before any answer (it could not connect, above all).
  [ "$rc" -lt 64 ] && { echo 69; return; }
  case $((rc - 64)) in
    3 | 5 | 7 | 8 | 9 | 11 | 16) echo 2 ;;  # INVALID_ARGUMENT NOT_FOUND PERMISSION_DENIED
                                            # RESOURCE_EXHAUSTED FAILED_PRECONDITION
                                            # OUT_OF_RANGE UNAUTHENTICATED
    4 | 14) echo 69 ;;                      # DEADLINE_EXCEEDED UNAVAILABLE
    *) echo 70 ;;
  esac
}

# Reply fields: grpcurl prints the proto field names (snake_case).
decode() {  # decode FIELD...  -> the reply with those base64 fields decoded into JSON
  local filter=. f
  for f in "$@"; do
    filter="$filter | if has(\"$f\") then .$f |= (@base64d | fromjson) else . end"
  done
  jq "$filter"
}
