"""The ``near`` (MinHash LSH, verified Jaccard) and ``contained`` (n-gram containment) levels.

Both index the eval side as *items*: item ``i < E`` is eval prompt ``i``, item ``E + i`` is
eval target ``i``. A train prompt is looked up against all items, so the same pass finds
``prompt`` matches (eval prompt in train prompt) and ``target_in_prompt`` matches (eval target
in train prompt); a train target finds ``target`` and ``prompt_in_target`` matches.

Templates are not evidence: an n-gram found in at least ``template_share`` of the distinct
texts of one field of one file (eval prompts, eval targets, and the train prompts/targets of
the sample :meth:`prime` sees) is suppressed on both sides before anything is compared.
Copies of one text count once: a duplicated item is not a template of itself.

>>> from leakcheck.records import Record
>>> from leakcheck.config import ScanConfig, ContainedConfig
>>> q = "a farmer has 12 cows and buys 7 more cows at the market on monday how many cows does he have"
>>> det = build("contained", [Record("e0", 0, q, "He has 19 cows.")], ScanConfig())
>>> list(det.probe([Record("t0", 0, "Problem 1: what is 2+2? Problem 2: " + q + " Problem 3: ...", "19")]))
[Match(pos=0, eval_idx=0, eval_field='prompt', train_field='prompt', score=1.0, below=False, detail=None)]
"""

from __future__ import annotations

import copy
import functools
import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np

from ..config import ScanConfig
from ..records import Record
from . import grams
from .base import FIELDS, Match

_POPULATIONS = ("eval prompts", "eval targets", "train prompts", "train targets")
#: What the near level counts while probing (summed over shards into the report's parameters).
STAT_KEYS = ("train_texts", "train_texts_hashed", "lsh_candidates", "verified")
_TOP_TEMPLATES = 5


