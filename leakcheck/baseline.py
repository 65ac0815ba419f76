"""Baselines and allowlists: accepted findings that are listed in reports but never fail the gate.

A baseline records today's findings by content fingerprint (never by row number), so
reordering, resharding or appending to a file changes nothing; ``scan --baseline`` then
gates only new findings and reports the entries no finding matched any more as gone. Like
detect-secrets' ``.secrets.baseline``: reviewable JSON, one line per entry, stable order.

An allowlist names known and accepted overlaps by eval id or fingerprint, each with a reason.

Both only *add* :class:`~leakcheck.result.Accepted` marks to a result; the gate stays a pure
function of (result, policy), and a finding the marks do not cover gates as before.

>>> from leakcheck.result import Finding
>>> f = Finding("e1", "t9", "prompt", "near", 0.8, 0, 9, "q", "q", "What is 2+2?", "", eval_set="test",
...             eval_fingerprint="ef", train_fingerprint="tf")
>>> b = Baseline((BaselineEntry("test", "e1", "ef", "tf", "prompt", "near"),))
>>> b.covers(f), b.covers(dataclasses.replace(f, level="exact"))
(True, False)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import __version__
from .config import KINDS, LEVELS, LoadedConfig, ScanConfig, level_rank
from .errors import InputError, UsageError
from .report._atomic import write_atomic
from .result import Accepted, BaselineEntry, BaselineUse, Finding, ScanResult

#: The baseline file format; a file of another version is refused with the fix.
BASELINE_VERSION = 1
_FIX = "regenerate it with leakcheck baseline TRAIN EVAL -o FILE"


def matching_parameters(config: ScanConfig) -> dict[str, Any]:
    """The settings that decide which findings a scan makes: a baseline stores them to warn on a change."""
    return {
        "levels": list(config.levels),
        "short_target_chars": config.short_target_chars,
        "max_target_hits": config.max_target_hits,
        "near": {"threshold": config.near.threshold, "shingle": config.near.shingle, "num_perm": config.near.num_perm,
                 "template_share": config.near.template_share},
        "contained": {"threshold": config.contained.threshold, "ngram": config.contained.ngram,
                      "template_share": config.contained.template_share},
    }


def _entry_order(e: BaselineEntry) -> tuple[str, str, str, int, int]:
    return (e.eval_set or "", e.eval_fingerprint, e.train_fingerprint, KINDS.index(e.kind), level_rank(e.level))


@dataclass(frozen=True)
class Baseline:
    """Accepted findings, each named by (eval set, eval fingerprint, train fingerprint, kind) and its level."""

    entries: tuple[BaselineEntry, ...]
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, results: Mapping[str, ScanResult], config: ScanConfig) -> "Baseline":
        """Today's findings of every eval set, one entry per record pair and kind, at its strongest level."""
        best: dict[tuple[str | None, str, str, str], BaselineEntry] = {}
        for r in results.values():
            for f in r.findings:
                ev = tuple(f"{k}:{lv}" for k, lv in f.evidence())
                e = BaselineEntry(f.eval_set, f.eval_id, f.eval_fingerprint, f.train_fingerprint, f.kind, f.level, f.eval_snippet[:80], ev)
                k = (e.eval_set, e.eval_fingerprint, e.train_fingerprint, e.kind)
                if k not in best or _entry_order(e) < _entry_order(best[k]):
                    best[k] = e
        return cls(tuple(sorted(best.values(), key=_entry_order)), matching_parameters(config))

    @functools.cached_property
    def _by_records(self) -> dict[tuple[str | None, str, str], list[BaselineEntry]]:
        out: dict[tuple[str | None, str, str], list[BaselineEntry]] = {}
        for e in self.entries:
            out.setdefault((e.eval_set, e.eval_fingerprint, e.train_fingerprint), []).append(e)
        return out

    def entry_for(self, f: Finding) -> BaselineEntry | None:
        """The entry that accepts ``f``: the same two records, with everything ``f`` proves already proved at
        that level or a stronger one (a pair's prompt and target included). Stronger evidence is new."""
        for e in self._by_records.get((f.eval_set, f.eval_fingerprint, f.train_fingerprint), ()):
            proved = e.proved()
            if all(k in proved and level_rank(lv) >= proved[k] for k, lv in f.evidence()):
                return e
        return None

    def covers(self, f: Finding) -> bool:
        return self.entry_for(f) is not None

    def keeping(self, old: "Baseline", scanned: set[str]) -> "Baseline":
        """This baseline plus ``old``'s entries of eval sets not in ``scanned`` (``baseline --update``).

        >>> a, b = BaselineEntry("gsm8k", "1", "e", "t", "pair", "exact"), BaselineEntry("mbpp", "2", "e", "t", "pair", "near")
        >>> [e.eval_set for e in Baseline((a,)).keeping(Baseline((b,)), {"gsm8k"}).entries]
        ['gsm8k', 'mbpp']
        """
        kept = [e for e in old.entries if e.eval_set not in scanned]
        return dataclasses.replace(self, entries=tuple(sorted({*self.entries, *kept}, key=_entry_order)))

    def changes(self, old: "Baseline") -> tuple[int, int]:
        """How many entries this baseline adds to ``old`` and how many of ``old``'s it drops (snippets and ids aside)."""
        def keys(b: Baseline) -> set[tuple[Any, ...]]:
            return {(e.eval_set, e.eval_fingerprint, e.train_fingerprint, e.kind, e.level, e.evidence) for e in b.entries}

        now, before = keys(self), keys(old)
        return len(now - before), len(before - now)

    def to_json(self) -> str:
        """The file's text: same findings, same bytes (no timestamp), and one line per entry, so a regenerated
        baseline's diff shows one line per finding that came or went (50,000 entries: 18 MB in under a second).

        >>> print(Baseline((BaselineEntry("t", "", "e", "t", "pair", "near"),), {"levels": ["near"]}).to_json())  # doctest: +ELLIPSIS
        {
          "leakcheck_baseline": 1,
          "leakcheck_version": "...",
          "parameters": {
            "levels": [
              "near"
            ]
          },
          "entries": [
            {"eval_set": "t", "eval_id": "", "eval_fingerprint": "e", "train_fingerprint": "t", "kind": "pair", "level": "near", "snippet": "", "evidence": []}
          ]
        }
        <BLANKLINE>
        """
        head = json.dumps({"leakcheck_baseline": BASELINE_VERSION, "leakcheck_version": __version__, "parameters": self.parameters},
                          indent=2, ensure_ascii=False)
        lines = ",\n".join("    " + json.dumps(e.to_dict(), ensure_ascii=False) for e in self.entries)
        return head[:-2] + (f',\n  "entries": [\n{lines}\n  ]\n}}\n' if lines else ',\n  "entries": []\n}\n')

    def write(self, path: str | os.PathLike) -> None:
        write_atomic(path, self.to_json())

    def warnings(self, config: ScanConfig, path: str, scanned: Sequence[str] = ()) -> list[str]:
        """What differs between the parameters the baseline was made with and ``config``'s, and
        each eval set in ``scanned`` the baseline has no entry for while it has entries of other sets (renamed?)."""
        now = matching_parameters(config)
        changed = [k for k in now if k in self.parameters and self.parameters[k] != now[k]]
        out = [f"baseline {path} was made with {k} {json.dumps(self.parameters[k])}, this scan uses {json.dumps(now[k])}: "
               f"findings may show as new or gone; regenerate it with leakcheck baseline" for k in changed]
        sets = sorted({e.eval_set or "" for e in self.entries})
        for name in scanned:
            if name not in sets and sets:
                out.append(f"baseline {path} has no entry for eval set {name} (it has {', '.join(sets)}): "
                           f"if the set was renamed, name it as before with --name")
        return out


