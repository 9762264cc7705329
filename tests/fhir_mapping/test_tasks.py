"""Contestation Tasks in: parsing into core actions, the plan -> contest round trip, and every
bad Task shape refused with the right IssueType code and FHIRPath expression."""

from __future__ import annotations

import copy
import json

import pytest

from fhir_mapping.careplan import (
    careplan_of,
    deliberation_from_bundle,
    graph_from_careplan,
    plan_bundle,
)
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from fhir_mapping.outcome import operation_outcome
from fhir_mapping.tasks import (
    ORIGINAL_AUTHORED_ON,
    not_after,
    parse_tasks,
    refusal_bundle,
    rejected_tasks,
    task_outcomes,
)
from service.core import (
    AcceptArgument,
    AddArgument,
    DecideOption,
    DecideProblem,
    EditArgument,
    RejectArgument,
    apply_all,
    evaluate,
)
from service.core.model import Edge
from service.errors import StaleVersionError, TaskError
from service.versions import rewrite_synthesis
from tests.fhir_mapping.factories import PATIENT, PRACTITIONER, input_resources, small_deliberation
from tests.fhir_mapping.fhir_checks import assert_references_resolve, assert_valid, schema_errors
from tests.support.contest import contest_bundle

RECORDED = "2026-11-30T10:00:00Z"
CONTESTED = "2026-11-30T11:30:00Z"


def plan(d=None):
    d = d or small_deliberation()
    return plan_bundle(d, evaluate(d), recorded=RECORDED)


def inp(kind, **value):
    ((key, v),) = value.items()
    return {"type": {"coding": [{"system": CS_INPUT, "code": kind}]}, key: v}


def task(action, *inputs, tid="task-1", version=1, **over):
    t = {
        "resourceType": "Task",
        "id": tid,
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": CS_ACTION, "code": action}]},
        "focus": {"reference": f"CarePlan/plan-7f3a9c-v{version}"},
        "for": {"reference": PATIENT},
        "requester": {"reference": PRACTITIONER},
        "authoredOn": "2026-11-30T11:00:00Z",
        "reasonCode": {"text": "patient prefers to keep sleeping tablet"},
        "input": list(inputs),
    }
    t.update(over)
    return {k: v for k, v in t.items() if v is not None}


def bundle_of(*tasks, kind="transaction"):
    return {"resourceType": "Bundle", "type": kind, "entry": [{"resource": t} for t in tasks]}


def parse(raw, d=None):
    d = d or small_deliberation()
    return parse_tasks(raw, plan=d, careplan_id=f"{d.plan_id}-v{d.version}")


def strongest_supporter(graph, option_id):
    sup = [a for a in graph[option_id]["arguments"] if a["stance"] == "support" and "sigma" in a]
    return max(sup, key=lambda a: a["sigma"])["id"]


