"""The "Train/eval overlap" section of a Hugging Face dataset card, and its ``leakcheck`` metadata.

The section sits between two markers; running again replaces it and nothing else. The
structured numbers go into the YAML header under one ``leakcheck`` key, serialized through
huggingface_hub's :class:`~huggingface_hub.DatasetCardData`; every other line of the
header stays byte for byte as it was. A missing card is created from huggingface_hub's
dataset-card template.

>>> text = "---\\nlicense: mit  # keep me\\n---\\n\\n# My data\\n"
>>> new = replace_section(text, "<!-- leakcheck:start -->\\n## Train/eval overlap\\n<!-- leakcheck:end -->", {"version": "0.1.0"})
>>> print(new)
---
license: mit  # keep me
leakcheck:
  version: 0.1.0
---
<BLANKLINE>
# My data
<BLANKLINE>
<!-- leakcheck:start -->
## Train/eval overlap
<!-- leakcheck:end -->
<BLANKLINE>
>>> replace_section(new, "<!-- leakcheck:start -->\\n## Train/eval overlap\\n<!-- leakcheck:end -->", {"version": "0.1.0"}) == new
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..config import Policy
from ..errors import InputError, OutputError, UsageError
from ..result import InputInfo, ScanResult
from . import content
from ._atomic import write_atomic
from .markdown import table

if TYPE_CHECKING:
    from ..impact import Impact

START = "<!-- leakcheck:start -->"
END = "<!-- leakcheck:end -->"
KEY = "leakcheck"
#: Eval ids listed in the card text; the metadata and the report list them all.
MAX_IDS = 200


def card_file(path: str | os.PathLike) -> str:
    """The card's file: ``path`` itself when it names a ``.md`` file, else ``README.md`` inside it.

    >>> card_file("cards/README.md"), card_file("cards/gsm8k")
    ('cards/README.md', 'cards/gsm8k/README.md')
    """
    p = os.fspath(path)
    if os.path.isdir(p):
        return os.path.join(p, "README.md")
    if p.lower().endswith(".md"):
        return p
    if os.path.exists(p):
        raise UsageError(f"{p}: a dataset card is a .md file (README.md) or a folder holding one; pass that instead")
    return os.path.join(p, "README.md")


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _find(path: str, root: str | os.PathLike | None, card_dir: str | None, test: Callable[[str], bool] = os.path.isfile) -> str | None:
    """Where a data path of the report is now: absolute as it is; relative under ``root`` when given,
    else beside the card (a scan run in the dataset repo), else in the current folder."""
    if os.path.isabs(path):
        candidates = [path]
    elif root is not None:
        candidates = [os.path.join(os.fspath(root), path)]
    else:
        candidates = ([os.path.join(card_dir, path)] if card_dir else []) + [path]
    return next((c for c in candidates if test(c)), None)


def _as_card_names(path: str, found: str | None, card_dir: str | None) -> str:
    """``path`` as the dataset repo names it (relative to the card, ``/``-separated) when ``found`` is inside the
    card's folder, else as the report has it."""
    if found is None or card_dir is None:
        return path
    for a, b in ((os.path.abspath(found), os.path.abspath(card_dir)), (os.path.realpath(found), os.path.realpath(card_dir))):
        rel = os.path.relpath(a, b)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return rel.replace(os.sep, "/")
    return path


def fingerprints(info: InputInfo, root: str | os.PathLike | None = None, card_dir: str | None = None) -> list[dict[str, str | None]]:
    """sha256 of each data file of one side; ``None`` for a file that is not there (any more).

    A relative path is looked up under ``root`` when given; else in ``card_dir`` (the card's
    folder), then in the current folder. A file inside the card's folder is named relative to it.
    """
    out = []
    for f in info.files:
        full = _find(f, root, card_dir)
        out.append({"path": _as_card_names(f, full, card_dir), "sha256": sha256_file(full) if full else None})
    return out


def _as_seen_by_card(info: InputInfo, root: str | os.PathLike | None, card_dir: str) -> InputInfo:
    """``info`` with its path named relative to the card when it lies inside the card's folder."""
    folder, sep, split = info.path.rpartition("::") if "::" in info.path else (info.path, "", "")
    shown = _as_card_names(folder, _find(folder, root, card_dir, os.path.exists), card_dir)
    return dataclasses.replace(info, path=shown + sep + split)


