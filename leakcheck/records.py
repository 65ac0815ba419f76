"""The one record model every reader and format ends at."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Record:
    """One row of a dataset, reduced to what leakage detection compares.

    ``prompt`` and ``target`` are canonical text (see :mod:`leakcheck.canon`); ``target`` is
    ``None`` for data without a reward target. ``group`` is a key such as a conversation id:
    two records with the same group on both sides of a split are leakage even when their
    texts differ.

    >>> Record(id="7", row=7, prompt="What is 2+2?", target="4").id
    '7'
    """

    id: str
    row: int
    prompt: str
    target: str | None = None
    group: str | None = None
    subset: str | None = None
