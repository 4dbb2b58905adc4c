"""Benchmark the encyclopedia index: full build time and query latency (p50/p95).

    python bench/bench_index.py [--repeat 5] [--chroma-url http://127.0.0.1:8000] [--json]

Builds in a temporary DIAGNOSE_HOME (never the user's cache). Queries are every
example line of every entry, one at a time, through ``KBIndex.search`` and
through ``retrieve`` (signature hits + vectors, two searches). Recall: after each of ``--repeat`` fresh
builds of the examples collection, how many root-cause example lines are not their own nearest example (score 1),
i.e. fell out of the vector store's candidates (HNSW is approximate and its graph differs from build to build).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from diagnose.encyclopedia.entries import Entry, load_entries
from diagnose.encyclopedia.example_lines import EXAMPLES
from diagnose.encyclopedia.index import KBIndex, open_index
from diagnose.encyclopedia.retrieval import query_text, retrieve, signature_hits
from diagnose.engine.lookup_lines import MAX_LINES
from diagnose.settings import load_settings


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile of ``values`` (share in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def timed(calls: list[Callable[[], object]]) -> list[float]:
    """Milliseconds taken by each call."""
    out = []
    for call in calls:
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return out


def lost_examples(index: KBIndex, entries: list[Entry]) -> int:
    """Count the example lines that are not their own nearest example, then drop the examples collection (the next
    query builds it afresh)."""
    lines = sorted({x for e in entries if e.kind == "root-cause" for s in e.signatures if s.role == "initiating" for x in s.examples})
    batches = [lines[i : i + MAX_LINES] for i in range(0, len(lines), MAX_LINES)]  # as many as the engine asks at once
    lost = sum(1 for batch in batches for hits in index.nearest_examples(batch, k=1) if not hits or hits[0].score < 0.999)
    index.client.delete_collection(EXAMPLES)
    return lost


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="full builds to time (median reported)")
    parser.add_argument("--chroma-url", help="benchmark a Chroma server instead of the embedded store")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as home:
        os.environ["DIAGNOSE_HOME"] = home
        if args.chroma_url:
            os.environ["DIAGNOSE_CHROMA_URL"] = args.chroma_url
        settings = load_settings()
        started = time.perf_counter()
        index = open_index(settings)
        open_ms = (time.perf_counter() - started) * 1000
        builds = [index.build() for _ in range(args.repeat)]
        entries = load_entries(settings.kb_dir)
        lines = [line for e in entries for s in e.signatures for line in s.examples]
        index.search(query_text(lines[:1]))  # warm-up
        search_ms = timed([lambda line=line: index.search(query_text([line]), k=5) for line in lines])
        retrieve_ms = timed([lambda line=line: retrieve([line], signature_hits([line], entries), index, k=5) for line in lines])
        lost = [lost_examples(index, entries) for _ in range(args.repeat)]

    figures = {
        "backend": "server" if args.chroma_url else "embedded",
        "embedder": builds[0].embedder,
        "entries": builds[0].entries,
        "passages": builds[0].passages,
        "open_client_ms": round(open_ms, 1),
        "build_s_median": round(statistics.median(b.seconds for b in builds), 3),
        "queries": len(lines),
        "search_ms_p50": round(percentile(search_ms, 0.5), 2),
        "search_ms_p95": round(percentile(search_ms, 0.95), 2),
        "retrieve_ms_p50": round(percentile(retrieve_ms, 0.5), 2),
        "retrieve_ms_p95": round(percentile(retrieve_ms, 0.95), 2),
        "examples_lost_per_build": lost,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{figures['backend']} index, embedder {figures['embedder']}")
    print(f"entries/passages {figures['entries']} / {figures['passages']}")
    print(f"open client      {figures['open_client_ms']:.1f} ms")
    print(f"full build       {figures['build_s_median']:.3f} s (median of {args.repeat})")
    print(f"search  p50/p95  {figures['search_ms_p50']:.2f} / {figures['search_ms_p95']:.2f} ms over {len(lines)} queries")
    print(f"retrieve p50/p95 {figures['retrieve_ms_p50']:.2f} / {figures['retrieve_ms_p95']:.2f} ms (+ signatures)")
    print(f"examples lost    {lost} per fresh build (not their own nearest example)")


if __name__ == "__main__":
    main()
