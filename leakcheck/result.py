"""Plain dataclasses a scan returns; renderers and the gate only read them."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from typing import Any

from .config import KINDS, LEVELS, Policy


#: In reports, a record's 0-based position in its input is an *index* (like a Python or
#: ``datasets`` index, and the default id); *lines* and *rows* count from 1.
_INDEX_KEYS = {"eval_row": "eval_index", "train_row": "train_index"}


def _indexes_out(d: dict[str, Any]) -> dict[str, Any]:
    return {_INDEX_KEYS.get(k, k): v for k, v in d.items()}


def indexes_in(d: dict[str, Any]) -> dict[str, Any]:
    """A finding or chance match from a JSON report, with its fields named as in the dataclass."""
    back = {v: k for k, v in _INDEX_KEYS.items()}
    return {back.get(k, k): v for k, v in d.items()}


@dataclass(frozen=True, slots=True)
class Finding:
    """One eval record found in one train record, through one kind of match at one level.

    A ``pair`` finding stands for both prompt and target of the same two records; it is not
    repeated as separate ``prompt`` and ``target`` findings. ``score`` is 1.0 at the exact
    and normalized levels, the verified similarity otherwise.
    """

    eval_id: str
    train_id: str
    kind: str
    level: str
    score: float
    eval_row: int
    train_row: int
    eval_field: str
    train_field: str
    eval_snippet: str
    train_snippet: str
    group: str | None = None
    detail: dict[str, Any] | None = None
    #: The eval record's subset (``data_source``), when the data carries one.
    subset: str | None = None
    #: Content fingerprints (:func:`leakcheck.fingerprint.record_fingerprint`) of both records:
    #: they name the records whatever their row numbers (baselines, clean, published indexes).
    eval_fingerprint: str = ""
    train_fingerprint: str = ""
    #: Where the train record is: its file and 1-based line (JSONL) or row (Parquet, CSV).
    train_file: str | None = None
    train_line: int | None = None
    #: The eval set (benchmark) the eval record belongs to.
    eval_set: str | None = None

    def evidence(self) -> tuple[tuple[str, str], ...]:
        """``(kind, level)`` of everything this finding proves, for the gate.

        A ``pair`` is a prompt leak at its prompt's level and a target leak at its target's
        level (``target_in_prompt`` when the eval target was found inside the train prompt),
        besides a pair at the strongest of the two.

        >>> f = Finding("e", "t", "pair", "exact", 1.0, 1, 1, "p", "p", "", "",
        ...             detail={"prompt_level": "near", "prompt_score": 0.7, "target_level": "exact",
        ...                     "target_score": 1.0, "target_in": "target"})
        >>> f.evidence()
        (('pair', 'exact'), ('prompt', 'near'), ('target', 'exact'))
        """
        d = self.detail
        if self.kind != "pair" or not d or "prompt_level" not in d:
            return ((self.kind, self.level),)
        target_kind = "target_in_prompt" if d.get("target_in") == "prompt" else "target"
        return (("pair", self.level), ("prompt", d["prompt_level"]), (target_kind, d["target_level"]))

    def key(self) -> tuple[str | None, str, str, str, str]:
        """What names this finding whatever the rows: eval set, both fingerprints, kind and level."""
        return (self.eval_set, self.eval_fingerprint, self.train_fingerprint, self.kind, self.level)

    def sort_key(self) -> tuple:
        return (self.eval_row, KINDS.index(self.kind), LEVELS.index(self.level), self.train_row)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["group"] is None:
            del d["group"]
        if d["detail"] is None:
            del d["detail"]
        for k in ("subset", "train_file", "train_line", "eval_set"):
            if d[k] is None:
                del d[k]
        return _indexes_out(d)


@dataclass(frozen=True, slots=True)
class Accepted:
    """A finding that a baseline entry or an allowlist entry accepts: listed in reports, never gated."""

    eval_set: str | None
    eval_fingerprint: str
    train_fingerprint: str
    kind: str
    level: str
    by: str  # "baseline" or "allowlist"
    reason: str = ""

    def key(self) -> tuple[str | None, str, str, str, str]:
        return (self.eval_set, self.eval_fingerprint, self.train_fingerprint, self.kind, self.level)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One accepted finding of a baseline file, named by content (never by row number)."""

    eval_set: str | None
    eval_id: str  # for the people reviewing the file; matching ignores it
    eval_fingerprint: str
    train_fingerprint: str
    kind: str
    level: str
    snippet: str = ""
    #: What the finding proved, ``kind:level`` each (a pair: its prompt's and target's levels too).
    evidence: tuple[str, ...] = ()

    def proved(self) -> dict[str, int]:
        """Strongest level rank proved per kind."""
        out: dict[str, int] = {}
        for item in self.evidence or (f"{self.kind}:{self.level}",):
            k, _, lv = item.partition(":")
            out[k] = min(out.get(k, len(LEVELS)), LEVELS.index(lv))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"eval_set": self.eval_set, "eval_id": self.eval_id, "eval_fingerprint": self.eval_fingerprint,
                "train_fingerprint": self.train_fingerprint, "kind": self.kind, "level": self.level, "snippet": self.snippet,
                "evidence": list(self.evidence)}


