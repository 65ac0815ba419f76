"""``leakcheck impact`` outputs: the terminal table, the JSON file (read back by ``leakcheck card --impact``) and Markdown.

Numbers are printed with 4 decimals; a cell with nothing honest to show is ``–`` and the
row's note says why (too few records, no clean records, part of clean).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from .. import __version__
from ..errors import InputError
from ..impact import SUBSETS, Analysis, Impact, ImpactRow
from . import content
from ._atomic import write_atomic
from .content import Table
from .terminal import safe

IMPACT_VERSION = 1
TITLE = "Impact of decontamination"
#: What each subset is, for the reports (the definitions are in :mod:`leakcheck.impact`).
SUBSET_TEXT = {
    "all": "every scored eval record",
    "clean": "no gated finding",
    "leaked": "at least one gated finding",
    "pair": "prompt and reward target found in one train record",
    "prompt-only": "prompt found, reward target not",
    "target-only": "reward target found, prompt not",
    "group": "same conversation/group id in train",
    "semantic": "a gated finding at the semantic level",
    "sibling": "clean, with a near miss or sibling task (information)",
}


def num(v: float | None, sign: bool = False) -> str:
    """A number with 4 decimals (``+`` for differences), ``–`` for none.

    >>> num(0.48271), num(-0.01, sign=True), num(None)
    ('0.4827', '-0.0100', '–')
    """
    if v is None:
        return "–"
    return f"{v:+.4f}" if sign else f"{v:.4f}"


def interval(lo: float | None, hi: float | None, sign: bool = False) -> str:
    return "–" if lo is None or hi is None else f"[{num(lo, sign)}, {num(hi, sign)}]"


def p_text(p: float | None) -> str:
    return "–" if p is None else f"{p:.4f}"


def _cells(r: ImpactRow) -> tuple[str, ...]:
    return (num(r.mean), interval(r.ci_low, r.ci_high), num(r.diff_from_clean, True),
            interval(r.diff_ci_low, r.diff_ci_high, True), p_text(r.p_value))


def table(impact: Impact) -> Table:
    """The headline table: the metric per subset, or with a baseline both means and the gain per subset."""
    head = impact.headline
    if head.quantity != "gain":
        cols: tuple[str, ...] = ("subset", "n", impact.metric, "95% CI", "− clean", "95% CI", "p", "note")
        rows = tuple((r.subset, r.n, *_cells(r), r.note) for r in head.rows)
        return Table(cols, rows, numeric=frozenset(range(1, 7)))
    base, model = impact.analysis("baseline"), impact.analysis("model")
    cols = ("subset", "n", "baseline", "model", "gain", "95% CI", "gain − clean gain", "95% CI", "p", "note")
    out = []
    for r in head.rows:
        b, m = base.row(r.subset), model.row(r.subset)
        out.append((r.subset, r.n, num(b.mean if b else None), num(m.mean if m else None), num(r.mean, True),
                    interval(r.ci_low, r.ci_high, True), num(r.diff_from_clean, True), interval(r.diff_ci_low, r.diff_ci_high, True),
                    p_text(r.p_value), r.note))
    return Table(cols, tuple(out), numeric=frozenset(range(1, 9)))


def headline(impact: Impact) -> str:
    """One sentence: the number on the whole set against the number on clean records.

    e.g. ``gain in bleu: +0.0336 on all 100 eval records; +0.0040 [-0.0021, +0.0101] on the 65 clean ones.``
    """
    head = impact.headline
    whole, clean = head.row("all"), head.row("clean")
    gain = head.quantity == "gain"
    what = f"gain in {impact.metric} (model − baseline)" if gain else impact.metric
    if whole is None or whole.mean is None:
        return f"{what}: no scored records."
    scored = f"all {whole.n} eval records" if not impact.missing else \
        f"the {whole.n} scored eval records ({impact.missing.get('all', 0)} without a score)"
    out = f"{what}: {num(whole.mean, gain)} on {scored}"
    if clean is None or clean.mean is None:
        return out + "; no clean records."
    ci = interval(clean.ci_low, clean.ci_high, gain)
    out += f"; {num(clean.mean, gain)}" + (f" {ci}" if ci != "–" else "") + f" on the {clean.n} clean ones"
    if gain:
        b, m = impact.analysis("baseline"), impact.analysis("model")
        bw, mw, bc, mc = b.row("all"), m.row("all"), b.row("clean"), m.row("clean")
        if bw and mw and bc and mc and None not in (bw.mean, mw.mean, bc.mean, mc.mean):
            out += f" ({num(bw.mean)} → {num(mw.mean)} overall, {num(bc.mean)} → {num(mc.mean)} on clean)"
    return out + "."


def method_text(impact: Impact) -> str:
    m = impact.method
    return (f"95% percentile bootstrap intervals ({m['resamples']:,} resamples, seed {m['seed']}); the difference from clean "
            f"resamples clean and the subset independently; p: two-sided permutation test of that difference "
            f"({m['permutations']:,} permutations). Subsets under {m['min_n']} records get no interval.")


def _missing_text(impact: Impact) -> str:
    parts = []
    if impact.missing:
        parts.append(f"{impact.missing.get('all', 0)} eval records had no score and are left out ("
                     + ", ".join(f"{k} {v}" for k, v in impact.missing.items() if k != "all") + ")")
    if impact.extra:
        parts.append(f"{impact.extra} scores named no eval record and were ignored")
    return "; ".join(parts)


def render(impact: Impact) -> str:
    """The terminal text: what was compared, the table, how it was computed."""
    t = table(impact)
    lines = [safe(f"impact of decontamination on {impact.metric}: scores {impact.scores}"
                  + (f", baseline {impact.baseline_scores}" if impact.baseline_scores else "")),
             safe(f"eval {impact.eval_path}: {impact.eval_records} records; report {impact.report} (gate: {', '.join(impact.policy)})"), ""]
    cells = [[safe(c) for c in t.columns]] + [[safe(c) for c in row] for row in t.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(t.columns) - 1)]
    for row in cells:
        body = "  ".join(c.rjust(w) if i in t.numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
        lines.append((body + "  " + row[-1]).rstrip())
    lines += ["", safe(headline(impact))]
    miss = _missing_text(impact)
    if miss:
        lines.append(miss + ".")
    lines += [f"note: {n}" for n in impact.notes]
    lines.append(method_text(impact))
    return "\n".join(lines)


def markdown_lines(impact: Impact, level: int = 2) -> list[str]:
    """The Markdown section (a ``##`` heading by default; the card uses ``###``)."""
    t = table(impact)
    out = [f"{'#' * level} {TITLE}", "", f"**{content.md_text(headline(impact))}**", ""]
    against = f" against the baseline's {content.md_code(os.path.basename(impact.baseline_scores))}" if impact.baseline_scores else ""
    out.append(f"Per-item scores {content.md_code(os.path.basename(impact.scores))}{against}, metric {content.md_code(impact.metric)}, "
               f"on the eval set {content.md_code(impact.eval_path)} ({impact.eval_records} records); "
               f"subsets as the gate judged them ({', '.join(impact.policy)}).")
    out += [""] + _md_table(t) + [""]
    out += ["Subsets: " + "; ".join(f"`{s}`: {SUBSET_TEXT[s]}" for s in SUBSETS if any(r[0] == s for r in t.rows))
            + ". `pair`, `prompt-only` and `target-only` do not overlap; `group` and `semantic` may overlap with them.", ""]
    miss = _missing_text(impact)
    if miss:
        out += [miss[0].upper() + miss[1:] + ".", ""]
    for n in impact.notes:
        out += [f"Note: {content.md_text(n)}.", ""]
    out += [method_text(impact), ""]
    return out


def _md_table(t: Table) -> list[str]:
    from .markdown import table as md_table

    rows = tuple((content.md_code(r[0]), *r[1:-1], content.md_text(r[-1])) for r in t.rows)
    return md_table(dataclasses.replace(t, rows=rows))


def to_markdown(impact: Impact) -> str:
    return "\n".join(markdown_lines(impact) + [f"_Generated by leakcheck {__version__}._", ""])


def card_metadata(impact: Impact) -> dict[str, Any]:
    """What the card's ``leakcheck.impact`` metadata holds: the headline table's means and differences per subset."""
    return {"metric": impact.metric, "quantity": impact.headline.quantity,
            "subsets": {r.subset: {k: v for k, v in _row_dict(r).items() if k in ("n", "mean", "diff_from_clean") and v is not None}
                        for r in impact.headline.rows}}


def _row_dict(r: ImpactRow) -> dict[str, Any]:
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in dataclasses.asdict(r).items()}


