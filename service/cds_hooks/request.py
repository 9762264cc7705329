"""A CDS Hooks request body, checked: the hook, its context, prefetch and FHIR authorization.

``parse_hook_request`` turns raw bytes into a frozen ``HookRequest`` or raises ``InputError``
(HTTP 400: not a usable CDS Hooks request, every problem named by its JSON path) or
``BundleError`` (HTTP 422: a well-formed request whose draft MedicationRequest is not valid R4).
Strictness (see README.md in this package): the CDS Hooks envelope is checked strictly; in a
draft MedicationRequest the elements that say which drug, for whom and under which id must be
valid R4, while other invalid elements are left out of the panel's copy and reported; draft
orders of other types (NutritionOrder, ServiceRequest, DSTU2 MedicationOrder...) are kept out
of the plan and not validated, because the panel does not deliberate about them and the
specification's own examples carry invalid ones. Nothing here does I/O or logs.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from fhir_mapping import r4
from service.cds_hooks.services import ServiceDefinition
from service.errors import BundleError, InputError, Issue
from service.jsonio import load_json_object

__all__ = [
    "FHIR_ID",
    "FhirAuthorization",
    "HookRequest",
    "parse_hook_request",
]

FHIR_ID: Final = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
_USER_TYPES: Final = frozenset({"Practitioner", "PractitionerRole", "Patient", "RelatedPerson"})
_ORDER_HOOKS: Final = frozenset({"order-select", "order-sign"})
_INTENTS: Final = frozenset(
    {
        "proposal",
        "plan",
        "order",
        "original-order",
        "reflex-order",
        "filler-order",
        "instance-order",
        "option",
    }
)


@dataclass(frozen=True, slots=True)
class FhirAuthorization:
    """The OAuth token the client lends us for its FHIR server. Never logged."""

    access_token: str
    token_type: str
    expires_in: int
    scope: str
    subject: str

    def __repr__(self) -> str:  # keep the token out of tracebacks and debug output
        return f"FhirAuthorization(scope={self.scope!r}, subject={self.subject!r})"


@dataclass(frozen=True, slots=True)
class HookRequest:
    hook: str
    hook_instance: str
    context: Mapping[str, Any]
    fhir_server: str = ""
    fhir_authorization: FhirAuthorization | None = None
    prefetch: Mapping[str, Any] | None = None  # None: the client sent no prefetch at all
    drafts: tuple[Mapping[str, Any], ...] = ()  # draft R4 MedicationRequests: all enter the record
    focus: tuple[str, ...] = ()  # "MedicationRequest/id" the cards are about (select: selected)
    # "Type/id" of draft orders we do not deliberate about: other order types, and medication
    # orders not written yet (no medicine or no intent)
    other_drafts: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # what was left out of the drafts, in words (no patient data)

    @property
    def patient_id(self) -> str:
        return str(self.context["patientId"])

    @property
    def user_id(self) -> str:
        return str(self.context.get("userId", ""))

    @property
    def can_fetch(self) -> bool:
        """A FHIR server is named: read with the lent token, or, without ``fhirAuthorization``,
        as the open server the specification allows (either way only where the client's egress
        policy permits)."""
        return bool(self.fhir_server)


def _is_uuid(value: str) -> bool:
    # The canonical 36-character form only: the specification says a UUID, and a bounded
    # shape keeps 100 kB strings out of logs and stores.
    if len(value) != 36:
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


class _Problems:
    def __init__(self) -> None:
        self.items: list[Issue] = []

    def add(self, path: str, message: str, code: str = "invalid") -> None:
        self.items.append(Issue("error", code, f"{path}: {message}", (path,)))

    def raise_if_any(self, summary: str) -> None:
        if self.items:
            first = self.items[0].diagnostics
            more = f" (and {len(self.items) - 1} more)" if len(self.items) > 1 else ""
            raise InputError(f"{summary}: {first}{more}", issues=tuple(self.items))


def _string(data: Mapping[str, Any], key: str, path: str, p: _Problems, *, required: bool) -> str:
    value = data.get(key)
    if value is None:
        if required:
            p.add(f"{path}.{key}" if path else key, "is required", "required")
        return ""
    if not isinstance(value, str) or not value.strip():
        p.add(f"{path}.{key}" if path else key, "must be a non-empty string")
        return ""
    return value


def _authorization(raw: object, p: _Problems) -> FhirAuthorization | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        p.add("fhirAuthorization", "must be an object")
        return None
    token = _string(raw, "access_token", "fhirAuthorization", p, required=True)
    token_type = _string(raw, "token_type", "fhirAuthorization", p, required=True)
    if token_type and token_type.lower() != "bearer":
        p.add("fhirAuthorization.token_type", "must be 'Bearer'")
    expires = raw.get("expires_in", 0)
    if not isinstance(expires, int) or isinstance(expires, bool):
        p.add("fhirAuthorization.expires_in", "must be an integer")
        expires = 0
    return FhirAuthorization(
        access_token=token,
        token_type=token_type,
        expires_in=expires,
        scope=str(raw.get("scope", "")),
        subject=str(raw.get("subject", "")),
    )


def _drafts(
    context: Mapping[str, Any], hook: str, p: _Problems
) -> tuple[tuple[Mapping[str, Any], ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    bundle = context.get("draftOrders")
    if bundle is None:
        p.add("context.draftOrders", f"is required for {hook}", "required")
        return (), (), (), ()
    if not isinstance(bundle, Mapping) or bundle.get("resourceType") != "Bundle":
        p.add("context.draftOrders", "must be a FHIR Bundle")
        return (), (), (), ()
    entries = bundle.get("entry", [])
    if not isinstance(entries, list):
        p.add("context.draftOrders.entry", "must be an array")
        return (), (), (), ()
    selected: set[str] | None = None
    if hook == "order-select":
        selections = context.get("selections")
        if not isinstance(selections, list) or not all(isinstance(s, str) for s in selections):
            p.add("context.selections", "is required for order-select: an array of Type/id")
        else:
            selected = set(selections)
    drafts: list[Mapping[str, Any]] = []
    others: list[str] = []
    unfinished: list[str] = []
    notes: list[str] = []
    bad: list[Issue] = []
    for i, entry in enumerate(entries):
        path = f"context.draftOrders.entry[{i}].resource"
        res = entry.get("resource") if isinstance(entry, Mapping) else None
        if not isinstance(res, Mapping) or not isinstance(res.get("resourceType"), str):
            p.add(path, "must be a FHIR resource")
            continue
        rtype, rid = res["resourceType"], res.get("id")
        ref = f"{rtype}/{rid}"
        if rtype != "MedicationRequest":
            others.append(ref)
            continue
        if _unfinished(res):
            # An order still being written (the official sandbox's Rx View fires order-select
            # on load with an empty draft): nothing to argue about yet, not an error.
            unfinished.append(ref)
            continue
        usable, problems, left_out = _check_medication_request(res, path)
        bad.extend(problems)
        notes.extend(left_out)
        drafts.append(usable)
    if bad:
        first = bad[0].diagnostics
        raise BundleError(
            f"draft MedicationRequest is not valid FHIR R4: {first}", issues=tuple(bad)
        )
    # order-select: the cards are about the orders just selected; the other drafts of the
    # encounter stay in the record as context (they may interact with the selected one).
    focus = tuple(
        f"MedicationRequest/{d.get('id')}"
        for d in drafts
        if selected is None or f"MedicationRequest/{d.get('id')}" in selected
    )
    return tuple(drafts), focus, tuple(others + unfinished), tuple(notes)


def _unfinished(res: Mapping[str, Any]) -> bool:
    """A draft MedicationRequest that names no medicine yet, or has no intent yet: the
    clinician is still writing it."""
    named = any(res.get(k) for k in ("medicationCodeableConcept", "medicationReference"))
    return not named or res.get("intent") is None


# Elements the panel relies on to know which drug, for whom, and to cite it: these must be
# valid R4. Any other element that fails R4 validation (the specification's "R4" order-sign
# example carries the STU3 ``dosageInstruction.doseQuantity``) is left out of the copy the panel
# sees, and the card says so, rather than refusing the whole order check.
_ESSENTIAL: Final = frozenset(
    {
        "resourceType",
        "id",
        "status",
        "intent",
        "medicationCodeableConcept",
        "medicationReference",
        "subject",
    }
)


def _errors(res: Mapping[str, Any]) -> list[tuple[tuple[object, ...], str]]:
    try:
        r4.MedicationRequest.model_validate(dict(res))
    except ValidationError as exc:
        return [(tuple(e.get("loc", ())), str(e.get("msg"))) for e in exc.errors()]
    return []


def _check_medication_request(
    res: Mapping[str, Any], path: str
) -> tuple[Mapping[str, Any], list[Issue], list[str]]:
    """(the copy the panel sees, blocking issues, notes on what was left out)."""
    issues: list[Issue] = []
    rid = res.get("id")
    if not isinstance(rid, str) or not FHIR_ID.match(rid):
        issues.append(
            Issue(
                "error",
                "value",
                f"{path}.id: {rid!r} is not a FHIR id ([A-Za-z0-9-.]{{1,64}}); the panel cites "
                "draft orders by id, so the id must be one",
                (f"{path}.id",),
            )
        )
    if res.get("status") != "draft":
        issues.append(
            Issue(
                "error",
                "value",
                f"{path}.status: {res.get('status')!r}; draftOrders hold orders not yet signed, "
                "status 'draft'",
                (f"{path}.status",),
            )
        )
    if res.get("intent") not in _INTENTS:
        issues.append(
            Issue(
                "error",
                "code-invalid",
                f"{path}.intent: {res.get('intent')!r} is not an R4 MedicationRequest intent",
                (f"{path}.intent",),
            )
        )
    copy = dict(res)
    notes: list[str] = []
    for _ in range(3):  # a few rounds: a removal can only shrink the set of errors
        errors = _errors(copy)
        if not errors:
            break
        dropped = False
        for loc, msg in errors:
            top = str(loc[0]) if loc else ""
            # A whole-resource error (pydantic's empty or "__root__" location) names the
            # resource itself, never "resource." with an empty element.
            where = ".".join(str(x) for x in loc if str(x) and not str(x).startswith("__"))
            element = f"{path}.{where}" if where else path
            if not top or top in _ESSENTIAL or top.startswith("__"):
                issues.append(Issue("error", "structure", f"{element}: {msg}", (element,)))
            elif top in copy:
                del copy[top]
                notes.append(f"{top} of draft MedicationRequest/{rid} is not valid R4 ({msg})")
                dropped = True
        if issues or not dropped:
            break
    else:
        if _errors(copy):
            issues.append(Issue("error", "structure", f"{path}: not a valid R4 resource", (path,)))
    return copy, issues[:20], notes


def parse_hook_request(body: bytes, service: ServiceDefinition) -> HookRequest:
    """Check a request for ``service``. InputError (400) or BundleError (422) when unusable."""
    data = load_json_object(body, what="CDS Hooks request")
    p = _Problems()
    hook = _string(data, "hook", "", p, required=True)
    if hook and hook != service.hook:
        p.add("hook", f"{hook!r} was sent to the {service.hook} service {service.id!r}")
    instance = _string(data, "hookInstance", "", p, required=True)
    if instance and not _is_uuid(instance):
        p.add("hookInstance", "must be a UUID (CDS Hooks: a universally unique identifier)")
    server = data.get("fhirServer") or ""
    if server and (not isinstance(server, str) or not re.match(r"^https?://", server)):
        p.add("fhirServer", "must be an http(s) URL")
        server = ""
    auth = _authorization(data.get("fhirAuthorization"), p)
    if auth is not None and not server:
        p.add("fhirAuthorization", "needs fhirServer (cds-r-1)")
    context = data.get("context")
    if not isinstance(context, Mapping):
        p.add("context", "is required: an object", "required")
        p.raise_if_any("not a usable CDS Hooks request")
        raise AssertionError("unreachable")
    patient_id = _string(context, "patientId", "context", p, required=True)
    if patient_id and not FHIR_ID.match(patient_id):
        p.add("context.patientId", "is not a FHIR id")
    user = _string(context, "userId", "context", p, required=True)
    if user:
        utype, _, uid = user.partition("/")
        if utype not in _USER_TYPES or not FHIR_ID.match(uid):
            p.add(
                "context.userId",
                "must be Practitioner/, PractitionerRole/, Patient/ or "
                "RelatedPerson/ followed by an id",
            )
    prefetch = data.get("prefetch")
    if prefetch is not None and not isinstance(prefetch, Mapping):
        p.add("prefetch", "must be an object")
        prefetch = None
    if isinstance(prefetch, Mapping):
        for key, value in prefetch.items():
            if value is not None and not (
                isinstance(value, Mapping) and isinstance(value.get("resourceType"), str)
            ):
                p.add(f"prefetch.{key}", "must be a FHIR resource or null")
    drafts: tuple[Mapping[str, Any], ...] = ()
    focus: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    if service.hook in _ORDER_HOOKS:
        p.raise_if_any("not a usable CDS Hooks request")
        drafts, focus, others, notes = _drafts(context, service.hook, p)
    p.raise_if_any("not a usable CDS Hooks request")
    return HookRequest(
        hook=hook,
        hook_instance=instance,
        context=context,
        fhir_server=str(server).rstrip("/"),
        fhir_authorization=auth,
        prefetch=prefetch,
        drafts=drafts,
        focus=focus,
        other_drafts=others,
        notes=notes,
    )
