"""Pickling and copying a harness error: what it keeps, and how it comes back.

A harness error pickles its members (plain data, already redacted and bounded), whatever
else of its own pickles once scrubbed (a drop-in's vendor attributes, the result, chunks,
notes), and its ``__cause__``: another harness error as it is, any other exception as a
credential-free copy rebuilt by class name on load, or a ``CauseStandIn`` when that class
cannot be imported there. A drop-in comes back as a drop-in of the same two classes.

A pickle names the error's class by its public path (``normalize_errors.UpstreamRateLimitedError``)
and ``_restore`` and ``_rebuild_named`` here: moving or renaming these two breaks the pickles
made before.
"""

from __future__ import annotations

from .._base._redact import MARGIN, MAX_REDACT, REDACTED, _spans, redact, secret_name
from .._base._safe_copy import MAX_DEPTH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from ._exceptions import HarnessError

__all__ = ["CauseStandIn"]


def _harness_class(cls: type[HarnessError]) -> type[HarnessError]:
    """The harness class behind a drop-in class that also inherits a vendor class."""
    for klass in cls.__mro__:
        if "_dropin_vendor" not in vars(klass):
            return klass
    return cls  # pragma: no cover - HarnessError itself is never a drop-in class


_STATE: Final = frozenset(
    {
        "code",
        "_info",
        "_type",
        "_title",
        "status",
        "_detail",
        "instance",
        "_origin",
        "_retryable",
        "_model_recoverable",
        "_model_feedback",
        "_retry_after",
        "_attempts",
        "max_attempts",
        "_limit",
        "_location",
        "_upstream",
        "_causes",
        "_extensions",
        "_quota",
        "untrusted",
    }
)
"""The attributes that make up a harness error; they are plain data and always pickle."""


def _pickle_state(err: HarnessError) -> dict[str, Any]:
    """The harness members, plus whatever else (result, vendor attributes) pickles."""
    state: dict[str, Any] = {}
    from ._exceptions import HarnessError

    for key, value in err.__dict__.items():
        if key in _STATE or isinstance(value, HarnessError):
            state[key] = value  # already redacted and bounded when it was set
        elif key != "__traceback__":
            clean = scrub(value)  # a drop-in's vendor attributes, result, chunks, notes
            if clean is not DROP:
                state[key] = clean
    cause = err.__cause__
    if cause is not None:
        # A harness error pickles itself safely; any other cause as a sanitized copy, by
        # class name: a cause whose class cannot be imported where the pickle is loaded
        # comes back as a stand-in (see ``CauseStandIn``), never as a failed load.
        state["__cause__"] = cause if isinstance(cause, HarnessError) else _ExceptionCopy(cause)
    return state


class _ExceptionCopy:
    """Pickles a credential-free copy of an exception (the cause of a harness error).

    On load it becomes an instance of the same class, made without calling its
    ``__init__`` (most SDK errors cannot be rebuilt from their ``args``), carrying its
    ``args`` and attributes as ``scrub`` copies them: texts redacted, HTTP requests and
    responses without credential headers or query parameters, objects that cannot be
    made safe left out. The live exception is not changed.
    """

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __reduce__(self) -> tuple[Any, ...]:
        exc = self.exc
        args = scrub(exc.args)
        if args is DROP:
            args = ()
        attrs = {}
        for key, value in vars(exc).items():
            if key != "__traceback__":
                clean = scrub(value)
                if clean is not DROP:
                    attrs[key] = clean
        cls = type(exc)
        return (_rebuild_named, (cls.__module__, cls.__qualname__, args, attrs))


def _rebuild_exception(
    cls: type[BaseException], args: tuple[Any, ...], attrs: dict[str, Any]
) -> BaseException:
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(attrs)
    return exc


class CauseStandIn(Exception):
    """Stands in for a pickled error's ``__cause__`` whose class cannot be imported on load.

    ``original_class`` names the class (``module.qualname``); ``args`` and the attributes
    that pickled are kept.
    """

    original_class: str = ""


def _rebuild_named(
    module: str, qualname: str, args: tuple[Any, ...], attrs: dict[str, Any]
) -> BaseException:
    import importlib

    found: Any = None
    try:
        found = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception:
        found = None
    if isinstance(found, type) and issubclass(found, BaseException):
        try:
            return _rebuild_exception(found, args, attrs)
        except Exception:
            pass
    stand_in = CauseStandIn(*args)
    stand_in.__dict__.update(attrs)
    stand_in.original_class = f"{module}.{qualname}"
    return stand_in


