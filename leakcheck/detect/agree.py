"""Do two reward targets agree? The other field as evidence for a fuzzy prompt match.

Two prompts that differ in one content word ("perimeter of a square" / "of a rectangle",
"sum of the negative numbers" / "of the positive numbers") are as close as a copy with one
word re-typed; their reward targets tell them apart. :func:`compare` answers ``agree``,
``disagree`` or ``unknown``, with the reason, by the first rule that applies to both texts:

1. **Final answers**: GSM8K's ``#### 18`` (a number or formula on a line of its own, not a
   Markdown heading), the last ``\\boxed{...}``, or a trailing "the answer is 18", compared after light LaTeX/number canonicalisation (``1,000`` = ``1000``,
   ``\\dfrac12`` = ``\\frac{1}{2}`` = ``0.5``). Different answers: ``disagree``.
2. **Code** (a fenced block, a Python program, or lines that end like C/Java/JS): Python
   is compared as its syntax tree without docstrings, ``pass``, unreachable statements
   after ``return``/``raise``/``break``/``continue``, with ``range(0, n)`` as ``range(n)``
   and every name the program binds (arguments, variables, nested functions) renamed in
   order of appearance. Names it does not bind (``len``, ``sum``, modules) are kept, so
   ``len(x)`` and ``sum(x)`` differ, and so are the names of its top-level functions and
   classes (case-folded): tests call them. Other languages are compared as tokens without comments: equal
   is ``agree``; equal up to a consistent renaming of identifiers is ``unknown`` (a renamed
   copy, or another function called: no parser to tell); anything else ``disagree``.
3. **Short answers** (both under 40 characters after :func:`~leakcheck.canon.normalize`):
   equal texts agree; numbers and formulas (a digit, ``$`` or ``\\``) are compared as
   answers, numbers as numbers. ``unknown`` for other short texts that differ ("Paris" /
   "Ok.": a reply is not an answer), when one contains the other ("18" / "18 dollars") and
   for option letters (``B`` / ``C``: the options may be listed in another order). A final
   answer is compared with a short text only when that text is a number or formula.
4. **Rubric banks** (a criterion and its points per line, as :func:`~leakcheck.canon.rubric_text`
   writes them; checked first): the same criteria with other points ``disagree`` (another
   reward), the same criteria and points agree, other criteria are ``unknown``.
5. Anything else (prose, one side code and the other prose): ``unknown``.

``disagree`` is meant to be *clear*: the same program re-typed with other names and layout
agrees; two programs that differ in one operator do not.

>>> compare("... so 6 + 12 = 18.\\n#### 18", "#### 18").verdict
'agree'
>>> compare("... 8 * 4 = 32\\n#### 32", "... 8 * 5 = 40\\n#### 40").why
'final answers differ: 32 vs 40'
>>> compare("def neg(a):\\n    return a < 0", "def NEG(x):  # negative?\\n    return x < 0").verdict
'agree'
>>> compare("def neg(a):\\n    return a < 0", "def neg(a):\\n    return a > 0").why
'code differs (compared without comments, docstrings, layout and the names it binds)'
>>> targets_agree("B", "C"), targets_agree("Paris", "The capital of France is Paris.")
('unknown', 'unknown')
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Literal

import xxhash

from ..canon import normalize
from .grams import tokens

Verdict = Literal["agree", "disagree", "unknown"]
SHORT_CHARS = 40


@dataclass(frozen=True, slots=True)
class Agreement:
    """A verdict on two reward targets and the one-line reason for it (shown in reports)."""

    verdict: Verdict
    why: str


def targets_agree(eval_target: "str | TargetView | None", train_target: str | None) -> Verdict:
    """``"agree"``, ``"disagree"`` or ``"unknown"``; see :func:`compare` for the reason."""
    return compare(eval_target, train_target).verdict


@dataclass(frozen=True, slots=True)
class _Text:
    """One answer-like text as keys: its canonical form, its token run and every sub-run."""

    canon: int  # key of canonical_answer(text)
    tokens: int  # key of its token sequence
    spans: tuple[int, ...]  # keys of its contiguous token sub-sequences (short texts only)
    like: bool  # a number or formula
    letter: bool  # an option letter
    shown: str | None  # the text, for messages; None in a saved index


@dataclass(frozen=True, slots=True)
class TargetView:
    """What the rules need from one reward target, as keys and flags: no text but ``shown``.

    An eval index keeps one per eval record (:func:`view`), without the ``shown`` parts, so
    a saved index compares targets without holding any.
    """

    answer: _Text | None = None  # an explicit final answer
    code: tuple[str, int, int] | None = None  # ("py"|"lex", key of the canonical program, key of its shape)
    short: _Text | None = None  # the whole target, when short
    rubric: tuple[int, int] | None = None  # a rubric bank: key of its (criterion, points) lines, key of its criteria

    def without_text(self) -> "TargetView":
        drop = lambda t: None if t is None else replace(t, shown=None)  # noqa: E731
        return replace(self, answer=drop(self.answer), short=drop(self.short))

    def to_json(self) -> list:
        enc = lambda t: None if t is None else [t.canon, t.tokens, list(t.spans), t.like, t.letter]  # noqa: E731
        return [enc(self.answer), None if self.code is None else list(self.code), enc(self.short),
                None if self.rubric is None else list(self.rubric)]

    @classmethod
    def from_json(cls, d: list) -> "TargetView":
        dec = lambda x: None if x is None else _Text(int(x[0]), int(x[1]), tuple(map(int, x[2])), bool(x[3]), bool(x[4]), None)  # noqa: E731
        rubric = d[3] if len(d) > 3 else None
        return cls(dec(d[0]), None if d[1] is None else (str(d[1][0]), int(d[1][1]), int(d[1][2])), dec(d[2]),
                   None if rubric is None else (int(rubric[0]), int(rubric[1])))


def compare(eval_target: "str | TargetView | None", train_target: str | None) -> Agreement:
    """Compare two reward targets by the first rule that applies to both (module docstring).

    ``eval_target`` may be its :class:`TargetView` (an eval index holds no text).
    """
    if eval_target is None or train_target is None:
        return Agreement("unknown", "a target is missing")
    a = eval_target if isinstance(eval_target, TargetView) else view(eval_target)
    b = view(train_target)
    if a.rubric is not None and b.rubric is not None:
        if a.rubric[0] == b.rubric[0]:
            return Agreement("agree", "same rubric (criteria and points)")
        if a.rubric[1] == b.rubric[1]:
            return Agreement("disagree", "same rubric criteria with other points")
        return Agreement("unknown", "rubrics with other criteria")
    if a.answer is not None and b.answer is not None:
        return _same_answer(a.answer, b.answer, "final answers")
    if a.code is not None and b.code is not None:
        return _same_code(a.code, b.code)
    if a.short is not None and b.short is not None:
        if a.short.tokens == b.short.tokens or (a.short.like and b.short.like):
            return _same_answer(a.short, b.short, "short answers", texts=True)
        return Agreement("unknown", f"short texts differ but are not both answers ({_pair(a.short, b.short, ' / ')})")
    for x, y in ((a.answer, b.short), (a.short, b.answer)):
        if x is not None and y is not None and x.like and y.like:
            return _same_answer(x, y, "final answers", texts=True)
    return Agreement("unknown", "no final answer or code on both sides")


def _answer_like(s: str) -> bool:
    """A number or a formula: a short text that can only be an answer ("Ok." or "Sure!" is a reply)."""
    return any(c.isdigit() for c in s) or "\\" in s or "$" in s


def _key(s: str) -> int:
    return xxhash.xxh3_64_intdigest(s.encode("utf-8", "surrogatepass"))


def _text(s: str, spans: bool) -> _Text:
    toks = tokens(s)
    runs = {_key("\x1f".join(toks[i:j])) for i in range(len(toks)) for j in range(i + 1, len(toks) + 1)} if spans else set()
    canon = canonical_answer(s)
    return _Text(_key(repr(canon)), _key("\x1f".join(toks)), tuple(sorted(runs)), _answer_like(s),
                 isinstance(canon, str) and bool(_LETTER.match(canon)), s)


_RUBRIC_LINE = re.compile(r"^(.*\S)\s*\[(-?\d+(?:\.\d+)?)\]$")


def _rubric(text: str) -> tuple[int, int] | None:
    """A rubric bank as :func:`~leakcheck.canon.rubric_text` writes it: a criterion and its points per line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    parsed = [_RUBRIC_LINE.match(ln) for ln in lines]
    if len(lines) < 2 or not all(parsed):
        return None
    pairs = sorted((normalize(m[1]), m[2]) for m in parsed if m)
    return _key(repr(pairs)), _key(repr(sorted(c for c, _ in pairs)))


