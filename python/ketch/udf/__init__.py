"""Python UDFs as native plan nodes.

A UDF call becomes a UDF expression in the plan; the executor runs projects that contain one on
threads of their own (``concurrency`` of them), never on the compute pool. Each call receives one
batch (``batch_size`` rows, or the morsel) as :class:`ketch.Series` arguments.

- ``@ketch.cls(return_dtype=..., batch_size=..., concurrency=...)`` on a class: ``Model(args)``
  binds constructor arguments without running ``__init__``; ``__init__`` runs once per instance, at
  most ``concurrency`` instances, created lazily on the UDF's threads (in process mode: all of
  them, in their worker processes, when the first batch arrives); ``model(col(...))`` calls
  ``__call__`` on batches.
- ``@ketch.udf(return_dtype=..., batch_size=..., concurrency=...)``: the legacy decorator, on a
  batch function or a class with ``__call__``.
- ``Expression.apply(func, return_dtype)``: a row-wise Python function.

Errors raised by user code surface as :class:`ketch.errors.UDFError` naming the UDF, with the
original exception (and its traceback) as ``__cause__``.

The package, by concern: ``decorators`` (the public decorators), ``options`` (their checked
options), ``plan_node`` (the UDF expression in the plan), ``runners`` (the batch call, retries,
errors, timeouts), ``pool`` (class instances), ``async_runner``, ``generators``, ``results``
(return values → Arrow), ``errors`` (UDFError and the stash), ``binding`` (arguments and the
legacy option setters), ``methods`` (``@ketch.method``) and ``metrics`` (custom counters).
"""

from __future__ import annotations

import sys

from ketch.udf import metrics
from ketch.udf.decorators import cls, func, udf
from ketch.udf.errors import reraise_udf_error
from ketch.udf.plan_node import row_wise_expression

__all__ = ["cls", "func", "metrics", "reraise_udf_error", "row_wise_expression", "udf"]

# ``ketch.udf.metrics`` (Daft's ``daft.udf.metrics``): ``ketch.udf`` is the ``udf`` decorator (Daft's
# legacy API) once ``ketch`` is imported, and this package otherwise; both carry it.
udf.metrics = metrics  # type: ignore[attr-defined]
assert sys.modules[__name__ + ".metrics"] is metrics
