"""FHIR R4 Bundle in -> validated ``ParsedBundle`` -> frozen ``PatientProfile``.

The service's only way in for patient data. ``parse_bundle`` checks the JSON, validates every
entry's resource against the R4 (R4B) model of its ``resourceType`` one entry at a time, so each
problem names its entry (``Bundle.entry[3].resource.status``), resolves references and checks
that the clinical resources belong to the one Patient. All problems of a bundle are gathered into
one ``BundleError`` (``issues`` tuple, capped). ``build_profile`` maps the validated resources to
the FHIR-free profile. Nothing here logs, reads the clock or touches the network; bad input never
escapes as anything but ``BundleError`` or ``LimitError``.

Decisions:

* Bundle types accepted: ``collection``, ``transaction``, ``batch``, ``searchset`` and
  ``document``: all carry resources as they are. ``history`` (several versions of one resource,
  deletions), ``message`` and the ``*-response`` types are refused (``not-supported``).
* Exactly one Patient (``required`` when none). Several distinct Patients: ``business-rule``:
  the bundle is valid FHIR, but this service plans for one person per bundle.
* An unknown ``resourceType`` (``MedicationOrder``, misspellings, datatypes): ``not-supported``.
* A Condition, MedicationRequest, Observation, AllergyIntolerance, Encounter, Immunization,
  DiagnosticReport, ServiceRequest or MedicationStatement
  whose subject (``patient`` for AllergyIntolerance and Immunization)
  does not resolve in the bundle is refused (``not-found`` at ``...resource.subject``); one that
  resolves to something other than the Patient: ``invalid``. The whole bundle is refused rather
  than the facts dropped: a bundle that mixes patients' records is not safe to plan from.
  Observation and Encounter may lack a subject in R4; such facts are not attached and are
  reported as ``UnusedFact``.
* ``as_of`` is the latest date among the patient's usable facts (never the wall clock), else
  ``Bundle.timestamp``, and never after the day the request was ``received``; with neither,
  ``build_profile`` refuses the bundle (``required``).
* Dates a record cannot have are not facts, and not errors either (the rest of the record is
  still worth planning from): a clinical date after ``received`` plus ``clock_skew`` (an EHR
  clock running ahead), a clinical date before the birth date (or, with no usable birth date,
  more than ``MAX_AGE_YEARS`` before the request), a birth date after the request or implying
  an age above ``MAX_AGE_YEARS``. Each is listed as an ``UnusedFact`` with the reason, as
  implausible values are; an Observation with such a date is left out, other resources are
  kept without the date. The caller passes ``received`` (the transports: the time the request
  is handled, from their injectable clock); without it only the dates' order is checked.
* Repeated records of one active coded problem are folded into one ``Condition`` (``duplicates``).
* ``max_resources`` counts entries and is checked before any model is validated (``LimitError``).
* A resource's own ``extension`` list is checked shallowly (an array of objects, each naming
  its ``url``) and then left out of the model: no profile fact is read from it, and a record
  may carry any number. ``modifierExtension`` and extensions inside elements are validated.
* Entries without a resource are skipped when ``request.method`` is GET, HEAD or DELETE
  (nothing to plan from); otherwise they are a ``required`` issue.

Speed: every resource is validated in full, but a complex element (a CodeableConcept, a
Reference, a component...) is validated once per distinct content within a bundle and the model
reused (``_Shared``): a record repeats the same status codes, subjects and categories hundreds
of times. Likewise a resource that differs from one validated before only by its ``id`` (an
entry, only by its ``fullUrl``) gets a copy of that model with its own ``id`` validated on its
own. Whenever that quick path refuses anything, the resource is validated again as it came,
so every issue is exactly the one whole-resource validation reports. Resources of one bundle may
therefore share element objects; nothing downstream mutates them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, TypeVar, cast

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from fhir_mapping import _profile, r4
from fhir_mapping._issues import IssueList, validation_issues
from fhir_mapping._parsed import ParsedBundle, ParsedEntry
from fhir_mapping._refs import RefIndex, entry_ref
from service.errors import BundleError, CanoeError, Issue, LimitError
from service.jsonio import load_json_object
from service.record.profile import PatientProfile
from service.work import checkpoint

__all__ = [
    "ACCEPTED_BUNDLE_TYPES",
    "DEFAULT_CLOCK_SKEW",
    "PATIENT_LINKED",
    "ParsedBundle",
    "ParsedEntry",
    "build_profile",
    "ingest",
    "parse_bundle",
]

ACCEPTED_BUNDLE_TYPES: Final = frozenset(
    {"collection", "transaction", "batch", "searchset", "document"}
)
_BUNDLE_TYPES: Final = ACCEPTED_BUNDLE_TYPES | {
    "history",
    "message",
    "transaction-response",
    "batch-response",
}
_NO_RESOURCE_METHODS: Final = frozenset({"GET", "HEAD", "DELETE"})
# How far after the request a record's date may lie and still count: an EHR clock ahead of ours,
# or a date written in a time zone ahead of UTC.
DEFAULT_CLOCK_SKEW: Final = timedelta(days=1)

# Resource types the profile maps, and the element that names their patient. R4 requires it
# for all but Observation and Encounter (the models enforce that); for those it is optional.
PATIENT_LINKED: Final[Mapping[str, str]] = {
    "Condition": "subject",
    "MedicationRequest": "subject",
    "AllergyIntolerance": "patient",
    "Observation": "subject",
    "Encounter": "subject",
    "Immunization": "patient",
    "DiagnosticReport": "subject",
    "ServiceRequest": "subject",
    "MedicationStatement": "subject",
}
# Types whose entries must be citable (Type/id), because facts come from them.
_NEEDS_REF: Final = frozenset({"Patient", "Medication", *PATIENT_LINKED})


def _load(raw: bytes | bytearray | memoryview | str | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    return load_json_object(raw, what="request body", error=BundleError, expression="Bundle")


# What one JSON object of a Bundle costs at the peak of planning it: its validated FHIR model,
# the profile facts and the output made from it. Measured with tests/benchmarks/bench_scaling.py
# (tracemalloc peak over JSON objects: about 1.4 KiB for records of repeated orders); 6 KiB
# leaves room for records whose elements cost more to model, so the estimate errs on the safe
# side.
_PEAK_BYTES_PER_OBJECT: Final = 6 * 1024
# A resource's own extensions are checked shallowly and never modelled: what they cost is the
# decoded JSON and the parser's working memory (about 1.4 KiB an extension at the peak for a
# Patient with 100,000 of them, the same benchmark).
_PEAK_BYTES_PER_UNREAD_OBJECT: Final = 2 * 1024


def planning_memory_mb(doc: Mapping[str, Any]) -> float:
    """The estimated peak memory of planning the decoded Bundle ``doc``, from its count of JSON
    objects (every FHIR element with content is one), those under a resource's own
    ``extension`` (never modelled) at a lower cost: a walk of the decoded JSON, before any
    model is built."""
    unread_lists = [
        e["resource"]["extension"]
        for e in _raw_entries(doc)
        if isinstance(e.get("resource"), Mapping)
        and isinstance(e["resource"].get("extension"), list)
    ]
    skip = {id(x) for x in unread_lists}
    read = _objects([doc], skip)
    unread = _objects(unread_lists, set())
    return (read * _PEAK_BYTES_PER_OBJECT + unread * _PEAK_BYTES_PER_UNREAD_OBJECT) / 2**20


def _raw_entries(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries = doc.get("entry")
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _objects(roots: list[Any], skip: set[int]) -> int:
    """How many JSON objects ``roots`` hold, not counting inside the lists whose ids are in
    ``skip``."""
    objects, stack = 0, list[object](roots)
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            objects += 1
            stack.extend(
                v for v in value.values() if isinstance(v, Mapping | list) and id(v) not in skip
            )
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, Mapping | list))
    return objects


def _within_budget(doc: Mapping[str, Any], budget_mb: int) -> None:
    need = planning_memory_mb(doc)
    if need > budget_mb:
        text = (
            f"planning this Bundle would need about {need:.0f} MB; the per-plan memory budget "
            f"is {budget_mb} MB (CANOE_MAX_PLAN_MEMORY_MB)"
        )
        raise LimitError(text, issues=(Issue("error", "too-costly", text, ("Bundle",)),))


def _fail(issues: IssueList) -> BundleError:
    frozen = issues.freeze()
    first = frozen[0]
    where = first.expression[0] if first.expression else "Bundle"
    return BundleError(
        f"Bundle rejected with {len(issues)} issue(s); first at {where}: {first.diagnostics}",
        issues=frozen,
    )


def _check_shell(
    doc: Mapping[str, Any], issues: IssueList
) -> tuple[str, list[Any], r4.Bundle | None] | None:
    """Top-level checks: (type, raw entries, Bundle without entries), or None when nothing more
    can be checked."""
    rt = doc.get("resourceType")
    if rt != "Bundle":
        if rt is None:
            issues.add("required", "resourceType is missing; expected 'Bundle'", "Bundle")
        else:
            issues.add(
                "invalid", "expected a FHIR Bundle (resourceType 'Bundle')", "Bundle.resourceType"
            )
        return None
    btype = doc.get("type")
    if btype is None:
        issues.add("required", "Bundle.type is missing", "Bundle.type")
    elif not isinstance(btype, str) or btype not in _BUNDLE_TYPES:
        issues.add("value", "Bundle.type is not a Bundle type code", "Bundle.type")
    elif btype not in ACCEPTED_BUNDLE_TYPES:
        issues.add(
            "not-supported",
            f"Bundle type {btype!r} is not supported; send a collection, transaction, batch, "
            "searchset or document Bundle",
            "Bundle.type",
        )
    entries = doc.get("entry")
    if entries is None or entries == []:
        issues.add("required", "Bundle has no entries; it must hold a Patient", "Bundle.entry")
        return None
    if not isinstance(entries, list):
        issues.add("structure", "Bundle.entry must be an array", "Bundle.entry")
        return None
    shell = None
    try:
        shell = r4.Bundle.model_validate({k: v for k, v in doc.items() if k != "entry"})
    except ValidationError as exc:
        issues.extend(validation_issues(exc, "Bundle"))
    except Exception:  # fhir.resources raises more than ValidationError on odd input
        issues.add("structure", "Bundle could not be read", "Bundle")
    return (str(btype), entries, shell)


def _validate_entry(
    i: int, raw_entry: object, issues: IssueList, shared: _Shared
) -> ParsedEntry | None:
    where = f"Bundle.entry[{i}]"
    if not isinstance(raw_entry, Mapping):
        issues.add("structure", "entry must be an object", where)
        return None
    resource = raw_entry.get("resource")
    shell = {k: v for k, v in raw_entry.items() if k != "resource"}
    try:
        shape = shared.shape(r4.BundleEntry, shell, "fullUrl")
        entry_model = shared.same_shape(shape, shell)
        if entry_model is None:
            entry_model = _validate_resource(r4.BundleEntry, shell, shared)
            shared.remember(shape, entry_model)
    except ValidationError as exc:
        issues.extend(validation_issues(exc, where))
        entry_model = None
    except Exception:
        issues.add("structure", "entry could not be read", where)
        entry_model = None
    if resource is None:
        method = entry_model.request.method if entry_model and entry_model.request else None
        if method not in _NO_RESOURCE_METHODS:
            issues.add("required", "entry has no resource", f"{where}.resource")
        return None
    if not isinstance(resource, Mapping):
        issues.add("structure", "resource must be an object", f"{where}.resource")
        return None
    rt = resource.get("resourceType")
    rt_where = f"{where}.resource.resourceType"
    if rt is None:
        issues.add("required", "resource has no resourceType", rt_where)
        return None
    if not isinstance(rt, str):
        issues.add("value", "resourceType must be a string", rt_where)
        return None
    try:
        model = r4.get_model(rt)
    except KeyError:
        issues.add(
            "not-supported",
            f"{rt[:64]!r} is not a FHIR R4 resource type"
            + (" (it is the DSTU2 name of MedicationRequest)" if rt == "MedicationOrder" else ""),
            rt_where,
        )
        return None
    resource = _without_unread_extensions(resource, f"{where}.resource", issues)
    if resource is None:
        return None
    shape = shared.shape(model, resource, "id")
    parsed = shared.same_shape(shape, resource)
    if parsed is None:
        parsed = _validate_new_shape(model, resource, f"{where}.resource", issues, shared, shape)
    if parsed is None:
        return None
    full_url = str(raw_entry.get("fullUrl") or "")
    ref = entry_ref(rt, parsed.id, full_url)
    if not ref and rt in _NEEDS_REF:
        issues.add(
            "required",
            f"{rt} has neither an id nor a fullUrl that names it; its facts could not be cited",
            f"{where}.resource.id",
        )
        return None
    return ParsedEntry(i, full_url, ref, parsed)


_URI: Final = re.compile(r"\S+")  # FHIR's uri: no whitespace; a url may not be empty


def _without_unread_extensions(
    resource: Mapping[str, Any], where: str, issues: IssueList
) -> Mapping[str, Any] | None:
    """``resource`` without its own ``extension`` list, which no profile fact is read from, after
    a shallow check of each (an object naming its ``url``); None when one fails it.

    A record may carry any number of extensions (100,000 on a Patient were seen), and a FHIR
    model of each costs kilobytes for nothing the plan reads. ``modifierExtension`` is kept and
    validated in full: it changes the meaning of the resource, so it is never ignored."""
    extensions = resource.get("extension")
    if extensions is None:
        return resource
    bad: str | None = None
    if not isinstance(extensions, list):
        bad, at = "extension must be an array", f"{where}.extension"
    else:
        for k, ext in enumerate(extensions):
            url = ext.get("url") if isinstance(ext, Mapping) else None
            if not isinstance(url, str) or _URI.fullmatch(url) is None:
                bad, at = "an extension must be an object with a url", f"{where}.extension[{k}]"
                break
    if bad is not None:
        issues.add("structure", bad, at)
        return None
    return {k: v for k, v in resource.items() if k != "extension"}


def _validate_new_shape(
    model: type[r4.Resource],
    resource: Mapping[str, Any],
    where: str,
    issues: IssueList,
    shared: _Shared,
    shape: _Shape | None,
) -> r4.Resource | None:
    """``resource`` validated in full (dates as JSON strings first), remembered by its shape."""
    unquoted = (
        []
        if shape is not None and _dates_quoted(model, shape.rest)
        else list(itertools.islice(_unquoted_dates(model, resource, where), 20))
    )
    for at in unquoted:
        # The models read a number as seconds since 1970: 12345 would become a 1970 date.
        issues.add("value", "a date, dateTime, instant or time must be a JSON string", at)
    if unquoted:
        return None
    try:
        parsed = _validate_resource(model, resource, shared)
    except ValidationError as exc:
        issues.extend(validation_issues(exc, where))
        return None
    except Exception:  # e.g. RecursionError, or a KeyError from a nested unknown resourceType
        issues.add("structure", f"{model.__name__} could not be read", where)
        return None
    return shared.remember(shape, parsed)


_Model = TypeVar("_Model", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class _Shape:
    """A resource (or entry) by its content but one element that tells otherwise identical
    ones apart (``id``; an entry's ``fullUrl``)."""

    model: type[BaseModel]
    varying: str  # the element's JSON name
    rest: bytes  # canonical JSON of everything else


class _Shared:
    """Validated complex elements of one bundle by (datatype, canonical JSON of the content),
    and validated resources and entries by their ``_Shape``."""

    __slots__ = ("models", "shapes")

    def __init__(self) -> None:
        self.models: dict[tuple[type[BaseModel], bytes], BaseModel] = {}
        self.shapes: dict[_Shape, BaseModel] = {}

    def validated(self, datatype: type[BaseModel], value: object) -> BaseModel:
        key = (datatype, orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
        model = self.models.get(key)
        if model is None:
            model = self.models[key] = datatype.model_validate(value)
        return model

    @staticmethod
    def shape(model: type[BaseModel], value: Mapping[str, Any], varying: str) -> _Shape | None:
        """The shape of ``value``; None when it has none JSON can write (an integer beyond 64
        bits, say): then it is validated in full, and refused there."""
        rest = {k: v for k, v in value.items() if k != varying}
        try:
            return _Shape(model, varying, orjson.dumps(rest, option=orjson.OPT_SORT_KEYS))
        except orjson.JSONEncodeError:
            return None

    def same_shape(self, shape: _Shape | None, value: Mapping[str, Any]) -> Any:
        """A model of ``value`` from one of the same shape validated before (its varying element
        validated on its own), else None: validate it in full."""
        seen = None if shape is None else self.shapes.get(shape)
        if shape is None or seen is None:
            return None
        name, adapter = _element(shape.model, shape.varying)
        try:
            own = adapter.validate_python(value.get(shape.varying))
        except ValidationError:
            return None  # validated in full, so the issue is the one a whole validation names
        return seen.model_copy(update={name: own})

    def remember(self, shape: _Shape | None, model: _Model) -> _Model:
        if shape is not None:
            self.shapes[shape] = model
        return model


_ELEMENTS: dict[tuple[type[BaseModel], str], tuple[str, TypeAdapter[Any]]] = {}


def _element(model: type[BaseModel], json_name: str) -> tuple[str, TypeAdapter[Any]]:
    """(field name, validator) of the element of ``model`` that JSON names ``json_name``."""
    found = _ELEMENTS.get((model, json_name))
    if found is None:
        name, field = next(
            (n, f) for n, f in model.model_fields.items() if (f.alias or n) == json_name
        )
        found = _ELEMENTS[(model, json_name)] = (name, TypeAdapter(cast(Any, field.annotation)))
    return found


def _validate_resource(model: type[_Model], resource: Mapping[str, Any], shared: _Shared) -> _Model:
    """``model.model_validate(resource)`` (a resource, or an entry without its resource), with
    its complex elements taken from ``shared``."""
    fields = _complex_fields(model)
    try:
        quick: dict[str, Any] = {}
        for name, value in resource.items():
            datatype = fields.get(name)
            if datatype is None:
                quick[name] = value
            elif isinstance(value, dict):
                quick[name] = shared.validated(datatype, value)
            elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
                quick[name] = [shared.validated(datatype, v) for v in value]
            else:
                quick[name] = value
        return model.model_validate(quick)
    except Exception:  # refused somewhere: validate as it came, so the issues are exact
        return model.model_validate(resource)


_COMPLEX_FIELDS: dict[type[BaseModel], dict[str, type[BaseModel]]] = {}
_TYPE_NAME: Final = re.compile(r"\babc\.(\w+)Type\b")


def _complex_fields(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """JSON name -> datatype model of every element of ``model`` typed as one FHIR datatype or
    backbone element (not a resource: ``contained`` stays as it is)."""
    found = _COMPLEX_FIELDS.get(model)
    if found is None:
        found = {}
        for name, field in model.model_fields.items():
            names = set(_TYPE_NAME.findall(repr(field.annotation)))
            datatype = getattr(r4, names.pop(), None) if len(names) == 1 else None
            if (
                isinstance(datatype, type)
                and issubclass(datatype, BaseModel)
                and not issubclass(datatype, r4.Resource)
            ):
                found[field.alias or name] = datatype
        _COMPLEX_FIELDS[model] = found
    return found


_DATE_MARKERS: Final = re.compile(r"\b(?:Date|DateTime|Instant|Time)\(\)")
_DATE_FIELDS: dict[type[BaseModel], frozenset[str]] = {}


def _date_fields(model: type[BaseModel]) -> frozenset[str]:
    """JSON names of the elements of ``model`` typed date, dateTime, instant or time."""
    found = _DATE_FIELDS.get(model)
    if found is None:
        found = _DATE_FIELDS[model] = frozenset(
            field.alias or name
            for name, field in model.model_fields.items()
            if _DATE_MARKERS.search(repr(field.annotation))
        )
    return found


_DATES_NOT_STRINGS: dict[type[BaseModel], re.Pattern[bytes]] = {}


def _date_names(model: type[BaseModel]) -> frozenset[str]:
    """JSON names of every date-typed element ``_unquoted_dates`` reads in a ``model``, its
    datatypes and backbone elements included."""
    names: set[str] = set()
    seen: set[type[BaseModel]] = set()
    stack = [model]
    while stack:
        m = stack.pop()
        if m not in seen:
            seen.add(m)
            names.update(_date_fields(m))
            stack.extend(_complex_fields(m).values())
    return frozenset(names)


def _dates_quoted(model: type[BaseModel], canonical: bytes) -> bool:
    """True when no date-typed element can hold anything but a string: the walk of
    ``_unquoted_dates`` is then skipped. ``canonical`` is the resource's canonical JSON (its
    ``_Shape``), searched once for the name of a date element followed by a value that is not
    a string (nor null): a number, true or false, an object or an array. Inside a JSON string
    a quote is escaped, so no text of the record looks like this; a name that merely could be
    a date's (the same name elsewhere) sends the resource to the walk."""
    pattern = _DATES_NOT_STRINGS.get(model)
    if pattern is None:
        names = b"|".join(re.escape(n.encode()) for n in sorted(_date_names(model)))
        pattern = _DATES_NOT_STRINGS[model] = re.compile(b'"(?:' + names + b')":(?!"|null)')
    return pattern.search(canonical) is None


def _unquoted_dates(model: type[BaseModel], value: object, where: str) -> Iterator[str]:
    """The path of every date-typed element of ``value`` (JSON read as ``model``) that is not
    a JSON string, datatypes and backbone elements included."""
    if not isinstance(value, Mapping):
        return
    dates, complex_ = _date_fields(model), _complex_fields(model)
    for key, item in value.items():
        if key not in dates and key not in complex_:
            continue
        many = isinstance(item, list)
        for k, one in enumerate(item if many else (item,)):
            at = f"{where}.{key}[{k}]" if many else f"{where}.{key}"
            if key in dates:
                if one is not None and not isinstance(one, str):
                    yield at
            else:
                yield from _unquoted_dates(complex_[key], one, at)


def _subject_reference(entry: ParsedEntry) -> tuple[str, r4.Reference | None]:
    element = PATIENT_LINKED[entry.resource_type]
    value = getattr(entry.resource, element, None)
    return element, value


def _check_links(
    entries: tuple[ParsedEntry, ...], refs: RefIndex, patient: ParsedEntry, issues: IssueList
) -> None:
    for e in entries:
        if e.resource_type not in PATIENT_LINKED:
            continue
        element, subject = _subject_reference(e)
        where = f"{e.expression}.{element}"
        if subject is None:
            continue  # only optional subjects can be absent here (the models enforce the rest)
        target = refs.resolve(subject.reference)
        if target is None:
            issues.add(
                "not-found",
                f"{e.resource_type} refers to a patient that is not in the Bundle",
                where,
            )
        elif entries[target].ref != patient.ref:
            issues.add(
                "invalid",
                f"{e.resource_type} {element} must be the Bundle's Patient",
                where,
            )


def _unexpected(exc: Exception, stage: str) -> BundleError:
    # Last line of defence: a shape the checks above did not foresee must still reach the caller
    # as a BundleError, not a traceback. Code "exception" marks it as our gap, not theirs.
    return BundleError(
        f"Bundle could not be {stage}",
        issues=(Issue("error", "exception", f"{stage} failed: {type(exc).__name__}", ("Bundle",)),),
    )


def parse_bundle(
    raw: bytes | bytearray | memoryview | str | Mapping[str, Any],
    *,
    max_resources: int | None = None,
    memory_budget_mb: int | None = None,
) -> ParsedBundle:
    """Validate a FHIR R4 Bundle (JSON bytes/str or an already decoded mapping).

    Raises ``BundleError`` with every issue found (entry and field named) and ``LimitError`` when
    the bundle holds more than ``max_resources`` entries, or when planning it would need more
    than ``memory_budget_mb`` by ``planning_memory_mb`` (both checked before any model
    validation).
    """
    try:
        return _parse(raw, max_resources, memory_budget_mb)
    except CanoeError:
        raise
    except Exception as exc:
        raise _unexpected(exc, "parsed") from exc


def _parse(
    raw: bytes | bytearray | memoryview | str | Mapping[str, Any],
    max_resources: int | None,
    memory_budget_mb: int | None = None,
) -> ParsedBundle:
    doc = _load(raw)
    if memory_budget_mb is not None:
        _within_budget(doc, memory_budget_mb)
    issues = IssueList()
    top = _check_shell(doc, issues)
    if top is None:
        raise _fail(issues)
    btype, raw_entries, shell = top
    if max_resources is not None and len(raw_entries) > max_resources:
        raise LimitError(
            f"Bundle holds {len(raw_entries)} entries; the limit is {max_resources}",
            issues=(
                Issue(
                    "error",
                    "too-costly",
                    f"Bundle holds {len(raw_entries)} entries; the limit is {max_resources}",
                    ("Bundle.entry",),
                ),
            ),
        )

    parsed: list[ParsedEntry] = []
    shared = _Shared()
    for i, raw_entry in enumerate(raw_entries):
        checkpoint()
        entry = _validate_entry(i, raw_entry, issues, shared)
        if entry is not None:
            parsed.append(entry)
    # Re-number positions so ParsedBundle.entries[k] is addressable, keeping the Bundle index.
    entries = tuple(parsed)
    refs = RefIndex()
    for pos, e in enumerate(entries):
        clash = refs.add(pos, e.ref, e.full_url)
        if clash is not None:
            issues.add(
                "duplicate",
                f"{e.resource_type} appears twice (same id or fullUrl as entry "
                f"{entries[clash].index})",
                e.expression,
            )

    patients = [e for e in entries if e.resource_type == "Patient"]
    if not patients:
        # A structurally broken Patient entry was already reported; do not pile on.
        if not any(_raw_type(x) == "Patient" for x in raw_entries):
            issues.add("required", "Bundle has no Patient to plan for", "Bundle.entry")
    elif len({p.ref for p in patients}) > 1:
        for p in patients[1:]:
            issues.add(
                "business-rule",
                f"Bundle holds {len(patients)} Patients; a plan is for exactly one patient",
                p.expression,
            )
    if patients and len({p.ref for p in patients}) == 1:
        _check_links(entries, refs, patients[0], issues)
    if issues:
        raise _fail(issues)
    return ParsedBundle(btype, patients[0], entries, shell, refs)


def _raw_type(raw_entry: object) -> object:
    if isinstance(raw_entry, Mapping):
        res = raw_entry.get("resource")
        if isinstance(res, Mapping):
            return res.get("resourceType")
    return None


def build_profile(
    parsed: ParsedBundle,
    *,
    received: datetime | None = None,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
) -> PatientProfile:
    """Map a validated bundle to the frozen, FHIR-free ``PatientProfile`` for a request
    ``received`` at that time (timezone-aware; see the module's decisions on dates).

    Raises ``BundleError`` only when the record holds no date at all to fix ``as_of``."""
    try:
        return _profile.build(parsed, received, clock_skew)
    except CanoeError:
        raise
    except Exception as exc:
        raise _unexpected(exc, "mapped") from exc


def ingest(
    raw: bytes | bytearray | memoryview | str | Mapping[str, Any],
    *,
    max_resources: int | None = None,
    received: datetime | None = None,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
    memory_budget_mb: int | None = None,
) -> PatientProfile:
    """``parse_bundle`` then ``build_profile``."""
    parsed = parse_bundle(raw, max_resources=max_resources, memory_budget_mb=memory_budget_mb)
    return build_profile(parsed, received=received, clock_skew=clock_skew)
