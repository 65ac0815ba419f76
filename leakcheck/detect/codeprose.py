"""The natural-language part of code: what a rephrased or translated program keeps in words.

A rephraser renames a program's functions and variables and restructures its body, and a
translation to C rewrites all of it, but both keep what the program *says*: its docstring
with the doctest examples and their values, its comments, its string literals and any prose
line around the code (a chat prompt's "Write a function that ..."). :func:`prose_of` keeps
exactly those, in order, and drops the code; the ``semantic`` level compares code with code
on this text as well as on the whole record.

>>> prose_of("def f(xs):\\n    '''Sum the even numbers.\\n    >>> f([1, 2, 4])\\n    6\\n    '''\\n    return sum(x for x in xs if x % 2 == 0)  # evens"
...          ).splitlines()
['Sum the even numbers.', '    >>> f([1, 2, 4])', '    6', 'evens']
"""

from __future__ import annotations

import re

#: Docstrings, string literals and comments (Python ``#`` but not C's ``#include``, ``//``, ``/* */``).
_PROSE_TOKEN = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
                          r"|#(?!include|define|if|endif|pragma)[^\n]*|//[^\n]*|/\*[\s\S]*?\*/")
#: A line of code outside strings: a statement keyword, a C declaration, a brace, an assignment, an open bracket at its end.
_CODE_LINE = re.compile(r"^\s*(?:def |class |return\b|import |from \S+ import|for |while |if |elif |else\b|try:|except|with |#"
                        r"|(?:static\s+|const\s+|unsigned\s+)*[A-Za-z_]\w*[\s*]+[A-Za-z_]\w*\s*\(|[{}])"
                        r"|[:;{}(,\[]\s*$|[^=!<>]=[^=]")
_WORD = re.compile(r"[A-Za-z]{2,}")
_QUOTES = "\"'#/* \n"


def prose_of(text: str) -> str:
    """Docstrings, comments, string literals and prose lines of ``text``, one per line (code dropped).

    >>> prose_of('Write a function to add two numbers.\\nint add(int a, int b) {\\n  return a + b; /* the sum */\\n}')
    'Write a function to add two numbers.\\nthe sum'
    """
    out, pos = [], 0
    for m in _PROSE_TOKEN.finditer(text):
        out.append(_prose_lines(text[pos : m.start()]))
        out.append(m.group().strip(_QUOTES))
        pos = m.end()
    out.append(_prose_lines(text[pos:]))
    return "\n".join(o for o in out if o.strip())


def _prose_lines(chunk: str) -> str:
    return "\n".join(line for line in chunk.splitlines() if _is_prose(line))


def _is_prose(line: str) -> bool:
    """Three words or more, mostly letters, and nothing a line of code starts or ends with."""
    s = line.strip()
    return (len(_WORD.findall(s)) >= 3 and not _CODE_LINE.search(line)
            and sum(c.isalpha() or c == " " for c in s) >= 0.6 * len(s))
