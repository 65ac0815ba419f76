"""Issue 9: Hub datasets by name, resolved through huggingface_hub's real cache code.

Every test lays out a Hugging Face cache in tmp_path exactly as huggingface_hub writes it
(``datasets--ORG--NAME/{blobs,refs,snapshots}``, snapshot entries are relative symlinks into
``blobs/``) and lets ``huggingface_hub.snapshot_download`` find things there; nothing is mocked.

huggingface_hub reads ``HF_HUB_OFFLINE``, ``HF_HUB_CACHE`` and ``HF_ENDPOINT`` into
``huggingface_hub.constants`` once, at import, and its code consults those constants at call time.
The package is already imported when a test runs, so setting the environment alone is not enough:
the fixture sets both the environment and the constants.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import socket
import threading
import urllib.parse
from pathlib import Path

import huggingface_hub.constants as hf_constants
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import leakcheck
from leakcheck import InputError, ScanConfig, UsageError
from leakcheck.io import iter_rows, open_source
from leakcheck.io.hub import HubSpec, ResolvedHub, parse_hub_spec, resolve

from .conftest import SHARED_DATA, needs_shared
from .helpers import triples

SHA = "0123456789abcdef0123456789abcdef01234567"
SHA2 = "fedcba9876543210fedcba9876543210fedcba98"

#: The card of the committed GSM8K fixture repo (tests/fixtures/make_gsm8k_repo.py): two configs, train and test each.
GSM8K_CARD = (Path(__file__).parent / "fixtures" / "gsm8k_repo" / "README.md").read_text()


def parquet(rows: list[dict]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    return buf.getvalue()


def gsm8k_files() -> dict[str, bytes | str]:
    def qa(config: str, split: str) -> bytes:
        return parquet([{"question": f"{config} {split} question: what is 2+2?", "answer": f"{config} {split} #### 4"}])

    files: dict[str, bytes | str] = {"README.md": GSM8K_CARD, ".gitattributes": "*.parquet filter=lfs diff=lfs merge=lfs -text\n"}
    for config in ("main", "socratic"):
        for split in ("train", "test"):
            files[f"{config}/{split}-00000-of-00001.parquet"] = qa(config, split)
    return files


def write_repo(cache: Path, repo_id: str, files: dict[str, bytes | str], *, sha: str = SHA, refs: tuple[str, ...] = ("main",),
               tree: dict[str, bytes | str] | None = None) -> Path:
    """Lay out ``files`` of dataset ``repo_id`` at commit ``sha`` as huggingface_hub caches them.

    ``tree``: also write the cached tree listing (``trees/<sha>.json``) huggingface_hub >= 1.23
    keeps, listing these files (the whole repo, of which ``files`` may be only the part downloaded).
    """
    storage = cache / ("datasets--" + repo_id.replace("/", "--"))
    snapshot = storage / "snapshots" / sha
    for path, content in files.items():
        data = content.encode() if isinstance(content, str) else content
        blob = storage / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / path
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    for ref in refs:
        (storage / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (storage / "refs" / ref).write_text(sha)  # no newline, as huggingface_hub writes it
    if tree is not None:
        listing = {}
        for path, content in tree.items():
            data = content.encode() if isinstance(content, str) else content
            listing[path] = {"size": len(data), "blob_id": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()}
        (storage / "trees").mkdir(exist_ok=True)
        (storage / "trees" / f"{sha}.json").write_text(json.dumps({"format_version": 1, "files": listing}))
    return snapshot


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hugging Face cache with HF_HUB_OFFLINE=1; the working folder is empty too."""
    hub = tmp_path / "hub"
    hub.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    return hub


