"""What the human-readable reports say, computed once and rendered by Markdown, HTML and the card.

Our own text that has code spans, bold or italics is a :class:`Rich`: a string (its Markdown)
that also holds its :class:`Span` parts, which the HTML report renders without parsing any
markup. Cells of user data (ids, snippets) are marked in :attr:`Table.data_cols` and are
shown as text.

>>> t = Table(("kind", "eval records"), (("`pair`", 35),), numeric=frozenset({1}))
>>> t.columns, t.rows[0][1]
(('kind', 'eval records'), 35)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..config import KINDS, LEVELS, Policy
from ..gate import CLEAN, LEAK, PARTIAL, exit_code
from ..result import Finding, InputInfo, ScanResult

@dataclass(frozen=True)
class Span:
    """A run of text in one style: ``""`` (plain), ``"code"``, ``"strong"`` or ``"em"``."""

    text: str
    style: str = ""

    def markdown(self) -> str:
        if self.style == "code":
            return md_code(self.text)
        mark = {"": "", "strong": "**", "em": "*"}[self.style]
        return f"{mark}{self.text}{mark}"


class Rich(str):
    """Text of ours with inline styles: the string is its Markdown, :attr:`spans` its parts.

    >>> r = Rich(strong("any"), " ", code("a`b"))
    >>> str(r), [s.style for s in r.spans]
    ('**any** ``a`b``', ['strong', '', 'code'])
    """

    spans: tuple[Span, ...]

    def __new__(cls, *parts: str | Span) -> Rich:
        spans = tuple(s for p in parts for s in (p.spans if isinstance(p, Rich) else (p if isinstance(p, Span) else Span(p),)))
        self = super().__new__(cls, "".join(s.markdown() for s in spans))
        self.spans = spans
        return self


def code(text: object) -> Span:
    return Span(str(text), "code")


def strong(text: object) -> Span:
    return Span(str(text), "strong")


def em(text: object) -> Span:
    return Span(str(text), "em")


KIND_TEXT: dict[str, str] = {
    "pair": Rich("prompt ", strong("and"), " reward target of the same train record"),
    "prompt": "prompt only",
    "target": "reward target only",
    "target_in_prompt": "eval reward target inside a train prompt",
    "prompt_in_target": "eval prompt inside a train reward target",
    "group": "same conversation/group id on both sides",
}
#: Chart names in report order, with their titles (drawn by :mod:`leakcheck.report.plots`).
CHARTS = {
    "by_kind": "Contaminated share of eval, by kind and level",
    "scores": "Scores of near/contained matches",
    "by_subset": "Contaminated share of eval, by subset",
}
#: Levels whose score is a similarity (plotted against their threshold).
SCORED_LEVELS = ("near", "contained")
#: Level parameters that are settings (shown in the reports); the rest are run statistics (JSON only).
SETTINGS = ("threshold", "shingle", "ngram", "num_perm", "seed", "bands", "rows", "template_share")
#: Width of the score histogram bins.
BIN = 0.05
#: Characters of one data cell (id, snippet) shown in a table; the JSON report has the whole value.
MAX_CELL = 300

#: Line breaks of CommonMark (\r, \n) and the others Python and editors break lines at.
_BREAKS = re.compile(r"\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
#: Characters that are Markdown markup (or raw HTML, or GitHub math) in running text. ``_`` is markup
#: only at a word's edge, so ``gsm8k_12`` stays readable.
_MD_SPECIAL = re.compile(r"[\\`*\[\]<>|~&$]|(?<![^\W_])_|_(?![^\W_])")


def clip(text: object, n: int = MAX_CELL) -> str:
    t = str(text)
    return t if len(t) <= n else t[: n - 1] + "…"


#: Control characters other than tab and line breaks (terminal escapes, NUL): shown as their escapes.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")


def visible(text: object) -> str:
    r"""``text`` with control characters as their ``\xNN`` escapes (a report is text a terminal may print).

    >>> visible("a\x1b[2Jb\x00")
    'a\\x1b[2Jb\\x00'
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", str(text))


