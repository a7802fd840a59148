"""The pytest plugin (entry point ``pytest11``): the ``llm_faults`` fixture.

Importing this module defines the fixture and nothing else: nothing is patched, and no
HTTP library (nor the fault injector itself) is loaded, until a test asks for ``llm_faults``.
"""

from __future__ import annotations

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._faults import Faults

__all__ = ["llm_faults"]


@pytest.fixture
def llm_faults() -> Iterator[Faults]:
    """Inject recorded LLM API failures into every httpx/httpx2 client for this test.

    Script the answers with ``fail(...)``, ``succeed(...)`` and ``cut_stream(...)``; assert
    on ``requests``, ``calls``, ``served`` and ``waits``. The test fails at teardown if a
    scripted step was never requested (set ``llm_faults.strict = False`` to allow it).
    """
    from ._faults import Faults

    with Faults() as faults:
        yield faults
    faults.check()