def metadata(result: ScanResult, policy: Policy, report_link: str | None, prints: dict[str, list[dict]]) -> dict[str, Any]:
    """The structured results stored under ``leakcheck`` in the card's YAML header."""
    s = result.summary()
    tr = content.train_side(result)
    ntrain = result.train.records

    def side(info: InputInfo, name: str) -> dict[str, Any]:
        d: dict[str, Any] = {"path": info.path, "format": info.format, "records": info.records, "files": prints[name]}
        if info.subsets:
            d["subsets"] = dict(sorted(info.subsets.items()))
        return d

    ids = content.contaminated_ids(result)
    meta: dict[str, Any] = {
        "version": __version__,
        "scanned_at": result.created_at,
        "report": report_link,
        "compared": {"eval": side(result.eval, "eval"), "train": side(result.train, "train")},
        "method": {
            "levels": list(result.levels),
            "parameters": {lv: {k: v for k, v in p.items() if k == "method" or k in content.SETTINGS}
                           for lv, p in result.parameters["levels"].items()},
            "short_target_chars": result.parameters["short_target_chars"],
            "max_target_hits": result.parameters["max_target_hits"],
            "fail_on": policy.describe(),
        },
        "contaminated": {
            "eval": {
                "count": s["contaminated"]["count"],
                "percent": s["contaminated"]["percent"],
                "by_kind": {k: {"count": v["count"], "percent": v["percent"]} for k, v in s["by_kind"].items()},
            },
            "train": {
                "count": tr["any"],
                "percent": content.pct(tr["any"], ntrain),
                "by_kind": {k: {"count": n, "percent": content.pct(n, ntrain)} for k, n in tr.items() if k != "any"},
            },
        },
        "chance_target_matches": s["chance_target_matches"]["count"],
        "eval_ids": ids,
    }
    subs = content.subset_rows(result)
    if subs:
        meta["contaminated"]["eval"]["by_subset"] = {
            name: {"count": c, "records": n, "percent": content.pct(c, n)} for name, n, c, _ in subs
        }
    return meta


def _kinds_sentence(result: ScanResult) -> str:
    s = result.summary()
    parts = [f"{v['count']} `{k}` ({content.KIND_TEXT[k]})" for k, v in s["by_kind"].items()]
    return "By kind of match: " + "; ".join(parts) + "." if parts else ""


def section(result: ScanResult, policy: Policy, report_link: str | None, prints: dict[str, list[dict]], impact: Impact | None = None) -> str:
    """The card section, markers included; with ``impact``, an "Impact of decontamination" subsection at its end."""
    s = result.summary()
    c = s["contaminated"]
    out = [
        START,
        "<!-- Written by leakcheck; `leakcheck card` replaces everything between these two markers. -->",
        "## Train/eval overlap",
        "",
        f"**{c['count']} of {s['eval_records']} eval records ({c['percent']}%) also occur in the train split.** "
        + _kinds_sentence(result),
        "",
        f"Measured with leakcheck {__version__} on {result.created_at}"
        + (f"; full report: [{content.md_text(os.path.basename(report_link))}]({_link(report_link)})." if report_link else "."),
        "",
        "### What was compared",
        "",
        "Every eval record was looked up in the train split, field by field: the prompt, the reward target "
        "(reference answer, document or rubric) and both together (`pair`).",
        "",
    ]
    rows = []
    for name, info in (("eval", result.eval), ("train", result.train)):
        rows.append((name, content.md_code(info.path), content.md_code(info.format), content.fields_text(info), info.records))
    out += table(content.Table(("split", "path", "format", "fields", "records"), tuple(rows), numeric=frozenset({4})))
    out += ["", "Data fingerprints (sha256 of each file):", ""]
    for name in ("eval", "train"):
        for fp in prints[name]:
            digest = f"`{fp['sha256']}`" if fp["sha256"] else "(file not found when the card was written)"
            out.append(f"- {name}: {content.md_code(fp['path'])} {digest}")
    out += ["", "### Method and thresholds", ""] + [f"- {line}" for line in content.method_lines(result, policy)]
    out += ["", "### Contaminated records per split and kind", ""]
    out += table(content.split_table(result))
    out += ["", "By level (eval records; one record can match at several levels):", ""]
    out += table(content.kind_level_table(result))
    subsets = content.subset_table(result)
    if subsets is not None:
        out += ["", "By eval subset (`data_source`):", ""] + table(subsets)
    ids = content.contaminated_ids(result)
    out += ["", "### Contaminated eval ids", ""]
    if not ids:
        out.append("None.")
    else:
        shown = ", ".join(content.md_code(content.clip(i)) for i in ids[:MAX_IDS])
        more = f", and {len(ids) - MAX_IDS} more (all are in the `leakcheck.eval_ids` metadata and the report)" if len(ids) > MAX_IDS else ""
        out.append(f"{len(ids)} ids: {shown}{more}.")
    if impact is not None:
        from .impact import markdown_lines

        out += [""] + markdown_lines(impact, level=3)[:-1]
    out.append(END)
    return "\n".join(out)