def one_line(text: object) -> str:
    """``text`` with every line break made a space (a table row or list item stays one line), controls escaped."""
    return visible(_BREAKS.sub(" ", str(text)))


def md_text(text: object) -> str:
    r"""Data (an id, a snippet) as Markdown text that renders as itself, on one line.

    >>> print(md_text("a|b <b>**x**</b> `c` snake_case _y_"))
    a\|b \<b\>\*\*x\*\*\</b\> \`c\` snake_case \_y\_
    """
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), one_line(text))


def md_code(text: object) -> str:
    """Data as one Markdown code span, whatever backticks it holds (CommonMark's rules for fences).

    >>> print(md_code("a`b"), md_code("`x`"), md_code("plain"))
    ``a`b`` `` `x` `` `plain`
    """
    t = one_line(text)
    if not t:
        return "` `"
    fence = "`" * (max((len(r) for r in re.findall(r"`+", t)), default=0) + 1)
    pad = " " if t[0] == "`" or t[-1] == "`" or (t[0] == " " and t[-1] == " " and t.strip()) else ""
    return f"{fence}{pad}{t}{pad}{fence}"


@dataclass(frozen=True)
class Table:
    """Rows of cells under named columns. ``numeric`` columns align right."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    numeric: frozenset[int] = field(default_factory=frozenset)
    data_cols: frozenset[int] = field(default_factory=frozenset)


def pct(n: int, total: int) -> float:
    return round(100.0 * n / total, 2) if total else 0.0


def verdict(result: ScanResult, policy: Policy) -> Rich:
    """One sentence: did anything leak at a gated level, and how much of eval the gate judged leaked."""
    s = result.summary(policy)
    head = {CLEAN: Rich(strong("No leakage at a gated level.")), LEAK: Rich(strong("Leakage found"), " at a gated level."),
            PARTIAL: Rich(strong("Partial scan"), ": rows were skipped.")}[exit_code(result, policy)]
    out = (f" {s['contaminated']['count']} of {s['eval_records']} eval records "
           f"({s['contaminated']['percent']}%) occur in train.")
    if s["not_gated"]["count"]:
        out += f" {s['not_gated']['count']} more have matches the gate does not fail on (information only)."
    return Rich(head, out)


def field_levels(f: Finding) -> str:
    """How each field of a ``pair`` matched, e.g. ``prompt near 0.71, target exact 1.00``; else empty."""
    d = f.detail or {}
    if f.kind != "pair" or "prompt_level" not in d:
        return ""
    where = "target" if d.get("target_in", "target") == "target" else "target (in the train prompt)"
    return f"prompt {d['prompt_level']} {d['prompt_score']:.2f}, {where} {d['target_level']} {d['target_score']:.2f}"


def level_cell(f: Finding) -> str:
    """The level of a finding, with each field's level and score for a pair."""
    fl = field_levels(f)
    return f"{f.level} ({fl})" if fl else f.level


def fields_text(info: InputInfo) -> Rich:
    """The fields a side was read from, as ``prompt=`question`, target=`answer```."""
    pairs = [(k, v) for k, v in info.fields.items() if v]
    return Rich(*(p for i, (k, v) in enumerate(pairs) for p in ((", " if i else "") + f"{k}=", code(v))))


def side_line(info: InputInfo, label: str) -> Rich:
    fields = fields_text(info)
    tail = f"; {info.records:,} records"
    if info.skipped:
        tail += f", {sum(info.skipped.values()):,} rows skipped (" + ", ".join(f"{k}: {v}" for k, v in sorted(info.skipped.items())) + ")"
    return Rich(strong(label), ": ", code(info.path), " — format ", code(info.format), *((" (", fields, ")") if fields else ()), tail)


