"""The ``canoe`` command line: plan a bundle offline, recompute a deliberation, contest, serve.

Exit codes tell bad input from failures, so scripts can react:
    0  success
    2  bad input (the bundle, Task or document was refused; an OperationOutcome is printed)
    69 the model backend is unavailable (EX_UNAVAILABLE)
    70 internal error (EX_SOFTWARE)
Errors print a one-line message on stderr (and the OperationOutcome as JSON with --format fhir),
never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from service.errors import (
    BackendError,
    CanoeError,
    InputError,
    LimitError,
    NotFoundError,
    StaleVersionError,
)

__all__ = ["main"]

EXIT_OK, EXIT_INPUT, EXIT_UNAVAILABLE, EXIT_INTERNAL = 0, 2, 69, 70


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
        help="text (default): readable plan; fhir: CarePlan+Provenance Bundle; "
        "json: the canoe.deliberation/1 document",
    )
    plan.add_argument("--deliberation", type=Path, help="also write the deliberation document here")
    plan.add_argument("--backend", choices=("embedded", "triton"), help="override CANOE_BACKEND")
    plan.add_argument("--created", help="ISO timestamp to stamp the plan with (default: now)")
    plan.add_argument("--timings", action="store_true", help="print stage timings on stderr")
    plan.add_argument("--no-progress", action="store_true", help="no progress display")
    plan.set_defaults(func=_cmd_plan)

    rec = sub.add_parser("recompute", help="recompute every derived value of a deliberation")
    rec.add_argument("document", type=Path)
    rec.set_defaults(func=_cmd_recompute)

    con = sub.add_parser("contest", help="apply FHIR Task contestations to a plan Bundle")
    con.add_argument("plan", type=Path, help="the plan Bundle (from plan --format fhir)")
    con.add_argument("tasks", type=Path, help="a Task or a Bundle of Tasks")
    con.add_argument("--recorded", help="ISO timestamp for the new version (default: now)")
    con.set_defaults(func=_cmd_contest, format="fhir")

    srv = sub.add_parser("serve", help="run the gRPC service (and the CDS Hooks HTTP side)")
    srv.add_argument(
        "--workers", type=int, help="processes sharing the ports (default: one per usable CPU)"
    )
    srv.set_defaults(func=_cmd_serve)
    return p


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc


def _cmd_plan(args: argparse.Namespace) -> int:
    from fhir_mapping.ingest import ingest
    from service.backends import build_planner
    from service.core import to_document
    from service.render import render_plan
    from service.settings import load_settings

    overrides = {"backend": args.backend} if args.backend else {}
    settings = load_settings(**overrides)
    raw = _read(args.bundle)
    t0 = time.perf_counter()
    profile = ingest(raw, max_resources=settings.max_bundle_resources)
    t_ingest = time.perf_counter() - t0
    planner = build_planner(settings)
    plan_id = "plan-" + hashlib.sha256(raw).hexdigest()[:16]
    created = args.created or _now()

    show = not args.no_progress and sys.stderr.isatty()
    result = asyncio.run(_plan_with_progress(planner, profile, plan_id, created, show))
    t1 = time.perf_counter()
    d, ev = result.deliberation, result.evaluation
    if args.deliberation:
        args.deliberation.write_text(json.dumps(to_document(d, ev), indent=2) + "\n")
    if args.format == "text":
        out = render_plan(d, ev, {e.id: e for e in result.evidence})
    elif args.format == "json":
        out = json.dumps(to_document(d, ev), indent=2)
    else:
        from fhir_mapping.careplan import plan_bundle

        out = json.dumps(plan_bundle(d, ev, recorded=created), indent=2)
    sys.stdout.write(out + "\n")
    if args.timings:
        t_out = time.perf_counter() - t1
        stages = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.timings.items())
        print(
            f"ingest {t_ingest * 1000:.1f} ms; {stages}; output {t_out * 1000:.1f} ms",
            file=sys.stderr,
        )
    return EXIT_OK


async def _plan_with_progress(
    planner: Any, profile: Any, plan_id: str, created: str, show: bool
) -> Any:
    if not show:
        return await planner.plan(profile, plan_id=plan_id, created=created)
    from rich.console import Console
    from rich.progress import Progress as Bar

    # Progress goes to stderr: stdout carries the plan (often redirected to a file).
    with Bar(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("deliberating", total=None)

        def on(p: Any) -> None:
            bar.update(
                task,
                total=p.calls_total,
                completed=p.calls_done,
                description=f"{p.stage} {p.state}",
            )

        return await planner.plan(profile, plan_id=plan_id, created=created, progress=on)


def _cmd_recompute(args: argparse.Namespace) -> int:
    from service.core import recompute_document

    try:
        doc = json.loads(_read(args.document))
    except json.JSONDecodeError as exc:
        raise InputError(f"{args.document} is not JSON: {exc}") from exc
    sys.stdout.write(json.dumps(recompute_document(doc), indent=2) + "\n")
    return EXIT_OK


def _cmd_contest(args: argparse.Namespace) -> int:
    from fhir_mapping.tasks import contest_bundle

    try:
        plan = json.loads(_read(args.plan))
    except json.JSONDecodeError as exc:
        raise InputError(f"{args.plan} is not JSON: {exc}") from exc
    tasks = _read(args.tasks)
    recorded = args.recorded or _now()
    try:
        out = contest_bundle(plan, tasks, recorded=recorded)
    except CanoeError as exc:
        # The refusal answers with the OperationOutcome and every Task marked rejected.
        from fhir_mapping.tasks import refusal_bundle

        _fail(exc, fhir=False)
        sys.stdout.write(json.dumps(refusal_bundle(tasks, exc, at=recorded), indent=2) + "\n")
        return _exit_code(exc)
    sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return EXIT_OK


def _cmd_serve(args: argparse.Namespace) -> int:
    from service.server import serve_forever
    from service.settings import load_settings

    overrides = {} if args.workers is None else {"workers": args.workers}
    return serve_forever(load_settings(**overrides))


def _fail(exc: CanoeError, *, fhir: bool) -> int:
    print(f"canoe: {type(exc).__name__}: {exc.message}", file=sys.stderr)
    for issue in exc.issues[:20]:
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
    if isinstance(exc, InputError | StaleVersionError | NotFoundError | LimitError):
        return EXIT_INPUT
    if isinstance(exc, BackendError):
        return EXIT_UNAVAILABLE
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
