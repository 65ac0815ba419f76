"""How much of an eval score (or of a gain between two models) survives decontamination.

Given a scan's JSON report and per-item scores of the eval set, the metric is computed on
the whole set, on its clean records and on each leaked subset. The subsets are rows of the
eval set, judged by the gate policy the report was written with (see :func:`subsets`):

``all``
    every scored eval record.
``clean``
    records with no gated finding. Near misses, sibling tasks and chance target matches are
    not leaks, so their records are clean.
``leaked``
    records with at least one gated finding (the union of the subsets below).
``pair``
    a gated ``pair`` finding: prompt and reward target of one train record.
``prompt-only``
    the prompt was found (``prompt``, ``prompt_in_target``, or a pair gated by its prompt
    alone), the reward target was not.
``target-only``
    the reward target was found (``target``, ``target_in_prompt``), the prompt was not.
``group``
    a gated ``group`` finding (same conversation/group id on both sides).
``semantic``
    a gated finding at the ``semantic`` level.
``sibling``
    clean records with a near miss or a sibling task (information: part of ``clean``).

``pair``, ``prompt-only`` and ``target-only`` do not overlap; ``group`` and ``semantic``
may overlap with them (a record with a pair and a group finding is in both). A record whose
prompt and target were found in *different* train records is only in ``leaked``.

Statistics, each a pure function of the scores, the subsets and ``(seed, resamples)``:

- the 95% interval of a mean: percentile bootstrap, ``resamples`` resamples of the subset
  with replacement;
- the difference from clean (``mean(subset) - mean(clean)``) with a percentile bootstrap
  interval that resamples clean and the subset independently, from the same resamples as
  the two means' intervals (clean's drawn first, then the subset's), and a
  two-sided permutation p-value (``2 * min(P(d* >= d), P(d* <= d))``, each ``(k + 1) /
  (permutations + 1)``, at most 1) from ``permutations`` shufflings of the pooled scores;
- for ``all``, the difference ``mean(all) - mean(clean)`` (what the leaked records add to
  the headline) is ``n_leaked / n`` times the leaked subset's difference: its interval and
  p-value are the leaked subset's, scaled (a bootstrap stratified by clean/leaked).

Every subset's resamples and p-value draw from their own ``numpy.random.default_rng(seed)``
(a leaked subset's resamples after clean's), so a row does not change when another subset
appears. A subset under ``min_n`` records gets no
interval and no p-value, and says so.

>>> import numpy as np
>>> rows = analyze(np.array([0.2, 0.4, 0.6, 0.9, 1.0, 1.0]), {"all": np.ones(6, bool),
...                "clean": np.array([1, 1, 1, 0, 0, 0], bool), "leaked": np.array([0, 0, 0, 1, 1, 1], bool)}, min_n=3)
>>> [(r.subset, r.n, round(r.mean, 4), r.diff_from_clean and round(r.diff_from_clean, 4)) for r in rows]
[('all', 6, 0.6833, 0.2833), ('clean', 3, 0.4, None), ('leaked', 3, 0.9667, 0.5667)]
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import fieldpath
from .config import Fields, Policy
from .errors import InputError, UsageError
from .formats import ID_CANDIDATES
from .result import ScanResult

#: Subsets in report order.
SUBSETS = ("all", "clean", "leaked", "pair", "prompt-only", "target-only", "group", "semantic", "sibling")
#: Subsets shown even when empty (the others appear only when they have records).
ALWAYS = ("all", "clean", "leaked")
_PROMPT_SIDE = frozenset({"pair", "prompt", "prompt_in_target"})
_TARGET_SIDE = frozenset({"pair", "target", "target_in_prompt"})
#: The id field that keys scores by the 0-based eval index instead of the eval id.
INDEX_FIELD = "eval_index"
#: Elements of one resampling matrix: memory stays bounded, results do not depend on it.
_CHUNK = 1 << 22


@dataclass(frozen=True)
class ImpactRow:
    """The metric on one subset. ``None`` where there is nothing honest to print; ``note`` says why.

    ``ci_low``/``ci_high``: interval of the mean; ``diff_*``: difference from clean and its
    interval; ``p_value``: permutation p-value of that difference.
    """

    subset: str
    n: int
    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    diff_from_clean: float | None = None
    diff_ci_low: float | None = None
    diff_ci_high: float | None = None
    p_value: float | None = None
    note: str = ""


@dataclass(frozen=True)
class Analysis:
    """One table: the rows of one quantity (``model``, ``baseline`` or the per-item ``gain``)."""

    quantity: str
    rows: tuple[ImpactRow, ...]

    def row(self, subset: str) -> ImpactRow | None:
        return next((r for r in self.rows if r.subset == subset), None)


@dataclass(frozen=True)
class Impact:
    """Everything ``leakcheck impact`` prints and writes."""

    report: str
    #: The report's eval input and timestamp: a card checks that an impact file goes with its report.
    report_eval: str
    report_created_at: str
    #: Where the eval ids were read from (the report's eval input, or ``--eval``) and how many records it holds.
    eval_path: str
    eval_records: int
    metric: str
    scores: str
    baseline_scores: str | None
    policy: tuple[str, ...]
    method: dict[str, Any]
    analyses: tuple[Analysis, ...]
    #: Eval records left out because they had no score (with ``allow_missing``), by subset; and extra scores ignored.
    missing: dict[str, int] = field(default_factory=dict)
    extra: int = 0
    #: What the reader must know to trust ``clean``, e.g. train rows the scan skipped.
    notes: tuple[str, ...] = ()

    def analysis(self, quantity: str) -> Analysis:
        return next(a for a in self.analyses if a.quantity == quantity)

    @property
    def headline(self) -> Analysis:
        """The table that answers the question: the gain with a baseline, else the model's score."""
        return self.analyses[-1]