def load_baseline(path: str | os.PathLike) -> Baseline:
    """Read and check a baseline file; any problem is an :class:`InputError` naming the entry (1-based)."""
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise InputError(p, None, "no such baseline file", "create it with leakcheck baseline TRAIN EVAL -o " + p) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(p, None, f"not a JSON baseline ({exc})", _FIX) from None
    if not isinstance(doc, dict) or "leakcheck_baseline" not in doc or not isinstance(doc.get("entries"), list):
        raise InputError(p, None, "not a leakcheck baseline (no leakcheck_baseline version and entries list)", _FIX)
    if doc["leakcheck_baseline"] != BASELINE_VERSION:
        raise InputError(p, None, f"baseline version {doc['leakcheck_baseline']!r} is not {BASELINE_VERSION}", _FIX)
    params = doc.get("parameters", {})
    if not isinstance(params, dict):
        raise InputError(p, None, "parameters must be an object", _FIX)
    return Baseline(tuple(_entry(p, n, e) for n, e in enumerate(doc["entries"], 1)), params)


_ENTRY_KEYS = {f.name for f in dataclasses.fields(BaselineEntry)}


def _entry(path: str, n: int, e: Any) -> BaselineEntry:
    where = f"entry {n}"
    if not isinstance(e, dict):
        raise InputError(path, where, "must be an object", _FIX)
    missing = sorted({"eval_fingerprint", "train_fingerprint", "kind", "level"} - set(e))
    if missing:
        raise InputError(path, where, f"is missing {', '.join(missing)}", _FIX)
    if e["kind"] not in KINDS or e["level"] not in LEVELS:
        raise InputError(path, where, f"kind {e['kind']!r} / level {e['level']!r} is not one of {', '.join(KINDS)} / {', '.join(LEVELS)}", _FIX)
    for k in ("eval_fingerprint", "train_fingerprint", "eval_id", "snippet"):
        if not isinstance(e.get(k, ""), str):
            raise InputError(path, where, f"{k} must be a string", _FIX)
    ev = e.get("evidence", [])
    if not isinstance(ev, list) or not all(isinstance(x, str) and x.partition(":")[0] in KINDS and x.partition(":")[2] in LEVELS for x in ev):
        raise InputError(path, where, "evidence must be a list of kind:level strings such as \"prompt:near\"", _FIX)
    e = {**e, "evidence": tuple(ev)}
    if e.get("eval_set") is not None and not isinstance(e["eval_set"], str):
        raise InputError(path, where, "eval_set must be a string or null", _FIX)
    return BaselineEntry(**{"eval_set": None, "eval_id": "", **{k: v for k, v in e.items() if k in _ENTRY_KEYS}})