class FakeHub(http.server.ThreadingHTTPServer):
    """A local stand-in for the Hub's HTTP API serving one dataset at commit ``SHA``, or ``error``.

    ``error`` is (HTTP status, X-Error-Code) answered to every API call, as the Hub answers.
    ``requests`` records (method, path) of every request.
    """

    def __init__(self, repo_id: str, files: dict[str, bytes | str], error: tuple[int, str] | None = None):
        super().__init__(("127.0.0.1", 0), _FakeHubHandler)
        self.repo_id, self.error, self.requests = repo_id, error, []
        self.files = {p: c.encode() if isinstance(c, str) else c for p, c in files.items()}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _FakeHubHandler(http.server.BaseHTTPRequestHandler):
    server: FakeHub

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._route(head=False)

    def do_HEAD(self) -> None:
        self._route(head=True)

    def _route(self, head: bool) -> None:
        hub, path = self.server, urllib.parse.unquote(urllib.parse.urlparse(self.path).path)
        hub.requests.append((self.command, path))
        api, resolve_prefix = f"/api/datasets/{hub.repo_id}/", f"/datasets/{hub.repo_id}/resolve/{SHA}/"
        if path.startswith(api) and hub.error:
            return self._send(hub.error[0], b"{}", {"X-Error-Code": hub.error[1]}, head)
        if path.startswith(api + "revision/"):
            info = {"id": hub.repo_id, "sha": SHA, "siblings": [{"rfilename": p} for p in hub.files]}
            return self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, head)
        if path.startswith(api + "tree/"):
            tree = [{"type": "file", "path": p, "size": len(b), "oid": hashlib.sha1(b).hexdigest()} for p, b in hub.files.items()]
            return self._send(200, json.dumps(tree).encode(), {"Content-Type": "application/json"}, head)
        if path.startswith(resolve_prefix) and path[len(resolve_prefix):] in hub.files:
            data = hub.files[path[len(resolve_prefix):]]
            return self._send(200, data, {"X-Repo-Commit": SHA, "ETag": f'"{hashlib.sha1(data).hexdigest()}"'}, head)
        self._send(404, b"not here", {}, head)

    def _send(self, status: int, body: bytes, headers: dict[str, str], head: bool) -> None:
        self.send_response(status)
        for key, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)


