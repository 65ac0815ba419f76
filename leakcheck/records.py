"""The one record model every reader and format ends at."""

from __future__ import annotations

from typing import NamedTuple


class Record(NamedTuple):
    """One row of a dataset, reduced to what leakage detection compares.

    ``prompt`` and ``target`` are canonical text (see :mod:`leakcheck.canon`); ``target`` is
    ``None`` for data without a reward target. ``group`` is a key such as a conversation id:
    two records with the same group on both sides of a split are leakage even when their
    texts differ. A named tuple, not a dataclass: one is built per train row, and tuples
    are the cheapest immutable objects Python makes.

    >>> Record(id="7", row=7, prompt="What is 2+2?", target="4").id
    '7'
    """

    id: str
    row: int
    prompt: str
    target: str | None = None
    group: str | None = None
    subset: str | None = None
