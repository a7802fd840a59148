"""Drop-in classes: a harness error class that also inherits the vendor class it replaces.

``dropin_class(UpstreamRateLimitedError, openai.RateLimitError)`` makes (once, then from a
cache) a class whose instances satisfy both ``except UpstreamRateLimitedError`` and
``except openai.RateLimitError``. Its name and module are the harness class's, so
tracebacks read ``normalize_errors.exceptions.UpstreamRateLimitedError``. Instances pickle
through ``HarnessError.__reduce__``, which rebuilds the class from the cache on load.

Where the two classes clash, the harness wins: ``code``, ``type`` and ``status`` are the
harness error's members; the vendor's values stay in ``upstream`` and on ``__cause__``.
"""

from __future__ import annotations

import threading
from typing import Final

from .exceptions import HarnessError

__all__ = ["dropin_class"]

_CACHE: Final[dict[tuple[type[HarnessError], type[BaseException]], type[HarnessError]]] = {}
_LOCK: Final = threading.Lock()


def dropin_class(
    harness_cls: type[HarnessError], vendor_cls: type[BaseException]
) -> type[HarnessError]:
    """The class inheriting both ``harness_cls`` and ``vendor_cls`` (``harness_cls`` if none can).

    A class can be impossible to make when the vendor class has an incompatible layout
    (``__slots__``) or metaclass; the error is then a plain harness error, which is still
    typed and keeps the vendor exception as ``__cause__``.
    """
    key = (harness_cls, vendor_cls)
    cls = _CACHE.get(key)
    if cls is not None:
        return cls
    with _LOCK:
        cls = _CACHE.get(key)
        if cls is None:
            namespace = {
                "__module__": harness_cls.__module__,
                "__qualname__": harness_cls.__qualname__,
                "__doc__": harness_cls.__doc__,
                "_dropin_vendor": vendor_cls,
            }
            try:
                cls = type(harness_cls.__name__, (harness_cls, vendor_cls), namespace)
            except TypeError:
                cls = harness_cls
            _CACHE[key] = cls
    return cls
