"""Hub datasets by name: ``ORG/NAME[@REV][::[CONFIG/]SPLIT]`` and ``hf://datasets/ORG/NAME[...]``.

Naming rule: **a local path always wins; ``hf://`` is always the Hub.** A bare ``ORG/NAME...``
names a Hub dataset only when nothing exists on disk at the part before ``@``/``::`` (so a local
``data/train`` or ``data/train::test`` stays local) and NAME does not end in a data-file suffix
(a missing ``data/eval.jsonl`` is a missing file, not a dataset).

:func:`resolve` goes through ``huggingface_hub.snapshot_download``, so ``HF_HUB_OFFLINE``,
``HF_HUB_CACHE``, ``HF_TOKEN`` and a warm cache behave as in every Hugging Face tool, and the
revision is the commit sha of the snapshot folder used. (huggingface_hub reads ``HF_HUB_OFFLINE``
at import into ``constants.HF_HUB_OFFLINE``; then its HTTP layer refuses every request and
``snapshot_download`` answers from ``refs/`` and ``snapshots/`` in the cache, or raises.) Only the card (``README.md``) and the data
files of the asked config/split are fetched, picked by the rules ``datasets`` uses: the card's YAML
``configs:`` (``data_files``, ``data_dir``), else split names in file and folder names
(``data/test-00000-of-00001.parquet``, ``test.jsonl``, ``test/...``). Without ``configs:``, a
folder ``CONFIG/`` or ``data/CONFIG/`` whose files name their splits is a config too (the layout
of the ``refs/convert/parquet`` revision); the whole repo is config ``default``.

How the reader is meant to call it (not wired in yet)::

    spec = parse_hub_spec(text)
    if spec is not None:
        hub = resolve(spec)        # one-line InputError/UsageError on failure
        source = Source(text, hub.files, "files")
        # the report records hub.repo_id, hub.revision (commit sha), hub.config, hub.split

>>> parse_hub_spec("openai/gsm8k::socratic/test")
HubSpec(repo_id='openai/gsm8k', revision=None, config='socratic', split='test')
>>> parse_hub_spec("hf://datasets/my-org/rl-mix@refs%2Fconvert%2Fparquet::train")
HubSpec(repo_id='my-org/rl-mix', revision='refs/convert/parquet', config=None, split='train')
>>> parse_hub_spec("data/eval.jsonl") is None
True
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from ..errors import InputError, UsageError
from .sources import DATA_FILES_HINT, DATA_SUFFIXES, is_data_file

_URL_PREFIX = "hf://"
_URL_DATASETS = "hf://datasets/"
#: Suffixes that make a bare ``A/B`` a file name, never a dataset name.
_FILE_SUFFIXES = (*DATA_SUFFIXES, ".gz", ".zst", ".bz2", ".xz", ".txt", ".arrow", ".yaml", ".yml", ".md")
#: datasets' rule for split names (``datasets.naming._split_re``).
_SPLIT_NAME = re.compile(r"\w+(\.\w+)*")
_CARD = "README.md"


@dataclass(frozen=True)
class HubSpec:
    """A Hub dataset as named on the command line; ``None`` fields are chosen by :func:`resolve`.

    ``text`` is what the user wrote, for messages.

    >>> str(HubSpec("openai/gsm8k", "main", "socratic", "test"))
    'openai/gsm8k@main::socratic/test'
    """

    repo_id: str
    revision: str | None = None
    config: str | None = None
    split: str | None = None
    text: str = field(default="", compare=False, repr=False)

    def __str__(self) -> str:
        out = self.repo_id + (f"@{self.revision}" if self.revision else "")
        if self.split:
            out += "::" + (f"{self.config}/" if self.config else "") + self.split
        return out

    @property
    def label(self) -> str:
        return self.text or str(self)

    @property
    def bare(self) -> bool:
        """Written without ``hf://``: it could also have been meant as a local path."""
        return bool(self.text) and not self.text.startswith(_URL_PREFIX)


@dataclass(frozen=True)
class ResolvedHub:
    """A Hub dataset split in the local Hugging Face cache.

    ``local_dir`` is the snapshot folder, ``revision`` its commit sha, ``files`` the split's data
    files inside it (sorted repo paths). ``ignored`` lists the repo paths of the split's files in
    formats leakcheck does not read, so the caller can report them.
    """

    local_dir: str
    repo_id: str
    revision: str
    config: str
    split: str
    files: tuple[str, ...]
    ignored: tuple[str, ...] = ()


