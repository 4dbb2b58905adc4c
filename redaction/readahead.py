"""Mask a stream of blocks while the next block's prefilter scan runs on another core.

Hyperscan releases the GIL while it scans, and its pass over every byte is the costliest step of
masking a large log; the Python work of masking a block's few candidate lines is the next. So the
scan of block ``n + 1`` runs on a worker thread while block ``n`` is masked. The scan touches no
session state (pseudonyms, learned values): the masked output is the same as block-by-block.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from redaction.prefilter import Prescan

WORKERS = 2
"""Blocks scanned ahead at once: the scan is the slower side, so two workers keep a second core busy while the
masking thread waits for the GIL (more only add memory: each holds a block)."""


class Prescanning(Protocol):
    """What :func:`redact_ahead` needs of a ``redaction.Redactor``."""

    def new_scratch(self) -> Any: ...
    def prescan(self, text: str, scratch: Any) -> Prescan: ...
    def redact_text(self, text: str | Prescan) -> str: ...


def redact_ahead(redactor: Prescanning, blocks: Iterable[str], workers: int = WORKERS) -> Iterator[str]:
    """Yield each block masked, in order, scanning up to ``workers`` blocks ahead on worker threads."""
    local = threading.local()

    def prescan(block: str) -> Prescan:
        if not hasattr(local, "scratch"):  # a scratch serves one scan at a time: one per worker thread
            local.scratch = redactor.new_scratch()
        return redactor.prescan(block, local.scratch)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="redaction-prescan") as pool:
        ahead: deque[Future[Prescan]] = deque()
        for block in blocks:
            ahead.append(pool.submit(prescan, block))
            if len(ahead) > workers:
                yield redactor.redact_text(ahead.popleft().result())
        while ahead:
            yield redactor.redact_text(ahead.popleft().result())