@lru_cache(maxsize=4096)
def view(text: str) -> TargetView:
    """What the rules look at in one target (cached: a train target may be compared often)."""
    rubric = _rubric(text)
    if rubric is not None:
        return TargetView(rubric=rubric)
    answer = final_answer(text)
    code = _code_of(text) if answer is None else None
    norm = normalize(text)
    short = norm.rstrip(".") if len(norm) < SHORT_CHARS and code is None and answer is None else None
    return TargetView(None if answer is None else _text(answer, spans=len(answer) < SHORT_CHARS), code,
                      None if short is None else _text(short, spans=True))


# -- final answers ----------------------------------------------------------------------------

_HASHES = re.compile(r"^\s*####\s*(.+?)\s*$", re.M)
_ANSWER_IS = re.compile(r"(?:final answer|the answer)\s*(?:is|:)\s*\$?\s*(-?[\d.,/]*\d)", re.I)


def final_answer(text: str) -> str | None:
    """The explicit final answer of a solution, or ``None``.

    >>> final_answer("2 + 3 = 5 apples. So the answer is $\\\\boxed{\\\\dfrac{5}{2}}$.")
    '\\\\dfrac{5}{2}'
    >>> final_answer("Half of 10 is 5.\\n#### 5"), final_answer("It is 5.")
    ('5', None)
    """
    found = [a for a in _HASHES.findall(text) if _formula(a)]
    if found:
        return found[-1]
    boxed = _last_boxed(text)
    if boxed is not None:
        return boxed
    found = _ANSWER_IS.findall(text[-300:])
    return found[-1] if found else None


