"""The Expression class. Every method builds a node of the native expression tree
(``ketch._core.PyExpr``); nothing is computed until a DataFrame is collected."""

from __future__ import annotations

import datetime
import struct
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch import _core
from ketch.datatype import DataType
from ketch.expressions.codec_methods import CodecMethods
from ketch.expressions.flat_methods import FlatMethods
from ketch.expressions.partitioning_methods import PartitioningMethods
from ketch.expressions.scalar_methods import ScalarFunctionMethods
from ketch.expressions.string_extra_methods import StringExtraMethods
from ketch.expressions.tokenize_methods import TokenizeMethods

if TYPE_CHECKING:
    from ketch.expressions.audio import AudioNamespace
    from ketch.expressions.embedding import EmbeddingNamespace
    from ketch.expressions.file import FileNamespace
    from ketch.expressions.image import ImageNamespace
    from ketch.expressions.list import ListNamespace
    from ketch.expressions.map import MapNamespace
    from ketch.expressions.pdf import PdfNamespace
    from ketch.expressions.struct import StructNamespace
    from ketch.expressions.temporal import DatetimeNamespace
    from ketch.expressions.url import UrlNamespace
    from ketch.expressions.video import VideoNamespace


_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)


def _to_arrow_literal(value: Any) -> Any:
    """What ``_core.lit`` takes: plain Python scalars (and naive dates/datetimes as (kind, int)),
    built natively, or a length-1 pyarrow array. Plain values avoid pyarrow's Python-object
    conversion, which imports pandas (half a second) the first time it runs."""
    if value is None or type(value) in (bool, int, float, str, bytes):
        return value
    if type(value) is datetime.date:
        return ("date32", (value - _EPOCH_DATE).days)
    if type(value) is datetime.datetime and value.tzinfo is None:
        delta = value - _EPOCH
        return ("timestamp_us", (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)
    if type(value) is datetime.timedelta:
        # duration[us] from its buffer: pa.array([timedelta]) imports pandas (half a second).
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        return pa.Array.from_buffers(pa.duration("us"), 1, [None, pa.py_buffer(struct.pack("<q", micros))])
    if isinstance(value, pa.Scalar):
        return pa.array([value.as_py()], type=value.type)
    if isinstance(value, uuid.UUID):
        return pa.array([value.bytes], type=pa.uuid())
    if isinstance(value, str):
        return pa.array([value], type=pa.large_string())
    if isinstance(value, bytes):
        return pa.array([value], type=pa.large_binary())
    return pa.array([value])


def lit(value: Any) -> Expression:
    """A literal: a Python scalar (int, float, str, bytes, bool, None, date...) or a pyarrow scalar."""
    if isinstance(value, Expression):
        return value
    return Expression(_core.lit(_to_arrow_literal(value)))


def col(name: str) -> Expression:
    """A reference to the column ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"col() takes a column name (str), got {type(name).__name__}")
    return Expression(_core.col(name))


def element() -> Expression:
    """The list element inside a :meth:`Expression.list_map` mapper or a
    :meth:`Expression.list_filter` predicate (Daft's ``daft.element()``: the column named ``""``);
    outside them it names a column that does not exist."""
    return Expression(_core.col(""))


def _expr(value: Any) -> Expression:
    return value if isinstance(value, Expression) else lit(value)


class Expression(
    ScalarFunctionMethods, FlatMethods, StringExtraMethods, CodecMethods, TokenizeMethods, PartitioningMethods
):
    """A column expression. Build with :func:`col` and :func:`lit`, combine with operators
    (``+ - * / == != < <= > >= & | ~``) and methods; namespaces ``.image`` and ``.url`` hold the
    multimodal kernels."""

    def __init__(self, native: _core.PyExpr, explode: bool | str = False) -> None:
        self._native = native
        # A generator UDF's column: a list per input row that the DataFrame explodes into rows.
        self._explode = explode
        # A UDF call: (its runner, its argument expressions), for GroupedDataFrame.map_groups.
        self._udf_call: tuple[Any, list[Expression]] | None = None

    @staticmethod
    def _call(function: str, *args: Any, **options: Any) -> Expression:
        natives = [_expr(a)._native for a in args]
        opts = {k: (None if v is None else _to_arrow_literal(v)) for k, v in options.items()}
        return Expression(_core.call(function, natives, opts))

    # -- naming and types ---------------------------------------------------------------------------
    def alias(self, name: str) -> Expression:
        """The same values under a new column name."""
        out = Expression(self._native.alias(name), self._explode)
        if getattr(self, "_udf_call", None) is not None:
            out._udf_call = self._udf_call  # map_groups of an aliased UDF call
        return out

    def name(self) -> str:
        """The output column name."""
        return self._native.output_name()

    def cast(self, dtype: DataType | pa.DataType | type) -> Expression:
        """Casts to ``dtype`` (Arrow's safe casts); an impossible cast fails at plan time."""
        return Expression(self._native.cast(DataType._infer(dtype).to_arrow()))

    # -- arithmetic and comparison ------------------------------------------------------------------
    def __add__(self, other: Any) -> Expression:
        from ketch.expressions.temporal import is_interval

        if is_interval(other):  # date/timestamp + interval: calendar arithmetic
            return Expression._call("dt_add_interval", self, other)
        return Expression._call("add_checked", self, other)

    def __radd__(self, other: Any) -> Expression:
        from ketch.expressions.temporal import is_interval

        if is_interval(other):
            return Expression._call("dt_add_interval", self, other)
        return Expression._call("add_checked", other, self)

    def __sub__(self, other: Any) -> Expression:
        from ketch.expressions.temporal import is_interval

        if is_interval(other):
            return Expression._call("dt_add_interval", self, other, negate=True)
        return Expression._call("subtract_checked", self, other)

    def __rsub__(self, other: Any) -> Expression:
        return Expression._call("subtract_checked", other, self)

    def __mul__(self, other: Any) -> Expression:
        return Expression._call("multiply_checked", self, other)

    def __rmul__(self, other: Any) -> Expression:
        return Expression._call("multiply_checked", other, self)

    def __truediv__(self, other: Any) -> Expression:
        # True division always yields float64, as in Daft and Python.
        return Expression._call("divide", self.cast(pa.float64()), _expr(other).cast(pa.float64()))

    def __rtruediv__(self, other: Any) -> Expression:
        return _expr(other).__truediv__(self)

    def __neg__(self) -> Expression:
        return Expression._call("negate_checked", self)

    def __abs__(self) -> Expression:
        return Expression._call("abs", self)

    def __eq__(self, other: Any) -> Expression:  # type: ignore[override]
        return Expression._call("equal", self, other)

    def __ne__(self, other: Any) -> Expression:  # type: ignore[override]
        return Expression._call("not_equal", self, other)

    def __lt__(self, other: Any) -> Expression:
        return Expression._call("less", self, other)

    def __le__(self, other: Any) -> Expression:
        return Expression._call("less_equal", self, other)

    def __gt__(self, other: Any) -> Expression:
        return Expression._call("greater", self, other)

    def __ge__(self, other: Any) -> Expression:
        return Expression._call("greater_equal", self, other)

    def __and__(self, other: Any) -> Expression:
        return Expression._call("and_kleene", self, other)

    def __rand__(self, other: Any) -> Expression:
        return Expression._call("and_kleene", other, self)

    def __or__(self, other: Any) -> Expression:
        return Expression._call("or_kleene", self, other)

    def __ror__(self, other: Any) -> Expression:
        return Expression._call("or_kleene", other, self)

    def __invert__(self) -> Expression:
        return Expression._call("invert", self)

    def __bool__(self) -> bool:
        raise TypeError("an Expression has no truth value; use & | ~ instead of and/or/not")

    __hash__ = None  # type: ignore[assignment]

    def if_else(self, if_true: Any, if_false: Any) -> Expression:
        """Where this boolean expression is true, ``if_true``, else ``if_false`` (null stays null).
        Both branches are cast to their common type (Arrow's ``if_else``)."""
        return Expression._call("if_else", self, _expr(if_true), _expr(if_false))

    def is_null(self) -> Expression:
        """True where the value is null."""
        return Expression._call("is_null", self)

    def not_null(self) -> Expression:
        """True where the value is not null."""
        return Expression._call("is_valid", self)

    def is_in(self, other: Any) -> Expression:
        """True where the value equals one of ``other`` (a list of literals, a numpy array or a
        pyarrow array), false where it equals none, null where it is null (as Daft). Built from
        equality checks joined by ``|`` (so it pushes into Lance as ``col IN (...)``); an empty
        ``other`` gives false for every row. Raises TypeError for an ``other`` that is not a sequence."""
        if isinstance(other, pa.ChunkedArray | pa.Array):
            values = other.to_pylist()
        elif isinstance(other, str | bytes) or not hasattr(other, "__iter__"):
            raise TypeError(f"is_in() takes a list of values, got {type(other).__name__}")
        else:
            values = list(other.tolist() if hasattr(other, "tolist") else other)
        if not values:
            return Expression._call("and_kleene", self.is_null(), lit(False))
        terms = [Expression._call("equal", self, lit(v)) for v in values]
        while len(terms) > 1:  # balanced, so a long list does not make a deep tree
            paired = [
                Expression._call("or_kleene", a, b) for a, b in zip(terms[::2], terms[1::2], strict=False)
            ]
            terms = paired + ([terms[-1]] if len(terms) % 2 else [])
        return terms[0]

    def between(self, lower: Any, upper: Any) -> Expression:
        """True where ``lower <= value <= upper`` (both ends inclusive, as Daft); null where any
        side is null."""
        return Expression._call("and_kleene", self >= _expr(lower), self <= _expr(upper))

    # -- aggregations (used in DataFrame.agg / GroupedDataFrame.agg) ------------------------------
    def sum(self) -> Expression:
        """Sum of the non-null values (int64 for signed ints, uint64 unsigned, float64 floats)."""
        return Expression._call("agg_sum", self)

    def mean(self) -> Expression:
        """Arithmetic mean of the non-null values (float64; null for no values)."""
        return Expression._call("agg_mean", self)

    def min(self) -> Expression:
        """Smallest non-null value (numbers, strings, booleans, dates)."""
        return Expression._call("agg_min", self)

    def max(self) -> Expression:
        """Largest non-null value (numbers, strings, booleans, dates)."""
        return Expression._call("agg_max", self)

    def count(self, mode: str = "valid") -> Expression:
        """Number of values (uint64): ``mode`` "valid" (non-null, the default), "all" or "null"."""
        mode = getattr(mode, "value", mode)
        if str(mode).lower() not in ("valid", "all", "null"):
            raise ValueError(f"count mode must be 'valid', 'all' or 'null', got {mode!r}")
        return Expression._call("agg_count", self, mode=str(mode).lower())

    def stddev(self, ddof: int = 1) -> Expression:
        """Standard deviation of the non-null values, float64: divisor n - ``ddof`` (default 1,
        the sample value, as Daft); null where n <= ddof (a one-row group with the default)."""
        from ketch.functions import aggregation

        return aggregation.stddev(self, ddof=ddof)

    def any_value(self, ignore_nulls: bool = False) -> Expression:
        """Some value of the group. With ``ignore_nulls=True``, a non-null one whenever the group
        has any (the smallest, or for nested and image types the first)."""
        return Expression._call("agg_any_value", self, ignore_nulls=bool(ignore_nulls))

    def agg_list(self) -> Expression:
        """All values of the group (nulls included) as a list."""
        return Expression._call("agg_list", self)

    def agg_concat(self) -> Expression:
        """The group's strings concatenated (nulls skipped)."""
        return Expression._call("agg_concat", self)

    def approx_count_distinct(self) -> Expression:
        """Number of distinct non-null values (uint64; computed exactly)."""
        return Expression._call("agg_approx_count_distinct", self)

    # -- window functions (ketch/functions/window.py) ----------------------------------------------
    def over(self, window: Any) -> Expression:
        """This expression (an aggregation or a window function) computed over ``window``
        (:class:`ketch.Window`), one value per row."""
        return window._apply(self)

    def lag(self, offset: int = 1, default: Any | None = None) -> Expression:
        """The value ``offset`` rows before the current row in its window partition, else ``default``."""
        from ketch.functions.window import lag

        return lag(self, offset=offset, default=default)

    def lead(self, offset: int = 1, default: Any | None = None) -> Expression:
        """The value ``offset`` rows after the current row in its window partition, else ``default``."""
        from ketch.functions.window import lead

        return lead(self, offset=offset, default=default)

    # Daft's other aggregations: one implementation in ketch.functions.aggregation (see there).
    def count_distinct(self) -> Expression:
        """Number of distinct non-null values (uint64, exact)."""
        from ketch.functions import aggregation

        return aggregation.count_distinct(self)

    def product(self) -> Expression:
        """Product of the non-null values (int64 / uint64 / float64); null for none."""
        from ketch.functions import aggregation

        return aggregation.product(self)

    def avg(self) -> Expression:
        """Alias of :meth:`mean`."""
        return self.mean()

    def var(self, ddof: int = 1) -> Expression:
        """Variance of the non-null values (float64), divisor n - ``ddof``."""
        from ketch.functions import aggregation

        return aggregation.var(self, ddof=ddof)

    def skew(self) -> Expression:
        """Population skewness of the non-null values (float64)."""
        from ketch.functions import aggregation

        return aggregation.skew(self)

    def bool_and(self) -> Expression:
        """Boolean AND of the non-null values; null for none."""
        from ketch.functions import aggregation

        return aggregation.bool_and(self)

    def bool_or(self) -> Expression:
        """Boolean OR of the non-null values; null for none."""
        from ketch.functions import aggregation

        return aggregation.bool_or(self)

    def approx_percentiles(self, percentiles: float | list[float]) -> Expression:
        """Approximate percentiles (float64, or fixed_size_list<float64, n> for a list)."""
        from ketch.functions import aggregation

        return aggregation.approx_percentiles(self, percentiles)

    def percentile(self, percentage: float) -> Expression:
        """Exact percentile (linear interpolation, float64)."""
        from ketch.functions import aggregation

        return aggregation.percentile(self, percentage)

    def median(self) -> Expression:
        """Exact median (float64)."""
        from ketch.functions import aggregation

        return aggregation.median(self)

    def list_agg(self) -> Expression:
        """All values of the group as a list (Daft's newer name of :meth:`agg_list`)."""
        return self.agg_list()

    def list_agg_distinct(self) -> Expression:
        """The distinct non-null values of the group as a list."""
        from ketch.functions import aggregation

        return aggregation.list_agg_distinct(self)

    def agg_set(self) -> Expression:
        """Daft's older name of :meth:`list_agg_distinct`."""
        return self.list_agg_distinct()

    def string_agg(self, delimiter: str | None = None) -> Expression:
        """The group's strings concatenated, ``delimiter`` between them (nulls skipped; null for a
        group without a non-null string; see ``ketch.functions.string_agg``)."""
        from ketch.functions import aggregation

        return aggregation.string_agg(self, delimiter)

    # -- Python functions ----------------------------------------------------------------------------
    def apply(self, func: Callable[[Any], Any], return_dtype: DataType | pa.DataType | type) -> Expression:
        """Calls ``func`` on every value (a Python object; images as numpy (H, W, C) uint8 arrays) and
        builds a column of ``return_dtype`` from the results."""
        from ketch.udf.plan_node import row_wise_expression

        return row_wise_expression(func, [self], DataType._infer(return_dtype))

    # -- namespaces ------------------------------------------------------------------------------------
    @property
    def image(self) -> ImageNamespace:
        from ketch.expressions.image import ImageNamespace

        return ImageNamespace(self)

    @property
    def audio(self) -> AudioNamespace:
        from ketch.expressions.audio import AudioNamespace

        return AudioNamespace(self)

    @property
    def embedding(self) -> EmbeddingNamespace:
        from ketch.expressions.embedding import EmbeddingNamespace

        return EmbeddingNamespace(self)

    @property
    def file(self) -> FileNamespace:
        from ketch.expressions.file import FileNamespace

        return FileNamespace(self)

    @property
    def video(self) -> VideoNamespace:
        from ketch.expressions.video import VideoNamespace

        return VideoNamespace(self)

    @property
    def pdf(self) -> PdfNamespace:
        from ketch.expressions.pdf import PdfNamespace

        return PdfNamespace(self)

    @property
    def url(self) -> UrlNamespace:
        from ketch.expressions.url import UrlNamespace

        return UrlNamespace(self)

    @property
    def dt(self) -> DatetimeNamespace:
        from ketch.expressions.temporal import DatetimeNamespace

        return DatetimeNamespace(self)

    @property
    def list(self) -> ListNamespace:
        from ketch.expressions.list import ListNamespace

        return ListNamespace(self)

    @property
    def map(self) -> MapNamespace:
        from ketch.expressions.map import MapNamespace

        return MapNamespace(self)

    @property
    def struct(self) -> StructNamespace:
        from ketch.expressions.struct import StructNamespace

        return StructNamespace(self)

    def explode(self) -> Expression:
        """One row per element of this list column (Daft's ``explode`` expression): in ``select`` /
        ``with_column`` the other columns repeat; an empty or null list gives one null row."""
        return Expression(self._native, explode="list")

    # Daft 0.7's flat spellings, one implementation behind both.
    def decode_image(self, on_error: str = "raise", mode: Any = None) -> Expression:
        """Same as ``.image.decode(on_error, mode)``."""
        return self.image.decode(on_error=on_error, mode=mode)

    def resize(self, w: int, h: int) -> Expression:
        """Same as ``.image.resize(w, h)``."""
        return self.image.resize(w, h)

    def encode_image(self, image_format: str, quality: int = 75) -> Expression:
        """Same as ``.image.encode(image_format)``."""
        return self.image.encode(image_format, quality)

    def crop(self, bbox: Any) -> Expression:
        """Same as ``.image.crop(bbox)``."""
        return self.image.crop(bbox)

    def file_path(self) -> Expression:
        """Same as ``.file.path()``."""
        return self.file.path()

    def file_size(self) -> Expression:
        """Same as ``.file.size()``."""
        return self.file.size()

    def guess_mime_type(self) -> Expression:
        """Same as ``.file.guess_mime_type()``."""
        return self.file.guess_mime_type()

    def convert_image(self, mode: Any) -> Expression:
        """Same as ``.image.to_mode(mode)``."""
        return self.image.to_mode(mode)

    def download(
        self, max_connections: int = 32, on_error: str = "raise", io_config: Any = None
    ) -> Expression:
        """Same as ``.url.download(max_connections, on_error, io_config)``."""
        return self.url.download(max_connections=max_connections, on_error=on_error, io_config=io_config)

    def __repr__(self) -> str:
        return repr(self._native)
