"""Drop-in classes: a harness error class that also inherits the vendor class it replaces.

``dropin_class(UpstreamRateLimitedError, openai.RateLimitError)`` makes (once while it
lives, then the same class again) a class whose instances satisfy both
``except UpstreamRateLimitedError`` and ``except openai.RateLimitError``. Its name and
module are the harness class's, so tracebacks read
``normalize_errors.UpstreamRateLimitedError``.

A drop-in is invisible to vendor code. Its instance holds two things: the vendor
exception's attributes, exactly as the vendor set them, and the plain harness error
(``err.problem``). Every member the vendor defines (class attributes, properties, annotated
members, and the instance attributes its ``__init__`` set: ``code``, ``type``, ``status``,
``message``, ``body``, ``response``, ...) reads as the vendor's; ``code``, ``type`` and
``status`` (``VENDOR_NAMES``) are the vendor's on every drop-in, absent where the vendor's
class has none (an anthropic drop-in's ``code`` raises ``AttributeError``); every other
harness member (``retryable``, ``retry_after``, ``advice``, ``upstream``, ``detail``,
``to_dict()``, ...) reads from, and is set on, the plain harness error. ``str()`` is the
vendor's text (redacted); ``repr()``, ``==``, ``hash()`` and pickling are the harness
error's.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from typing import Any, Final

from .._base._redact import redact
from ._exceptions import HarnessError
from ._pickling import _pickle_state, _restore, scrub

__all__ = ["VENDOR_NAMES", "as_raised", "copy_dropin", "dropin_class", "make_dropin"]

_MADE: Final[
    weakref.WeakKeyDictionary[
        type[BaseException], dict[type[HarnessError], weakref.ref[type[HarnessError]] | None]
    ]
] = weakref.WeakKeyDictionary()
"""The drop-in classes made: vendor class -> harness class -> a weak reference to the drop-in
class (``None``: none can be made). Both the vendor class and the drop-in class (whose base it
is) are held weakly, so neither is kept alive here: botocore makes new exception classes for
every session, and each is collected with its drop-in classes once nothing else holds them."""
_LOCK: Final = threading.Lock()
_PROBLEM: Final = "_ne_problem"
"""The instance attribute of a drop-in that holds its plain harness error."""
_HARNESS_ONLY: Final = ("to_dict", "to_json")
"""Harness methods a drop-in keeps whatever the vendor defines: they give the harness object."""
_RESERVED: Final = frozenset({"problem", "_dropin_vendor", _PROBLEM, *_HARNESS_ONLY})
"""Names that are never the vendor's on a drop-in."""
_MISSING: Final = object()
VENDOR_NAMES: Final = frozenset({"code", "type", "status"})
"""The harness member names that supported vendors' exceptions also define (openai's ``code``
and ``type``, anthropic's ``type``, google-genai's ``code`` and ``status``). On every drop-in
they are the vendor's: its value where the vendor's class defines the name, else absent
(``AttributeError``), as on the vendor's own exception; never the harness's, which is
``err.problem.code`` and so on. Every other harness member reads as the harness's (unless a
vendor class defines it too: then it is that vendor's, on that vendor's drop-ins)."""


def dropin_class(
    harness_cls: type[HarnessError], vendor_cls: type[BaseException]
) -> type[HarnessError]:
    """The class inheriting both ``harness_cls`` and ``vendor_cls`` (``harness_cls`` if none can).

    A class can be impossible to make when the vendor class has an incompatible layout
    (``__slots__``) or metaclass, or a ``__new__`` that needs arguments (an exception group);
    the error is then a plain harness error, which is still typed and keeps the vendor
    exception as ``__cause__``. The same class is given for a pair as long as it lives (see
    ``_MADE``).
    """
    cls = _made(harness_cls, vendor_cls)
    if cls is not None:
        return cls
    with _LOCK:
        cls = _made(harness_cls, vendor_cls)
        if cls is None:
            cls = _make(harness_cls, vendor_cls)
            ref = None if cls is harness_cls else weakref.ref(cls)
            _MADE.setdefault(vendor_cls, {})[harness_cls] = ref
    return cls


