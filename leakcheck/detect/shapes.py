"""What a rephrased program keeps for its tests when it changes its examples' values.

A rephraser renames a function, rewords its docstring and changes its examples' values
(``incr_list([1, 2, 3])`` becomes ``augment_values([4, 7, 9])``), but it keeps what its tests
need: the same number of examples, lists of the same lengths, the same kinds of values. A
translation to C writes ``{4, 7, 9}`` for ``[4, 7, 9]``. :func:`example_shapes` reads every
bracketed container of literals in a text (``[...]`` or ``{...}``, two elements or more, each
a number, string, boolean, null or such a container) as its shape, ``[I,I,I]`` here, and
:func:`shape_overlap` compares two texts' shapes as multisets. A program for a similar task
written apart from the eval item has other examples, or none.

>>> example_shapes("incr_list([1, 2, 3]) == [2, 3, 4]") == example_shapes("int a[] = {4, 7, 9}; /* gives {5, 8, 10} */")
True
>>> shape_overlap(example_shapes("f([1, 2], 'a')"), example_shapes("g([3, 4]) or g([5, 6])"))
0.5

Examples without lists keep their form too: ``modp(3, 5) -> 3``, ``modp(1101, 101) -> 2``
becomes ``modp_modified(4, 6) -> 4``, ``modp_modified(1102, 102) -> 4``: the same calls in
the same order, with arguments and results of the same kinds. :func:`example_sequence` keys
that order: every literal of the text's prose (its docstrings, comments and strings, where the
examples are), reduced to its kind, with the calls and brackets around them. Two texts with
the same key of :data:`MIN_SEQUENCE_LITERALS` literals or more write examples of the same form
in the same order (the level counts a key only when one eval record alone has it).

>>> example_sequence("modp(3, 5)\\n3\\nmodp(1101, 101)\\n2") == example_sequence("m(4, 6)\\n4\\nm(1102, 102)\\n4") != 0
True
"""

from __future__ import annotations

import re
from collections import Counter

import xxhash

#: A string, a number, a bracket, a comma, or a run of anything else (an identifier, an operator).
_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|-?\d+\.\d+|-?\d+|[\[\]{},]|[^\s\[\]{},"\'\d-]+|\S')
#: A container that opens on a literal: without one a text has no shape (most prose, most code).
_HINT = re.compile(r"[\[{]\s*(?:-?\d|['\"]|True\b|False\b|true\b|false\b|None\b|NULL\b|[\[{])")
_WORDS = {"True": "B", "False": "B", "true": "B", "false": "B", "None": "N", "NULL": "N"}
#: In a sequence of examples a boolean keeps its value (a result that is True stays True).
_SEQ_WORDS = {"True": "Y", "true": "Y", "False": "n", "false": "n", "None": "0", "NULL": "0"}
#: An example sequence needs this many literals to be a key (4 and 8 measured the same on HumanEval).
MIN_SEQUENCE_LITERALS = 6
#: A container needs this many elements to have a shape worth comparing (``[x]`` is everywhere).
MIN_ELEMENTS = 2


def _kind(token: str) -> str | None:
    """The literal kind of ``token`` (``I``, ``F``, ``S``, ``B``, ``N``), or None for anything else."""
    if token[0] in "\"'":
        return "S"
    if token[0].isdecimal() or (token[0] == "-" and len(token) > 1):
        return "F" if "." in token else "I"
    return _WORDS.get(token)


class _Open:
    """A container being read: its finished elements, the tokens of the current one, whether all are literals."""

    __slots__ = ("elements", "current", "literal")

    def __init__(self) -> None:
        self.elements: list[str] = []
        self.current: list[str] = []
        self.literal = True

    def close(self) -> str | None:
        if self.current:
            self.elements.append(self.current[0] if len(self.current) == 1 else "X")
        return "[" + ",".join(self.elements) + "]" if self.literal and "X" not in self.elements else None


def example_shapes(text: str) -> tuple[int, ...]:
    """Hashes of the shapes of the literal containers in ``text``, sorted (a multiset).

    >>> len(example_shapes("f([1, 2, 3], ['a', 'b']) -> [[1, 2], [3, 4]]"))
    5
    >>> example_shapes("xs[i] = {a, b}; f([x, 1])"), example_shapes("[5] and []")
    ((), ())
    """
    if not _HINT.search(text):
        return ()
    out: list[str] = []
    stack: list[_Open] = []
    for tok in _TOKEN.findall(text):
        if tok in "[{":
            stack.append(_Open())
        elif tok in "]}":
            if stack:
                _closed(stack, out)
        elif stack:
            _element_token(stack[-1], tok)
    return tuple(sorted(xxhash.xxh3_64_intdigest(s.encode()) for s in out))


def _closed(stack: list[_Open], out: list[str]) -> None:
    top = stack.pop()
    shape = top.close()
    if shape is not None and len(top.elements) >= MIN_ELEMENTS:
        out.append(shape)
    if stack:
        stack[-1].current.append(shape or "X")
        if shape is None:
            stack[-1].literal = False


def _element_token(top: _Open, tok: str) -> None:
    if tok == ",":
        if top.current:
            top.elements.append(top.current[0] if len(top.current) == 1 else "X")
            top.current = []
        else:
            top.literal = False
        return
    kind = _kind(tok)
    top.current.append(kind or "X")
    if kind is None:
        top.literal = False


def example_sequence(prose: str) -> int:
    """Key of the order of the literals' kinds in ``prose`` (0: fewer than :data:`MIN_SEQUENCE_LITERALS`).

    ``prose`` is what :func:`~.codeprose.prose_of` keeps of a program.

    >>> example_sequence("f('ab', 'c') == True, f('x', 'yz') == False, f('', 'q') == False") != 0
    True
    >>> example_sequence("f(1, 2) == 3") == 0
    True
    """
    out, n = [], 0
    for tok in _TOKEN.findall(prose):
        kind = _SEQ_WORDS.get(tok) or _kind(tok)
        if kind is not None:
            out.append(kind)
            n += 1
        elif tok in "[{" or tok in "]}":
            out.append("[" if tok in "[{" else "]")
        elif tok.endswith("("):
            out.append("(")
        elif tok.startswith(")"):
            out.append(")")
    return xxhash.xxh3_64_intdigest("".join(out).encode()) or 1 if n >= MIN_SEQUENCE_LITERALS else 0


def shape_overlap(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """Multiset Jaccard of two :func:`example_shapes` (0.0 when either has none)."""
    if not a or not b:
        return 0.0
    ca, cb = Counter(a), Counter(b)
    return sum((ca & cb).values()) / sum((ca | cb).values())
