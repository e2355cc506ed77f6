"""Smaller gaps against Daft 0.7.26 (issue 28): string_agg with a delimiter (and null for a group
without strings), bool_and / bool_or over a Null-typed column, unpivot of an empty input, literal
lists over an empty morsel, and SQL's ROLLUP, capitalize, percentile, to_date / str_to_date,
ARRAY[..] and IS [NOT] DISTINCT FROM. Expected values were read from Daft 0.7.26
(benchmarks/.venv-peers) running the same queries."""

from __future__ import annotations

import datetime as dt
import statistics

import pytest

import ketch
from ketch import col
from ketch.sql.errors import InvalidSQLException

ROWS = {"g": ["a", "a", "a", "b", "c"], "s": ["x", None, "y", None, "z"]}


def test_string_agg_delimiter_and_groups_without_strings() -> None:
    df = ketch.from_pydict(ROWS)
    got = (
        df.groupby("g")
        .agg(col("s").string_agg(delimiter=", ").alias("n"), col("s").string_agg().alias("m"))
        .sort("g")
        .to_pydict()
    )
    assert got == {"g": ["a", "b", "c"], "n": ["x, y", None, "z"], "m": ["xy", None, "z"]}
    assert df.agg(col("s").string_agg(delimiter="-")).to_pydict() == {"s": ["x-y-z"]}
    assert df.where(col("g") == "zz").agg(col("s").string_agg(delimiter="-")).to_pydict() == {"s": [None]}
    assert df.groupby("g").string_agg("s", delimiter="+").sort("g").to_pydict()["s"] == ["x+y", None, "z"]
    frame = df  # noqa: F841 (read by name in SQL)
    sql = ketch.sql("SELECT g, string_agg(s, '|') AS j FROM frame GROUP BY g ORDER BY g").to_pydict()
    assert sql["j"] == ["x|y", None, "z"]
    with pytest.raises(TypeError, match="delimiter must be a string"):
        col("s").string_agg(delimiter=1)  # type: ignore[arg-type]


def test_bool_and_or_of_a_null_column_are_null() -> None:
    df = ketch.from_pydict({"g": ["a", "a", "b"], "x": [None, None, None]})
    assert df.agg(col("x").bool_and().alias("a"), col("x").bool_or().alias("o")).to_pydict() == {
        "a": [None],
        "o": [None],
    }  # Daft: the same; its grouped form fails ("Series lengths did not match"), Ketch's gives nulls
    grouped = df.groupby("g").agg(col("x").bool_and().alias("a"), col("x").bool_or().alias("o")).sort("g")
    assert grouped.to_pydict() == {"g": ["a", "b"], "a": [None, None], "o": [None, None]}


def test_unpivot_and_list_literals_over_no_rows() -> None:
    empty = ketch.from_pydict({"g": ["a", "b"], "a": [1, 2], "b": [3, 4]}).where(col("a") > 10)
    out = empty.unpivot("g", ["a", "b"])
    assert out.to_pydict() == {"g": [], "variable": [], "value": []}
    listed = empty.select(ketch.functions.to_list(ketch.lit(1), ketch.lit(2)).alias("l"))
    assert listed.to_pydict() == {"l": []}


@pytest.fixture
def frame() -> ketch.DataFrame:
    return ketch.from_pydict(
        {
            "g": ["a", "a", "b"],
            "a": [1, 2, 3],
            "b": [1, None, 3],
            "s": ["hello world", "FOO", None],
            "d": ["2024-01-02", "2023-12-31", None],
        }
    )


def test_sql_functions_daft_has(frame: ketch.DataFrame) -> None:
    def q(sql: str) -> dict:
        return ketch.sql(sql, frame=frame).to_pydict()

    assert q("SELECT capitalize(s) AS c FROM frame") == {"c": ["Hello world", "Foo", None]}
    assert q("SELECT ARRAY[1, 2] AS x FROM frame") == {"x": [[1, 2]] * 3}
    assert q("SELECT ARRAY[a, b] AS x FROM frame") == {"x": [[1, 1], [2, None], [3, 3]]}
    assert q("SELECT percentile(a, 0.5) AS p FROM frame") == {"p": [statistics.median([1, 2, 3])]}
    dates = [dt.date(2024, 1, 2), dt.date(2023, 12, 31), None]
    assert q("SELECT to_date(d, '%Y-%m-%d') AS x FROM frame") == {"x": dates}  # a strftime format
    assert q("SELECT str_to_date(d, '%Y-%m-%d') AS x FROM frame") == {"x": dates}
    # Not in Daft 0.7.26 ("Unsupported SQL"): SQL's null-safe comparison.
    assert q("SELECT a IS NOT DISTINCT FROM b AS x, a IS DISTINCT FROM b AS y FROM frame") == {
        "x": [True, False, True],
        "y": [False, True, False],
    }


def test_sql_group_by_rollup(frame: ketch.DataFrame) -> None:
    one = ketch.sql("SELECT g, sum(a) AS s FROM frame GROUP BY ROLLUP(g) ORDER BY g", frame=frame)
    assert one.to_pydict() == {"g": ["a", "b", None], "s": [3, 3, 6]}
    two = ketch.sql("SELECT g, a, sum(b) AS s FROM frame GROUP BY ROLLUP(g, a) ORDER BY g, a", frame=frame)
    assert two.to_pydict() == {
        "g": ["a", "a", "a", "b", "b", None],
        "a": [1, 2, None, 3, None, None],
        "s": [1, None, 1, 3, 3, 4],
    }
    with pytest.raises(InvalidSQLException, match="CUBE"):
        ketch.sql("SELECT g, sum(a) FROM frame GROUP BY CUBE(g)", frame=frame).collect()


def test_cte_column_list_renames_and_parse_error_caret_as_daft() -> None:
    df = ketch.from_pydict({"a": [1]})  # noqa: F841 (read by name in SQL)
    # Daft 0.7.26: ['z'] (Ketch ignored the column list and gave ['a'])
    assert ketch.sql("WITH t(z) AS (SELECT a FROM df) SELECT * FROM t").to_pydict() == {"z": [1]}
    with pytest.raises(InvalidSQLException, match="names 2 columns, its query has 1"):
        ketch.sql("WITH t(z, w) AS (SELECT a FROM df) SELECT * FROM t")
    # Daft: "SQL error at Line: 1, Column: 14\nLINE 1: SELECT a FRM df\n<caret under 'df'>\nREASON: ..."
    with pytest.raises(InvalidSQLException) as info:
        ketch.sql("SELECT a FRM df")
    lines = str(info.value).splitlines()
    assert lines[:3] == ["SQL error at Line: 1, Column: 14", "LINE 1: SELECT a FRM df", " " * 21 + "^"]
    assert lines[3].startswith("REASON: ")