# ---------------------------------------------------------------- statistics


def _boot_means(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Means of ``resamples`` resamples of ``x`` with replacement (the draws do not depend on the chunking)."""
    n = len(x)
    out = np.empty(resamples)
    step = max(1, _CHUNK // n)
    for start in range(0, resamples, step):
        k = min(step, resamples - start)
        out[start:start + k] = x[rng.integers(0, n, size=(k, n), dtype=np.int64)].mean(axis=1)
    return out


def _interval(stats: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return float(lo), float(hi)


def mean_ci(x: np.ndarray, seed: int = 0, resamples: int = 10_000, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x``.

    >>> mean_ci(np.array([1.0, 1.0, 1.0]))
    (1.0, 1.0)
    """
    return _interval(_boot_means(np.asarray(x, float), np.random.default_rng(seed), resamples), confidence)


def diff_ci(clean: np.ndarray, sub: np.ndarray, seed: int = 0, resamples: int = 10_000, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of ``mean(sub) - mean(clean)``, each resampled on its own (clean first)."""
    rng = np.random.default_rng(seed)
    c = _boot_means(np.asarray(clean, float), rng, resamples)
    s = _boot_means(np.asarray(sub, float), rng, resamples)
    return _interval(s - c, confidence)


def permutation_p(clean: np.ndarray, sub: np.ndarray, seed: int = 0, permutations: int = 10_000) -> float:
    """Two-sided permutation p-value of ``mean(sub) - mean(clean)`` (the definition scipy.stats.permutation_test uses).

    >>> permutation_p(np.array([0.0, 0.1, 0.2, 0.1]), np.array([0.9, 1.0, 0.8, 0.9]), permutations=2000) < 0.05
    True
    """
    pooled = np.concatenate([np.asarray(sub, float), np.asarray(clean, float)])
    ns, total = len(sub), len(pooled)
    observed = pooled[:ns].mean() - pooled[ns:].mean()
    rng = np.random.default_rng(seed)
    null = np.empty(permutations)
    step = max(1, _CHUNK // total)
    for start in range(0, permutations, step):
        k = min(step, permutations - start)
        perm = rng.permuted(np.broadcast_to(pooled, (k, total)), axis=1)
        null[start:start + k] = perm[:, :ns].mean(axis=1) - perm[:, ns:].mean(axis=1)
    eps = 1e-14 * max(abs(observed), 1.0)  # equal means computed in another order are ties, not misses
    ge = (np.count_nonzero(null >= observed - eps) + 1) / (permutations + 1)
    le = (np.count_nonzero(null <= observed + eps) + 1) / (permutations + 1)
    return float(min(1.0, 2 * min(ge, le)))


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _zero_var(x: np.ndarray) -> str:
    return f"all {len(x)} scores are {_fmt(float(x[0]))} (zero variance)" if len(x) > 1 and np.ptp(x) == 0 else ""


@dataclass
class _Resampler:
    """Clean's bootstrap means, drawn once; each subset then draws from the generator state clean left.

    So the interval of a subset's mean and of its difference from clean come from the same
    resamples, and a subset's draws do not depend on which other subsets exist.
    """

    clean: np.ndarray
    seed: int
    resamples: int
    confidence: float

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        self.clean_means = _boot_means(self.clean, rng, self.resamples) if len(self.clean) else np.empty(0)
        self._after_clean = rng.bit_generator.state

    def means(self, x: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        rng.bit_generator.state = self._after_clean
        return _boot_means(x, rng, self.resamples)

    def interval(self, stats: np.ndarray) -> tuple[float, float]:
        return _interval(stats, self.confidence)


def _row(name: str, x: np.ndarray, boot: _Resampler, min_n: int) -> ImpactRow:
    n, clean = len(x), boot.clean
    if n == 0:
        return ImpactRow(name, 0, None, note="no records")
    mean = float(x.mean())
    notes = [f"n={n}: too few for an interval (--min-n {min_n})" if n < min_n else "", _zero_var(x)]
    enough = n >= min_n
    if name in ("clean", "sibling", "all") or len(clean) == 0:
        if len(clean) == 0 and name not in ("clean", "sibling", "all"):
            notes.append("no clean records to compare with")
        if name == "sibling":
            notes.append("part of clean, for information")
        lo, hi = (None, None) if not enough else boot.interval(boot.clean_means) if name == "clean" else \
            mean_ci(x, boot.seed, boot.resamples, boot.confidence)
        return ImpactRow(name, n, mean, lo, hi, note="; ".join(t for t in notes if t))
    diff = mean - float(clean.mean())
    lo = hi = dlo = dhi = p = None
    if enough:
        sub_means = boot.means(x)
        lo, hi = boot.interval(sub_means)
        if len(clean) >= min_n:
            dlo, dhi = boot.interval(sub_means - boot.clean_means)
            p = permutation_p(clean, x, boot.seed, boot.resamples)
    if len(clean) < min_n:
        notes.append(f"clean n={len(clean)}: too few for an interval of the difference")
    return ImpactRow(name, n, mean, lo, hi, diff, dlo, dhi, p, "; ".join(t for t in notes if t))


def analyze(values: np.ndarray, masks: Mapping[str, np.ndarray], seed: int = 0, resamples: int = 10_000,
            min_n: int = 10, confidence: float = 0.95) -> tuple[ImpactRow, ...]:
    """One :class:`ImpactRow` per subset of :data:`SUBSETS` in ``masks`` (boolean masks over ``values``).

    Subsets outside :data:`ALWAYS` are left out when empty.
    """
    if resamples < 1 or min_n < 2:
        raise UsageError("--resamples must be at least 1 and --min-n at least 2")
    values = np.asarray(values, float)
    boot = _Resampler(values[masks["clean"]] if "clean" in masks else values[:0], seed, resamples, confidence)
    rows = {name: _row(name, values[masks[name]], boot, min_n)
            for name in SUBSETS if name in masks and (name in ALWAYS or masks[name].any())}
    if "all" in rows and rows["all"].mean is not None and rows["leaked"].n and len(boot.clean):
        rows["all"] = _all_diff(rows["all"], rows["leaked"], float(boot.clean.mean()))
    return tuple(rows.values())


def _all_diff(whole: ImpactRow, leaked: ImpactRow, clean_mean: float) -> ImpactRow:
    """``mean(all) - mean(clean)``: the leaked subset's difference scaled by its share (see the module docstring)."""
    assert whole.mean is not None
    share = leaked.n / whole.n
    lo, hi = (None, None) if leaked.diff_ci_low is None or leaked.diff_ci_high is None else (leaked.diff_ci_low * share, leaked.diff_ci_high * share)
    return dataclasses.replace(whole, diff_from_clean=whole.mean - clean_mean, diff_ci_low=lo, diff_ci_high=hi, p_value=leaked.p_value)


# ---------------------------------------------------------------- subsets


def subsets(result: ScanResult, policy: Policy | None = None) -> dict[str, frozenset[int]]:
    """Eval rows (0-based indexes) of each leaked subset and of ``sibling`` under ``policy`` (default: the report's).

    ``all`` and ``clean`` need every eval row, which the report does not list: see :func:`masks`.
    """
    p = policy or result.policy
    ev: dict[int, set[tuple[str, str]]] = {}
    for f in result.findings:
        for k, lv in f.evidence():
            if p.gates(k, lv):
                ev.setdefault(f.eval_row, set()).add((k, lv))
    out: dict[str, set[int]] = {name: set() for name in SUBSETS if name not in ("all", "clean")}
    for row, items in ev.items():
        kinds = {k for k, _ in items}
        out["leaked"].add(row)
        prompt, target = bool(kinds & _PROMPT_SIDE), bool(kinds & _TARGET_SIDE)
        if "pair" in kinds:
            out["pair"].add(row)
        elif prompt and not target:
            out["prompt-only"].add(row)
        elif target and not prompt:
            out["target-only"].add(row)
        if "group" in kinds:
            out["group"].add(row)
        if any(lv == "semantic" for _, lv in items):
            out["semantic"].add(row)
    out["sibling"] = {f.eval_row for f in (*result.siblings, *result.near_misses)} - out["leaked"]
    return {k: frozenset(v) for k, v in out.items()}


def masks(rows: Sequence[int], result: ScanResult, policy: Policy | None = None) -> dict[str, np.ndarray]:
    """Boolean masks over the scored eval ``rows`` (in that order), one per subset of :data:`SUBSETS`."""
    subs = subsets(result, policy)
    arr = np.asarray(rows, dtype=np.int64)
    out = {"all": np.ones(len(arr), bool), "clean": ~np.isin(arr, list(subs["leaked"]))}
    for name, members in subs.items():
        out[name] = np.isin(arr, list(members))
    return {name: out[name] for name in SUBSETS}


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True)
class EvalItems:
    """Every eval record of a report: ids and 0-based indexes, in eval order."""

    path: str
    ids: tuple[str, ...]
    rows: tuple[int, ...]
    #: Rows of the eval input the scan skipped (``--on-error skip``): not eval records of the report.
    skipped: int = 0


def eval_items(result: ScanResult, path: str | None = None) -> EvalItems:
    """Read the ids of every eval record of ``result`` from its eval input (``path``: where it is now).

    The report lists only the leaked records; the clean ones are read again from the eval
    data, which must be the data that was scanned: the record count and each finding's
    content fingerprint are checked.
    """
    from .fingerprint import record_fingerprint
    from .scan import load_records

    info = result.eval
    where = path or info.path
    if "::" not in where and not os.path.exists(where) and info.hub is None:
        raise UsageError(f"the report's eval input {where} is not there; pass --eval PATH, the eval data that was scanned")
    fields = Fields(**{k: info.fields.get(k) for k in ("prompt", "target", "id", "group")})
    if fields.prompt is not None and fields.target is None:  # read without a target: detection must not find one now
        fields = dataclasses.replace(fields, target="none")
    recs, read = load_records(where, fields, "skip" if info.skipped else "fail", "eval")
    if read.records != info.records:
        raise InputError(where, None, f"{read.records} eval records, but the report counted {info.records}",
                         "pass --eval with the eval data that was scanned, or scan again")
    by_row = {r.row: r for r in recs}
    for f in result.findings:
        r = by_row.get(f.eval_row)
        if r is None or (f.eval_fingerprint and record_fingerprint(r.prompt, r.target) != f.eval_fingerprint) or r.id != f.eval_id:
            raise InputError(where, f"eval index {f.eval_row}", f"the record is not the one the report found leaked (id {f.eval_id!r})",
                             "pass --eval with the eval data that was scanned, or scan again")
    return EvalItems(where, tuple(r.id for r in recs), tuple(r.row for r in recs), sum(info.skipped.values()))


@dataclass(frozen=True)
class Scores:
    """One metric per eval record, read from a scores file: key (id or index) -> (score, 1-based line/row)."""

    path: str
    metric: str
    id_field: str
    values: dict[str, tuple[float, str]]


def _numeric(v: Any, csv_text: bool) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if csv_text and isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _pick_id(row: dict, given: str | None, hint: str | None, path: str, where: str) -> str:
    if given is not None:
        return given
    tried = list(dict.fromkeys([h for h in (hint,) if h] + ["eval_id", *ID_CANDIDATES, INDEX_FIELD]))
    for name in tried:
        if fieldpath.get(fieldpath.parse(name), row, None) is not None:
            return name
    raise InputError(path, where, f"no id field (tried {', '.join(tried)})",
                     "give each line the eval id, or name the field with --id-field (eval_index: the 0-based eval index)")


def _pick_metric(row: dict, id_field: str, given: str | None, csv_text: bool, path: str, where: str) -> str:
    if given is not None:
        return given
    skip = {id_field, "eval_id", INDEX_FIELD, *ID_CANDIDATES}
    found = [k for k, v in row.items() if k not in skip and _numeric(v, csv_text) is not None]
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(path, where, "no numeric score field", "give each line a numeric score, e.g. {\"id\": \"7\", \"bleu\": 0.41}")
    raise InputError(path, where, f"several numeric fields ({', '.join(found)})", "pick the metric with --metric NAME")


def read_scores(path: str, metric: str | None = None, id_field: str | None = None, id_hint: str | None = None) -> Scores:
    """Read a scores file (JSONL, JSON, CSV or Parquet): one record per eval record, an id and a numeric metric.

    Fields are detected from the first record: the id (``id_field``, else ``id_hint`` — the
    eval's id field —, ``eval_id``, the scan's id candidates, ``eval_index``) and the metric
    (``metric``, else the one numeric field). Any bad line is an error naming its line.
    """
    from .io.readers import BadRow, iter_rows, open_source

    if not os.path.isfile(path):
        raise InputError(path, None, "no such file", "pass the per-item scores file (JSONL: one {id, metric} object a line)")
    csv_text = path.lower().endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz"))
    values: dict[str, tuple[float, str]] = {}
    get_id = get_metric = None
    for r in iter_rows(open_source(path)):
        if isinstance(r, BadRow):
            raise r.error()
        if type(r.data) is not dict:
            raise InputError(r.file, r.where, f"a {type(r.data).__name__}, not an object", "each line is an object such as {\"id\": \"7\", \"bleu\": 0.41}")
        if get_id is None:
            id_field = _pick_id(r.data, id_field, id_hint, path, r.where)
            metric = _pick_metric(r.data, id_field, metric, csv_text, path, r.where)
            get_id, get_metric = _getter(id_field), _getter(metric)
        assert id_field is not None and metric is not None and get_metric is not None
        key = _key(get_id(r.data), id_field, r.file, r.where)
        score = _score(get_metric(r.data), metric, csv_text, r.file, r.where)
        if key in values:
            raise InputError(r.file, r.where, f"{id_field} {key!r} again (first on {values[key][1]})", "keep one score per eval record")
        values[key] = (score, r.where)
    if get_id is None or metric is None or id_field is None:
        raise InputError(path, None, "no scores", "write one {id, metric} record per eval record")
    return Scores(path, metric, id_field, values)


def _getter(name: str) -> Callable[[dict], Any]:
    """The value of field ``name`` in a record: the top-level key of that name, else the dotted path (``extra_info.index``)."""
    path: fieldpath.Path | None = None

    def get(row: dict) -> Any:
        nonlocal path
        if name in row:
            return row[name]
        path = path or fieldpath.parse(name)
        return fieldpath.get(path, row, None)

    return get


def _key(v: Any, id_field: str, path: str, where: str) -> str:
    if isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)):
        return str(v)
    what = "missing or null" if v is None else f"{v!r}, not a string or an integer"
    raise InputError(path, where, f"{id_field} is {what}", "give every line its eval id")


