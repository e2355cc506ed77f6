"""The pyarrow a Ketch build can run with: the native core links the ``libarrow.so.2600`` family
that the pyarrow 26.x wheels ship, so any 26.x works and any other major version cannot load it
(checked at ``import ketch``, before the core is loaded, with the command that fixes it)."""

from __future__ import annotations

ARROW_MAJOR = 26


def check_pyarrow(version: str) -> None:
    """Raises ImportError naming ``version`` and the pip command when its major version is not
    the one the core was built against."""
    try:
        major = int(version.split(".")[0])
    except ValueError:
        major = -1
    if major != ARROW_MAJOR:
        raise ImportError(
            f"Ketch needs pyarrow {ARROW_MAJOR}.x (its native core links libarrow.so.{ARROW_MAJOR}00), "
            f"but this environment has pyarrow {version}: "
            f'pip install "pyarrow>={ARROW_MAJOR},<{ARROW_MAJOR + 1}"'
        )


def _check_installed() -> None:
    import pyarrow

    check_pyarrow(pyarrow.__version__)


_check_installed()  # on import (ketch/__init__.py imports this module before the core)
