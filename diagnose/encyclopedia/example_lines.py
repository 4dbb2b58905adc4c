"""The signature examples' collection: one document per example line, and each log line's nearest examples.

A second chromadb collection beside the passages (``diagnose-kb-examples``): one document per example line of a
root-cause entry's initiating signatures, with its entry and its signature's pattern in the metadata, so a query
can leave a signature's examples out (the calibration's held-out wordings), and one per ``retrieval_lines`` line of
any entry, with an empty pattern (``GENERIC``: a generic message a log line may be nearer to than to any root cause,
never proposed). The vector store gives each line its ``CANDIDATES`` nearest examples; they are ranked again, and
scored, by the cosine of their features weighted by specificity (``Specificity``): what decides is the words that
tell entries apart, not the boilerplate they share.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from diagnose.encyclopedia.embedding import HashEmbedding, LiteLLMEmbedding, Specificity
from diagnose.encyclopedia.entries import Entry
from diagnose.encyclopedia.index_models import HNSW, ExampleHit

EXAMPLES = "diagnose-kb-examples"
CANDIDATES = 25
"""Examples the vector store returns per line at least, ranked again by specificity."""
GENERIC = ""
"""The pattern a ``retrieval_lines`` line carries in the metadata: it belongs to no signature."""
EXAMPLES_LAYOUT = "2"
"""The examples collection's layout (2: the signature pattern in each example's metadata); a change rebuilds it."""


def current_examples(client: Any, embedder: HashEmbedding | LiteLLMEmbedding, signature: dict[str, str], entries: list[Entry]) -> Any:
    """The examples collection, rebuilt when its metadata (kb/'s hash, the embedder, the layout) differs from ``signature``."""
    try:
        collection = client.get_collection(EXAMPLES)
    except Exception:  # not found (chromadb raises NotFoundError or ValueError depending on the backend)
        collection = None
    if collection is not None and all((collection.metadata or {}).get(k) == v for k, v in signature.items()):
        return collection
    if collection is not None:
        client.delete_collection(EXAMPLES)
    rows = {
        (entry.id, sig.pattern, example): None
        for entry in entries
        if entry.kind == "root-cause"
        for sig in entry.signatures
        if sig.role == "initiating"
        for example in sig.examples
    } | {(entry.id, GENERIC, line): None for entry in entries for line in entry.retrieval_lines}
    collection = client.create_collection(EXAMPLES, embedding_function=embedder, metadata=signature, configuration={"hnsw": HNSW})
    triples = list(rows)
    collection.add(
        ids=[f"{entry_id}#{i}" for i, (entry_id, _, _) in enumerate(triples)],
        documents=[example for _, _, example in triples],
        metadatas=[{"entry_id": entry_id, "signature": pattern} for entry_id, pattern, _ in triples],
        embeddings=embedder([example for _, _, example in triples]),
    )
    return collection


def specificity_of(collection: Any) -> Specificity:
    """The examples' feature specificity, fitted on every example grouped by entry."""
    rows = collection.get(include=["documents", "metadatas"])
    groups: dict[str, list[str]] = {}
    for document, metadata in zip(rows["documents"], rows["metadatas"], strict=True):
        groups.setdefault(str(metadata["entry_id"]), []).append(document)
    return Specificity(groups)


def nearest(
    collection: Any,
    embedder: HashEmbedding | LiteLLMEmbedding,
    specificity: Specificity,
    lines: list[str],
    *,
    without: Iterable[str] = (),
    k: int = 1,
) -> list[list[ExampleHit]]:
    """For each line, its ``k`` nearest examples by specificity-weighted cosine, nearest first (none for an empty line).

    ``without``: signature patterns whose examples are left out (``Finding.signature``).
    """
    wanted = [line for line in lines if line.strip()]
    excluded = sorted(set(without))
    result = collection.query(
        query_embeddings=embedder.embed_query(wanted),
        n_results=max(k, CANDIDATES),
        where={"signature": {"$nin": excluded}} if excluded else None,
        include=["documents", "metadatas"],
    )
    found: list[list[ExampleHit]] = []
    for line, docs, metas in zip(wanted, result["documents"], result["metadatas"], strict=True):
        query = specificity.weigh(line)
        hits = [
            ExampleHit(
                entry_id=str(meta["entry_id"]),
                example=doc,
                score=round(Specificity.cosine(query, specificity.weigh(doc)), 4),
                signature=str(meta.get("signature", "")),
            )
            for doc, meta in zip(docs, metas, strict=True)
        ]
        found.append(sorted(hits, key=lambda hit: -hit.score)[:k])
    answers = iter(found)
    return [next(answers) if line.strip() else [] for line in lines]
