"""The gate: exit code as a pure function of (result, policy).

>>> from leakcheck.config import Policy
>>> CLEAN, LEAK, ERROR, PARTIAL
(0, 1, 2, 3)
"""

from __future__ import annotations

from .config import Policy
from .result import ScanResult

CLEAN, LEAK, ERROR, PARTIAL = 0, 1, 2, 3


def gated_findings(result: ScanResult, policy: Policy) -> list:
    """Findings (and chance matches, when the policy includes them) that fail the gate."""
    out: list = [f for f in result.findings if policy.gates(f.kind, f.level)]
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
