"""Edge cases of the renderers: hostile data, odd cards, broken JSON reports, unicode, size, determinism."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from huggingface_hub import DatasetCard

from leakcheck.cli import main
from leakcheck.config import Policy
from leakcheck.report import content, plots
from leakcheck.report.card import END, START, replace_section, section, update_card
from leakcheck.report.conda import to_conda
from leakcheck.report.html import to_html, write_html
from leakcheck.report.json import dumps, write_json
from leakcheck.report.load import load_report
from leakcheck.report.markdown import to_markdown, write_markdown
from leakcheck.report.terminal import render
from leakcheck.result import ChanceMatch, EvalDuplicate, Finding, InputInfo, ScanResult

from .test_report_html import parse

EVIL = "<script>alert(1)</script></table></td>\"'&amp; `x` **y** | a\\|b\r\nz\u2028w"
UNI = "\ud800 lone, \udfff, RTL \u202eעברית\u202c, emoji 😀👩‍👩‍👧, \x1b[2J"
PARAMS = {"levels": {"exact": {"method": "sha256"}, "near": {"method": "minhash", "threshold": 0.6}},
          "short_target_chars": 20, "max_target_hits": 10}


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def make(text: str = "plain", n: int = 2, path: str = "eval.jsonl", subsets: dict | None = None, created_at: str = "2026-01-01T00:00:00+00:00",
         extra: int = 0) -> ScanResult:
    """``n`` findings whose ids, snippets, path and subset hold ``text``; ``extra`` near misses, chance matches and duplicates too."""
    sub = next(iter(subsets)) if subsets else None
    ev = InputInfo(path, (path,), "gsm8k", {"prompt": "question", "target": "answer"}, max(n, extra, 1) * 2, max(n, extra, 1) * 2,
                   subsets=subsets or {})
    tr = InputInfo("train.jsonl", ("train.jsonl",), "gsm8k", {"prompt": "question"}, max(n, 1) * 3, max(n, 1) * 3)
    fs = tuple(Finding(f"{text}{i}", f"t{text}{i}", "pair", "exact", 1.0, i, i, "question", "question", f"{text} e{i}", f"{text} t{i}",
                       subset=sub) for i in range(n))
    nm = tuple(Finding(f"n{text}{i}", f"t{i}", "prompt", "near", 0.55, i, i, "question", "question", text, text) for i in range(extra))
    ch = tuple(ChanceMatch(f"c{text}{i}", i, text, "short", "exact", 3, (text,)) for i in range(extra))
    du = tuple(EvalDuplicate("prompt", "exact", (f"d{text}{i}", f"x{i}"), (i, i + 1), text) for i in range(extra))
    return ScanResult(tr, ev, ("exact", "near"), PARAMS, fs, ch, du, nm, notes=(f"note {text}",), created_at=created_at)


# --- HTML -------------------------------------------------------------------------------------------


def test_html_escapes_hostile_data_in_every_table():
    r = make(EVIL, extra=2, path=EVIL, subsets={EVIL: 4, "other": 2})
    page = to_html(r, charts={})
    assert "<script>alert" not in page and "</table></td>" not in page
    t = parse(page)
    # Tables keep their shape: the data did not close a cell, a row or the table.
    assert len(t.rows["findings"]) == 2 and all(len(row) == 7 for row in t.rows["findings"])
    assert t.rows["findings"][0][0] == content.visible(EVIL + "0")
    assert len(t.rows["near-misses"]) == len(t.rows["chance"]) == len(t.rows["duplicates"]) == 2
    assert t.rows["subsets"][0][0] == content.visible(EVIL)


def test_html_escapes_the_kind_attribute():
    r = make()
    odd = dataclasses.replace(r.findings[0], kind='x" onmouseover="alert(1)')
    page = to_html(dataclasses.replace(r, findings=(odd,)), charts={})
    tags = re.findall(r"<(?:tr|option) [^>]*>", page)
    assert '<tr data-i="0" class="kind-x&#34; onmouseover=&#34;alert(1)" data-kind="x&#34; onmouseover=&#34;alert(1)">' in tags
    assert '<option value="x&#34; onmouseover=&#34;alert(1)">' in tags
    assert not any('" onmouseover="' in tag for tag in tags)


def test_code_spans_hold_any_text_in_both_renderers():
    """A path with backticks, bold markers and a tag is one code span: never bold, never a tag, in HTML and Markdown."""
    page = to_html(make(path="a`**b**`<i>"), charts={})
    assert '<li><strong>eval</strong>: <code>a`**b**`&lt;i&gt;</code> — format <code>gsm8k</code>' in page
    assert "- **eval**: ``a`**b**`<i>`` — format `gsm8k`" in to_markdown(make(path="a`**b**`<i>"))
    assert "<strong>b</strong>" not in page


# --- Markdown ---------------------------------------------------------------------------------------


def test_markdown_cells_stay_one_row_and_are_not_markup():
    r = make(EVIL, extra=1, subsets={EVIL: 4, "other": 2})
    md = to_markdown(r)
    assert "\r" not in md and "\u2028" not in md
    assert "<script>" not in md and "**y**" not in md
    tables, current = [], []
    for line in md.split("\n") + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    assert len(tables) >= 5
    for rows in tables:
        # cells are split at pipes not preceded by a backslash (cmark-gfm, markdown-it): every row as wide as the header
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert len(widths) == 1, rows
    findings = [ln for ln in md.split("\n") if "`pair`" in ln and "exact" in ln and "1.00" in ln]
    assert len(findings) == 2 and len(re.findall(r"(?<!\\)\|", findings[0])) == 8


def test_markdown_long_cells_are_clipped():
    r = make("x" * 5000, n=1)
    line = next(ln for ln in to_markdown(r).split("\n") if ln.startswith("| xxx"))
    assert len(line) < 2000 and "…" in line


def test_card_data_cannot_break_tables_code_spans_or_markers(tmp_path):
    ids = "`a`b|c <!-- leakcheck:end -->\nnext"
    r = make(ids, n=2, path="ev|al`x.jsonl")
    s = section(r, Policy(), "../my reports/leaks (1).md", {"eval": [{"path": "ev|al`x.jsonl", "sha256": None}], "train": []})
    lines = s.split("\n")
    assert lines[0] == START and lines[-1] == END and lines.count(START) == 1 and lines.count(END) == 1
    assert "| eval | ``ev\\|al`x.jsonl`` |" in s
    assert "- eval: ``ev|al`x.jsonl`` (file" in s
    assert "2 ids: `` `a`b|c <!-- leakcheck:end --> next0 ``, " in s
    assert "full report: [leaks (1).md](../my%20reports/leaks%20%281%29.md)." in s
    card = tmp_path / "README.md"
    update_card(card, r)
    first = card.read_text()
    update_card(card, r)
    assert card.read_text() == first


# --- Card ---------------------------------------------------------------------------------------------

CARD = "---\nlicense: mit\ntags:\n- math\n---\n\n# Farm math\n\nText.\n"


def _report(tmp_path: Path, r: ScanResult | None = None) -> Path:
    p = tmp_path / "leaks.json"
    write_json(r or make(), p)
    return p


def test_card_with_crlf_keeps_crlf_and_is_idempotent(tmp_path):
    card = tmp_path / "README.md"
    card.write_bytes(CARD.replace("\n", "\r\n").encode())
    rep = _report(tmp_path)
    assert run("card", str(card), "--report", str(rep)).exit_code == 0
    data = card.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and data.startswith(b"---\r\nlicense: mit\r\ntags:\r\n- math\r\nleakcheck:\r\n")
    assert b"\r\n# Farm math\r\n\r\nText.\r\n\r\n" + START.encode() in data
    assert run("card", str(card), "--report", str(rep)).exit_code == 0
    assert card.read_bytes() == data
    assert DatasetCard.load(card).data.license == "mit"


def test_card_with_byte_order_mark_keeps_its_header(tmp_path):
    card = tmp_path / "README.md"
    card.write_text("\ufeff" + CARD, encoding="utf-8")
    assert run("card", str(card), "--report", str(_report(tmp_path))).exit_code == 0
    text = card.read_text(encoding="utf-8")
    assert text.startswith("---\nlicense: mit\ntags:\n- math\nleakcheck:\n") and text.count("---\n") == 2
    data = DatasetCard.load(card).data.to_dict()
    assert data["license"] == "mit" and "leakcheck" in data


def test_card_mentioning_the_markers_in_its_text_keeps_it(tmp_path):
    card = tmp_path / "README.md"
    prose = f"# T\n\nleakcheck writes between `{START}` and `{END}`.\n"
    card.write_text(prose)
    rep = _report(tmp_path)
    assert run("card", str(card), "--report", str(rep)).exit_code == 0
    text = card.read_text()
    assert prose in text and text.endswith(END + "\n")
    assert run("card", str(card), "--report", str(rep)).exit_code == 0
    assert card.read_text() == text


@pytest.mark.parametrize(
    "body, message",
    [
        (f"{START}\nmine\n", "has a start marker of the leakcheck section but not the other"),
        (f"mine\n{END}\n", "has a end marker of the leakcheck section but not the other"),
        (f"{END}\nmine\n{START}\n", f"the card's {END} line comes before its {START} line"),
        (f"{START}\na\n{END}\n{START}\nb\n{END}\n", "the card has 2 start and 2 end markers"),
    ],
)
def test_hand_edited_markers_are_one_line_errors_and_nothing_is_lost(tmp_path, body, message):
    card = tmp_path / "README.md"
    card.write_text(CARD + body)
    res = run("card", str(card), "--report", str(_report(tmp_path)))
    assert res.exit_code == 2 and message in res.output and res.output.count("\n") == 1, res.output
    assert card.read_text() == CARD + body


def test_card_in_a_folder_or_named_directly_is_the_same(tmp_path):
    rep = _report(tmp_path)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(CARD)
    assert run("card", str(tmp_path / "a"), "--report", str(rep)).exit_code == 0
    assert run("card", str(tmp_path / "b" / "README.md"), "--report", str(rep)).exit_code == 0
    assert (tmp_path / "a" / "README.md").read_text() == (tmp_path / "b" / "README.md").read_text()


def test_card_path_naming_another_file_is_a_one_line_error(tmp_path):
    (tmp_path / "README").write_text("# not md\n")
    res = run("card", str(tmp_path / "README"), "--report", str(_report(tmp_path)))
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "a dataset card is a .md file" in res.output, res.output
    assert (tmp_path / "README").read_text() == "# not md\n"


def test_card_without_header_then_with_one_is_idempotent():
    meta = {"version": "0"}
    sect = f"{START}\nx\n{END}"
    once = replace_section("# Plain\n", sect, meta)
    assert once.startswith("---\nleakcheck:\n  version: '0'\n---\n\n# Plain\n\n" + START)
    assert replace_section(once, sect, meta) == once


# --- CONDA --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ['"quoted', "a\u2028b", "a\x85b", "a\rb", "a;b"])
def test_conda_rejects_what_the_file_cannot_hold(tmp_path, value):
    res = run("conda", str(_report(tmp_path)), "--dataset", value, "--source", "s")
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "which the CONDA file cannot hold" in res.output


def test_conda_subset_names_from_data(tmp_path):
    r = make(subsets={"a;b": 2, "c": 2})
    with pytest.raises(Exception, match="Subset 'a;b' contains"):
        to_conda(r, "d", "s", by_subset=True)
    r = make(subsets={"\ud800x": 2, "c": 2})
    res = run("conda", str(_report(tmp_path, r)), "--dataset", "d", "--source", "s", "--by-subset", "--no-header")
    assert res.exit_code == 0 and "\nd;\\ud800x;s;corpus;;;100.0;data-based;;\n" in res.output, res.output


# --- leakcheck report on bad JSON -----------------------------------------------------------------------


def _mutated(tmp_path: Path, change) -> Path:
    d = json.loads(dumps(make()))
    change(d)
    p = tmp_path / "r.json"
    p.write_text(json.dumps(d))
    return p


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(schema_version=3), "report schema version 3 is not 2; render it with the leakcheck version that wrote it, or upgrade"),
        (lambda d: d.update(schema_version=1), "report schema version 1 is not 2; rescan with this leakcheck"),
        (lambda d: d.update(schema_version="2"), "report schema version '2' is not 2"),
        (lambda d: d["findings"][0].update(kind='"><script>'), "malformed leakcheck JSON report (ValueError: findings[0].kind"),
        (lambda d: d["findings"][0].update(score="1.0"), "findings[0].score must be a number"),
        (lambda d: d["parameters"].pop("levels"), "parameters.levels must map levels"),
        (lambda d: d["eval"].update(records="20"), "eval must hold path, files, format, fields, records and rows"),
        (lambda d: d.update(levels=["bogus"]), "levels must be a list of"),
        (lambda d: d.update(findings={}), "findings must be a list"),
        (lambda d: d.update(notes="abc"), "notes must be a list of strings"),
        (lambda d: d["gate"].update(policy=["bogus:pair"]), "malformed leakcheck JSON report (UsageError: --fail-on: unknown item 'bogus:pair'"),
    ],
)
def test_report_on_a_bad_report_is_one_line_exit_2(tmp_path, change, message):
    p = _mutated(tmp_path, change)
    res = run("report", str(p), "--markdown", str(tmp_path / "o.md"), "--html", str(tmp_path / "o.html"))
    assert res.exit_code == 2 and res.output.startswith(f"leakcheck: error: {p}: "), res.output
    assert message in res.output and res.output.count("\n") == 1 and "internal error" not in res.output, res.output
    assert not (tmp_path / "o.md").exists() and not (tmp_path / "o.html").exists()


@pytest.mark.parametrize(
    "data, message",
    [
        (lambda good: good[: len(good) // 2], "it ends too early, as if cut short"),
        (lambda good: "", "empty file"),
        (lambda good: "[" * 100_000, "nested too deeply"),
    ],
)
def test_report_on_truncated_or_odd_json(tmp_path, data, message):
    p = tmp_path / "r.json"
    p.write_text(data(dumps(make())))
    res = run("report", str(p), "--markdown", str(tmp_path / "o.md"))
    assert res.exit_code == 2 and message in res.output and res.output.count("\n") == 1, res.output


def test_committed_reports_pass_the_checks():
    for p in sorted(Path(__file__).resolve().parents[1].glob("reports/*/report.json")):
        load_report(p)


# --- unicode, empty, large, deterministic -------------------------------------------------------------


def _render_all(r: ScanResult, out: Path) -> dict[str, bytes]:
    out.mkdir()
    write_json(r, out / "r.json")
    write_markdown(r, out / "r.md")
    write_html(r, out / "r.html")
    update_card(out / "card", r)
    (out / "conda.csv").write_text(to_conda(r, "d", "s"))
    (out / "term.txt").write_text(render(r, 1), encoding="utf-8")
    return {p.name: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_unicode_in_every_renderer(tmp_path):
    r = make(UNI, extra=2, path=f"data/{UNI}.jsonl", subsets={UNI: 4, "$\\frac$": 2})
    files = _render_all(r, tmp_path / "out")
    for name, data in files.items():
        if not name.endswith((".png", ".csv")):
            text = data.decode("utf-8")  # valid UTF-8: lone surrogates written as their escapes
            assert "😀" in text and "עברית" in text, name
    assert "\x1b" not in files["term.txt"].decode() and "\x1b" not in files["r.md"].decode()
    back, _ = load_report(tmp_path / "out" / "r.json")
    assert back == r  # the escapes are JSON escapes: the lone surrogates come back
    assert {"r-by_kind.png", "r-by_subset.png"} <= set(files)
    assert DatasetCard.load(tmp_path / "out" / "card" / "README.md").data.to_dict()["leakcheck"]["eval_ids"][0] == f"{UNI}0"


def test_empty_result_in_every_renderer(tmp_path):
    info = InputInfo("e.jsonl", (), "jsonl", {}, 0, 0)
    r = ScanResult(info, info, ("exact",), {"levels": {"exact": {"method": "sha256"}}, "short_target_chars": 20, "max_target_hits": 10}, ())
    files = _render_all(r, tmp_path / "out")
    assert "## Leaks\n\nNone." in files["r.md"].decode() and "format `jsonl`; 0 records" in files["r.md"].decode()
    assert "<h2>Leaks</h2>\n<p>None.</p>" in files["r.html"].decode()
    assert "### Contaminated eval ids\n\nNone." in files["README.md"].decode()
    assert files["conda.csv"].decode().splitlines()[1] == "d;;s;corpus;;;0.0;data-based;;"
    assert files["term.txt"].decode().splitlines()[-1] == "LEAKAGE FOUND"  # render() prints the code it is given
    assert not [n for n in files if n.endswith(".png")]


def test_ten_thousand_findings_are_capped_with_a_notice():
    from leakcheck.report import html as html_mod, markdown as md_mod

    r = make(n=10_000, extra=6_000)
    page = to_html(r, charts={}, json_report=True)
    t = parse(page)
    assert len(t.rows["findings"]) == html_mod.MAX_ROWS
    assert f"{10_000 - html_mod.MAX_ROWS} more findings are in the JSON report" in page
    assert len(t.rows["near-misses"]) == html_mod.MAX_ROWS and "1000 more near misses are in the JSON report" in page
    assert "1000 more chance target matches" in page and "1000 more duplicate groups" in page
    md = to_markdown(r, json_report=True)
    for what, total in (("findings", 10_000), ("near misses", 6_000), ("chance target matches", 6_000), ("duplicate groups", 6_000)):
        assert f"{total - md_mod.MAX_ROWS} more {what} are in the JSON report (this table lists the first {md_mod.MAX_ROWS})." in md
    # without a JSON report beside them, the reports do not send the reader to one
    alone = to_markdown(r)
    assert "in the JSON report" not in alone and "in the JSON report" not in to_html(r, charts={})
    assert (f"{10_000 - md_mod.MAX_ROWS} more findings are not listed here (this table lists the first {md_mod.MAX_ROWS}); "
            "the JSON report (scan --json) lists them all.") in alone


def test_many_subsets_do_not_break_the_chart():
    r = make(subsets={f"s{i:05d}": 1 for i in range(3000)})
    assert "by_subset" not in plots.charts(r)
    assert "| s02999 | 1 | 0 | 0.0 |" in to_markdown(r)


def test_output_is_deterministic_apart_from_created_at(tmp_path):
    a = _render_all(make(EVIL + UNI, extra=3, subsets={"a": 3, "b": 2}), tmp_path / "a")
    b = _render_all(make(EVIL + UNI, extra=3, subsets={"a": 3, "b": 2}, created_at="2030-12-31T23:59:59+00:00"), tmp_path / "b")
    assert sorted(a) == sorted(b)
    for name in a:
        if name.endswith(".png"):
            assert a[name] == b[name], name
        else:
            assert a[name].replace(b"2026-01-01T00:00:00+00:00", b"T") == b[name].replace(b"2030-12-31T23:59:59+00:00", b"T"), name


def test_scan_with_lone_surrogates_and_escapes_keeps_its_exit_code(tmp_path):
    rows = [{"id": "e\ud800\x1b[31m", "question": "What is \ud800 the \x1b[2J answer to \u202e life, the universe and everything?",
             "answer": "Forty-two is the answer to everything here."}]
    for name in ("t.jsonl", "e.jsonl"):  # JSON escapes: a lone surrogate cannot be written as UTF-8
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = run("scan", str(tmp_path / "t.jsonl"), str(tmp_path / "e.jsonl"), "--levels", "exact", "--json", str(tmp_path / "r.json"))
    assert res.exit_code == 1, res.output
    assert "eval e\\ud800\\x1b[31m ~ train" in res.output and "\x1b" not in res.output and "\u202e" not in res.output