def apply_baseline(results: Mapping[str, ScanResult], baseline: Baseline, path: str) -> dict[str, ScanResult]:
    """Each result (by eval set name) with the findings ``baseline`` covers accepted, and its entries for that set that nothing matched as gone.

    Entries of eval sets not scanned are neither matched nor gone.
    """
    out = {}
    for name, r in results.items():
        accepted, used = [], set()
        for f in r.findings:
            e = baseline.entry_for(f)
            if e is not None:
                accepted.append(Accepted(f.eval_set, f.eval_fingerprint, f.train_fingerprint, f.kind, f.level, "baseline"))
                used.add(e)
        gone = tuple(e for e in baseline.entries if e.eval_set == name and e not in used)
        use = BaselineUse(path, len(accepted), len(r.findings) - len(accepted), gone)
        out[name] = dataclasses.replace(r, accepted=_merged(r.accepted, accepted), baseline=use)
    return out


def _merged(old: Sequence[Accepted], new: Sequence[Accepted]) -> tuple[Accepted, ...]:
    return tuple(dict.fromkeys([*old, *new]))


@dataclass(frozen=True)
class AllowEntry:
    """A known and accepted overlap: an eval id or a fingerprint (eval or train record), optionally of one eval set."""

    reason: str
    eval_id: str | None = None
    fingerprint: str | None = None
    eval_set: str | None = None

    def matches(self, f: Finding) -> bool:
        if self.eval_set is not None and self.eval_set != f.eval_set:
            return False
        return f.eval_id == self.eval_id if self.eval_id is not None else self.fingerprint in (f.eval_fingerprint, f.train_fingerprint)

    def text(self) -> str:
        what = f"eval_id {self.eval_id!r}" if self.eval_id is not None else f"fingerprint {self.fingerprint}"
        return what + (f" of eval set {self.eval_set}" if self.eval_set else "")


_ALLOW_KEYS = ("eval_id", "fingerprint", "eval_set", "reason")


def parse_allowlist(entries: Any, where: str) -> list[AllowEntry]:
    """``[[allow]]`` tables as :class:`AllowEntry` objects; an entry without a reason is a :class:`UsageError`.

    >>> parse_allowlist([{"eval_id": "7", "reason": "public example, accepted"}], "leakcheck.toml")
    [AllowEntry(reason='public example, accepted', eval_id='7', fingerprint=None, eval_set=None)]
    >>> parse_allowlist([{"eval_id": "7"}], "leakcheck.toml")
    Traceback (most recent call last):
    ...
    leakcheck.errors.UsageError: leakcheck.toml: allow entry 1 has no reason; add reason = "why this overlap is accepted"
    """
    if not isinstance(entries, list):
        raise UsageError(f"{where}: allow must be a list of tables ([[allow]] entries)")
    out = []
    for n, e in enumerate(entries, 1):
        at = f"{where}: allow entry {n}"
        if not isinstance(e, dict):
            raise UsageError(f"{at} must be a table with eval_id or fingerprint, and reason")
        unknown = sorted(set(e) - set(_ALLOW_KEYS))
        if unknown:
            raise UsageError(f"{at}: unknown key {unknown[0]!r}; use {', '.join(_ALLOW_KEYS)}")
        bad = next((k for k in _ALLOW_KEYS if k in e and not (isinstance(e[k], str) and e[k].strip())), None)
        if bad:
            raise UsageError(f"{at}: {bad} must be a non-empty string")
        if "reason" not in e:
            raise UsageError(f'{at} has no reason; add reason = "why this overlap is accepted"')
        if ("eval_id" in e) == ("fingerprint" in e):
            raise UsageError(f"{at} must name exactly one of eval_id or fingerprint")
        out.append(AllowEntry(e["reason"], e.get("eval_id"), e.get("fingerprint"), e.get("eval_set")))
    return out