def _made(
    harness_cls: type[HarnessError], vendor_cls: type[BaseException]
) -> type[HarnessError] | None:
    """The drop-in class made before for this pair, if it still lives (``harness_cls`` if
    none can be made), else ``None``."""
    made = _MADE.get(vendor_cls)
    if made is None or harness_cls not in made:
        return None
    ref = made[harness_cls]
    return harness_cls if ref is None else ref()


def _make(harness_cls: type[HarnessError], vendor_cls: type[BaseException]) -> type[HarnessError]:
    namespace = _namespace(harness_cls, vendor_cls)
    try:
        cls: type[HarnessError] = type(harness_cls.__name__, (harness_cls, vendor_cls), namespace)
        cls.__new__(cls)  # an exception group's ``__new__`` needs its members: no drop-in
    except Exception:
        return harness_cls
    return cls


def make_dropin(cls: type[HarnessError], problem: HarnessError, exc: BaseException) -> HarnessError:
    """An instance of the drop-in class ``cls``: ``exc``'s state around ``problem``.

    ``exc``'s attributes are copied as they are (its string ``args`` and ``__notes__``
    redacted); ``problem`` is the plain harness error, ``err.problem`` (whose ``__cause__`` is
    ``exc``). The drop-in is ``exc`` as the vendor raised it: see ``as_raised``.
    """
    err = cls.__new__(cls)
    state = err.__dict__
    state.update(vars(exc))
    notes = state.get("__notes__")
    if isinstance(notes, list):  # tracebacks print them with the typed error: redact them
        state["__notes__"] = [redact(note) for note in notes if isinstance(note, str)]
    state[_PROBLEM] = problem
    try:
        args = tuple(exc.args)
    except Exception:  # a vendor ``args`` that is no sequence, or that raises: none kept
        args = ()
    err.args = tuple(redact(a) if isinstance(a, str) else a for a in args)
    as_raised(err, exc)
    return err


def as_raised(err: BaseException, exc: BaseException) -> None:
    """Give ``err`` (a drop-in standing for ``exc``) ``exc``'s chain and frames: its
    ``__cause__``, ``__context__``, ``__suppress_context__`` and traceback.

    The traceback's first entry is the frame that caught ``exc``; it is left out, as that
    frame adds itself again when it raises ``err`` (raise it outside the ``except`` clause,
    which would make ``exc`` its ``__context__``).
    """
    err.__cause__ = exc.__cause__  # setting it also sets __suppress_context__: set that after
    err.__context__ = exc.__context__
    err.__suppress_context__ = exc.__suppress_context__
    tb = exc.__traceback__
    err.__traceback__ = tb.tb_next if tb is not None else None


def copy_dropin(err: HarnessError) -> HarnessError:
    """A copy of the drop-in ``err`` around a copy of its plain error (``err.problem``):
    setting a harness member on the copy leaves ``err`` and its plain error as they were."""
    new = HarnessError._clone(err)  # the class's own: `err._clone` is the plain error's
    problem = _problem(err)
    copied = problem._clone()
    copied.__cause__ = problem.__cause__  # the vendor exception
    new.__dict__[_PROBLEM] = copied
    new.__cause__ = err.__cause__
    new.__context__ = err.__context__
    new.__suppress_context__ = err.__suppress_context__
    new.__traceback__ = err.__traceback__
    return new


# -- the class body of a drop-in -------------------------------------------------------------


