"""The ``canoe`` command line: plan a bundle offline, recompute a deliberation, contest, serve.

For integrators: ``definitions`` writes the FHIR package a hospital publishes under its own base;
``cds keys`` / ``cds call`` are a local CDS Hooks client (a key pair, and signed calls).

Exit codes tell bad input from failures, so scripts can react:
    0  success
    1  canoe eval: a required finding was missed or an unsafe recommendation included;
       recompute --check: the document states values its inputs do not give
    2  bad input (the bundle, Task or document was refused; an OperationOutcome is printed)
    69 the model backend is unavailable (EX_UNAVAILABLE)
    70 internal error (EX_SOFTWARE)
Errors print a one-line message on stderr (and the OperationOutcome as JSON with --format fhir),
never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from service.core.evaluation import Evaluation
    from service.core.model import Deliberation
    from service.pipeline import PlanResult
    from service.settings import Settings
    from service.versions import WrittenVersion

from service.errors import CanoeError, InputError, Issue
from service.jsonio import load_json_object

__all__ = ["main"]

EXIT_OK, EXIT_INPUT, EXIT_UNAVAILABLE, EXIT_INTERNAL = 0, 2, 69, 70
EXIT_EVAL_FAILED = 1  # canoe eval: a finding was missed or an unsafe activity included
EXIT_DIFFERS = 1  # recompute --check: the document states values its inputs do not give


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CanoeError as exc:
        return _fail(exc, fhir=getattr(args, "format", "") == "fhir")
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # an internal failure: say so briefly, exit distinctly
        if os.environ.get("CANOE_DEBUG"):
            raise
        print(
            f"canoe: internal error ({type(exc).__name__}); set CANOE_DEBUG=1 for details",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canoe", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    plan = sub.add_parser("plan", help="plan a FHIR R4 Bundle end to end")
    plan.add_argument("bundle", type=Path)
    plan.add_argument(
        "--format",
        choices=("text", "fhir", "json"),
        default="text",
        help="text (default): the clinician summary (--detail: the full reasoning); "
        "fhir: CarePlan+Provenance Bundle (the bytes the service stores and returns); "
        "json: the canoe.deliberation/1 document",
    )
    plan.add_argument(
        "--detail",
        action="store_true",
        help="with --format text: every argument with its id, strengths, evidence and clashes",
    )
    plan.add_argument(
        "--for",
        dest="audience",
        choices=("clinician", "patient"),
        default="clinician",
        help="patient: the patient version in plain words (with --format fhir: the Communication "
        "the EHR can show the patient)",
    )
    plan.add_argument("--deliberation", type=Path, help="also write the deliberation document here")
    plan.add_argument("--backend", choices=("embedded", "triton"), help="override CANOE_BACKEND")
    plan.add_argument(
        "--created",
        help="ISO timestamp of the request (default: now): stamps the plan, and no date in the "
        "record may lie after it (beyond CANOE_FHIR_CLOCK_SKEW_S)",
    )
    plan.add_argument(
        "--source-base",
        default="",
        help="FHIR base URL of the system that holds the record: the plan's references to it "
        "point there (default: the Bundle's own fullUrls, else kept and marked as the source's)",
    )
    plan.add_argument("--timings", action="store_true", help="print stage timings on stderr")
    plan.add_argument("--no-progress", action="store_true", help="no progress display")
    plan.set_defaults(func=_cmd_plan)

    rec = sub.add_parser(
        "recompute",
        help="recompute every derived value of a deliberation",
        description="Recompute every derived value of a canoe.deliberation/1 document from its "
        "inputs and print the recomputed document; stderr says how many stated values differed.",
    )
    rec.add_argument("document", type=Path)
    rec.add_argument(
        "--check",
        action="store_true",
        help="an auditor's verdict instead of the document: list every derived value that "
        "differs from its recomputation (path, stated, recomputed) and exit 1 if any does",
    )
    rec.set_defaults(func=_cmd_recompute)

    con = sub.add_parser("contest", help="apply FHIR Task contestations to a plan Bundle")
    con.add_argument("plan", type=Path, help="the plan Bundle (from plan --format fhir)")
    con.add_argument("tasks", type=Path, help="a Task or a Bundle of Tasks")
    con.add_argument("--recorded", help="ISO timestamp for the new version (default: now)")
    con.add_argument(
        "--format",
        choices=("fhir", "text", "json"),
        default="fhir",
        help="fhir (default): the new version's CarePlan+Provenance Bundle; text: its clinician "
        "summary; json: its canoe.deliberation/1 document. stderr always says what changed",
    )
    con.set_defaults(func=_cmd_contest)

    srv = sub.add_parser(
        "serve",
        help="run the gRPC service (and the CDS Hooks HTTP side)",
        description="Run the gRPC service, the CDS Hooks HTTP side and Prometheus metrics in\n"
        "one process until SIGTERM/SIGINT. Configured by CANOE_* environment variables (or\n"
        "the same keys in lower case in the YAML file named by CANOE_CONFIG_FILE).",
        epilog=_serve_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    srv.add_argument(
        "--workers", type=int, help="processes sharing the ports (default: one per usable CPU)"
    )
    srv.add_argument("--host", help="listen address (default: CANOE_GRPC_HOST, 127.0.0.1)")
    srv.add_argument(
        "--max-concurrent-plans",
        type=int,
        metavar="N",
        help="plans and contestations at once per worker; more are refused as busy, with a "
        "retry hint (default: CANOE_MAX_CONCURRENT_PLANS, 8)",
    )
    srv.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="INSECURE: listen on a non-loopback address although gRPC callers are not "
        "authenticated (auth_mode none); anyone who reaches the port can read and change plans",
    )
    srv.add_argument(
        "--allow-any-audience",
        action="store_true",
        help="INSECURE: in auth_mode jwt, start without CANOE_AUTH_AUDIENCE or "
        "CANOE_AUTH_ISSUER, accepting tokens for any audience or from any issuer (logged)",
    )
    srv.set_defaults(func=_cmd_serve)
    _add_eval(sub)
    _add_integrator_commands(sub)
    link = sub.add_parser(
        "review-link", help="print a short-lived link opening a plan in the review app"
    )
    link.add_argument("plan_id")
    link.add_argument("--tenant", default="default", help="the plan's tenant (default: default)")
    link.add_argument(
        "--user", required=True, help="the reviewer, Practitioner/<id> or PractitionerRole/<id>"
    )
    link.set_defaults(func=_cmd_review_link)
    return p


def _add_eval(sub: Any) -> None:
    ev = sub.add_parser(
        "eval",
        help="clinical safety check: plan every case of a folder against its expectations",
        description="Plans each bundle named in CASES_DIR/expectations.json and checks the "
        "findings that must be included and the recommendations that must not be. Exit 0 when "
        "every case passes, 1 on a missed finding or an unsafe inclusion, 2 on bad input.",
    )
    ev.add_argument("cases", type=Path, help="folder holding expectations.json")
    ev.add_argument(
        "--expectations",
        default="expectations.json",
        help="the case file inside CASES_DIR (default: expectations.json)",
    )
    ev.add_argument("--report", type=Path, help="also write the JSON report here")
    ev.add_argument("--format", choices=("table", "json"), default="table", help="stdout format")
    ev.add_argument("--backend", choices=("embedded", "triton"), help="override CANOE_BACKEND")
    ev.add_argument(
        "--created",
        help="ISO timestamp of the requests (default: now): stamps the plans and is the time "
        "the records' dates are judged against",
    )
    metrics = ev.add_argument_group(
        "the papers' metrics",
        "--metrics reads CASES_DIR/metrics.json (canoe.metrics/1) instead of expectations: "
        "ROUGE-L, FKGL, CAMP's macro-F1 and perfect rate, and CANOE's LLM-as-a-judge rubric "
        "when Triton is configured (CANOE_TRITON_URL). Exit 0 once measured, 2 on bad input.",
    )
    metrics.add_argument(
        "--metrics", action="store_true", help="measure the papers' metrics on labelled cases"
    )
    metrics.add_argument(
        "--labels",
        default="metrics.json",
        help="the label file in CASES_DIR (default: metrics.json)",
    )
    metrics.add_argument(
        "--judge-model",
        help="the Triton model that judges (default: CANOE_TRITON_MODEL_ADJUDICATOR)",
    )
    metrics.add_argument("--no-judge", action="store_true", help="do not run the judge")
    ev.set_defaults(func=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    from service.app import request_time
    from service.backends import build_planner
    from service.eval import (
        load_cases,
        plan_cases,
        report_json,
        report_table,
        with_readability,
    )
    from service.settings import load_settings

    settings = load_settings(**({"backend": args.backend} if args.backend else {}))
    if args.metrics:
        return _cmd_metrics(args, settings)
    cases = load_cases(args.cases, args.expectations)
    planner = build_planner(settings)
    created = args.created or _now()
    planned = plan_cases(cases, planner, settings, created=created, received=request_time(created))
    results = [with_readability(p.result, p.plan.deliberation, p.plan.evaluation) for p in planned]
    report = report_json(results)
    if args.report:
        args.report.write_text(json.dumps(report, indent=2) + "\n")
    out = json.dumps(report, indent=2) if args.format == "json" else report_table(results)
    sys.stdout.write(out + "\n")
    return EXIT_OK if report["passed"] else EXIT_EVAL_FAILED


def _cmd_metrics(args: argparse.Namespace, settings: Settings) -> int:
    from service.app import request_time
    from service.backends import build_planner
    from service.eval import Case, plan_cases
    from service.metrics import (
        JudgeRun,
        load_labelled,
        measure,
        metrics_report_json,
        metrics_report_table,
    )

    labelled = load_labelled(args.cases, args.labels)
    planner = build_planner(settings)
    created = args.created or _now()
    cases = [Case(c.name, c.bundle, (), ()) for c in labelled]
    plans = [
        p.plan
        for p in plan_cases(
            cases, planner, settings, created=created, received=request_time(created)
        )
    ]
    results = [measure(c, p) for c, p in zip(labelled, plans, strict=True)]
    run = JudgeRun(False, "not asked (--no-judge)")
    if not args.no_judge and not settings.triton.url:
        run = JudgeRun(False, "no Triton configured (CANOE_TRITON_URL); no score was made")
    elif not args.no_judge:
        results, run = _judge(args, settings, list(zip(labelled, plans, results, strict=True)))
    report = metrics_report_json(results, run)
    if args.report:
        args.report.write_text(json.dumps(report, indent=2) + "\n")
    out = json.dumps(report, indent=2) if args.format == "json" else metrics_report_table(report)
    sys.stdout.write(out + "\n")
    return EXIT_OK


def _judge(args: argparse.Namespace, settings: Settings, items: list[Any]) -> tuple[list[Any], Any]:
    """The judge on the configured Triton server (``--judge-model``: the model that judges)."""
    from dataclasses import replace

    from inference.judge import TritonJudge
    from inference.triton import TritonExperts
    from service.backends import triton_settings
    from service.metrics import judge_cases

    options = triton_settings(settings)
    if args.judge_model:
        options = replace(options, models=(*options.models, ("judge", args.judge_model)))
    return asyncio.run(
        judge_cases(
            items,
            lambda: TritonJudge(TritonExperts(options)),
            settings.inference.call_deadline_s,
        )
    )


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc


def _cmd_plan(args: argparse.Namespace) -> int:
    from fhir_mapping.ingest import ingest
    from service.app import request_time
    from service.backends import build_planner
    from service.pipeline import new_plan_id
    from service.settings import load_settings
    from service.text.patient import patient_text
    from service.versions import Plan, write_version

    if args.audience == "patient" and (args.detail or args.format == "json"):
        raise InputError("--for patient is read as --format text or fhir, without --detail")
    overrides = {"backend": args.backend} if args.backend else {}
    settings = load_settings(**overrides)
    raw = _read(args.bundle)
    created = args.created or _now()  # the request time: the record's dates are judged by it
    source_base = _source_base(args.source_base)
    t0 = time.perf_counter()
    profile = ingest(
        raw,
        max_resources=settings.limits.max_bundle_resources,
        received=request_time(created),
        clock_skew=settings.fhir.clock_skew,
    )
    t_ingest = time.perf_counter() - t0
    planner = build_planner(settings)
    plan_id = new_plan_id(raw)

    show = not args.no_progress and sys.stderr.isatty()
    result = asyncio.run(_plan_with_progress(planner, profile, plan_id, created, show, source_base))
    t1 = time.perf_counter()
    written = write_version(
        Plan(result.deliberation, result.evaluation), recorded=created, base=settings.fhir.base
    )
    if args.deliberation:
        args.deliberation.write_bytes(written.document_json + b"\n")
    _write_out(_plan_output(args, result, written, patient_text))
    if args.timings:
        t_out = time.perf_counter() - t1
        stages = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.timings.items())
        print(
            f"ingest {t_ingest * 1000:.1f} ms; {stages}; output {t_out * 1000:.1f} ms",
            file=sys.stderr,
        )
    return EXIT_OK


def _plan_output(
    args: argparse.Namespace,
    result: PlanResult,
    written: WrittenVersion,
    patient_text: Callable[[Deliberation, Evaluation], str],
) -> bytes:
    """What ``canoe plan`` prints, rendered from the one written plan: ``fhir`` prints the very
    bytes the service stores and returns for the same plan; ``json`` the same document, indented
    for a reader (``--deliberation`` writes its stored bytes)."""
    from service.render import render_plan, render_summary

    plan, evaluation = result.deliberation, result.evaluation
    if args.format == "json":
        return json.dumps(written.document, indent=2).encode("utf-8")
    if args.format == "fhir" and args.audience == "patient":
        from fhir_mapping.careplan import patient_of

        return json.dumps(patient_of(written.bundle), indent=2).encode("utf-8")
    if args.format == "fhir":
        return written.bundle_json
    if args.audience == "patient":
        text = patient_text(plan, evaluation)
    elif args.detail:
        text = render_plan(plan, evaluation, {e.id: e for e in result.evidence})
    else:
        text = render_summary(plan, evaluation, written.clinician)
    return text.encode("utf-8")


def _write_out(data: bytes) -> None:
    """Print ``data`` and a newline on stdout, as bytes (no re-encoding of what was written)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream stands in for stdout
        sys.stdout.write(data.decode("utf-8") + "\n")
        return
    sys.stdout.flush()
    buffer.write(data + b"\n")
    buffer.flush()