def _link(target: str) -> str:
    """A link destination that stays one: spaces, parentheses and angle brackets percent-encoded.

    >>> _link("../my reports/leaks (1).md"), _link("https://example.org/r.html?a=1#x")
    ('../my%20reports/leaks%20%281%29.md', 'https://example.org/r.html?a=1#x')
    """
    return urllib.parse.quote(content.one_line(target), safe="/:?#[]@!$&'*+,;=%~")


#: The markers count only on a line of their own, so a card may mention them in its text.
_START_LINE = re.compile(rf"^[ \t]*{re.escape(START)}[ \t]*$", re.M)
_END_LINE = re.compile(rf"^[ \t]*{re.escape(END)}[ \t]*$", re.M)

_HEADER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?(?:\n|\Z)", re.S | re.M)


def _yaml_block(meta: dict[str, Any]) -> str:
    from huggingface_hub import DatasetCardData

    return DatasetCardData(**{KEY: meta}).to_yaml()  # type: ignore[arg-type]  # extra keys are kept


def _replace_key(header: str, block: str) -> str:
    """Put ``block`` (a top-level ``leakcheck:`` mapping) in ``header`` where the old one was, or at its end."""
    lines = header.split("\n") if header else []
    start = next((i for i, ln in enumerate(lines) if re.match(rf"{KEY}\s*:", ln)), None)
    if start is None:
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines + block.split("\n"))
    end = start + 1
    while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
        end += 1
    # Blank lines that separated our block from the next key belong to that key.
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[:start] + block.split("\n") + lines[end:])


