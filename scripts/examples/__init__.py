"""Generators of the bundled example datasets in leakcheck/data/, one module per example.

Each module has ``make(out)``, which writes its folder under ``out``; its words and templates
are data in ``vocab/``. Everything drawn comes from one seed, and every file is written the
same way each run (parquet without timestamps or statistics), so regenerating gives
byte-identical files. This package holds what the generators share: the seeded RNG, the
word-level text helpers, the placing of planted rows, and the atomic writers.
"""

from __future__ import annotations

import io
import json
import random
import re
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from leakcheck.report._atomic import write_atomic

T = TypeVar("T")

SEED = 20250611
VOCAB = Path(__file__).with_name("vocab")

#: One chat message, as verl stores ``prompt``.
MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])


def seeded(offset: int) -> random.Random:
    """The RNG of one stream of choices: each example (and each id stream) has its own offset.

    >>> seeded(1).random() == seeded(1).random() != seeded(2).random()
    True
    """
    return random.Random(SEED + offset)


def vocab(name: str) -> dict[str, Any]:
    """The vocabulary file ``vocab/<name>.toml``."""
    with (VOCAB / f"{name}.toml").open("rb") as fh:
        return tomllib.load(fh)


def toks(text: str) -> list[str]:
    """Lower-case word tokens.

    >>> toks("Don't stop: 2 more!")
    ["don't", 'stop', '2', 'more']
    """
    return re.findall(r"[a-z0-9']+", text.lower())


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """The set of ``n``-token windows.

    >>> sorted(ngrams(["a", "b", "c"], 2))
    [('a', 'b'), ('b', 'c')]
    """
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def jaccard(a: set[Any], b: set[Any]) -> float:
    """|a & b| / |a | b| (0 for two empty sets).

    >>> jaccard({1, 2}, {2, 3})
    0.3333333333333333
    """
    u = a | b
    return len(a & b) / len(u) if u else 0.0


def cap(s: str) -> str:
    """``s`` with an upper-case first letter.

    >>> cap("a dog")
    'A dog'
    """
    return s[:1].upper() + s[1:]


def scatter(rng: random.Random, planted: Sequence[T], n_rows: int) -> dict[int, T]:
    """Seeded rows for the planted records: ``{row: record}``, rows in random order of records.

    >>> sorted(scatter(seeded(0), "ab", 10).values())
    ['a', 'b']
    """
    rows = sorted(rng.sample(range(n_rows), len(planted)))
    shuffled = list(planted)
    rng.shuffle(shuffled)
    return dict(zip(rows, shuffled))


def interleave(placed: dict[int, T], rest: Iterable[T], n_rows: int) -> list[T]:
    """``n_rows`` rows: ``placed[row]`` where given, else the next of ``rest``.

    >>> interleave({1: "x"}, "ab", 3)
    ['a', 'x', 'b']
    """
    it: Iterator[T] = iter(rest)
    return [placed[row] if row in placed else next(it) for row in range(n_rows)]


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text with ``\\n`` line ends, atomically (creating the folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))


def write_json(path: Path, obj: object) -> None:
    """Write ``obj`` as indented JSON and a final newline."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, rows: Iterable[object]) -> None:
    """Write one JSON document a line."""
    write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def write_parquet(path: Path, columns: dict[str, list[Any]], schema: pa.Schema) -> None:
    """Write a table of ``columns`` with fixed options, so the bytes are the same each run."""
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pydict(columns, schema=schema), buf, compression="zstd", compression_level=9,
                   use_dictionary=True, write_statistics=False, row_group_size=1 << 20)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, buf.getvalue())