def method_lines(result: ScanResult, policy: Policy) -> list[Rich]:
    """How the comparison was made: each level with its parameters, chance rule, gate."""
    out = []
    for lv, params in result.parameters["levels"].items():
        settings = [f"{k} {params[k]}" for k in SETTINGS if k in params]
        desc = "; ".join([str(params.get("method", ""))] + ([", ".join(settings)] if settings else []))
        if set(params) - {"method", *SETTINGS}:
            desc += " (statistics of the run are in the JSON report)"
        out.append(Rich(code(lv), f": {desc}"))
    out.append(Rich(
        "A target match is a ", em("chance match"), " (reported apart, not gated) when the eval target is shorter than "
        f"{result.parameters['short_target_chars']} characters after normalization or matches more than "
        f"{result.parameters['max_target_hits']} train records/groups."
    ))
    out.append(Rich("Gate (", code("--fail-on"), f"): {policy.describe()}."))
    return out


def _cell(n: int, total: int) -> str:
    return f"{n} ({pct(n, total)}%)" if n else "–"


def kind_level_table(result: ScanResult) -> Table:
    """Contaminated eval records by kind (rows) and level (columns): the numbers of the first chart."""
    s = result.summary()
    total = s["eval_records"]
    rows = []
    for k in KINDS:
        v = s["by_kind"].get(k)
        if not v:
            continue
        rows.append((Rich(code(k)), KIND_TEXT[k], v["count"], v["percent"],
                     *(_cell(v["levels"].get(lv, {}).get("count", 0), total) for lv in result.levels)))
    c = s["contaminated"]
    rows.append((Rich(strong("gated" if s["not_gated"]["count"] else "any")), "", Rich(strong(c["count"])), Rich(strong(c["percent"])),
                 *(_cell(s["by_level"][lv]["count"], total) for lv in result.levels)))
    cols = ("kind", "what matched", "eval records", "% of eval", *(f"{lv}" for lv in result.levels))
    return Table(cols, tuple(rows), numeric=frozenset(range(2, len(cols))))


def kind_level_percents(result: ScanResult) -> dict[str, dict[str, float]]:
    """``{kind: {level: percent of eval}}`` for kinds with findings; what the first chart draws."""
    s = result.summary()
    return {k: {lv: s["by_kind"][k]["levels"].get(lv, {}).get("percent", 0.0) for lv in result.levels}
            for k in KINDS if k in s["by_kind"]}


def train_side(result: ScanResult) -> dict[str, int]:
    """Distinct train records involved, per kind and ``any``."""
    by: dict[str, set[int]] = {}
    for f in result.findings:
        by.setdefault(f.kind, set()).add(f.train_row)
    out = {k: len(by[k]) for k in KINDS if k in by}
    out["any"] = len({f.train_row for f in result.gated()})
    return out


def split_table(result: ScanResult) -> Table:
    """Per split and kind: eval records found in train and train records holding eval items."""
    s = result.summary()
    tr = train_side(result)
    ntrain = result.train.records
    rows = []
    for k in KINDS:
        if k in s["by_kind"]:
            v = s["by_kind"][k]
            rows.append((Rich(code(k)), KIND_TEXT[k], v["count"], v["percent"], tr[k], pct(tr[k], ntrain)))
    c = s["contaminated"]
    rows.append((Rich(strong("any")), "", c["count"], c["percent"], tr["any"], pct(tr["any"], ntrain)))
    return Table(("kind", "what matched", "eval records in train", "% of eval", "train records holding eval items", "% of train"),
                 tuple(rows), numeric=frozenset({2, 3, 4, 5}))


def thresholds(result: ScanResult) -> dict[str, float]:
    """The similarity threshold of each scored level that ran, as the scan reported it."""
    out = {}
    for lv in SCORED_LEVELS:
        p = result.parameters["levels"].get(lv, {})
        t = p.get("threshold")
        if isinstance(t, (int, float)):
            out[lv] = float(t)
    return out