@dataclass(frozen=True)
class BaselineUse:
    """How a scan compared with a baseline file: findings it accepted, and its entries no finding matched (gone)."""

    path: str
    baselined: int
    #: Findings no baseline entry matched (an allowlist may still accept them).
    new: int
    gone: tuple[BaselineEntry, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.path, "baselined": self.baselined, "new": self.new, "gone": len(self.gone),
                "gone_entries": [e.to_dict() for e in self.gone]}


@dataclass(frozen=True, slots=True)
class ChanceMatch:
    """Target matches that are likely coincidence: a very short or generic reference answer.

    One object per eval record: how many train records share its target and a few examples.
    """

    eval_id: str
    eval_row: int
    target: str
    reason: str  # "short" or "generic"
    level: str
    train_matches: int
    examples: tuple[str, ...]
    eval_set: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["examples"] = list(self.examples)
        if d["eval_set"] is None:
            del d["eval_set"]
        return _indexes_out(d)


@dataclass(frozen=True, slots=True)
class EvalDuplicate:
    """A set of eval records that are the same item (they skew eval weighting)."""

    kind: str
    level: str
    ids: tuple[str, ...]
    rows: tuple[int, ...]
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "level": self.level, "ids": list(self.ids), "indexes": list(self.rows), "snippet": self.snippet}


@dataclass(frozen=True)
class SkippedRow:
    file: str
    where: str
    reason: str
    message: str


