"""Daft 0.7's flat Expression methods (``col("t").year()``, ``col("l").list_sum()``, ...): each is
the ``ketch.functions`` free function of the same name, or the namespace method it names (one
implementation behind every spelling). Mixed into ``Expression``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.datatype import TimeUnit
    from ketch.expressions.expression import Expression
    from ketch.expressions.image_hash import HashMethod


def _f() -> Any:
    import ketch.functions  # late: ketch.functions imports this module's host

    return ketch.functions


class FlatMethods:
    """Flat spellings of the temporal, math, list, map, window, image and embedding functions."""

    # --- introspection ---
    def is_column(self) -> bool:
        """Whether this expression is a bare column reference (``col("x")``; not an alias)."""
        return bool(self._native.is_column())  # type: ignore[attr-defined]

    def is_literal(self) -> bool:
        """Whether this expression is a bare literal (``lit(1)``; not an alias or a cast)."""
        return bool(self._native.is_literal())  # type: ignore[attr-defined]

    def as_py(self) -> Any:
        """The Python value of a literal expression (``lit(1).as_py() == 1``); ValueError for any
        other expression."""
        array = self._native.literal_array()  # type: ignore[attr-defined]
        if array is None:
            raise ValueError(f"as_py() needs a literal expression, got {self!r}")
        return array.to_pylist()[0]

    def column_name(self) -> str | None:
        """The referenced column's name for a bare column reference, else None."""
        return str(self._native.output_name()) if self.is_column() else None  # type: ignore[attr-defined]

    # --- video (Daft 0.7's Expression methods; see ``ketch.functions.video``) ---
    def video_metadata(self) -> Any:
        """See :func:`ketch.functions.video_metadata`."""
        from ketch.functions.video import video_metadata

        return video_metadata(self)

    def video_keyframes(self, start_time: float = 0, end_time: float | None = None) -> Any:
        """See :func:`ketch.functions.video_keyframes`."""
        from ketch.functions.video import video_keyframes

        return video_keyframes(self, start_time, end_time)

    def video_frames(
        self,
        start_time: float = 0,
        end_time: float | None = None,
        width: int | None = None,
        height: int | None = None,
        is_key_frame: bool | None = None,
        sample_interval_seconds: float | None = None,
    ) -> Any:
        """See :func:`ketch.functions.video_frames`."""
        from ketch.functions.video import video_frames

        return video_frames(self, start_time, end_time, width, height, is_key_frame, sample_interval_seconds)

    # --- temporal (see ``Expression.dt``) ---
    def year(self) -> Expression:
        """Year (int32) of a date/timestamp; null stays null."""
        return _f().year(self)

    def quarter(self) -> Expression:
        """Quarter 1-4 (uint32) of a date/timestamp."""
        return _f().quarter(self)

    def month(self) -> Expression:
        """Month 1-12 (uint32) of a date/timestamp."""
        return _f().month(self)

    def day(self) -> Expression:
        """Day of month 1-31 (uint32) of a date/timestamp."""
        return _f().day(self)

    def day_of_month(self) -> Expression:
        """Day of month 1-31 (uint32) of a date/timestamp."""
        return _f().day_of_month(self)

    def day_of_week(self) -> Expression:
        """Day of week, Monday=0 (uint32)."""
        return _f().day_of_week(self)

    def day_of_year(self) -> Expression:
        """Day of year 1-366 (uint32)."""
        return _f().day_of_year(self)

    def week_of_year(self) -> Expression:
        """ISO week of year 1-53 (uint32)."""
        return _f().week_of_year(self)

    def hour(self) -> Expression:
        """Hour 0-23 (uint32) of a timestamp/time."""
        return _f().hour(self)

    def minute(self) -> Expression:
        """Minute 0-59 (uint32) of a timestamp/time."""
        return _f().minute(self)

    def second(self) -> Expression:
        """Second 0-59 (uint32) of a timestamp/time."""
        return _f().second(self)

    def millisecond(self) -> Expression:
        """Millisecond within the second (uint32)."""
        return _f().millisecond(self)

    def microsecond(self) -> Expression:
        """Microsecond within the second (uint32)."""
        return _f().microsecond(self)

    def nanosecond(self) -> Expression:
        """Nanosecond within the second (uint32)."""
        return _f().nanosecond(self)

    def date(self) -> Expression:
        """The date part of a timestamp (date32)."""
        return _f().date(self)

    def time(self) -> Expression:
        """The time-of-day part of a timestamp (time64)."""
        return _f().time(self)

    def unix_date(self) -> Expression:
        """Days since 1970-01-01 (uint64) of a date/timestamp."""
        return _f().unix_date(self)

    def strftime(self, format: str | None = None) -> Expression:
        """Format a date/timestamp as a string (chrono ``format``; ISO when None)."""
        return _f().strftime(self, format)

    def to_unix_epoch(self, time_unit: str | TimeUnit | None = None) -> Expression:
        """Timestamp as int64 ticks since the epoch in ``time_unit`` (seconds when None)."""
        return _f().to_unix_epoch(self, time_unit)

    def date_trunc(self, interval: str, relative_to: Expression | None = None) -> Expression:
        """Truncate a timestamp to ``interval`` (e.g. ``"1 hour"``), optionally relative to a start."""
        return _f().date_trunc(interval, self, relative_to)

    def convert_time_zone(self, to_timezone: str, from_timezone: str | None = None) -> Expression:
        """The same instants shown in ``to_timezone``."""
        return _f().convert_time_zone(self, to_timezone, from_timezone)

    def replace_time_zone(self, timezone: str | None = None) -> Expression:
        """The same wall-clock times labelled ``timezone`` (None drops the zone)."""
        return _f().replace_time_zone(self, timezone)

    def total_days(self) -> Expression:
        """Whole days (int64) in a duration."""
        return _f().total_days(self)

    def total_hours(self) -> Expression:
        """Whole hours (int64) in a duration."""
        return _f().total_hours(self)

    def total_minutes(self) -> Expression:
        """Whole minutes (int64) in a duration."""
        return _f().total_minutes(self)

    def total_seconds(self) -> Expression:
        """Whole seconds (int64) in a duration."""
        return _f().total_seconds(self)

    def total_milliseconds(self) -> Expression:
        """Whole milliseconds (int64) in a duration."""
        return _f().total_milliseconds(self)

    def total_microseconds(self) -> Expression:
        """Whole microseconds (int64) in a duration."""
        return _f().total_microseconds(self)

    def total_nanoseconds(self) -> Expression:
        """Whole nanoseconds (int64) in a duration."""
        return _f().total_nanoseconds(self)

    # --- general / math ---
    def abs(self) -> Expression:
        """Absolute value (same numeric dtype)."""
        return _f().abs(self)

    def coalesce(self, *others: Any) -> Expression:
        """The first non-null of ``self`` and ``others``, row by row."""
        return _f().coalesce(self, *others)

    def pow(self, exp: Any) -> Expression:
        """``self`` raised to ``exp`` (float64)."""
        return _f().pow(self, exp)

    def power(self, exp: Any) -> Expression:
        """``self`` raised to ``exp`` (float64)."""
        return _f().power(self, exp)

    def eq_null_safe(self, other: Any) -> Expression:
        """Equality where null == null is True and null == value is False (never null)."""
        return _f().eq_null_safe(self, other)

    # --- list / string slices ---
    def slice(self, start: Any, end: Any = None) -> Expression:
        """Elements ``[start, end)`` of each list (negative indices count from the end)."""
        return _f().slice(self, start, end)

    def chunk(self, size: int) -> Expression:
        """A list split into sub-lists of ``size`` elements."""
        return _f().chunk(self, size)

    def value_counts(self) -> Expression:
        """Per list: a map from each element to its count."""
        return _f().value_counts(self)

    def list_sum(self) -> Expression:
        """Sum of each list's elements."""
        return _f().list_sum(self)

    def list_mean(self) -> Expression:
        """Mean of each list's elements (float64)."""
        return _f().list_mean(self)

    def list_min(self) -> Expression:
        """Minimum of each list's elements."""
        return _f().list_min(self)

    def list_max(self) -> Expression:
        """Maximum of each list's elements."""
        return _f().list_max(self)

    def list_count(self, mode: Any = "valid") -> Expression:
        """Count of each list's elements (``"valid"``, ``"null"`` or ``"all"``; uint64)."""
        return _f().list_count(self, mode)

    def list_sort(self, desc: bool | None = None, nulls_first: bool | None = None) -> Expression:
        """Each list sorted (ascending unless ``desc``)."""
        return _f().list_sort(self, desc, nulls_first)

    def list_distinct(self) -> Expression:
        """Each list's distinct non-null elements."""
        return _f().list_distinct(self)

    def list_map(self, mapper: Expression) -> Expression:
        """Each list with ``mapper`` (an expression over ``ketch.element()``) applied to its elements."""
        return _f().list_map(self, mapper)

    def list_filter(self, predicate: Expression) -> Expression:
        """Each list keeping the elements where ``predicate`` over ``ketch.element()`` is true."""
        return _f().list_filter(self, predicate)

    def list_join(self, delimiter: Any) -> Expression:
        """Each list of strings joined with ``delimiter``."""
        return _f().list_join(self, delimiter)

    def list_contains(self, item: Any) -> Expression:
        """Whether each list contains ``item`` (bool)."""
        return _f().list_contains(self, item)

    def list_append(self, other: Any) -> Expression:
        """Each list with ``other`` appended."""
        return _f().list_append(self, other)

    def list_flatten(self) -> Expression:
        """A list of lists flattened one level."""
        return _f().list_flatten(self)

    def list_bool_and(self) -> Expression:
        """AND of each list of booleans (nulls skipped)."""
        return _f().list_bool_and(self)

    def list_bool_or(self) -> Expression:
        """OR of each list of booleans (nulls skipped)."""
        return _f().list_bool_or(self)

    # --- maps ---
    def map_get(self, key: Any) -> Expression:
        """The value under ``key`` in each map (null when absent)."""
        return _f().map_get(self, key)

    def map_keys(self) -> Expression:
        """The keys of each map as a list."""
        return _f().map_keys(self)

    # --- window ---
    def first_value(self, ignore_nulls: bool = False) -> Expression:
        """The first value (with ``ignore_nulls``, the first non-null value) in the window frame;
        use with ``.over(window)`` (see ``ketch.functions.first_value``)."""
        return _f().first_value(self, ignore_nulls=ignore_nulls)

    def last_value(self, ignore_nulls: bool = False) -> Expression:
        """The last value (with ``ignore_nulls``, the last non-null value) in the window frame;
        use with ``.over(window)`` (see ``ketch.functions.last_value``)."""
        return _f().last_value(self, ignore_nulls=ignore_nulls)

    # --- images ---
    def image_width(self) -> Expression:
        """Width in pixels (int64) of each image."""
        return self.image.width()  # type: ignore[attr-defined,no-any-return]

    def image_height(self) -> Expression:
        """Height in pixels (int64) of each image."""
        return self.image.height()  # type: ignore[attr-defined,no-any-return]

    def image_mode(self) -> Expression:
        """Mode of each image as a string ("L", "LA", "RGB", "RGBA")."""
        return self.image.mode()  # type: ignore[attr-defined,no-any-return]

    def image_channel(self) -> Expression:
        """Number of channels (int64) of each image."""
        return self.image.channels()  # type: ignore[attr-defined,no-any-return]

    def image_attribute(self, name: str) -> Expression:
        """One image property: ``"width"``, ``"height"``, ``"channel"`` or ``"mode"`` (ValueError
        for another name)."""
        return _f().image_attribute(self, name)  # type: ignore[no-any-return]

    def image_hash(
        self,
        *,
        method: HashMethod = "phash",
        hash_size: int = 8,
        binbits: int = 3,
    ) -> Expression:
        """Perceptual hash of each image as FixedSizeBinary, Daft's values: see
        ``ketch.functions.image_hash`` (methods, output size, errors)."""
        return _f().image_hash(self, method=method, hash_size=hash_size, binbits=binbits)  # type: ignore[no-any-return]

    # --- embeddings ---
    def cosine_distance(self, other: Any) -> Expression:
        """Cosine distance (float64) between two embedding/list columns."""
        return self.embedding.cosine_distance(other)  # type: ignore[attr-defined,no-any-return]

    def euclidean_distance(self, other: Any) -> Expression:
        """Euclidean distance (float64) between two embedding/list columns."""
        return self.embedding.euclidean_distance(other)  # type: ignore[attr-defined,no-any-return]

    def cosine_similarity(self, other: Any) -> Expression:
        """Cosine similarity (float64) between two embedding/list columns."""
        return _f().cosine_similarity(self, other)  # type: ignore[no-any-return]

    def dot_product(self, other: Any) -> Expression:
        """Dot product (float64) of two embedding/list columns, row by row."""
        return self.embedding.dot_product(other)  # type: ignore[attr-defined,no-any-return]

    def pearson_correlation(self, other: Any) -> Expression:
        """Pearson correlation (float64) of the two vectors of each row."""
        return self.embedding.pearson_correlation(other)  # type: ignore[attr-defined,no-any-return]

    def unnest(self) -> Expression:
        """A struct column's fields as columns of their own (Daft's ``struct.get("*")``): usable in
        ``select`` / ``with_columns``, which expand it to one column per field."""
        return _f().unnest(self)  # type: ignore[no-any-return]

    # --- URLs ---
    def upload(
        self, location: str, max_connections: int = 32, on_error: str = "raise", io_config: Any = None
    ) -> Expression:
        """Write each bytes value to a new file under ``location``; the file paths (see ``url.upload``)."""
        return _f().upload(self, location, max_connections, on_error, io_config)  # type: ignore[no-any-return]
