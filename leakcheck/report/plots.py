"""Charts for the reports, as PNG bytes. Every number drawn is also in a table of the report.

Figures are built without pyplot (no global state, no display needed), with matplotlib's
default style whatever the user's matplotlibrc says, a fixed size and no software
metadata, so the same result gives the same bytes.

>>> from leakcheck.result import Finding, InputInfo, ScanResult
>>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {}, 4, 4)
>>> f = Finding("1", "9", "pair", "exact", 1.0, 1, 9, "question", "question", "q", "q")
>>> r = ScanResult(info, info, ("exact", "normalized"), {"levels": {}}, (f,))
>>> sorted(charts(r)), charts(r)["by_kind"][:4]
(['by_kind'], b'\\x89PNG')
"""

from __future__ import annotations

import io
import warnings

import matplotlib.style
from matplotlib.figure import Figure

from ..result import ScanResult
from . import content
from .content import CHARTS

_COLORS = {"exact": "#b2182b", "normalized": "#ef8a62", "near": "#67a9cf", "contained": "#2166ac", "semantic": "#762a83"}
_DPI = 100


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    return buf.getvalue()


def by_kind_chart(result: ScanResult) -> bytes | None:
    """Grouped bars: % of eval records contaminated, per kind, one bar per level."""
    data = content.kind_level_percents(result)
    if not data:
        return None
    levels = list(result.levels)
    with matplotlib.style.context("default"):
        kinds = list(data)
        fig = Figure(figsize=(min(10.0, 4.5 + 1.2 * len(kinds)), 4))
        ax = fig.add_subplot()
        width = 0.8 / len(levels)
        for j, lv in enumerate(levels):
            xs = [i - 0.4 + width * (j + 0.5) for i in range(len(kinds))]
            ys = [data[k][lv] for k in kinds]
            bars = ax.bar(xs, ys, width, label=lv, color=_COLORS.get(lv))
            ax.bar_label(bars, labels=[f"{y:g}%" for y in ys], fontsize=8, padding=2)
        ax.set_xticks(range(len(kinds)), kinds)
        ax.set_xlim(-0.6, len(kinds) - 0.4)
        ax.set_ylabel("% of eval records")
        top = max(max(v.values()) for v in data.values())
        ax.set_ylim(0, max(5.0, top * 1.2))
        ax.set_title(CHARTS["by_kind"] + f" (n = {result.eval.records:,})")
        ax.legend(title="level", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
        return _png(fig)


def scores_chart(result: ScanResult) -> bytes | None:
    """Histogram of near/contained finding scores with each level's threshold marked."""
    edges, counts = content.score_bins(result)
    if not edges:
        return None
    th = content.thresholds(result)
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(8, 4))
        ax = fig.add_subplot()
        n = len(counts)
        w = content.BIN / (n + 0.5)
        for j, (lv, c) in enumerate(counts.items()):
            xs = [edges[i] + w * (j + 0.25) for i in range(len(c))]
            ax.bar(xs, c, w, align="edge", label=f"{lv} findings", color=_COLORS.get(lv))
        for j, lv in enumerate(lv for lv in th if lv in counts):
            ax.axvline(th[lv], color=_COLORS.get(lv), linestyle="--", linewidth=1.2)
            ax.annotate(f"{lv} threshold {th[lv]:g}", (th[lv], 1), xycoords=("data", "axes fraction"),
                        xytext=(3, -12 - 12 * j), textcoords="offset points", fontsize=8, color=_COLORS.get(lv))
        top = max(max(c) for c in counts.values())
        ax.set_ylim(0, top * 1.3 + 0.5)
        ax.set_xlim(edges[0] - content.BIN / 2, edges[-1] + content.BIN / 4)
        ax.set_xlabel("similarity score")
        ax.set_ylabel("findings")
        ax.yaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]
        ax.set_title(CHARTS["scores"])
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
        return _png(fig)


#: Most subsets drawn as bars; with more, the subset table alone shows them (a figure that tall
#: would be unreadable, and past about 1,400 bars larger than a PNG may be).
MAX_SUBSETS = 40


def _label(name: str, n: int = 40) -> str:
    return content.clip(content.one_line(name), n).encode("utf-8", "backslashreplace").decode("utf-8")


def by_subset_chart(result: ScanResult) -> bytes | None:
    """Horizontal bars: % of each eval subset contaminated (any kind). Only with two to :data:`MAX_SUBSETS` subsets."""
    rows = content.subset_rows(result)
    if not 2 <= len(rows) <= MAX_SUBSETS:
        return None
    rows = rows[::-1]  # first subset on top
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(8, max(2.5, 0.45 * len(rows) + 1.2)))
        ax = fig.add_subplot()
        ys = [content.pct(c, n) for _, n, c, _ in rows]
        bars = ax.barh(range(len(rows)), ys, color="#b2182b")
        ax.bar_label(bars, labels=[f"{c}/{n} ({y:g}%)" for (_, n, c, _), y in zip(rows, ys)], fontsize=8, padding=3)
        # Subset names are data: no mathtext ("$x$"), lone surrogates as their escapes, long names cut.
        ax.set_yticks(range(len(rows)), [_label(name) for name, *_ in rows], parse_math=False)
        ax.set_xlim(0, max(5.0, max(ys) * 1.3))
        ax.set_xlabel("% of the subset's eval records")
        ax.set_title(CHARTS["by_subset"])
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
        return _png(fig)


def charts(result: ScanResult) -> dict[str, bytes]:
    """The charts that have something to show, by name, in :data:`CHARTS` order."""
    out = {}
    for name, fn in (("by_kind", by_kind_chart), ("scores", scores_chart), ("by_subset", by_subset_chart)):
        with warnings.catch_warnings():
            # A subset name in a script the font lacks (emoji) is drawn as boxes; no warning per glyph.
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font", category=UserWarning)
            png = fn(result)
        if png is not None:
            out[name] = png
    return out
