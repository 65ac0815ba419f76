"""The gate: exit code as a pure function of (result, policy).

Severity grows ``CLEAN`` (0) < ``PARTIAL`` (3) < ``LEAK`` (1): a leak found in a partial scan
is a leak. More evidence (more levels, more rows, more policy items) never lowers severity.

>>> CLEAN, LEAK, ERROR, PARTIAL
(0, 1, 2, 3)
>>> sorted((LEAK, CLEAN, PARTIAL), key=severity)
[0, 3, 1]
"""

from __future__ import annotations

from .config import Policy
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


def exit_code(result: ScanResult, policy: Policy, allow_partial: bool = False) -> int:
    """0 clean, 1 leakage at a gated level, 3 clean but rows were skipped (unless allowed)."""
    if gated_findings(result, policy):
        return LEAK
    skipped = sum(result.train.skipped.values()) + sum(result.eval.skipped.values())
    if skipped and not allow_partial:
        return PARTIAL
    return CLEAN
