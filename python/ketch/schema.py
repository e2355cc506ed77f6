"""``ketch.Schema`` and ``ketch.Field``: a DataFrame's column names and types, as Daft's
``daft.Schema`` / ``daft.Field`` (``df.schema()["x"].dtype``, ``column_names()``, iteration over
fields, ``len``, equality, ``to_pyarrow_schema()``)."""

from __future__ import annotations

import html
from collections.abc import Iterator

import pyarrow as pa

from ketch.datatype import DataType


class Field:
    """One column: ``name`` (str) and ``dtype`` (a :class:`ketch.DataType`)."""

    def __init__(self, name: str, dtype: DataType) -> None:
        self._name = name
        self._dtype = dtype

    @staticmethod
    def create(name: str, dtype: DataType) -> Field:
        """A field named ``name`` of type ``dtype`` (Daft's constructor)."""
        return Field(name, DataType._infer(dtype))

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> DataType:
        return self._dtype

    @property
    def type(self) -> pa.DataType:
        """The Arrow type (a pyarrow-style convenience; ``dtype`` is the Ketch DataType)."""
        return self._dtype.to_arrow()

    def to_pyarrow_field(self) -> pa.Field:
        return pa.field(self._name, self._dtype.to_arrow())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Field) and self._name == other._name and self._dtype == other._dtype

    def __hash__(self) -> int:
        return hash((self._name, self._dtype))

    def __repr__(self) -> str:
        return f"Field(name={self._name}, dtype={self._dtype})"


class Schema:
    """Column names and types of a DataFrame, in order (Daft's ``daft.Schema``).

    ``schema["x"]`` is the :class:`Field` named ``x`` (ValueError naming the columns when there is
    none); iterating gives the fields in order; ``len`` is the number of columns; two schemas are
    equal when names and types match in order. ``to_pyarrow_schema()`` gives the Arrow schema
    (image, tensor, file columns keep Ketch's extension types).

    For code written against the pyarrow schema Ketch returned before, ``names``, ``types``
    (Arrow types) and ``field(name or index)`` (a ``pyarrow.Field``) are kept, and a Schema
    compares equal to the ``pyarrow.Schema`` with the same fields."""

    def __init__(self, arrow_schema: pa.Schema) -> None:
        self._arrow = arrow_schema

    # -- constructors --------------------------------------------------------------------------------
    @classmethod
    def from_pyarrow_schema(cls, pa_schema: pa.Schema) -> Schema:
        """A Schema with the fields of ``pa_schema``."""
        if not isinstance(pa_schema, pa.Schema):
            raise TypeError(f"from_pyarrow_schema() takes a pyarrow.Schema, got {type(pa_schema).__name__}")
        return cls(pa_schema)

    @classmethod
    def from_pydict(cls, fields: dict[str, DataType]) -> Schema:
        """A Schema from ``{name: DataType}`` (DataTypes, pyarrow types or Python types)."""
        return cls(pa.schema([(name, DataType._infer(dtype).to_arrow()) for name, dtype in fields.items()]))

    # -- Daft's accessors ----------------------------------------------------------------------------
    def __getitem__(self, key: str) -> Field:
        if not isinstance(key, str):
            raise TypeError(f"Schema[...] takes a column name (str), got {type(key).__name__}")
        index = self._arrow.get_field_index(key)
        if index < 0:
            raise ValueError(f"{key} was not found in Schema of fields {self.column_names()}")
        field = self._arrow.field(index)
        return Field(field.name, DataType(field.type))

    def __len__(self) -> int:
        return len(self._arrow)

    def __iter__(self) -> Iterator[Field]:
        for field in self._arrow:
            yield Field(field.name, DataType(field.type))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._arrow.get_field_index(name) >= 0

    def column_names(self) -> list[str]:
        return list(self._arrow.names)

    def to_name_set(self) -> set[str]:
        return set(self._arrow.names)

    def to_pyarrow_schema(self) -> pa.Schema:
        return self._arrow

    def union(self, other: Schema) -> Schema:
        """The fields of both schemas; raises ValueError when a name is in both."""
        if not isinstance(other, Schema):
            raise ValueError(f"Expected Schema, got other: {type(other)}")
        shared = self.to_name_set() & other.to_name_set()
        if shared:
            raise ValueError(f"Schema.union(): columns {sorted(shared)} are in both schemas")
        return Schema(pa.schema(list(self._arrow) + list(other._arrow)))

    def estimate_row_size_bytes(self) -> float:
        """Rough bytes per row: fixed-width types exactly, 20 bytes per variable-width value."""
        total = 0.0
        for field in self._arrow:
            try:
                total += field.type.bit_width / 8
            except ValueError:
                total += 20.0
        return total

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Schema):
            return self._arrow.equals(other._arrow)
        if isinstance(other, pa.Schema):
            return self._arrow.equals(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple((f.name, str(f.type)) for f in self._arrow))

    def __reduce__(self) -> tuple:
        return (Schema, (self._arrow,))

    # -- pyarrow-style conveniences ------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return list(self._arrow.names)

    @property
    def types(self) -> list[pa.DataType]:
        return list(self._arrow.types)

    def field(self, key: str | int) -> pa.Field:
        """The ``pyarrow.Field`` at a name or position (KeyError when there is none)."""
        return self._arrow.field(key)

    def empty_table(self) -> pa.Table:
        return self._arrow.empty_table()

    # -- display -------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        from ketch.display.text_table import box_table

        rows = [[f.name, str(DataType(f.type))] for f in self._arrow]
        return box_table([["Column Name"], ["DType"]], rows) + "\n"  # Daft's header and trailing newline

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><td>{html.escape(f.name)}</td><td>{html.escape(str(DataType(f.type)))}</td></tr>"
            for f in self._arrow
        )
        return (
            '<table class="dataframe"><thead><tr><th>column_name</th><th>type</th></tr></thead>'
            f"<tbody>{cells}</tbody></table>"
        )
