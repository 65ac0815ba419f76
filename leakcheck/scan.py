"""Wire it together: read eval, build the index, stream train through it, collect findings.

>>> import leakcheck, os
>>> d = os.path.join(os.path.dirname(leakcheck.__file__), "data", "chat_small")
>>> r = leakcheck.scan(os.path.join(d, "train_chat.jsonl"), os.path.join(d, "eval_questions.jsonl"),
...                    leakcheck.ScanConfig(levels=("exact", "normalized")))
>>> r.summary()["contaminated"]["count"] > 0
True
"""

from __future__ import annotations

import datetime as _dt
import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .canon import normalize
from .config import LEVELS, Fields, ScanConfig
from .detect.base import Detector, Match
from .detect.hashing import TextMatchDetector
from .errors import InputError, LeakcheckError, RecordError
from .formats import FormatSpec, detect_format
from .io import BadRow, RawRow, iter_rows, open_source
from .records import Record
from .result import ChanceMatch, EvalDuplicate, Finding, InputInfo, ScanResult, SkippedRow

if TYPE_CHECKING:
    from .detect.agree import Agreement

Input = str | os.PathLike | Iterable[Mapping[str, Any]]
_RANK = {lv: i for i, lv in enumerate(LEVELS)}
_FUZZY = frozenset({"near", "contained"})
#: The matches the other field can confirm or contradict: prompt/prompt, target/target, eval target in the train text.
_SAME_AND_IN_TEXT = (("prompt", "prompt"), ("target", "target"), ("target", "prompt"))
_MAX_SKIPPED_LISTED = 10_000
SNIPPET = 160


def snippet(text: str | None, n: int = SNIPPET) -> str:
    """Whitespace-collapsed start of ``text`` for reports."""
    if not text:
        return ""
    t = " ".join(text[: n * 8].split())  # the head is enough, even of a 50 MB text
    return t if len(t) <= n else t[: n - 1] + "…"


@dataclass
class _Reader:
    """Turns one input into records, applying the error policy and counting every row."""

    name: str
    side: str
    fields: Fields
    on_error: str
    files: tuple[str, ...] = ()
    spec: FormatSpec | None = None
    rows: int = 0
    records: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_rows: list[SkippedRow] = field(default_factory=list)
    first_where: str = ""
    subsets: dict[str, int] = field(default_factory=dict)

    def _raw(self, data: Input) -> Iterator[RawRow | BadRow]:
        if isinstance(data, (str, os.PathLike)):
            src = open_source(data)
            self.files = src.files
            return iter_rows(src)
        rows: Iterable[Any]
        if hasattr(data, "iter_rows") and hasattr(data, "schema"):  # polars: iterating gives columns
            rows = data.iter_rows(named=True)  # type: ignore[union-attr]
        elif hasattr(data, "iterrows") and hasattr(data, "to_dict"):  # pandas: iterating gives column names
            rows = data.to_dict("records")  # type: ignore[union-attr]
        elif isinstance(data, Iterable) and not isinstance(data, Mapping):
            rows = data
        else:
            raise LeakcheckError(
                f"{self.side}: cannot read a {type(data).__name__}; pass a path, a datasets.Dataset, "
                "a polars/pandas DataFrame or an iterable of dicts"
            )
        return (RawRow(self.name, "row", i, r) for i, r in enumerate(rows))

    def _skip(self, file: str, where: str, reason: str, message: str, fix: str) -> None:
        if self.on_error == "fail":
            raise InputError(file, where, message, (fix + ", or pass --on-error skip") if fix else "or pass --on-error skip")
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if len(self.skipped_rows) < _MAX_SKIPPED_LISTED:
            self.skipped_rows.append(SkippedRow(file, where, reason, message))

    def records_of(self, data: Input) -> Iterator[Record]:
        f = self.fields
        extract = None
        for raw in self._raw(data):
            rownum = self.rows
            self.rows += 1
            if isinstance(raw, BadRow):
                self._skip(raw.file, raw.where, raw.reason, raw.what, raw.fix)
                continue
            try:
                if extract is None:
                    self.spec = detect_format(raw.data, f.prompt, f.target, f.id, f.group)
                    self.first_where = raw.where
                    extract = self.spec.extract
                rec = extract(raw.data, rownum)
            except RecordError as exc:
                what = exc.what
                if self.spec is not None and exc.reason in ("missing_field", "not_text"):
                    what += f" (format {self.spec.name}, detected from {self.first_where})"
                self._skip(raw.file, raw.where, exc.reason, what, exc.fix or "")
                continue
            self.records += 1
            yield rec

    def info(self, display: str) -> InputInfo:
        return InputInfo(
            path=display,
            files=self.files,
            format=self.spec.name if self.spec else "unknown",
            fields=self.spec.fields() if self.spec else {},
            records=self.records,
            rows=self.rows,
            skipped=dict(self.skipped),
            skipped_rows=tuple(self.skipped_rows),
            subsets=dict(self.subsets),
        )


