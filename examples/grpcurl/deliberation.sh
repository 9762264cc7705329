#!/usr/bin/env bash
# deliberation.sh PLAN_ID [VERSION]: GetDeliberation. Prints the canoe.deliberation/1 document.
here=$(dirname "$0"); . "$here/_lib.sh"
[ $# -ge 1 ] || { echo "usage: $0 PLAN_ID [VERSION]" >&2; exit 2; }
jq -n --arg id "$1" --arg v "${2:-}" \
    '{plan_id: $id} + (if $v == "" then {} else {version: ($v | tonumber)} end)' \
  | canoe_call GetDeliberation | jq '.deliberation_json | @base64d | fromjson'
