"""diagnose: tell why a distributed PyTorch training run died, offline, from its logs.

>>> import diagnose
>>> result = diagnose.diagnose(["train.log"])          # doctest: +SKIP
>>> result.diagnosis.root_cause.id, result.diagnosis.initiating_rank  # doctest: +SKIP
('cuda-oom', 5)

Importing the package is cheap: the pipeline (and with it presidio, chromadb or litellm, when used)
loads on first use of ``diagnose.diagnose``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from diagnose.pipeline import Result, diagnose
    from diagnose.schema import Diagnosis

__all__ = ["Diagnosis", "Result", "__version__", "diagnose"]

try:
    __version__ = version("diagnose-training")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

_LAZY = {"diagnose": "diagnose.pipeline", "Result": "diagnose.pipeline", "Diagnosis": "diagnose.schema"}


def __getattr__(name: str) -> Any:
    """Load the public names on first use (PEP 562), so ``import diagnose`` stays fast."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'diagnose' has no attribute {name!r}")
