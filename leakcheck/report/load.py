"""Read a saved JSON report back into a :class:`~leakcheck.result.ScanResult`.

CI keeps the JSON report as an artifact; ``leakcheck report`` renders it later. The
round trip is exact: ``to_dict(from_dict(d)) == d`` for a report this version wrote.

>>> from leakcheck.report.json import to_dict
>>> from leakcheck.result import InputInfo, ScanResult
>>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 2, 2)
>>> r = ScanResult(info, info, ("exact",), {"levels": {"exact": {}}, "short_target_chars": 20, "max_target_hits": 10}, ())
>>> from_dict(to_dict(r)) == r
True
"""

from __future__ import annotations

import dataclasses

import json
import os
from typing import Any

from ..config import KINDS, LEVELS, Limit, Policy
from ..errors import InputError, UsageError
from ..result import Accepted, BaselineEntry, BaselineUse, ChanceMatch, EvalDuplicate, Finding, InputInfo, ScanResult, SkippedRow, UnreadFile, indexes_in
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
        no_target=d.get("no_target", 0),
        unread=tuple(UnreadFile(**u) for u in d.get("unread", [])),
        hub=d.get("hub"),
    )


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(what)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


_FINDING_STR = ("eval_id", "train_id", "eval_field", "train_field", "eval_snippet", "train_snippet")


def _check(d: dict[str, Any]) -> None:
    """Fail with :class:`ValueError` naming the first value the renderers could not use."""
    _need(_strs(d["levels"]) and set(d["levels"]) <= set(LEVELS), f"levels must be a list of {', '.join(LEVELS)}")
    params = d["parameters"]
    _need(isinstance(params, dict) and isinstance(params.get("levels"), dict)
          and all(isinstance(v, dict) for v in params["levels"].values()), "parameters.levels must map levels to their parameters")
    for k in ("short_target_chars", "max_target_hits"):
        _need(k in params, f"parameters.{k} is missing")
    for side in ("train", "eval"):
        i = d[side]
        _need(isinstance(i, dict) and isinstance(i.get("path"), str) and isinstance(i.get("format"), str) and _strs(i.get("files"))
              and _is_int(i.get("records")) and _is_int(i.get("rows")) and isinstance(i.get("fields"), dict),
              f"{side} must hold path, files, format, fields, records and rows")
        _need(all(isinstance(k, str) and _is_int(n) for k, n in i.get("subsets", {}).items()), f"{side}.subsets must map names to counts")
        _need(_is_int(i.get("no_target", 0)), f"{side}.no_target must be an integer")
        _need(isinstance(i.get("unread", []), list) and all(
            isinstance(u, dict) and set(u) == {"path", "reason"} and _strs(list(u.values())) for u in i.get("unread", [])),
            f"{side}.unread must be a list of {{path, reason}} objects")
    for key in ("findings", "near_misses", "siblings"):
        fs = d.get(key, [])
        _need(isinstance(fs, list), f"{key} must be a list")
        for n, f in enumerate(fs):
            where = f"{key}[{n}]"
            _need(isinstance(f, dict), f"{where} must be an object")
            _need(f.get("kind") in KINDS, f"{where}.kind {f.get('kind')!r} is not one of {', '.join(KINDS)}")
            _need(f.get("level") in LEVELS, f"{where}.level {f.get('level')!r} is not one of {', '.join(LEVELS)}")
            _need(isinstance(f.get("score"), (int, float)) and not isinstance(f.get("score"), bool), f"{where}.score must be a number")
            _need(_is_int(f.get("eval_index")) and _is_int(f.get("train_index")), f"{where}: eval_index and train_index must be integers")
            _need(all(isinstance(f.get(k), str) for k in _FINDING_STR), f"{where}: {', '.join(_FINDING_STR)} must be strings")
            _need(f.get("subset") is None or isinstance(f["subset"], str), f"{where}.subset must be a string")
    cs = d["chance_target_matches"]
    _need(isinstance(cs, list) and all(
        isinstance(c, dict) and isinstance(c.get("eval_id"), str) and isinstance(c.get("target"), str) and _strs(c.get("examples"))
        and _is_int(c.get("eval_index")) and _is_int(c.get("train_matches")) and c.get("level") in LEVELS for c in cs),
        "chance_target_matches must be a list of chance matches")
    ds = d["eval_duplicates"]
    _need(isinstance(ds, list) and all(
        isinstance(e, dict) and e.get("kind") in KINDS and e.get("level") in LEVELS and _strs(e.get("ids"))
        and isinstance(e.get("indexes"), list) and all(_is_int(r) for r in e["indexes"]) and isinstance(e.get("snippet"), str) for e in ds),
        "eval_duplicates must be a list of duplicate groups")
    _need(_strs(d.get("notes", [])), "notes must be a list of strings")
    _need(isinstance(d.get("created_at", ""), str), "created_at must be a string")


