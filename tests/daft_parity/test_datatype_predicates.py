"""Daft's DataType predicates and accessors (issue 28; the docstring examples of Daft 0.7.26's
``DataType.is_*`` run with ``import ketch as daft``)."""

from __future__ import annotations

import pytest

import ketch
from ketch import DataType

D = DataType
PREDICATES = {
    "is_int8": D.int8(), "is_int16": D.int16(), "is_int32": D.int32(), "is_int64": D.int64(),
    "is_uint8": D.uint8(), "is_uint16": D.uint16(), "is_uint32": D.uint32(), "is_uint64": D.uint64(),
    "is_float32": D.float32(), "is_float64": D.float64(), "is_boolean": D.bool(), "is_string": D.string(),
    "is_binary": D.binary(), "is_null": D.null(), "is_date": D.date(), "is_timestamp": D.timestamp("us"),
    "is_duration": D.duration("us"), "is_list": D.list(D.int64()), "is_struct": D.struct({"a": D.int64()}),
    "is_map": D.map(D.string(), D.int64()), "is_embedding": D.embedding(D.float32(), 4),
    "is_tensor": D.tensor(D.float32()), "is_fixed_shape_tensor": D.tensor(D.float32(), (2, 3)),
    "is_python": D.python(), "is_decimal128": D.decimal128(10, 2),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_each_predicate_is_true_for_its_type_only(name: str) -> None:
    assert getattr(PREDICATES[name], name)() is True
    others = [t for n, t in PREDICATES.items() if n != name]
    # An embedding is also a fixed-size list; nothing else answers another type's predicate.
    assert not any(getattr(t, name)() for t in others if not (name == "is_list" and t.is_embedding()))


def test_groups_and_accessors() -> None:
    assert D.int32().is_integer() and D.int32().is_numeric() and not D.string().is_numeric()
    assert D.timestamp("us").is_temporal() and D.date().is_temporal() and not D.int64().is_temporal()
    assert D.list(D.int64()).dtype == D.int64() and D.tensor(D.float32()).dtype == D.float32()
    assert D.embedding(D.float32(), 4).size == 4 and D.tensor(D.float32(), (2, 3)).shape == (2, 3)
    assert D.struct({"a": D.string(), "b": D.int64()}).fields == {"a": D.string(), "b": D.int64()}
    assert D.image("RGB").image_mode == ketch.ImageMode.RGB and D.image("RGB", 4, 5).shape == (4, 5)
    assert D.image().image_mode is None
    assert D.embedding(D.float32(), 4).is_logical() and not D.int64().is_logical()
    with pytest.raises(AttributeError):  # Daft's contract for every accessor of another type
        _ = D.int64().dtype


def test_map_decimal_and_time_accessors_as_daft() -> None:
    # Daft 0.7.26's docstring examples for key_type, value_type, precision, scale, timeunit,
    # timezone and size: the values, and AttributeError for a type without the property.
    m = D.map(D.string(), D.int64())
    assert m.key_type == D.string() and m.value_type == D.int64()
    d = D.decimal128(precision=10, scale=2)
    assert d.precision == 10 and d.scale == 2
    assert repr(D.time(timeunit="ns").timeunit) == "TimeUnit(ns)"
    assert D.timestamp(timeunit="ms", timezone="UTC").timeunit == ketch.TimeUnit.ms()
    assert D.timestamp(timeunit="ns", timezone="UTC").timezone == "UTC"
    assert D.timestamp(timeunit="ns").timezone is None
    assert D.fixed_size_binary(size=10).size == 10
    for name in ("key_type", "value_type", "precision", "scale", "timeunit", "timezone", "size",
                 "fields", "shape", "image_mode"):  # fmt: skip
        with pytest.raises(AttributeError):
            getattr(D.int64(), name)
