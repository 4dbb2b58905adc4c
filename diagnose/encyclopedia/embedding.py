"""Embedding functions for the encyclopedia index, and the normalisation that puts log lines in their shape.

``HashEmbedding`` is the default: deterministic feature hashing (word uni- and
bi-grams plus character trigrams into signed buckets, L2-normalised). It needs
no model file, downloads nothing and gives the same vector in every process.
``LiteLLMEmbedding`` calls any litellm embedding model and is used only when
``settings.embedding_model`` is set.

Both follow chromadb's ``EmbeddingFunction`` protocol (``__call__(input)``,
``name``, ``get_config``, ``build_from_config`` ...) without importing chromadb,
so this module stays importable on the rules-only path; ``diagnose.encyclopedia.index``
registers them with chromadb so that reopening a collection never falls back
to chromadb's downloading default.
"""

from __future__ import annotations

import itertools
import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from diagnose.parse.prefixes import RANK_WORDS

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    # pseudonyms from the redactor: <HOST_3> -> <HOST>
    (re.compile(r"<([A-Z][A-Z0-9]*)_\d+>"), r"<\1>"),
    # glog header: E1218 20:27:21.426415540 [12345 ]
    (re.compile(r"\b[EWIF]\d{3,4} \d\d:\d\d:\d\d(?:\.\d+)?(?: \d+)?"), "<LOG>"),
    # launcher prefixes: [rank3]: [default0]:
    (re.compile(rf"\b({'|'.join(RANK_WORDS)})\d+\b"), r"\1<N>"),
    (re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"), "<UUID>"),
    (re.compile(r"\b0[xX][0-9a-fA-F]+\b"), "<ADDR>"),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b"), "<HEX>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<IP>"),
    # paths: keep what follows site-packages/, else the last component; system paths stay
    (re.compile(r"(?<![\w<])(?:/[\w.+@<>-]+)*/(?:site|dist)-packages/"), ""),
    (re.compile(r"(?<![\w<])(?!/(?:dev|proc|sys)/)(?:/[\w.+@<>-]+)+/(?=[\w.+-]+)"), "<PATH>/"),
    # numbers not glued to a letter (fp16 and A100 stay), sign included
    (re.compile(r"(?<![A-Za-z\d])[-+]?\d+(?:[.,:]\d+)*(?:[eE][-+]?\d+)?"), "<N>"),
    # runs of numbers (dates, times, shapes) collapse into one
    (re.compile(r"<N>(?:[-_:.,/x ]*<N>)+"), "<N>"),
)

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WEIGHTS = {"w": 1.0, "b": 1.0, "c": 0.25}
"""Weight of a word, a bi-gram and a character trigram; repeats count sub-linearly (1 + log n)."""
_STOPWORDS = frozenset(
    "a an and are as at be by can for from has have if in into is it its of on or that the "  # noqa: SIM905
    "this to was were when which while will with you your".split()
)


def normalize(text: str) -> str:
    """Mask what varies between runs (numbers, addresses, pseudonyms, paths): only the message's shape is left."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def _words(text: str) -> list[str]:
    words: list[str] = []
    for raw in re.findall(r"<[A-Z]+>|[A-Za-z][A-Za-z0-9_]*", text):
        lower = raw.lower()
        if lower in _STOPWORDS or lower.startswith("<"):
            continue
        words.append(lower)
        parts = [p.lower() for p in _CAMEL.findall(raw.replace("_", " ")) if len(p) > 1]
        if len(parts) > 1:
            words.extend(p for p in parts if p not in _STOPWORDS)
    return words


def features(text: str) -> dict[str, float]:
    """The weighted features of a text: word uni-grams, word bi-grams and character trigrams of words."""
    words = _words(normalize(text))
    counts: Counter[str] = Counter()
    for word in words:
        counts["w:" + word] += 1
        padded = f" {word} "
        counts.update("c:" + padded[i : i + 3] for i in range(len(padded) - 2))
    counts.update(f"b:{first} {second}" for first, second in itertools.pairwise(words))
    return {feature: _WEIGHTS[feature[0]] * (1.0 + math.log(n)) for feature, n in counts.items()}


MESSAGE_WEIGHT = 2.0
"""How many times a word of the message itself counts against the wrappers around it (``Specificity.weigh``)."""
_MESSAGE_HEAD = re.compile(r"\b\w*(?:Error|Exception|error|exception)\b:")


class Specificity:
    """How much each feature says about *which* entry a line belongs to: inverse document frequency over entries.

    Fitted on the encyclopedia's example lines grouped by entry: a feature every entry's examples share
    (``RuntimeError``, ``srun error task exited``, ``killed by signal``) says little, one only a single entry's examples
    have (``bus``, ``ecc``, ``illegal``) says much. ``similarity`` is the cosine of the two lines' features each
    weighted by it, so a match on the message's distinctive words counts and a match on boilerplate barely does.
    A feature no example has weighs as much as the rarest: words an example does not explain lower the similarity.
    """

    def __init__(self, groups: dict[str, list[str]]) -> None:
        """``groups``: each entry's example lines."""
        frequency: Counter[str] = Counter()
        for texts in groups.values():
            frequency.update({feature for text in texts for feature in features(text)})
        self.groups = len(groups)
        self._idf = {feature: math.log((self.groups + 1) / (n + 1)) for feature, n in frequency.items()}
        self._unseen = math.log(self.groups + 1)

    def weigh(self, text: str) -> dict[str, float]:
        """The text's features, each weighted by its specificity; the message's own words (after its last
        ``...Error:`` / ``...Exception:`` head) count ``MESSAGE_WEIGHT`` times: wrappers repeat, the message tells."""
        weighted = {feature: weight * self._idf.get(feature, self._unseen) for feature, weight in features(text).items()}
        heads = list(_MESSAGE_HEAD.finditer(text))
        if heads and text[heads[-1].end() :].strip():
            for feature in features(text[heads[-1].end() :]):
                weighted[feature] *= MESSAGE_WEIGHT
        return weighted

    @staticmethod
    def cosine(first: dict[str, float], second: dict[str, float]) -> float:
        """Cosine similarity of two weighted feature sets (0 when either is empty)."""
        dot = sum(weight * second.get(feature, 0.0) for feature, weight in first.items())
        norms = math.sqrt(sum(w * w for w in first.values())) * math.sqrt(sum(w * w for w in second.values()))
        return dot / norms if norms else 0.0