def _restore(
    harness_cls: type[HarnessError], vendor_cls: type[BaseException] | None
) -> HarnessError:
    if vendor_cls is None:
        return harness_cls.__new__(harness_cls)
    from ._dropin import dropin_class

    cls = dropin_class(harness_cls, vendor_cls)
    return cls.__new__(cls)


# -- credential-free copies for pickles ------------------------------------------------------------

DROP: Final = object()
"""What ``scrub`` returns for a value it cannot make safe; the caller leaves it out."""
_PICKLE_SCAN: Final = 1 << 20
"""Largest pickle of an unknown object that is scanned for credentials; larger ones are dropped."""


def scrub(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` to pickle in place of a vendor attribute: it holds no credential.

    Texts are redacted; mappings, lists, tuples and sets are copied with their entries
    scrubbed (secret-named keys lose their values); exceptions become copies with scrubbed
    ``args`` and attributes; HTTP requests and responses (httpx, httpx2, requests) become
    copies whose URL and credential headers are redacted. Any other object is kept if it
    pickles and its pickle shows no credential. Returns ``DROP`` for what cannot be kept.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value).decode("latin-1")
        clean = redact(text)
        return value if clean == text else clean.encode("latin-1", "replace")
    if depth >= MAX_DEPTH:
        return DROP
    kind = type(value)
    if kind is dict:
        out: dict[Any, Any] = {}
        for key, item in value.items():
            name = scrub(key, depth + 1)
            clean = REDACTED if secret_name(key) else scrub(item, depth + 1)
            if name is not DROP and clean is not DROP:
                out[name] = clean
        return out
    if kind in (list, tuple, set, frozenset):
        if kind in (list, tuple) and len(value) == 2 and secret_name(value[0]):
            return kind((value[0], REDACTED))
        items = (scrub(item, depth + 1) for item in value)
        return kind(item for item in items if item is not DROP)
    if isinstance(value, BaseException):
        from ._exceptions import HarnessError

        return value if isinstance(value, HarnessError) else _ExceptionCopy(value)
    from ..providers._routing import provider_of_module

    if provider_of_module(getattr(kind, "__module__", None)) == "http":
        return _http_copy(value, depth)
    return value if _clean_pickle(value) else DROP


def _http_copy(value: Any, depth: int) -> Any:
    """A copy of an HTTP request, response, URL or header list without credentials."""
    import copy

    try:
        if type(value).__name__ == "URL" or isinstance(value, str):
            return type(value)(redact(str(value)))
        if not hasattr(value, "headers"):
            return value if _clean_pickle(value) else DROP
        new = copy.copy(value)
        headers = value.headers
        pairs = headers.multi_items() if hasattr(headers, "multi_items") else headers.items()
        new.headers = type(headers)(
            [(name, REDACTED if secret_name(name) else redact(item)) for name, item in pairs]
        )
        own = vars(value)
        if "url" in own:  # a plain attribute (on httpx responses it is the request's)
            new.url = _http_copy(own["url"], depth)
        for name in ("_request", "request"):
            if own.get(name) is not None:
                setattr(new, name, _http_copy(own[name], depth + 1))
        if isinstance(own.get("history"), list):
            new.history = [_http_copy(item, depth + 1) for item in own["history"]]
        for name in ("_content", "body"):
            if isinstance(own.get(name), (bytes, str)):
                setattr(new, name, scrub(own[name], depth + 1))
        if any(vars(new).get(name) is DROP for name in ("url", "_request", "request")):
            return DROP
        return new if _clean_pickle(new) else DROP
    except Exception:
        return DROP


def _clean_pickle(value: object) -> bool:
    """Whether ``value`` survives a pickle round trip and its pickle shows no credential."""
    import pickle

    try:
        data = pickle.dumps(value)
        pickle.loads(data)
    except Exception:
        return False
    if len(data) > _PICKLE_SCAN:
        return False
    text = data.decode("latin-1")
    step = MAX_REDACT
    for start in range(0, len(text), step):
        window = text[start : start + step + MARGIN]
        if _spans(window):
            return False
    return True