def to_dict(impact: Impact) -> dict[str, Any]:
    return {
        "impact_version": IMPACT_VERSION,
        "leakcheck_version": __version__,
        "report": impact.report,
        "report_eval": impact.report_eval,
        "report_created_at": impact.report_created_at,
        "eval": {"path": impact.eval_path, "records": impact.eval_records},
        "metric": impact.metric,
        "scores": impact.scores,
        "baseline_scores": impact.baseline_scores,
        "policy": list(impact.policy),
        "method": impact.method,
        "missing": impact.missing,
        "extra_scores": impact.extra,
        "notes": list(impact.notes),
        "headline": headline(impact),
        "tables": {a.quantity: [_row_dict(r) for r in a.rows] for a in impact.analyses},
    }


def write_json(impact: Impact, path: str) -> None:
    write_atomic(path, json.dumps(to_dict(impact), indent=2, ensure_ascii=False) + "\n")


def write_markdown(impact: Impact, path: str) -> None:
    write_atomic(path, to_markdown(impact))


_ROW_FIELDS = {f.name for f in dataclasses.fields(ImpactRow)}


def load_json(path: str) -> Impact:
    """Read an impact file written by ``leakcheck impact --json``."""
    fix = "pass the file written by leakcheck impact --json"
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except FileNotFoundError:
        raise InputError(path, None, "no such file", fix) from None
    except (OSError, ValueError) as exc:
        raise InputError(path, None, f"not a JSON file ({exc})", fix) from None
    if not isinstance(d, dict) or d.get("impact_version") != IMPACT_VERSION:
        raise InputError(path, None, f"not a leakcheck impact file of version {IMPACT_VERSION}", fix)
    try:
        analyses = []
        for quantity, rows in d["tables"].items():
            if not isinstance(rows, list) or not all(isinstance(r, dict) and set(r) == _ROW_FIELDS for r in rows):
                raise ValueError(f"tables.{quantity} must be a list of rows with {', '.join(sorted(_ROW_FIELDS))}")
            analyses.append(Analysis(quantity, tuple(ImpactRow(**r) for r in rows)))
        if [a.quantity for a in analyses] not in (["model"], ["baseline", "model", "gain"]):
            raise ValueError("tables must be model, or baseline, model and gain")
        return Impact(report=str(d["report"]), report_eval=str(d["report_eval"]), report_created_at=str(d["report_created_at"]),
                      eval_path=str(d["eval"]["path"]), eval_records=int(d["eval"]["records"]), metric=str(d["metric"]),
                      scores=str(d["scores"]), baseline_scores=d["baseline_scores"], policy=tuple(d["policy"]), method=dict(d["method"]),
                      analyses=tuple(analyses), missing=dict(d["missing"]), extra=int(d["extra_scores"]),
                      notes=tuple(str(n) for n in d.get("notes", [])))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(path, None, f"malformed leakcheck impact file ({type(exc).__name__}: {exc})", "write it again with leakcheck impact --json") from None
