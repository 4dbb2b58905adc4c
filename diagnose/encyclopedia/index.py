"""The encyclopedia's vector index in chromadb: one passage per entry section, rebuilt when kb/ changes.

Embedded by default (a persistent collection under ``user_dir()/index``); a
Chroma server when ``settings.chroma_url`` is set, so a team shares one index.
Both go through the same code. The content hash of kb/ and the embedder are
stored in the collection's metadata; ``ensure()`` rebuilds when either differs.
This is the only module that imports chromadb, and it does so inside functions.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from diagnose.bundled import kb_dir
from diagnose.encyclopedia.embedding import HashEmbedding, LiteLLMEmbedding, Specificity, embedder_for
from diagnose.encyclopedia.entries import SECTIONS, Entry, content_hash, parse_entry
from diagnose.encyclopedia.example_lines import EXAMPLES_LAYOUT, current_examples, nearest, specificity_of
from diagnose.encyclopedia.index_models import HNSW, ExampleHit, IndexStats, Passage
from diagnose.errors import ConfigError, KBError
from diagnose.settings import Settings, user_dir

COLLECTION = "diagnose-kb"
SKIPPED_SECTIONS = frozenset({"Related"})
"""Sections not indexed: 'Related' names other entries, so matching it would point at the wrong one."""

Embedder = HashEmbedding | LiteLLMEmbedding


def chunks(entry: Entry) -> list[tuple[str, str, str]]:
    """(section, stored text, embedded text) per indexed section; the embedded text adds the title and aliases."""
    header = " ".join([entry.title, *entry.aliases])
    return [
        (name, body, f"{header}\n{name}\n{body}") for name, body in entry.sections.items() if body.strip() and name not in SKIPPED_SECTIONS
    ]


class KBIndex:
    """The encyclopedia's passages in one chromadb collection."""

    def __init__(
        self, connect: Callable[[], Any], embedder: Embedder, *, location: str, kb_dir: Path | None = None, lock_path: Path | None = None
    ) -> None:
        """``connect`` makes the chromadb client (persistent or HTTP) on first use; ``location`` says where, for messages.

        ``lock_path``: a file ``ensure`` locks, so processes starting together build the index once; the others wait.
        """
        self._connect = connect
        self.lock_path = lock_path
        self._client: Any = None
        self.embedder = embedder
        self.location = location
        self.kb_dir = kb_dir
        self._collection: Any = None
        self._count = 0
        self._weights: tuple[str, Specificity] | None = None

    @property
    def client(self) -> Any:
        """The chromadb client, connected (and chromadb imported) the first time the index is consulted."""
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _signature(self) -> dict[str, str]:
        embedder = json.dumps({"name": self.embedder.name(), "config": self.embedder.get_config()}, sort_keys=True)
        return {"content_hash": content_hash(self.kb_dir), "embedder": embedder, "hnsw": json.dumps(HNSW, sort_keys=True)}

    def _existing(self) -> Any:
        try:
            # no embedding function passed: chromadb rebuilds the persisted one (registered below), and vectors
            # are always computed here, so an index built by another embedder opens and is found stale
            return self.client.get_collection(COLLECTION)
        except Exception as exc:  # chromadb raises NotFoundError or ValueError depending on the backend
            if _vanished(exc):
                return None
            raise KBError(f"cannot open the index at {self.location}: {exc}") from exc

    def _current(self) -> Any:
        collection = self._existing()
        if collection is None:
            return None
        metadata = collection.metadata or {}
        return collection if all(metadata.get(k) == v for k, v in self._signature().items()) else None

    def _use(self, collection: Any) -> None:
        self._collection = collection
        self._count = collection.count()

    def is_current(self) -> bool:
        """True when the collection exists and was built from this kb/ with this embedder."""
        return self._current() is not None

    def ensure(self) -> IndexStats | None:
        """Build the index when kb/ or the embedder changed; the stats of the build, or None when it was current."""
        with build_lock(self.lock_path):  # one builder at a time; the client is connected under the lock too
            collection = self._current()
            if collection is None:
                return self.build()
            self._use(collection)
            return None

    def build(self) -> IndexStats:
        """(Re)build the collection from every entry and return what was done."""
        started = time.perf_counter()
        signature = self._signature()
        entries = _read_entries(self.kb_dir)
        ids, documents, metadatas, texts = [], [], [], []
        for entry in entries:
            for section, body, embedded in chunks(entry):
                ids.append(f"{entry.id}#{section}")
                documents.append(body)
                metadatas.append({"entry_id": entry.id, "section": section})
                texts.append(embedded)
        if self._existing() is not None:
            self.client.delete_collection(COLLECTION)
        collection = self.client.create_collection(
            COLLECTION,
            embedding_function=self.embedder,
            metadata=signature,
            configuration={"hnsw": HNSW},
        )
        collection.add(ids=ids, documents=documents, metadatas=metadatas, embeddings=self.embedder(texts))
        self._use(collection)
        return IndexStats(
            entries=len(entries),
            passages=len(ids),
            seconds=round(time.perf_counter() - started, 3),
            location=self.location,
            embedder=self.embedder.name(),
            content_hash=signature["content_hash"],
        )

    def search(self, text: str, k: int = 5, entry_ids: list[str] | None = None) -> list[Passage]:
        """The best passage of each of the ``k`` entries nearest to ``text``, best first; ``entry_ids`` restricts."""
        if self._collection is None:
            self.ensure()
        if not text.strip() or self._count == 0 or k <= 0 or entry_ids == []:
            return []
        where = {"entry_id": {"$in": entry_ids}} if entry_ids else None
        query = {
            "query_embeddings": self.embedder.embed_query([text]),
            "n_results": min(self._count, k * len(SECTIONS)),  # enough for k distinct entries
            "where": where,
            "include": ["documents", "metadatas", "distances"],
        }
        try:
            result = self._collection.query(**query)
        except Exception as exc:  # another process rebuilt the index (kb/ changed) under this one: reopen it once
            if not _vanished(exc):
                raise
            self._collection = None
            self.ensure()
            result = self._collection.query(**query)
        passages: dict[str, Passage] = {}
        rows = zip(result["documents"][0], result["metadatas"][0], result["distances"][0], strict=True)
        for document, metadata, distance in rows:
            entry_id = str(metadata["entry_id"])
            if entry_id not in passages:
                passages[entry_id] = Passage(
                    entry_id=entry_id, section=str(metadata["section"]), text=document, score=round(1.0 - distance, 4)
                )
        return list(passages.values())[:k]

    def _examples(self) -> Any:
        """The examples collection, (re)built when kb/ or the embedder changed (one builder at a time)."""
        with build_lock(self.lock_path):
            return self._current_examples()

    def _current_examples(self) -> Any:
        return current_examples(self.client, self.embedder, {**self._signature(), "layout": EXAMPLES_LAYOUT}, _read_entries(self.kb_dir))

    def _specificity(self, collection: Any) -> Specificity:
        """The examples' feature specificity, fitted once per collection build."""
        key = json.dumps(collection.metadata or {}, sort_keys=True)
        if self._weights is None or self._weights[0] != key:
            self._weights = (key, specificity_of(collection))
        return self._weights[1]

    def nearest_examples(self, lines: list[str], *, without: Iterable[str] = (), k: int = 1) -> list[list[ExampleHit]]:
        """For each line, its ``k`` nearest examples of root-cause entries' initiating signatures, nearest first
        (none for an empty line); ``without``: signature patterns whose examples are left out (see ``example_lines``)."""
        if not any(line.strip() for line in lines) or k <= 0:
            return [[] for _ in lines]
        collection = self._examples()
        return nearest(collection, self.embedder, self._specificity(collection), lines, without=without, k=k)