# ----------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("option_id", ["opt-deprescribe-zolpidem", "opt-hba1c-monitoring"])
def test_reject_the_strongest_supporter_round_trip(option_id):
    before = plan()
    graph = graph_from_careplan(careplan_of(before)[1])
    assert graph[option_id]["activity"] is not None  # included
    target = strongest_supporter(graph, option_id)

    after = contest_bundle(
        before, json.dumps(task("reject", inp("target", valueString=target))), recorded=CONTESTED
    )

    assert_valid(after)
    _, cp = careplan_of(after)
    assert cp["id"] == "plan-7f3a9c-v2" and cp["meta"]["versionId"] == "2"
    assert cp["replaces"] == [{"reference": "CarePlan/plan-7f3a9c-v1"}]
    g2 = graph_from_careplan(cp)
    score = g2[option_id]["evaluation"]["score"]
    assert (g2[option_id]["activity"] is not None) == (score > 0.5)
    rejected = next(a for a in g2[option_id]["arguments"] if a["id"] == target)
    assert rejected["status"] == "rejected" and "sigma" not in rejected
    if option_id == "opt-deprescribe-zolpidem":
        assert score <= 0.5  # worked by hand in factories: ~0.495, it drops out

    prov = next(
        e["resource"] for e in after["entry"] if e["resource"]["resourceType"] == "Provenance"
    )
    assert prov["activity"]["coding"][0]["code"] == "UPDATE"
    assert prov["recorded"] == CONTESTED
    people = [a for a in prov["agent"] if a["who"]["reference"] == PRACTITIONER]
    assert people and people[0]["type"]["coding"][0]["code"] == "author"
    entities = {(e["role"], e["what"]["reference"]) for e in prov["entity"]}
    assert ("revision", "CarePlan/plan-7f3a9c-v1/_history/1") in entities
    assert ("source", "Task/task-1") in entities
    assert prov["reason"] == [{"text": "patient prefers to keep sleeping tablet"}]

    (done,) = [e["resource"] for e in after["entry"] if e["resource"]["resourceType"] == "Task"]
    assert done["status"] == "completed"
    assert done["output"][0]["valueReference"] == {
        "reference": "CarePlan/plan-7f3a9c-v2/_history/2"
    }

    contest_ext = [x for x in cp["extension"] if x["url"].endswith("/contestation")]
    assert len(contest_ext) == 1
    # everything resolves: in the new Bundle, or to the input (the patient's resources, the old
    # CarePlan, and the Practitioner the Task names as requester)
    inputs = dict(input_resources())
    inputs["CarePlan/plan-7f3a9c-v1"] = careplan_of(before)[1]
    inputs[PRACTITIONER] = {"resourceType": "Practitioner", "id": "prac-042"}
    assert_references_resolve(after, inputs)

    recovered = deliberation_from_bundle(after)
    expected = apply_all(
        small_deliberation(),
        [(RejectArgument(target), "task-1", PRACTITIONER, "2026-11-30T11:00:00Z",
          "patient prefers to keep sleeping tablet")],
    )  # fmt: skip
    # the new version's synthesis is written again from it (service.versions.write_version)
    assert recovered.meta.synthesis != small_deliberation().meta.synthesis
    assert recovered == rewrite_synthesis(small_deliberation(), expected, evaluate(expected))


def test_a_bundle_of_tasks_applies_in_order_as_one_version():
    before = plan()
    tasks = bundle_of(
        task(
            "add",
            inp("target", valueString="opt-pt-referral"),
            inp("text", valueString="Falls class stopped last month."),
            inp("stance", valueCode="support"),
            inp("strength", valueDecimal=0.9),
            inp("fact", valueReference={"reference": "Condition/cond-falls"}),
            inp("relation-add", valueString="attack arg-nurse-attends"),
            tid="t-add",
        ),
        task(
            "edit",
            inp("target", valueString="human-t-add"),
            inp("strength", valueDecimal=0.95),
            tid="t-edit",
        ),
        task(
            "decide",
            inp("target", valueString="prob-obesity"),
            inp("decision", valueCode="accept"),
            tid="t-dec",
        ),
    )
    after = contest_bundle(before, tasks, recorded=CONTESTED)
    assert_valid(after)
    d2 = deliberation_from_bundle(after)
    assert d2.version == 2
    assert [c.id for c in d2.contestations] == ["t-add", "t-edit", "t-dec"]
    added = next(a for a in d2.options[2].arguments if a.id == "human-t-add")
    assert (added.tau, added.origin, added.facts) == (0.95, "human", ("Condition/cond-falls",))
    assert Edge("human-t-add", "arg-nurse-attends", "attack") in d2.options[2].edges
    ev2 = evaluate(d2)
    assert ev2.option("opt-pt-referral").decision == "include"
    assert ev2.problem("prob-obesity").decided_by == "human"
    _, cp = careplan_of(after)
    assert "Condition/cond-obesity" in [a["reference"] for a in cp["addresses"]]
    statuses = [
        e["resource"]["status"] for e in after["entry"] if e["resource"]["resourceType"] == "Task"
    ]
    assert statuses == ["completed"] * 3


