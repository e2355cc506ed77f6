"""Deep expressions, deep plans and deep SQL stop at documented limits with KetchValueError (they
used to segfault in the planner or raise a bare RecursionError); below the limits they run."""

from __future__ import annotations

import pytest

import ketch
from ketch import col
from ketch.errors import KetchValueError


@pytest.fixture
def df():
    return ketch.from_pydict({"a": [1, 2, 3]})


def test_expression_chain_below_the_limit_runs(df):
    e = col("a")
    for _ in range(4_990):
        e = e + 1
    assert df.select(e.alias("x")).to_pydict() == {"x": [4_991, 4_992, 4_993]}


def test_expression_chain_past_the_limit_raises_while_building():
    e = col("a")
    with pytest.raises(KetchValueError, match="expression nested too deeply: depth 5001 .* limit of 5000"):
        for _ in range(30_000):
            e = e + 1


def test_long_or_chain_past_the_limit_raises(df):
    with pytest.raises(KetchValueError, match="expression nested too deeply"):
        e = col("a") == 0
        for i in range(50_000):
            e = e | (col("a") == i)
    # the same condition as one is_in runs at any size
    assert df.where(col("a").is_in(list(range(50_000)))).count_rows() == 3


def test_plan_chain_below_the_limit_runs(df):
    for _ in range(1_999):
        df = df.with_column("a", col("a") + 1)
    assert df.to_pydict() == {"a": [2_000, 2_001, 2_002]}


def test_plan_chain_past_the_limit_raises_and_collect_resets_it(df):
    with pytest.raises(
        KetchValueError, match="query plan nested too deeply: 2001 operations .* limit of 2000"
    ):
        for _ in range(5_000):
            df = df.with_column("a", col("a") + 1)
    deep = ketch.from_pydict({"a": [0]})
    for _ in range(1_500):
        deep = deep.with_column("a", col("a") + 1)
    deep = deep.collect()  # a materialized frame starts a new plan
    for _ in range(1_500):
        deep = deep.with_column("a", col("a") + 1)
    assert deep.to_pydict() == {"a": [3_000]}


def test_sql_with_500_nested_subqueries_runs(df):
    query = "SELECT a FROM " + "(SELECT a FROM " * 500 + "df" + ")" * 500
    assert ketch.sql(query, df=df).to_pydict() == {"a": [1, 2, 3]}


def test_sql_sum_of_1000_terms_runs(df):
    query = "SELECT " + " + ".join(["a"] * 1000) + " AS x FROM df"
    assert ketch.sql(query, df=df).to_pydict() == {"x": [1000, 2000, 3000]}


@pytest.mark.parametrize(
    "query",
    [
        "SELECT " + " + ".join(["a"] * 10_000) + " AS x FROM df",
        "SELECT a FROM " + "(SELECT a FROM " * 5_000 + "df" + ")" * 5_000,
        "SELECT " + "(" * 100_000 + "a" + ")" * 100_000 + " AS x FROM df",
    ],
    ids=["10k-term sum", "5k nested subqueries", "100k parentheses"],
)
def test_sql_past_the_limits_is_a_ketch_value_error(df, query):
    with pytest.raises(KetchValueError, match="nested too deeply"):
        ketch.sql(query, df=df)


def test_sql_expr_string_predicates_get_the_deep_stack(df):
    predicate = " OR ".join(f"a = {i}" for i in range(3_000))
    assert df.where(predicate).count_rows() == 3


def test_sql_parameters_leave_string_literals_alone():
    df = ketch.from_pydict({"t": ["12:30", "?", "x"], "n": [1, 2, 3]})
    named = ketch.sql("SELECT n FROM df WHERE t = '12:30' AND n > :m", df=df, params={"m": 0})
    assert named.to_pydict() == {"n": [1]}
    question = ketch.sql("SELECT n FROM df WHERE t <> '?' AND n > ?", df=df, params=[1])
    assert question.to_pydict() == {"n": [3]}
    dollar = ketch.sql("SELECT n, 'a$1' AS s FROM df WHERE n > $1 -- :x and ?", df=df, params=[1])
    assert dollar.to_pydict() == {"n": [2, 3], "s": ["a$1", "a$1"]}
