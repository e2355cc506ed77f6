"""Partition fields and transforms of a scan source (Hive, Iceberg): Daft's
``daft.io.partitioning`` value objects, ``PartitionTransform`` (identity, year, month, day, hour,
Iceberg's bucket and truncate) and ``PartitionField`` (a partition column, its source column and
the transform between them). Values and messages as Daft 0.7.26 prints them."""

from __future__ import annotations

from typing import Any

from ketch.schema import Field

_NAMES = {
    "identity": "Identity",
    "year": "Year",
    "month": "Month",
    "day": "Day",
    "hour": "Hour",
    "iceberg_bucket": "IcebergBucket",
    "iceberg_truncate": "IcebergTruncate",
}


class PartitionTransform:
    """How a partition column derives from its source column (made by the factory methods)."""

    _kind: str
    _arg: int | None

    def __init__(self) -> None:
        raise ValueError(
            "We do not support creating a PartitionTransform directly, please use one of the factory methods."
        )

    @classmethod
    def _make(cls, kind: str, arg: int | None = None) -> PartitionTransform:
        transform = cls.__new__(cls)
        transform._kind, transform._arg = kind, arg
        return transform

    def __repr__(self) -> str:
        name = _NAMES[self._kind]
        return name if self._arg is None else f"{name}({self._arg})"

    def __eq__(self, value: object) -> bool:
        return isinstance(value, PartitionTransform) and (value._kind, value._arg) == (self._kind, self._arg)

    def __hash__(self) -> int:
        return hash((self._kind, self._arg))

    @classmethod
    def identity(cls) -> PartitionTransform:
        """The source value unchanged."""
        return cls._make("identity")

    @classmethod
    def year(cls) -> PartitionTransform:
        """The year of a date or timestamp."""
        return cls._make("year")

    @classmethod
    def month(cls) -> PartitionTransform:
        """The month of a date or timestamp."""
        return cls._make("month")

    @classmethod
    def day(cls) -> PartitionTransform:
        """The day of a date or timestamp."""
        return cls._make("day")

    @classmethod
    def hour(cls) -> PartitionTransform:
        """The hour of a timestamp."""
        return cls._make("hour")

    @classmethod
    def iceberg_bucket(cls, n: int) -> PartitionTransform:
        """Iceberg's bucket transform into ``n`` buckets (murmur3 of the value, mod n)."""
        return cls._make("iceberg_bucket", int(n))

    @classmethod
    def iceberg_truncate(cls, w: int) -> PartitionTransform:
        """Iceberg's truncate transform to width ``w``."""
        return cls._make("iceberg_truncate", int(w))

    def is_identity(self) -> bool:
        return self._kind == "identity"

    def is_year(self) -> bool:
        return self._kind == "year"

    def is_month(self) -> bool:
        return self._kind == "month"

    def is_day(self) -> bool:
        return self._kind == "day"

    def is_hour(self) -> bool:
        return self._kind == "hour"

    def is_iceberg_bucket(self) -> bool:
        return self._kind == "iceberg_bucket"

    def is_iceberg_truncate(self) -> bool:
        return self._kind == "iceberg_truncate"

    @property
    def num_buckets(self) -> int:
        """An iceberg_bucket transform's number of buckets (AttributeError otherwise)."""
        if self._kind != "iceberg_bucket" or self._arg is None:
            raise AttributeError("Not an iceberg bucket transform")
        return self._arg

    @property
    def width(self) -> int:
        """An iceberg_truncate transform's width (AttributeError otherwise)."""
        if self._kind != "iceberg_truncate" or self._arg is None:
            raise AttributeError("Not an iceberg truncate transform")
        return self._arg


class PartitionField:
    """A partition column of a scan source: its field, the source field it derives from and the
    transform (made with :meth:`create`)."""

    _field: Field
    _source_field: Field | None
    _transform: PartitionTransform | None

    def __init__(self) -> None:
        raise NotImplementedError("We do not support creating a PartitionField via __init__ ")

    @classmethod
    def create(
        cls, field: Field, source_field: Field | None = None, transform: PartitionTransform | None = None
    ) -> PartitionField:
        partition = cls.__new__(cls)
        partition._field, partition._source_field, partition._transform = field, source_field, transform
        return partition

    def __repr__(self) -> str:
        def short(f: Any) -> str:
            return f"{f.name}#{f.dtype}"

        parts = [short(self._field)]
        if self._source_field is not None:
            parts.append(f"src={short(self._source_field)}")
        if self._transform is not None:
            parts.append(f"tfm={self._transform!r}")
        return f"PartitionField({', '.join(parts)})"

    @property
    def field(self) -> Field:
        return self._field

    @property
    def source_field(self) -> Field | None:
        return self._source_field

    @property
    def transform(self) -> PartitionTransform | None:
        return self._transform


__all__ = ["PartitionField", "PartitionTransform"]