def score_bins(result: ScanResult) -> tuple[list[float], dict[str, list[int]]]:
    """Histogram of near/contained finding scores: bin edges and counts per level.

    Bins are :data:`BIN` wide, from the lowest threshold (or lowest score) to 1.0, the
    last bin closed. Empty when no near/contained finding exists.
    """
    scores = {lv: [f.score for f in result.findings if f.level == lv] for lv in SCORED_LEVELS}
    scores = {lv: v for lv, v in scores.items() if v}
    if not scores:
        return [], {}
    # Integer micro-units keep a score that sits on a bin edge (0.6) in the bin it opens.
    unit = round(BIN * 1_000_000)

    def bin_of(x: float) -> int:
        return round(x * 1_000_000) // unit

    lows = [min(v) for v in scores.values()] + list(thresholds(result).values())
    nlow = bin_of(min(lows))
    n = max(1, round(1 / BIN) - nlow)
    edges = [round((nlow + i) * BIN, 4) for i in range(n + 1)]
    counts = {}
    for lv, v in scores.items():
        c = [0] * n
        for x in v:
            c[min(n - 1, max(0, bin_of(x) - nlow))] += 1
        counts[lv] = c
    return edges, counts


def score_table(result: ScanResult) -> Table | None:
    edges, counts = score_bins(result)
    if not edges:
        return None
    levels = list(counts)
    rows = []
    for i in range(len(edges) - 1):
        hi = "]" if i == len(edges) - 2 else ")"
        rows.append((f"[{edges[i]:.2f}, {edges[i + 1]:.2f}{hi}", *(counts[lv][i] for lv in levels)))
    th = thresholds(result)
    rows.append(("threshold", *(f"{th[lv]:.2f}" if lv in th else "–" for lv in levels)))
    return Table(("score", *(f"{lv} findings" for lv in levels)), tuple(rows), numeric=frozenset(range(1, len(levels) + 1)))


def subset_rows(result: ScanResult) -> list[tuple[str, int, int, dict[str, int]]]:
    """``(subset, eval records, contaminated eval records, {kind: count})`` per eval subset."""
    subs = result.eval.subsets
    if not subs:
        return []
    rows: dict[str, set[int]] = {}
    kinds: dict[tuple[str, str], set[int]] = {}
    for f in result.gated():
        if f.subset is None:
            continue
        rows.setdefault(f.subset, set()).add(f.eval_row)
        kinds.setdefault((f.subset, f.kind), set()).add(f.eval_row)
    out = []
    for name, n in sorted(subs.items()):
        by = {k: len(kinds[(name, k)]) for k in KINDS if (name, k) in kinds}
        out.append((name, n, len(rows.get(name, ())), by))
    return out


def subset_table(result: ScanResult) -> Table | None:
    """Leakage by ``data_source``/subset of the eval records; ``None`` when the data has no subsets."""
    data = subset_rows(result)
    if not data:
        return None
    kinds = [k for k in KINDS if any(k in by for *_, by in data)]
    rows = tuple((name, n, c, pct(c, n), *(by.get(k, 0) for k in kinds)) for name, n, c, by in data)
    cols = ("subset", "eval records", "contaminated", "% of subset", *(Rich(code(k)) for k in kinds))
    return Table(cols, rows, numeric=frozenset(range(1, len(cols))), data_cols=frozenset({0}))


def contaminated_ids(result: ScanResult) -> list[str]:
    """Eval ids with a gated finding, in eval order."""
    seen: dict[int, str] = {}
    for f in result.gated():
        seen.setdefault(f.eval_row, f.eval_id)
    return [seen[r] for r in sorted(seen)]


NEAR_MISS_TITLE = "Closest matches below the thresholds (not leaks)"


def near_miss_text(result: ScanResult) -> str:
    levels = result.parameters.get("levels", {})
    margins = " and ".join(f"{levels[lv]['near_miss_margin']} ({lv})" for lv in ("near", "contained")
                           if isinstance(levels.get(lv), dict) and "near_miss_margin" in levels[lv])
    return (f"The highest-scoring near/contained match within {margins or 'a margin'} under its level's threshold, "
            "per eval record and level: not counted, not gated; shown so a person can judge the thresholds.")


SIBLINGS_TITLE = "Sibling tasks (not leaks)"


