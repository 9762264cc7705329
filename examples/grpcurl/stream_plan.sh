#!/usr/bin/env bash
# stream_plan.sh BUNDLE.json: StreamPlan. One JSON object per event: progress events first,
# then {"plan": {...}} with its CarePlan Bundle decoded.
here=$(dirname "$0"); . "$here/_lib.sh"
[ $# -eq 1 ] || { echo "usage: $0 BUNDLE.json" >&2; exit 2; }
jq -n --rawfile b "$1" '{bundle_json: ($b | @base64)}' | canoe_call StreamPlan \
  | jq 'if has("plan") then .plan.careplan_bundle_json |= (@base64d | fromjson) else . end'