def _display(data: Input, side: str) -> str:
    return os.fspath(data) if isinstance(data, (str, os.PathLike)) else f"<{side} records>"


def build_detectors(evals: list[Record], config: ScanConfig) -> list[Detector]:
    """One detector per requested level, each indexed on the eval records."""
    dets: list[Detector] = []
    for lv in config.levels:
        if lv in ("exact", "normalized"):
            dets.append(TextMatchDetector(lv, evals, config.short_target_chars))
        else:
            from .detect import fuzzy  # numpy/datasketch only when asked for

            dets.append(fuzzy.build(lv, evals, config))
    return dets


def _eval_duplicates(evals: list[Record], short: int) -> list[EvalDuplicate]:
    """Eval records sharing a normalized prompt (and target): one group per item, strongest kind."""
    out: list[EvalDuplicate] = []
    claimed: set[int] = set()
    for kind in ("pair", "prompt", "target"):
        buckets: dict[tuple, list[int]] = {}
        for i, r in enumerate(evals):
            if i in claimed:
                continue
            if kind == "pair":
                if r.target is None:
                    continue
                key: tuple = (normalize(r.prompt), normalize(r.target))
            elif kind == "prompt":
                key = (normalize(r.prompt),)
            else:
                if r.target is None or len(normalize(r.target)) < short:
                    continue
                key = (normalize(r.target),)
            buckets.setdefault(key, []).append(i)
        for idxs in buckets.values():
            if len(idxs) > 1:
                exact = len({(evals[i].prompt, evals[i].target) for i in idxs}) == 1 if kind == "pair" else False
                exact = exact or (kind == "prompt" and len({evals[i].prompt for i in idxs}) == 1)
                exact = exact or (kind == "target" and len({evals[i].target for i in idxs}) == 1)
                claimed.update(idxs)
                first = evals[idxs[0]]
                out.append(EvalDuplicate(
                    kind=kind,
                    level="exact" if exact else "normalized",
                    ids=tuple(evals[i].id for i in idxs),
                    rows=tuple(evals[i].row for i in idxs),
                    snippet=snippet(first.target if kind == "target" else first.prompt, 100),
                ))
    out.sort(key=lambda d: d.rows[0])
    return out


@dataclass(frozen=True, slots=True)
class _Best:
    """The strongest match of one (eval field, train field) between two records."""

    rank: int
    score: float
    level: str

    def beats(self, other: "_Best") -> bool:
        return (self.rank, -self.score) < (other.rank, -other.score)


@dataclass
class _TargetHits:
    """Target-only matches of one eval record, until the scan ends.

    A target matching more than ``max_target_hits`` train records (or groups) *at a level or
    stronger* is generic at that level: those matches are chance. Counting per level keeps
    the verdict monotone: a weaker level that runs cannot make stronger matches chance.
    """

    keys_at: list[set[Any]]
    pending: list[Finding] = field(default_factory=list)
    total: int = 0
    examples: list[str] = field(default_factory=list)
    rank: int = len(LEVELS)

    def generic_from(self, cap: int) -> int:
        """The strongest level rank at which this target is generic (``len(LEVELS)``: none)."""
        seen: set[Any] = set()
        for r, keys in enumerate(self.keys_at):
            seen |= keys
            if len(seen) > cap:
                return r
        return len(LEVELS)


