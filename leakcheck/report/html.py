"""The HTML report: one self-contained file (charts embedded, no network) with the Markdown report's content.

The findings table sorts by any column (click a header; the order is kept in the URL as
``#sort=findings:score:desc`` so a sorted view can be linked) and filters by kind.

>>> from leakcheck.result import InputInfo, ScanResult
>>> info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 2, 2)
>>> r = ScanResult(info, info, ("exact",), {"levels": {"exact": {}}, "short_target_chars": 20, "max_target_hits": 10}, ())
>>> page = to_html(r, charts={})
>>> page.startswith("<!DOCTYPE html>"), "<h2>Leaks</h2>" in page
(True, True)
"""

from __future__ import annotations

import dataclasses

import base64
import html
import os
import re

from .. import __version__
from ..config import Policy
from ..gate import CLEAN, LEAK, exit_code
from ..result import ScanResult
from . import content
from ._atomic import write_atomic
from .content import CHARTS, Table

#: Findings listed in the page; the JSON report has all of them.
MAX_ROWS = 5000

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;margin:0;background:#fafafa}
main{max-width:1200px;margin:0 auto;padding:1.5rem 2rem 3rem;background:#fff}
h1{font-size:1.6rem;margin:.2rem 0 1rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f1f1f1;padding:0 .25em;border-radius:3px}
.verdict{padding:.7rem 1rem;border-radius:6px;font-size:1.05rem}
.verdict.leak{background:#fdecea;border:1px solid #f5c2bd}.verdict.clean{background:#eaf6ec;border:1px solid #bfe3c6}
.verdict.partial{background:#fff6e0;border:1px solid #f0d998}
table{border-collapse:collapse;margin:.6rem 0;font-size:13.5px}
th,td{border:1px solid #ddd;padding:.3rem .5rem;vertical-align:top;text-align:left}
th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}
table.sortable th::after{content:" \\2195";color:#aaa}
table.sortable th[aria-sort=ascending]::after{content:" \\2191";color:#333}
table.sortable th[aria-sort=descending]::after{content:" \\2193";color:#333}
#findings td.text{max-width:28rem;overflow-wrap:anywhere}
tr.kind-pair td:nth-child(3){font-weight:600}
figure{margin:1rem 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:13px;color:#555}.muted{color:#666;font-size:13px}
"""

_JS = """
(function(){
  function key(td, num){
    var t = td.getAttribute('data-sort') || td.textContent;
    if(num){ var v = parseFloat(t); return isNaN(v) ? -Infinity : v; }
    return t;
  }
  function sortTable(table, col, dir){
    var ths = table.tHead.rows[0].cells, num = ths[col].classList.contains('num');
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function(a, b){
      var x = key(a.cells[col], num), y = key(b.cells[col], num), c;
      c = num ? (x - y) : String(x).localeCompare(String(y), undefined, {numeric: true});
      if(c === 0){ c = (+a.getAttribute('data-i')) - (+b.getAttribute('data-i')); return c; }
      return dir === 'desc' ? -c : c;
    });
    rows.forEach(function(r){ body.appendChild(r); });
    for(var i = 0; i < ths.length; i++){ ths[i].removeAttribute('aria-sort'); }
    ths[col].setAttribute('aria-sort', dir === 'desc' ? 'descending' : 'ascending');
  }
  function colOf(table, name){
    var ths = table.tHead.rows[0].cells;
    for(var i = 0; i < ths.length; i++){ if(ths[i].getAttribute('data-col') === name){ return i; } }
    return -1;
  }
  document.querySelectorAll('table.sortable').forEach(function(table){
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function(th, i){
      th.addEventListener('click', function(){
        var dir = th.getAttribute('aria-sort') === 'ascending' ? 'desc' : 'asc';
        sortTable(table, i, dir);
        history.replaceState(null, '', '#sort=' + table.id + ':' + th.getAttribute('data-col') + ':' + dir);
      });
    });
  });
  var m = /^#sort=([\\w-]+):([\\w-]+):(asc|desc)$/.exec(location.hash);
  if(m){
    var table = document.getElementById(m[1]);
    if(table && table.classList.contains('sortable')){
      var col = colOf(table, m[2]);
      if(col >= 0){ sortTable(table, col, m[3]); }
    }
  }
  var sel = document.getElementById('kind-filter');
  if(sel){
    sel.addEventListener('change', function(){
      var rows = document.getElementById('findings').tBodies[0].rows, shown = 0;
      for(var i = 0; i < rows.length; i++){
        var on = !sel.value || rows[i].getAttribute('data-kind') === sel.value;
        rows[i].hidden = !on; if(on){ shown++; }
      }
      document.getElementById('findings-shown').textContent = shown;
    });
  }
})();
"""


_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def _emphasis(t: str) -> str:
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"<em>\1</em>", t)


def inline(text: str) -> str:
    """Escape ``text`` and turn the reports' inline markup into HTML.

    Code spans follow CommonMark (any number of backticks, one padding space stripped) and
    their content is never read as bold or italics: they hold data such as paths.

    >>> inline("**any** `pair` <b> *chance*")
    '<strong>any</strong> <code>pair</code> &lt;b&gt; <em>chance</em>'
    >>> inline("`` a`**b** ``")
    '<code>a`**b**</code>'
    """
    t = html.escape(str(text), quote=False)
    out, pos = [], 0
    for m in _CODE.finditer(t):
        code = m.group(2)
        if len(code) > 2 and code[0] == " " and code[-1] == " " and code.strip():
            code = code[1:-1]
        out += [_emphasis(t[pos:m.start()]), f"<code>{code}</code>"]
        pos = m.end()
    out.append(_emphasis(t[pos:]))
    return "".join(out)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"[`*]", "", name).lower()).strip("-")


def table(t: Table, table_id: str | None = None, sortable: bool = False, row_attrs: list[str] | None = None,
          text_cols: frozenset[int] = frozenset()) -> str:
    cls = ' class="sortable"' if sortable else ""
    tid = f' id="{table_id}"' if table_id else ""
    num = ' class="num"'
    head = "".join(f'<th{num if i in t.numeric else ""} data-col="{_slug(c)}">{inline(c)}</th>' for i, c in enumerate(t.columns))
    body = []
    for n, row in enumerate(t.rows):
        cells = []
        for i, c in enumerate(row):
            klass = "num" if i in t.numeric else ("text" if i in text_cols else "")
            attr = f' class="{klass}"' if klass else ""
            cells.append(f"<td{attr}>{html.escape(content.visible(content.clip(c)), quote=False) if i in t.data_cols else inline(c)}</td>")
        extra = f" {row_attrs[n]}" if row_attrs else ""
        body.append(f'<tr data-i="{n}"{extra}>{"".join(cells)}</tr>')
    return f"<table{tid}{cls}><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body) + "\n</tbody></table>"


def _figure(charts: dict[str, bytes], name: str) -> str:
    if name not in charts:
        return ""
    data = base64.b64encode(charts[name]).decode("ascii")
    return (f'<figure id="chart-{name}"><img alt="{html.escape(CHARTS[name])}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(CHARTS[name])}; the numbers are in the table above.</figcaption></figure>")


def _more(total: int, what: str, json_report: bool) -> str:
    line = content.more_line(total, MAX_ROWS, what, json_report)
    return f'<p class="more">{html.escape(line)}</p>' if line else ""


def to_html(result: ScanResult, policy: Policy | None = None, title: str = "Train/eval contamination report",
            charts: dict[str, bytes] | None = None, json_report: bool = False) -> str:
    """The report as one HTML page. ``charts`` defaults to :func:`leakcheck.report.plots.charts`.

    ``json_report``: a JSON report with every row goes with this page (the cut tables say so).
    """
    policy = policy or result.policy
    result = dataclasses.replace(result, policy=policy)  # every count below is what this gate judged
    if charts is None:
        from .plots import charts as make_charts

        charts = make_charts(result)
    code = exit_code(result, policy)
    state = "leak" if code == LEAK else "clean" if code == CLEAN else "partial"
    p: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
        f'<meta name="generator" content="leakcheck {__version__}">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>",
        "<body><main>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="verdict {state}" id="verdict">{inline(content.verdict(result, policy))}</p>',
        "<h2>What was compared</h2><ul>",
        f"<li>{inline(content.side_line(result.eval, 'eval'))}</li>",
        f"<li>{inline(content.side_line(result.train, 'train'))}</li></ul>",
        "<h2>How</h2><ul>",
        *(f"<li>{inline(line)}</li>" for line in content.method_lines(result, policy)),
        "</ul>",
        "<h2>Summary</h2>",
        "<p>Eval records found in train, by kind of match (rows) and level (columns); an eval record can match at several levels.</p>",
        table(content.kind_level_table(result), "summary"),
        f"<p>{inline(content.counts_line(result))}</p>",
        _figure(charts, "by_kind"),
    ]
    scores = content.score_table(result)
    if scores is not None:
        p += ["<h2>Scores of near/contained matches</h2>",
              "<p>Findings per similarity score bin; a match counts from its level's threshold upwards.</p>",
              table(scores, "scores"), _figure(charts, "scores")]
    subsets = content.subset_table(result)
    if subsets is not None:
        p += ["<h2>Leakage by subset</h2>",
              f"<p>{inline('Eval records per `data_source`/subset and how many of them occur in train.')}</p>",
              table(subsets, "subsets"), _figure(charts, "by_subset")]
    if result.notes:
        p += ["<h2>Notes</h2><ul>", *(f"<li>{html.escape(n)}</li>" for n in result.notes), "</ul>"]
    p.append("<h2>Leaks</h2>")
    if not result.findings:
        p.append("<p>None.</p>")
    else:
        shown = result.findings[:MAX_ROWS]
        kinds = list(dict.fromkeys(f.kind for f in shown))
        opts = "".join(f'<option value="{html.escape(k)}">{html.escape(k)} ({sum(1 for f in shown if f.kind == k)})</option>' for k in kinds)
        p.append(
            f'<p class="muted">Click a column header to sort. Kind: <select id="kind-filter"><option value="">all ({len(shown)})</option>{opts}</select> '
            f'— <span id="findings-shown">{len(shown)}</span> rows shown.</p>'
        )
        attrs = [f'class="kind-{html.escape(f.kind)}" data-kind="{html.escape(f.kind)}"' for f in shown]
        p.append(table(content.findings_table(result, MAX_ROWS), "findings", sortable=True, row_attrs=attrs, text_cols=frozenset({5, 6})))
        p.append(_more(len(result.findings), "findings", json_report))
    if result.near_misses:
        p += [f"<h2>{content.NEAR_MISS_TITLE}</h2>", f"<p>{html.escape(content.near_miss_text(result))}</p>",
              table(content.findings_table(result, MAX_ROWS, near_misses=True), "near-misses", sortable=True, text_cols=frozenset({5, 6})),
              _more(len(result.near_misses), "near misses", json_report)]
    if result.siblings:
        p += [f"<h2>{content.SIBLINGS_TITLE}</h2>", f"<p>{html.escape(content.siblings_text(result))}</p>",
              table(content.findings_table(result, MAX_ROWS, siblings=True), "siblings", sortable=True, text_cols=frozenset({5, 6})),
              _more(len(result.siblings), "siblings", json_report)]
    if result.chance:
        p += ["<h2>Chance target matches (not gated by default)</h2>", table(content.chance_table(result, MAX_ROWS), "chance", sortable=True),
              _more(len(result.chance), "chance target matches", json_report)]
    if result.eval_duplicates:
        p += ["<h2>Duplicates inside eval</h2>", table(content.duplicates_table(result, MAX_ROWS), "duplicates", sortable=True),
              _more(len(result.eval_duplicates), "duplicate groups", json_report)]
    p += [
        f'<p class="muted"><em>Generated by leakcheck {__version__} on {html.escape(result.created_at)}.</em></p>',
        f"</main><script>{_JS}</script></body></html>",
        "",
    ]
    return "\n".join(x for x in p if x)


def write_html(result: ScanResult, path: str | os.PathLike, policy: Policy | None = None,
               title: str = "Train/eval contamination report", json_report: bool = False) -> None:
    write_atomic(path, to_html(result, policy, title, json_report=json_report))