def test_a_contested_plan_can_be_contested_again():
    v2 = contest_bundle(
        plan(), task("accept", inp("target", valueString="arg-gp-hba1c")), recorded=CONTESTED
    )
    v3 = contest_bundle(
        v2,
        task(
            "decide",
            inp("target", valueString="opt-pt-referral"),
            inp("decision", valueCode="include"),
            tid="task-2",
            version=2,
        ),
        recorded="2026-11-30T12:00:00Z",
    )  # fmt: skip
    _, cp = careplan_of(v3)
    assert cp["id"] == "plan-7f3a9c-v3"
    assert cp["replaces"] == [{"reference": "CarePlan/plan-7f3a9c-v2"}]
    assert graph_from_careplan(cp)["opt-pt-referral"]["evaluation"]["decidedBy"] == "human"
    assert len(deliberation_from_bundle(v3).contestations) == 2
    assert_valid(v3)


def test_the_whole_bundle_is_refused_when_one_task_fails():
    before = plan()
    snapshot = copy.deepcopy(before)
    tasks = bundle_of(
        task("reject", inp("target", valueString="arg-pharm-zdrug"), tid="ok"),
        task("reject", inp("target", valueString="arg-nope"), tid="bad"),
    )
    with pytest.raises(TaskError) as err:
        contest_bundle(before, tasks, recorded=CONTESTED)
    assert err.value.issues[0].expression == ("Bundle.entry[1].resource.input[0].valueString",)
    assert before == snapshot


# ----------------------------------------------------------------------------- parsing


def test_each_action_becomes_its_core_action():
    (a,) = parse(task("accept", inp("target", valueString="arg-gp-hba1c")))
    assert a.action == AcceptArgument("arg-gp-hba1c")
    assert (a.task_id, a.actor, a.at) == ("task-1", PRACTITIONER, "2026-11-30T11:00:00Z")
    assert a.reason == "patient prefers to keep sleeping tablet"
    (r,) = parse(task("reject", inp("target", valueString="arg-gp-hba1c")))
    assert r.action == RejectArgument("arg-gp-hba1c")
    (e,) = parse(
        task(
            "edit",
            inp("target", valueString="arg-nurse-falls"),
            inp("text", valueString="Three falls."),
            inp("strength", valueDecimal=0.55),
            inp("evidence", valueString="ev-a"),
            inp("evidence", valueString="ev-b"),
            inp("relation-remove", valueString="arg-nurse-falls support arg-pharm-zdrug"),
            inp("relation-add", valueString="attack arg-gp-insomnia"),
        )
    )
    assert e.action == EditArgument(
        "arg-nurse-falls",
        text="Three falls.",
        evidence=("ev-a", "ev-b"),
        tau=0.55,
        add_relations=(Edge("arg-nurse-falls", "arg-gp-insomnia", "attack"),),
        remove_relations=(Edge("arg-nurse-falls", "arg-pharm-zdrug", "support"),),
    )
    (ad,) = parse(
        task(
            "add",
            inp("target", valueString="opt-hba1c-monitoring"),
            inp("text", valueString="Hypoglycaemia risk."),
            inp("stance", valueCode="attack"),
            inp("strength", valueDecimal=1),
            inp("role", valueString="pharmacist"),
        )
    )
    assert isinstance(ad.action, AddArgument)
    assert ad.action.argument.id == "human-task-1"
    assert (ad.action.argument.role, ad.action.argument.stance, ad.action.argument.tau) == (
        "pharmacist",
        "attack",
        1.0,
    )
    (do,) = parse(
        task(
            "decide",
            inp("target", valueString="opt-pt-referral"),
            inp("decision", valueCode="exclude"),
        )
    )
    assert do.action == DecideOption("opt-pt-referral", "exclude")
    (dp,) = parse(
        task("decide", inp("target", valueString="prob-t2dm"), inp("decision", valueCode="reject"))
    )
    assert dp.action == DecideProblem("prob-t2dm", "reject")


def test_input_accepts_bytes_text_and_mappings_and_versioned_focus():
    t = task("accept", inp("target", valueString="arg-gp-hba1c"))
    t["focus"] = {"reference": "CarePlan/plan-7f3a9c-v1/_history/1"}
    for raw in (t, json.dumps(t), json.dumps(t).encode()):
        assert len(parse(raw)) == 1