class _Collector:
    """Turns raw matches into findings: pairs, strongest level per field, chance targets, groups."""

    def __init__(self, evals: list[Record], config: ScanConfig, espec: FormatSpec, tspec_ref: "_Reader",
                 scorers: Mapping[str, Callable[[int, str, str | None], float | None]] | None = None):
        self.evals = evals
        self.cfg = config
        self.espec = espec
        self.treader = tspec_ref
        self.scorers = dict(scorers or {})
        self.findings: list[Finding] = []
        # eval idx -> its best siblings: (total order key, finding)
        self.siblings: dict[int, list[tuple[tuple, Finding]]] = {}
        self.near_misses: dict[tuple[int, str], tuple[tuple, Finding]] = {}
        self.short = [r.target is not None and len(normalize(r.target)) < config.short_target_chars for r in evals]
        self.target_only: dict[int, _TargetHits] = {}
        self._norm_targets: dict[int, str] = {}
        self.groups: dict[str, list[int]] = {}
        for i, r in enumerate(evals):
            if r.group is not None:
                self.groups.setdefault(r.group, []).append(i)

    def _field(self, spec: FormatSpec | None, name: str) -> str:
        if spec is None:
            return name
        return (spec.prompt if name == "prompt" else spec.target) or name

    def add_batch(self, batch: list[Record], matches: Iterable[tuple[str, Match]]) -> None:
        best: dict[tuple[int, int], dict[tuple[str, str], _Best]] = {}
        below: list[tuple[str, Match]] = []
        for level, m in matches:
            if m.below:
                below.append((level, m))
                continue
            slot = best.setdefault((m.pos, m.eval_idx), {})
            fk = (m.eval_field, m.train_field)
            cand = _Best(_RANK[level], m.score, level)
            if fk not in slot or cand.beats(slot[fk]):
                slot[fk] = cand
        tspec = self.treader.spec
        for level, m in below:
            if (m.pos, m.eval_idx) not in best:
                self._near_miss(level, m, batch[m.pos], tspec)
        for (pos, ei), slot in sorted(best.items()):
            self._classify(ei, batch[pos], slot, tspec)
        if self.groups:
            # Always reported, whatever else matched: another level finding a text match for
            # the same two records must not remove the group evidence from the gate.
            for t in batch:
                for ei in self.groups.get(t.group, ()) if t.group is not None else ():
                    self._emit(self.evals[ei], t, "group", "exact", 1.0, "prompt", "prompt", tspec, group=t.group)

    def _classify(self, ei: int, t: Record, slot: dict[tuple[str, str], _Best], tspec: FormatSpec | None) -> None:
        """One eval record against one train record: a pair, or each field on its own."""
        e = self.evals[ei]
        agreement, covers = self._agreement(ei, t, slot)
        if agreement is not None and agreement.verdict == "disagree":
            slot = self._without_siblings(ei, t, slot, covers, agreement.why, tspec)
        pp = slot.get(("prompt", "prompt"))
        tt = slot.get(("target", "target"))
        tip = slot.get(("target", "prompt"))
        # The eval target may sit in the train target or, in a plain document, in the train text.
        target, target_in = (tt, "target") if tt and not (tip and tip.beats(tt)) else (tip, "prompt")
        if pp and not target:
            target, target_in = self._verify_target_inside(ei, t)
        agrees = None
        if pp and not target and e.target is not None and t.target is not None and not self.short[ei]:
            target, agrees = self._agreeing_target(e, t, pp, agreement)
        # A short target ("18", "B") equal by chance must not turn a prompt match into a
        # pair: it stays a chance match, counted apart, and the prompt match stands alone.
        if pp and target and not self.short[ei]:
            strong = pp if agrees or not target.beats(pp) else target
            detail = {"prompt_level": pp.level, "prompt_score": round(pp.score, 4),
                      "target_level": target.level, "target_score": round(target.score, 4), "target_in": target_in}
            if agrees:
                detail["target_agrees"] = agrees
            self._emit(e, t, "pair", strong.level, strong.score, "prompt", "prompt", tspec, detail=detail)
            if target_in == "target" and tip:
                self._emit(e, t, "target_in_prompt", tip.level, tip.score, "target", "prompt", tspec)
        else:
            if pp:
                self._emit(e, t, "prompt", pp.level, pp.score, "prompt", "prompt", tspec)
            if tt:
                self._target_only(ei, e, t, tt, tspec)
            if tip:
                self._emit(e, t, "target_in_prompt", tip.level, tip.score, "target", "prompt", tspec)
        pit = slot.get(("prompt", "target"))
        if pit:
            self._emit(e, t, "prompt_in_target", pit.level, pit.score, "prompt", "target", tspec)

    def _agreement(self, ei: int, t: Record, slot: dict[tuple[str, str], _Best]) -> tuple["Agreement | None", tuple[tuple[str, str], ...]]:
        """Does the other field agree, when a fuzzy match needs it as evidence? And which matches it speaks for.

        The train target is compared with the eval target; without a verdict there, a
        fuzzy, not verbatim, prompt match inside a train text that states final answers
        (a document of worked problems) is checked against those answers.
        """
        e = self.evals[ei]
        fuzzy = [b is not None and b.level in _FUZZY for b in map(slot.get, _SAME_AND_IN_TEXT)]
        if e.target is None or not any(fuzzy):
            return None, ()
        from .detect.agree import answers_in_text, compare  # numpy only when a fuzzy level ran

        a = compare(e.target, t.target) if t.target is not None else None
        in_text = [slot[k] for k, f in zip(_SAME_AND_IN_TEXT, fuzzy) if f and k[1] == "prompt"]
        if (a is None or a.verdict == "unknown") and any(b.score < 1.0 for b in in_text):
            verdict = answers_in_text(e.target, t.prompt)
            if verdict is not None:
                return verdict, (("prompt", "prompt"), ("target", "prompt"))
        return a, (("prompt", "prompt"), ("target", "target"))

    def _agreeing_target(self, e: Record, t: Record, pp: _Best, known: "Agreement | None") -> tuple[_Best | None, str | None]:
        """Target evidence from agreement: the targets differ as texts but give the same final answer or program.

        It counts at a fuzzy level (the texts did not match at exact or normalized): the
        prompt's, or the first that ran, with score 1.0; the pair keeps the prompt's level and
        score, and the finding says why the targets agree.
        """
        fuzzy = [pp.level] if pp.level in _FUZZY else [lv for lv in ("near", "contained") if lv in self.cfg.levels]
        if not fuzzy:
            return None, None
        if known is None:
            from .detect.agree import compare

            known = compare(e.target, t.target)
        if known.verdict != "agree":
            return None, None
        return _Best(_RANK[fuzzy[0]], 1.0, fuzzy[0]), known.why

    def _without_siblings(self, ei: int, t: Record, slot: dict[tuple[str, str], _Best], covers: tuple[tuple[str, str], ...],
                          why: str, tspec: FormatSpec | None) -> dict[tuple[str, str], _Best]:
        """Drop the fuzzy matches that a clear disagreement of the targets contradicts.

        Two tasks that differ in one content word are as close as a re-typed copy; a
        different final answer or different code says which. When nothing else links the
        records (no exact/normalized field, no other cross-field match) they are siblings,
        listed apart and never gated.
        """
        fuzzy = {k: b for k, b in slot.items() if k in covers and b.level in _FUZZY}
        rest = {k: b for k, b in slot.items() if k not in fuzzy}
        if not rest:
            self._sibling(ei, t, fuzzy, "prompt" if ("target", "prompt") in covers else "target", why, tspec)
        return rest

    def _sibling(self, ei: int, t: Record, fuzzy: dict[tuple[str, str], _Best], tf: str, why: str, tspec: FormatSpec | None) -> None:
        """List two records apart as sibling tasks; ``tf``: the train field the eval target was compared with."""
        e = self.evals[ei]
        pp, tt = fuzzy.get(("prompt", "prompt")), fuzzy.get(("target", tf))
        strong = min((b for b in (pp, tt) if b), key=lambda b: (b.rank, -b.score))
        score = self.scorers.get(strong.level)
        ps = pp.score if pp else (score(ei, "prompt", t.prompt) if score else None)
        ts = tt.score if tt else (score(ei, "target", getattr(t, tf)) if score else None)
        kind = "pair" if pp and tt else "prompt" if pp else "target"
        ef = "target" if kind == "target" else "prompt"
        detail = {"prompt_level": pp.level if pp else None, "prompt_score": None if ps is None else round(ps, 4),
                  "target_level": tt.level if tt else None, "target_score": None if ts is None else round(ts, 4),
                  "targets_disagree": why}
        f = self._finding(e, t, kind, strong.level, strong.score, ef, ef if kind != "target" else tf, tspec, detail=detail)
        kept = self.siblings.setdefault(ei, [])
        kept.append(((strong.rank, -strong.score, t.row), f))
        if len(kept) > self.cfg.max_target_hits:  # the best few per eval record, whatever the train order
            kept.sort(key=lambda x: x[0])
            del kept[self.cfg.max_target_hits :]

    def all_siblings(self) -> tuple[Finding, ...]:
        """Siblings in eval order, at most ``max_target_hits`` per eval record (strongest first)."""
        out: list[Finding] = []
        for ei in sorted(self.siblings):
            out += [f for _, f in sorted(self.siblings[ei], key=lambda x: x[0])]
        return tuple(out)

    def _verify_target_inside(self, ei: int, t: Record) -> tuple[_Best | None, str]:
        """With the prompt found in ``t``, look for the whole eval target in it too.

        The ``contained`` level cannot see a target shorter than its n-gram (a one-line
        solution); a substring test of the normalized texts can, and runs only for the rare
        records whose prompt already matched.
        """
        e = self.evals[ei]
        if "contained" not in self.cfg.levels or e.target is None or self.short[ei]:
            return None, "target"
        needle = self._norm_target(ei)
        for text, where in ((t.prompt, "prompt"), (t.target, "target")):
            if text and needle in normalize(text):
                return _Best(_RANK["contained"], 1.0, "contained"), where
        return None, "target"

    def _norm_target(self, ei: int) -> str:
        cached = self._norm_targets.get(ei)
        if cached is None:
            cached = self._norm_targets[ei] = normalize(self.evals[ei].target or "")
        return cached

    def _emit(self, e: Record, t: Record, kind: str, level: str, score: float, ef: str, tf: str,
              tspec: FormatSpec | None, group: str | None = None, detail: dict | None = None) -> None:
        self.findings.append(self._finding(e, t, kind, level, score, ef, tf, tspec, group, detail))

    def _finding(self, e: Record, t: Record, kind: str, level: str, score: float, ef: str, tf: str,
                 tspec: FormatSpec | None, group: str | None = None, detail: dict | None = None) -> Finding:
        return Finding(
            eval_id=e.id, train_id=t.id, kind=kind, level=level, score=round(score, 4),
            eval_row=e.row, train_row=t.row,
            eval_field=self._field(self.espec, ef), train_field=self._field(tspec, tf),
            eval_snippet=snippet(e.prompt if ef == "prompt" else e.target),
            train_snippet=snippet(t.prompt if tf == "prompt" else t.target),
            group=group if group is not None else (e.group if e.group is not None and e.group == t.group else None),
            detail=detail,
            subset=e.subset,
        )

    def _target_only(self, ei: int, e: Record, t: Record, tt: _Best, tspec: FormatSpec | None) -> None:
        st = self.target_only.get(ei)
        if st is None:
            st = self.target_only[ei] = _TargetHits([set() for _ in LEVELS])
        st.total += 1
        if len(st.examples) < self.cfg.max_examples:
            st.examples.append(t.id)
        st.rank = min(st.rank, tt.rank)
        if self.short[ei]:
            return
        cap = self.cfg.max_target_hits
        keys = st.keys_at[tt.rank]
        if len(keys) <= cap:  # past the cap the count no longer matters: generic at this level
            keys.add(t.group if t.group is not None else ("row", t.row))
        if _RANK[tt.level] < st.generic_from(cap):
            st.pending.append(self._finding(e, t, "target", tt.level, tt.score, "target", "target", tspec))
        st.pending = [f for f in st.pending if _RANK[f.level] < st.generic_from(cap)]

    def _near_miss(self, level: str, m: Match, t: Record, tspec: FormatSpec | None) -> None:
        """Keep, per eval record and level, the highest-scoring match under the threshold.

        The key orders every candidate totally, so what is kept does not depend on the
        order or sharding of the train side.
        """
        key = (m.score, -t.row, m.eval_field, m.train_field)
        slot = (m.eval_idx, level)
        if slot in self.near_misses and key <= self.near_misses[slot][0]:
            return
        kind = m.eval_field if m.eval_field == m.train_field else f"{m.eval_field}_in_{m.train_field}"
        f = self._finding(self.evals[m.eval_idx], t, kind, level, m.score, m.eval_field, m.train_field, tspec)
        self.near_misses[slot] = (key, f)

    def closest_near_misses(self) -> tuple[Finding, ...]:
        """The ``max_near_misses`` best near misses, one per eval record and level, best first."""
        leaked = {f.eval_row for f in self.findings}
        ranked = sorted(
            ((key[0], -f.eval_row, _RANK[f.level], key), f)
            for (ei, lv), (key, f) in self.near_misses.items()
            if f.eval_row not in leaked
        )
        return tuple(f for _, f in reversed(ranked[-self.cfg.max_near_misses :]))

    def finish(self) -> tuple[list[Finding], list[ChanceMatch]]:
        chance: list[ChanceMatch] = []
        cap = self.cfg.max_target_hits
        for ei, st in sorted(self.target_only.items()):
            e = self.evals[ei]
            generic = st.generic_from(cap)
            kept = [] if self.short[ei] else [f for f in st.pending if _RANK[f.level] < generic]
            self.findings.extend(kept)
            if self.short[ei] or generic < len(LEVELS):
                chance.append(ChanceMatch(
                    eval_id=e.id, eval_row=e.row, target=snippet(e.target, 60),
                    reason="short" if self.short[ei] else "generic", level=LEVELS[st.rank],
                    train_matches=st.total, examples=tuple(st.examples),
                ))
        findings = sorted(self.findings, key=Finding.sort_key)
        return findings, chance