def _source_base(value: str) -> str:
    from fhir_mapping.definitions import check_base

    try:
        return check_base(value) if value else ""
    except ValueError as exc:
        raise InputError(f"--source-base: {exc}") from exc


async def _plan_with_progress(
    planner: Any, profile: Any, plan_id: str, created: str, show: bool, source_base: str = ""
) -> Any:
    if not show:
        return await planner.plan(
            profile, plan_id=plan_id, created=created, source_base=source_base
        )
    from rich.console import Console
    from rich.progress import Progress as Bar

    # Progress goes to stderr: stdout carries the plan (often redirected to a file).
    with Bar(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("deliberating", total=None)

        def on(progress: Any) -> None:
            bar.update(
                task,
                total=progress.calls_total,
                completed=progress.calls_done,
                description=f"{progress.stage} {progress.state}",
            )

        return await planner.plan(
            profile, plan_id=plan_id, created=created, progress=on, source_base=source_base
        )


def _cmd_recompute(args: argparse.Namespace) -> int:
    from service.audit import differences
    from service.core import recompute_document

    doc = load_json_object(_read(args.document), what=str(args.document))
    if isinstance(doc, dict) and doc.get("resourceType") == "Bundle":
        raise InputError(
            f"{args.document} is a FHIR Bundle, not a deliberation document: recompute reads "
            "the canoe.deliberation/1 file that `canoe plan BUNDLE --deliberation "
            "deliberation.json` writes beside the plan (gRPC: GetDeliberation), "
            "then `canoe recompute deliberation.json`",
            issues=(
                Issue(
                    "error", "not-supported", "expected a deliberation document", ("resourceType",)
                ),
            ),
        )
    recomputed = recompute_document(doc)
    diffs = differences(doc, recomputed)
    if not args.check:
        sys.stdout.write(json.dumps(recomputed, indent=2) + "\n")
        print(
            f"canoe: {len(diffs)} stated derived value(s) differed from the recomputation"
            + (" (list them with --check)" if diffs else ""),
            file=sys.stderr,
        )
        return EXIT_OK
    for d in diffs:
        sys.stdout.write(f"{d.path}: stated {d.stated_json}, recomputed {d.recomputed_json}\n")
    if diffs:
        print(f"canoe: FAIL: {len(diffs)} derived value(s) differ", file=sys.stderr)
        return EXIT_DIFFERS
    print("canoe: OK: every stated derived value matches its recomputation", file=sys.stderr)
    return EXIT_OK


def _cmd_contest(args: argparse.Namespace) -> int:
    from service.settings import load_settings
    from service.versions import contest_of_bundle, write_version

    settings = load_settings()
    base = settings.fhir.base
    plan = load_json_object(_read(args.plan), what=str(args.plan))
    tasks = _read(args.tasks)
    recorded = args.recorded or _now()
    try:
        contest = contest_of_bundle(
            plan, tasks, at=recorded, base=base, max_tasks=settings.limits.max_tasks_per_request
        )
        written = write_version(contest, base=base)
    except CanoeError as exc:
        # The refusal answers with the OperationOutcome and every Task marked rejected.
        from fhir_mapping.tasks import refusal_bundle

        _fail(exc, fhir=False)
        refusal = refusal_bundle(tasks, exc, at=recorded, base=base)
        sys.stdout.write(json.dumps(refusal, indent=2) + "\n")
        return _exit_code(exc)
    from service.core import evaluate
    from service.render import render_summary

    before, after, ev = contest.current, written.deliberation, written.evaluation
    print(_contest_outcome(before, evaluate(before), after, ev), file=sys.stderr)
    if args.format == "text":
        sys.stdout.write(render_summary(after, ev, written.clinician) + "\n")
    elif args.format == "json":
        sys.stdout.write(json.dumps(written.document, indent=2) + "\n")
    else:
        sys.stdout.write(json.dumps(written.bundle, indent=2) + "\n")
    return EXIT_OK


def _contest_outcome(
    before: Deliberation, ev_before: Evaluation, after: Deliberation, ev_after: Evaluation
) -> str:
    """One readable line for the person who ran ``canoe contest``: the version made, the actions
    applied, and which activities entered or left the plan."""
    applied = after.contestations[len(before.contestations) :]
    actions = (
        ", ".join(f"{c.action} {c.target}" for c in applied) or "nothing new (already applied)"
    )
    titles = {o.id: o.title for o in after.options}
    entered = [titles[o] for o in ev_after.plan if o not in ev_before.plan]
    left = [titles.get(o, o) for o in ev_before.plan if o not in ev_after.plan]
    change = "; ".join(
        part
        for part in (
            f"now included: {', '.join(entered)}" if entered else "",
            f"no longer included: {', '.join(left)}" if left else "",
        )
        if part
    )
    return (
        f"canoe: plan {after.plan_id} version {after.version}: {actions}; "
        f"{len(ev_after.plan)} activities included (was {len(ev_before.plan)})"
        + (f"; {change}" if change else "")
    )


def _cmd_serve(args: argparse.Namespace) -> int:
    from service.server import serve_forever
    from service.settings import load_settings

    overrides: dict[str, Any] = {} if args.workers is None else {"workers": args.workers}
    if args.host is not None:
        overrides["grpc_host"] = args.host
    if args.max_concurrent_plans is not None:
        overrides["max_concurrent_plans"] = args.max_concurrent_plans
    if args.allow_unauthenticated:
        overrides["allow_unauthenticated"] = True
    if args.allow_any_audience:
        overrides["auth_allow_any_audience"] = True
    return serve_forever(load_settings(**overrides))


# ----------------------------------------------------------------------- for integrators

# The settings `canoe serve --help` names: (setting, what it is).
_SERVE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("grpc_host", "address gRPC, HTTP and metrics listen on"),
    ("allow_unauthenticated", "listen beyond loopback with auth_mode none (insecure)"),
    ("grpc_port", "gRPC port"),
    ("http_port", "CDS Hooks HTTP(S) port, with /healthz and /livez"),
    ("metrics_port", "Prometheus /metrics port (0: off)"),
    ("store_dsn", "plan store: sqlite:///FILE or postgresql://..."),
    ("backend", "expert backend: embedded | triton"),
    ("locale", "where plans are read: uk (QRISK3) | us (Pooled Cohort Equations)"),
    ("triton_url", "Triton gRPC address (backend triton)"),
    ("auth_mode", "gRPC auth: none | tokens | jwt"),
    ("auth_allow_any_audience", "jwt mode without audience and issuer (insecure, logged)"),
    ("auth_tokens_file", "bearer tokens file (auth_mode tokens)"),
    ("auth_jwks_file", "JWKS for bearer JWTs (auth_mode jwt)"),
    ("tls_cert_file", "server certificate (PEM); TLS on gRPC and HTTP"),
    ("tls_key_file", "its private key (PEM)"),
    ("tls_client_ca_file", "client CA (PEM): mutual TLS on gRPC"),
    ("cds_base_url", "public CDS Hooks URL (JWT aud); default http://localhost:<http_port>"),
    ("cds_jwks_file", "trusted CDS clients (see canoe cds keys)"),
    ("fhir_base", "canonical base of every project FHIR URL"),
    ("max_tasks_per_request", "contestation Tasks per Contest (more: RESOURCE_EXHAUSTED/413)"),
    ("max_feedback_items", "items per CDS Hooks feedback request (more: HTTP 413)"),
    ("max_concurrent_plans", "plans + contests at once per worker (more: RESOURCE_EXHAUSTED/429)"),
    ("workers", "worker processes sharing the ports (--workers; default: usable CPUs)"),
    ("review_signing_key", "review app HMAC key, >= 32 bytes (default: one per start)"),
    ("review_smart_issuers", "EHRs allowed to launch the review app: tenant=FHIR base,..."),
    ("log_level", "debug | info | warning | error"),
)


