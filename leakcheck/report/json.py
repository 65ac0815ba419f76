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
from ..gate import exit_code, gated_findings
from ..result import ScanResult
from ._atomic import write_atomic

SCHEMA_VERSION = 2


def to_dict(result: ScanResult, policy: Policy | None = None) -> dict[str, Any]:
    """The report as plain JSON-ready data."""
    policy = policy or result.policy
    result = dataclasses.replace(result, policy=policy)  # every count below is what this gate judged
    gated = gated_findings(result, policy)
    return {
        "schema_version": SCHEMA_VERSION,
        "leakcheck_version": __version__,
        "created_at": result.created_at,
        "train": result.train.to_dict(),
        "eval": result.eval.to_dict(),
        "levels": list(result.levels),
        "parameters": result.parameters,
        "summary": result.summary(),
        "gate": {"fail_on": policy.describe(), "policy": policy.spec(), "gated_findings": len(gated),
                 "exit_code": exit_code(result, policy)},
        "notes": list(result.notes),
        "findings": [f.to_dict() for f in result.findings],
        "chance_target_matches": [c.to_dict() for c in result.chance],
        "eval_duplicates": [d.to_dict() for d in result.eval_duplicates],
        "near_misses": [f.to_dict() for f in result.near_misses],
        "siblings": [f.to_dict() for f in result.siblings],
    }


def dumps(result: ScanResult, policy: Policy | None = None) -> str:
    return json.dumps(to_dict(result, policy), indent=2, ensure_ascii=False) + "\n"


def write_json(result: ScanResult, path: str | os.PathLike, policy: Policy | None = None) -> None:
    write_atomic(path, dumps(result, policy))