@dataclass(frozen=True)
class UnreadFile:
    """A file (or hidden folder) inside an input folder or glob that was not read, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class InputInfo:
    """One side of the scan as read: where from, which format and fields, how many rows."""

    path: str
    files: tuple[str, ...]
    format: str
    fields: dict[str, str | None]
    records: int
    rows: int
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_rows: tuple[SkippedRow, ...] = ()
    #: Records whose reward target is missing, null or empty: their prompt was compared, no target.
    no_target: int = 0
    #: Records per subset (``data_source``); empty when the data carries none.
    subsets: dict[str, int] = field(default_factory=dict)
    #: Files found beside the data that were not read (hidden, not a data format, ...).
    unread: tuple[UnreadFile, ...] = ()
    #: For a Hub dataset: repo_id, the revision (commit sha) that was read, config and split.
    hub: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "path": self.path,
            "files": list(self.files),
            "format": self.format,
            "fields": self.fields,
            "rows": self.rows,
            "records": self.records,
            "skipped": dict(sorted(self.skipped.items())),
            "skipped_rows": [asdict(s) for s in self.skipped_rows],
        }
        if self.subsets:
            d["subsets"] = dict(sorted(self.subsets.items()))
        if self.no_target:
            d["no_target"] = self.no_target
        if self.unread:
            d["unread"] = [asdict(u) for u in self.unread]
        if self.hub:
            d["hub"] = dict(self.hub)
        return d


def _pct(n: int, total: int) -> float:
    return round(100.0 * n / total, 2) if total else 0.0


@dataclass(frozen=True)
class ScanResult:
    """What a scan found. Counts are derived from the findings, never stored twice."""

    train: InputInfo
    eval: InputInfo
    levels: tuple[str, ...]
    parameters: dict[str, Any]
    findings: tuple[Finding, ...]
    chance: tuple[ChanceMatch, ...] = ()
    eval_duplicates: tuple[EvalDuplicate, ...] = ()
    #: The closest near/contained matches under their thresholds: not leaks, shown so a person
    #: can judge the thresholds (GSM8K's same-template pairs land here).
    near_misses: tuple[Finding, ...] = ()
    #: Fuzzy matches of two records whose reward targets clearly disagree (another final
    #: answer, other code): sibling tasks, not leaks, never gated. ``detail`` holds both
    #: fields' levels and scores and why the targets disagree.
    siblings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    created_at: str = ""
    #: The gate the scan was configured with; what :meth:`summary` counts as contaminated.
    policy: Policy = field(default_factory=Policy)
    #: Findings a baseline or allowlist accepts (see :mod:`leakcheck.baseline`): never gated.
    accepted: tuple[Accepted, ...] = ()
    baseline: BaselineUse | None = None
    #: Allowlist entries for this eval set that matched none of its findings (stale), as text.
    allow_unused: tuple[str, ...] = ()
    #: The configuration file the scan's settings came from, if any.
    config_file: str | None = None

    @functools.cached_property
    def _acceptance(self) -> dict[tuple[str | None, str, str, str, str], Accepted]:
        out: dict[tuple[str | None, str, str, str, str], Accepted] = {}
        for a in sorted(self.accepted, key=lambda a: a.by != "allowlist"):  # the allowlist's reason first
            out.setdefault(a.key(), a)
        return out

    def acceptance(self, f: Finding) -> Accepted | None:
        """The baseline or allowlist entry that accepts ``f``, if any (the allowlist's reason first)."""
        return self._acceptance.get(f.key()) if self.accepted else None

    def is_accepted(self, f: Finding) -> bool:
        return bool(self.accepted) and f.key() in self._acceptance

    @property
    def contaminated_rows(self) -> frozenset[int]:
        """Eval rows with at least one finding the result's policy gates."""
        return self.gated_rows(self.policy)

    def gated(self, policy: Policy | None = None) -> tuple[Finding, ...]:
        """The findings ``policy`` (default: the scan's) fails on."""
        p = policy or self.policy
        return tuple(f for f in self.findings if not self.is_accepted(f) and any(p.gates(k, lv) for k, lv in f.evidence()))

    def gated_rows(self, policy: Policy | None = None) -> frozenset[int]:
        return frozenset(f.eval_row for f in self.gated(policy))

    def summary(self, policy: Policy | None = None) -> dict[str, Any]:
        """Counts and percentages of eval records, by kind and level.

        ``contaminated`` (the headline) counts the eval records the gate judged leaked under
        ``policy`` (default: the scan's); ``not_gated`` counts those whose findings the policy
        does not gate. Each finding sits at the strongest level any of its fields reached.
        """
        total = self.eval.records
        by: dict[tuple[str, str], set[int]] = {}
        for f in self.findings:
            by.setdefault((f.kind, f.level), set()).add(f.eval_row)
        by_kind: dict[str, dict[str, Any]] = {}
        for k in KINDS:
            rows_k: set[int] = set()
            levels: dict[str, Any] = {}
            for lv in self.levels:
                rows = by.get((k, lv), set())
                rows_k |= rows
                if rows:
                    levels[lv] = {"count": len(rows), "percent": _pct(len(rows), total)}
            if rows_k:
                by_kind[k] = {"count": len(rows_k), "percent": _pct(len(rows_k), total), "levels": levels}
        by_level: dict[str, Any] = {}
        for lv in self.levels:
            rows = set().union(*[r for (k, l2), r in by.items() if l2 == lv]) if by else set()
            by_level[lv] = {"count": len(rows), "percent": _pct(len(rows), total)}
        cont = self.gated_rows(policy)
        ungated = {f.eval_row for f in self.findings} - cont
        dup_rows = {r for d in self.eval_duplicates for r in d.rows}
        sib = {f.eval_row for f in self.siblings}
        return {
            "eval_records": total,
            "train_records": self.train.records,
            "contaminated": {"count": len(cont), "percent": _pct(len(cont), total)},
            "not_gated": {"count": len(ungated), "percent": _pct(len(ungated), total)},
            "by_kind": by_kind,
            "by_level": by_level,
            "findings": len(self.findings),
            "chance_target_matches": {"count": len(self.chance), "percent": _pct(len(self.chance), total)},
            "eval_duplicates": {"groups": len(self.eval_duplicates), "records": len(dup_rows)},
            "near_misses": len(self.near_misses),
            "siblings": {"count": len(sib), "percent": _pct(len(sib), total)},
            # rows = records + skipped on each side: nothing is dropped without a count
            "skipped_rows": {
                "train": {"count": sum(self.train.skipped.values()), "by_reason": dict(sorted(self.train.skipped.items()))},
                "eval": {"count": sum(self.eval.skipped.values()), "by_reason": dict(sorted(self.eval.skipped.items()))},
            },
        }
