"""Read a saved JSON report back into a :class:`~leakcheck.result.ScanResult`.

CI keeps the JSON report as an artifact; ``leakcheck report`` renders it later. The
round trip is exact: ``to_dict(from_dict(d)) == d`` for a report this version wrote.

>>> from leakcheck.report.json import to_dict
>>> from leakcheck.result import InputInfo, ScanResult
>>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 2, 2)
>>> r = ScanResult(info, info, ("exact",), {"levels": {"exact": {}}}, ())
>>> from_dict(to_dict(r)) == r
True
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..config import KINDS, LEVELS, Policy
from ..errors import InputError
from ..result import ChanceMatch, EvalDuplicate, Finding, InputInfo, ScanResult, SkippedRow
from .json import SCHEMA_VERSION


def _info(d: dict[str, Any]) -> InputInfo:
    return InputInfo(
        path=d["path"],
        files=tuple(d["files"]),
        format=d["format"],
        fields=dict(d["fields"]),
        records=d["records"],
        rows=d["rows"],
        skipped=dict(d.get("skipped", {})),
        skipped_rows=tuple(SkippedRow(**s) for s in d.get("skipped_rows", [])),
        subsets=dict(d.get("subsets", {})),
    )


def policy_from_description(text: str) -> Policy:
    """Invert :meth:`Policy.describe`, which is what the JSON report stores under ``gate.fail_on``.

    >>> p = Policy.parse("pair:near,exact,chance")
    >>> policy_from_description(p.describe()) == p
    True
    """
    if text == "none":
        return Policy(frozenset(), False)
    gated: set[tuple[str, str]] = set()
    chance = False
    for part in (p.strip() for p in text.split(";")):
        if part == "chance target matches":
            chance = True
            continue
        level, _, kinds = part.partition(":")
        if level not in LEVELS or not kinds:
            raise ValueError(f"unknown gate description {part!r}")
        for k in (k.strip() for k in kinds.split(",")):
            if k not in KINDS:
                raise ValueError(f"unknown kind {k!r} in gate description")
            gated.add((k, level))
    return Policy(frozenset(gated), chance)


def from_dict(d: dict[str, Any]) -> ScanResult:
    """Rebuild the result a JSON report was written from."""
    return ScanResult(
        train=_info(d["train"]),
        eval=_info(d["eval"]),
        levels=tuple(d["levels"]),
        parameters=d["parameters"],
        findings=tuple(Finding(**f) for f in d["findings"]),
        chance=tuple(ChanceMatch(**{**c, "examples": tuple(c["examples"])}) for c in d["chance_target_matches"]),
        eval_duplicates=tuple(
            EvalDuplicate(kind=e["kind"], level=e["level"], ids=tuple(e["ids"]), rows=tuple(e["rows"]), snippet=e["snippet"])
            for e in d["eval_duplicates"]
        ),
        near_misses=tuple(Finding(**f) for f in d.get("near_misses", ())),
        notes=tuple(d.get("notes", ())),
        created_at=d.get("created_at", ""),
    )


def load_report(path: str | os.PathLike) -> tuple[ScanResult, Policy]:
    """Read a JSON report file: the result and the gate policy it was written with."""
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as fh:
            d = json.load(fh)
    except FileNotFoundError:
        raise InputError(p, None, "no such file", "pass the JSON report written by leakcheck scan --json") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(p, None, f"not a JSON file ({exc})", "pass the JSON report written by leakcheck scan --json") from None
    if not isinstance(d, dict) or "schema_version" not in d or "findings" not in d:
        raise InputError(p, None, "not a leakcheck JSON report", "pass the file written by leakcheck scan --json")
    if d["schema_version"] != SCHEMA_VERSION:
        raise InputError(p, None, f"report schema version {d['schema_version']} is not {SCHEMA_VERSION}",
                         "render it with the leakcheck version that wrote it")
    try:
        result = from_dict(d)
        policy = policy_from_description(d["gate"]["fail_on"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(p, None, f"malformed leakcheck JSON report ({type(exc).__name__}: {exc})",
                         "regenerate it with leakcheck scan --json") from None
    return result, policy
