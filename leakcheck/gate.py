"""The gate: exit code as a pure function of (result, policy).

Severity grows ``CLEAN`` (0) < ``PARTIAL`` (3) < ``LEAK`` (1): a leak found in a partial scan
is a leak. More evidence (more levels, more rows, more policy items) never lowers severity.

>>> CLEAN, LEAK, ERROR, PARTIAL
(0, 1, 2, 3)
>>> sorted((LEAK, CLEAN, PARTIAL), key=severity)
[0, 3, 1]
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import ANY, Limit, Policy, level_rank
from .result import ChanceMatch, Finding, ScanResult

CLEAN, LEAK, ERROR, PARTIAL = 0, 1, 2, 3
_SEVERITY = {CLEAN: 0, PARTIAL: 1, LEAK: 2, ERROR: 3}


def severity(code: int) -> int:
    """Order of exit codes by how bad the news is (for monotonicity checks)."""
    return _SEVERITY[code]


def gated_findings(result: ScanResult, policy: Policy) -> list[Finding | ChanceMatch]:
    """Findings (and chance matches, when the policy includes them) that fail the gate."""
    out: list[Finding | ChanceMatch] = list(result.gated(policy))
    if policy.chance:
        out += [c for c in result.chance if c.level in result.levels]
    return out


@dataclass(frozen=True)
class LimitCheck:
    """One limit against a result: how many eval records it counted and how many it allows."""

    limit: Limit
    count: int
    allowed: float
    exceeded: bool

    def text(self) -> str:
        """``target:near=0.5%: 7 eval records, 5 allowed (exceeded)``."""
        verdict = "exceeded" if self.exceeded else "within"
        return f"limit {self.limit.text()}: {self.count} eval records, {self.allowed:g} allowed ({verdict})"

    def to_dict(self) -> dict[str, object]:
        return {"limit": self.limit.text(), "count": self.count, "allowed": self.allowed, "exceeded": self.exceeded}


def _counted(limit: Limit, kind: str, level: str) -> bool:
    return (limit.kind == ANY or limit.kind == kind) and (limit.level == ANY or level_rank(level) <= level_rank(limit.level))


def limit_checks(result: ScanResult, policy: Policy) -> list[LimitCheck]:
    """Each limit of ``policy``: the eval records it counts (accepted findings left out) and its verdict.

    More findings only raise the counts, so a limit that is exceeded stays exceeded.
    """
    open_findings = [f for f in result.findings if not result.is_accepted(f)]
    out = []
    for lim in policy.limits:
        rows = {f.eval_row for f in open_findings if any(_counted(lim, k, lv) for k, lv in f.evidence())}
        allowed = lim.allowed(result.eval.records)
        out.append(LimitCheck(lim, len(rows), allowed, lim.exceeded(len(rows), result.eval.records)))
    return out


def exit_code(result: ScanResult, policy: Policy, allow_partial: bool = False) -> int:
    """0 clean, 1 leakage at a gated level or above a limit, 3 clean but rows were skipped (unless allowed).

    Findings a baseline or allowlist accepted (see :mod:`leakcheck.baseline`) never gate.
    """
    if gated_findings(result, policy) or any(c.exceeded for c in limit_checks(result, policy)):
        return LEAK
    skipped = sum(result.train.skipped.values()) + sum(result.eval.skipped.values())
    if skipped and not allow_partial:
        return PARTIAL
    return CLEAN
