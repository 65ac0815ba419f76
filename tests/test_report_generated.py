"""The committed reports/ and datasets_cards/ are what scripts/make_reports.py makes now.

The generator is rerun with the levels and timestamp of the committed reports, so the only
way to pass is to regenerate after changing anything that shows in a report or card.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import sys
from pathlib import Path

from huggingface_hub import DatasetCard, DatasetCardData

from .conftest import REPO

SUBDIRS = ("reports", "datasets_cards")


def _generator():
    spec = importlib.util.spec_from_file_location("make_reports", REPO / "scripts" / "make_reports.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for sub in SUBDIRS for p in sorted((root / sub).rglob("*")) if p.is_file()}


def _png_size(data: bytes) -> tuple[int, int] | None:
    if not data.startswith(b"\x89PNG\r\n\x1a\n") or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _comparable(name: str, data: bytes) -> object:
    """The file as compared: PNGs (also those embedded in the HTML) by their size, the rest byte for byte."""
    if name.endswith(".png"):
        return _png_size(data)
    if name.endswith(".html"):
        return re.sub(rb"data:image/png;base64,([A-Za-z0-9+/=]+)",
                      lambda m: b"png%r" % (_png_size(base64.b64decode(m.group(1))),), data)
    return data


def test_committed_reports_and_cards_are_fresh(tmp_path):
    gen = _generator()
    first = json.loads((REPO / "reports" / gen.CASES[0].name / "report.json").read_text())
    gen.generate(tmp_path, tuple(first["levels"]), first["created_at"])
    fresh, committed = _files(tmp_path), _files(REPO)
    assert sorted(committed) == sorted(fresh), "files differ; run: python scripts/make_reports.py --levels " + ",".join(first["levels"])
    # PNG bytes follow the matplotlib/FreeType build, so a chart only has to be a PNG of the
    # same size; the numbers it draws are in the Markdown next to it, which is compared exactly.
    stale = sorted(name for name in fresh if _comparable(name, fresh[name]) != _comparable(name, committed[name]))
    assert not stale, (f"stale: {stale}; run: python scripts/make_reports.py --levels {','.join(first['levels'])} "
                       f"--created-at {first['created_at']}  (or drop --created-at for a new timestamp)")


def test_generated_cards_load_and_say_what_leaked():
    gen = _generator()
    for case in gen.CASES:
        card = DatasetCard.load(REPO / "datasets_cards" / case.name / "README.md")
        assert isinstance(card.data, DatasetCardData)
        meta = card.data.to_dict()["leakcheck"]
        report = json.loads((REPO / "reports" / case.name / "report.json").read_text())
        assert meta["contaminated"]["eval"]["count"] == report["summary"]["contaminated"]["count"]
        assert meta["report"] == f"../../reports/{case.name}/report.md"
        assert all(f["sha256"] and len(f["sha256"]) == 64 for side in ("eval", "train") for f in meta["compared"][side]["files"])
        assert "## Train/eval overlap" in card.text


def test_collabllm_case_is_35_of_100_pairs():
    report = json.loads((REPO / "reports" / "collabllm_medium" / "report.json").read_text())
    s = report["summary"]
    assert s["eval_records"] == 100 and s["contaminated"] == {"count": 35, "percent": 35.0}
    assert s["by_kind"]["pair"]["count"] == 35
    assert (REPO / "reports" / "collabllm_medium" / "conda.csv").read_text().splitlines()[1].split(";")[6] == "35.0"