class _ChromaProtocol:
    """The parts of chromadb's EmbeddingFunction protocol that are the same for both embedders."""

    def __call__(self, input: Sequence[str]) -> list[Any]:
        """One vector per text (each embedder defines it)."""
        raise NotImplementedError

    def embed_query(self, input: Sequence[str]) -> list[Any]:
        """Queries and documents are embedded alike."""
        return self(input)

    def is_legacy(self) -> bool:
        """Not a legacy embedder: chromadb stores ``name()`` and ``get_config()`` in the collection."""
        return False

    def default_space(self) -> str:
        """Cosine distance: the vectors are compared by angle."""
        return "cosine"

    def supported_spaces(self) -> list[str]:
        """The distance functions that make sense for these vectors."""
        return ["cosine", "ip", "l2"]

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        """Any change is allowed: the index is rebuilt when the embedder changes."""

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        """Nothing to validate beyond what ``build_from_config`` reads."""


class HashEmbedding(_ChromaProtocol):
    """Deterministic feature-hashing vectorizer: no model, no download, same vector in every process."""

    def __init__(self, dim: int = 4096) -> None:
        """``dim`` buckets; each feature adds its weight, with a sign taken from its hash, to one bucket."""
        self.dim = dim

    def __call__(self, input: Sequence[str]) -> list[Any]:
        """One L2-normalised float32 vector per text."""
        import numpy as np

        vectors = np.zeros((len(input), self.dim), dtype=np.float32)
        for row, text in enumerate(input):
            for feature, weight in features(text).items():
                digest = zlib.crc32(feature.encode("utf-8"))
                vectors[row, digest % self.dim] += weight if (digest // self.dim) & 1 else -weight
            norm = float(np.linalg.norm(vectors[row]))
            if norm > 0:
                vectors[row] /= norm
        return list(vectors)

    @staticmethod
    def name() -> str:
        """The name chromadb stores with the collection."""
        return "diagnose-hash"

    def get_config(self) -> dict[str, Any]:
        """What rebuilds this embedder."""
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> HashEmbedding:
        """Rebuild from ``get_config()``."""
        return HashEmbedding(dim=int(config.get("dim", 4096)))


class LiteLLMEmbedding(_ChromaProtocol):
    """Any litellm embedding model (``openai/...``, ``ollama/...``, ``hosted_vllm/...``), imported on first use."""

    def __init__(self, model: str, api_base: str | None = None) -> None:
        """``model`` is a litellm model string; ``api_base`` points at a local or proxy server."""
        self.model = model
        self.api_base = api_base

    def __call__(self, input: Sequence[str]) -> list[Any]:
        """One vector per text, from the model."""
        import numpy as np

        from diagnose.errors import LLMUnavailable
        from diagnose.llm.client import import_litellm

        litellm = import_litellm()
        try:
            response = litellm.embedding(model=self.model, input=list(input), api_base=self.api_base)
        except Exception as exc:  # litellm raises many provider-specific types
            raise LLMUnavailable(f"embedding model {self.model} failed: {exc}") from exc
        return [np.asarray(item["embedding"], dtype=np.float32) for item in response.data]

    @staticmethod
    def name() -> str:
        """The name chromadb stores with the collection."""
        return "diagnose-litellm"

    def get_config(self) -> dict[str, Any]:
        """What rebuilds this embedder (never a key)."""
        return {"model": self.model, "api_base": self.api_base}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> LiteLLMEmbedding:
        """Rebuild from ``get_config()``."""
        return LiteLLMEmbedding(model=str(config["model"]), api_base=config.get("api_base"))


def embedder_for(embedding_model: str | None, api_base: str | None = None) -> HashEmbedding | LiteLLMEmbedding:
    """The configured embedder: litellm when a model is named, else feature hashing."""
    if embedding_model:
        return LiteLLMEmbedding(embedding_model, api_base=api_base)
    return HashEmbedding()
