"""``show()`` lays tables out as Daft 0.7.26 does: cells cut after 29 characters with "…" (a
string keeps its line breaks), the middle columns hidden behind a "… (N hidden)" column past
ceil(120 / 18) - 1 = 6 columns, and wide tables wrapped to 120 characters by comfy_table's dynamic
arrangement (words first, long words cut; East Asian wide characters count two cells); maps print
as ``{"key": value}``. The expected text is what Daft printed for the same DataFrames
(``data/show_layout_daft_0_7_26.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import ketch

EXPECTED = json.loads((Path(__file__).parent / "data" / "show_layout_daft_0_7_26.json").read_text())

FRAMES = {
    "cut": lambda: ketch.from_pydict(
        {"s": ["a" * 28, "b" * 29, "c" * 30, "line1\nline2 is a very long second line of text here"]}
    ),
    "hidden": lambda: ketch.from_pydict({f"column_{i}": [i * 1000] for i in range(12)}),
    "wrap": lambda: ketch.from_pydict({f"c{i}": ["x" * 25] for i in range(6)}),
    "words": lambda: ketch.from_pydict(
        {
            "column_name_long0": ["quick brown fox engineers quick", "multimodal"],
            "c1": ["quick build quick", None],
            "x2": ["over fox a engineers fox brown dog", "multimodal data pipelines pipelines"],
            "x3": ["y" * 35, "quick brown data data engineers while"],
        }
    ),
    "wide_chars": lambda: ketch.from_pydict(
        {
            "mid name0": ["数据 a embeddings 数据 data dog s", "é brown"],
            "c1": [-778943013740, 5],
            "c2": ["数据 jumps brown engineers jumps over", "x"],
        }
    ),
    "maps": lambda: ketch.from_arrow(
        pa.table(
            {
                "m": pa.array([[("a", "x y"), ("b", None)], []], type=pa.map_(pa.string(), pa.string())),
                "n": pa.array([[(1, 2.5)], [(3, None)]], type=pa.map_(pa.int64(), pa.float64())),
            }
        )
    ),
}


@pytest.mark.parametrize("case", sorted(FRAMES))
def test_show_prints_what_daft_prints(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    FRAMES[case]().show()
    assert capsys.readouterr().out == EXPECTED[case]