def _serve_epilog() -> str:
    from service.settings import setting_default

    rows = []
    for name, what in _SERVE_SETTINGS:
        default = setting_default(name)
        shown = f" (default: {default})" if default not in ("", None) else ""
        rows.append(f"  CANOE_{name.upper():<24}{what}{shown}")
    return (
        "main settings (environment variables):\n"
        + "\n".join(rows)
        + "\n\nevery setting: CANOE_<PREFIX><FIELD> for each group of service/settings.py"
        " Settings (triton_url: the triton group's url)"
    )


def _add_integrator_commands(sub: Any) -> None:
    de = sub.add_parser(
        "definitions",
        help="write the FHIR package of our extensions, CodeSystems and ValueSets",
        description="Write the StructureDefinitions, CodeSystems and ValueSets under a canonical "
        "base as a FHIR package: OUT_DIR/package/ (package.json, .index.json, one file per "
        "resource) and OUT_DIR/<name>-<version>.tgz.",
    )
    de.add_argument("out_dir", type=Path)
    de.add_argument("--base", help="canonical base URL (default: CANOE_FHIR_BASE)")
    de.add_argument("--name", help="package name (default: canoe.careplan.definitions)")
    de.add_argument("--version", dest="package_version", help="package version (default: 1.0.0)")
    de.set_defaults(func=_cmd_definitions)

    _add_knowledge(sub)

    st = sub.add_parser(
        "settings",
        help="list every setting (docs/settings.md), or check the current ones",
        description="Print every setting with its variable, type, range, default and meaning "
        "as Markdown (docs/settings.md is this output). With --check, validate the settings "
        "of this environment and CANOE_CONFIG_FILE as start-up would: exit 0 when valid, 2 "
        "with one line per bad setting when not.",
    )
    st.add_argument("--check", action="store_true", help="validate the current settings")
    st.set_defaults(func=_cmd_settings)

    cds = sub.add_parser("cds", help="a local CDS Hooks client: keys, signed calls")
    cds_sub = cds.add_subparsers(dest="cds_command", required=True)
    keys = cds_sub.add_parser(
        "keys",
        help="write a client key pair and the trusted-clients file canoe serve reads",
        description="Write DIR/client.key.pem (ES384 private key), DIR/client.json (what "
        "'canoe cds call' signs with) and DIR/trusted-clients.json (set "
        "CANOE_CDS_JWKS_FILE to it).",
    )
    keys.add_argument("dir", type=Path, nargs="?", default=Path("cds-sandbox"))
    keys.add_argument("--iss", default="https://ehr.local/sandbox", help="the client's iss")
    keys.add_argument("--tenant", default="", help="tenant of its plans (default: the iss)")
    keys.add_argument(
        "--fhir-server",
        action="append",
        default=[],
        metavar="URL",
        help="a FHIR server the client may name as fhirServer (repeatable)",
    )
    keys.add_argument("--force", action="store_true", help="overwrite existing files")
    keys.set_defaults(func=_cmd_cds_keys)

    call = cds_sub.add_parser(
        "call",
        help="send a signed CDS Hooks request and print the cards",
        description="Sign a fresh JWT (new jti, aud = the service URL, 60 s lifetime) with the "
        "sandbox key and POST REQUEST.json to the service of HOOK (a hook such as patient-view, "
        "or a service id); 'HOOK/feedback' POSTs a feedback document to that service's feedback "
        "endpoint; 'discovery' GETs the discovery document. Prints the answer.",
    )
    call.add_argument("hook")
    call.add_argument("request", type=Path, nargs="?")
    call.add_argument("--client", type=Path, default=Path("cds-sandbox/client.json"))
    call.add_argument("--url", help="the service's CDS base URL (default: the settings' cds URL)")
    call.add_argument("--ca", type=Path, help="CA certificate to trust for https")
    call.add_argument("--timeout", type=float, default=120.0, help="seconds (default 120)")
    call.set_defaults(func=_cmd_cds_call)


