"""Every way a harness error comes out (``str``, ``repr``, ``to_json()``, ``args``, a pickle and
the lines a real logger writes), for the redaction tests; it needs no SDK."""

from __future__ import annotations

import io
import logging
import pickle

from normalize_errors import HarnessError, normalize
from normalize_errors.bindings.otel import HarnessErrorFilter


def harness_error(vendor: BaseException) -> HarnessError:
    """``normalize(vendor)``, raised ``from`` it so that its traceback and chain are set."""
    try:
        try:
            raise vendor
        except Exception as exc:
            raise normalize(exc) from exc
    except HarnessError as err:
        return err
    raise AssertionError("unreachable")


def log_lines(err: HarnessError) -> str:
    """What a real logger writes for ``err``: ``logger.error("...: %s", err)`` and
    ``logger.exception(...)`` (the traceback prints the whole chain, the vendor's message
    included) through a handler with ``HarnessErrorFilter``."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(HarnessErrorFilter())
    logger = logging.getLogger(f"tests.hostile.sdk_errors.{id(stream)}")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.error("model call failed: %s", err)
    try:
        raise err
    except HarnessError:
        logger.exception("model call failed")
    return stream.getvalue()


def shown(err: HarnessError) -> dict[str, str]:
    """Every way ``err`` comes out, by name."""
    return {
        "str": str(err),
        "repr": repr(err),
        "to_json": err.to_json(),
        "args": repr(err.args),
        "pickle": repr(pickle.loads(pickle.dumps(err)).to_dict()),
        "log": log_lines(err),
    }