class _HarnessMember:
    """A harness member on a drop-in: read from and set on its plain harness error.

    An instance attribute of the same name (set by the vendor's ``__init__``) wins, so a
    member the vendor sets on some instances only still reads as the vendor's there.
    """

    __slots__ = ("default", "name")

    def __init__(self, name: str, default: Any) -> None:
        self.name = name
        self.default = default

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.default
        state = obj.__dict__
        value = state.get(self.name, _MISSING)
        if value is not _MISSING:
            return value
        return getattr(_problem(obj), self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        state = obj.__dict__
        if self.name in state:
            state[self.name] = value
        else:
            setattr(_problem(obj), self.name, value)

    def __delete__(self, obj: Any) -> None:
        state = obj.__dict__
        if self.name in state:
            del state[self.name]
        else:
            delattr(_problem(obj), self.name)


class _VendorMember:
    """A member the vendor only annotates: the instance's value, as on the vendor's class."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value

    def __delete__(self, obj: Any) -> None:
        try:
            del obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None


def _problem(self: HarnessError) -> HarnessError:
    """The plain harness error (same members, no vendor class)."""
    problem: HarnessError | None = self.__dict__.get(_PROBLEM)
    if problem is None:  # only while an instance is being built or unpickled
        raise AttributeError("problem")
    return problem


def _from_problem(name: str) -> property:
    """A member that always reads from the plain harness error."""

    def get(self: HarnessError) -> Any:
        return getattr(_problem(self), name)

    return property(get)


def _vendor_names(vendor_cls: type[BaseException]) -> set[str]:
    """Every name the vendor's classes define or annotate (not those of ``Exception``)."""
    names: set[str] = set()
    for klass in vendor_cls.__mro__:
        if klass.__module__ == "builtins":
            continue
        names.update(vars(klass))
        names.update(inspect.get_annotations(klass))
    return names


_INSTANCE_MEMBERS: list[str] = []


def _harness_names(harness_cls: type[HarnessError]) -> set[str]:
    """The members of ``harness_cls``: its attributes, properties, methods and state."""
    if not _INSTANCE_MEMBERS:
        _INSTANCE_MEMBERS.extend(vars(HarnessError("", code="x-dropin.probe")))
    names = set(_INSTANCE_MEMBERS)
    mro = harness_cls.__mro__
    for klass in mro[: mro.index(HarnessError) + 1]:  # up to HarnessError, not its bases
        names.update(n for n in vars(klass) if not (n.startswith("__") and n.endswith("__")))
    return names - _RESERVED


def _namespace(harness_cls: type[HarnessError], vendor_cls: type[BaseException]) -> dict[str, Any]:
    vendor = _vendor_names(vendor_cls)
    namespace: dict[str, Any] = {
        "__module__": harness_cls.__module__,
        "__qualname__": harness_cls.__qualname__,
        "__doc__": harness_cls.__doc__,
        "_dropin_vendor": vendor_cls,
        "problem": property(_problem),
    }
    for name in _HARNESS_ONLY:
        namespace[name] = _from_problem(name)
    for name in _harness_names(harness_cls):
        if name in vendor:  # the vendor's member, as the vendor's class has it
            found = inspect.getattr_static(vendor_cls, name, _MISSING)
            namespace[name] = _VendorMember(name) if found is _MISSING else found
        elif name in VENDOR_NAMES:  # the vendor has none: absent, as on its own exception
            namespace[name] = _VendorMember(name)
        else:
            default = inspect.getattr_static(harness_cls, name, None)
            namespace[name] = _HarnessMember(name, getattr(harness_cls, name, default))

    # ``args`` is the vendor's, kept in the exception's own slot (``HarnessError.args``
    # reads a plain error's detail, which on a drop-in is the problem's)
    namespace["args"] = BaseException.__dict__["args"]

    vendor_str = vendor_cls.__str__

    def __str__(self: HarnessError) -> str:
        """The vendor's text, with credentials redacted."""
        try:
            return redact(vendor_str(self))
        except Exception:
            return str(_problem(self))

    def __repr__(self: HarnessError) -> str:
        return repr(_problem(self))

    def __eq__(self: HarnessError, other: object) -> bool:
        if not isinstance(other, HarnessError):
            return NotImplemented
        return _problem(self) == other.problem

    def __hash__(self: HarnessError) -> int:
        return hash(_problem(self))

    def __reduce__(self: HarnessError) -> tuple[Any, ...]:
        state = _pickle_state(self)
        state["__args__"] = scrub(self.args)  # a tuple (``args`` is BaseException's): never DROP
        return (_restore, (harness_cls, vendor_cls), state)

    def __setstate__(self: HarnessError, state: dict[str, Any]) -> None:
        state = dict(state)
        cause = state.pop("__cause__", None)
        self.args = state.pop("__args__", ())
        self.__dict__.update(state)
        if cause is not None:
            self.__cause__ = cause

    namespace.update(
        __str__=__str__,
        __repr__=__repr__,
        __eq__=__eq__,
        __hash__=__hash__,
        __reduce__=__reduce__,
        __setstate__=__setstate__,
    )
    return namespace