def _add_knowledge(sub: Any) -> None:
    kn = sub.add_parser("knowledge", help="check a knowledge folder, explain a criterion")
    kn_sub = kn.add_subparsers(dest="knowledge_command", required=True)
    chk = kn_sub.add_parser(
        "check",
        help="validate a site knowledge folder and list what it changes",
        description="Validate DIR as start-up would (CANOE_KNOWLEDGE_DIR: site.yaml and added "
        "criteria *.json; with --full a complete criteria folder) and list what differs from "
        "the shipped criteria. Exit 0 when valid, 2 naming file, path and problem when not.",
    )
    chk.add_argument("dir", type=Path)
    chk.add_argument(
        "--full", action="store_true", help="DIR is a complete criteria folder, not an overlay"
    )
    chk.set_defaults(func=_cmd_knowledge_check)
    exp = kn_sub.add_parser(
        "explain",
        help="which parts of a criterion's trigger hold for a patient, and why",
        description="Evaluate one criterion on a FHIR Bundle: each part of its trigger alone "
        "(with the facts it bound), the whole trigger, and each exception.",
    )
    exp.add_argument("criterion", help="the criterion id")
    exp.add_argument("bundle", type=Path)
    exp.add_argument("--created", help="ISO time the record is judged at (default: now)")
    exp.set_defaults(func=_cmd_knowledge_explain)
    sch = kn_sub.add_parser(
        "schema", help="print the JSON Schema of a criteria file (docs/criteria.schema.json)"
    )
    sch.set_defaults(func=_cmd_knowledge_schema)


