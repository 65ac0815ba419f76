"""The JSON report: the contract later tools and users' CI read. Pinned by tests.

Same inputs give the same bytes, apart from ``created_at``.
"""

from __future__ import annotations

import dataclasses

import json
import os
from typing import Any

from .. import __version__
from ..config import Policy
from ..gate import exit_code, gated_findings, limit_checks
from ..result import ScanResult
from ._atomic import write_atomic

SCHEMA_VERSION = 2


def to_dict(result: ScanResult, policy: Policy | None = None) -> dict[str, Any]:
    """The report as plain JSON-ready data."""
    policy = policy or result.policy
    result = dataclasses.replace(result, policy=policy)  # every count below is what this gate judged
    gated = gated_findings(result, policy)
    head = {
        "schema_version": SCHEMA_VERSION,
        "leakcheck_version": __version__,
        "created_at": result.created_at,
        **({"config_file": result.config_file} if result.config_file else {}),
    }
    return {
        **head,
        "train": result.train.to_dict(),
        "eval": result.eval.to_dict(),
        "levels": list(result.levels),
        "parameters": result.parameters,
        "summary": result.summary(),
        "gate": {"fail_on": policy.describe(), "policy": policy.spec(), "gated_findings": len(gated),
                 "exit_code": exit_code(result, policy), **_acceptance(result, policy)},
        "notes": list(result.notes),
        "findings": [f.to_dict() for f in result.findings],
        "chance_target_matches": [c.to_dict() for c in result.chance],
        "eval_duplicates": [d.to_dict() for d in result.eval_duplicates],
        "near_misses": [f.to_dict() for f in result.near_misses],
        "siblings": [f.to_dict() for f in result.siblings],
    }


def _acceptance(result: ScanResult, policy: Policy) -> dict[str, Any]:
    """Limits, baseline and allowlist of the gate, each only when used (reports without them keep their shape)."""
    out: dict[str, Any] = {}
    if policy.limits:
        out["limits"] = [c.to_dict() for c in limit_checks(result, policy)]
    if result.baseline is not None:
        out["baseline"] = result.baseline.to_dict()
    if result.accepted:
        out["accepted"] = [a.to_dict() for a in result.accepted]
    if result.allow_unused:
        out["allowlist_unused"] = list(result.allow_unused)
    return out


def dumps(result: ScanResult, policy: Policy | None = None) -> str:
    return json.dumps(to_dict(result, policy), indent=2, ensure_ascii=False) + "\n"


def write_json(result: ScanResult, path: str | os.PathLike, policy: Policy | None = None) -> None:
    write_atomic(path, dumps(result, policy))
