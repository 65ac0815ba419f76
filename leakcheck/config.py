"""Frozen configuration dataclasses for every knob, and ``[tool.leakcheck]`` loading.

>>> cfg = ScanConfig(levels=("exact",))
>>> cfg.levels
('exact',)
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from typing import Any

from .errors import UsageError

#: Levels in order of strength: an exact match is the strongest evidence.
LEVELS = ("exact", "normalized", "near", "contained", "semantic")
#: What runs unless ``--levels`` says otherwise (and what ``all`` means): ``semantic`` costs
#: more and is asked for by name (``--levels all,semantic``).
DEFAULT_LEVELS = LEVELS[:4]
#: Kinds of leak. ``pair``: prompt and target of the same two records both match.
KINDS = ("pair", "prompt", "target", "target_in_prompt", "prompt_in_target", "group")
#: Placeholder for "every kind" / "every level" in a policy item.
ANY = "*"


@dataclass(frozen=True)
class Fields:
    """Field paths for one side; ``None`` means auto-detect."""

    prompt: str | None = None
    target: str | None = None
    id: str | None = None
    group: str | None = None


def level_rank(level: str) -> int:
    """Strength of a level: 0 is the strongest evidence (``exact``)."""
    return LEVELS.index(level)


@dataclass(frozen=True)
class Policy:
    """What makes the gate fail: items ``(kind, level)`` (either may be :data:`ANY`) and chance.

    Items are OR-ed, and a level means "found at that level **or a stronger one**" (levels are
    ordered ``exact`` > ``normalized`` > ``near`` > ``contained`` > ``semantic``). Both rules keep the gate
    monotone: more levels, more data or more items never turn a failing gate into a pass. A
    ``pair`` is also a ``prompt`` leak and a ``target`` leak, each at its own field's level
    (see :meth:`leakcheck.result.Finding.evidence`). The default gates every finding at every
    level that ran; chance matches, near misses and siblings are information, never gated
    unless ``chance`` is asked for.

    >>> p = Policy.parse("near")
    >>> p.gates("pair", "exact"), p.gates("prompt", "near"), p.gates("prompt", "contained")
    (True, True, False)
    >>> Policy.parse("exact,pair").gates("pair", "contained"), Policy.parse("exact,pair").gates("target", "exact")
    (True, True)
    >>> Policy().gates("target_in_prompt", "contained"), Policy.parse("target:exact,chance").chance
    (True, True)
    """

    items: frozenset[tuple[str, str]] = frozenset({(ANY, ANY)})
    chance: bool = False
    #: Evidence allowed up to a count or a share of the eval records (see :class:`Limit`);
    #: :func:`leakcheck.gate.exit_code` fails when one is exceeded.
    limits: tuple["Limit", ...] = ()

    def __post_init__(self) -> None:
        for lim in self.limits:
            items = sorted(self.items | ({("target", ANY)} if self.chance else set()), key=_item_order)
            cover = next((it for it in items if _covers(it, (lim.kind, lim.level))), None)
            if cover is not None:
                raise UsageError(
                    f"limit {lim.text()}: --fail-on {_item_text(*cover)}{' (the default)' * (cover == (ANY, ANY))} "
                    "already fails on every such finding, so the limit "
                    f"could never allow one; narrow --fail-on (e.g. --fail-on pair,prompt) or drop the limit")
        object.__setattr__(self, "limits", tuple(sorted(set(self.limits), key=Limit.order)))

    def gates(self, kind: str, level: str) -> bool:
        """Whether evidence of ``kind`` at ``level`` fails the gate.

        ``chance`` gates every target match too: a chance target match that more evidence
        (another level, a prompt match beside it) turns into a finding must still fail.

        >>> Policy.parse("pair:exact,chance").gates("target", "contained"), Policy.parse("pair:exact").gates("target", "contained")
        (True, False)
        """
        if self.chance and kind == "target":
            return True
        rank = level_rank(level)
        return any((k == ANY or k == kind) and (lv == ANY or rank <= level_rank(lv)) for k, lv in self.items)

    def levels_named(self) -> set[str]:
        """The levels the items and limits name (a policy may only name levels that ran)."""
        return {lv for _, lv in [*self.items, *((lim.kind, lim.level) for lim in self.limits)] if lv != ANY}

    @classmethod
    def parse(cls, spec: str | list[str] | tuple[str, ...]) -> "Policy":
        """Parse ``--fail-on``: comma-separated levels, kinds, ``kind:level``, ``all``, ``chance``, ``any`` or ``none``.

        A level alone is every kind at that level or stronger; a kind alone is that kind at
        every level; ``kind:level`` is that kind at that level or stronger; ``all`` is every
        finding; ``any`` is ``all`` plus chance matches; ``none`` gates nothing and stands alone.

        >>> Policy.parse("none").spec(), Policy.parse("any").spec()
        (['none'], ['all', 'chance'])
        """
        tokens = [t.strip() for t in (spec.split(",") if isinstance(spec, str) else spec) if t.strip()]
        if not tokens:
            raise UsageError("--fail-on is empty; use e.g. --fail-on all, --fail-on exact,normalized or --fail-on none")
        if "none" in tokens and len(set(tokens)) > 1:
            raise UsageError(f"--fail-on: 'none' contradicts {', '.join(sorted(set(tokens) - {'none'}))}; pass none alone, or drop it")
        items: set[tuple[str, str]] = set()
        chance = False
        for t in tokens:
            if t == "none":
                continue
            if t in ("any", "chance"):
                chance = True
                if t == "any":
                    items.add((ANY, ANY))
            else:
                items.add(_policy_item(t))
        return cls(frozenset(items), chance)

    def spec(self) -> list[str]:
        """The policy as ``--fail-on`` items, so ``Policy.parse(p.spec()) == p``; the JSON report stores it.

        >>> Policy.parse("pair:near,chance").spec()
        ['pair:near', 'chance']
        """
        items = [_item_text(k, lv) for k, lv in sorted(self.items, key=_item_order)]
        return items + ["chance"] * self.chance or ["none"]

    def describe(self) -> str:
        """The policy in words, for reports.

        >>> Policy().describe()
        'every finding at every level that ran'
        >>> Policy.parse("pair,target:near").describe()
        'pair at every level; target at near or stronger'
        >>> Policy(frozenset({("pair", ANY)}), limits=(Limit.parse("target:near=0.5%"),)).describe()
        'pair at every level; more than 0.5% of the eval records with target at near or stronger'
        """
        parts = [_item_words(k, lv) for k, lv in sorted(self.items, key=_item_order)]
        if self.chance:
            parts.append("chance target matches")
        parts += [f"more than {lim.allowed_text()}{' of the' * lim.percent} eval records with {_item_words(lim.kind, lim.level)}"
                  for lim in self.limits]
        return "; ".join(parts) or "none"


def _policy_item(t: str) -> tuple[str, str]:
    if t == "all":
        return (ANY, ANY)
    if t in LEVELS:
        return (ANY, t)
    if t in KINDS:
        return (t, ANY)
    k, _, lv = t.partition(":")
    if k in KINDS and lv in LEVELS:
        return (k, lv)
    raise UsageError(
        f"--fail-on: unknown item {t!r}; use levels ({', '.join(LEVELS)}), kinds "
        f"({', '.join(KINDS)}), kind:level, all, chance, any or none"
    )


def _item_order(item: tuple[str, str]) -> tuple[int, int]:
    k, lv = item
    return (-1 if lv == ANY else level_rank(lv), -1 if k == ANY else KINDS.index(k))


def _item_text(k: str, lv: str) -> str:
    if k == ANY:
        return "all" if lv == ANY else lv
    return k if lv == ANY else f"{k}:{lv}"


def _item_words(k: str, lv: str) -> str:
    what = "every finding" if k == ANY else k
    return f"{what} at every level{' that ran' if k == ANY else ''}" if lv == ANY else f"{what} at {lv} or stronger"


def _covers(item: tuple[str, str], other: tuple[str, str]) -> bool:
    """Whether every finding ``other`` counts is one ``item`` gates."""
    (k, lv), (k2, lv2) = item, other
    return (k == ANY or k == k2) and (lv == ANY or (lv2 != ANY and level_rank(lv2) <= level_rank(lv)))


_LIMIT_VALUE = re.compile(r"^\s*(\d+(?:\.\d+)?(?:[eE]-?\d+)?)\s*(%?)\s*$")


@dataclass(frozen=True)
class Limit:
    """Evidence allowed up to a count or a percentage of the eval records before the gate fails.

    ``kind``/``level`` work as in ``--fail-on`` (a level means that level or stronger). The
    limit counts the eval records with such a finding (baselined and allowed ones excepted)
    and fails when the count is **above** the limit, so ``0`` fails on the first one.

    >>> lim = Limit.parse("target:near=0.5%")
    >>> lim.text(), lim.allowed(1000), lim.exceeded(5, 1000), lim.exceeded(6, 1000)
    ('target:near=0.5%', 5.0, False, True)
    >>> Limit.parse("prompt=2").exceeded(3, 10), Limit.parse("all=0").text(), Limit.parse("near=1234567").text()
    (True, 'all=0', 'near=1234567')
    """

    kind: str
    level: str
    value: float
    percent: bool = False

    @classmethod
    def parse(cls, spec: str, value: object = None, where: str = "--limit") -> "Limit":
        """``KIND:LEVEL=N`` or ``KIND:LEVEL=P%`` (or the item and the value apart, as in a TOML table)."""
        item, raw = (spec, value) if value is not None else spec.partition("=")[::2]
        fix = "write e.g. --limit target:near=0.5% or --limit prompt=0 (a count, or a percentage of the eval records)"
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise UsageError(f"{where} {item}: the limit must be a count or a percentage such as \"0.5%\", not {_shown(raw)}")
        m = _LIMIT_VALUE.match(str(raw))
        if not m or not str(item).strip():
            raise UsageError(f"{where} {spec if value is None else f'{item} = {raw!r}'}: {fix}")
        try:
            kind, level = _policy_item(str(item).strip())
        except UsageError:
            raise UsageError(f"{where} {item}: unknown kind or level; use a level ({', '.join(LEVELS)}), a kind "
                             f"({', '.join(KINDS)}), kind:level or all") from None
        number, pct = float(m.group(1)), m.group(2) == "%"
        if pct and number > 100:
            raise UsageError(f"{where} {item}: {raw} is more than 100%")
        return cls(kind, level, number, pct)

    def _allowed(self, total: int) -> Fraction:
        # exact arithmetic: 50% of 4 records is 2, not 1.9999999 (which 2 records would exceed)
        v = Fraction(repr(self.value))
        return v * total / 100 if self.percent else v

    def allowed(self, total: int) -> float:
        """How many eval records out of ``total`` may have this evidence (rounded to 6 places, for reports)."""
        return round(float(self._allowed(total)), 6)

    def exceeded(self, count: int, total: int) -> bool:
        return count > self._allowed(total)

    def allowed_text(self) -> str:
        """The value as typed back (no rounding: ``Limit.parse(lim.text()) == lim``)."""
        number = str(int(self.value)) if self.value == int(self.value) else repr(self.value)
        return number + "%" * self.percent

    def text(self) -> str:
        return f"{_item_text(self.kind, self.level)}={self.allowed_text()}"

    def order(self) -> tuple[int, int, float]:
        return (*_item_order((self.kind, self.level)), self.value)


@dataclass(frozen=True)
class _FuzzyLevelConfig:
    """What the ``near`` and ``contained`` levels share.

    ``template_share``: an n-gram/shingle found in at least this share of the texts of one
    field of one file (and in at least ``template_min_records`` texts) is a template,
    suppressed before matching. ``near_miss_margin``: matches this far under the threshold
    are listed as closest non-leaks.
    """

    threshold: float = 0.6
    template_share: float = 0.05
    template_min_records: int = 20
    near_miss_margin: float = 0.1

    def _check(self, threshold_option: str) -> None:
        _check_unit(threshold_option, self.threshold)
        _check_unit("--template-share", self.template_share)


@dataclass(frozen=True)
class NearConfig(_FuzzyLevelConfig):
    """MinHash LSH settings (the ``near`` level).

    ``lsh_fp_weight``: weight of false positives (against ``1 -`` it for false negatives) in
    datasketch's choice of LSH bands/rows; candidates are verified, so a false positive
    costs only time. The near-miss margin is small here: each train text that may reach it
    costs a MinHash and an LSH query.
    """

    near_miss_margin: float = 0.05
    shingle: int = 3
    num_perm: int = 128
    seed: int = 1
    lsh_fp_weight: float = 0.02
    #: An eval text left with fewer distinct shingles than this once templates are suppressed
    #: is not compared here (a Jaccard over one or two shingles is 0, 0.5 or 1 by chance).
    min_shingles: int = 3

    def __post_init__(self) -> None:
        self._check("--near-threshold")
        _check_unit("--lsh-fp-weight", self.lsh_fp_weight, open_top=True)
        _check_count("--shingle", self.shingle)
        _check_count("--num-perm", self.num_perm, low=2)
        _check_count("min_shingles", self.min_shingles)


@dataclass(frozen=True)
class ContainedConfig(_FuzzyLevelConfig):
    """n-gram containment settings (the ``contained`` level); near misses are free to find here."""

    ngram: int = 13

    def __post_init__(self) -> None:
        self._check("--contained-threshold")
        _check_count("--ngram", self.ngram)


@dataclass(frozen=True)
class SemanticConfig:
    """Paraphrase settings (the ``semantic`` level, :mod:`leakcheck.detect.semantic`).

    ``threshold``: cosine of character 2-5-gram TF-IDF vectors a match needs when the targets
    cannot be compared; ``code_threshold`` the same for an eval record that is code, scored
    on its whole text, its prose and its literals (a rephrased program renames what it can:
    its vectors drift further). ``None``: the default
    of the score in use (with an embedder the mean of both cosines, see
    :mod:`leakcheck.detect.semantic`). ``anchored_threshold``: the lower cosine that suffices when
    both records state the same final answer (a different final answer rules the pair out).
    ``embedder``: ``None`` for the packaged model when ``leakcheck[semantic]`` is installed,
    ``"none"`` for lexical only, or the path of a local sentence-transformers/ONNX model.
    """

    threshold: float | None = None
    code_threshold: float | None = None
    anchored_threshold: float = 0.44
    near_miss_margin: float = 0.1
    embedder: str | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None:
            _check_unit("--semantic-threshold", self.threshold)
        if self.code_threshold is not None:
            _check_unit("--semantic-code-threshold", self.code_threshold)
        _check_unit("--semantic-anchored-threshold", self.anchored_threshold)


def _check_unit(name: str, value: float, open_top: bool = False) -> None:
    if not (0.0 < value < 1.0 if open_top else 0.0 < value <= 1.0):
        raise UsageError(f"{name} must be between 0 and 1{' (exclusive)' if open_top else ''}, not {value}")


def _check_count(name: str, value: int, low: int = 1) -> None:
    if value < low:
        raise UsageError(f"{name} must be at least {low}, not {value}")


@dataclass(frozen=True)
class ScanConfig:
    """Everything :func:`leakcheck.scan` needs besides the two inputs.

    ``short_target_chars``: a target match whose normalized eval target is shorter than this
    is a chance match (GSM8K's "18"). ``max_target_hits``: an eval target matching more
    distinct train records than this (counted per train group when groups exist) is generic,
    also a chance match. Chance matches are reported apart and do not gate by default.
    """

    levels: tuple[str, ...] = DEFAULT_LEVELS
    policy: Policy = field(default_factory=Policy)
    train_fields: Fields = field(default_factory=Fields)
    eval_fields: Fields = field(default_factory=Fields)
    short_target_chars: int = 20
    max_target_hits: int = 10
    on_error: str = "fail"
    allow_partial: bool = False
    near: NearConfig = field(default_factory=NearConfig)
    contained: ContainedConfig = field(default_factory=ContainedConfig)
    semantic: SemanticConfig = field(default_factory=SemanticConfig)
    #: How many closest non-leaks (see ``near_miss_margin`` of each fuzzy level) to list.
    max_near_misses: int = 20
    batch_size: int = 4096
    #: Train records a template-aware detector sees before matching starts.
    sample_size: int = 20_000
    max_examples: int = 3

    def __post_init__(self) -> None:
        bad = [lv for lv in self.levels if lv not in LEVELS]
        if bad or not self.levels:
            raise UsageError(f"--levels: unknown level {', '.join(bad) or '(none)'}; choose from {', '.join(LEVELS)}")
        if self.short_target_chars < 0 or self.max_target_hits < 1:
            raise UsageError("--short-target-chars must be >= 0 and --max-target-hits >= 1")
        if self.on_error not in ("fail", "skip"):
            raise UsageError(f"--on-error must be fail or skip, not {self.on_error!r}")
        missing = sorted(self.policy.levels_named() - set(self.levels), key=level_rank)
        if missing:
            what = "--fail-on or --limit" if self.policy.limits else "--fail-on"
            raise UsageError(
                f"{what} names {', '.join(missing)}, which does not run (--levels {','.join(self.levels)}); "
                f"add it to --levels or drop it from {what}"
            )
        # Keep the canonical order so reports do not depend on how levels were typed.
        object.__setattr__(self, "levels", tuple(lv for lv in LEVELS if lv in self.levels))

    def with_(self, **changes: Any) -> "ScanConfig":
        return replace(self, **changes)


def parse_levels(spec: str) -> tuple[str, ...]:
    """``"exact,normalized"`` -> ``("exact", "normalized")``; ``all`` means the default levels.

    >>> parse_levels("all,semantic")
    ('exact', 'normalized', 'near', 'contained', 'semantic')
    """
    items = [s.strip() for s in spec.split(",") if s.strip()]
    if "all" in items:
        items = [lv for lv in DEFAULT_LEVELS if lv not in items] + [s for s in items if s != "all"]
    bad = [s for s in items if s not in LEVELS]
    if bad or not items:
        raise UsageError(f"--levels: unknown level {', '.join(bad) or '(none)'}; choose from {', '.join(LEVELS)} or all")
    return tuple(items)


@dataclass(frozen=True)
class Setting:
    """The type of one ``[tool.leakcheck]`` key: a test of its value and how to say what it must be."""

    check: Callable[[Any], bool]
    expect: str


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


TEXT = Setting(lambda v: isinstance(v, str) and bool(v.strip()), 'a non-empty string such as "question"')
ITEMS = Setting(lambda v: isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
                'a string or a list of strings such as ["exact", "normalized"]')
BOOL = Setting(lambda v: isinstance(v, bool), "true or false, without quotes")
INT = Setting(_is_int, "a whole number, without quotes")
NUMBER = Setting(lambda v: _is_int(v) or isinstance(v, float), "a number, without quotes, such as 0.6")
ON_ERROR = Setting(lambda v: v in ("fail", "skip"), '"fail" or "skip"')
ENGINE = Setting(lambda v: v in ("local", "ray"), '"local" or "ray"')
ANNOTATIONS = Setting(lambda v: v in ("github", "none"), '"github" or "none"')
LIMITS = Setting(lambda v: isinstance(v, dict), 'a table such as { "target:near" = "0.5%", prompt = 0 }')
ALLOW = Setting(lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
                'a list of tables such as [{ eval_id = "42", reason = "..." }] ([[tool.leakcheck.allow]] entries)')

#: Every key ``[tool.leakcheck]`` (or a ``leakcheck.toml``) may hold, with its type. Each is the
#: command-line option of the same name (``--fail-on`` for ``fail_on``, ``--limit`` for
#: ``limits``), which wins over it; ``allow`` entries add to those of ``--allowlist``.
SETTINGS: dict[str, Setting] = {
    "levels": ITEMS, "fail_on": ITEMS,
    "prompt_field": TEXT, "target_field": TEXT, "id_field": TEXT, "group_field": TEXT,
    "train_prompt_field": TEXT, "train_target_field": TEXT, "eval_prompt_field": TEXT, "eval_target_field": TEXT,
    "on_error": ON_ERROR, "allow_partial": BOOL,
    "short_target_chars": INT, "max_target_hits": INT, "shingle": INT, "num_perm": INT, "ngram": INT,
    "near_threshold": NUMBER, "contained_threshold": NUMBER, "template_share": NUMBER, "lsh_fp_weight": NUMBER,
    "jobs": INT, "engine": ENGINE, "ray_address": TEXT, "examples": INT,
    "annotations": ANNOTATIONS, "step_summary": BOOL,
    "limits": LIMITS, "baseline": TEXT, "allowlist": TEXT, "allow": ALLOW,
    "semantic_threshold": NUMBER, "semantic_code_threshold": NUMBER, "semantic_anchored_threshold": NUMBER, "embedder": TEXT,
}

_TOML_TYPE = {bool: "boolean", int: "number", float: "number", str: "string", list: "list", dict: "table"}


def _shown(value: Any) -> str:
    """A value as TOML spells it, with its type: ``the string "false"``."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f"the {_TOML_TYPE.get(type(value), type(value).__name__)} {text if len(text) <= 60 else text[:59] + '…'}"


def unknown_key(key: str, where: str) -> str:
    """The warning for a key that is not a setting, with the closest valid key.

    >>> unknown_key("fail-on", "leakcheck.toml")
    "leakcheck.toml: unknown key 'fail-on' ignored; did you mean 'fail_on'?"
    """
    close = difflib.get_close_matches(key.replace("-", "_"), SETTINGS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(SETTINGS))}"
    if key == "tool":
        hint = "a leakcheck.toml holds its keys at the top level, without [tool.leakcheck]"
    return f"{where}: unknown key {key!r} ignored; {hint}"


