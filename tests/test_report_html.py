"""The self-contained HTML report, checked as text and in a real headless browser.

The browser tests need Debian's ``chromium`` (installed by .ci/run); they skip cleanly
where no Chromium/Chrome binary is on PATH.
"""

from __future__ import annotations

import dataclasses
import base64
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from leakcheck.report.html import to_html, write_html

from .test_report_render import PNG, _near_result, scanned  # noqa: F401  (fixture)

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable") if shutil.which(b)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium on PATH (apt-get install chromium)")


class _Tables(HTMLParser):
    """Cell texts of every row of each table with an id, plus the header cells' aria-sort."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[list[str]]] = {}
        self.sorted_by: dict[str, tuple[str, str]] = {}
        self._table: str | None = None
        self._in_body = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id"):
            self._table = a["id"]
            self.rows[self._table] = []
        elif tag == "tbody" and self._table:
            self._in_body = True
        elif tag == "tr" and self._in_body and self._table:
            self.rows[self._table].append([])
        elif tag == "td" and self._in_body and self._table:
            self._cell = []
        elif tag == "th" and self._table and a.get("aria-sort"):
            self.sorted_by[self._table] = (a["data-col"], a["aria-sort"])

    def handle_endtag(self, tag):
        if tag == "table":
            self._table, self._in_body = None, False
        elif tag == "td" and self._cell is not None and self._table:
            self.rows[self._table][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(page: str) -> _Tables:
    p = _Tables()
    p.feed(page)
    return p


def chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=True)


def test_page_is_self_contained(scanned):  # noqa: F811
    page = to_html(scanned)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    refs = re.findall(r'\b(?:src|href)="([^"]*)"', page)
    assert refs and all(r.startswith("data:image/png;base64,") for r in refs)
    assert "default-src 'none'" in page  # the browser may not fetch anything
    for r in refs:
        assert base64.b64decode(r.split(",", 1)[1]).startswith(PNG)
    t = parse(page)
    both = "exact (prompt exact 1.00, target exact 1.00)"
    assert [row[:4] for row in t.rows["findings"]] == [
        ["e0", "t0", "pair", both], ["e1", "t1", "pair", both], ["e2", "t2", "pair", both], ["e3", "t3", "prompt", "exact"]]
    assert t.rows["summary"][-1] == ["any", "", "4", "40.0", "4 (40.0%)", "–"]
    assert t.rows["subsets"] == [["alpha", "6", "4", "66.67", "3", "1"], ["beta", "4", "0", "0.0", "0", "0"]]
    assert '<option value="pair">pair (3)</option><option value="prompt">prompt (1)</option>' in page


def test_user_text_is_escaped(tmp_path):
    r = _near_result()
    f = r.findings[1]
    evil = dataclasses.replace(f, eval_snippet="<script>alert(1)</script> `x` **y**")
    page = to_html(type(r)(**{**r.__dict__, "findings": (r.findings[0], evil)}), charts={})
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; `x` **y**" in page


@needs_browser
def test_browser_renders_and_sorts_the_findings(tmp_path):
    path = tmp_path / "report.html"
    write_html(_near_result(), path)
    url = path.resolve().as_uri()
    plain = parse(chromium("--dump-dom", url, tmp=tmp_path).stdout)
    assert [row[0] for row in plain.rows["findings"]] == ["e0", "e1", "e2", "e3", "e4"]
    assert plain.rows["scores"][-1] == ["threshold", "0.60", "0.50"]
    assert "findings" not in plain.sorted_by

    by_score = parse(chromium("--dump-dom", url + "#sort=findings:score:asc", tmp=tmp_path).stdout)
    assert [(row[0], row[4]) for row in by_score.rows["findings"]] == [
        ("e3", "0.55"), ("e1", "0.62"), ("e2", "0.91"), ("e0", "1.00"), ("e4", "1.00")]
    assert by_score.sorted_by["findings"] == ("score", "ascending")

    by_kind = parse(chromium("--dump-dom", url + "#sort=findings:kind:desc", tmp=tmp_path).stdout)
    assert [(row[0], row[2]) for row in by_kind.rows["findings"]] == [
        ("e3", "target"), ("e4", "target"), ("e1", "prompt"), ("e2", "prompt"), ("e0", "pair")]
    assert by_kind.sorted_by["findings"] == ("kind", "descending")


@needs_browser
def test_browser_screenshot(tmp_path):
    path = tmp_path / "report.html"
    write_html(_near_result(), path)
    shot = tmp_path / "shot.png"
    chromium(f"--screenshot={shot}", "--window-size=1280,2000", path.resolve().as_uri(), tmp=tmp_path)
    data = shot.read_bytes()
    assert data.startswith(PNG)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 2000)