class _WordCache:
    """Word hashes of the last batch, per field, shared by the near and contained detectors.

    ``scan`` probes every detector with the same batch in turn. The cache is keyed on the
    batch's records themselves, compared by identity, not on the batch object: a list
    refilled in place, or a new list that got a freed list's ``id``, cannot be served the
    words of other texts (the cached entry holds its records, immutable tuples, so their ids
    stay taken and their texts are the ones hashed). An
    entry is replaced as a whole, so concurrent callers never see another batch's words.

    Batches tokenized ahead (:meth:`ahead`, while the scan waits for the train templates)
    wait under their first record until a detector asks for them; at most :data:`_MAX_AHEAD`
    wait.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[Record, ...], grams.Words]] = {}
        self._ahead: dict[tuple[str, int], tuple[tuple[Record, ...], grams.Words]] = {}

    def get(self, batch: Sequence[Record], field: str) -> grams.Words:
        hit = self._entries.get(field)
        if hit is not None and _same(hit[0], batch):
            return hit[1]
        w = self._from_ahead(batch, field)
        if w is None:
            w = grams.words(list(map(_FIELD[field], batch)))
        self._entries[field] = (tuple(batch), w)
        return w

    def _from_ahead(self, batch: Sequence[Record], field: str) -> grams.Words | None:
        early = self._ahead.pop((field, id(batch[0])), None) if batch else None
        return early[1] if early is not None and _same(early[0], batch) else None

    def ahead(self, batch: Sequence[Record]) -> None:
        """Tokenize ``batch`` now for the :meth:`get` that will ask for it."""
        if batch:
            for f in FIELDS:
                self._ahead[(f, id(batch[0]))] = (tuple(batch), grams.words(list(map(_FIELD[f], batch))))
            while len(self._ahead) > _MAX_AHEAD:  # left by a shard never probed here: the oldest go
                del self._ahead[next(iter(self._ahead))]

    def clear(self, ahead: bool = True) -> None:
        self._entries.clear()
        if ahead:
            self._ahead.clear()


#: Batches (per field) waiting in the word cache at most: a shard of 16 MiB of short records.
_MAX_AHEAD = 64


def _same(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


#: a record's field, read in C (``map`` over a batch beats a comprehension of ``getattr``)
_FIELD = {f: operator.attrgetter(f) for f in FIELDS}


_CACHE = _WordCache()


def forget_words(ahead: bool = True) -> None:
    """Let go of the cached words (the driver's train sample: workers hash their own batches);
    ``ahead=False`` keeps the batches tokenized ahead that are still to be probed."""
    _CACHE.clear(ahead)


def prepare(batch: Sequence[Record]) -> None:
    """Tokenize a train batch ahead of its probe: the work of both fuzzy levels that needs no index."""
    _CACHE.ahead(batch)


#: What one field's template search found: how many n-grams, and ``(hash, share, text)`` of each, commonest first.
Found = tuple[int, tuple[tuple[int, float, str], ...]]


@dataclass(frozen=True)
class Learned:
    """The templates of a train sample at one n-gram size: what a fuzzy level learns from train.

    A pure function of the sample and the level's knobs (:func:`learn`), without the eval
    side, so another process can learn it while the eval index is built; plain data, so it
    pickles. ``found`` holds one :data:`Found` per train population, in field order.
    """

    n: int
    records: int
    found: tuple[tuple[str, Found], ...]


def knobs_of(level: str, config: ScanConfig) -> tuple[int, float, int]:
    """``(n, template_share, template_min_records)`` of a fuzzy level."""
    if level == "near":
        return config.near.shingle, config.near.template_share, config.near.template_min_records
    return config.contained.ngram, config.contained.template_share, config.contained.template_min_records


def learn(level: str, sample: Sequence[Record], knobs: tuple[int, float, int]) -> Learned:
    """The train-side templates of ``sample`` (the first train records) for a level with ``knobs``.

    >>> from leakcheck.records import Record
    >>> sample = [Record(str(i), i, f"Answer briefly please: what is {i} plus {i}?", None) for i in range(30)]
    >>> found = learn("near", sample, (3, 0.5, 20)).found
    >>> [(pop, n, sorted(t for _, _, t in ts)) for pop, (n, ts) in found]  # doctest: +NORMALIZE_WHITESPACE
    [('train prompts', 4, [': what is', 'Answer briefly please', 'briefly please:', 'please: what']),
     ('train targets', 0, [])]
    """
    n, share, min_records = knobs
    found = []
    for fi, f in enumerate(FIELDS):
        w = _CACHE.get(sample, f)
        present = np.array([getattr(r, f) is not None for r in sample], dtype=bool)
        h, text_of = grams.ngrams(w, n)
        found.append((_POPULATIONS[2 + fi], templates_of(w, h, text_of, present, n, share, min_records)))
    return Learned(n, len(sample), tuple(found))


def templates_of(w: grams.Words, h: np.ndarray, text_of: np.ndarray, present: np.ndarray, n: int, share: float,
                 min_records: int) -> Found:
    """The n-grams found in at least ``share`` (and ``min_records``) of the distinct present texts.

    Texts with the same words count once: copies of one question are not a template,
    and 20 duplicated eval items must not suppress their own n-grams.
    """
    if len(h) == 0:
        return 0, ()
    o = w.offsets
    first: dict[bytes, int] = {}
    for i in np.flatnonzero(present).tolist():
        first.setdefault(w.hashes[o[i] : o[i + 1]].tobytes(), i)
    n_texts = len(first)
    sel = None
    if len(first) < len(present):
        distinct = np.zeros(len(present), dtype=bool)
        distinct[list(first.values())] = True
        sel = np.flatnonzero(distinct[text_of])
        h, text_of = h[sel], text_of[sel]
    if n_texts == 0 or len(h) == 0:
        return 0, ()
    uniq, df, where = grams.doc_freq(h, text_of, max(min_records, math.ceil(share * n_texts)))
    if sel is not None:
        where = sel[where]
    if len(uniq) == 0:
        return 0, ()
    starts = grams.ngram_starts(w, n)
    return len(uniq), tuple((int(uniq[i]), float(df[i]) / n_texts, w.text(int(starts[where[i]]), n))
                            for i in np.argsort(-df, kind="stable"))


def build(level: str, evals: Sequence[Record], config: ScanConfig) -> "NearDetector | ContainedDetector":
    """The detector for ``level`` (``"near"`` or ``"contained"``), indexed on ``evals``."""
    if level == "near":
        return NearDetector(evals, config)
    if level == "contained":
        return ContainedDetector(evals, config)
    raise ValueError(f"fuzzy.build: no fuzzy level {level!r}")


def from_state(level: str, config: ScanConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> "NearDetector | ContainedDetector":
    """A detector rebuilt from :meth:`_GramIndex.state` (a saved eval index)."""
    cls = NearDetector if level == "near" else ContainedDetector
    return cls((), config, _state=(meta, arrays))


class _GramIndex:
    """Eval items as sets of word n-gram hashes, minus template n-grams.

    Subclasses set ``level``, ``n`` (words per n-gram) and the template knobs, then call
    :meth:`_index_evals`.
    """

    level: str
    n: int
    template_share: float
    template_min_records: int
    unit = "n-gram"
    #: Distinct non-template n-grams an eval text needs to be compared at this level.
    min_evidence = 1

    def _index_evals(self, evals: Sequence[Record]) -> None:
        self.E = len(evals)
        eval_words = {f: _CACHE.get(evals, f) for f in FIELDS}  # near and contained index the same evals: hashed once
        self.has_target = np.array([r.target is not None for r in evals], dtype=bool)
        h_parts, item_parts = [], []
        # template hash -> (population, share, text); the strongest population is kept
        self.templates: dict[int, tuple[str, float, str]] = {}
        self.suppressed_by: dict[str, int] = dict.fromkeys(_POPULATIONS, 0)
        for fi, f in enumerate(FIELDS):
            w = eval_words[f]
            h, text_of = grams.ngrams(w, self.n)
            present = np.ones(self.E, dtype=bool) if f == "prompt" else self.has_target
            self._learn_templates(w, h, text_of, present, _POPULATIONS[fi])
            h_parts.append(h)
            item_parts.append(text_of + fi * self.E)
        self._eval_lengths = lengths = np.concatenate([eval_words[f].lengths for f in FIELDS])
        self.too_short = {
            "prompt": int((lengths[: self.E] < self.n).sum()),
            "target": int(((lengths[self.E :] < self.n) & self.has_target).sum()),
        }
        self._index_pairs(np.concatenate(h_parts), np.concatenate(item_parts))

    def _learn_templates(self, w: grams.Words, h: np.ndarray, text_of: np.ndarray, present: np.ndarray, population: str) -> None:
        """Suppress the n-grams found in at least ``template_share`` of the distinct texts (see :func:`templates_of`)."""
        found = templates_of(w, h, text_of, present, self.n, self.template_share, self.template_min_records)
        self._add_templates(population, found)

    def _add_templates(self, population: str, found: "Found") -> None:
        count, templates = found
        self.suppressed_by[population] += count
        for key, share, text in templates:
            if key not in self.templates or share > self.templates[key][1]:
                self.templates[key] = (population, share, text)

    def _index_pairs(self, h: np.ndarray, item: np.ndarray) -> None:
        """Index the (hash, item) pairs of the eval side, templates removed, from scratch."""
        self._set_suppressed()
        if len(self.suppressed):
            keep = self._suppressed_set.find(h) < 0
            h, item = h[keep], item[keep]
        hs, items, _ = grams.distinct_pairs(h, item)
        self._set_items(hs, items)

    def _set_suppressed(self) -> None:
        self.suppressed = np.array(sorted(self.templates), dtype=np.uint64)
        self._suppressed_set = grams.HashSet(self.suppressed)

    def _suppress_more(self, added: np.ndarray) -> None:
        """Drop the hashes of newly learned templates ``added`` from the built item index.

        Filtering keeps the (item, hash) order, and an item too weak before only gets weaker,
        so this equals a rebuild from all eval n-grams without needing them (they are not kept).
        """
        self._set_suppressed()
        keep = grams.HashSet(added).find(self.item_h) < 0
        items = np.repeat(np.arange(2 * self.E, dtype=np.int64), self.size)
        self._set_items(self.item_h[keep], items[keep])

    def _set_items(self, hs: np.ndarray, items: np.ndarray) -> None:
        """The item index from distinct (hash, item) pairs sorted by item then hash."""
        size = np.bincount(items, minlength=2 * self.E)
        if self.min_evidence > 1:
            # Too little left after the templates: a Jaccard over one or two shingles says nothing.
            weak = (size > 0) & (size < self.min_evidence)
            if weak.any():
                keep = ~weak[items]
                hs, items = hs[keep], items[keep]
                size = np.where(weak, 0, size)
        self.size = size
        # item i's distinct hashes are item_h[item_ptr[i]:item_ptr[i+1]]
        self.item_h = hs
        self.item_ptr = np.zeros(2 * self.E + 1, dtype=np.int64)
        np.cumsum(self.size, out=self.item_ptr[1:])
        self.postings = grams.Postings(hs, items)
        lengths = self._eval_lengths
        has = np.concatenate([np.ones(self.E, dtype=bool), self.has_target])
        only_templates = (lengths >= self.n) & has & (self.size == 0)
        self.template_only = {"prompt": int(only_templates[: self.E].sum()), "target": int(only_templates[self.E :].sum())}

    #: Attributes that make up the built index (the rest is derived by :meth:`_set_items`).
    _STATE_ARRAYS = ("item_h", "size", "_eval_lengths", "has_target")

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Plain data to save: settings, distinct n-gram hashes per eval item, template hashes and shares.

        Template *texts* of the eval side are not kept: an index holds no eval text.
        """
        tmpl = sorted(self.templates.items())
        meta = {
            "E": self.E, "too_short": self.too_short, "suppressed_by": self.suppressed_by, "primed": getattr(self, "primed", 0),
            "template_pops": [pop for _, (pop, _, _) in tmpl], "template_shares": [share for _, (_, share, _) in tmpl],
            "template_texts": [text if pop.startswith("train") else "" for _, (pop, _, text) in tmpl],
        }
        arrays = {a: getattr(self, a) for a in self._STATE_ARRAYS} | self._derived_arrays()
        arrays["template_h"] = np.array([h for h, _ in tmpl], dtype=np.uint64)
        return meta, arrays

    def _derived_arrays(self) -> dict[str, np.ndarray]:
        """What a level saves so that loading need not recompute it."""
        return {}

    def _load_state(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.E = int(meta["E"])
        self._eval_lengths, self.has_target = arrays["_eval_lengths"], arrays["has_target"]
        self.too_short = dict(meta["too_short"])
        self.suppressed_by = dict(meta["suppressed_by"])
        if meta.get("primed"):
            self.primed = int(meta["primed"])
        self.templates = {int(h): (pop, float(share), text) for h, pop, share, text in
                          zip(arrays["template_h"].tolist(), meta["template_pops"], meta["template_shares"], meta["template_texts"])}
        self._set_suppressed()
        self._load_items(arrays)

    def _load_items(self, arrays: dict[str, np.ndarray]) -> None:
        self._set_items(arrays["item_h"], np.repeat(np.arange(2 * self.E, dtype=np.int64), arrays["size"]))

    @classmethod
    def concat(cls, parts: Sequence[Self], sizes: Sequence[int]) -> Self:
        """One index over several eval sets; items renumbered (prompt ``i`` < E <= target ``E + i``)."""
        total = sum(sizes)
        new = copy.copy(parts[0])
        vars(new).pop("_bands", None)  # the near level's band keys are per item: recomputed
        h, item, plen, tlen, has = [], [], [], [], []
        offset = 0
        new.templates, new.suppressed_by = {}, dict.fromkeys(_POPULATIONS, 0)
        new.too_short = {"prompt": 0, "target": 0}
        for p, n in zip(parts, sizes):
            p_item = np.repeat(np.arange(2 * p.E, dtype=np.int64), p.size)
            h.append(p.item_h)
            item.append(np.where(p_item >= p.E, p_item - p.E + total + offset, p_item + offset))
            plen.append(p._eval_lengths[: p.E])
            tlen.append(p._eval_lengths[p.E :])
            has.append(p.has_target)
            for key, t in p.templates.items():
                if key not in new.templates or t[1] > new.templates[key][1]:
                    new.templates[key] = t
            for k, v in p.suppressed_by.items():
                new.suppressed_by[k] += v
            for k, v in p.too_short.items():
                new.too_short[k] += v
            offset += n
        new.E = total
        new._eval_lengths = np.concatenate(plen + tlen)
        new.has_target = np.concatenate(has)
        new._index_pairs(np.concatenate(h), np.concatenate(item))
        return new

    def with_train_sample(self, sample: Sequence[Record]) -> Self:
        """A copy that also suppresses the templates of ``sample`` (the first train records)."""
        return self.with_learned(learn(self.level, sample, (self.n, self.template_share, self.template_min_records)))

    def with_learned(self, learned: "Learned") -> Self:
        """A copy that also suppresses the train templates of ``learned`` (see :func:`learn`)."""
        if learned.n != self.n:
            raise ValueError(f"templates of {learned.n}-grams cannot be suppressed at a {self.n}-gram level")
        new = copy.copy(self)
        new.templates = dict(self.templates)
        new.suppressed_by = dict(self.suppressed_by)
        before = set(new.templates)
        for population, found in learned.found:
            new._add_templates(population, found)
        new.primed = learned.records
        if len(new.templates) != len(before):
            new._suppress_more(np.array(sorted(new.templates.keys() - before), dtype=np.uint64))
        return new

    def _train_grams(self, batch: Sequence[Record], field: str) -> tuple[np.ndarray, np.ndarray]:
        h, text_of = grams.ngrams(_CACHE.get(batch, field), self.n)
        if len(self.suppressed) and len(h):
            keep = self._suppressed_set.find(h) < 0
            h, text_of = h[keep], text_of[keep]
        return h, text_of

    def similarity(self, eval_idx: int, eval_field: str, text: str | None) -> float | None:
        """This level's score of one eval field against one text, templates suppressed.

        For reports (the other field's score of a sibling), one pair at a time; ``None`` when
        the eval field has nothing this level can compare.
        """
        item = eval_idx + (self.E if eval_field == "target" else 0)
        mine = self.item_h[self.item_ptr[item] : self.item_ptr[item + 1]]
        if len(mine) == 0:
            return None
        h = grams.ngrams(grams.words([text]), self.n)[0]
        if len(self.suppressed):
            h = h[self._suppressed_set.find(h) < 0]
        theirs = np.unique(h)
        inter = len(np.intersect1d(mine, theirs, assume_unique=True))
        return inter / len(mine) if self.level == "contained" else inter / (len(mine) + len(theirs) - inter)

    def _match(self, pos: int, item: int, train_field: str, score: float, below: bool = False) -> Match:
        ef = "prompt" if item < self.E else "target"
        return Match(pos, item % self.E if item >= self.E else item, ef, train_field, score, below)

    def _template_params(self) -> dict[str, Any]:
        return {
            "template_share": self.template_share,
            "template_min_records": self.template_min_records,
            "train_sample": getattr(self, "primed", 0),
            f"suppressed_{self.unit.replace('-', '')}s": {p: c for p, c in self.suppressed_by.items()},
            "eval_prompts_too_short": self.too_short["prompt"],
            "eval_targets_too_short": self.too_short["target"],
            f"min_{self.unit.replace('-', '')}s": self.min_evidence,
            "eval_prompts_template_only": self.template_only["prompt"],
            "eval_targets_template_only": self.template_only["target"],
        }

    def notes(self) -> list[str]:
        out = []
        lv, n, unit = self.level, self.n, self.unit
        if self.too_short["prompt"]:
            out.append(f"{lv}: {self.too_short['prompt']} eval prompts shorter than {n} tokens were checked by exact/normalized only")
        if self.too_short["target"]:
            out.append(f"{lv}: {self.too_short['target']} eval targets shorter than {n} tokens were checked by exact/normalized only")
        what = f"consist of template {unit}s only" if self.min_evidence == 1 else f"have fewer than {self.min_evidence} non-template {unit}s"
        for f in FIELDS:
            if self.template_only[f]:
                out.append(f"{lv}: {self.template_only[f]} eval {f}s {what} and were checked by exact/normalized only")
        if self.templates:
            top = sorted(self.templates.values(), key=lambda t: -t[1])[:_TOP_TEMPLATES]
            where = ", ".join(f"{p}: {c}" for p, c in self.suppressed_by.items() if c)
            examples = "; ".join(f"'{text}' ({share:.0%} of {pop})" for pop, share, text in top)
            out.append(f"{lv}: suppressed {len(self.templates)} template {unit}s (in >= {self.template_share:.0%} "
                       f"of the texts of a field; {where}), top: {examples}")
        return out


class ContainedDetector(_GramIndex):
    """Share of an eval item's distinct word n-grams found in one train text.

    ``score`` = matched distinct eval n-grams / distinct eval n-grams, both after template
    suppression. Catches an eval question pasted into a much longer train text, where
    Jaccard is diluted. Eval texts shorter than ``ngram`` words cannot be checked here and
    are counted in :meth:`notes`.
    """

    level = "contained"

    def __init__(self, evals: Sequence[Record], config: ScanConfig, _state: tuple[dict, dict] | None = None):
        c = config.contained
        self.n, self.template_share, self.template_min_records = knobs_of(self.level, config)
        self.threshold = c.threshold
        self.low = max(1e-9, c.threshold - c.near_miss_margin)
        if _state is not None:
            self._load_state(*_state)
        else:
            self._index_evals(evals)

    def probe(self, batch: Sequence[Record], stats: dict[str, int] | None = None) -> Iterator[Match]:
        n_items = 2 * self.E
        keys = self.postings.set
        for field in FIELDS:
            h, text_of = grams.ngrams(_CACHE.get(batch, field), self.n)
            kidx = keys.find(h)
            hit = kidx >= 0
            if not hit.any():
                continue
            pair = grams.unique_counts(text_of[hit] * len(keys) + kidx[hit])[0]
            rec, k = np.divmod(pair, len(keys))
            row, item = self.postings.expand(k)
            counts_key, counts = grams.unique_counts(rec[row] * n_items + item)
            t, item = np.divmod(counts_key, n_items)
            score = counts / self.size[item]
            for i in np.flatnonzero(score >= self.low):
                sc = float(score[i])
                yield self._match(int(t[i]), int(item[i]), field, sc, below=sc < self.threshold)

    def parameters(self) -> dict[str, Any]:
        return {
            "method": "share of the eval text's distinct word n-grams found in one train text",
            "ngram": self.n,
            "threshold": self.threshold,
            "near_miss_margin": round(self.threshold - self.low, 6),
            "eval_ngrams_indexed": int(len(self.postings.set)),
            **self._template_params(),
        }


class NearDetector(_GramIndex):
    """MinHash LSH over word shingles; every candidate is verified by exact Jaccard.

    Signatures follow datasketch's default ``affine32`` scheme (``MinHash(num_perm, seed)``
    with the low 32 bits of our shingle hash as ``hashfunc``), computed for a whole batch at
    once. Candidates share a bucket of datasketch's ``MinHashLSH`` banding, whose bands/rows
    datasketch derives from the threshold (weighted by ``lsh_fp_weight`` towards recall:
    candidates are verified); the buckets are looked up in NumPy (:meth:`band_keys`).

    A train text is hashed only if it can still reach the threshold: Jaccard(A, B) <=
    |A ∩ U| / |A| for U the union of all eval shingles, so texts sharing too few shingles
    with the whole eval side are skipped, and so are texts that cannot share enough with any
    single item (:meth:`_best_overlap_bound`); neither cut changes a verified result.
    """

    level = "near"
    unit = "shingle"
    _CHUNK = 1 << 15

    def __init__(self, evals: Sequence[Record], config: ScanConfig, _state: tuple[dict, dict] | None = None):

        c = config.near
        self.n, self.template_share, self.template_min_records = knobs_of(self.level, config)
        self.threshold, self.num_perm, self.seed = c.threshold, c.num_perm, c.seed
        self.low = max(1e-9, c.threshold - c.near_miss_margin)
        self.fp_weight = c.lsh_fp_weight
        self.min_evidence = c.min_shingles
        if _state is not None and "bands" in _state[0]:
            # A saved index carries what datasketch derived (importing it, and its search for
            # bands/rows, is most of the time an index takes to load).
            self.bands, self.rows = int(_state[0]["bands"]), int(_state[0]["rows"])
            self._a, self._b = _state[1]["perm_a"].astype(np.uint32), _state[1]["perm_b"].astype(np.uint32)
        else:
            self.bands, self.rows = _lsh_params(c.threshold, c.num_perm, c.lsh_fp_weight)
            self._a, self._b = _permutations(c.num_perm, c.seed)
        if _state is not None:
            self._load_state(*_state)
        else:
            self._index_evals(evals)

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super().state()
        return {**meta, "bands": self.bands, "rows": self.rows}, {**arrays, "perm_a": self._a, "perm_b": self._b}

    #: Eval shingles held by at least this many items are "frequent" in :meth:`_best_overlap_bound`.
    _FREQUENT = 16

    def _best_overlap_bound(self, pairs: np.ndarray, alive: np.ndarray, n: int) -> np.ndarray:
        """Per train text, an upper bound on the shingles it shares with any *one* eval item.

        ``|A ∩ B| <= |A ∩ F| + max_B' |A ∩ B' ∩ R|`` with F the shingles held by many eval
        items and R the others, counted exactly through R's short posting lists. Text shared
        with the eval side only through shingles spread over different items (calculator
        annotations, common code) stops here: on GSM8K answers 50 times fewer texts are
        hashed than with the union bound alone. ``pairs``: distinct ``text << 32 | key``.
        """
        text, key = (pairs >> 32).astype(np.int64), (pairs & 0xFFFFFFFF).astype(np.int64)
        sel = alive[text]
        text, key = text[sel], key[sel]
        frequent = self._df[key] >= self._FREQUENT
        bound = np.bincount(text[frequent], minlength=n)
        row, item = self.postings.expand(key[~frequent])
        if len(row):
            both, count = grams.unique_counts(text[~frequent][row] * (2 * self.E) + item)
            owner = both // (2 * self.E)
            starts = np.flatnonzero(np.diff(owner, prepend=-1))
            bound[owner[starts]] += np.maximum.reduceat(count, starts)
        return bound

    #: Band keys of each item (``2E`` x ``bands``), kept so that suppressing more templates
    #: re-hashes only the items that lost shingles, and saved so that loading hashes none.
    _bands: np.ndarray | None = None

    def _set_items(self, hs: np.ndarray, items: np.ndarray) -> None:
        old_size, old_bands = getattr(self, "size", None), self._bands
        super()._set_items(hs, items)
        self._df = np.diff(self.postings.ptr)
        live = self.size > 0
        if old_bands is None or old_size is None or len(old_size) != len(self.size):
            bands, redo = np.zeros((2 * self.E, self.bands), dtype=np.uint64), live
        else:
            bands, redo = old_bands.copy(), live & (self.size != old_size)
        if redo.any():
            item_of = np.repeat(np.arange(2 * self.E, dtype=np.int64), self.size)
            sel = redo[item_of]
            bands[redo] = self.band_keys(self.signatures(self.item_h[sel], item_of[sel], 2 * self.E)[redo])
        self._bands = bands
        ids = np.flatnonzero(live)
        self.bucket_index = grams.Postings(bands[ids].ravel(), np.repeat(ids, self.bands))

    def _derived_arrays(self) -> dict[str, np.ndarray]:
        assert self._bands is not None
        return {"band_keys": self._bands[self.size > 0]}

    def _load_items(self, arrays: dict[str, np.ndarray]) -> None:
        self.size = size = arrays["size"]
        self._bands = np.zeros((2 * self.E, self.bands), dtype=np.uint64)
        self._bands[size > 0] = arrays["band_keys"]
        super()._load_items(arrays)

    def band_keys(self, sig: np.ndarray) -> np.ndarray:
        """``len(sig)`` x ``bands`` keys: band ``i`` is rows ``i*r .. (i+1)*r`` of a signature.

        Two signatures share a key exactly when they agree on all rows of one band (up to
        64-bit collisions, which only add candidates to verify): datasketch's
        ``MinHashLSH`` buckets, looked up for a whole batch at once instead of one query
        per text.
        """
        b, r = self.bands, self.rows
        rows = sig[:, : b * r].reshape(len(sig), b, r).astype(np.uint64)
        key = np.broadcast_to(np.arange(1, b + 1, dtype=np.uint64), (len(sig), b)).copy()
        for j in range(r):
            key = grams.mix64(key * grams.MUL + rows[:, :, j])
        return key

    def candidates(self, sig: np.ndarray) -> np.ndarray:
        """Distinct ``(text, item)`` pairs sharing an LSH bucket, packed as ``text * 2E + item``, sorted."""
        keys = self.band_keys(sig).ravel()
        k = self.bucket_index.set.find(keys)
        hit = np.flatnonzero(k >= 0)
        row, item = self.bucket_index.expand(k[hit])
        text = hit[row] // self.bands
        return grams.unique_counts(text * (2 * self.E) + item)[0]

    def signatures(self, h: np.ndarray, text_of: np.ndarray, n_texts: int) -> np.ndarray:
        """MinHash signatures (``n_texts`` x ``num_perm``, uint32); ``text_of`` must be sorted.

        Equal to ``datasketch.MinHash(num_perm, seed, hashfunc=lambda v: v)`` updated with
        the low 32 bits of each hash.
        """
        out = np.full((n_texts, self.num_perm), np.uint32(0xFFFFFFFF), dtype=np.uint32)
        hv = _fmix32((h & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        for i in range(0, len(hv), self._CHUNK):
            part, t = hv[i : i + self._CHUNK], text_of[i : i + self._CHUNK]
            phv = part[:, None] * self._a + self._b
            starts = np.flatnonzero(np.diff(t, prepend=-1))
            ids = t[starts]
            out[ids] = np.minimum(out[ids], np.minimum.reduceat(phv, starts, axis=0))
        return out

    def probe(self, batch: Sequence[Record], stats: dict[str, int] | None = None) -> Iterator[Match]:
        """Matches of ``batch``; ``stats`` (if given) counts texts hashed, candidates and verified pairs."""
        stats = stats if stats is not None else {}
        for key in STAT_KEYS:
            stats.setdefault(key, 0)
        union = self.postings.set
        t = self.low  # texts that may reach the near-miss margin survive the cheap cuts
        for field in FIELDS:
            h, text_of = self._train_grams(batch, field)
            n = len(batch)
            stats["train_texts"] += n - list(map(_FIELD[field], batch)).count(None)
            if len(h) == 0:
                continue
            size_a = grams.distinct_counts(h, text_of, n)
            k = union.find(h)
            hit = k >= 0
            # Counting shared shingles with repeats bounds the distinct count from above: a cheap first cut.
            alive = (size_a > 0) & (np.bincount(text_of[hit], minlength=n) >= t * size_a - 1e-9)
            if not alive.any():
                continue
            hit &= alive[text_of]
            # distinct (text, eval shingle) pairs, packed exactly into one sortable integer
            pairs = grams.unique_counts((text_of[hit] << 32) | k[hit])[0]
            shared = np.bincount(pairs >> 32, minlength=n)
            alive &= shared >= t * size_a - 1e-9
            if not alive.any():
                continue
            alive &= self._best_overlap_bound(pairs, alive, n) >= t * size_a - 1e-9
            if not alive.any():
                continue
            keep = alive[text_of]
            texts = np.flatnonzero(alive)
            # distinct shingles of each surviving text, contiguous per text
            dh, dt, _ = grams.distinct_pairs(h[keep], np.searchsorted(texts, text_of[keep]))
            stats["train_texts_hashed"] += len(texts)
            cand = self.candidates(self.signatures(dh, dt, len(texts))).tolist()
            if not cand:
                continue
            stats["lsh_candidates"] += len(cand)
            ptr = np.searchsorted(dt, np.arange(len(texts) + 1))
            for c in cand:
                li, it = divmod(int(c), 2 * self.E)
                a = dh[ptr[li] : ptr[li + 1]]
                bset = self.item_h[self.item_ptr[it] : self.item_ptr[it + 1]]
                inter = len(np.intersect1d(a, bset, assume_unique=True))
                jac = inter / (len(a) + len(bset) - inter)
                if jac >= t:
                    stats["verified"] += int(jac >= self.threshold)
                    yield self._match(int(texts[li]), it, field, jac, below=jac < self.threshold)

    def parameters(self) -> dict[str, Any]:
        return {
            "method": "MinHash LSH over word shingles, candidates verified by exact Jaccard",
            "threshold": self.threshold,
            "near_miss_margin": round(self.threshold - self.low, 6),
            "shingle": self.n,
            "num_perm": self.num_perm,
            "seed": self.seed,
            "bands": self.bands,
            "rows": self.rows,
            "lsh_fp_weight": self.fp_weight,
            "eval_items_indexed": int((self.size > 0).sum()),
            **self._template_params(),
        }


#: ``_lsh_params`` of the default settings, so a scan with them never imports datasketch (and
#: scipy, a third of a second) in the driver; tests check each entry against datasketch.
_KNOWN_LSH_PARAMS = {(0.6, 128, 0.02): (31, 4)}


@functools.lru_cache(maxsize=16)
def _lsh_params(threshold: float, num_perm: int, fp_weight: float) -> tuple[int, int]:
    """Bands and rows as datasketch's ``MinHashLSH`` chooses them (its search is slow: cached).

    >>> _lsh_params(0.6, 128, 0.02)
    (31, 4)
    """
    known = _KNOWN_LSH_PARAMS.get((threshold, num_perm, fp_weight))
    if known is not None:
        return known
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=(fp_weight, 1.0 - fp_weight))
    return lsh.b, lsh.r


@functools.lru_cache(maxsize=16)
def _permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(a, b)`` of ``datasketch.MinHash(num_perm, seed)`` (its default ``affine32`` scheme).

    Drawn as datasketch 2 draws them (tested equal), without importing it: ``a`` odd, so
    ``h -> a * h + b mod 2**32`` is a bijection.
    """
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    a.flags.writeable = b.flags.writeable = False  # shared by every detector (cached)
    return a, b


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, as datasketch applies it before its permutations."""
    h = h ^ (h >> np.uint32(16))
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))
