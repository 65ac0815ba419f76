"""targets_agree: the rules that turn a fuzzy prompt match into a pair or a sibling."""

from __future__ import annotations

import pytest

from leakcheck.detect.agree import answers_in_text, canonical_answer, compare, final_answer, targets_agree

GSM = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether.\n#### 72"


@pytest.mark.parametrize(("a", "b", "verdict", "why"), [
    # final answers: GSM8K, \boxed, "the answer is", across forms
    (GSM, GSM.replace("<<48/2=24>>", "").replace("<<48+24=72>>", ""), "agree", "same final answer: 72"),
    (GSM, "She sold 72 clips in all.\n#### 72.00", "agree", "same final answer: 72.00"),
    (GSM, GSM.replace("72", "73"), "disagree", "final answers differ: 72 vs 73"),
    ("so $x = \\boxed{\\dfrac{3}{8}}$.", "The answer is $\\boxed{\\frac38}$", "agree", "same final answer: \\frac38"),
    ("... = \\boxed{0.375}", "... = \\boxed{\\frac{3}{8}}", "agree", "same final answer: \\frac{3}{8}"),
    ("... so \\boxed{-i}.", "... so \\boxed{-1}.", "disagree", "final answers differ: -i vs -1"),
    ("so the answer is 1,000.", "#### 1000", "agree", "same final answer: 1000"),
    ("#### 72", "72", "agree", "same final answer: 72"),
    ("#### 72", "Ok.", "unknown", "no final answer or code on both sides"),
    ("#### 72", "72 clips", "unknown", "one short answer contains the other (72 / 72 clips)"),
    # a Markdown heading is not an answer
    ("#### Step 1\nAdd them up, and so on, until all the clips are counted: 72.", "#### 72", "unknown", "no final answer or code on both sides"),
    # short answers
    ("18", "18.0", "agree", "same short answer: 18.0"),
    ("18", "20", "disagree", "short answers differ: 18 vs 20"),
    ("B", "C", "unknown", "short texts differ but are not both answers (b / c)"),
    ("(B)", "(C)", "unknown", "short texts differ but are not both answers ((b) / (c))"),
    ("Paris", "Paris.", "agree", "same short answer: paris"),
    ("Paris", "London", "unknown", "short texts differ but are not both answers (paris / london)"),
    # prose
    ("The mitochondria is the powerhouse of the cell because it makes ATP.", "Cells get energy from sugar.", "unknown",
     "no final answer or code on both sides"),
    (None, "x", "unknown", "a target is missing"),
])
def test_answers(a, b, verdict, why):
    got = compare(a, b)
    assert (got.verdict, got.why) == (verdict, why)


SQ = "def square_perimeter(a):\n  perimeter=4*a\n  return perimeter"


@pytest.mark.parametrize(("a", "b", "verdict"), [
    # the same program re-typed: layout, comments, docstrings, local names, dead code, range(0, n), pass
    ("def neg(nums):\n    return [x for x in nums if x < 0]",
     "def NEG(values):  # keep the negative ones\n    \"\"\"Negatives.\"\"\"\n    return [v for v in values if v < 0]", "agree"),
    ("def f(n):\n    for i in range(0, n):\n        pass\n        print(i)\n    return n",
     "def f(m):\n    for j in range(m):\n        print(j)\n    return m\n    print('unreachable')", "agree"),
    ("```python\ndef f(x):\n    return x + 1\n```", "Here you go:\n```py\ndef f(y): return y + 1\n```\nIt adds one.", "agree"),
    # a body without its signature (HumanEval's canonical solutions)
    ("    return len(string)\n", "\treturn len(string)", "agree"),
    # one operator, one builtin, one constant, the function a test calls: another program
    ("def neg(nums):\n    return [x for x in nums if x < 0]", "def neg(nums):\n    return [x for x in nums if x > 0]", "disagree"),
    ("def f(x):\n    return len(x)", "def f(x):\n    return sum(x)", "disagree"),
    ("def f(j):\n    return j*j*j*j*j", "def f(j):\n    return j*j*j*j", "disagree"),
    (SQ, SQ.replace("square", "rombus"), "disagree"),
    # C-like code is compared as tokens: renamed identifiers cannot be told from other calls
    ("int add(int a, int b) {\n  return a + b; // sum\n}", "int add(int a, int b)\n{\n  return a + b;\n}", "agree"),
    ("int add(int a, int b) {\n  return a + b;\n}", "int add(int x, int y) {\n  return x + y;\n}", "unknown"),
    ("int add(int a, int b) {\n  return a + b;\n}", "int add(int a, int b) {\n  return a - b;\n}", "disagree"),
    # code against prose: no verdict
    (SQ, "Multiply the side by four.", "unknown"),
])
def test_code(a, b, verdict):
    assert targets_agree(a, b) == verdict, compare(a, b)


def test_final_answer_and_canonical_forms():
    assert final_answer(GSM) == "72" and final_answer("It is 72.") is None
    assert final_answer("\\boxed{1} first, then \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert canonical_answer("$50\\%$") == canonical_answer("50") and canonical_answer("90^\\circ") == canonical_answer("90")
    assert canonical_answer("\\text{(A) } x^2") == "(a)x^2"


def test_answers_stated_in_a_train_text():
    doc = "Example 1. ... so $x = \\boxed{2}$.\n\nExample 2. ... which is $\\boxed{1260}$."
    assert answers_in_text("... gives $x = \\boxed{3}$.", doc).why == "final answers in the train text (2, 1260) do not include the eval's (3)"
    assert answers_in_text("... gives $x = \\boxed{2}$.", doc) is None  # the eval's answer is there
    assert answers_in_text("... gives $x = \\boxed{3}$.", "no answers in this text") is None
    assert answers_in_text("Add them up.", doc) is None  # the eval target states no answer


def test_rubric_banks():
    bank = "Advises rest [4]\nAsks about fever [5]\nRecommends ice [-3]"
    assert compare(bank, "Asks about fever [5]\nAdvises rest [4]\nRecommends ice [-3]").verdict == "agree"
    assert compare(bank, "advises rest [6]\nAsks about fever [5]\nRecommends ice [-3]").why == "same rubric criteria with other points"
    assert compare(bank, "Advises rest [4]\nAsks about travel [5]").verdict == "unknown"


@pytest.mark.parametrize("target", [GSM, "18", "Paris", SQ, "int add(int a, int b) {\n  return a + b;\n}", "Advises rest [4]\nAsks [5]", "x" * 300])
def test_a_view_without_text_gives_the_same_verdicts(target):
    """An eval index keeps views without text: verdicts must not depend on it (only the messages quote less)."""
    from leakcheck.detect.agree import TargetView, view

    bare = TargetView.from_json(view(target).without_text().to_json())
    assert bare == view(target).without_text()
    for other in (GSM, GSM.replace("72", "73"), "18", "20", "Paris.", SQ, SQ.replace("4*a", "2*a"), "Advises rest [5]\nAsks [5]", "prose " * 20):
        assert compare(bare, other).verdict == compare(target, other).verdict, other