def _score(v: Any, metric: str, csv_text: bool, path: str, where: str) -> float:
    x = _numeric(v, csv_text)
    if x is None:
        what = "missing or null" if v is None or v == "" else f"{str(v)[:40]!r}, not a number"
        raise InputError(path, where, f"{metric} is {what}", "score every eval record with a number")
    if not math.isfinite(x):
        raise InputError(path, where, f"{metric} is {v!r}", "a score must be a finite number; fix the scorer's output")
    return x


def _align(items: EvalItems, scores: Scores, allow_missing: bool) -> tuple[list[int], list[float], int]:
    """Rows with a score, their scores (eval order) and how many scores named no eval record (only with ``allow_missing``)."""
    by_index = scores.id_field == INDEX_FIELD
    keys = [str(r) for r in items.rows] if by_index else list(items.ids)
    first: dict[str, int] = {}
    for k, row in zip(keys, items.rows):
        if k in first and not by_index:
            raise UsageError(f"the eval ids of {items.path} are not unique ({k!r} at eval indexes {first[k]} and {row}); "
                             f"key the scores by the 0-based eval index instead: --id-field {INDEX_FIELD}")
        first.setdefault(k, row)
    extra = [(k, where) for k, (_, where) in scores.values.items() if k not in first]
    if extra and not allow_missing:
        k, where = extra[0]
        more = f" ({len(extra) - 1} more)" if len(extra) > 1 else ""
        skipped = f"; the scan skipped {_rows(items.skipped)} of eval, which are not records" if items.skipped else ""
        raise InputError(scores.path, where, f"{scores.id_field} {k!r} is not an eval record of the report "
                         f"({items.path}, {len(keys)} records{skipped}){more}",
                         "remove the line, fix --id-field, or pass --allow-missing to ignore it")
    missing = [(k, row) for k, row in zip(keys, items.rows) if k not in scores.values]
    if missing and not allow_missing:
        k, row = missing[0]
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise InputError(scores.path, None, f"no score for eval id {k!r} (eval index {row}){more}",
                         "score every eval record, or pass --allow-missing to leave them out")
    kept = [(row, scores.values[k][0]) for k, row in zip(keys, items.rows) if k in scores.values]
    return [r for r, _ in kept], [v for _, v in kept], len(extra)


