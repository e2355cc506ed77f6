"""Pickling of Ketch's Arrow extension types (images, Python objects, ...): they are implemented in
C++ and reach Python as ``pyarrow.lib.BaseExtensionType``, whose default pickling goes through
``pa.type_for_alias(str(type))`` and fails on load ("No type alias for fixedshapeimage[...]").
Tables holding them must pickle: Ray moves every partition between the engine workers and the
driver that way. Registered with ``copyreg`` when ``ketch`` is imported: such a type pickles as the
Arrow IPC bytes of a one-field schema, and loads back through the extension type registry (the
native module registers Ketch's types when it loads)."""

from __future__ import annotations

import copyreg

import pyarrow as pa


def _extension_type_from_ipc(data: bytes) -> pa.DataType:
    """The type of the single field of an IPC-serialized schema."""
    return pa.ipc.read_schema(pa.py_buffer(data)).field(0).type


def _reduce_extension_type(datatype: pa.DataType) -> tuple[object, tuple[bytes]]:
    schema = pa.schema([pa.field("type", datatype)])
    return _extension_type_from_ipc, (schema.serialize().to_pybytes(),)


def register() -> None:
    """Makes C++ extension types picklable (idempotent)."""
    copyreg.pickle(pa.lib.BaseExtensionType, _reduce_extension_type)