def load_allowlist(path: str | os.PathLike) -> list[AllowEntry]:
    """Read an allowlist file: a TOML file of ``[[allow]]`` tables."""
    import tomllib

    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"--allowlist {p}: no such file; name a TOML file of [[allow]] entries") from None
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--allowlist {p}: not a readable TOML file ({exc}); fix the file") from None
    extra = sorted(set(doc) - {"allow"})
    if extra:
        raise UsageError(f"--allowlist {p}: unknown key {extra[0]!r}; the file holds [[allow]] entries only")
    return parse_allowlist(doc.get("allow", []), p)


def apply_allowlist(results: Mapping[str, ScanResult], entries: Sequence[AllowEntry]) -> tuple[dict[str, ScanResult], list[str]]:
    """Every result with the findings an entry matches accepted (with its reason), and a warning per entry that matched nothing."""
    used: set[AllowEntry] = set()
    out = {}
    for name, r in results.items():
        accepted = []
        for f in r.findings:
            hit = next((e for e in entries if e.matches(f)), None)
            if hit is not None:
                used.add(hit)
                accepted.append(Accepted(f.eval_set, f.eval_fingerprint, f.train_fingerprint, f.kind, f.level, "allowlist", hit.reason))
        unused = tuple(f"{e.text()} ({e.reason})" for e in entries if e.eval_set in (None, name) and not any(e.matches(f) for f in r.findings))
        out[name] = dataclasses.replace(r, accepted=_merged(r.accepted, accepted), allow_unused=unused)
    stale = [f"allowlist entry {e.text()} ({e.reason}) matched no finding: remove it if the overlap is gone" for e in entries if e not in used]
    return out, stale


@dataclass(frozen=True)
class Accepting:
    """The baseline and allowlist a scan applies, read before the scan so that a bad file fails before the work."""

    baseline_path: str | None = None
    baseline: Baseline | None = None
    allowlist_path: str | None = None
    allow: tuple[AllowEntry, ...] = ()

    @classmethod
    def load(cls, baseline_path: str | None, allowlist_path: str | None, settings: LoadedConfig) -> "Accepting":
        """Options win over the configuration's ``baseline``/``allowlist`` (relative to the file); ``allow`` entries add up."""
        conf = settings.settings
        bpath = baseline_path or (settings.resolve(conf["baseline"]) if "baseline" in conf else None)
        apath = allowlist_path or (settings.resolve(conf["allowlist"]) if "allowlist" in conf else None)
        allow = [*parse_allowlist(conf.get("allow", []), settings.where), *(load_allowlist(apath) if apath else [])]
        return cls(bpath, load_baseline(bpath) if bpath else None, apath, tuple(allow))

    def inputs(self) -> list[tuple[str, str]]:
        """``(label, path)`` of the files read, so that no report is written over them."""
        return [(f"the {what} {p}", p) for what, p in (("baseline", self.baseline_path), ("allowlist", self.allowlist_path)) if p]

    def apply(self, results: Mapping[str, ScanResult], config: ScanConfig, config_file: str | None) -> tuple[dict[str, ScanResult], list[str]]:
        """The results with accepted findings marked and the configuration file named, and the warnings to print."""
        out, warnings = dict(results), []
        if self.baseline is not None and self.baseline_path is not None:
            warnings += self.baseline.warnings(config, self.baseline_path, list(out))
            out = apply_baseline(out, self.baseline, self.baseline_path)
        if self.allow:
            out, stale = apply_allowlist(out, self.allow)
            warnings += stale
        return {name: dataclasses.replace(r, config_file=config_file) for name, r in out.items()}, warnings
