"""``show(format=, verbose=, max_width=, align=)`` prints Daft 0.7.26's text byte for byte (issue
28). ``data/show_formats_daft_0_7_26.txt`` is what Daft 0.7.26 printed for exactly these calls
(benchmarks/.venv-peers), with the ``== ...`` markers printed between them."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import ketch

EXPECTED = Path(__file__).parent / "data" / "show_formats_daft_0_7_26.txt"


def _printed() -> str:
    df = ketch.from_pydict({"x": [1, 22], "y": ["abcdefgh", None], "zzzzzzzz": [1.5, 2.0]})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for f in ["fancy", "markdown", "plain", "simple", "grid"]:
            print("==", f)
            df.show(format=f)
            df.show(format=f, verbose=True)
        for w in [3, 4, 5, 6]:
            print("== max_width", w)
            df.show(format="fancy", max_width=w)
        for a in ["center", "right", "auto"]:
            df.show(format="simple", align=a)
            df.show(align=a)
        df.show(1, format="markdown")
        empty = ketch.from_pydict({"x": [1]}).where(ketch.col("x") > 5)
        empty.show(format="markdown")
        empty.show(format="fancy")
    return out.getvalue()


def test_formats_print_daft_s_text() -> None:
    got, want = _printed().splitlines(), EXPECTED.read_text().splitlines()
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        assert g == w, f"line {i + 1}: {g!r} != {w!r}"
    assert len(got) == len(want)


def test_bad_options_raise() -> None:
    df = ketch.from_pydict({"x": [1]})
    with pytest.raises(ValueError, match="format must be one of"):
        df.show(format="ascii")
    with pytest.raises(ValueError, match="align must be one of"):
        df.show(align="justify")
    with pytest.raises(ValueError, match="HTML"):
        df.show(format="html")
