"""A UDF call's arguments as Daft binds them: expressions are the UDF's columns, everything else
(numbers, strings, lists, objects) reaches the function unchanged on every call, positionally or
by keyword (``multiply_and_add(df["x"], 2.0, z=1.5)``, Daft's legacy ``@daft.udf`` and batch
UDFs: the function gets ``2.0`` and ``1.5``, not Series of them). And the legacy UDF object's
``override_options`` / ``with_concurrency`` / ``run_on_process`` / ``with_init_args``."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from ketch.expressions.expression import Expression

_COLUMN = object()  # where a column's values go in the rebuilt call


def bind_call(
    func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Callable[..., Any], list[Expression]]:
    """(a function of the expression arguments' values only, those expressions). Without keyword
    arguments or constants it is ``func`` itself. The arguments are checked against ``func``'s
    signature (TypeError as Python's for a missing or unexpected one); the wrapper pickles with
    cloudpickle when ``func`` and the constants do."""
    if kwargs:
        try:
            signature = inspect.signature(func)
        except ValueError:  # no signature to check (some builtins): the call itself will tell
            signature = None
        if signature is not None:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{getattr(func, '__name__', 'udf')}(): {e}") from None
    columns = [a for a in args if isinstance(a, Expression)] + [
        v for v in kwargs.values() if isinstance(v, Expression)
    ]
    if not kwargs and len(columns) == len(args):
        return func, columns
    positional = tuple(_COLUMN if isinstance(a, Expression) else a for a in args)
    named = {k: _COLUMN if isinstance(v, Expression) else v for k, v in kwargs.items()}
    return _BoundCall(func, positional, named), columns


class _BoundCall:
    """``func`` with its constant arguments filled in; called with the columns' values in the
    order bind_call returned the expressions (positional ones first, then keyword ones)."""

    def __init__(self, func: Callable[..., Any], positional: tuple[Any, ...], named: dict[str, Any]) -> None:
        self.func = func
        self.positional = positional
        self.named = named
        self.__name__ = getattr(func, "__name__", "udf")
        self.__wrapped__ = func  # inspect.unwrap / iscoroutinefunction see the user's function

    def __call__(self, *values: Any) -> Any:
        it = iter(values)
        args = [next(it) if a is _COLUMN else a for a in self.positional]
        kwargs = {k: next(it) if v is _COLUMN else v for k, v in self.named.items()}
        return self.func(*args, **kwargs)


class LegacyUdfOptions:
    """Daft's legacy ``UDF`` methods, each returning a new UDF with one thing changed (mixed into
    the objects ``@ketch.udf`` returns; ``_with_options`` builds the copy)."""

    def _with_options(self, **changes: Any) -> Any:
        raise NotImplementedError

    def override_options(
        self,
        *,
        num_cpus: float | None = None,
        num_gpus: float | None = None,
        memory_bytes: int | None = None,
        ray_options: dict[str, Any] | None = None,
        batch_size: int | None = None,
    ) -> Any:
        """The same UDF with these resource requests / batch size instead (given ones only)."""
        given = {
            "num_cpus": num_cpus,
            "num_gpus": num_gpus,
            "memory_bytes": memory_bytes,
            "ray_options": ray_options,
            "batch_size": batch_size,
        }
        return self._with_options(**{k: v for k, v in given.items() if v is not None})

    def with_concurrency(self, concurrency: int) -> Any:
        """The same UDF with ``concurrency`` instances."""
        return self._with_options(concurrency=concurrency)

    def run_on_process(self, use_process: bool) -> Any:
        """The same UDF in worker processes (True) or on the engine's threads (False)."""
        return self._with_options(use_process=use_process)


def replace_options(options: Any, **changes: Any) -> Any:
    """``options`` (a udf._Options) with ``changes``; ``concurrency`` counts as given."""
    if "concurrency" in changes:
        changes["concurrency_given"] = True
    if "num_gpus" in changes:
        changes["num_gpus"] = float(changes["num_gpus"] or 0)
    return dataclasses.replace(options, **changes)
