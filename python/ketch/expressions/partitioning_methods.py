"""Daft's partition transforms as Expression methods (``col("t").partition_days()``, Daft 0.7.26)
and as the ``.partitioning`` namespace of earlier Daft releases (``col("t").partitioning.days()``):
each is the ``ketch.functions`` free function of the same name. Mixed into ``Expression``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


def _partitioning() -> Any:
    from ketch.functions import partitioning  # late: ketch.functions imports this module's host

    return partitioning


class PartitioningMethods:
    """partition_days/hours/months/years, partition_iceberg_bucket/truncate."""

    def partition_days(self) -> Expression:
        """See :func:`ketch.functions.partition_days`."""
        return _partitioning().partition_days(self)

    def partition_hours(self) -> Expression:
        """See :func:`ketch.functions.partition_hours`."""
        return _partitioning().partition_hours(self)

    def partition_months(self) -> Expression:
        """See :func:`ketch.functions.partition_months`."""
        return _partitioning().partition_months(self)

    def partition_years(self) -> Expression:
        """See :func:`ketch.functions.partition_years`."""
        return _partitioning().partition_years(self)

    def partition_iceberg_bucket(self, n: int) -> Expression:
        """See :func:`ketch.functions.partition_iceberg_bucket`."""
        return _partitioning().partition_iceberg_bucket(self, n)

    def partition_iceberg_truncate(self, w: int) -> Expression:
        """See :func:`ketch.functions.partition_iceberg_truncate`."""
        return _partitioning().partition_iceberg_truncate(self, w)

    @property
    def partitioning(self) -> PartitioningNamespace:
        """The partition transforms under their short names (``.partitioning.days()``)."""
        return PartitioningNamespace(self)


class PartitioningNamespace:
    """``expr.partitioning``: days, hours, months, years, iceberg_bucket(n), iceberg_truncate(w)."""

    def __init__(self, expr: Any) -> None:
        self._expr = expr

    def days(self) -> Expression:
        """See :func:`ketch.functions.partition_days`."""
        return _partitioning().partition_days(self._expr)

    def hours(self) -> Expression:
        """See :func:`ketch.functions.partition_hours`."""
        return _partitioning().partition_hours(self._expr)

    def months(self) -> Expression:
        """See :func:`ketch.functions.partition_months`."""
        return _partitioning().partition_months(self._expr)

    def years(self) -> Expression:
        """See :func:`ketch.functions.partition_years`."""
        return _partitioning().partition_years(self._expr)

    def iceberg_bucket(self, n: int) -> Expression:
        """See :func:`ketch.functions.partition_iceberg_bucket`."""
        return _partitioning().partition_iceberg_bucket(self._expr, n)

    def iceberg_truncate(self, w: int) -> Expression:
        """See :func:`ketch.functions.partition_iceberg_truncate`."""
        return _partitioning().partition_iceberg_truncate(self._expr, w)