def parse_hub_spec(text: str) -> HubSpec | None:
    """The Hub dataset ``text`` names, or ``None`` if it is (or may only be) a local path.

    Raises :class:`UsageError` for an ``hf://`` address or a Hub name with a malformed part.
    """
    if text.startswith(_URL_PREFIX):
        return _parse_url(text)
    name = _name_part(text)
    if os.path.lexists(text) or os.path.lexists(name) or not _is_repo_id(name):
        return None
    return _parse(text, text)


def _name_part(body: str) -> str:
    return body.split("::", 1)[0].split("@", 1)[0]


def _is_repo_id(name: str) -> bool:
    if name.count("/") != 1 or name.lower().endswith(_FILE_SUFFIXES):
        return False
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def _parse_url(text: str) -> HubSpec:
    if not text.startswith(_URL_DATASETS):
        raise UsageError(f"{text}: only datasets can be scanned; write hf://datasets/ORG/NAME[@REV][::[CONFIG/]SPLIT]")
    body = text[len(_URL_DATASETS):]
    if not _is_repo_id(_name_part(body)):
        raise UsageError(f"{text}: {_name_part(body)!r} is not a dataset name; write hf://datasets/ORG/NAME[@REV][::[CONFIG/]SPLIT]")
    spec = _parse(body, text)
    # HfFileSystem writes a revision with slashes percent-encoded (refs%2Fconvert%2Fparquet)
    return HubSpec(spec.repo_id, spec.revision and unquote(spec.revision), spec.config, spec.split, text)


def _parse(body: str, text: str) -> HubSpec:
    ref, sep, selection = body.partition("::")
    repo_id, at, revision = ref.partition("@")
    if at and not revision:
        raise UsageError(f"{text}: nothing after '@'; write ORG/NAME@REV with a branch, tag or commit")
    config, split = _selection(selection, text) if sep else (None, None)
    return HubSpec(repo_id, revision or None, config, split, text)


def _selection(selection: str, text: str) -> tuple[str | None, str]:
    config, slash, split = selection.rpartition("/")
    if not split or (slash and not config):
        raise UsageError(f"{text}: {selection!r} is not a split; write ORG/NAME::SPLIT or ORG/NAME::CONFIG/SPLIT")
    if not _SPLIT_NAME.fullmatch(split):
        raise UsageError(f"{text}: {split!r} is not a split name; split names are letters, digits, '_' and '.'")
    return config or None, split


# --- resolution ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Repo:
    """One snapshot of a repo: its folder, commit and file list (``complete``: the whole repo's)."""

    spec: HubSpec
    snapshot: str
    sha: str
    files: tuple[str, ...]
    complete: bool


@dataclass(frozen=True)
class _Config:
    """A config: its folder (``data_dir``), and split -> ``data_files`` patterns, or ``None`` to infer them.

    ``declared``: named in the card, so it exists whatever part of the repo is cached.
    """

    name: str
    base: str = ""
    patterns: dict[str, list[str]] | None = None
    default: bool = False
    declared: bool = False


def resolve(spec: HubSpec) -> ResolvedHub:
    """Find ``spec`` in the Hugging Face cache, downloading what is missing unless offline.

    Raises a one-line :class:`InputError` (not cached, Hub unreachable, nothing readable) or
    :class:`UsageError` (no such repo, revision, config or split; several to choose from).
    """
    with _hub_errors(spec):
        snapshot = _snapshot(spec, spec.revision, [_CARD])
    repo = _list_repo(spec, snapshot)
    configs = _configs(repo)
    config = _pick_config(repo, configs)
    split, paths = _pick_split(repo, config, _splits(repo, config), [c.name for c in configs])
    files = tuple(p for p in paths if _is_data(p))
    if not files:
        shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
        raise InputError(spec.label, None, f"split {split!r} holds no file leakcheck reads ({shown})", DATA_FILES_HINT)
    # a walked listing holds only files on disk; the Hub was not reached for it, so do not retry it
    if repo.complete and (absent := _absent(snapshot, files)):
        with _hub_errors(spec, absent):
            _snapshot(spec, repo.sha, [glob.escape(p) for p in files])
    if absent := _absent(snapshot, files):
        raise _not_cached(spec, absent)
    local = tuple(os.path.join(snapshot, *p.split("/")) for p in files)
    ignored = tuple(p for p in paths if p not in files)
    return ResolvedHub(snapshot, spec.repo_id, repo.sha, config.name, split, local, ignored)


def _snapshot(spec: HubSpec, revision: str | None, patterns: list[str]) -> str:
    from huggingface_hub import snapshot_download

    from .. import __version__

    return snapshot_download(
        spec.repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns,
        library_name="leakcheck", library_version=__version__,
    )


