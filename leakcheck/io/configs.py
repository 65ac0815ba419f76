"""Configs and splits of a local dataset repo, laid out the way the Hugging Face Hub lays them out.

A repo's configs come from its dataset card (``README.md`` YAML ``configs:`` with
``data_files`` or ``data_dir``), else from its folders: ``CONFIG/SPLIT-*.parquet``,
``data/CONFIG/...`` or the parquet-converted ``CONFIG/SPLIT/0000.parquet``. A repo with
several configs is never merged: ``FOLDER::CONFIG/SPLIT`` picks one, anything less is an
error that lists them.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> for c in ("main", "socratic"):
...     os.makedirs(os.path.join(d, c))
...     _ = open(os.path.join(d, c, "test.jsonl"), "w")
>>> [os.path.relpath(f, d) for f in open_selection(d, "socratic/test").files]
['socratic/test.jsonl']
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from ..errors import InputError
from ..result import UnreadFile
from .sources import Source, check_link, gather, split_of, walk


@dataclass(frozen=True)
class _Config:
    """One ``configs:`` entry of a dataset card: split -> glob patterns (empty: splits from file names)."""

    name: str
    splits: dict[str, tuple[str, ...]]
    data_dir: str | None = None
    default: bool = False


def _rel(folder: str, path: str) -> str:
    return os.path.relpath(path, folder).replace(os.sep, "/")


def layout_config(relpath: str) -> str | None:
    """The config folder a file sits in: ``main/test-0.parquet`` -> ``main``; ``data/test.jsonl`` -> None."""
    parts = relpath.split("/")[:-1]
    if parts and parts[0] == "data":
        parts = parts[1:]
    return parts[0] if parts and split_of(parts[0] + "/") is None else None


def _patterns(value: object, readme: str, name: str) -> dict[str, tuple[str, ...]]:
    """``data_files`` in any of the shapes the Hub accepts, as split -> patterns."""
    bad = InputError(readme, None, f"config {name}: data_files must be a path, a list of paths or a list of {{split, path}}",
                     "fix the configs: section of the YAML header")

    def paths(v: object) -> tuple[str, ...]:
        if isinstance(v, str):
            return (v,)
        if isinstance(v, list) and all(isinstance(p, str) for p in v):
            return tuple(v)
        raise bad

    if value is None:
        return {}
    if isinstance(value, (str, list)) and (isinstance(value, str) or all(isinstance(v, str) for v in value)):
        return {"train": paths(value)}
    if isinstance(value, dict):
        return {str(k): paths(v) for k, v in value.items()}
    if isinstance(value, list) and all(isinstance(v, dict) and "split" in v and "path" in v for v in value):
        out: dict[str, tuple[str, ...]] = {}
        for v in value:
            out[str(v["split"])] = out.get(str(v["split"]), ()) + paths(v["path"])
        return out
    raise bad


def card_configs(folder: str) -> list[_Config]:
    """The ``configs:`` of ``folder/README.md``; empty when there is no card or no such section."""
    readme = os.path.join(folder, "README.md")
    if not os.path.isfile(readme):
        return []
    import yaml
    from huggingface_hub.repocard import metadata_load

    try:
        meta = metadata_load(readme) or {}
    except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(readme, None, f"the YAML header cannot be read ({str(exc).splitlines()[0][:100]})",
                         "fix the header between the --- lines") from None
    confs = meta.get("configs")
    if not confs:
        return []
    if not isinstance(confs, list) or not all(isinstance(c, dict) and isinstance(c.get("config_name"), str) for c in confs):
        raise InputError(readme, None, "configs: must be a list of entries with a config_name", "fix the configs: section of the YAML header")
    return [
        _Config(c["config_name"], _patterns(c.get("data_files"), readme, c["config_name"]),
                c.get("data_dir") if isinstance(c.get("data_dir"), str) else None, c.get("default") is True)
        for c in confs
    ]


def _several(where: str, names: list[str], default: str | None, split: str) -> InputError:
    shown = ", ".join(n + (" (default)" if n == default else "") for n in names)
    folder = where.rsplit("::", 1)[0]
    return InputError(where, None, f"the dataset has several configs ({shown})", f"pick one, e.g. {folder}::{names[0]}/{split}")


def check_one_config(folder: str, files: list[str]) -> None:
    """A whole folder is one config's data; a folder holding several is an error listing them."""
    confs = card_configs(folder)
    if len(confs) > 1:
        default = next((c.name for c in confs if c.default), None)
        split = "test" if "test" in confs[0].splits or not confs[0].splits else next(iter(confs[0].splits))
        raise _several(folder, [c.name for c in confs], default, split)
    if confs:
        return
    by_config: dict[str, set[str]] = {}
    for f in files:
        rel = _rel(folder, f)
        if (sp := split_of(rel)) and (c := layout_config(rel)):
            by_config.setdefault(c, set()).add(sp)
    if len(by_config) > 1:
        names = sorted(by_config)
        raise _several(folder, names, None, sorted(by_config[names[0]])[-1])