def check_settings(conf: Any, where: str = "[tool.leakcheck]", warnings: list[str] | None = None) -> dict[str, Any]:
    """The known settings of ``conf``, each value checked against its key's type (see :data:`SETTINGS`).

    A bad value is a :class:`UsageError`; an unknown key is left out with a warning appended
    to ``warnings`` (a typo must not stop CI, but must not pass unseen either).

    >>> check_settings({"allow_partial": "false"}, "pyproject.toml [tool.leakcheck]")
    Traceback (most recent call last):
    ...
    leakcheck.errors.UsageError: pyproject.toml [tool.leakcheck]: allow_partial must be true or false, without quotes, not the string "false"
    >>> seen: list[str] = []
    >>> check_settings({"level": "exact"}, "leakcheck.toml", seen), seen
    ({}, ["leakcheck.toml: unknown key 'level' ignored; did you mean 'levels'?"])
    """
    if not isinstance(conf, dict):
        raise UsageError(f"{where} must be a table of settings (key = value lines), not {_shown(conf)}")
    out = {}
    for key, value in conf.items():
        setting = SETTINGS.get(key)
        if setting is None:
            if warnings is not None:
                warnings.append(unknown_key(key, where))
            continue
        if not setting.check(value):
            raise UsageError(f"{where}: {key} must be {setting.expect}, not {_shown(value)}")
        out[key] = value
    return out


