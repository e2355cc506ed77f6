"""DataType.python(): columns of arbitrary Python objects, stored pickled (cloudpickle) in an Arrow
extension type ``ketch.python`` over large_binary. The engine carries them as opaque bytes
(projections, filters, limits, joins on other keys, writes); Python code gets the objects back."""

from __future__ import annotations

import pickle
from typing import Any

import cloudpickle
import pyarrow as pa


class PythonScalar(pa.ExtensionScalar):
    def as_py(self, **kwargs: Any) -> Any:  # noqa: D102
        return None if self.value is None else pickle.loads(self.value.as_py())


class PythonType(pa.ExtensionType):
    """Arrow extension type ``ketch.python``: each value is one pickled Python object."""

    def __init__(self) -> None:
        super().__init__(pa.large_binary(), "ketch.python")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> PythonType:
        return cls()

    def __arrow_ext_scalar_class__(self) -> type:
        return PythonScalar

    def __reduce__(self) -> tuple:
        return (PythonType, ())


PYTHON_TYPE = PythonType()
try:
    pa.register_extension_type(PYTHON_TYPE)
except pa.ArrowKeyError:  # already registered (module reloaded)
    pass


def python_array(values: list[Any]) -> pa.ExtensionArray:
    """A ``ketch.python`` array of ``values`` (None stays null)."""
    storage = pa.array([None if v is None else cloudpickle.dumps(v) for v in values], pa.large_binary())
    return pa.ExtensionArray.from_storage(PYTHON_TYPE, storage)