def _parameters(config: ScanConfig, dets: list[Detector]) -> dict[str, Any]:
    return {
        "levels": {d.level: d.parameters() for d in dets},
        "short_target_chars": config.short_target_chars,
        "max_target_hits": config.max_target_hits,
        "on_error": config.on_error,
    }


def load_records(data: Input, fields: Fields | None = None, on_error: str = "fail", side: str = "eval") -> tuple[list[Record], InputInfo]:
    """Read a whole input into records (for the eval side, or for a look in a notebook).

    >>> import leakcheck, os
    >>> p = os.path.join(os.path.dirname(leakcheck.__file__), "data", "chat_small", "eval_questions.jsonl")
    >>> recs, info = load_records(p)
    >>> info.format, len(recs) == info.records
    ('gsm8k', True)
    """
    recs, reader = _read_all(data, fields or Fields(), on_error, side)
    return recs, reader.info(_display(data, side))


def _read_all(data: Input, fields: Fields, on_error: str, side: str) -> tuple[list[Record], _Reader]:
    reader = _Reader(_display(data, side), side, fields, on_error)
    recs = list(reader.records_of(data))
    # Counted here, off the streamed train path: reports need records per eval subset only.
    for r in recs:
        if r.subset is not None:
            reader.subsets[r.subset] = reader.subsets.get(r.subset, 0) + 1
    return recs, reader