def _cmd_knowledge_check(args: argparse.Namespace) -> int:
    from service.knowledge import check

    report = check(args.dir, full=args.full)
    stamp = report.knowledge.stamp
    for ch in report.changes:
        where = f" ({ch.file})" if ch.file else ""
        print(f"{ch.kind:8} {ch.criterion}: {ch.detail}{where}")
    site = f"; site {stamp.site_version} {stamp.site_hash}" if stamp.site_hash else ""
    print(
        f"valid: {len(report.knowledge.criteria)} criteria, {len(report.changes)} change(s) "
        f"against the shipped knowledge {stamp.version}{site}",
        file=sys.stderr,
    )
    return EXIT_OK


def _cmd_knowledge_explain(args: argparse.Namespace) -> int:
    from fhir_mapping.ingest import ingest
    from inference.knowledge.site import active
    from service.app import request_time
    from service.knowledge import explain, explain_text
    from service.settings import load_settings

    settings = load_settings()
    criterion = next((c for c in active().criteria if c.id == args.criterion), None)
    if criterion is None:
        raise InputError(f"unknown criterion {args.criterion!r}")
    profile = ingest(
        _read(args.bundle),
        received=request_time(args.created or _now()),
        clock_skew=settings.fhir.clock_skew,
    )
    sys.stdout.write(explain_text(criterion, explain(criterion, profile)))
    return EXIT_OK


