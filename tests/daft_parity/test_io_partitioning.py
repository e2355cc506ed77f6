"""``ketch.io.partitioning`` (Daft's ``daft.io.partitioning``): partition transforms and fields,
with the reprs, predicates, accessors and errors Daft 0.7.26 prints."""

from __future__ import annotations

import pytest

import ketch
from ketch.io.partitioning import PartitionField, PartitionTransform
from ketch.schema import Field

T = PartitionTransform


def test_transforms_print_and_answer_as_daft():
    made = [T.identity(), T.year(), T.month(), T.day(), T.hour(), T.iceberg_bucket(4), T.iceberg_truncate(3)]
    assert [repr(t) for t in made] == [
        "Identity",
        "Year",
        "Month",
        "Day",
        "Hour",
        "IcebergBucket(4)",
        "IcebergTruncate(3)",
    ]
    predicates = [
        "is_identity",
        "is_year",
        "is_month",
        "is_day",
        "is_hour",
        "is_iceberg_bucket",
        "is_iceberg_truncate",
    ]
    for i, t in enumerate(made):
        assert [getattr(t, p)() for p in predicates] == [j == i for j in range(len(predicates))]
    assert T.iceberg_bucket(10).num_buckets == 10 and T.iceberg_truncate(10).width == 10
    assert T.year() == T.year() and T.year() != T.month() and T.iceberg_bucket(2) != T.iceberg_bucket(3)
    with pytest.raises(AttributeError, match="Not an iceberg bucket transform"):
        _ = T.identity().num_buckets
    with pytest.raises(ValueError, match="please use one of the factory methods"):
        T()


def test_a_partition_field_prints_its_field_source_and_transform_as_daft():
    field = Field.create("y", ketch.DataType.int32())
    source = Field.create("ts", ketch.DataType.timestamp("us"))
    partition = PartitionField.create(field, source, T.year())
    assert repr(partition) == "PartitionField(y#Int32, src=ts#Timestamp[us], tfm=Year)"
    assert partition.field == field and partition.source_field == source and partition.transform == T.year()
    assert repr(PartitionField.create(field)) == "PartitionField(y#Int32)"
    with pytest.raises(NotImplementedError):
        PartitionField()
