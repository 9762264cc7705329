#!/usr/bin/env bash
# plan.sh BUNDLE.json: GeneratePlan. Prints the reply with the CarePlan Bundle decoded:
#   {"plan_id": ..., "version": 1, "careplan_bundle_json": {<FHIR Bundle>}, "summary": {...}}
here=$(dirname "$0"); . "$here/_lib.sh"
[ $# -eq 1 ] || { echo "usage: $0 BUNDLE.json" >&2; exit 2; }
jq -n --rawfile b "$1" '{bundle_json: ($b | @base64)}' | canoe_call GeneratePlan \
  | decode careplan_bundle_json