def _formula(answer: str) -> bool:
    """A number or formula, not a Markdown heading: ``#### 18`` is GSM8K's answer, ``#### Step 2`` a title."""
    return _answer_like(answer) and not re.search(r"(?<!\\)\b[A-Za-z]{3,}", answer)


def _last_boxed(text: str) -> str | None:
    i = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    return _boxed_at(text, i) if i >= 0 else None


def _boxed_at(text: str, i: int) -> str | None:
    j = text.find("{", i)
    if j < 0 or text[i:j].strip("\\boxedfbox ") != "":
        return None
    depth = 0
    for k in range(j, min(len(text), j + 2000)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return text[j + 1 : k].strip()
    return None


_BOXED = re.compile(r"\\(?:boxed|fbox)\b")


def answers_in_text(eval_target: "str | TargetView | None", text: str | None) -> Agreement | None:
    """The eval's final answer against every final answer written in a train text.

    A document of worked problems that holds a *sibling* of the eval problem holds the
    sibling's answer, not the eval's: ``disagree`` when the text states final answers
    (``####`` lines, ``\\boxed{}``) and none is the eval's; ``None`` otherwise (no answers
    to compare, or the eval's is among them: a document may hold many problems).

    >>> answers_in_text("...\\n#### 5", "Problem 1: ...\\n#### 2\\nProblem 2: ... $\\\\boxed{40}$").why
    "final answers in the train text (2, 40) do not include the eval's (5)"
    >>> answers_in_text("...\\n#### 5", "Problem 1: ...\\n#### 5\\nProblem 2: ... $\\\\boxed{40}$") is None
    True
    """
    if eval_target is None or not text:
        return None
    mine = (eval_target if isinstance(eval_target, TargetView) else view(eval_target)).answer
    if mine is None:
        return None
    theirs = [a for a in _HASHES.findall(text) if _formula(a)] + [b for m in _BOXED.finditer(text) if (b := _boxed_at(text, m.start())) is not None]
    if not theirs:
        return None
    if any(_key(repr(canonical_answer(a))) == mine.canon for a in theirs):
        return None
    shown = ", ".join(dict.fromkeys(_show(a, 12) for a in theirs[:5]))
    eval_s = f" ({_show(mine.shown, 12)})" if mine.shown is not None else ""
    return Agreement("disagree", f"final answers in the train text ({shown}) do not include the eval's{eval_s}")


_LATEX_DROP = re.compile(r"\\left|\\right|\\displaystyle|\\[!,;: ]|\$|\\\$|\^\{?\\circ\}?|\\%|%|\s+")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\frac(\d)(\d)")
_FRAC = re.compile(r"^(-?)\\frac\{(-?\d+)\}\{(-?\d+)\}$")
_NUMBER = re.compile(r"^-?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$")


def canonical_answer(answer: str) -> str | Fraction:
    """A final answer as a number when it is one, else as LaTeX without layout.

    >>> canonical_answer("1,000"), canonical_answer("\\\\dfrac12"), canonical_answer("$x^2 + 1$")
    (Fraction(1000, 1), Fraction(1, 2), 'x^2+1')
    """
    t = normalize(answer)
    t = _TEXT.sub(r"\1", t)
    t = t.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    t = _LATEX_DROP.sub("", t)
    t = _FRAC_SHORT.sub(r"\\frac{\1}{\2}", t).rstrip(".")
    m = _FRAC.match(t)
    if m and int(m[3]) != 0:
        return Fraction(int(m[2]), int(m[3])) * (-1 if m[1] else 1)
    if _NUMBER.match(t) and any(c.isdigit() for c in t):
        return Fraction(t.replace(",", ""))
    if re.fullmatch(r"-?\d+/\d+", t) and not t.endswith("/0"):
        return Fraction(t)
    return t


_LETTER = re.compile(r"^\(?([a-j])\)?$")


def _same_answer(a: _Text, b: _Text, what: str, texts: bool = False) -> Agreement:
    """Compare two answers; ``texts``: one is a whole short target, which may say more than the answer."""
    if a.canon == b.canon:
        return Agreement("agree", f"same {what[:-1]}: {_show(b.shown or '')}")
    if a.letter and b.letter:
        return Agreement("unknown", f"option letters differ ({_pair(a, b)}); the options may be in another order")
    if texts and (a.tokens in b.spans or b.tokens in a.spans):
        return Agreement("unknown", f"one short answer contains the other ({_pair(a, b, ' / ')})")
    return Agreement("disagree", f"{what} differ: {_pair(a, b)}")


def _pair(a: _Text, b: _Text, sep: str = " vs ") -> str:
    """``eval vs train`` for messages, or ``train's ...`` when the eval side has no text (an index)."""
    if a.shown is None:
        return f"train's {_show(b.shown or '')}"
    return f"{_show(a.shown)}{sep}{_show(b.shown or '')}"


def _show(s: str, n: int = 30) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


# -- code ---------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_CODE_END = (";", "{", "}", ")", ":")


def _code_of(text: str) -> tuple[str, int, int] | None:
    """Kind, key of the canonical program and key of its shape (identifiers numbered), or ``None``: not code."""
    fenced = _FENCE.findall(text)
    src = "\n".join(fenced) if fenced else text
    tree = _parse_python(src)
    if tree is not None and (fenced or _is_program(tree)):
        return ("py", _key(_canonical_python(tree)), 0)
    lines = [ln.strip() for ln in src.splitlines() if ln.strip()]
    if fenced or (len(lines) >= 2 and sum(ln.endswith(_CODE_END) for ln in lines) * 2 >= len(lines)):
        toks = tokens(_strip_comments(src))
        return ("lex", _key("\x1f".join(toks)), _key("\x1f".join(_shape(toks))))
    return None


def _parse_python(src: str) -> ast.Module | None:
    src = src.replace("\r\n", "\n").replace("\t", "    ")
    for attempt in (src, textwrap.dedent(src), "def _body():\n" + textwrap.indent(textwrap.dedent(src), "    ")):
        try:
            with warnings.catch_warnings():  # "invalid escape sequence" in the data is not ours to report
                warnings.simplefilter("ignore")
                return ast.parse(attempt)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _is_program(tree: ast.Module) -> bool:
    """More than one bare expression: ``18`` and ``Paris`` parse as Python too."""
    return any(not isinstance(s, ast.Expr) for s in ast.walk(tree) if isinstance(s, ast.stmt))


_TERMINAL = (ast.Return, ast.Raise, ast.Break, ast.Continue)


class _Canon(ast.NodeTransformer):
    """Drops docstrings, ``pass`` and dead code; renames bound names in order of appearance.

    The names of top-level functions and classes are kept (case-folded, like every token
    of the fuzzy levels): tests call them by name, and ``square_perimeter`` with the body
    of ``rombus_perimeter`` answers another task.
    """

    def __init__(self, bound: set[str], kept: dict[str, str]):
        self.bound = bound
        self.kept = kept
        self.names: dict[str, str] = {}

    def _name(self, n: str) -> str:
        if n not in self.bound:
            return self.kept.get(n, n)
        return self.names.setdefault(n, f"_v{len(self.names)}")

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                setattr(node, field, _live(stmts, docstring=field == "body" and isinstance(
                    node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))))
        super().generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg, node.annotation = self._name(node.arg), None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name, node.returns = self._name(node.name), None
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._name(node.name)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if (isinstance(f, ast.Name) and f.id == "range" and len(node.args) == 2 and not node.keywords
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0):
            node.args = node.args[1:]
        return node