def from_dict(d: dict[str, Any]) -> ScanResult:
    """Rebuild the result a JSON report was written from."""
    _check(d)
    return ScanResult(
        train=_info(d["train"]),
        eval=_info(d["eval"]),
        levels=tuple(d["levels"]),
        parameters=d["parameters"],
        findings=tuple(Finding(**indexes_in(f)) for f in d["findings"]),
        chance=tuple(ChanceMatch(**{**indexes_in(c), "examples": tuple(c["examples"])}) for c in d["chance_target_matches"]),
        eval_duplicates=tuple(
            EvalDuplicate(kind=e["kind"], level=e["level"], ids=tuple(e["ids"]), rows=tuple(e["indexes"]), snippet=e["snippet"])
            for e in d["eval_duplicates"]
        ),
        near_misses=tuple(Finding(**indexes_in(f)) for f in d.get("near_misses", ())),
        siblings=tuple(Finding(**indexes_in(f)) for f in d.get("siblings", ())),
        notes=tuple(d.get("notes", ())),
        created_at=d.get("created_at", ""),
        accepted=tuple(Accepted(**a) for a in d.get("gate", {}).get("accepted", ())),
        baseline=_baseline(d.get("gate", {}).get("baseline")),
        allow_unused=tuple(d.get("gate", {}).get("allowlist_unused", ())),
        config_file=d.get("config_file"),
    )


def _baseline(b: dict[str, Any] | None) -> BaselineUse | None:
    if b is None:
        return None
    return BaselineUse(b["file"], b["baselined"], b["new"], tuple(BaselineEntry(**{**e, "evidence": tuple(e.get("evidence", ()))})
                                                             for e in b["gone_entries"]))


def _policy(gate: dict[str, Any]) -> Policy:
    """The gate policy a report was written with, its limits included."""
    p = Policy.parse(gate["policy"])
    limits = tuple(Limit.parse(c["limit"]) for c in gate.get("limits", ()))
    return dataclasses.replace(p, limits=limits) if limits else p


def load_report(path: str | os.PathLike) -> tuple[ScanResult, Policy]:
    """Read a JSON report file: the result and the gate policy it was written with."""
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as fh:
            d = json.load(fh)
    except FileNotFoundError:
        raise InputError(p, None, "no such file", "pass the JSON report written by leakcheck scan --json") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        if isinstance(exc, json.JSONDecodeError) and not exc.doc.strip():
            raise InputError(p, None, "empty file", "pass the JSON report written by leakcheck scan --json") from None
        # an unterminated string runs to the end of the file: cut short too
        cut = isinstance(exc, json.JSONDecodeError) and (exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string"))
        raise InputError(p, None, f"not a JSON file ({exc})" + ("; it ends too early, as if cut short" if cut else ""),
                         "pass the JSON report written by leakcheck scan --json") from None
    except RecursionError:
        raise InputError(p, None, "not a leakcheck JSON report (nested too deeply)", "pass the file written by leakcheck scan --json") from None
    except OSError as exc:
        raise InputError(p, None, f"cannot be read ({exc.strerror or exc})", "pass the JSON report written by leakcheck scan --json") from None
    if not isinstance(d, dict) or "schema_version" not in d or "findings" not in d:
        raise InputError(p, None, "not a leakcheck JSON report", "pass the file written by leakcheck scan --json")
    v = d["schema_version"]
    if not _is_int(v) or v != SCHEMA_VERSION:
        fix = ("rescan with this leakcheck (leakcheck scan --json) or render it with the version that wrote it"
               if _is_int(v) and v < SCHEMA_VERSION else "render it with the leakcheck version that wrote it, or upgrade leakcheck")
        raise InputError(p, None, f"report schema version {v!r} is not {SCHEMA_VERSION}", fix)
    try:
        policy = _policy(d["gate"])
        result = dataclasses.replace(from_dict(d), policy=policy)
    except (KeyError, TypeError, ValueError, AttributeError, UsageError) as exc:
        raise InputError(p, None, f"malformed leakcheck JSON report ({type(exc).__name__}: {exc})",
                         "regenerate it with leakcheck scan --json") from None
    return result, policy