@dataclass(frozen=True)
class LoadedConfig:
    """The settings of one configuration file (none found: ``path`` is ``None``) and its warnings."""

    path: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    #: How messages name the settings: ``/repo/pyproject.toml [tool.leakcheck]``.
    where: str = ""

    def resolve(self, value: str) -> str:
        """A path from the file, relative to the file's folder (like ruff and black)."""
        if self.path is None or os.path.isabs(value):
            return value
        return os.path.join(os.path.dirname(self.path), value)


def _read_toml(p: str) -> dict[str, Any]:
    try:
        with open(p, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"--config {p}: no such file; name a leakcheck.toml or a pyproject.toml") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{p}: invalid TOML ({exc}); fix the file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: cannot be read ({getattr(exc, 'strerror', None) or exc}); fix the file or pass --config") from None


def _section(p: str, data: dict[str, Any]) -> tuple[Any, str] | None:
    """The leakcheck table of a file and how to name it, or ``None`` for a pyproject.toml without one."""
    if os.path.basename(p) != "pyproject.toml":
        return data, p
    tool = data.get("tool", {})
    if not isinstance(tool, dict) or "leakcheck" not in tool:
        return None
    return tool["leakcheck"], f"{p} [tool.leakcheck]"


def load_config(explicit: str | os.PathLike | None = None, start: str | os.PathLike | None = None) -> LoadedConfig:
    """Find, read and check the configuration, the way ruff and black do.

    ``explicit`` (``--config``) wins; else the nearest folder at or above ``start`` (default:
    the current folder) holding a ``leakcheck.toml`` (its keys at the top level) or a
    ``pyproject.toml`` with a ``[tool.leakcheck]`` table; in one folder ``leakcheck.toml``
    wins. A ``pyproject.toml`` without the table is passed over.
    """
    if explicit is not None:
        p = os.path.abspath(explicit)
        found = _section(p, _read_toml(p))
        conf, where = found if found is not None else ({}, f"{p} [tool.leakcheck]")
        return _loaded(p, conf, where)
    d = os.path.abspath(start or os.getcwd())
    while True:
        for name in ("leakcheck.toml", "pyproject.toml"):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                found = _section(p, _read_toml(p))
                if found is not None:
                    return _loaded(p, *found)
        parent = os.path.dirname(d)
        if parent == d:
            return LoadedConfig()
        d = parent


def _loaded(path: str, conf: Any, where: str) -> LoadedConfig:
    warnings: list[str] = []
    settings = check_settings(conf, where, warnings)
    for item, value in settings.get("limits", {}).items():  # a bad limit names the file, not only the key
        Limit.parse(item, value, f"{where}: limits")
    return LoadedConfig(path, settings, tuple(warnings), where)


def load_pyproject(start: str | os.PathLike | None = None) -> dict[str, Any]:
    """The checked settings of the configuration :func:`load_config` finds from ``start``."""
    return load_config(start=start).settings


CONFIG_KEYS = {f.name for f in fields(ScanConfig)}
