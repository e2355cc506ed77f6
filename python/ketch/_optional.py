"""Optional dependencies: the extras of ``pip install "ketch[...]"``.

The base install (pyarrow, numpy, cloudpickle, tblib, tqdm) runs the engine; each feature below
imports its library on first use, and when it is missing fails with ``ModuleNotFoundError`` whose
message is the exact command that installs it:

========================  =====================  ==================
feature                   package                extra
========================  =====================  ==================
the Ray runner, to_ray    ray                    ``ketch[ray]``
read/write_lance          pylance                ``ketch[lance]``
SQL (sql, sql_expr)       sqlglot                ``ketch[sql]``
to_torch_*                torch                  ``ketch[torch]``
pdf functions             pypdfium2              ``ketch[media]``
AI functions' providers   transformers, ...      ``ketch[ai]``
from/to_pandas            pandas                 ``ketch[pandas]``
========================  =====================  ==================

``ketch[all]`` installs every extra. Audio and video need FFmpeg's shared libraries from the
system instead (no wheel on PyPI carries FFmpeg 5.1): their error names the packages to install."""

from __future__ import annotations

import importlib
from types import ModuleType

# Top-level import name -> (the package pip installs, the extra that brings it).
EXTRAS: dict[str, tuple[str, str]] = {
    "ray": ("ray", "ray"),
    "lance": ("pylance", "lance"),
    "sqlglot": ("sqlglot", "sql"),
    "torch": ("torch", "torch"),
    "pypdfium2_raw": ("pypdfium2", "media"),
    "transformers": ("transformers", "ai"),
    "sentence_transformers": ("sentence-transformers", "ai"),
    "openai": ("openai", "ai"),
    "pydantic": ("pydantic", "ai"),
    "PIL": ("pillow", "ai"),
    "pandas": ("pandas", "pandas"),
}


def missing_message(module: str, feature: str) -> str:
    """The message for ``feature`` when ``module`` (a key of EXTRAS) is not installed."""
    package, extra = EXTRAS[module.split(".")[0]]
    return (
        f"{feature} needs the optional package {package!r}, which is not installed: "
        f'pip install "ketch[{extra}]"'
    )


def require(module: str, feature: str) -> ModuleType:
    """``importlib.import_module(module)``; when ``module`` itself (not one of its own imports) is
    missing, ModuleNotFoundError with :func:`missing_message`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".")[0]
        if exc.name is None or exc.name.split(".")[0] != top:
            raise  # the package is there; something it imports is not
        raise ModuleNotFoundError(missing_message(module, feature), name=exc.name) from None
