"""Test your failure handling offline: real provider failures injected into real SDK clients.

``pip install 'normalize-errors[testing]'`` registers a pytest plugin whose fixture
``llm_faults`` is a ``Faults``: it answers every HTTP request sent through httpx or httpx2
(the transports of the openai, anthropic and google-genai SDKs) from a script of recorded
failures, then with successes that fit the API called, and notes the requests made and the
waits asked for (without sleeping):

```python
def test_retries(llm_faults):
    llm_faults.fail("anthropic/overloaded_529", times=2)
    ...
    assert llm_faults.calls == 3
```

``Faults`` also works as a context manager outside pytest. ``record`` writes cassettes of
your own calls, with credentials removed, that ``llm_faults.fail(path)`` and
``normalize-errors replay`` read like the shipped ones (``normalize-errors cassettes`` lists
those). Importing this package imports nothing (its names load on first use); pytest,
httpx and PyYAML are loaded when they are used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._faults import Faults, Reply, Request
    from ._record import record

__all__ = ["Faults", "Reply", "Request", "record"]


def __getattr__(name: str) -> Any:
    if name in ("Faults", "Reply", "Request"):
        from . import _faults

        return getattr(_faults, name)
    if name == "record":
        from ._record import record

        return record
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