def replace_section(text: str, sect: str, meta: dict[str, Any]) -> str:
    """``text`` with its leakcheck section and ``leakcheck`` metadata replaced (or added).

    A card written with CRLF line endings keeps them. A byte order mark is dropped: before
    the ``---`` it hides the YAML header from huggingface_hub.
    """
    text = text.removeprefix("\ufeff")
    crlf = text.count("\r\n") > text.count("\n") - text.count("\r\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    m = _HEADER.match(text)
    if m:
        header, body = m.group(1), text[m.end():]
    else:
        header, body = "", ("\n" + text if text else "")
    header = _replace_key(header.rstrip("\n") if header.strip() else "", _yaml_block(meta))
    starts, ends = list(_START_LINE.finditer(body)), list(_END_LINE.finditer(body))
    if len(starts) == len(ends) == 1 and starts[0].start() < ends[0].start():
        body = body[:starts[0].start()] + sect + body[ends[0].end():]
    elif not starts and not ends:
        body = body.rstrip("\n") + "\n\n" + sect + "\n"
    elif len(starts) > 1 or len(ends) > 1:
        raise UsageError(f"the card has {len(starts)} start and {len(ends)} end markers of the leakcheck section; "
                         f"keep one {START} line and one {END} line around it")
    elif starts and ends:
        raise UsageError(f"the card's {END} line comes before its {START} line; put the start marker first")
    else:
        raise UsageError(f"the card has a {'start' if starts else 'end'} marker of the leakcheck section but not the other; "
                         f"remove the stray {START if starts else END} line or add the missing "
                         f"{END if starts else START} line")
    out = f"---\n{header}\n---\n{body}"
    return out.replace("\n", "\r\n") if crlf else out


def new_card(pretty_name: str, **template_kwargs: Any) -> str:
    """A card made from huggingface_hub's dataset-card template (needs Jinja2)."""
    from huggingface_hub import DatasetCard, DatasetCardData

    try:
        card = DatasetCard.from_template(DatasetCardData(pretty_name=pretty_name), **template_kwargs)
    except ImportError as exc:
        raise UsageError(f"creating a dataset card from the template needs Jinja2 ({exc}); pip install jinja2, "
                         "or pass an existing README.md") from None
    return card.content.rstrip("\n") + "\n"


def check_card(text: str, path: str = "README.md") -> None:
    """Fail unless huggingface_hub parses the card and its metadata into DatasetCardData."""
    from huggingface_hub import DatasetCard, DatasetCardData

    try:
        card = DatasetCard(text, ignore_metadata_errors=False)
    except Exception as exc:  # huggingface_hub raises ValueError or yaml errors
        why = " ".join(str(exc).split())
        raise InputError(path, None, f"not a valid dataset card ({type(exc).__name__}: {why})", "fix the YAML header") from None
    if not isinstance(card.data, DatasetCardData):
        raise InputError(path, None, "the card's metadata does not parse as DatasetCardData", "fix the YAML header")


def update_card(path: str | os.PathLike, result: ScanResult, policy: Policy | None = None, report_link: str | None = None,
                data_root: str | os.PathLike | None = None, pretty_name: str | None = None,
                template_kwargs: dict[str, Any] | None = None, impact: Impact | None = None) -> str:
    """Write (or rewrite) the Train/eval overlap section of the card at ``path``; returns the file written.

    ``path`` is a ``README.md`` or a folder holding one; a missing card is created from
    the template. ``report_link`` is put in the card as given (a URL or a path relative to
    the card). ``data_root`` is where the scan's relative data paths start (for the
    fingerprints); without it they are looked up beside the card, then in the current folder.
    Data inside the card's folder is named relative to the card, whatever the current folder.
    ``impact`` (from ``leakcheck impact --json``, computed on this report) adds its section and ``impact`` metadata.
    """
    if impact is not None and (impact.report_eval, impact.report_created_at) != (result.eval.path, result.created_at):
        raise UsageError(f"the impact file was computed on another report (eval {impact.report_eval}, scanned {impact.report_created_at}); "
                         "run leakcheck impact on this report again")
    policy = policy or result.policy
    # every count below is what this gate judged; a baseline or an allowlist accepts overlap for CI, and the card still states it
    result = dataclasses.replace(result, policy=policy, accepted=(), baseline=None)
    f = card_file(path)
    card_dir = os.path.dirname(os.path.abspath(f))
    if os.path.exists(f):
        try:
            with open(f, encoding="utf-8", newline="") as fh:
                text = fh.read()
        except UnicodeDecodeError:
            raise InputError(f, None, "not UTF-8 text", "a dataset card is a UTF-8 README.md") from None
        check_card(text, f)
    else:
        text = new_card(pretty_name or os.path.basename(card_dir), **(template_kwargs or {}))
    result = dataclasses.replace(result, eval=_as_seen_by_card(result.eval, data_root, card_dir),
                                 train=_as_seen_by_card(result.train, data_root, card_dir))
    prints = {"eval": fingerprints(result.eval, data_root, card_dir), "train": fingerprints(result.train, data_root, card_dir)}
    meta = metadata(result, policy, report_link, prints)
    if impact is not None:
        from .impact import card_metadata

        meta["impact"] = card_metadata(impact)
    new = replace_section(text, section(result, policy, report_link, prints, impact), meta)
    check_card(new, f)
    if not os.path.isdir(card_dir) and os.path.isdir(os.path.dirname(card_dir)):
        try:
            os.mkdir(card_dir)
        except OSError as exc:
            raise OutputError(card_dir, exc) from None
    write_atomic(f, new)
    return f
