"""Canonical text: what two records must share for their fields to count as the same.

* A chat is its user-turn contents, joined by newlines: no role names, no system prompt,
  so a bare ``question`` and the same question inside a chat compare equal.
* A rubric bank is its criteria *with their points*, sorted, without criteria tagged
  ``level:cluster`` (those are shared across many prompts by design and would make unrelated
  records match). The points are the label as much as the words are: the same criteria
  weighted otherwise reward other answers.
* :func:`normalize` folds what does not change meaning: Unicode compatibility forms,
  typographic quotes and dashes, case in prose (not in LaTeX math), whitespace runs and
  invisible characters. Digits and stop words are kept.

>>> canonical_text([{"role": "system", "content": "Be nice."}, {"role": "user", "content": "Hi"}])
'Hi'
>>> normalize("  Costs\u200b ７２ DOLLARS ")
'costs 72 dollars'
>>> print(normalize("Let $\\\\Theta$ be the ORDER of $|A|$, \\u201cSAY\\u201d\\u2014n\\u00a0= 2"))
let $\\Theta$ be the order of $|A|$, "say"-n = 2
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, Callable

from .errors import RecordError

USER_ROLES = frozenset({"user", "human", "prompter"})
ASSISTANT_ROLES = frozenset({"assistant", "gpt", "model", "bot", "chatgpt"})

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters that render
# as nothing, such as the BOM, zero-width spaces and joiners, soft hyphen, bidi controls,
# variation selectors, Hangul fillers and tag characters.
_INVISIBLE_CHARS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")

# Typographic forms that copy-paste and word processors swap for ASCII ones (NFKC keeps them):
# curly quotes, primes, the modifier-letter apostrophe, hyphens, dashes and the minus sign.
# NFKC turns the ellipsis into "...", fullwidth forms into ASCII, no-break and thin spaces
# into spaces.
_TYPOGRAPHIC: dict[str, str] = (
    dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u02bc", "'")
    | dict.fromkeys("\u201c\u201d\u201e\u201f", '"')
    | dict.fromkeys("\u2010\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b", "-")
)
# The characters NFKC turns into typographic ones (U+2033 double prime, U+207B superscript
# minus, ...; test_canon checks every code point), folded at once, so that a single pass
# before NFKC removes the invisibles and folds the typographic forms.
_TYPOGRAPHIC |= {
    c: "".join(_TYPOGRAPHIC.get(ch, ch) for ch in unicodedata.normalize("NFKC", c))
    for c in "\u0149\u2011\u2033\u2034\u2036\u2037\u2057\u207b\u208b\ufe31\ufe32\ufe58"
}
_BEFORE_NFKC = re.compile(f"[{_INVISIBLE_CHARS}{''.join(_TYPOGRAPHIC)}]")


def _before_nfkc(t: str) -> str:
    """Invisible characters removed, typographic forms folded."""
    # one str.replace per distinct character found (a text has one or two of them): sub() with
    # a callback per match or str.translate() cost several times more
    m = _BEFORE_NFKC.search(t)
    while m:
        ch = m.group()
        t = t.replace(ch, _TYPOGRAPHIC.get(ch, ""))
        m = _BEFORE_NFKC.search(t, m.start())
    return t


# LaTeX whose letters keep their case: math ($$..$$, $..$, \(..\), \[..\], \begin{env}..\end{env})
# and command names outside math (\Theta). An inline $ opens only before a non-space and
# closes only after one and not before a digit (Pandoc's rule), so "$5 and $10" is not math;
# nor before "<<", GSM8K's calculator annotation of an amount ("2*5=$<<2*5=10>>10").
_LATEX = re.compile(
    r"\$(?:\$.+?\$\$|(?<![\\$]\$)(?=[^\s$])(?:[^$\\]++|\\.)*+(?<=\S)\$(?![0-9]|<<))"
    r"|\\(?:\(.*?\\\)|\[.*?\\\]|begin\{([A-Za-z*]+)\}.*?\\end\{\1\}|[A-Za-z]+)",
    re.S,
)
_MATH_CLOSER = re.compile(r"\$(?:\$|(?<=\S\$)(?![0-9]|<<))")  # starts with a literal: a fast scan
# Characters NFKC turns into "$" or a backslash (small and fullwidth forms)
_LATEX_LOOKALIKE = re.compile("[\ufe68\ufe69\uff04\uff3c]")
_VISIBLE_ASCII = re.compile("[!-~]")


def _strip_invisible(t: str) -> str:
    return _INVISIBLE.sub("", t) if _INVISIBLE.search(t) else t


def _nfkc(t: str) -> str:
    return t if unicodedata.is_normalized("NFKC", t) else unicodedata.normalize("NFKC", t)


def _may_close_math(t: str) -> bool:
    """Whether ``t`` has what LaTeX math or a command needs: a backslash, ``$$``, or a ``$``
    that can close inline math (after a non-space, not before a digit or "<<"). Money has none."""
    return "\\" in t or _MATH_CLOSER.search(t) is not None


def _fold_outside_latex(t: str, fold: Callable[[str], str]) -> str:
    """``fold`` applied to ``t`` except to its LaTeX math and command names."""
    parts: list[str] = []
    pos = 0
    for m in _LATEX.finditer(t):
        parts += (fold(t[pos : m.start()]), m.group())
        pos = m.end()
    parts.append(fold(t[pos:]))
    return "".join(parts)


def may_have_latex(text: str) -> bool:
    r"""Whether :func:`normalize` may find LaTeX in ``text`` (and so keep the case of part of it).

    False guarantees that it folds ``text`` character by character.

    >>> may_have_latex("costs $5 or $.50"), may_have_latex("$x$"), may_have_latex("\\frac"), may_have_latex("\uff04x\uff04")
    (False, True, True, True)
    """
    if "$" not in text and "\\" not in text:
        return not text.isascii() and _LATEX_LOOKALIKE.search(text) is not None
    # NFKC can change what surrounds a "$" (it composes "<" with U+0338), so any "$" counts
    return not text.isascii() or _may_close_math(text)


def plain_ascii(text: str) -> bool:
    """True when ``normalize(text)`` is just ``text`` lower-cased with whitespace runs collapsed.

    That is ASCII text in which no LaTeX can be found. Tokenizers that fold case
    themselves may do so only for such texts; others must go through :func:`normalize`.

    >>> plain_ascii("It costs $5."), plain_ascii("What is $|A|$?"), plain_ascii("caf\u00e9")
    (True, False, False)
    """
    return text.isascii() and not _may_close_math(text)


def normalize(text: str) -> str:
    r"""NFKC, typographic forms to ASCII, case folding outside LaTeX math and commands,
    whitespace runs collapsed, invisible characters removed.

    Idempotent: ``normalize(normalize(t)) == normalize(t)``.

    >>> print(normalize("$\\Theta(N)$ vs \\Theta(N)"), normalize("Don\u2019t \u2013 STOP\u2026"))
    $\Theta(N)$ vs \Theta(n) don't - stop...
    """
    if text.isascii():  # O(1) in CPython; ASCII has nothing for NFKC, the typographic table or the invisibles
        # most text has no "$" or backslash; money ("$5") has no math
        t = _fold_outside_latex(text, str.lower) if ("$" in text or "\\" in text) and _may_close_math(text) else text.lower()
        return " ".join(t.split())
    t = _nfkc(_before_nfkc(text))
    t = _fold_outside_latex(t, str.casefold) if _may_close_math(t) else t.casefold()
    # NFKC again: case folding can leave forms it composes. Neither adds an invisible or a
    # typographic character (test_canon checks every code point).
    # str.split() splits on exactly the characters the regex \s matches, 4x faster
    return " ".join(_nfkc(t).split())


def normalize_no_latex(text: str) -> str:
    """:func:`normalize` for a text that :func:`may_have_latex` clears: the same, without looking for LaTeX.

    >>> normalize_no_latex("It costs $5, SIR.") == normalize("It costs $5, SIR.")
    True
    """
    if text.isascii():
        return " ".join(text.lower().split())
    return " ".join(_nfkc(_nfkc(_before_nfkc(text)).casefold()).split())


def is_blank(text: str) -> bool:
    """No visible character: empty, whitespace and invisible characters only.

    >>> is_blank(" \u200b\ufeff "), is_blank("x")
    (True, False)
    """
    if not text or text.isspace():
        return True
    # a visible ASCII character is usually near the start; only the rest need the invisibles stripped
    return not text.isascii() and _VISIBLE_ASCII.search(text) is None and not _strip_invisible(text).strip()


def _message_role(m: dict) -> str | None:
    role = m.get("role", m.get("from"))
    return role.lower() if isinstance(role, str) else None


def _message_content(m: dict) -> Any:
    return m["content"] if "content" in m else m.get("value")


def is_chat(value: Any) -> bool:
    """A non-empty list of dicts with a role (``role`` or ShareGPT's ``from``)."""
    return (
        isinstance(value, list)
        and len(value) > 0
        and isinstance(value[0], dict)
        and ("role" in value[0] or "from" in value[0])
    )


def is_rubric(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0 and isinstance(value[0], dict) and "criterion" in value[0]


def _content_text(content: Any) -> str:
    # OpenAI multimodal content: a list of parts, of which the text parts count.
    if isinstance(content, list):
        return "\n".join(
            p.get("text", "") if isinstance(p, dict) else str(p)
            for p in content
            if not isinstance(p, dict) or p.get("type", "text") == "text"
        )
    if content is None:
        return ""
    return content if isinstance(content, str) else str(content)


def chat_user_text(messages: list) -> str:
    """User-turn contents of a chat, joined by newlines."""
    parts = []
    for m in messages:
        role = m.get("role") or m.get("from") if type(m) is dict else None
        if type(role) is str and (role in USER_ROLES or role.lower() in USER_ROLES):  # a list or a dict role is no role
            c = m["content"] if "content" in m else m.get("value")
            parts.append(c if type(c) is str else _content_text(c))
    if not parts:
        roles = sorted({str(_message_role(m)) for m in messages if isinstance(m, dict)})
        raise RecordError(
            "no_user_turn",
            f"chat has no user turn (roles: {', '.join(roles) or 'none'})",
            "check the role names or pass --prompt-field with the text to compare",
        )
    return "\n".join(parts)


def chat_assistant_text(messages: list) -> str:
    """The last assistant turn of a chat (the reference answer in SFT/preference data)."""
    for m in reversed(messages):
        role = m.get("role") or m.get("from") if type(m) is dict else None
        if type(role) is str and (role in ASSISTANT_ROLES or role.lower() in ASSISTANT_ROLES):  # a list or a dict role is no role
            c = m["content"] if "content" in m else m.get("value")
            return c if type(c) is str else _content_text(c)
    raise RecordError(
        "no_assistant_turn",
        "chat has no assistant turn to use as the target",
        "pass --target-field with the reference answer's path",
    )


def _is_cluster(tags: Any) -> bool:
    if isinstance(tags, dict):
        return str(tags.get("level", "")).lower() == "cluster"
    if isinstance(tags, list):
        return any(isinstance(t, str) and t.lower() == "level:cluster" for t in tags)
    if isinstance(tags, str):
        return "level:cluster" in tags.lower()
    return False


def _points(value: Any) -> str | None:
    """A criterion's points as text: ``5``, ``5.0`` and ``"5"`` are all ``5``; none is ``None``."""
    if value is None or isinstance(value, bool):
        return None if value is None else str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).strip()
    try:
        return _points(float(text)) if text else None
    except ValueError:
        return text


def rubric_text(rubrics: list) -> str:
    """Criteria of a rubric bank with their points, one per line, sorted; no ``level:cluster`` ones.

    A criterion is followed by its points in brackets (none when the bank has no points).
    Lines are sorted by their normalized text, so a bank reordered or recased compares equal
    at ``normalized`` as well as a bank merely reordered does at ``exact``.

    >>> print(rubric_text([{"criterion": "b", "points": 5, "tags": []}, {"criterion": "a", "points": -2.0, "tags": ["level:example"]},
    ...                    {"criterion": "z", "points": 3, "tags": ["level:cluster"]}, {"criterion": "c"}]))
    a [-2]
    b [5]
    c
    """
    lines = []
    for r in rubrics:
        if isinstance(r, dict) and isinstance(r.get("criterion"), str) and not _is_cluster(r.get("tags")):
            pts = _points(r.get("points"))
            lines.append(r["criterion"] if pts is None else f"{r['criterion']} [{pts}]")
    if not lines:
        raise RecordError(
            "empty_rubric",
            "rubric bank has no criteria outside level:cluster",
            "check the rubric field or pass --target-field",
        )
    return "\n".join(sorted(lines, key=lambda line: (normalize(line), line)))


def canonical_text(value: Any, role: str = "prompt") -> str:
    """Turn a field value into the canonical text compared across records.

    Strings are kept as they are; numbers become their decimal text (GSM8K-style numeric
    answers); chats become user turns (``role="prompt"``) or the last assistant turn
    (``role="target"``); rubric banks become sorted criteria with points; lists of strings are joined.
    Anything else is a :class:`RecordError` that says which path to pass instead.
    """
    if type(value) is str:
        text = value
        if value.startswith("[{"):  # a chat or rubric bank stored as a JSON string (some uploads do)
            try:
                decoded = json.loads(value)
            except ValueError:
                decoded = None
            if is_chat(decoded) or is_rubric(decoded):
                return canonical_text(decoded, role)
    elif type(value) is list and value and type(value[0]) is dict:
        first = value[0]
        if "role" in first or "from" in first:
            text = chat_user_text(value) if role == "prompt" else chat_assistant_text(value)
        elif "criterion" in first:
            text = rubric_text(value)
        else:
            raise RecordError(
                "not_text",
                f"{role} is a list of objects with keys {', '.join(sorted(map(str, first))[:6])}, not text",
                f"pass --{role}-field with the path of the text inside it",
            )
    elif isinstance(value, bool) or value is None:
        raise RecordError(
            "not_text",
            f"{role} is {'null' if value is None else 'a boolean'}, not text",
            f"pass --{role}-field with the path of the text",
        )
    elif isinstance(value, (int, float)):
        text = repr(value) if isinstance(value, float) else str(value)
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        text = "\n".join(value)
    elif isinstance(value, dict) and isinstance(value.get("content"), str):
        text = value["content"]
    else:
        kind = "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else type(value).__name__
        keys = f" with keys {', '.join(sorted(map(str, value))[:6])}" if isinstance(value, dict) else ""
        raise RecordError(
            "not_text",
            f"{role} is {kind}{keys}, not text",
            f"pass --{role}-field with the path of the text inside it",
        )
    if not text or text.isspace() or (not text.isascii() and is_blank(text)):
        raise RecordError("empty_text", f"{role} is empty", f"drop the record or pass --{role}-field")
    return text