def test_the_same_task_applied_twice_is_a_no_op():
    t = task("reject", inp("target", valueString="arg-pt-balance"))
    v2 = contest_bundle(plan(), t, recorded=CONTESTED)
    d2 = deliberation_from_bundle(v2)
    again = dict(t, focus={"reference": "CarePlan/plan-7f3a9c-v2"})
    v2b = contest_bundle(v2, again, recorded=CONTESTED)
    assert deliberation_from_bundle(v2b) == d2
    assert v2b == v2  # the plan the Task already produced, with its trail intact
    assert careplan_of(v2b)[1]["replaces"] == [{"reference": "CarePlan/plan-7f3a9c-v1"}]


def test_task_outcomes_validate_and_carry_the_reason():
    parsed = parse(task("accept", inp("target", valueString="arg-gp-hba1c")))
    (rej,) = task_outcomes(parsed, status="rejected", reason="stale plan", at=CONTESTED)
    assert rej["status"] == "rejected" and rej["statusReason"] == {"text": "stale plan"}
    assert_valid(rej)
    assert parsed[0].resource["status"] == "requested"  # input untouched
    rej2 = rejected_tasks(
        json.dumps(bundle_of(task("accept"), task("reject", tid="t2"))), "bad bundle"
    )
    assert [t["status"] for t in rej2] == ["rejected", "rejected"]
    assert rejected_tasks(b"{oops", "x") == []


@pytest.mark.parametrize(
    ("authored", "kept"),
    [
        ("2026-11-30T11:30:00Z", True),  # the very time of writing
        ("2026-11-30T12:30:00+01:00", True),  # the same instant, another offset
        ("2026-11-30T11:30:00.001Z", False),  # a millisecond after it
        ("2026-11-30T13:00:00+01:00", False),
        ("2026-11-30", True),  # a date: its earliest instant is not after the writing
        ("2026-12", False),
        ("2027", False),
    ],
)
def test_not_after_keeps_a_time_up_to_the_writing_and_clamps_a_later_one(authored, kept):
    assert not_after(authored, CONTESTED) == (authored if kept else CONTESTED)


def test_a_task_authored_after_it_is_written_is_clamped_and_keeps_the_time_sent():
    """A sender's clock ahead of ours: authoredOn <= lastModified (FHIR Task inv-1) holds, and
    the time sent is kept in the project's extension; the plan's contestation is dated so too."""
    ahead = "2026-12-01T09:00:00Z"
    t = task("reject", inp("target", valueString="arg-pt-balance"), authoredOn=ahead)
    after = contest_bundle(plan(), t, recorded=CONTESTED)
    assert_valid(after)
    (done,) = [e["resource"] for e in after["entry"] if e["resource"]["resourceType"] == "Task"]
    assert done["authoredOn"] == done["lastModified"] == CONTESTED
    assert done["extension"] == [{"url": ORIGINAL_AUTHORED_ON, "valueDateTime": ahead}]
    (c,) = deliberation_from_bundle(after).contestations
    assert c.at == CONTESTED
    on_time = contest_bundle(plan(), task("reject", inp("target", valueString="arg-pt-balance")),
                             recorded=CONTESTED)  # fmt: skip
    (kept,) = [e["resource"] for e in on_time["entry"] if e["resource"]["resourceType"] == "Task"]
    assert kept["authoredOn"] == "2026-11-30T11:00:00Z" and "extension" not in kept


def test_a_refused_task_authored_ahead_is_clamped_too():
    ahead = "2030-01-01T00:00:00Z"
    (rej,) = rejected_tasks(json.dumps(task("accept", authoredOn=ahead)), "bad", at=CONTESTED)
    assert rej["authoredOn"] == rej["lastModified"] == CONTESTED
    assert rej["extension"] == [{"url": ORIGINAL_AUTHORED_ON, "valueDateTime": ahead}]
    assert_valid(rej)


# ----------------------------------------------------------------------------- refusals

T = "Bundle.entry[1].resource"  # the bad Task sits second, after a good one
GOOD = task("accept", inp("target", valueString="arg-gp-hba1c"), tid="good")


def _bad(t):
    return bundle_of(GOOD, t)


def tgt(x):
    return inp("target", valueString=x)