def siblings_text(result: ScanResult) -> str:
    return ("Fuzzy matches whose reward targets clearly disagree (another final answer, other code, other rubric points): different tasks "
            "that read alike, such as 'the sum of the negative numbers' and 'of the positive numbers'. Not counted, not gated; "
            "each row gives both fields' scores and why the targets disagree.")


def sibling_cell(f: Finding) -> str:
    """The level of a sibling with both fields' scores and the reason, e.g. ``near (prompt 0.67, target 0.39: code differs ...)``."""
    d = f.detail or {}
    score = lambda k: "-" if d.get(k) is None else f"{d[k]:.2f}"  # noqa: E731
    return f"{f.level} (prompt {score('prompt_score')}, target {score('target_score')}: {d.get('targets_disagree', '')})"


def findings_table(result: ScanResult, limit: int | None = None, near_misses: bool = False, siblings: bool = False) -> Table:
    """The leaks; with ``near_misses`` the closest matches under the thresholds; with ``siblings`` the sibling tasks."""
    fs = result.near_misses if near_misses else result.siblings if siblings else result.findings
    fs = fs if limit is None else fs[:limit]
    cell = sibling_cell if siblings else level_cell
    rows = tuple((f.eval_id, f.train_id, Rich(code(f.kind)), cell(f), f"{f.score:.2f}", f.eval_snippet, f.train_snippet) for f in fs)
    # a sibling's reason quotes the data (its answers)
    return Table(("eval id", "train id", "kind", "level", "score", "eval text", "train text"), rows,
                 numeric=frozenset({4}), data_cols=frozenset({0, 1, 5, 6} | ({3} if siblings else set())))


def chance_table(result: ScanResult, limit: int | None = None) -> Table:
    cs = result.chance if limit is None else result.chance[:limit]
    rows = tuple((c.eval_id, c.target, c.reason, c.train_matches, ", ".join(c.examples)) for c in cs)
    return Table(("eval id", "target", "why", "train matches", "examples"), rows,
                 numeric=frozenset({3}), data_cols=frozenset({0, 1, 4}))


def duplicates_table(result: ScanResult, limit: int | None = None) -> Table:
    ds = result.eval_duplicates if limit is None else result.eval_duplicates[:limit]
    rows = tuple((Rich(code(d.kind)), d.level, ", ".join(d.ids), d.snippet) for d in ds)
    return Table(("kind", "level", "eval ids", "text"), rows, data_cols=frozenset({2, 3}))


def more_line(total: int, limit: int, what: str, json_report: bool) -> str | None:
    """The sentence under a table cut at ``limit`` rows; ``None`` when nothing was cut.

    It points to the JSON report only when one was written (``json_report``).

    >>> more_line(250, 200, "findings", json_report=True)
    '50 more findings are in the JSON report (this table lists the first 200).'
    >>> more_line(250, 200, "findings", json_report=False)
    '50 more findings are not listed here (this table lists the first 200); the JSON report (scan --json) lists them all.'
    """
    if total <= limit:
        return None
    if json_report:
        return f"{total - limit} more {what} are in the JSON report (this table lists the first {limit})."
    return f"{total - limit} more {what} are not listed here (this table lists the first {limit}); the JSON report (scan --json) lists them all."


def counts_line(result: ScanResult) -> str:
    s = result.summary()
    return (f"Chance target matches (short or generic reference answers): {s['chance_target_matches']['count']} eval records. "
            f"Duplicate groups inside eval: {s['eval_duplicates']['groups']} ({s['eval_duplicates']['records']} records).")


__all__ = [
    "CHARTS", "KIND_TEXT", "LEVELS", "Table", "verdict", "side_line", "method_lines", "kind_level_table", "kind_level_percents",
    "split_table", "score_bins", "score_table", "subset_rows", "subset_table", "contaminated_ids", "findings_table",
    "chance_table", "duplicates_table", "counts_line", "thresholds", "train_side", "clip", "visible", "one_line", "md_text", "md_code",
    "fields_text", "more_line", "Span", "Rich", "code", "strong", "em",
]
