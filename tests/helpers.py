"""Small helpers shared by tests."""

from __future__ import annotations

from leakcheck import Finding, ScanResult


def triples(result: ScanResult) -> set[tuple[str, str, str, str]]:
    """(eval_id, train_id, kind, level) of every finding."""
    return {(f.eval_id, f.train_id, f.kind, f.level) for f in result.findings}


def by_kind(result: ScanResult, kind: str) -> list[Finding]:
    return [f for f in result.findings if f.kind == kind]