def acc(**over):
    """A good 'accept' Task with one element overridden (None removes it)."""
    return _bad(task("accept", tgt("arg-gp-hba1c"), **over))


def edit(*inputs):
    return _bad(task("edit", tgt("arg-gp-hba1c"), *inputs))


def add(stance="support", *, option="opt-pt-referral", text=True):
    extra = [inp("text", valueString="t")] if text else []
    return _bad(
        task(
            "add",
            tgt(option),
            *extra,
            inp("stance", valueCode=stance),
            inp("strength", valueDecimal=0.5),
        )
    )


def decide(target, decision):
    return _bad(task("decide", tgt(target), inp("decision", valueCode=decision)))


NO_VALUE = {"type": {"coding": [{"system": CS_INPUT, "code": "text"}]}}
FOREIGN = {"coding": [{"system": "http://x", "code": "accept"}]}
I0, I1, I2 = (f"{T}.input[{k}]" for k in range(3))
BAD_SHAPES = [
    ("missing id", acc(tid=None), "required", f"{T}.id"),
    ("status draft", acc(status="draft"), "value", f"{T}.status"),
    ("intent plan", acc(intent="plan"), "value", f"{T}.intent"),
    ("no code", acc(code=None), "required", f"{T}.code"),
    ("unknown action", _bad(task("delete", tgt("arg-gp-hba1c"))), "code-invalid", f"{T}.code"),
    ("foreign code system", acc(code=FOREIGN), "code-invalid", f"{T}.code"),
    ("no focus", acc(focus=None), "required", f"{T}.focus"),
    ("other plan", acc(focus={"reference": "CarePlan/other-v1"}), "not-found", f"{T}.focus"),
    ("other patient", acc(**{"for": {"reference": "Patient/x"}}), "business-rule", f"{T}.for"),
    ("no requester", acc(requester=None), "required", f"{T}.requester"),
    ("patient requester", acc(requester={"reference": PATIENT}), "invalid", f"{T}.requester"),
    ("no authoredOn", acc(authoredOn=None), "required", f"{T}.authoredOn"),
    ("bad authoredOn", acc(authoredOn="yesterday"), "value", f"{T}.authoredOn"),
    ("unknown element", acc(colour="red"), "structure", f"{T}.colour"),
    ("unknown argument", _bad(task("reject", tgt("arg-nope"))), "not-found", f"{I0}.valueString"),
    ("unknown option", add(option="opt-nope"), "not-found", f"{I0}.valueString"),
    ("unknown decide target", decide("nope", "include"), "not-found", f"{I0}.valueString"),
    ("strength above 1", edit(inp("strength", valueDecimal=1.5)), "value", f"{I1}.valueDecimal"),
    ("strength below 0", edit(inp("strength", valueDecimal=-0.1)), "value", f"{I1}.valueDecimal"),
    ("strength a word", edit(inp("strength", valueDecimal="high")), "value", f"{I1}.valueDecimal"),
    ("strength a string", edit(inp("strength", valueString="0.4")), "value", f"{I1}.valueString"),
    ("bad stance", add("maybe"), "code-invalid", f"{I2}.valueCode"),
    ("unknown input", edit(inp("colour", valueString="red")), "code-invalid", f"{I1}.type"),
    ("input without value", edit(NO_VALUE), "value", I1),
    ("input not for reject", _bad(task("reject", tgt("x"), inp("text", valueString="x"))),
     "not-supported", I1),
    ("repeated input", edit(inp("text", valueString="a"), inp("text", valueString="b")),
     "structure", I2),
    ("add without text", add(text=False), "required", f"{T}.input"),
    ("no target", _bad(task("accept")), "required", f"{T}.input"),
    ("option decided 'accept'", decide("opt-pt-referral", "accept"), "value", f"{I1}.valueCode"),
    ("relation garbage", edit(inp("relation-add", valueString="likes everyone")), "value",
     f"{I1}.valueString"),
    ("relation across options", edit(inp("relation-add", valueString="support arg-pt-balance")),
     "not-found", f"{I1}.valueString"),
    ("duplicate task id", bundle_of(GOOD, dict(GOOD)), "duplicate", f"{T}.id"),
    ("entry not a Task", bundle_of(GOOD, {"resourceType": "Patient", "id": "p"}), "structure", T),
    ("entry without resource", {**bundle_of(GOOD), "entry": [{"resource": GOOD}, {}]}, "required",
     T),
    ("batch bundle", bundle_of(GOOD, kind="batch"), "not-supported", "Bundle.type"),
    ("empty bundle", {**bundle_of(GOOD), "entry": []}, "required", "Bundle.entry"),
    ("not a Task at all", {"resourceType": "Patient", "id": "p"}, "structure", "resourceType"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("shape", "code", "expression"),
    [(b, c, x) for _, b, c, x in BAD_SHAPES],
    ids=[n for n, *_ in BAD_SHAPES],
)
def test_bad_task_shapes_are_refused_with_code_and_expression(shape, code, expression):
    with pytest.raises(TaskError) as err:
        contest_bundle(plan(), shape, recorded=CONTESTED)
    assert (err.value.issues[0].code, err.value.issues[0].expression) == (code, (expression,))
    oo = operation_outcome(err.value)
    assert_valid(oo)
    assert oo["issue"][0]["code"] == code
    assert oo["issue"][0]["expression"] == [expression]


def test_invalid_json_is_a_structure_issue():
    with pytest.raises(TaskError) as err:
        contest_bundle(plan(), b"{not json", recorded=CONTESTED)
    assert err.value.issues[0].code == "structure"
    assert_valid(operation_outcome(err.value))


def test_every_problem_in_a_task_is_reported_at_once():
    t = task("accept", inp("target", valueString="arg-gp-hba1c"), status="draft", intent="plan")
    with pytest.raises(TaskError) as err:
        parse(t)
    assert [(i.code, i.expression) for i in err.value.issues] == [
        ("value", ("Task.status",)),
        ("value", ("Task.intent",)),
    ]


def test_a_stale_version_is_a_conflict_naming_the_current_version():
    v2 = contest_bundle(
        plan(), task("accept", inp("target", valueString="arg-gp-hba1c")), recorded=CONTESTED
    )
    stale = task("reject", inp("target", valueString="arg-gp-hba1c"), tid="late", version=1)
    with pytest.raises(StaleVersionError) as err:
        contest_bundle(v2, bundle_of(stale), recorded=CONTESTED)
    assert err.value.current_version == 2
    assert err.value.issues[0].code == "conflict"
    assert err.value.issues[0].expression == ("Bundle.entry[0].resource.focus",)
    assert_valid(operation_outcome(err.value))


def test_a_refusal_by_the_core_still_names_the_task_element():
    # the edge already exists: only the core knows, and its field maps back to the input
    t = task("edit", inp("target", valueString="arg-nurse-falls"),
             inp("relation-add", valueString="support arg-pharm-zdrug"))  # fmt: skip
    with pytest.raises(TaskError) as err:
        contest_bundle(plan(), bundle_of(GOOD, t), recorded=CONTESTED)
    issue = err.value.issues[0]
    assert issue.code == "invalid"
    assert issue.expression == (f"{T}.input[1].valueString",)


def test_outputs_of_refusals_validate_against_the_schema():
    for _, shape, _, _ in BAD_SHAPES[:5]:
        for t in rejected_tasks(shape, "refused"):
            if t.get("id"):
                assert schema_errors(t) == [] or t.get("status") != "rejected"


def test_a_refusal_answers_with_the_outcome_and_the_tasks_rejected():
    raw = json.dumps(_bad(task("reject", tgt("arg-nope"))))
    with pytest.raises(TaskError) as err:
        contest_bundle(plan(), raw, recorded=CONTESTED)
    out = refusal_bundle(raw, err.value, at=CONTESTED)
    assert_valid(out)
    oo, *tasks = (e["resource"] for e in out["entry"])
    assert oo["resourceType"] == "OperationOutcome"
    assert oo["issue"][0]["expression"] == [f"{I0}.valueString"]
    assert [t["status"] for t in tasks] == ["rejected", "rejected"]
    assert "no argument 'arg-nope'" in tasks[1]["statusReason"]["text"]
    assert tasks[1]["lastModified"] == CONTESTED
