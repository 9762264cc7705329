#!/usr/bin/env bash
# versions.sh PLAN_ID | versions.sh --patient Patient/ID: ListPlanVersions.
here=$(dirname "$0"); . "$here/_lib.sh"
if [ "${1:-}" = --patient ] && [ $# -eq 2 ]; then
  jq -n --arg p "$2" '{patient_ref: $p}'
elif [ $# -eq 1 ]; then
  jq -n --arg id "$1" '{plan_id: $id}'
else
  echo "usage: $0 PLAN_ID | $0 --patient Patient/ID" >&2; exit 2
fi | canoe_call ListPlanVersions
