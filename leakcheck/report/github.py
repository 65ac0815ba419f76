"""GitHub Actions: workflow-command annotations and the job's step summary.

Annotations follow the runner's workflow-command format, ``::error file=F,line=N,title=T::message``,
escaped as the ``@actions/core`` toolkit escapes them (``command.ts``): in the message ``%``, CR
and LF; in property values also ``:`` and ``,``.

>>> command("error", {"file": "data/a,b.jsonl", "line": 3, "title": "x: y"}, "50% of\\nit")
'::error file=data/a%2Cb.jsonl,line=3,title=x%3A y::50%25 of%0Ait'
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from ..config import Policy
from ..errors import OutputError
from ..gate import exit_code
from ..result import Finding, ScanResult
from . import content
from .markdown import render
from .view import view

#: Rows of the findings table in the step summary: GitHub shows it on the run's page, the full report is an artifact.
SUMMARY_ROWS = 10
#: Characters of eval text quoted in an annotation's message.
MESSAGE_SNIPPET = 160
#: GitHub shows at most this many annotations of each type per step (the ``::notice`` line says so).
SHOWN_PER_STEP = 10


def escape_data(text: object) -> str:
    r"""A message, escaped as the runner expects.

    >>> escape_data("100%\r\ndone: a, b")
    '100%25%0D%0Adone: a, b'
    """
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: object) -> str:
    """A property value (file, title): the message's escapes plus ``:`` and ``,``.

    >>> escape_property("C:/data/a,b")
    'C%3A/data/a%2Cb'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, properties: Mapping[str, object], message: object) -> str:
    """One workflow command; properties whose value is ``None`` or empty are left out, as the toolkit does."""
    props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items() if v is not None and v != "")
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def repo_path(path: str, root: str | None = None) -> str:
    """``path`` relative to ``root`` (default: ``GITHUB_WORKSPACE``, else the current folder) when inside it, with ``/``.

    A file outside it (a Hub dataset in the cache) stays as it is: it is what leakcheck read.

    >>> repo_path("/w/repo/data/train.jsonl", "/w/repo"), repo_path("/elsewhere/t.jsonl", "/w/repo")
    ('data/train.jsonl', '/elsewhere/t.jsonl')
    """
    base = os.path.abspath(root or os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    full = os.path.abspath(path)
    if os.path.commonpath([base, full]) != base:
        return path
    return os.path.relpath(full, base).replace(os.sep, "/")


def is_gated(f: Finding, policy: Policy, accepted: bool = False) -> bool:
    """Whether the gate fails on ``f`` (what :meth:`ScanResult.gated` keeps): never when a baseline or allowlist accepts it."""
    return not accepted and any(policy.gates(k, lv) for k, lv in f.evidence())


def describe(f: Finding) -> str:
    r"""A finding in one sentence, naming both records, for an annotation or a SARIF result.

    >>> f = Finding("e1", "7", "prompt", "near", 0.8125, 0, 6, "q", "q", "How many eggs?", "", eval_set="gsm8k")
    >>> describe(f)
    'Eval record e1 of eval set gsm8k is in train record 7: prompt at near, score 0.81. Eval text: How many eggs?'
    >>> describe(Finding("a\x1b[2J", "7", "prompt", "exact", 1.0, 0, 6, "q", "q", "x", "")).split(" is ")[0]
    'Eval record a\\x1b[2J'
    """
    line = content.one_line  # ids and text are data: control characters shown as escapes, never sent to a log raw
    where = f" of eval set {line(f.eval_set)}" if f.eval_set else ""
    text = content.clip(line(f.eval_snippet), MESSAGE_SNIPPET)
    return (f"Eval record {line(f.eval_id)}{where} is in train record {line(f.train_id)}: {f.kind} at {content.level_cell(f)}, "
            f"score {f.score:.2f}. Eval text: {text}")


def annotation(f: Finding, policy: Policy, root: str | None = None) -> str:
    """``::error`` for a finding the gate fails on, ``::warning`` for one it does not, at the train file and line."""
    props = {"file": repo_path(f.train_file, root) if f.train_file else None, "line": f.train_line,
             "title": f"leakcheck: {f.kind} leak at {f.level}"}
    return command("error" if is_gated(f, policy) else "warning", props, describe(f))


def notice(name: str, result: ScanResult, policy: Policy) -> str:
    """The ``::notice`` line with one eval set's totals (GitHub shows only a few annotations of each type per step)."""
    s = result.summary(policy)
    accepted = sum(result.is_accepted(f) for f in result.findings)
    gated = sum(is_gated(f, policy, result.is_accepted(f)) for f in result.findings)
    state = {0: "no leakage at a gated level", 1: "leakage found", 3: "partial scan, rows were skipped"}[exit_code(result, policy)]
    msg = (f"{state}: {s['contaminated']['count']} of {s['eval_records']} eval records ({s['contaminated']['percent']}%) occur in train; "
           f"{gated} gated findings (::error), {len(result.findings) - gated - accepted} not gated (::warning)")
    if accepted:
        msg += f"; {accepted} accepted by the baseline or allowlist (not annotated)"
    chance = sum(c.level in result.levels for c in result.chance) if policy.chance else 0
    if chance:  # no train line to point at: counted here so a failing gate never looks unexplained
        msg += f"; {chance} chance target matches gated (--fail-on chance), listed in the report"
    if len(result.findings) > SHOWN_PER_STEP:
        msg += f"; GitHub shows the first {SHOWN_PER_STEP} of each type per step, the JSON report lists them all"
    return command("notice", {"title": f"leakcheck: eval set {name}"}, msg)


def annotation_lines(results: Mapping[str, ScanResult], policy: Policy, root: str | None = None) -> list[str]:
    """Every finding's annotation, then one ``::notice`` per eval set.

    Chance matches, near misses and siblings are not annotated; nor are findings a baseline or
    allowlist accepts (a gate that is quiet when nothing changed): the notice counts them.
    """
    lines = [annotation(f, policy, root) for r in results.values() for f in r.findings if not r.is_accepted(f)]
    return lines + [notice(name, r, policy) for name, r in results.items()]


def step_summary(results: Mapping[str, ScanResult], policy: Policy, json_report: bool = False) -> str:
    """The Markdown for ``GITHUB_STEP_SUMMARY``: per eval set its verdict, the summary table and the first leaks."""
    parts = []
    for name, r in results.items():
        v = view(r, policy, json_report, SUMMARY_ROWS, title=f"leakcheck: eval set {content.md_text(name)}")
        kept = tuple(s for s in v.sections if s.title in ("Summary", "Leaks"))
        parts.append(render(dataclasses.replace(v, sections=kept)))
    return "\n".join(parts)


def append_step_summary(path: str, text: str) -> None:
    """Append ``text`` to the step summary file, as the runner expects (what is there already stays)."""
    try:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write("\n" + (text if text.endswith("\n") else text + "\n"))  # a blank line first: never glued to a last line without one
    except OSError as exc:
        raise OutputError(f"GITHUB_STEP_SUMMARY {path}", exc) from None