def _vanished(exc: Exception) -> bool:
    """Whether chromadb says the collection is gone (deleted by a rebuild in another process)."""
    return "does not exist" in str(exc) or "not found" in str(exc).lower()


def _read_entries(directory: Path | None) -> list[Entry]:
    """The entries as they are on disk now (``load_entries`` caches per process; a rebuild must see edits)."""
    files = sorted((kb_dir(directory) / "entries").glob("*.md"))
    if not files:
        raise KBError(f"no encyclopedia entries in {kb_dir(directory) / 'entries'}")
    return [parse_entry(path.read_text(encoding="utf-8"), source=path.name) for path in files]


@contextmanager
def build_lock(path: Path | None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created with its folder if missing); no lock when ``path`` is None."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def _register() -> None:
    """Make chromadb know both embedders, so reopening a collection never falls back to its downloading default."""
    from chromadb.utils.embedding_functions import known_embedding_functions, register_embedding_function

    for embedder in (HashEmbedding, LiteLLMEmbedding):
        if embedder.name() not in known_embedding_functions:
            register_embedding_function(embedder)  # type: ignore[no-untyped-call]  # chromadb ships it untyped


def _chromadb() -> Any:
    """chromadb, imported when the index is first consulted, with both embedders registered."""
    try:
        import chromadb
    except ImportError as exc:
        raise ConfigError("the vector index needs chromadb: pip install chromadb") from exc
    _register()
    return chromadb


def open_index(settings: Settings) -> KBIndex:
    """The index: the Chroma server of ``settings.chroma_url`` if set, else a persistent collection in user_dir().

    Nothing is imported or connected here: that happens when the index is first searched or built.
    """
    embedder = embedder_for(settings.embedding_model, settings.api_base)
    if settings.chroma_url:
        chroma_url = settings.chroma_url
        url = urlsplit(chroma_url if "://" in chroma_url else f"http://{chroma_url}")
        if not url.hostname:
            raise ConfigError(f"invalid Chroma URL: {chroma_url}")
        host, ssl = url.hostname, url.scheme == "https"
        port = url.port or (443 if ssl else 8000)

        def connect_server() -> Any:
            chromadb = _chromadb()
            try:
                return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=chromadb.config.Settings(anonymized_telemetry=False))
            except Exception as exc:  # connection errors surface as ValueError or httpx errors
                raise KBError(f"cannot reach the Chroma server at {chroma_url}: {exc}") from exc

        return KBIndex(connect_server, embedder, location=chroma_url, kb_dir=settings.kb_dir)
    path = user_dir() / "index"

    def connect_embedded() -> Any:
        chromadb = _chromadb()
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=chromadb.config.Settings(anonymized_telemetry=False))

    return KBIndex(connect_embedded, embedder, location=str(path), kb_dir=settings.kb_dir, lock_path=path / ".build.lock")