def open_selection(folder: str, selector: str) -> Source:
    """``FOLDER::SPLIT``, ``FOLDER::CONFIG/SPLIT`` or ``FOLDER::CONFIG`` (a config with one split)."""
    whole = f"{folder}::{selector}"
    check_link(folder)
    if not os.path.isdir(folder):
        raise InputError(whole, None, f"no such folder {folder}", "FOLDER::SPLIT needs a dataset folder")
    if os.path.isfile(os.path.join(folder, "dataset_dict.json")):
        sub = os.path.join(folder, selector)
        if not os.path.isdir(sub):
            names = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
            raise InputError(whole, None, f"the DatasetDict has no split {selector!r}", f"choose one of {', '.join(names)}")
        return Source(whole, (sub,), "hf")
    config, split = selector.rsplit("/", 1) if "/" in selector else (None, selector)
    confs = card_configs(folder)
    if confs:
        files, unread = _from_card(folder, whole, confs, config, split)
    else:
        files, unread = _from_layout(folder, whole, config, split)
    return Source(whole, tuple(files), "files", tuple(unread))


def _from_card(folder: str, whole: str, confs: list[_Config], config: str | None, split: str) -> tuple[list[str], list[UnreadFile]]:
    by_name = {c.name: c for c in confs}
    if config is None and split in by_name and len(confs) > 1:  # FOLDER::CONFIG
        config, split = split, ""
    if config is None:
        if len(confs) > 1:
            raise _several(whole, list(by_name), next((c.name for c in confs if c.default), None), split)
        conf = confs[0]
    elif config in by_name:
        conf = by_name[config]
    else:
        raise InputError(whole, None, f"the dataset card names no config {config!r}", f"configs: {', '.join(by_name)}")
    base = os.path.join(folder, conf.data_dir) if conf.data_dir else folder
    if not conf.splits:
        return _pick_split(base, whole, walk(base), conf.name, split)
    if split not in conf.splits:
        known = ", ".join(conf.splits)
        if split == "" and len(conf.splits) == 1:
            split = known
        else:
            raise InputError(whole, None, f"config {conf.name} has no split {split!r}" if split else f"config {conf.name} has several splits",
                             f"splits: {known}; e.g. {folder}::{conf.name}/{next(iter(conf.splits))}")
    files: list[str] = []
    unread: list[UnreadFile] = []
    for pat in conf.splits[split]:
        matches = sorted(glob.glob(os.path.join(base, pat), recursive=True))
        if not matches:
            raise InputError(whole, None, f"the data_files pattern {pat} of config {conf.name}, split {split}, matches no files",
                             "download the data files too (hf download fetches the whole repo) or fix README.md")
        found, left = gather(matches)
        files += found
        unread += left
    if not files:
        raise InputError(whole, None, f"config {conf.name}, split {split}: its data_files hold no data files", "see the unread files")
    return list(dict.fromkeys(files)), unread


def _from_layout(folder: str, whole: str, config: str | None, split: str) -> tuple[list[str], list[UnreadFile]]:
    files, unread = walk(folder)
    configs = sorted({c for f in files if split_of(_rel(folder, f)) and (c := layout_config(_rel(folder, f)))})
    if config is None and split in configs and split_of(split + "/") is None:  # FOLDER::CONFIG
        config, split = split, ""
    if config is not None:
        if config not in configs:
            found = f"configs: {', '.join(configs)}" if configs else "the folder has no config folders (CONFIG/SPLIT-*.parquet)"
            raise InputError(whole, None, f"no config {config!r}", found)
        files = [f for f in files if layout_config(_rel(folder, f)) == config]
        unread = [u for u in unread if layout_config(_rel(folder, u.path)) == config]
    return _pick_split(folder, whole, (files, unread), config, split, configs if config is None else [])


def _pick_split(base: str, whole: str, walked: tuple[list[str], list[UnreadFile]], config: str | None, split: str,
                configs: list[str] | None = None) -> tuple[list[str], list[UnreadFile]]:
    """The files whose path names ``split``; unread files naming it are kept for the report."""
    files, unread = walked
    found: dict[str, list[str]] = {}
    for f in files:
        found.setdefault(split_of(_rel(base, f)) or "", []).append(f)
    named = sorted(k for k in found if k)
    if split == "":
        if len(named) != 1:
            raise InputError(whole, None, f"config {config} has several splits ({', '.join(named)})" if named else f"config {config} names no split",
                             f"pick one, e.g. {whole}/{named[-1] if named else 'train'}")
        split = named[0]
    if split.lower() not in found:
        raise InputError(whole, None, f"no data files of split {split!r}", f"splits found: {', '.join(named) or 'none named in the file paths'}")
    picked = found[split.lower()]
    if configs:
        in_split = sorted({c for f in picked if (c := layout_config(_rel(base, f)))})
        if len(in_split) > 1:
            raise _several(whole, in_split, None, split)
    return picked, [u for u in unread if split_of(_rel(base, u.path)) == split.lower()]
