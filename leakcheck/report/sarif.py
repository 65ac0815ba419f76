"""SARIF 2.1.0 for code scanning dashboards: every finding a result at its train file and line.

One ``run`` holds every eval set (code scanning takes one run per tool and category in an
upload); each result names its eval set in ``properties``. A result's level is ``error`` when
the gate fails on it; otherwise ``warning`` at the exact and normalized levels and ``note`` at
the fuzzy ones. ``partialFingerprints`` are the records' content fingerprints, so an alert
keeps its identity when rows move and is dismissed once, not once per line number.

>>> from leakcheck.result import InputInfo, ScanResult
>>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 2, 2)
>>> f = Finding("e1", "1", "prompt", "exact", 1.0, 0, 1, "q", "q", "2+2?", "2+2?", train_file="t.jsonl", train_line=2,
...             eval_fingerprint="ab", train_fingerprint="cd", eval_set="e")
>>> r = ScanResult(info, info, ("exact",), {"levels": {"exact": {}}}, (f,))
>>> res = to_sarif({"e": r}, Policy(), root=".")["runs"][0]["results"][0]
>>> res["ruleId"], res["level"], res["locations"][0]["physicalLocation"]["region"]
('prompt', 'error', {'startLine': 2})
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..config import KINDS, LEVELS, Policy
from ..gate import exit_code
from ..result import Accepted, Finding, ScanResult
from . import content
from ._atomic import write_atomic
from .github import describe, is_gated

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
#: The key of ``partialFingerprints``: versioned, so a change of what it hashes starts new alerts, not wrong ones.
FINGERPRINT_KEY = "leakcheckRecords/v1"

_RULE_NAMES = {"pair": "PromptAndTargetLeak", "prompt": "PromptLeak", "target": "TargetLeak",
               "target_in_prompt": "TargetInTrainPrompt", "prompt_in_target": "PromptInTrainTarget", "group": "SharedGroupId"}
_STRONG = ("exact", "normalized")
#: Code scanning rejects a run with more results than this (its documented hard limit): the rest stay in the JSON report.
MAX_RESULTS = 25_000
_LEVEL_RANK = {"error": 0, "warning": 1, "note": 2}


def _plain(text: str) -> str:
    """Our report text without its Markdown marks (``**and**`` -> ``and``)."""
    spans = getattr(text, "spans", None)
    return "".join(s.text for s in spans) if spans else str(text)


#: What a finding of each kind can prove (see :meth:`Finding.evidence`): a pair is also a prompt and a target leak.
_EVIDENCE = {"pair": ("pair", "prompt", "target", "target_in_prompt")}


def _rule_level(kind: str, policy: Policy, levels: tuple[str, ...]) -> str:
    """A rule's default: ``error`` when the gate can fail on a finding of its kind at some level that ran, else ``warning``."""
    return "error" if any(policy.gates(k, lv) for k in _EVIDENCE.get(kind, (kind,)) for lv in levels) else "warning"


