"""Deprecated: the Starlette/FastAPI handler moved to ``normalize_errors.bindings.starlette``.

Importing this module warns (``DeprecationWarning``) and gives the same names.
"""

from __future__ import annotations

import warnings

from ..bindings.starlette import (
    harness_error_handler,
    install,
    problem_response,
    public_error_handler,
)

__all__ = ["harness_error_handler", "install", "problem_response", "public_error_handler"]

warnings.warn(
    "normalize_errors.frameworks.starlette moved to normalize_errors.bindings.starlette",
    DeprecationWarning,
    stacklevel=2,
)