def _list_repo(spec: HubSpec, snapshot: str) -> _Repo:
    """The repo's files: huggingface_hub's cached tree listing, else what the snapshot folder holds."""
    from huggingface_hub import get_cached_repo_tree
    from huggingface_hub.errors import CachedRepoTreeNotFoundError

    sha = os.path.basename(snapshot)
    try:
        tree = get_cached_repo_tree(spec.repo_id, repo_type="dataset", revision=sha)
        return _Repo(spec, snapshot, sha, tuple(sorted(f.path for f in tree)), True)
    except CachedRepoTreeNotFoundError:
        # a cache written by an older huggingface_hub, or by a download limited to some files
        return _Repo(spec, snapshot, sha, tuple(_walk(snapshot)), False)


def _walk(folder: str) -> list[str]:
    found = []
    for root, _dirs, names in os.walk(folder):
        rel = os.path.relpath(root, folder).replace(os.sep, "/")
        found += [posixpath.normpath(posixpath.join(rel, n)) for n in names if os.path.isfile(os.path.join(root, n))]
    return sorted(found)


def _absent(snapshot: str, files: Sequence[str]) -> str | None:
    """What is missing from the snapshot folder, said for a message, or ``None``."""
    absent = [p for p in files if not os.path.isfile(os.path.join(snapshot, p))]
    if not absent:
        return None
    if len(absent) == 1:
        return f"{absent[0]} is not in the Hugging Face cache"
    return f"{absent[0]} and {len(absent) - 1} more file(s) are not in the Hugging Face cache"


@contextmanager
def _hub_errors(spec: HubSpec, absent: str | None = None) -> Iterator[None]:
    """Turn huggingface_hub's exceptions into one line naming ``spec`` and the fix.

    ``absent``: what is known to be missing from the cache, for the message.
    """
    from huggingface_hub import errors as e

    login = "log in with `hf auth login` (or set HF_TOKEN)"
    page = f"https://huggingface.co/datasets/{spec.repo_id}"
    try:
        yield
    except e.GatedRepoError:
        raise UsageError(f"{spec.label}: the dataset {spec.repo_id} is gated; accept its conditions at {page} and {login}") from None
    except e.RepositoryNotFoundError:
        local = f"no local path {_name_part(spec.label)!r}, and " if spec.bare else ""
        raise UsageError(f"{spec.label}: {local}no dataset {spec.repo_id} on the Hub (or it is private); check the name, or {login}") from None
    except e.RevisionNotFoundError:
        raise UsageError(f"{spec.label}: the dataset {spec.repo_id} has no revision {spec.revision!r}; name a branch, tag or commit that exists") from None
    except e.LocalEntryNotFoundError:  # includes IncompleteSnapshotError
        raise _not_cached(spec, absent) from None
    except e.HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "an error"
        raise InputError(spec.label, None, f"the Hugging Face Hub answered {status}", "try again later, or check HF_TOKEN and HF_ENDPOINT") from None
    except OSError as exc:  # the cache folder is not writable, the disk is full, ...
        raise InputError(spec.label, None, f"cannot use the Hugging Face cache ({exc})", "check HF_HUB_CACHE and its permissions") from None


def _not_cached(spec: HubSpec, what: str | None = None) -> InputError:
    from huggingface_hub import constants

    download = f"`hf download {spec.repo_id} --repo-type dataset" + (f" --revision {spec.revision}" if spec.revision else "") + "`"
    what = what or ("no such local path, and " if spec.bare else "") + f"the Hub dataset {spec.repo_id} is not in the Hugging Face cache"
    if constants.is_offline_mode():
        return InputError(spec.label, None, f"{what} while HF_HUB_OFFLINE is set", f"set HF_HUB_OFFLINE=0 or run {download}")
    fix = f"check the network (and HF_ENDPOINT), or run {download} where the Hub is reachable"
    return InputError(spec.label, None, f"{what} and the Hub cannot be reached", fix)


# --- configs and splits, as datasets finds them --------------------------------------------


def _configs(repo: _Repo) -> list[_Config]:
    card = _card(repo)
    if card.get("configs"):
        return _yaml_configs(repo, card["configs"])
    folders = _folder_configs(repo.files)
    # a repo made only of config folders has no default: the user picks one
    in_folders = {p for p in repo.files if any(p.startswith(c.base + "/") for c in folders)}
    has_rest = any(_is_data(p) and p not in in_folders for p in repo.files)
    return [_Config("default", default=has_rest or len(folders) < 2), *folders]


