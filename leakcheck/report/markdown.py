"""The Markdown contamination report a person reads, with its charts as PNG files beside it."""

from __future__ import annotations

import dataclasses

import os

from .. import __version__
from ..config import Policy
from ..result import ScanResult
from . import content
from ..errors import OutputError
from ._atomic import in_place, resolved, write_atomic
from .content import CHARTS, KIND_TEXT, Table  # noqa: F401  (KIND_TEXT: re-exported for older imports)

MAX_ROWS = 200


def _cell(text: object) -> str:
    """A data cell: clipped, on one line, every Markdown special character escaped."""
    return content.md_text(content.clip(text))


def _markup_cell(text: object) -> str:
    """A cell of the reports' own markup (code spans may hold data): one line, pipes escaped."""
    return content.one_line(text).replace("|", "\\|")


def table(t: Table) -> list[str]:
    """A Markdown table; data cells are escaped, the others keep their inline markup."""
    out = ["| " + " | ".join(t.columns) + " |", "|" + "|".join("---:" if i in t.numeric else "---" for i in range(len(t.columns))) + "|"]
    for row in t.rows:
        out.append("| " + " | ".join(_cell(c) if i in t.data_cols else _markup_cell(c) for i, c in enumerate(row)) + " |")
    return out


def _more(total: int, what: str, json_report: bool) -> list[str]:
    line = content.more_line(total, MAX_ROWS, what, json_report)
    return ["", line] if line else []


def chart_files(path: str | os.PathLike) -> dict[str, str]:
    """The file name of each chart of a report: ``report.md`` -> ``report-by_kind.png``, ...

    >>> chart_files("out/report.md")["by_kind"]
    'report-by_kind.png'
    """
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return {name: f"{stem}-{name}.png" for name in CHARTS}


def chart_paths(path: str | os.PathLike) -> dict[str, str]:
    """Where :func:`write_markdown` puts (or removes) each chart: beside the report, through a symlink beside
    the file it points to, so the relative image links work; none when the report goes to a stream or device.

    >>> chart_paths("out/report.md")["scores"], chart_paths("-")
    ('out/report-scores.png', {})
    """
    if in_place(path):
        return {}
    real = resolved(path)
    folder = os.path.dirname(real)
    return {name: os.path.join(folder, fname) for name, fname in chart_files(real).items()}


def _image(images: dict[str, str] | None, name: str) -> list[str]:
    if not images or name not in images:
        return []
    return [f"![{CHARTS[name]}]({images[name]})", ""]


def to_markdown(result: ScanResult, policy: Policy | None = None, title: str = "Train/eval contamination report",
                images: dict[str, str] | None = None, json_report: bool = False) -> str:
    """The report as Markdown. ``images`` maps chart names to the (relative) paths to embed.

    ``json_report``: a JSON report with every row goes with this one, so a table cut at
    :data:`MAX_ROWS` can say the rest are there.

    >>> from leakcheck.result import InputInfo, ScanResult
    >>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 2, 2)
    >>> r = ScanResult(info, info, ("exact",), {"levels": {"exact": {}}, "short_target_chars": 20, "max_target_hits": 10}, ())
    >>> to_markdown(r).splitlines()[2]
    '**No leakage at a gated level.** 0 of 2 eval records (0.0%) occur in train.'
    """
    policy = policy or result.policy
    result = dataclasses.replace(result, policy=policy)  # every count below is what this gate judged
    out = [f"# {title}", "", content.verdict(result, policy), "", "## What was compared", ""]
    out += [f"- {content.side_line(result.eval, 'eval')}", f"- {content.side_line(result.train, 'train')}"]
    out += ["", "## How", ""] + [f"- {line}" for line in content.method_lines(result, policy)]
    out += ["", "## Summary", "", "Eval records found in train, by kind of match (rows) and level (columns); "
            "an eval record can match at several levels.", ""]
    out += table(content.kind_level_table(result)) + ["", content.counts_line(result), ""]
    out += _image(images, "by_kind")
    scores = content.score_table(result)
    if scores is not None:
        out += ["## Scores of near/contained matches", "",
                "Findings per similarity score bin; a match counts from its level's threshold upwards.", ""]
        out += table(scores) + [""] + _image(images, "scores")
    subsets = content.subset_table(result)
    if subsets is not None:
        out += ["## Leakage by subset", "", "Eval records per `data_source`/subset and how many of them occur in train.", ""]
        out += table(subsets) + [""] + _image(images, "by_subset")
    if result.notes:
        out += ["## Notes", ""] + [f"- {content.md_text(n)}" for n in result.notes] + [""]
    out += ["## Leaks", ""]
    if not result.findings:
        out += ["None.", ""]
    else:
        out += table(content.findings_table(result, MAX_ROWS)) + _more(len(result.findings), "findings", json_report)
        out.append("")
    if result.near_misses:
        out += [f"## {content.NEAR_MISS_TITLE}", "", content.near_miss_text(result), ""]
        out += table(content.findings_table(result, MAX_ROWS, near_misses=True)) + _more(len(result.near_misses), "near misses", json_report) + [""]
    if result.siblings:
        out += [f"## {content.SIBLINGS_TITLE}", "", content.siblings_text(result), ""]
        out += table(content.findings_table(result, MAX_ROWS, siblings=True)) + _more(len(result.siblings), "siblings", json_report) + [""]
    if result.chance:
        out += ["## Chance target matches (not gated by default)", ""] + table(content.chance_table(result, MAX_ROWS))
        out += _more(len(result.chance), "chance target matches", json_report) + [""]
    if result.eval_duplicates:
        out += ["## Duplicates inside eval", ""] + table(content.duplicates_table(result, MAX_ROWS))
        out += _more(len(result.eval_duplicates), "duplicate groups", json_report) + [""]
    out += [f"_Generated by leakcheck {__version__} on {result.created_at}._", ""]
    return "\n".join(out)


def write_markdown(result: ScanResult, path: str | os.PathLike, policy: Policy | None = None, plots: bool = True,
                   title: str = "Train/eval contamination report", json_report: bool = False) -> list[str]:
    """Write the report and, with ``plots``, its charts (see :func:`chart_paths`); returns the paths written.

    A chart that has nothing to show this time is removed if an earlier run left one.
    ``json_report``: a JSON report with every row is written too (see :func:`to_markdown`).
    """
    written = []
    images: dict[str, str] = {}
    targets = chart_paths(path) if plots else {}
    if targets:
        from .plots import charts

        pngs = charts(result)
        for name, target in targets.items():
            if name in pngs:
                write_atomic(target, pngs[name])
                images[name] = os.path.basename(target)
                written.append(target)
            elif os.path.isfile(target) and not os.path.islink(target):
                try:
                    os.unlink(target)
                except OSError as exc:
                    raise OutputError(target, exc) from None
    write_atomic(path, to_markdown(result, policy, title, images=images, json_report=json_report))
    return [*written, os.fspath(path)]
