#!/usr/bin/env bash
# contest.sh PLAN_ID VERSION TASKS.json: Contest. TASKS.json is one Task or a Bundle of Tasks
# (examples/tasks/); their focus is re-aimed at CarePlan/PLAN_ID-vVERSION first, and their ids
# made that plan version's own (a Task id is applied once per store: the same example on a
# second plan would be refused as "applied to another plan"), so the examples apply to any plan
# of the same bundle, as often as you like. Prints the reply with both Bundles decoded.
here=$(dirname "$0"); . "$here/_lib.sh"
[ $# -eq 3 ] || { echo "usage: $0 PLAN_ID VERSION TASKS.json" >&2; exit 2; }
focus="CarePlan/$1-v$2"
jq --arg focus "$focus" '
    def aim: .focus.reference = $focus | .id = "\(.id)-\($focus | .[9:17])-v\($focus | split("-v") | last)";
    if .resourceType == "Task" then aim else .entry |= map(.resource |= aim) end' "$3" \
  | jq -c --arg id "$1" --argjson v "$2" '{plan_id: $id, version: $v, tasks_json: (tojson | @base64)}' \
  | canoe_call Contest | decode careplan_bundle_json tasks_bundle_json
