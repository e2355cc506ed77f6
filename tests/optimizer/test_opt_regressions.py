"""Wrong results and failures found by differential fuzzing of the optimizer and scans (each test
is the minimal reproducer, checked against the in-memory or unoptimized result)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

import ketch
from ketch import _core, col, lit
from ketch.context import get_execution_config


def run_without(df: ketch.DataFrame, rules: list[str]) -> dict:
    config = get_execution_config().to_native()
    plan = df._plan.optimize(rules, config=config)
    return plan.execute(config, _core.ExecutionStats())[1].read_all().to_pydict()


def test_schema_hints_disable_statistics_pruning(tmp_path):
    # Statistics are in the file's type; under a hint the order differs ("10" < "9" as strings).
    pq.write_table(
        pa.table({"a": pa.array([10, 20, 30, 40, 50], pa.int64())}), tmp_path / "a.parquet", row_group_size=2
    )
    df = ketch.read_parquet(str(tmp_path / "a.parquet"), schema_hints={"a": ketch.DataType.string()})
    assert df.where(col("a") < "9").to_pydict()["a"] == ["10", "20", "30", "40", "50"]
    pq.write_table(pa.table({"a": ["5", "40", "7", "100"]}), tmp_path / "b.parquet", row_group_size=2)
    df = ketch.read_parquet(str(tmp_path / "b.parquet"), schema_hints={"a": ketch.DataType.int64()})
    assert df.where(col("a") < 10).to_pydict() == {"a": [5, 7]}


def test_filter_after_limit_after_filter():
    df = ketch.from_arrow(pa.table({"id": list(range(10)), "j": [i % 3 for i in range(10)]}))
    out = df.where(col("id") >= 0).limit(5).where(col("j") > 0).to_pydict()
    assert out == {"id": [1, 2, 4], "j": [1, 2, 1]}
    out = df.where(col("id") >= 0).limit(5).with_column("k", col("j") * 2).where(col("k") > 0).to_pydict()
    assert out["id"] == [1, 2, 4]


def test_join_keeps_clashing_left_column_for_renaming(tmp_path):
    pq.write_table(
        pa.table({"k": [1, 2, 3], "g": ["x", "x", "y"], "v": [10.0, 20.0, 30.0]}), tmp_path / "l.parquet"
    )
    right = ketch.from_arrow(pa.table({"k": [2, 2, 4], "v": [1.0, 2.0, 3.0]}))
    joined = ketch.read_parquet(str(tmp_path / "l.parquet")).join(right, on="k")
    assert joined.column_names == ["k", "g", "v", "right.v"]
    assert joined.groupby("g").agg(col("right.v").sum().alias("s")).to_pydict() == {"g": ["x"], "s": [3.0]}
    assert joined.select("g", "right.v").to_pydict() == {"g": ["x", "x"], "right.v": [1.0, 2.0]}


def test_later_filter_never_sees_rows_an_earlier_one_removed():
    df = ketch.from_arrow(pa.table({"s": ["1", "x", "20", None, "3"]}))
    q = df.where(col("s") != "x").with_column("n", col("s").cast(ketch.DataType.int64())).where(col("n") > 2)
    assert q.to_pydict() == {"s": ["20", "3"], "n": [20, 3]}
    assert q.to_pydict() == run_without(q, ["PushDownFilter"])
    two = df.where(col("s") != "x").where(col("s").cast(ketch.DataType.int64()) > 2)
    assert two.to_pydict() == {"s": ["20", "3"]}
    one = df.where((col("s") != "x") & (col("s").cast(ketch.DataType.int64()) > 2))
    assert one.to_pydict() == {"s": ["20", "3"]}


def test_scan_filter_conjuncts_apply_in_order(tmp_path):
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"s": ["1", "x", "20", None, "3"]}), path)
    df = ketch.read_parquet(str(path)).where(col("s") != "x").where(col("s").cast(ketch.DataType.int64()) > 2)
    assert df.to_pydict() == {"s": ["20", "3"]}


def test_integer_literals_beyond_float_precision():
    df = ketch.from_arrow(pa.table({"f32": pa.array([1.0, 16777216.0], pa.float32()), "f64": [1.0, 2.0**62]}))
    assert df.where(col("f32") == 16777217).count_rows() == 0
    assert df.where(col("f32") < 16777217).count_rows() == 2
    assert df.where(col("f64") < 2**62).to_pydict()["f64"] == [1.0]


def test_out_of_range_integer_literals_never_wrap():
    t = pa.table(
        {
            "u": pa.array([0, 5, 2**64 - 1, None], pa.uint64()),
            "i": pa.array([-(2**63), 0, 7, None], pa.int64()),
        }
    )
    df = ketch.from_arrow(t)
    assert df.where(col("u") == -1).to_pydict()["u"] == []
    assert df.where(col("u") > -1).to_pydict()["u"] == [0, 5, 2**64 - 1]
    assert df.where(col("u") >= -1).to_pydict()["u"] == [0, 5, 2**64 - 1]
    assert df.where(~(col("u") == -1)).to_pydict()["u"] == [0, 5, 2**64 - 1]  # null stays null
    assert df.where(col("i") == 2**63).to_pydict()["i"] == []
    assert df.where(col("i") < 2**63).to_pydict()["i"] == [-(2**63), 0, 7]
    assert df.where(lit(2**63) > col("i")).to_pydict()["i"] == [-(2**63), 0, 7]
    small = ketch.from_arrow(pa.table({"b": pa.array([1, 200, None], pa.uint8())}))
    assert small.where(col("b") < 300).to_pydict()["b"] == [1, 200]
    assert small.where(col("b") != -5).to_pydict()["b"] == [1, 200]


def test_concat_of_differently_pruned_inputs(tmp_path):
    t = pa.table({"a": [1, 2, 3], "b": [10, 20, 30]})
    pq.write_table(t, tmp_path / "c.parquet")
    mem = ketch.from_arrow(t)
    parquet = ketch.read_parquet(str(tmp_path / "c.parquet"))
    assert mem.concat(parquet).select("b").to_pydict() == {"b": [10, 20, 30, 10, 20, 30]}
    assert mem.concat(mem.with_column("a", col("a") + 1)).select("b").to_pydict() == {"b": [10, 20, 30] * 2}
    assert parquet.concat(mem).where(col("b") > 20).select("a").to_pydict() == {"a": [3, 3]}


def test_empty_json_lines_files_have_no_rows(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"x": 1}\n{"x": 2}\n')
    (tmp_path / "b.jsonl").write_text("")
    (tmp_path / "c.jsonl").write_text("\n  \n")
    df = ketch.read_json(str(tmp_path))
    assert df.to_pydict() == {"x": [1, 2]}
    assert df.count_rows() == 2
    assert (
        ketch.read_json(
            str(tmp_path / "b.jsonl"), infer_schema=False, schema={"x": ketch.DataType.int64()}
        ).count_rows()
        == 0
    )


def test_duplicate_column_names_are_refused_at_planning(tmp_path):
    import pytest

    from ketch.errors import KetchError

    path = tmp_path / "dup.csv"
    path.write_text("a,a,b\n1,2,3\n")
    with pytest.raises(KetchError, match=r"dup\.csv.*'a' appears more than once"):
        ketch.read_csv(str(path))
    assert ketch.read_csv(str(path), has_headers=False).column_names == ["column_1", "column_2", "column_3"]


def test_boolean_constant_in_a_dictionary_filter_keeps_null_rows(tmp_path):
    pq.write_table(pa.table({"s": ["a", "b", None, "", "a"], "i": [0, 1, 2, 3, 4]}), tmp_path / "a.parquet")
    df = ketch.read_parquet(str(tmp_path)).where((col("s") == "a") | lit(True))
    assert run_without(df, ["SimplifyExpressions"])["i"] == [0, 1, 2, 3, 4]
    assert df.to_pydict()["i"] == [0, 1, 2, 3, 4]


def test_parquet_dictionary_columns_read_as_their_values(tmp_path):
    import pandas as pd

    pd.DataFrame({"s": pd.Categorical(["b", "a", None, "a"]), "i": [0, 1, 2, 3]}).to_parquet(
        tmp_path / "a.parquet"
    )
    df = ketch.read_parquet(str(tmp_path / "a.parquet"))
    assert df.schema().field("s").type == pa.string()
    assert df.sort("s").to_pydict() == {"s": ["a", "a", "b", None], "i": [1, 3, 0, 2]}
    joined = df.join(ketch.from_pydict({"s": ["a"], "v": [1]}), on="s").sort("i").to_pydict()
    assert joined == {"s": ["a", "a"], "i": [1, 3], "v": [1, 1]}


def test_exploding_join_keeps_probe_outputs_near_a_morsel():
    import io

    import numpy as np

    left = ketch.from_pydict({"k": np.zeros(20_000, dtype=np.int64), "a": np.arange(20_000)})
    right = ketch.from_pydict({"k": np.zeros(2_000, dtype=np.int64), "b": np.arange(2_000)})
    with ketch.execution_config_ctx(morsel_size_rows=65_536):
        df = left.join(right, on="k").where(col("a") + col("b") < 3)
        stats = df.explain_analyze(file=io.StringIO())
    probe = next(op for op in stats.operators() if op["name"] == "HashJoinProbe")
    assert probe["rows_out"] == 40_000_000
    assert probe["morsels"] >= 40_000_000 // (2 * 65_536)  # many bounded outputs, not one huge one
    assert sorted(zip(*df.to_pydict().values(), strict=True)) == [
        (0, 0, 0),
        (0, 0, 1),
        (0, 0, 2),
        (0, 1, 0),
        (0, 1, 1),
        (0, 2, 0),
    ]


def test_empty_csv_shard_has_no_rows(tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n2\n")
    (tmp_path / "b.csv").write_text("")
    assert ketch.read_csv(str(tmp_path)).to_pydict() == {"x": [1, 2]}