def _card(repo: _Repo) -> dict[str, Any]:
    path = os.path.join(repo.snapshot, _CARD)
    if not os.path.isfile(path):
        return {}
    import yaml
    from huggingface_hub.repocard import metadata_load

    try:
        return metadata_load(path) or {}
    except (yaml.YAMLError, ValueError) as exc:
        what = f"the YAML header of {repo.spec.repo_id}'s README.md does not parse ({_yaml_problem(exc)})"
        raise InputError(repo.spec.label, None, what, "fix the dataset card") from None


def _yaml_problem(exc: Exception) -> str:
    import yaml

    mark = getattr(exc, "problem_mark", None)
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem and mark is not None:
        return f"{exc.problem} at line {mark.line + 2}"  # the header starts on the card's line 2, after '---'
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _yaml_configs(repo: _Repo, raw: Any) -> list[_Config]:
    """The card's ``configs:`` list, read as ``datasets.utils.metadata.MetadataConfigs`` reads it."""
    from datasets.data_files import sanitize_patterns

    def bad(detail: str) -> InputError:
        return InputError(repo.spec.label, None, f"the configs: list in {repo.spec.repo_id}'s README.md is malformed ({detail})", "fix the dataset card")

    if not isinstance(raw, list):
        raise bad("it is not a list")
    configs = []
    for i, item in enumerate(raw, 1):
        if not isinstance(item, dict) or not isinstance(item.get("config_name"), str):
            raise bad(f"entry {i} has no config_name")
        patterns = None
        if item.get("data_files") is not None:
            try:
                patterns = {s: [str(p) for p in ps] for s, ps in sanitize_patterns(item["data_files"]).items()}
            except ValueError as exc:
                raise bad(f"config {item['config_name']!r}: {str(exc).strip().splitlines()[0]}") from None
        name = item["config_name"]
        default = len(raw) == 1 or name == "default" or bool(item.get("default"))
        configs.append(_Config(name, str(item.get("data_dir") or "").strip("/"), patterns, default, declared=True))
    return configs


def _folder_configs(files: Sequence[str]) -> list[_Config]:
    """Folders ``CONFIG/`` and ``data/CONFIG/`` holding data files, unless the folder name is a split's."""
    found: dict[str, str] = {}
    for p in files:
        parts = p.split("/")
        if not _is_data(p) or len(parts) < 2 or (parts[0] == "data" and len(parts) < 3):
            continue
        base = "/".join(parts[:2]) if parts[0] == "data" else parts[0]
        name = posixpath.basename(base)
        if not name.startswith((".", "__")) and not _is_split_folder(name):
            found.setdefault(name, base)
    return [_Config(name, base) for name, base in sorted(found.items())]


@lru_cache(maxsize=1024)
def _is_split_folder(name: str) -> bool:
    from datasets.data_files import DEFAULT_PATTERNS_SPLIT_IN_DIR_NAME

    return any(_match(p, f"{name}/x") for ps in DEFAULT_PATTERNS_SPLIT_IN_DIR_NAME.values() for p in ps)


def _is_data(path: str) -> bool:
    return is_data_file(path)


def _splits(repo: _Repo, config: _Config) -> dict[str, list[str]]:
    """Split -> the repo paths of its files, in the order datasets lists the splits."""
    prefix = config.base + "/" if config.base else ""
    under = [p[len(prefix):] for p in repo.files if p.startswith(prefix)]
    patterns = config.patterns if config.patterns is not None else _infer(repo, config, under)
    return {split: sorted({prefix + p for pattern in ps for p in _glob(pattern, under)}) for split, ps in patterns.items()}


def _infer(repo: _Repo, config: _Config, files: list[str]) -> dict[str, list[str]]:
    """datasets' own inference of split patterns from file and folder names."""
    from datasets.data_files import _get_data_files_patterns

    try:
        patterns = _get_data_files_patterns(lambda pattern: _glob(pattern, files))
        return {str(split): list(ps) for split, ps in patterns.items()}  # keys may be datasets.NamedSplit
    except FileNotFoundError:
        return {}
    except ValueError:  # datasets refuses a shard whose split part is not a split name
        fix = "rename it SPLIT-00000-of-00001.EXT, or list the files in the card's configs:"
        raise InputError(repo.spec.label, None, _bad_shard(config, files), fix) from None


def _bad_shard(config: _Config, files: list[str]) -> str:
    from datasets.data_files import SPLIT_PATTERN_SHARDED

    def split_of(shard: str) -> str:
        return posixpath.basename(shard).rsplit("-", 3)[0]  # NAME-00000-of-00001.EXT

    shards = _glob(SPLIT_PATTERN_SHARDED.replace("{split}", "*"), files)
    bad = next((f for f in shards if not _SPLIT_NAME.fullmatch(split_of(f))), shards[0] if shards else "?")
    prefix = config.base + "/" if config.base else ""
    return f"the shard {prefix}{bad} names split {split_of(bad)!r}, which is not a split name (letters, digits, '_' and '.')"


