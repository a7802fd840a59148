"""``normalized()``: typed harness errors for code that cannot wrap its client, as a context
manager or a decorator (plain and async functions, generators and async generators)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast, overload

from .._model._exceptions import HarnessError
from ._wrap import _not_an_answer, generates, typed_error

__all__ = ["normalized"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _generating_method(func: Any) -> bool:
    """Whether ``func`` is an SDK's generating method (bound), whose text result is no answer."""
    owner = getattr(func, "__self__", None)
    name = getattr(func, "__name__", None)
    if owner is None or not isinstance(name, str):
        return False
    try:
        return generates(owner, name)
    except Exception:  # an odd owner: not an SDK resource
        return False


def _typed(exc: Exception, provider: str | None, dropin: bool, model_output: bool) -> HarnessError:
    """``typed_error(exc)``, ready to raise: a drop-in carries ``exc``'s own chain and
    frames, a plain error has ``exc`` as its cause. Raise it outside the ``except`` clause,
    which would make ``exc`` its ``__context__``."""
    err = typed_error(exc, provider=provider, dropin=dropin, model_output=model_output)
    if err.problem is err:
        err.__cause__ = exc
    return err


class _Normalizer:
    """``normalized()``: a context manager and decorator that types exceptions."""

    def __init__(self, provider: str | None, dropin: bool, model_output: bool = False) -> None:
        self.provider = provider
        self.dropin = dropin
        self.model_output = model_output

    def __enter__(self) -> _Normalizer:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        # raised while ``exc`` is handled: ``exc`` becomes its __context__ (shown only when
        # the vendor's exception had no cause and did not suppress its context)
        if isinstance(exc, Exception) and not isinstance(exc, HarnessError):
            raise _typed(exc, self.provider, self.dropin, self.model_output)

    async def __aenter__(self) -> _Normalizer:
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)

    async def _awaited(self, call: Callable[[], Any], sdk_call: bool, func: Any) -> Any:
        """The awaited result of ``call()``, its failures typed; text from an SDK's
        generating method (``sdk_call``) raises as no answer.

        Serves ``async def`` functions and the plain functions that return a coroutine: the
        async methods of the openai and anthropic SDKs are of that kind (a decorator wraps
        them), so their failures happen while the coroutine is awaited.
        """
        try:
            result = await call()
        except HarnessError:
            raise
        except Exception as exc:
            err: HarnessError | None = _typed(exc, self.provider, self.dropin, self.model_output)
        else:
            err = None
        if err is not None:
            raise err
        if sdk_call and isinstance(result, (str, bytes)):
            raise _not_an_answer(result, self.provider, getattr(func, "__self__", None))
        return result

    def __call__(self, func: _F) -> _F:
        provider, dropin, model_output = self.provider, self.dropin, self.model_output
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def generate(*args: Any, **kwargs: Any) -> Any:
                try:
                    return (yield from func(*args, **kwargs))
                except HarnessError:
                    raise
                except Exception as exc:
                    err = _typed(exc, provider, dropin, model_output)
                raise err

            return cast("_F", generate)
        if inspect.isasyncgenfunction(func):

            @functools.wraps(func)
            async def agenerate(*args: Any, **kwargs: Any) -> Any:
                # What ``yield from`` does for the generator above: a value sent and an
                # exception thrown in (``@asynccontextmanager``'s) reach the inner
                # generator, and closing this one closes it.
                inner = func(*args, **kwargs)
                step = inner.__anext__()
                while True:
                    try:
                        item = await _typed_step(step, provider, dropin, model_output)
                    except StopAsyncIteration:
                        return
                    try:
                        sent = yield item
                    except GeneratorExit:
                        await _typed_step(inner.aclose(), provider, dropin, model_output)
                        raise
                    except BaseException as thrown:
                        step = inner.athrow(thrown)
                    else:
                        step = inner.asend(sent)

            return cast("_F", agenerate)
        sdk_call = _generating_method(func)
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def arun(*args: Any, **kwargs: Any) -> Any:
                return await self._awaited(functools.partial(func, *args, **kwargs), sdk_call, func)

            return cast("_F", arun)

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                result = func(*args, **kwargs)
            except HarnessError:
                raise
            except Exception as exc:
                err: HarnessError | None = _typed(exc, provider, dropin, model_output)
            else:
                err = None
            if err is not None:
                raise err
            if inspect.iscoroutine(result):  # an async SDK method is a plain function
                return self._awaited(lambda: result, sdk_call, func)
            if sdk_call and isinstance(result, (str, bytes)):
                raise _not_an_answer(result, provider, getattr(func, "__self__", None))
            return result

        return cast("_F", run)


async def _typed_step(
    step: Awaitable[Any], provider: str | None, dropin: bool, model_output: bool
) -> Any:
    """``await step`` (a step of an async generator), its failures typed; its end
    (``StopAsyncIteration``), cancellation and harness errors pass through."""
    try:
        return await step
    except (StopAsyncIteration, HarnessError):
        raise
    except Exception as exc:
        err = _typed(exc, provider, dropin, model_output)
    raise err


@overload
def normalized(
    func: _F, *, provider: str | None = None, dropin: bool = True, model_output: bool = False
) -> _F: ...


@overload
def normalized(
    func: None = None,
    *,
    provider: str | None = None,
    dropin: bool = True,
    model_output: bool = False,
) -> _Normalizer: ...


def normalized(
    func: _F | None = None,
    *,
    provider: str | None = None,
    dropin: bool = True,
    model_output: bool = False,
) -> _F | _Normalizer:
    """Turn exceptions into typed harness errors, as a context manager or a decorator.

    ``with normalized(): ...``, ``async with normalized(): ...``, ``@normalized`` and
    ``@normalized(provider="openai")`` on plain and ``async`` functions, and on generators
    and async generators (errors raised while they are iterated are typed too). Errors are
    drop-in instances (see ``typed_error``), or plain harness errors with
    ``dropin=False``; cancellation and ``KeyboardInterrupt`` pass
    through untouched, and a ``HarnessError`` is re-raised as it is. ``model_output=True``
    says the block parses a model's text: a ``ValidationError`` or ``JSONDecodeError`` raised
    in it is the model's output error (see ``normalize``).
    """
    normalizer = _Normalizer(provider, dropin, model_output)
    return normalizer if func is None else normalizer(func)
