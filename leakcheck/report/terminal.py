"""The short terminal summary: a table and the worst leaks. Plain text, no click."""

from __future__ import annotations

import re

from ..config import KINDS
from ..result import ScanResult
from ..gate import CLEAN, LEAK, PARTIAL, limit_checks
from .content import field_levels
from ._atomic import stream_of

#: Control characters (terminal escape sequences, line breaks), bidi overrides and lone surrogates:
#: printed as their escapes, so data cannot repaint the terminal, reorder a line or fail to encode.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def safe(text: object) -> str:
    r"""``text`` for a terminal line.

    >>> safe("id\x1b[2J\u202e\ud800 ok")
    'id\\x1b[2J\\u202e\\ud800 ok'
    """
    return _UNSAFE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(text))


def acceptance_lines(result: ScanResult) -> list[str]:
    """The configuration file, the limits, the baseline and the allowlist, as the gate used them."""
    lines = [f"config: {safe(result.config_file)}"] if result.config_file else []
    lines += [c.text() for c in limit_checks(result, result.policy)]
    if result.baseline is not None:
        b = result.baseline
        lines.append(f"baseline {safe(b.path)}: {b.baselined} baselined, {b.new} new, {len(b.gone)} gone (fixed)")
        lines += [f"  gone: eval {safe(e.eval_id)}  {e.kind}/{e.level}  {safe(e.snippet[:70])}" for e in b.gone[:5]]
    allowed = [(f, a) for f in result.findings if (a := result.acceptance(f)) is not None and a.by == "allowlist"]
    if allowed:
        lines.append(f"allowed by the allowlist (not gated): {len(allowed)} findings")
        lines += [f"  eval {safe(f.eval_id)} ~ train {safe(f.train_id)}  {f.kind}/{f.level}  reason: {safe(a.reason)}" for f, a in allowed[:5]]
    lines += [f"allowlist entry {safe(u)} matched no finding of this eval set" for u in result.allow_unused]
    return lines


def render(result: ScanResult, code: int, examples: int = 5, json_path: str | None = None) -> str:
    """The summary printed after a scan; ``json_path`` is the JSON report written with it, if any.

    Beyond the ``examples`` worst leaks, it says how many more there are and where they are listed.
    """
    s = result.summary()
    lines = [
        f"eval  {safe(result.eval.path)}  [{safe(result.eval.format)}]  {result.eval.records:,} records",
        f"train {safe(result.train.path)}  [{safe(result.train.format)}]  {result.train.records:,} records",
        f"levels: {', '.join(result.levels)}",
        "",
        f"{'kind':<18}{'eval records':>13}{'%':>8}  by level",
    ]
    for k in KINDS:
        if k in s["by_kind"]:
            v = s["by_kind"][k]
            lv = ", ".join(f"{name} {x['count']}" for name, x in v["levels"].items())
            lines.append(f"{k:<18}{v['count']:>13}{v['percent']:>8.2f}  {lv}")
    c, ng = s["contaminated"], s["not_gated"]
    lines.append(f"{'gated' if ng['count'] else 'any':<18}{c['count']:>13}{c['percent']:>8.2f}")
    if ng["count"]:
        by = "--fail-on, the baseline or the allowlist" if result.accepted else "--fail-on"
        lines.append(f"not gated by {by} (information only): {ng['count']} eval records")
    if s["siblings"]["count"]:
        lines.append(f"sibling tasks (targets disagree; not gated): {s['siblings']['count']} eval records")
    if s["chance_target_matches"]["count"]:
        lines.append(f"chance target matches (not gated): {s['chance_target_matches']['count']} eval records")
    if s["eval_duplicates"]["groups"]:
        lines.append(f"duplicates inside eval: {s['eval_duplicates']['groups']} groups, {s['eval_duplicates']['records']} records")
    for side in (result.eval, result.train):
        if side.skipped:
            lines.append(f"skipped in {safe(side.path)}: " + ", ".join(f"{safe(k)} {v}" for k, v in sorted(side.skipped.items())))
    for n in result.notes:
        lines.append(f"note: {safe(n if len(n) <= 150 else n[:149] + '…')}")
    lines += acceptance_lines(result)
    open_findings = [f for f in result.findings if not result.is_accepted(f)]
    if open_findings:
        lines += ["", "worst leaks:"]
        worst = sorted(open_findings, key=lambda f: (KINDS.index(f.kind), -f.score, f.eval_row))[:examples]
        for f in worst:
            fl = field_levels(f)
            lines.append(f"  eval {safe(f.eval_id)} ~ train {safe(f.train_id)}  {f.kind}/{f.level} {f.score:.2f}"
                         f"{f' ({fl})' if fl else ''}  {safe(f.eval_snippet[:70])}")
        more = len(open_findings) - len(worst)
        if more:
            if json_path is None:
                lines.append(f"  and {more} more finding{'s' * (more != 1)} (--json FILE lists them all)")
            else:
                where = {1: "on standard output", 2: "on standard error"}.get(stream_of(json_path) or 0, safe(json_path))
                lines.append(f"  and {more} more finding{'s' * (more != 1)} in the JSON report {where}")
    lines.append("")
    verdict = {CLEAN: "OK: no leakage at a gated level", LEAK: "LEAKAGE FOUND", PARTIAL: "PARTIAL SCAN: rows were skipped (pass --allow-partial to accept)"}
    lines.append(verdict.get(code, ""))
    return "\n".join(lines)
