"""Mask a stream of blocks while the next block's prefilter scan runs on another core.

Hyperscan releases the GIL while it scans, and its pass over every byte is the costliest step of
masking a large log; the Python work of masking a block's few candidate lines is the next. So the
scan of block ``n + 1`` runs on a worker thread while block ``n`` is masked. The scan touches no
session state (pseudonyms, learned values): the masked output is the same as block-by-block.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from redaction.prefilter import Prescan


class Prescanning(Protocol):
    """What :func:`redact_ahead` needs of a ``redaction.Redactor``."""

    def new_scratch(self) -> Any: ...
    def prescan(self, text: str, scratch: Any) -> Prescan: ...
    def redact_text(self, text: str | Prescan) -> str: ...


def redact_ahead(redactor: Prescanning, blocks: Iterable[str]) -> Iterator[str]:
    """Yield each block masked, in order, scanning one block ahead on a worker thread."""
    scratch = redactor.new_scratch()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="redaction-prescan") as pool:
        ahead: deque[Future[Prescan]] = deque()
        for block in blocks:
            ahead.append(pool.submit(redactor.prescan, block, scratch))
            if len(ahead) > 1:
                yield redactor.redact_text(ahead.popleft().result())
        while ahead:
            yield redactor.redact_text(ahead.popleft().result())
