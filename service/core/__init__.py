"""The pure reasoning core: A-QBAF propagation, arena calibration, CAMP router, contestation,
plan selection and the exported deliberation document with its JSON Schema. Nothing else: the
patient record (``service.record``) and the plan's text (``service.text``) sit above it.

Plain typed data in, typed data out: no I/O (beyond reading the packaged JSON Schema the first
time a document is checked), no logging, no clock, no randomness, no model calls.
``tests/core/test_purity.py`` keeps it so and lists its modules.
"""

from service.core.arena import calibrate, find_clashes, is_near_tie
from service.core.contest import (
    AcceptArgument,
    AddArgument,
    ContestAction,
    DecideOption,
    DecideProblem,
    EditArgument,
    RejectArgument,
    apply,
    apply_all,
)
from service.core.document import (
    DELIBERATION_FORMAT,
    deliberation_schema,
    from_document,
    recompute_document,
    to_document,
)
from service.core.evaluation import (
    CATEGORY_ORDER,
    OPTION_PRIOR,
    PRIORITY_ORDER,
    Evaluation,
    NodeScore,
    OptionResult,
    ProblemResult,
    evaluate,
    evaluate_option,
    plan_order,
)
from service.core.qbaf import QBAF, Strengths, energy_update, h, propagate
from service.core.router import Route, count_votes, route, route_counts

__all__ = [
    "CATEGORY_ORDER",
    "DELIBERATION_FORMAT",
    "OPTION_PRIOR",
    "PRIORITY_ORDER",
    "QBAF",
    "AcceptArgument",
    "AddArgument",
    "ContestAction",
    "DecideOption",
    "DecideProblem",
    "EditArgument",
    "Evaluation",
    "NodeScore",
    "OptionResult",
    "ProblemResult",
    "RejectArgument",
    "Route",
    "Strengths",
    "apply",
    "apply_all",
    "calibrate",
    "count_votes",
    "deliberation_schema",
    "energy_update",
    "evaluate",
    "evaluate_option",
    "find_clashes",
    "from_document",
    "h",
    "is_near_tie",
    "plan_order",
    "propagate",
    "recompute_document",
    "route",
    "route_counts",
    "to_document",
]
