"""From raw matches to findings, in a state that merges: a scan is map(probe) + reduce(merge).

One :class:`Collector` sees the train records of one shard; :meth:`Collector.merge` adds
another's state; :meth:`Collector.finish` turns the merged state into findings, chance
matches and near misses, sorted, so the result does not depend on how the train side was
sharded or in which order shards finished.

Train rows inside a shard are shard-local until :meth:`finish` knows every shard's row count;
ordering keys use ``(shard, row)``, which sorts like the global row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .canon import normalize
from .config import LEVELS, ScanConfig
from .detect.base import Match
from .fingerprint import record_fingerprint, text_key
from .formats import FormatSpec
from .index import EvalIndex
from .records import Record
from .result import ChanceMatch, Finding

_RANK = {lv: i for i, lv in enumerate(LEVELS)}
_FUZZY = frozenset({"near", "contained"})
#: The matches the other field can confirm or contradict: prompt/prompt, target/target, eval target in the train text.
_SAME_AND_IN_TEXT = (("prompt", "prompt"), ("target", "target"), ("target", "prompt"))
SNIPPET = 160


def snippet(text: str | None, n: int = SNIPPET) -> str:
    """Whitespace-collapsed start of ``text`` for reports."""
    if not text:
        return ""
    t = " ".join(text[: n * 8].split())  # the head is enough, even of a 50 MB text
    return t if len(t) <= n else t[: n - 1] + "…"


@dataclass(frozen=True, slots=True)
class Best:
    """The strongest match of one (eval field, train field) between two records."""

    rank: int
    score: float
    level: str
    #: The scores that decided it, when a level weighs several (``semantic``).
    detail: dict[str, Any] | None = None

    def beats(self, other: "Best") -> bool:
        return (self.rank, -self.score) < (other.rank, -other.score)


@dataclass
class TargetHits:
    """Target-only matches of one eval record, until the scan ends.

    A target matching more than ``max_target_hits`` train records (or groups) *at a level or
    stronger* is generic at that level: those matches are chance. Counting per level keeps
    the verdict monotone in the levels: a weaker level that runs cannot make stronger matches
    chance. Key sets are capped at ``cap + 1``: past that the exact count does not matter.
    """

    keys_at: list[set[Any]]
    #: ``(shard, finding)`` target findings, dropped once their level turns generic
    pending: list[tuple[int, Finding]] = field(default_factory=list)
    total: int = 0
    #: ``((shard, row), train id)`` of the first train records matched, in train order.
    examples: list[tuple[tuple[int, int], str]] = field(default_factory=list)
    rank: int = len(LEVELS)

    def generic_from(self, cap: int) -> int:
        """The strongest level rank at which this target is generic (``len(LEVELS)``: none)."""
        seen: set[Any] = set()
        for r, keys in enumerate(self.keys_at):
            seen |= keys
            if len(seen) > cap:
                return r
        return len(LEVELS)

    def add_key(self, rank: int, key: Any, cap: int) -> None:
        if len(self.keys_at[rank]) <= cap:
            self.keys_at[rank].add(key)

    def merge(self, other: "TargetHits", cap: int, max_examples: int) -> None:
        for r, keys in enumerate(other.keys_at):
            for k in keys:
                self.add_key(r, k, cap)
        self.pending += other.pending
        self.total += other.total
        self.examples = sorted(self.examples + other.examples)[:max_examples]
        self.rank = min(self.rank, other.rank)
        self.prune(cap)

    def prune(self, cap: int) -> None:
        g = self.generic_from(cap)
        self.pending = [(s, f) for s, f in self.pending if _RANK[f.level] < g]


@dataclass(frozen=True)
class TrainSide:
    """What the collector needs to know about the train input of one shard."""

    spec: FormatSpec | None
    file: str | None = None
    shard: int = 0


class Collector:
    """Turns raw matches into findings: pairs, strongest level per field, chance targets, groups."""

    def __init__(self, index: EvalIndex, config: ScanConfig, espec_fields: Sequence[tuple[str, str]], shard: int = 0):
        self.index = index
        self.meta = index.meta
        self.cfg = config
        #: per eval set: (prompt field, target field) names for findings
        self.efields = list(espec_fields)
        self.set_of = [si for si, s in enumerate(index.sets) for _ in range(len(s))]
        self.shard = shard
        #: ``(shard, finding)``: rows are shard-local until :meth:`finish`
        self.findings: list[tuple[int, Finding]] = []
        self.near_misses: dict[tuple[int, str], tuple[tuple, int, Finding]] = {}
        #: eval index -> its best siblings: (total order key, shard, finding)
        self.siblings: dict[int, list[tuple[tuple, int, Finding]]] = {}
        self.scorers = {lv: p.similarity for lv, p in index.parts.items() if hasattr(p, "similarity")}
        self.short = [has and n < config.short_target_chars for has, n in zip(self.meta.has_target, self.meta.target_lens)]
        self.target_only: dict[int, TargetHits] = {}
        self.stats: dict[str, dict[str, int]] = {}
        self.groups: dict[str, list[int]] = {}
        for i, g in enumerate(self.meta.groups):
            if g is not None:
                self.groups.setdefault(g, []).append(i)

    # -- map side -------------------------------------------------------------------------------

    def add_batch(self, batch: list[Record], lines: Sequence[int], train: TrainSide, matches: Iterable[tuple[str, Match]]) -> None:
        """Collect the matches of one probed batch (``lines``: each record's 1-based line or row in ``train.file``)."""
        best: dict[tuple[int, int], dict[tuple[str, str], Best]] = {}
        below: list[tuple[str, Match]] = []
        for level, m in matches:
            if m.below:
                below.append((level, m))
                continue
            slot = best.setdefault((m.pos, m.eval_idx), {})
            fk = (m.eval_field, m.train_field)
            cand = Best(_RANK[level], m.score, level, m.detail)
            if fk not in slot or cand.beats(slot[fk]):
                slot[fk] = cand
        for level, m in below:
            if (m.pos, m.eval_idx) not in best:
                self._near_miss(level, m, batch[m.pos], lines[m.pos], train)
        for (pos, ei), slot in sorted(best.items()):
            self._classify(ei, batch[pos], lines[pos], slot, train)
        if self.groups:
            # Always reported, whatever else matched: another level finding a text match for
            # the same two records must not remove the group evidence from the gate.
            for t, line in zip(batch, lines):
                for ei in self.groups.get(t.group, ()) if t.group is not None else ():
                    self._emit(ei, t, line, train, "group", "exact", 1.0, "prompt", "prompt", group=t.group)

    def _classify(self, ei: int, t: Record, line: int, slot: dict[tuple[str, str], Best], train: TrainSide) -> None:
        """One eval record against one train record: a pair, or each field on its own."""
        agreement, covers = self._agreement(ei, t, slot)
        if agreement is not None and agreement.verdict == "disagree":
            slot = self._without_siblings(ei, t, line, train, slot, covers, agreement.why)
        pp = slot.get(("prompt", "prompt"))
        tt = slot.get(("target", "target"))
        tip = slot.get(("target", "prompt"))
        # The eval target may sit in the train target or, in a plain document, in the train text.
        target, target_in = (tt, "target") if tt and not (tip and tip.beats(tt)) else (tip, "prompt")
        if pp and not target:
            target, target_in = self._verify_target_inside(ei, t)
        agrees = None
        if pp and not target and self._eval_target(ei) is not None and t.target is not None and not self.short[ei]:
            target, agrees = self._agreeing_target(ei, t, pp, agreement)
        # A short target ("18", "B") equal by chance must not turn a prompt match into a
        # pair: it stays a chance match, counted apart, and the prompt match stands alone.
        if pp and target and not self.short[ei]:
            strong = pp if agrees or not target.beats(pp) else target
            detail: dict[str, Any] = {"prompt_level": pp.level, "prompt_score": round(pp.score, 4),
                                      "target_level": target.level, "target_score": round(target.score, 4), "target_in": target_in}
            if agrees:
                detail["target_agrees"] = agrees
            detail |= pp.detail or {}
            self._emit(ei, t, line, train, "pair", strong.level, strong.score, "prompt", "prompt", detail=detail)
            if target_in == "target" and tip:
                self._emit(ei, t, line, train, "target_in_prompt", tip.level, tip.score, "target", "prompt")
        else:
            if pp:
                self._emit(ei, t, line, train, "prompt", pp.level, pp.score, "prompt", "prompt", detail=pp.detail)
            if tt:
                self._target_only(ei, t, line, train, tt)
            if tip:
                self._emit(ei, t, line, train, "target_in_prompt", tip.level, tip.score, "target", "prompt")
        pit = slot.get(("prompt", "target"))
        if pit:
            self._emit(ei, t, line, train, "prompt_in_target", pit.level, pit.score, "prompt", "target")

    def _eval_target(self, ei: int) -> Any:
        """The eval target's text where this process has it, else its text-free view (an index
        loaded from a file keeps one per target: the same verdicts, messages quote the train side)."""
        if self.meta.targets is not None:
            return self.meta.targets[ei]
        return self.meta.target_views[ei] if self.meta.target_views else None

    def _agreement(self, ei: int, t: Record, slot: dict[tuple[str, str], Best]) -> tuple[Any, tuple[tuple[str, str], ...]]:
        """Does the other field agree, when a fuzzy match needs it as evidence? And which matches it speaks for.

        The train target is compared with the eval target; without a verdict there, a
        fuzzy, not verbatim, prompt match inside a train text that states final answers
        (a document of worked problems) is checked against those answers.
        """
        et = self._eval_target(ei)
        fuzzy = [b is not None and b.level in _FUZZY for b in map(slot.get, _SAME_AND_IN_TEXT)]
        if et is None or not any(fuzzy):
            return None, ()
        from .detect.agree import answers_in_text, compare  # only when a fuzzy level matched

        a = compare(et, t.target) if t.target is not None else None
        in_text = [slot[k] for k, f in zip(_SAME_AND_IN_TEXT, fuzzy) if f and k[1] == "prompt"]
        if (a is None or a.verdict == "unknown") and any(b.score < 1.0 for b in in_text):
            verdict = answers_in_text(et, t.prompt)
            if verdict is not None:
                return verdict, (("prompt", "prompt"), ("target", "prompt"))
        return a, (("prompt", "prompt"), ("target", "target"))

    def _agreeing_target(self, ei: int, t: Record, pp: Best, known: Any) -> tuple[Best | None, str | None]:
        """Target evidence from agreement: the targets differ as texts but give the same final answer or program.

        It counts at a fuzzy level (the texts did not match at exact or normalized): the
        prompt's, or the first that ran, with score 1.0; the pair keeps the prompt's level and
        score, and the finding says why the targets agree.
        """
        fuzzy = [pp.level] if pp.level in _FUZZY | {"semantic"} else [lv for lv in ("near", "contained") if lv in self.cfg.levels]
        if not fuzzy:
            return None, None
        if known is None:
            from .detect.agree import compare

            known = compare(self._eval_target(ei), t.target)
        if known.verdict != "agree":
            return None, None
        return Best(_RANK[fuzzy[0]], 1.0, fuzzy[0]), known.why

    def _without_siblings(self, ei: int, t: Record, line: int, train: TrainSide, slot: dict[tuple[str, str], Best],
                          covers: tuple[tuple[str, str], ...], why: str) -> dict[tuple[str, str], Best]:
        """Drop the fuzzy matches that a clear disagreement of the targets contradicts.

        Two tasks that differ in one content word are as close as a re-typed copy; a
        different final answer or different code says which. When nothing else links the
        records (no exact/normalized field, no other cross-field match) they are siblings,
        listed apart and never gated.
        """
        fuzzy = {k: b for k, b in slot.items() if k in covers and b.level in _FUZZY}
        rest = {k: b for k, b in slot.items() if k not in fuzzy}
        if not rest:
            self._sibling(ei, t, line, train, fuzzy, "prompt" if ("target", "prompt") in covers else "target", why)
        return rest

    def _sibling(self, ei: int, t: Record, line: int, train: TrainSide, fuzzy: dict[tuple[str, str], Best], tf: str, why: str) -> None:
        """List two records apart as sibling tasks; ``tf``: the train field the eval target was compared with."""
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
        f = self._finding(ei, t, line, train, kind, strong.level, strong.score, ef, ef if kind != "target" else tf, detail=detail)
        kept = self.siblings.setdefault(ei, [])
        kept.append(((strong.rank, -strong.score, train.shard, t.row), train.shard, f))
        self._cap_siblings(ei)

    def _cap_siblings(self, ei: int) -> None:
        kept = self.siblings[ei]
        if len(kept) > self.cfg.max_target_hits:  # the best few per eval record, whatever the train order
            kept.sort(key=lambda x: x[0])
            del kept[self.cfg.max_target_hits :]

    def _verify_target_inside(self, ei: int, t: Record) -> tuple[Best | None, str]:
        """With the prompt found in ``t``, look for the whole eval target in it too.

        The ``contained`` level cannot see a target shorter than its n-gram (a one-line
        solution); comparing the hash of the normalized eval target with the hash of every
        span of the same length of the normalized train text can, and needs no eval text.
        It runs only for the rare records whose prompt already matched.
        """
        key = self.meta.target_keys[ei]
        if "contained" not in self.cfg.levels or key is None or self.short[ei]:
            return None, "target"
        n = self.meta.target_lens[ei]
        for text, where in ((t.prompt, "prompt"), (t.target, "target")):
            if text and _has_span(normalize(text), n, key):
                return Best(_RANK["contained"], 1.0, "contained"), where
        return None, "target"

    def _finding(self, ei: int, t: Record, line: int, train: TrainSide, kind: str, level: str, score: float, ef: str, tf: str,
                 group: str | None = None, detail: dict | None = None) -> Finding:
        m = self.meta
        pf, tfname = self.efields[self.set_of[ei]]
        esnip = "" if m.prompts is None else snippet(m.prompts[ei] if ef == "prompt" else (m.targets or ())[ei])
        eg = m.groups[ei]
        return Finding(
            eval_id=m.ids[ei], train_id=t.id, kind=kind, level=level, score=round(score, 4),
            eval_row=m.rows[ei], train_row=t.row,
            eval_field=pf if ef == "prompt" else tfname, train_field=_field(train.spec, tf),
            eval_snippet=esnip, train_snippet=snippet(t.prompt if tf == "prompt" else t.target),
            group=group if group is not None else (eg if eg is not None and eg == t.group else None),
            detail=detail, subset=m.subsets[ei],
            eval_fingerprint=m.fingerprints[ei], train_fingerprint=record_fingerprint(t.prompt, t.target),
            train_file=train.file, train_line=line, eval_set=self.index.sets[self.set_of[ei]].name,
        )

    def _emit(self, ei: int, t: Record, line: int, train: TrainSide, kind: str, level: str, score: float, ef: str, tf: str,
              group: str | None = None, detail: dict | None = None) -> None:
        self.findings.append((train.shard, self._finding(ei, t, line, train, kind, level, score, ef, tf, group, detail)))

    def _target_only(self, ei: int, t: Record, line: int, train: TrainSide, tt: Best) -> None:
        st = self.target_only.get(ei)
        if st is None:
            st = self.target_only[ei] = TargetHits([set() for _ in LEVELS])
        st.total += 1
        if len(st.examples) < self.cfg.max_examples:
            st.examples.append(((train.shard, t.row), t.id))
        st.rank = min(st.rank, tt.rank)
        if self.short[ei]:
            return
        cap = self.cfg.max_target_hits
        st.add_key(tt.rank, t.group if t.group is not None else ("row", train.shard, t.row), cap)
        if _RANK[tt.level] < st.generic_from(cap):
            st.pending.append((train.shard, self._finding(ei, t, line, train, "target", tt.level, tt.score, "target", "target")))
        st.prune(cap)

    def _near_miss(self, level: str, m: Match, t: Record, line: int, train: TrainSide) -> None:
        """Keep, per eval record and level, the highest-scoring match under the threshold.

        The key orders every candidate totally ((shard, row) sorts like the global row), so
        what is kept does not depend on the order or sharding of the train side.
        """
        key = (m.score, -train.shard, -t.row, m.eval_field, m.train_field)
        slot = (m.eval_idx, level)
        if slot in self.near_misses and key <= self.near_misses[slot][0]:
            return
        kind = m.eval_field if m.eval_field == m.train_field else f"{m.eval_field}_in_{m.train_field}"
        f = self._finding(m.eval_idx, t, line, train, kind, level, m.score, m.eval_field, m.train_field, detail=m.detail)
        self.near_misses[slot] = (key, train.shard, f)

    def count(self, level: str, stats: dict[str, int]) -> None:
        mine = self.stats.setdefault(level, {})
        for k, v in stats.items():
            mine[k] = mine.get(k, 0) + v

    # -- reduce side ----------------------------------------------------------------------------

    #: What a worker does not send back: the driver's collector has its own.
    _TRANSIENT = frozenset({"index", "meta", "groups", "short", "set_of", "scorers"})

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in self._TRANSIENT}

    def detach(self) -> "Collector":
        """This collector, to be sent to the driver (pickling drops the index it refers to)."""
        return self

    def merge(self, other: "Collector") -> "Collector":
        """Add ``other``'s state to this one (commutative up to :meth:`finish`'s sorting)."""
        self.findings += other.findings
        for slot, entry in other.near_misses.items():
            if slot not in self.near_misses or entry[0] > self.near_misses[slot][0]:
                self.near_misses[slot] = entry
        cap, ex = self.cfg.max_target_hits, self.cfg.max_examples
        for ei, st in other.target_only.items():
            if ei in self.target_only:
                self.target_only[ei].merge(st, cap, ex)
            else:
                self.target_only[ei] = st
        for lv, stats in other.stats.items():
            self.count(lv, stats)
        for ei, kept in other.siblings.items():
            self.siblings.setdefault(ei, []).extend(kept)
            self._cap_siblings(ei)
        return self

    def finish(self, row_offsets: Sequence[int], row_ids: bool) -> "Collected":
        """Findings with global rows (``row_offsets[shard]`` added), sorted; chance matches; near misses.

        ``row_ids``: train ids are row numbers (no id field), so they move with the rows.
        """
        def globalize(shard: int, f: Finding) -> Finding:
            row = row_offsets[shard] + f.train_row
            return dataclasses.replace(f, train_row=row, train_id=str(row) if row_ids else f.train_id)

        chance: list[ChanceMatch] = []
        cap = self.cfg.max_target_hits
        findings = list(self.findings)
        for ei, st in sorted(self.target_only.items()):
            generic = st.generic_from(cap)
            findings += [] if self.short[ei] else [(s, f) for s, f in st.pending if _RANK[f.level] < generic]
            if self.short[ei] or generic < len(LEVELS):
                examples = [str(row_offsets[s] + r) if row_ids else tid for (s, r), tid in sorted(st.examples)]
                chance.append(ChanceMatch(
                    eval_set=self.index.sets[self.set_of[ei]].name, eval_id=self.meta.ids[ei], eval_row=self.meta.rows[ei],
                    target=snippet(self.meta.targets[ei], 60) if self.meta.targets is not None else "",
                    reason="short" if self.short[ei] else "generic", level=LEVELS[st.rank],
                    train_matches=st.total, examples=tuple(examples[: self.cfg.max_examples]),
                ))
        out = sorted((globalize(s, f) for s, f in findings), key=Finding.sort_key)
        leaked = {(f.eval_id, f.eval_row, f.eval_fingerprint) for f in out}
        by_set: dict[int, list] = {}
        for (ei, lv), (key, shard, f) in self.near_misses.items():
            if (f.eval_id, f.eval_row, f.eval_fingerprint) not in leaked:
                by_set.setdefault(self.set_of[ei], []).append(((key[0], -ei, _RANK[lv], key), shard, f))
        near = []
        for si in sorted(by_set):  # the best max_near_misses per eval set, best first
            ranked = sorted(by_set[si], key=lambda x: x[0])
            near += [globalize(shard, f) for _, shard, f in reversed(ranked[-self.cfg.max_near_misses :])]
        siblings = [globalize(shard, f) for ei in sorted(self.siblings) for _, shard, f in sorted(self.siblings[ei], key=lambda x: x[0])]
        return Collected(out, chance, near, self.stats, siblings)


@dataclass
class Collected:
    """What :meth:`Collector.finish` returns, for all eval sets of the index together."""

    findings: list[Finding]
    chance: list[ChanceMatch]
    near_misses: list[Finding]
    stats: dict[str, dict[str, int]]
    #: Fuzzy matches whose reward targets clearly disagree: sibling tasks, never gated.
    siblings: list[Finding] = field(default_factory=list)


def _field(spec: FormatSpec | None, name: str) -> str:
    if spec is None:
        return name
    return (spec.prompt if name == "prompt" else spec.target) or name


def _has_span(text: str, n: int, key: int) -> bool:
    """Whether some span of ``text`` of ``n`` characters, starting at a word, hashes to ``key``."""
    if n > len(text):
        return False
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == " " and i + 1 + n <= len(text)]
    return any(text_key(text[s : s + n]) == key for s in starts if s + n <= len(text))
