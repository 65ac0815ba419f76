"""The HTML report: one self-contained file (charts embedded, no network) with the Markdown report's content.

Rendered from :class:`~leakcheck.report.view.ReportView` by the jinja2 template
``templates/report.html.j2`` with autoescaping on. The findings table sorts by any column (click a header; the order is kept in the URL as
``#sort=findings:score:desc`` so a sorted view can be linked) and filters by kind.

>>> from leakcheck.result import InputInfo, ScanResult
>>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 2, 2)
>>> r = ScanResult(info, info, ("exact",), {"levels": {"exact": {}}, "short_target_chars": 20, "max_target_hits": 10}, ())
>>> page = to_html(r, charts={})
>>> page.startswith("<!DOCTYPE html>"), "<h2>Leaks</h2>" in page
(True, True)
"""

from __future__ import annotations

import base64
import dataclasses
import os
import re

import jinja2

from ..config import Policy
from ..result import ScanResult
from . import content
from ._atomic import write_atomic
from .view import ReportView, view

#: Findings listed in the page; the JSON report has all of them.
MAX_ROWS = 5000

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("leakcheck.report", "templates"), autoescape=True,
                          trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"[`*]", "", name).lower()).strip("-")


def _data_cell(text: object) -> str:
    """A cell of user data: clipped, control characters visible (escaped by the template)."""
    return content.visible(content.clip(text))


def _code(text: object) -> str:
    return content.one_line(text) or " "  # an empty code span still shows as one


_ENV.filters.update(slug=_slug, data_cell=_data_cell, code_text=_code)


def render(v: ReportView, charts: dict[str, bytes]) -> str:
    """A :class:`~leakcheck.report.view.ReportView` as one HTML page with ``charts`` (PNG bytes) embedded."""
    pngs = {name: base64.b64encode(data).decode("ascii") for name, data in charts.items()}
    return _ENV.get_template("report.html.j2").render(v=v, charts=pngs)


def to_html(result: ScanResult, policy: Policy | None = None, title: str = "Train/eval contamination report",
            charts: dict[str, bytes] | None = None, json_report: bool = False) -> str:
    """The report as one HTML page. ``charts`` defaults to :func:`leakcheck.report.plots.charts`.

    ``json_report``: a JSON report with every row goes with this page (the cut tables say so).
    """
    if charts is None:
        from .plots import charts as make_charts

        charts = make_charts(dataclasses.replace(result, policy=policy or result.policy))
    return render(view(result, policy, json_report, MAX_ROWS, title), charts)


def write_html(result: ScanResult, path: str | os.PathLike, policy: Policy | None = None,
               title: str = "Train/eval contamination report", json_report: bool = False) -> None:
    write_atomic(path, to_html(result, policy, title, json_report=json_report))
