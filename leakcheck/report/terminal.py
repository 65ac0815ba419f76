"""The short terminal summary: a table and the worst leaks. Plain text, no click."""

from __future__ import annotations

from ..config import KINDS
from ..result import ScanResult
from ..gate import CLEAN, LEAK, PARTIAL


def render(result: ScanResult, code: int, examples: int = 5) -> str:
    s = result.summary()
    lines = [
        f"eval  {result.eval.path}  [{result.eval.format}]  {result.eval.records:,} records",
        f"train {result.train.path}  [{result.train.format}]  {result.train.records:,} records",
        f"levels: {', '.join(result.levels)}",
        "",
        f"{'kind':<18}{'eval records':>13}{'%':>8}  by level",
    ]
    for k in KINDS:
        if k in s["by_kind"]:
            v = s["by_kind"][k]
            lv = ", ".join(f"{name} {x['count']}" for name, x in v["levels"].items())
            lines.append(f"{k:<18}{v['count']:>13}{v['percent']:>8.2f}  {lv}")
    c = s["contaminated"]
    lines.append(f"{'any':<18}{c['count']:>13}{c['percent']:>8.2f}")
    if s["chance_target_matches"]["count"]:
        lines.append(f"chance target matches (not gated): {s['chance_target_matches']['count']} eval records")
    if s["eval_duplicates"]["groups"]:
        lines.append(f"duplicates inside eval: {s['eval_duplicates']['groups']} groups, {s['eval_duplicates']['records']} records")
    for side in (result.eval, result.train):
        if side.skipped:
            lines.append(f"skipped in {side.path}: " + ", ".join(f"{k} {v}" for k, v in sorted(side.skipped.items())))
    for n in result.notes:
        lines.append(f"note: {n if len(n) <= 150 else n[:149] + '…'}")
    if result.findings:
        lines += ["", "worst leaks:"]
        worst = sorted(result.findings, key=lambda f: (KINDS.index(f.kind), -f.score, f.eval_row))[:examples]
        for f in worst:
            lines.append(f"  eval {f.eval_id} ~ train {f.train_id}  {f.kind}/{f.level} {f.score:.2f}  {f.eval_snippet[:70]}")
    lines.append("")
    verdict = {CLEAN: "OK: no leakage at a gated level", LEAK: "LEAKAGE FOUND", PARTIAL: "PARTIAL SCAN: rows were skipped (pass --allow-partial to accept)"}
    lines.append(verdict.get(code, ""))
    return "\n".join(lines)