def scan(train: Input, eval: Input, config: ScanConfig | None = None) -> ScanResult:
    """Find eval records that leaked into train, field by field and level by level.

    ``train`` and ``eval`` are paths (file, folder, glob, ``save_to_disk`` folder) or
    iterables of dicts (a ``datasets.Dataset`` works). The train side is streamed in
    batches of ``config.batch_size``; only the eval side is held in memory.
    """
    cfg = config or ScanConfig()
    if isinstance(train, (str, os.PathLike)):
        open_source(train)  # fail on a wrong train path before the eval side is indexed
    evals, ereader = _read_all(eval, cfg.eval_fields, cfg.on_error, "eval")
    einfo = ereader.info(_display(eval, "eval"))
    if not evals:
        _no_records(einfo, "eval")
    notes: list[str] = []
    if isinstance(train, (str, os.PathLike)) and isinstance(eval, (str, os.PathLike)):
        if os.path.realpath(os.fspath(train)) == os.path.realpath(os.fspath(eval)):
            notes.append("train and eval are the same file: every record matches itself")
    dets = build_detectors(evals, cfg)
    treader = _Reader(_display(train, "train"), "train", cfg.train_fields, cfg.on_error)
    assert ereader.spec is not None  # records were read, so a format was detected
    scorers = {d.level: d.similarity for d in dets if hasattr(d, "similarity")}
    collector = _Collector(evals, cfg, ereader.spec, treader, scorers)
    # Detectors that learn from the train side (template statistics) see a sample of the
    # first records before anything is matched; that sample is then probed like any batch.
    primers = [d for d in dets if hasattr(d, "prime")]
    stream = treader.records_of(train)
    if primers:
        sample = list(itertools.islice(stream, cfg.sample_size))
        for d in primers:
            d.prime(sample)
        for i in range(0, len(sample), cfg.batch_size):
            _probe(collector, dets, sample[i : i + cfg.batch_size])
        del sample
    batch: list[Record] = []
    for rec in stream:
        batch.append(rec)
        if len(batch) >= cfg.batch_size:
            _probe(collector, dets, batch)
            batch = []
    if batch:
        _probe(collector, dets, batch)
    tinfo = treader.info(_display(train, "train"))
    if treader.records == 0:
        _no_records(tinfo, "train")
    findings, chance = collector.finish()
    near_misses = collector.closest_near_misses()
    for d in dets:
        notes.extend(getattr(d, "notes", lambda: [])())
    return ScanResult(
        train=tinfo,
        eval=einfo,
        levels=cfg.levels,
        parameters=_parameters(cfg, dets),
        findings=tuple(findings),
        chance=tuple(chance),
        eval_duplicates=tuple(_eval_duplicates(evals, cfg.short_target_chars)),
        near_misses=near_misses,
        siblings=collector.all_siblings(),
        notes=tuple(notes),
        policy=cfg.policy,
        created_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    )


def _probe(collector: _Collector, dets: list[Detector], batch: list[Record]) -> None:
    def gen() -> Iterator[tuple[str, Match]]:
        for d in dets:
            for m in d.probe(batch):
                yield d.level, m

    collector.add_batch(batch, gen())


def _no_records(info: InputInfo, side: str) -> None:
    if info.rows == 0:
        raise InputError(info.path, None, f"the {side} input has no records (empty or blank lines only)",
                         "check the path; a gate must not pass data it did not see")
    raise InputError(info.path, None, f"all {info.rows} rows of the {side} input were skipped "
                     f"({', '.join(f'{k}: {v}' for k, v in sorted(info.skipped.items()))})",
                     "fix the rows or pass the right --prompt-field/--target-field")
