"""The one view of a result that the Markdown and HTML reports render: its sections, in order, and styled text as data."""

from __future__ import annotations

import dataclasses
import re

from leakcheck.config import Policy
from leakcheck.report import content
from leakcheck.report.content import Rich, Span
from leakcheck.report.html import to_html
from leakcheck.report.markdown import to_markdown
from leakcheck.report.view import view

from .test_report_edge import EVIL, make

ALL = ["What was compared", "How", "Summary", "Leakage by subset", "Notes", "Leaks", content.NEAR_MISS_TITLE, content.SIBLINGS_TITLE,
       "Chance target matches (not gated by default)", "Duplicates inside eval"]


def _full():
    r = make(EVIL, extra=2, path=EVIL, subsets={EVIL: 4, "other": 2})
    sib = dataclasses.replace(r.findings[0], detail={"prompt_score": 0.67, "target_score": 0.39, "targets_disagree": "answers 3 vs 4"})
    return dataclasses.replace(r, siblings=(sib,))


def test_both_renderers_list_the_views_sections_in_its_order():
    r = _full()
    assert [s.title for s in view(r).sections] == ALL
    assert re.findall(r"^## (.+)$", to_markdown(r), re.M) == ALL
    assert re.findall(r"<h2>(.+?)</h2>", to_html(r, charts={})) == ALL


def test_sections_without_rows_are_left_out_of_both():
    r = make(n=0)
    titles = ["What was compared", "How", "Summary", "Notes", "Leaks"]
    assert [s.title for s in view(r).sections] == titles
    assert re.findall(r"^## (.+)$", to_markdown(r), re.M) == titles
    assert re.findall(r"<h2>(.+?)</h2>", to_html(r, charts={})) == titles
    assert view(r).sections[-1].intro == ("None.",)


def test_verdict_is_structured_and_rendered_without_parsing():
    r = make()
    v = view(r, Policy.parse("pair"))
    assert v.state == "leak"
    assert v.verdict.spans[0] == Span("Leakage found", "strong")
    assert str(v.verdict) == "**Leakage found** at a gated level. 2 of 4 eval records (50.0%) occur in train."
    page = to_html(r, Policy.parse("pair"), charts={})
    assert '<p class="verdict leak" id="verdict"><strong>Leakage found</strong> at a gated level. 2 of 4 eval records (50.0%) occur in train.</p>' in page


def test_markup_in_data_is_never_styled():
    """A note or id holding ``**x**`` and backticks is data: shown as typed in HTML, escaped in Markdown."""
    r = dataclasses.replace(make("**x** `y`"), notes=("**note** `z`",))
    page = to_html(r, charts={})
    assert "<li>**note** `z`</li>" in page and "<strong>x</strong>" not in page and "<code>y</code>" not in page
    assert "- \\*\\*note\\*\\* \\`z\\`" in to_markdown(r)


def test_rich_keeps_its_markdown_and_joins_parts():
    r = Rich("a ", Rich(content.code("b`c")), Span("d", "em"))
    assert r == "a ``b`c``*d*" and [s.style for s in r.spans] == ["", "code", "em"]


def test_cut_tables_say_where_the_rest_is_in_both():
    r = make(n=260)
    assert view(r, max_rows=200, json_report=True).sections[-1].table.more == \
        "60 more findings are in the JSON report (this table lists the first 200)."
    assert "60 more findings are in the JSON report (this table lists the first 200)." in to_markdown(r, json_report=True)
    assert "more findings" not in to_html(r, charts={}, json_report=True)  # the page lists 5000