def _rules(policy: Policy, levels: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for kind in KINDS:
        what = _plain(content.KIND_TEXT[kind])
        out.append({
            "id": kind,
            "name": _RULE_NAMES[kind],
            "shortDescription": {"text": f"Eval record in train: {what}"},
            "fullDescription": {"text": f"An eval record was found in the train data ({what}). Training on it leaks the eval "
                                        "into the model; remove the train record or the eval record."},
            "defaultConfiguration": {"level": _rule_level(kind, policy, levels)},
            "properties": {"tags": ["data-leakage", "train-eval-contamination"]},
        })
    return out


def result_level(f: Finding, policy: Policy, accepted: bool = False) -> str:
    """``error`` when gated; otherwise ``warning`` at exact/normalized, ``note`` at near/contained."""
    if is_gated(f, policy, accepted):
        return "error"
    return "warning" if f.level in _STRONG else "note"


def _location(f: Finding, root: str) -> dict[str, Any]:
    """The train file (relative to ``%SRCROOT%`` when under ``root``, else an absolute ``file:`` URI) and its line or row."""
    art: dict[str, Any]
    full = os.path.abspath(f.train_file or "")
    if os.path.commonpath([root, full]) == root:
        art = {"uri": quote(os.path.relpath(full, root).replace(os.sep, "/")), "uriBaseId": SRCROOT}
    else:
        art = {"uri": Path(full).as_uri()}
    phys: dict[str, Any] = {"artifactLocation": art}
    if f.train_line:
        phys["region"] = {"startLine": f.train_line}
    return {"physicalLocation": phys}


def _properties(f: Finding) -> dict[str, Any]:
    d = f.detail or {}
    props: dict[str, Any] = {"eval_set": f.eval_set, "eval_id": f.eval_id, "train_id": f.train_id, "level": f.level,
                             "score": round(f.score, 4), "eval_field": f.eval_field, "train_field": f.train_field}
    for k in ("prompt_level", "prompt_score", "target_level", "target_score", "target_in"):
        if k in d:
            props[k] = d[k]
    if f.subset is not None:
        props["subset"] = f.subset
    return {k: v for k, v in props.items() if v is not None}


def _result(f: Finding, policy: Policy, root: str, accepted: Accepted | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": f.kind, "ruleIndex": KINDS.index(f.kind), "level": result_level(f, policy, accepted is not None),
                           "message": {"text": describe(f)}}
    if accepted is not None:  # SARIF's own word for a finding someone reviewed and accepted
        why = accepted.reason or "in the baseline"
        out["suppressions"] = [{"kind": "external", "status": "accepted", "justification": f"{accepted.by}: {why}"}]
    if f.train_file:
        out["locations"] = [_location(f, root)]
    out["partialFingerprints"] = {FINGERPRINT_KEY: f"{f.eval_set or ''}:{f.kind}:{f.eval_fingerprint}:{f.train_fingerprint}"}
    out["properties"] = _properties(f)
    return out


def _order(f: Finding) -> tuple:
    return (f.eval_set or "", f.train_file or "", f.train_line or 0, f.eval_row, KINDS.index(f.kind), LEVELS.index(f.level))


def _kept(findings: list[Finding], policy: Policy, accepted: Mapping[tuple, Accepted]) -> list[Finding]:
    """At most :data:`MAX_RESULTS` findings, errors first, then warnings, then notes; in ``findings``' order."""
    if len(findings) <= MAX_RESULTS:
        return findings
    rank = sorted(range(len(findings)), key=lambda i: (_LEVEL_RANK[result_level(findings[i], policy, findings[i].key() in accepted)], i))
    return [findings[i] for i in sorted(rank[:MAX_RESULTS])]


def _driver(policy: Policy, levels: tuple[str, ...]) -> dict[str, Any]:
    driver: dict[str, Any] = {"name": "leakcheck", "version": __version__, "semanticVersion": __version__}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = _rules(policy, levels)
    return driver


def information_uri() -> str | None:
    """The project's home page from the installed package's metadata (``[project.urls]``), if it names one."""
    try:
        urls = metadata.metadata("leakcheck").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "repository", "source"):
            return url.strip()
    return None


def _folder_uri(path: str) -> str:
    """A folder's ``file:`` URI, ending in ``/`` as SARIF asks of a base URI.

    >>> _folder_uri("/"), _folder_uri("/w/my repo")
    ('file:///', 'file:///w/my%20repo/')
    """
    uri = Path(path).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def to_sarif(results: Mapping[str, ScanResult], policy: Policy, root: str | None = None) -> dict[str, Any]:
    """The SARIF log of one scan (every eval set); ``root`` (default ``GITHUB_WORKSPACE``, else the current folder) is ``%SRCROOT%``."""
    base = os.path.abspath(root or os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    levels = tuple(dict.fromkeys(lv for r in results.values() for lv in r.levels))
    accepted = {f.key(): a for r in results.values() for f in r.findings if (a := r.acceptance(f)) is not None}
    findings = _kept(sorted((f for r in results.values() for f in r.findings), key=_order), policy, accepted)
    left_out = sum(len(r.findings) for r in results.values()) - len(findings)
    sets = {name: {"exit_code": exit_code(r, policy), "eval_records": r.eval.records,
                   "contaminated": r.summary(policy)["contaminated"]["count"], "eval": r.eval.path, "train": r.train.path}
            for name, r in sorted(results.items())}
    run = {
        "tool": {"driver": _driver(policy, levels)},
        "originalUriBaseIds": {SRCROOT: {"uri": _folder_uri(base)}},
        "results": [_result(f, policy, base, accepted.get(f.key())) for f in findings],
        "columnKind": "unicodeCodePoints",
        "properties": {"fail_on": policy.spec(), "levels": list(levels), "eval_sets": sets, "results_left_out": left_out},
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def write_sarif(results: Mapping[str, ScanResult], path: str | os.PathLike, policy: Policy, root: str | None = None) -> None:
    write_atomic(path, json.dumps(to_sarif(results, policy, root), indent=2, ensure_ascii=False, sort_keys=False) + "\n")