def compute(result: ScanResult, report: str, scores: Scores, baseline: Scores | None = None, items: EvalItems | None = None,
            seed: int = 0, resamples: int = 10_000, min_n: int = 10, allow_missing: bool = False) -> Impact:
    """The impact tables of ``scores`` (and, with ``baseline``, of the gain ``scores - baseline``) on ``result``'s eval set."""
    items = items or eval_items(result)
    rows, vals, extra = _align(items, scores, allow_missing)
    model = dict(zip(rows, vals))
    if baseline is not None:
        b_rows, b_vals, b_extra = _align(items, baseline, allow_missing)
        base = dict(zip(b_rows, b_vals))
        rows = [r for r in rows if r in base]
        extra += b_extra
    all_masks = masks(list(items.rows), result)
    kept = np.isin(np.asarray(items.rows, dtype=np.int64), rows)
    missing = {name: int((m & ~kept).sum()) for name, m in all_masks.items() if (m & ~kept).any()}
    m = masks(rows, result)
    x = np.array([model[r] for r in rows])
    run = dict(seed=seed, resamples=resamples, min_n=min_n)
    analyses = [Analysis("model", analyze(x, m, **run))]
    if baseline is not None:
        b = np.array([base[r] for r in rows])
        analyses = [Analysis("baseline", analyze(b, m, **run)), analyses[0], Analysis("gain", analyze(x - b, m, **run))]
    method = {
        "interval": "95% percentile bootstrap",
        "mean_interval": "resample the subset with replacement",
        "difference": "mean(subset) - mean(clean); bootstrap resamples clean and the subset independently (clean first), "
                      "the same resamples as the subset's mean interval",
        "all": "mean(all) - mean(clean) = n_leaked / n * the leaked difference; its interval and p-value scaled alike",
        "p_value": "two-sided permutation test of the difference, 2 * min(P(d* >= d), P(d* <= d)), (k + 1) / (permutations + 1)",
        "resamples": resamples, "permutations": resamples, "seed": seed, "min_n": min_n,
    }
    return Impact(report=report, report_eval=result.eval.path, report_created_at=result.created_at, eval_path=items.path,
                  eval_records=len(items.rows), metric=scores.metric, scores=scores.path,
                  baseline_scores=baseline.path if baseline else None, policy=tuple(result.policy.spec()), method=method,
                  analyses=tuple(analyses), missing=missing, extra=extra, notes=_notes(result))


def _notes(result: ScanResult) -> tuple[str, ...]:
    """Partial scans: records called clean were compared with only part of train."""
    skipped = sum(result.train.skipped.values())
    if not skipped:
        return ()
    return (f"the scan skipped {_rows(skipped)} of train: a record counted clean may have a copy there",)


def _rows(n: int) -> str:
    """``1 row``, ``2 rows``.

    >>> _rows(1), _rows(1200)
    ('1 row', '1,200 rows')
    """
    return f"{n:,} row{'s' * (n != 1)}"
