"""One view of a scan result, in report order, that the Markdown and HTML reports both render.

Text is either ours, a :class:`~leakcheck.report.content.Rich` (with code spans, bold,
italics as structured :class:`~leakcheck.report.content.Span` parts), or data (a plain
``str``: a note, a title), which every renderer shows as text.

>>> from leakcheck.result import InputInfo, ScanResult
>>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 2, 2)
>>> r = ScanResult(info, info, ("exact",), {"levels": {"exact": {}}, "short_target_chars": 20, "max_target_hits": 10}, ())
>>> v = view(r)
>>> v.state, [s.title for s in v.sections]
('clean', ['What was compared', 'How', 'Summary', 'Leaks'])
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .. import __version__
from ..config import Policy
from ..gate import CLEAN, LEAK, exit_code
from ..result import ScanResult
from . import content
from .content import Rich, Table, code
from .terminal import acceptance_lines

#: The cell of one text column of the findings tables may wrap anywhere (HTML).
_TEXT_COLS = frozenset({5, 6})


@dataclass(frozen=True)
class TableView:
    """A table with what the HTML page needs: its ``id``, whether it sorts, each row's kind (the kind filter)."""

    id: str
    table: Table
    sortable: bool = False
    row_kinds: tuple[str, ...] | None = None
    text_cols: frozenset[int] = frozenset()
    more: str | None = None  # the sentence under a table cut at the row limit

    def kind_counts(self) -> list[tuple[str, int]]:
        """Each kind of the rows, in order of first appearance, with its number of rows."""
        kinds = self.row_kinds or ()
        return [(k, kinds.count(k)) for k in dict.fromkeys(kinds)]


@dataclass(frozen=True)
class Section:
    """One ``##`` section: paragraphs, a list, a table, paragraphs after it, a chart, in that order."""

    title: str
    intro: tuple[Rich | str, ...] = ()  # Rich: our text; str: data (shown as text)
    items: tuple[Rich | str, ...] = ()
    table: TableView | None = None
    after: tuple[Rich | str, ...] = ()
    chart: str | None = None


@dataclass(frozen=True)
class ReportView:
    title: str
    state: str  # "clean", "leak" or "partial": the gate's verdict
    verdict: Rich
    sections: tuple[Section, ...]
    created_at: str
    generator: str = f"leakcheck {__version__}"
    charts: dict[str, str] = field(default_factory=lambda: dict(content.CHARTS))


def _cut(t: TableView, total: int, what: str, limit: int, json_report: bool) -> TableView:
    return dataclasses.replace(t, more=content.more_line(total, limit, what, json_report))


def _findings(result: ScanResult, limit: int, json_report: bool) -> Section:
    if result.accepted:  # accepted findings have their own section below
        result = dataclasses.replace(result, findings=tuple(f for f in result.findings if not result.is_accepted(f)))
    if not result.findings:
        return Section("Leaks", intro=(Rich("None."),))
    shown = result.findings[:limit]
    t = TableView("findings", content.findings_table(result, limit), True, tuple(f.kind for f in shown), _TEXT_COLS)
    return Section("Leaks", table=_cut(t, len(result.findings), "findings", limit, json_report))


def _accepted(result: ScanResult, limit: int, json_report: bool) -> list[Section]:
    """The findings a baseline or the allowlist accepted, with who accepted them and why."""
    acc = [(f, a) for f in result.findings if (a := result.acceptance(f)) is not None]
    if not acc:
        return []
    rows = tuple((f.eval_id, f.train_id, Rich(code(f.kind)), f.level, a.by, a.reason or "recorded in the baseline", f.eval_snippet)
                 for f, a in acc[:limit])
    t = Table(("eval id", "train id", "kind", "level", "accepted by", "reason", "eval text"), rows, data_cols=frozenset({0, 1, 5, 6}))
    tv = TableView("accepted", t, True, tuple(f.kind for f, _ in acc[:limit]), frozenset({6}))
    return [Section("Accepted findings (baseline and allowlist; not gated)", table=_cut(tv, len(acc), "accepted findings", limit, json_report))]


def _listed(result: ScanResult, limit: int, json_report: bool) -> list[Section]:
    """The sections under the leaks, each only when it has rows."""
    out = _accepted(result, limit, json_report)
    if result.near_misses:
        t = TableView("near-misses", content.findings_table(result, limit, near_misses=True), True, text_cols=_TEXT_COLS)
        out.append(Section(content.NEAR_MISS_TITLE, (Rich(content.near_miss_text(result)),),
                           table=_cut(t, len(result.near_misses), "near misses", limit, json_report)))
    if result.siblings:
        t = TableView("siblings", content.findings_table(result, limit, siblings=True), True, text_cols=_TEXT_COLS)
        out.append(Section(content.SIBLINGS_TITLE, (Rich(content.siblings_text(result)),),
                           table=_cut(t, len(result.siblings), "siblings", limit, json_report)))
    if result.chance:
        t = TableView("chance", content.chance_table(result, limit), True)
        out.append(Section("Chance target matches (not gated by default)",
                           table=_cut(t, len(result.chance), "chance target matches", limit, json_report)))
    if result.eval_duplicates:
        t = TableView("duplicates", content.duplicates_table(result, limit), True)
        out.append(Section("Duplicates inside eval", table=_cut(t, len(result.eval_duplicates), "duplicate groups", limit, json_report)))
    return out


def _tables(result: ScanResult) -> list[Section]:
    """The summary, the score histogram and the per-subset table, each with its chart."""
    out = [Section("Summary", (Rich("Eval records found in train, by kind of match (rows) and level (columns); "
                                    "an eval record can match at several levels."),),
                   table=TableView("summary", content.kind_level_table(result)), after=(Rich(content.counts_line(result)),), chart="by_kind")]
    scores = content.score_table(result)
    if scores is not None:
        out.append(Section("Scores of near/contained matches",
                           (Rich("Findings per similarity score bin; a match counts from its level's threshold upwards."),),
                           table=TableView("scores", scores), chart="scores"))
    subsets = content.subset_table(result)
    if subsets is not None:
        out.append(Section("Leakage by subset", (Rich("Eval records per ", code("data_source"), "/subset and how many of them occur in train."),),
                           table=TableView("subsets", subsets), chart="by_subset"))
    return out


def view(result: ScanResult, policy: Policy | None = None, json_report: bool = False, max_rows: int = 200,
         title: str = "Train/eval contamination report") -> ReportView:
    """What the report says, section by section; tables list at most ``max_rows`` rows.

    ``json_report``: a JSON report with every row goes with this one (the cut tables say so).
    """
    policy = policy or result.policy
    result = dataclasses.replace(result, policy=policy)  # every count below is what this gate judged
    code_ = exit_code(result, policy)
    sections = [
        Section("What was compared", items=(content.side_line(result.eval, "eval"), content.side_line(result.train, "train"))),
        Section("How", items=tuple(content.method_lines(result, policy))),
        *([Section("Configuration, limits, baseline and allowlist", items=tuple(lines))] if (lines := acceptance_lines(result)) else []),
        *_tables(result),
        *([Section("Notes", items=tuple(result.notes))] if result.notes else []),
        _findings(result, max_rows, json_report),
        *_listed(result, max_rows, json_report),
    ]
    state = "leak" if code_ == LEAK else "clean" if code_ == CLEAN else "partial"
    return ReportView(title, state, content.verdict(result, policy), tuple(sections), result.created_at)
