"""``show()`` and ``repr`` print what Daft 0.7.26 prints, byte for byte (issue 28): type names
(``String``, ``Bool``), values (``true``, ``1s``, ``[1, 2.5]``, ``b"abc"``, structs one field per
line, floats without exponents), the footer with the total of a materialized frame. The
expected strings below were printed by Daft itself running the same code."""

from __future__ import annotations

import contextlib
import datetime
import io

import ketch

# fmt: off
SHOW = (
    '╭───────┬──────────────────┬───────┬─────────────┬──────────────╮\n'
    '│ a     ┆ s                ┆ b     ┆ l           ┆ t            │\n'
    '│ ---   ┆ ---              ┆ ---   ┆ ---         ┆ ---          │\n'
    '│ Int64 ┆ String           ┆ Bool  ┆ List[Int64] ┆ Duration[us] │\n'
    '╞═══════╪══════════════════╪═══════╪═════════════╪══════════════╡\n'
    '│ 1     ┆ x                ┆ true  ┆ [1]         ┆ 1s           │\n'
    '├╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌┤\n'
    '│ 2     ┆ None             ┆ false ┆ []          ┆ None         │\n'
    '├╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌┤\n'
    '│ None  ┆ long string here ┆ None  ┆ None        ┆ 2m           │\n'
    '╰───────┴──────────────────┴───────┴─────────────┴──────────────╯\n'
    '\n'
    '(Showing first 3 of 3 rows)\n'
)
REPR = SHOW.rstrip("\n")  # Daft's repr is show()'s text without the last newline
VALUES = (
    '╭───────────────┬─────────────────────────────┬─────────────┬───────────────────────┬──────────────╮\n'
    '│ lf            ┆ st                          ┆ by          ┆ f                     ┆ td           │\n'
    '│ ---           ┆ ---                         ┆ ---         ┆ ---                   ┆ ---          │\n'
    '│ List[Float64] ┆ Struct[a: Int64, b: String] ┆ Binary      ┆ Float64               ┆ Duration[us] │\n'
    '╞═══════════════╪═════════════════════════════╪═════════════╪═══════════════════════╪══════════════╡\n'
    '│ [1, 2.5]      ┆ {a: 1,                      ┆ b"abc"      ┆ 1.5                   ┆ 1d 2h        │\n'
    '│               ┆ b: x,                       ┆             ┆                       ┆              │\n'
    '│               ┆ }                           ┆             ┆                       ┆              │\n'
    '├╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌┤\n'
    '│ []            ┆ None                        ┆ b"\\x00\\xff" ┆ 100000000000000000000 ┆ 1s 500000µs  │\n'
    '├╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌╌╌╌╌╌╌┤\n'
    '│ None          ┆ {a: None,                   ┆ None        ┆ NaN                   ┆ -3s          │\n'
    '│               ┆ b: y,                       ┆             ┆                       ┆              │\n'
    '│               ┆ }                           ┆             ┆                       ┆              │\n'
    '╰───────────────┴─────────────────────────────┴─────────────┴───────────────────────┴──────────────╯\n'
    '\n'
    '(Showing first 3 of 3 rows)'
)
# fmt: on


def _frame() -> ketch.DataFrame:
    return ketch.from_pydict({
        "a": [1, 2, None],
        "s": ["x", None, "long string here"],
        "b": [True, False, None],
        "l": [[1], [], None],
        "t": [datetime.timedelta(seconds=1), None, datetime.timedelta(minutes=2)],
    })  # fmt: skip


def test_show_and_repr_print_daft_text() -> None:
    df = _frame()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.show()
    assert out.getvalue() == SHOW
    assert repr(df) == REPR


def test_values_print_as_daft_prints_them() -> None:
    df = ketch.from_pydict({
        "lf": [[1.0, 2.5], [], None],
        "st": [{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}],
        "by": [b"abc", b"\x00\xff", None],
        "f": [1.5, 1e20, float("nan")],
        "td": [datetime.timedelta(days=1, hours=2), datetime.timedelta(milliseconds=1500),
               datetime.timedelta(seconds=-3)],
    })  # fmt: skip
    assert repr(df) == VALUES


def test_a_dataframe_without_rows_prints_daft_s_no_data_footer() -> None:
    import contextlib
    import io

    empty = ketch.from_pydict({"x": [1]}).where(ketch.col("x") > 5)
    table = "╭───────╮\n│ x     │\n│ ---   │\n│ Int64 │\n╞═══════╡\n╰───────╯\n\n"
    no_rows = "(No data to display: Materialized dataframe has no rows)\n"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        empty.show()
    assert out.getvalue() == table + no_rows  # Daft 0.7.26's text
    # Not materialized: the header only, and Daft's hint; materialized: as show().
    assert repr(empty) == table.replace("╞═══════╡\n", "") + NOT_MATERIALIZED_TEXT
    assert repr(empty.collect()) == table + no_rows.rstrip("\n")


NOT_MATERIALIZED_TEXT = "(No data to display: Dataframe not materialized, use .collect() to materialize)"