def _cmd_knowledge_schema(args: argparse.Namespace) -> int:
    from service.knowledge import criteria_schema

    sys.stdout.write(criteria_schema())
    return EXIT_OK


def _cmd_settings(args: argparse.Namespace) -> int:
    from service.settings import load_settings, settings_markdown

    if args.check:
        load_settings()
        print("settings valid")
    else:
        sys.stdout.write(settings_markdown())
    return 0


def _cmd_definitions(args: argparse.Namespace) -> int:
    import tarfile

    from fhir_mapping.definitions import DEFINITIONS_VERSION, PACKAGE_NAME, package_files
    from service.knowledge import knowledge_files
    from service.settings import load_settings

    base = args.base or load_settings().fhir.base
    name = args.name or PACKAGE_NAME
    version = args.package_version or DEFINITIONS_VERSION
    try:
        files = package_files(base, name=name, version=version, extra=knowledge_files(base))
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    folder = args.out_dir / "package"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for fn, res in files.items():
            (folder / fn).write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n")
        tgz = args.out_dir / f"{name}-{version}.tgz"
        with tarfile.open(tgz, "w:gz") as tar:
            for fn in sorted(files):
                tar.add(folder / fn, arcname=f"package/{fn}")
    except OSError as exc:
        raise InputError(f"cannot write {args.out_dir}: {exc.strerror}") from exc
    print(f"{len(files) - 2} definitions under {base} -> {folder} and {tgz}", file=sys.stderr)
    return EXIT_OK