def _live(stmts: list[ast.stmt], docstring: bool) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        if docstring and i == 0 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            continue
        if isinstance(s, ast.Pass):
            continue
        out.append(s)
        if isinstance(s, _TERMINAL):
            break
    return out or [ast.Pass()]


def _interface(tree: ast.Module) -> set[str]:
    """Functions and classes defined at the top (and their methods): the names tests call."""
    body = tree.body
    if len(body) == 1 and isinstance(body[0], ast.FunctionDef) and body[0].name == "_body":
        return set()
    out: set[str] = set()
    for s in body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(s.name)
        if isinstance(s, ast.ClassDef):
            out.update(m.name for m in s.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return out


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the program itself binds: what a re-typed copy may rename without changing it."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound - {"_body"}


def _canonical_python(tree: ast.Module) -> str:
    keep = _interface(tree)
    tree = _Canon(_bound_names(tree) - keep, {n: n.lower() for n in keep}).visit(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


_COMMENT = re.compile(r"(?<![:\"'])//[^\n]*|/\*.*?\*/|^\s*#(?!include|define|import|pragma)[^\n]*", re.M | re.S)


def _strip_comments(src: str) -> str:
    return _COMMENT.sub(" ", src)


def _same_code(a: tuple[str, int, int], b: tuple[str, int, int]) -> Agreement:
    if a[0] != b[0]:
        return Agreement("unknown", "one program parses as Python, the other does not")
    if a[0] == "py":
        if a[1] == b[1]:
            return Agreement("agree", "same code (compared without comments, docstrings, layout and the names it binds)")
        return Agreement("disagree", "code differs (compared without comments, docstrings, layout and the names it binds)")
    if a[1] == b[1]:
        return Agreement("agree", "same code (compared as tokens, without comments and layout)")
    if a[2] == b[2]:
        return Agreement("unknown", "code equal up to renamed identifiers (not parsed: renamed variables or other functions)")
    return Agreement("disagree", "code differs (compared as tokens, without comments and layout)")


_IDENT = re.compile(r"[^\W\d]\w*$")


def _shape(toks: list[str]) -> list[str]:
    """Tokens with every identifier replaced by the order of its first appearance.

    Two token lists have the same shape exactly when one is the other with identifiers
    renamed consistently (a bijection).
    """
    seen: dict[str, str] = {}
    return [seen.setdefault(t, f"\x00{len(seen)}") if _IDENT.match(t) else t for t in toks]
