"""Arena clash resolution (CANOE 4.3.1): which opposing pairs clash, and the calibrated tau~.

A supporter and an attacker of the same option clash when ``|tau_s - tau_a| < delta``, decided
on the exact decimals of the stated values (``exact``), never on binary floating point: in floats
0.87 - 0.67 is 0.19999999999999996 and would clash while 0.6 - 0.4 (0.19999999999999996 too) and
0.9 - 0.7 (0.20000000000000007) would not, so pairs the same distance apart decided differently.
As decimals every pair exactly ``delta`` apart is no clash (eq. 7 is strict). Pairs are
judged on the *original* tau, all at once, so the order in which clashes are listed or resolved
cannot matter. Given each clash's winner, ``w`` is an argument's win rate over the clashes it took
part in that have a winner, and ``tau~ = clip(tau + beta (2w - 1), 0, 1)``. A clash whose winner
is None (adjudication failed) counts for nobody; an argument with no decided clash keeps tau.

Pure: the adjudicator (a model call) is the pipeline's business; this module only sees verdicts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal

from service.core.model import Argument, Clash

__all__ = ["calibrate", "exact", "find_clashes", "is_near_tie"]


def exact(value: float) -> Decimal:
    """The decimal a strength was stated as: the shortest decimal that reads back as the same
    float (``repr``), so ``0.87`` is ``Decimal("0.87")``, not the binary float's 0.8699999..."""
    return Decimal(repr(float(value)))


def is_near_tie(tau_s: float, tau_a: float, delta: float) -> bool:
    """Eq. 7: ``|tau_s - tau_a| < delta`` (strict), on the exact decimals of the three values.

    >>> is_near_tie(0.87, 0.67, 0.2), is_near_tie(0.9, 0.7, 0.2), is_near_tie(0.86, 0.67, 0.2)
    (False, False, True)
    """
    return abs(exact(tau_s) - exact(tau_a)) < exact(delta)


def find_clashes(
    arguments: Sequence[Argument], delta: float, *, exclude: Collection[str] = ()
) -> tuple[tuple[str, str], ...]:
    """(support id, attack id) pairs that need adjudication, supporters in input order, and for
    each supporter its attackers in input order. Arguments whose id is in ``exclude`` or whose
    status is "rejected" take part in none.

    >>> s = Argument("s", "nurse", "support", "", (), (), 0.6)
    >>> a = Argument("a", "pharmacist", "attack", "", (), (), 0.7)
    >>> find_clashes([s, a], 0.2)
    (('s', 'a'),)
    """
    live = [a for a in arguments if a.status != "rejected" and a.id not in exclude]
    supporters = [a for a in live if a.stance == "support"]
    attackers = [a for a in live if a.stance == "attack"]
    return tuple(
        (s.id, a.id) for s in supporters for a in attackers if is_near_tie(s.tau, a.tau, delta)
    )


def calibrate(
    arguments: Sequence[Argument], clashes: Sequence[Clash], beta: float
) -> Mapping[str, float]:
    """tau~ per argument id (every argument in ``arguments``, in their order).

    Only clashes whose both ends are among ``arguments`` count; callers filter out arguments that
    must not be calibrated (rejected ones, human-set strengths) before calling.

    >>> s = Argument("s", "nurse", "support", "", (), (), 0.6)
    >>> a = Argument("a", "pharmacist", "attack", "", (), (), 0.7)
    >>> tau = calibrate([s, a], [Clash("s", "a", "support")], 0.15)
    >>> tau["s"], round(tau["a"], 10)  # 0.6 + 0.15 (2*1 - 1); 0.7 + 0.15 (2*0 - 1)
    (0.75, 0.55)
    """
    # Counts live in lists indexed by an argument's (last) position, which keeps the loop over
    # the clashes, the hot part of a whole-plan evaluation, to two lookups and two increments.
    slot = {a.id: k for k, a in enumerate(arguments)}
    wins = [0] * len(arguments)
    total = [0] * len(arguments)
    for c in clashes:
        winner = c.winner
        if winner is None:
            continue
        s = slot.get(c.support)
        a = slot.get(c.attack)
        if s is None or a is None:
            continue
        total[s] += 1
        total[a] += 1
        wins[s if winner == "support" else a] += 1
    out: dict[str, float] = {}
    for arg, n, won in zip(arguments, total, wins, strict=True):
        if n == 0:
            out[arg.id] = arg.tau  # also an earlier repeat of an id: its last position decides
            continue
        t = arg.tau + beta * (2.0 * (won / n) - 1.0)
        out[arg.id] = 0.0 if t < 0.0 else 1.0 if t > 1.0 else t
    return out