def _cmd_cds_keys(args: argparse.Namespace) -> int:
    from service.cds_hooks.sandbox import write_keys

    written = write_keys(
        args.dir,
        iss=args.iss,
        tenant=args.tenant,
        fhir_servers=tuple(args.fhir_server),
        force=args.force,
    )
    for path in written:
        print(path)
    trusted = written[-1].resolve()
    print(f"serve with: CANOE_CDS_JWKS_FILE={trusted} canoe serve", file=sys.stderr)
    return EXIT_OK


def _cmd_cds_call(args: argparse.Namespace) -> int:
    from service.cds_hooks.sandbox import call_service, load_client
    from service.settings import load_settings

    client = load_client(args.client)
    url = (args.url or load_settings().cds_url).rstrip("/")
    body = None if args.request is None else _read(args.request)
    status, answer = call_service(
        client, url, args.hook, body, ca_file=args.ca, timeout_s=args.timeout
    )
    sys.stdout.write(json.dumps(answer, indent=2) + "\n")
    if status < 300:
        return EXIT_OK
    print(f"canoe: the service answered HTTP {status}", file=sys.stderr)
    return EXIT_INPUT if status < 500 else EXIT_UNAVAILABLE


def _cmd_review_link(args: argparse.Namespace) -> int:
    from service.review import review_link
    from service.settings import load_settings

    url = review_link(load_settings(), tenant=args.tenant, plan_id=args.plan_id, user=args.user)
    sys.stdout.write(url + "\n")
    return EXIT_OK


def _fail(exc: CanoeError, *, fhir: bool) -> int:
    print(f"canoe: {type(exc).__name__}: {exc.message}", file=sys.stderr)
    # The issues under it, unless the message already says the only one.
    said = len(exc.issues) == 1 and exc.issues[0].diagnostics in exc.message
    for issue in () if said else exc.issues[:20]:
        where = f" at {', '.join(issue.expression)}" if issue.expression else ""
        print(f"  - {issue.severity} {issue.code}{where}: {issue.diagnostics}", file=sys.stderr)
    if fhir:
        try:
            from fhir_mapping.outcome import operation_outcome

            sys.stdout.write(json.dumps(operation_outcome(exc), indent=2) + "\n")
        except ImportError:
            pass
    return _exit_code(exc)


def _exit_code(exc: CanoeError) -> int:
    """The exit status the error's class states (2 bad input, 69 backend unavailable, 75 busy,
    77 not allowed, 70 internal)."""
    return exc.exit_code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