def _glob(pattern: str, files: Sequence[str]) -> list[str]:
    """``files`` that ``pattern`` matches, as ``datasets.data_files.resolve_pattern`` matches them."""
    from datasets.data_files import (
        FILES_TO_IGNORE,
        _is_inside_unrequested_special_dir,
        _is_unrequested_hidden_file_or_is_inside_unrequested_hidden_dir,
    )

    ignore = set(FILES_TO_IGNORE) - {posixpath.basename(pattern)}
    return [
        f for f in files
        if _match(pattern, f) and posixpath.basename(f) not in ignore
        and not _is_inside_unrequested_special_dir(f, pattern)
        and not _is_unrequested_hidden_file_or_is_inside_unrequested_hidden_dir(f, pattern)
    ]


def _match(pattern: str, path: str) -> bool:
    return _compiled(pattern)(path) is not None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Callable[[str], re.Match[str] | None]:
    # fsspec's glob semantics, which datasets' patterns are written for ('**' crosses folders)
    from fsspec.utils import glob_translate

    return re.compile(glob_translate(pattern)).match


def _pick_config(repo: _Repo, configs: list[_Config]) -> _Config:
    spec, names = repo.spec, ", ".join(c.name for c in configs)
    if spec.config is not None:
        for c in configs:
            if c.name == spec.config:
                return c
        raise _unknown(repo, f"{spec.repo_id} has no config {spec.config!r}", f"configs: {names}", any(c.declared for c in configs))
    defaults = [c for c in configs if c.default]
    if len(defaults) == 1:
        return defaults[0]
    if spec.split in {c.name for c in configs}:
        raise _config_not_split(spec)
    example = f"{spec.repo_id}::{configs[-1].name}/{spec.split or 'SPLIT'}"
    raise UsageError(f"{spec.label}: {spec.repo_id} has configs {names} and none is the default; name one, e.g. {example}")


def _pick_split(repo: _Repo, config: _Config, splits: dict[str, list[str]], configs: list[str]) -> tuple[str, list[str]]:
    spec, names = repo.spec, ", ".join(splits)
    where = f"{spec.repo_id}" + (f" config {config.name!r}" if config.name != "default" else "")
    if not splits:
        if not repo.complete:
            raise _not_cached(spec, f"no data files of {where} are in the Hugging Face cache")
        raise InputError(spec.label, None, f"{where} holds no data files", "pick another config or dataset")
    if spec.split is None:
        if len(splits) == 1:
            split = next(iter(splits))
            return split, _nonempty(repo, config, split, splits[split])
        example = f"{spec.repo_id}::" + (f"{config.name}/" if spec.config else "") + list(splits)[-1]
        raise UsageError(f"{spec.label}: {where} has splits {names}; name one, e.g. {example}")
    if spec.split not in splits:
        if spec.config is None and spec.split in configs:
            raise _config_not_split(spec)
        raise _unknown(repo, f"{where} has no split {spec.split!r}", f"splits: {names}", config.patterns is not None)
    return spec.split, _nonempty(repo, config, spec.split, splits[spec.split])


def _nonempty(repo: _Repo, config: _Config, split: str, paths: list[str]) -> list[str]:
    if paths:
        return paths
    if not repo.complete:
        raise _not_cached(repo.spec, f"the files of split {split!r} are not in the Hugging Face cache")
    patterns = ", ".join((config.patterns or {}).get(split, []))
    what = f"the data_files of config {config.name!r} split {split!r} ({patterns}) match no file at commit {repo.sha}"
    raise InputError(repo.spec.label, None, what, "fix the configs: list of the dataset card")


def _config_not_split(spec: HubSpec) -> UsageError:
    return UsageError(f"{spec.label}: {spec.split!r} is a config of {spec.repo_id}, not a split; write {spec.repo_id}::{spec.split}/SPLIT")


def _unknown(repo: _Repo, what: str, fix: str, declared: bool) -> UsageError:
    if not (repo.complete or declared):
        from huggingface_hub import constants

        why = "set HF_HUB_OFFLINE=0 to see the whole repo" if constants.is_offline_mode() else "the Hub could not be reached"
        fix += f" (only files already in the Hugging Face cache were seen; {why})"
    return UsageError(f"{repo.spec.label}: {what}; {fix}")