@pytest.fixture
def online(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Online, against a :class:`FakeHub` started by ``online(repo_id, files, error=None)``."""
    servers: list[FakeHub] = []

    def start(repo_id: str, files: dict[str, bytes | str], error: tuple[int, str] | None = None) -> FakeHub:
        hub = FakeHub(repo_id, files, error)
        threading.Thread(target=hub.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(hub)
        point_at(hub.url)
        return hub

    def point_at(endpoint: str) -> None:
        monkeypatch.setattr(hf_constants, "ENDPOINT", endpoint)
        monkeypatch.setattr(hf_constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_IMPLICIT_TOKEN", True)  # never send a real token to the stand-in
    monkeypatch.setattr(hf_constants, "AGENT_HARNESSES_PATH", str(tmp_path / "agent_harnesses.json"))
    with socket.socket() as s:  # a port nothing listens on: the Hub cannot be reached
        s.bind(("127.0.0.1", 0))
        point_at(f"http://127.0.0.1:{s.getsockname()[1]}")
    yield start
    for hub in servers:
        hub.shutdown()
        hub.server_close()


def message(exc_type: type[Exception], spec: str) -> str:
    parsed = parse_hub_spec(spec)
    assert parsed is not None
    with pytest.raises(exc_type) as ei:
        resolve(parsed)
    return str(ei.value)


# --- naming ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("openai/gsm8k", HubSpec("openai/gsm8k")),
    ("openai/gsm8k::test", HubSpec("openai/gsm8k", split="test")),
    ("openai/gsm8k::socratic/test", HubSpec("openai/gsm8k", config="socratic", split="test")),
    ("openai/gsm8k@v1.0", HubSpec("openai/gsm8k", revision="v1.0")),
    ("openai/gsm8k@" + SHA + "::main/train", HubSpec("openai/gsm8k", SHA, "main", "train")),
    ("openai/gsm8k@refs/convert/parquet::main/test", HubSpec("openai/gsm8k", "refs/convert/parquet", "main", "test")),
    ("hf://datasets/openai/gsm8k@main::socratic/test", HubSpec("openai/gsm8k", "main", "socratic", "test")),
    ("hf://datasets/openai/gsm8k@refs%2Fconvert%2Fparquet::main/test", HubSpec("openai/gsm8k", "refs/convert/parquet", "main", "test")),
    ("hf://datasets/my-org/rl-mix", HubSpec("my-org/rl-mix")),
])
def test_hub_names(cache, text, expected):
    spec = parse_hub_spec(text)
    assert spec == expected
    assert spec is not None and spec.label == text


@pytest.mark.parametrize("text", [
    "eval.jsonl", "data/eval.jsonl", "data/eval.parquet", "shards/part.jsonl.gz", "a/b/c", "/abs/path", "./data/train",
    "data/*.jsonl", "s3://bucket/key", "org/na--me", "-org/name",
])
def test_not_hub_names(cache, text):
    assert parse_hub_spec(text) is None


def test_a_local_path_always_wins(cache):
    Path("data/train").mkdir(parents=True)
    Path("my-org").mkdir()
    Path("my-org/rl-mix").write_text("{}\n")
    assert parse_hub_spec("data/train") is None
    assert parse_hub_spec("data/train::test") is None  # the local FOLDER::SPLIT form
    assert parse_hub_spec("my-org/rl-mix") is None
    assert parse_hub_spec("my-org/rl-mix@v2::test") is None
    # hf:// is always the Hub, whatever is on disk
    assert parse_hub_spec("hf://datasets/data/train") == HubSpec("data/train")


@pytest.mark.parametrize(("text", "error"), [
    ("hf://models/openai/gpt2", "hf://models/openai/gpt2: only datasets can be scanned; write hf://datasets/ORG/NAME[@REV][::[CONFIG/]SPLIT]"),
    ("hf://datasets/gsm8k", "hf://datasets/gsm8k: 'gsm8k' is not a dataset name; write hf://datasets/ORG/NAME[@REV][::[CONFIG/]SPLIT]"),
    ("hf://datasets/openai/gsm8k/main/test.parquet",
     "hf://datasets/openai/gsm8k/main/test.parquet: 'openai/gsm8k/main/test.parquet' is not a dataset name; write hf://datasets/ORG/NAME[@REV][::[CONFIG/]SPLIT]"),
    ("openai/gsm8k::", "openai/gsm8k::: '' is not a split; write ORG/NAME::SPLIT or ORG/NAME::CONFIG/SPLIT"),
    ("openai/gsm8k::main/", "openai/gsm8k::main/: 'main/' is not a split; write ORG/NAME::SPLIT or ORG/NAME::CONFIG/SPLIT"),
    ("openai/gsm8k::test-1", "openai/gsm8k::test-1: 'test-1' is not a split name; split names are letters, digits, '_' and '.'"),
    ("openai/gsm8k@::test", "openai/gsm8k@::test: nothing after '@'; write ORG/NAME@REV with a branch, tag or commit"),
])
def test_malformed_hub_names(cache, text, error):
    with pytest.raises(UsageError) as ei:
        parse_hub_spec(text)
    assert str(ei.value) == error


# --- resolution through snapshot_download, offline --------------------------------------------


def test_resolves_config_and_split_from_the_card(cache):
    snapshot = write_repo(cache, "openai/gsm8k", gsm8k_files())
    spec = parse_hub_spec("openai/gsm8k::socratic/test")
    assert spec is not None
    hub = resolve(spec)
    assert hub == ResolvedHub(
        local_dir=str(cache / "datasets--openai--gsm8k" / "snapshots" / SHA),
        repo_id="openai/gsm8k", revision=SHA, config="socratic", split="test",
        files=(str(snapshot / "socratic" / "test-00000-of-00001.parquet"),),
    )
    rows = [r.data for r in iter_rows(open_source(hub.files[0]))]
    assert rows == [{"question": "socratic test question: what is 2+2?", "answer": "socratic test #### 4"}]


def test_the_other_config_and_the_url_form(cache):
    snapshot = write_repo(cache, "openai/gsm8k", gsm8k_files())
    hub = resolve(HubSpec("openai/gsm8k", "main", "main", "train", "hf://datasets/openai/gsm8k@main::main/train"))
    assert (hub.revision, hub.config, hub.split) == (SHA, "main", "train")
    assert hub.files == (str(snapshot / "main" / "train-00000-of-00001.parquet"),)


def test_several_configs_and_no_default(cache):
    write_repo(cache, "openai/gsm8k", gsm8k_files())
    assert message(UsageError, "openai/gsm8k::test") == (
        "openai/gsm8k::test: openai/gsm8k has configs main, socratic and none is the default; name one, e.g. openai/gsm8k::socratic/test")


def test_unknown_config_lists_the_configs(cache):
    write_repo(cache, "openai/gsm8k", gsm8k_files())
    assert message(UsageError, "openai/gsm8k::mian/test") == "openai/gsm8k::mian/test: openai/gsm8k has no config 'mian'; configs: main, socratic"


def test_unknown_split_lists_the_splits(cache):
    write_repo(cache, "openai/gsm8k", gsm8k_files())
    assert message(UsageError, "openai/gsm8k::main/validation") == (
        "openai/gsm8k::main/validation: openai/gsm8k config 'main' has no split 'validation'; splits: train, test")
    assert message(UsageError, "openai/gsm8k::main") == "openai/gsm8k::main: 'main' is a config of openai/gsm8k, not a split; write openai/gsm8k::main/SPLIT"


def test_default_config_in_the_card(cache):
    card = GSM8K_CARD.replace("- config_name: main\n", "- config_name: main\n  default: true\n")
    snapshot = write_repo(cache, "openai/gsm8k", {**gsm8k_files(), "README.md": card})
    hub = resolve(HubSpec("openai/gsm8k", split="test"))
    assert (hub.config, hub.files) == ("main", (str(snapshot / "main" / "test-00000-of-00001.parquet"),))
    assert message(UsageError, "openai/gsm8k::socratic") == "openai/gsm8k::socratic: 'socratic' is a config of openai/gsm8k, not a split; write openai/gsm8k::socratic/SPLIT"


def test_data_dir_in_the_card(cache):
    card = "---\nconfigs:\n- config_name: en\n  data_dir: data/en\n- config_name: fr\n  data_dir: data/fr\n---\n"
    files = {"README.md": card, "data/en/train.jsonl": '{"text": "hello"}\n', "data/en/test.jsonl": '{"text": "bye"}\n',
             "data/fr/train.jsonl": '{"text": "bonjour"}\n', "data/fr/test.jsonl": '{"text": "salut"}\n'}
    snapshot = write_repo(cache, "my-org/bilingual", files)
    hub = resolve(HubSpec("my-org/bilingual", config="fr", split="test"))
    assert hub.files == (str(snapshot / "data" / "fr" / "test.jsonl"),)


def test_split_names_in_file_names_without_a_card(cache):
    files = {"data/train-00000-of-00001.parquet": parquet([{"prompt": "p", "answer": "a"}]),
             "data/test-00000-of-00002.parquet": parquet([{"prompt": "q1", "answer": "a1"}]),
             "data/test-00001-of-00002.parquet": parquet([{"prompt": "q2", "answer": "a2"}])}
    snapshot = write_repo(cache, "my-org/rl-mix", files)
    hub = resolve(HubSpec("my-org/rl-mix", split="test"))
    assert (hub.config, hub.split) == ("default", "test")
    assert hub.files == (str(snapshot / "data/test-00000-of-00002.parquet"), str(snapshot / "data/test-00001-of-00002.parquet"))
    assert message(UsageError, "my-org/rl-mix") == "my-org/rl-mix: my-org/rl-mix has splits train, test; name one, e.g. my-org/rl-mix::test"


def test_plain_split_files_and_a_single_split(cache):
    snapshot = write_repo(cache, "my-org/qa", {"train.jsonl": '{"q": 1}\n', "test.jsonl": '{"q": 2}\n', "README.md": "# no YAML\n"})
    assert resolve(HubSpec("my-org/qa", split="train")).files == (str(snapshot / "train.jsonl"),)
    # one file, no split in its name: datasets calls it train, and it needs no ::SPLIT
    snapshot = write_repo(cache, "my-org/rl-mix", {"rl_mix.jsonl": '{"prompt": "p"}\n'})
    hub = resolve(HubSpec("my-org/rl-mix"))
    assert (hub.config, hub.split, hub.files) == ("default", "train", (str(snapshot / "rl_mix.jsonl"),))


def test_config_folders_without_a_card(cache):
    """The refs/convert/parquet layout: CONFIG/SPLIT/0000.parquet."""
    files = {f"{c}/{s}/0000.parquet": parquet([{"question": f"{c} {s}", "answer": "4"}]) for c in ("main", "socratic") for s in ("train", "test")}
    snapshot = write_repo(cache, "openai/gsm8k", files, sha=SHA2, refs=("refs/convert/parquet",))
    hub = resolve(HubSpec("openai/gsm8k", "refs/convert/parquet", "socratic", "test"))
    assert (hub.revision, hub.files) == (SHA2, (str(snapshot / "socratic/test/0000.parquet"),))
    assert message(UsageError, "openai/gsm8k@refs/convert/parquet::test") == (
        "openai/gsm8k@refs/convert/parquet::test: openai/gsm8k has configs default, main, socratic and none is the default;"
        " name one, e.g. openai/gsm8k::socratic/test")


def test_files_leakcheck_cannot_read(cache):
    write_repo(cache, "my-org/images", {"train/0001.png": b"\x89PNG", "train/0002.png": b"\x89PNG"})
    assert message(InputError, "my-org/images") == (
        "my-org/images: split 'train' holds no file leakcheck reads (train/0001.png, train/0002.png);"
        " data files end in .jsonl, .ndjson, .json, .csv, .tsv or .parquet (text ones also .gz, .bz2, .xz or .zst)")
    snapshot = write_repo(cache, "my-org/mixed", {"train/rows.jsonl": '{"q": 1}\n', "train/notes.pdf": b"%PDF"})
    hub = resolve(HubSpec("my-org/mixed"))
    assert (hub.files, hub.ignored) == ((str(snapshot / "train/rows.jsonl"),), ("train/notes.pdf",))


def test_revisions_tags_and_commits(cache):
    write_repo(cache, "openai/gsm8k", gsm8k_files(), sha=SHA, refs=("main",))
    snapshot2 = write_repo(cache, "openai/gsm8k", gsm8k_files(), sha=SHA2, refs=("v1.0",))
    assert resolve(HubSpec("openai/gsm8k", config="main", split="test")).revision == SHA
    assert resolve(HubSpec("openai/gsm8k", "v1.0", "main", "test")).local_dir == str(snapshot2)
    assert resolve(HubSpec("openai/gsm8k", SHA2, "main", "test")).revision == SHA2
    assert message(InputError, "openai/gsm8k@v2.0::main/test") == (
        "openai/gsm8k@v2.0::main/test: no such local path, and the Hub dataset openai/gsm8k is not in the Hugging Face cache"
        " while HF_HUB_OFFLINE is set; set HF_HUB_OFFLINE=0 or run `hf download openai/gsm8k --repo-type dataset --revision v2.0`")


def test_not_in_the_cache_while_offline(cache):
    assert message(InputError, "openai/gsm8k::test") == (
        "openai/gsm8k::test: no such local path, and the Hub dataset openai/gsm8k is not in the Hugging Face cache"
        " while HF_HUB_OFFLINE is set; set HF_HUB_OFFLINE=0 or run `hf download openai/gsm8k --repo-type dataset`")
    assert message(InputError, "hf://datasets/openai/gsm8k::test") == (
        "hf://datasets/openai/gsm8k::test: the Hub dataset openai/gsm8k is not in the Hugging Face cache"
        " while HF_HUB_OFFLINE is set; set HF_HUB_OFFLINE=0 or run `hf download openai/gsm8k --repo-type dataset`")


def test_split_missing_from_a_partial_cache_with_the_tree_listing(cache):
    """huggingface_hub knows the whole repo from its cached tree listing: a split not downloaded is not cached."""
    full = gsm8k_files()
    write_repo(cache, "openai/gsm8k", {p: c for p, c in full.items() if not p.startswith("socratic/")}, tree=full)
    assert resolve(HubSpec("openai/gsm8k", config="main", split="test")).split == "test"
    assert message(InputError, "openai/gsm8k::socratic/test") == (
        "openai/gsm8k::socratic/test: socratic/test-00000-of-00001.parquet is not in the Hugging Face cache"
        " while HF_HUB_OFFLINE is set; set HF_HUB_OFFLINE=0 or run `hf download openai/gsm8k --repo-type dataset`")


def test_split_missing_from_a_partial_cache_without_the_tree_listing(cache):
    """Only the folder on disk is known: the card's split matches no cached file, or the split is unseen."""
    full = gsm8k_files()
    write_repo(cache, "openai/gsm8k", {p: c for p, c in full.items() if not p.startswith("socratic/")})
    assert message(InputError, "openai/gsm8k::socratic/test") == (
        "openai/gsm8k::socratic/test: the files of split 'test' are not in the Hugging Face cache"
        " while HF_HUB_OFFLINE is set; set HF_HUB_OFFLINE=0 or run `hf download openai/gsm8k --repo-type dataset`")
    write_repo(cache, "my-org/qa", {"train.jsonl": '{"q": 1}\n'})
    assert message(UsageError, "my-org/qa::test") == (
        "my-org/qa::test: my-org/qa has no split 'test'; splits: train"
        " (only files already in the Hugging Face cache were seen; set HF_HUB_OFFLINE=0 to see the whole repo)")


def test_the_card_must_parse(cache):
    write_repo(cache, "my-org/qa", {"README.md": "---\nconfigs: [\n---\n", "train.jsonl": '{"q": 1}\n'})
    assert message(InputError, "my-org/qa") == (
        "my-org/qa: the YAML header of my-org/qa's README.md does not parse (expected the node content, but found '<stream end>' at line 2); fix the dataset card")
    write_repo(cache, "my-org/qb", {"README.md": "---\nconfigs:\n- data_files: x.jsonl\n---\n", "x.jsonl": '{"q": 1}\n'})
    assert message(InputError, "my-org/qb") == "my-org/qb: the configs: list in my-org/qb's README.md is malformed (entry 1 has no config_name); fix the dataset card"
    write_repo(cache, "my-org/qc", {"README.md": "---\nconfigs:\n- config_name: a\n  data_files:\n  - split: test\n    path: nothing/*\n---\n", "x.jsonl": "{}\n"},
               tree={"README.md": "", "x.jsonl": ""})
    assert message(InputError, "my-org/qc::test") == (
        f"my-org/qc::test: the data_files of config 'a' split 'test' (nothing/*) match no file at commit {SHA}; fix the configs: list of the dataset card")


# --- online: the Hub is a local stand-in, or cannot be reached ----------------------------------


def test_online_fetches_only_the_card_and_the_asked_split(cache, online):
    files = {"README.md": GSM8K_CARD, **{p: c for p, c in gsm8k_files().items() if p.endswith(".parquet")}}
    hub = online("openai/gsm8k", files)
    got = resolve(HubSpec("openai/gsm8k", config="socratic", split="test"))
    snapshot = cache / "datasets--openai--gsm8k" / "snapshots" / SHA
    assert (got.local_dir, got.revision, got.files) == (str(snapshot), SHA, (str(snapshot / "socratic/test-00000-of-00001.parquet"),))
    assert sorted(p for m, p in hub.requests if m == "GET" and "/resolve/" in p) == [
        f"/datasets/openai/gsm8k/resolve/{SHA}/README.md", f"/datasets/openai/gsm8k/resolve/{SHA}/socratic/test-00000-of-00001.parquet"]
    assert (cache / "datasets--openai--gsm8k" / "refs" / "main").read_text() == SHA
    assert [r.data["question"] for r in iter_rows(open_source(got.files[0]))] == ["socratic test question: what is 2+2?"]
    # then offline: the warm cache serves what was fetched, and knows what was not
    hf_constants.HF_HUB_OFFLINE = True
    assert resolve(HubSpec("openai/gsm8k", config="socratic", split="test")) == got
    assert message(InputError, "openai/gsm8k::main/test") == (
        "openai/gsm8k::main/test: main/test-00000-of-00001.parquet is not in the Hugging Face cache"
        " while HF_HUB_OFFLINE is set; set HF_HUB_OFFLINE=0 or run `hf download openai/gsm8k --repo-type dataset`")


def test_warm_cache_when_the_hub_cannot_be_reached(cache, online):
    snapshot = write_repo(cache, "openai/gsm8k", gsm8k_files())
    assert resolve(HubSpec("openai/gsm8k", config="main", split="test")).files == (str(snapshot / "main/test-00000-of-00001.parquet"),)
    assert message(InputError, "my-org/rl-mix::test") == (
        "my-org/rl-mix::test: no such local path, and the Hub dataset my-org/rl-mix is not in the Hugging Face cache"
        " and the Hub cannot be reached; check the network (and HF_ENDPOINT), or run `hf download my-org/rl-mix --repo-type dataset` where the Hub is reachable")


@pytest.mark.parametrize(("error", "spec", "expected"), [
    ((404, "RepoNotFound"), "my-org/rl-mxi::test",
     "my-org/rl-mxi::test: no local path 'my-org/rl-mxi', and no dataset my-org/rl-mxi on the Hub (or it is private);"
     " check the name, or log in with `hf auth login` (or set HF_TOKEN)"),
    ((404, "RepoNotFound"), "hf://datasets/my-org/rl-mxi::test",
     "hf://datasets/my-org/rl-mxi::test: no dataset my-org/rl-mxi on the Hub (or it is private); check the name, or log in with `hf auth login` (or set HF_TOKEN)"),
    ((403, "GatedRepo"), "my-org/rl-mxi::test",
     "my-org/rl-mxi::test: the dataset my-org/rl-mxi is gated; accept its conditions at https://huggingface.co/datasets/my-org/rl-mxi"
     " and log in with `hf auth login` (or set HF_TOKEN)"),
    ((404, "RevisionNotFound"), "my-org/rl-mxi@v9::test",
     "my-org/rl-mxi@v9::test: the dataset my-org/rl-mxi has no revision 'v9'; name a branch, tag or commit that exists"),
])
def test_hub_errors_in_one_line(cache, online, error, spec, expected):
    online("my-org/rl-mxi", {}, error)
    assert message(UsageError, spec) == expected


@needs_shared
def test_real_mbpp_splits_through_the_cache_scan_as_the_local_files(cache, tmp_path):
    """MBPP's official splits (which really leak), laid out as a Hub dataset: same findings as the local files."""
    lines = (SHARED_DATA / "mbpp" / "mbpp.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    split = {"train": (601, 974), "test": (11, 510)}
    files = {f"full/{name}-00000-of-00001.jsonl": "".join(line for line in lines if lo <= json.loads(line)["task_id"] <= hi)
             for name, (lo, hi) in split.items()}
    card = "---\nconfigs:\n- config_name: full\n  default: true\n  data_files:\n  - split: train\n    path: full/train-*\n  - split: test\n    path: full/test-*\n---\n"
    write_repo(cache, "google-research-datasets/mbpp", {"README.md": card, **files})
    train, test = (resolve(HubSpec("google-research-datasets/mbpp", split=s)) for s in ("train", "test"))
    cfg = ScanConfig(levels=("exact", "normalized"))
    via_hub = leakcheck.scan(train.files[0], test.files[0], cfg)
    local = {name: tmp_path / f"{name}.jsonl" for name in split}
    for name, path in local.items():
        path.write_text(files[f"full/{name}-00000-of-00001.jsonl"], encoding="utf-8")
    assert triples(via_hub) == triples(leakcheck.scan(local["train"], local["test"], cfg))
    assert ("248", "704", "pair", "exact") in triples(via_hub)
    assert (train.revision, test.config) == (SHA, "full")


def test_shard_names_whose_split_is_not_a_split_name(cache):
    write_repo(cache, "my-org/shards", {"data/train-v2-00000-of-00001.parquet": parquet([{"q": 1}])})
    assert message(InputError, "my-org/shards") == (
        "my-org/shards: the shard data/train-v2-00000-of-00001.parquet names split 'train-v2', which is not a split name (letters, digits, '_' and '.');"
        " rename it SPLIT-00000-of-00001.EXT, or list the files in the card's configs:")


def test_scan_reads_hub_names_through_the_cache_and_records_the_revision(cache, tmp_path):
    """`leakcheck scan ORG/NAME::CONFIG/SPLIT ...` end to end, offline, from a cache laid out as huggingface_hub does."""
    from click.testing import CliRunner

    from leakcheck.cli import main

    q = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did she sell?"
    rows = {"train": [{"question": q, "answer": "She sold 48 + 24 = 72 clips in April and May.\n#### 72"},
                      {"question": "Weng earns 12 dollars an hour for babysitting. How much did she earn for 50 minutes?", "answer": "#### 10"}],
            "test": [{"question": q, "answer": "She sold 48 + 24 = 72 clips in April and May.\n#### 72"}]}
    files = {f"main/{s}-00000-of-00001.parquet": parquet(r) for s, r in rows.items()}
    write_repo(cache, "openai/gsm8k", {"README.md": "---\nconfigs:\n- config_name: main\n  data_files:\n  - split: train\n"
                                       "    path: main/train-*\n  - split: test\n    path: main/test-*\n---\n", **files})
    j = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["scan", "openai/gsm8k::main/train", "hf://datasets/openai/gsm8k::main/test", "--json", str(j), "-q"])
    assert res.exit_code == 1, res.output
    d = json.loads(j.read_text())
    assert d["train"]["hub"] == {"repo_id": "openai/gsm8k", "revision": SHA, "config": "main", "split": "train"}
    assert d["eval"]["hub"]["split"] == "test" and d["train"]["format"] == "gsm8k"
    assert [(f["eval_id"], f["train_id"], f["kind"], f["level"], f["train_line"]) for f in d["findings"]] == [("0", "0", "pair", "exact", 1)]
