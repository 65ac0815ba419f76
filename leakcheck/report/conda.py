"""Export the findings as rows of the CONDA data-contamination database (``contamination_report.csv``).

The database is ``;``-separated with the columns in :data:`COLUMNS`. A split column holds
the percentage of that split's records found in the contaminated source, and is empty for
splits that were not checked. leakcheck compares data with data, so the approach is
``data-based``.

>>> from leakcheck.result import Finding, InputInfo, ScanResult
>>> info = InputInfo("test.jsonl", ("test.jsonl",), "gsm8k", {}, 4, 4)
>>> f = Finding("1", "9", "pair", "exact", 1.0, 1, 9, "question", "question", "q", "q")
>>> r = ScanResult(info, info, ("exact",), {"levels": {}}, (f,))
>>> print(to_conda(r, "openai/gsm8k", "my-org/sft-mix", subset="main", reference="https://example.org/report"), end="")
Evaluation Dataset;Subset;Contaminated Source;Model or corpus;Train Split;Development Split;Test Split;Approach;Reference;PR
openai/gsm8k;main;my-org/sft-mix;corpus;;;25.0;data-based;https://example.org/report;
"""

from __future__ import annotations

import dataclasses

import os
import re

from ..errors import UsageError
from ..result import ScanResult
from . import content
from ._atomic import write_atomic

COLUMNS = ("Evaluation Dataset", "Subset", "Contaminated Source", "Model or corpus", "Train Split",
           "Development Split", "Test Split", "Approach", "Reference", "PR")
SPLITS = {"train": 4, "dev": 5, "development": 5, "validation": 5, "test": 6}


#: The separator, the CSV quote character and anything a reader may take for a line break.
_FORBIDDEN = re.compile(r'[;"\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]')


def _value(name: str, v: str) -> str:
    if _FORBIDDEN.search(v):
        raise UsageError(f"conda: {name} {v!r} contains ';', '\"' or a line break, which the CONDA file cannot hold")
    # A lone surrogate (a "\ud800" escape in the data, or a non-UTF-8 command-line argument) cannot
    # be printed or written as UTF-8; it is kept as the escape it stands for.
    return v.encode("utf-8", "backslashreplace").decode("utf-8")


def conda_rows(result: ScanResult, evaluation_dataset: str, contaminated_source: str, split: str = "test",
               subset: str = "", by_subset: bool = False, source_type: str = "corpus", reference: str = "",
               pr: str = "") -> list[list[str]]:
    """One row for the whole eval side, or with ``by_subset`` one per eval subset (``data_source``)."""
    if split not in SPLITS:
        raise UsageError(f"conda: --split must be one of {', '.join(SPLITS)}, not {split!r}")
    if source_type not in ("corpus", "model"):
        raise UsageError(f"conda: the contaminated source is a corpus or a model, not {source_type!r}")
    if not evaluation_dataset or not contaminated_source:
        raise UsageError("conda: name the evaluation dataset and the contaminated source (e.g. their Hub ids)")
    result = dataclasses.replace(result, accepted=(), baseline=None)  # accepted in CI is still contamination to the database
    if by_subset:
        subs = content.subset_rows(result)
        if not subs:
            raise UsageError("conda: --by-subset needs eval records with a data_source/subset field; this report has none")
        parts = [(name, content.pct(c, n)) for name, n, c, _ in subs]
    else:
        s = result.summary()
        parts = [(subset, s["contaminated"]["percent"])]
    rows = []
    for sub, percent in parts:
        row = [evaluation_dataset, sub, contaminated_source, source_type, "", "", "", "data-based", reference, pr]
        row[SPLITS[split]] = f"{percent}"
        rows.append([_value(COLUMNS[i], v) for i, v in enumerate(row)])
    return rows


def to_conda(result: ScanResult, evaluation_dataset: str, contaminated_source: str, header: bool = True, **kwargs: str | bool) -> str:
    """The rows as ``;``-separated text, with the database's header line first when ``header``."""
    rows = conda_rows(result, evaluation_dataset, contaminated_source, **kwargs)  # type: ignore[arg-type]
    lines = ([";".join(COLUMNS)] if header else []) + [";".join(r) for r in rows]
    return "\n".join(lines) + "\n"


def write_conda(text: str, path: str | os.PathLike) -> None:
    write_atomic(path, text)
