"""read_csv: type inference, parsing options, schemas and hints, several files, pushdowns into the
scan (results and explain text), variable-width rows. Values are checked against pyarrow.csv
reading the same bytes where the two should agree."""

from __future__ import annotations

import datetime
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from scan_helpers import optimized_plan, scan_stats

import ketch
from ketch import col
from ketch.errors import KetchError, KetchNotImplementedError

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


MIXED = (
    "i,f,b,s,d,n\n"
    "1,1.5,true,x,2024-01-02,\n"
    '2,,false,"y,z",2024-02-03,\n'
    ",3.25,,,,\n"
    "-7,1e3,true,w,1999-12-31,\n"
)


# -- inference ---------------------------------------------------------------------------------------


def test_inferred_types_and_values(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    df = ketch.read_csv(path)
    schema = df.schema()
    assert schema.names == ["i", "f", "b", "s", "d", "n"]
    assert schema.field("i").type == pa.int64()
    assert schema.field("f").type == pa.float64()
    assert schema.field("b").type == pa.bool_()
    assert pa.types.is_string(schema.field("s").type) or pa.types.is_large_string(schema.field("s").type)
    assert schema.field("d").type == pa.date32()
    assert schema.field("n").type == pa.null()
    assert df.to_pydict() == {
        "i": [1, 2, None, -7],
        "f": [1.5, None, 3.25, 1000.0],
        "b": [True, False, None, True],
        "s": ["x", "y,z", "", "w"],  # Daft: an empty string field stays ""
        "d": [datetime.date(2024, 1, 2), datetime.date(2024, 2, 3), None, datetime.date(1999, 12, 31)],
        "n": [None, None, None, None],
    }


def test_inference_matches_pyarrow_with_only_empty_fields_as_null(tmp_path):
    # Daft's reading: empty fields are null except in string columns, where they are "".
    path = write(tmp_path / "mixed.csv", MIXED)
    options = pacsv.ConvertOptions(null_values=[""], strings_can_be_null=False)
    expected = pacsv.read_csv(path, convert_options=options)
    got = ketch.read_csv(path).to_arrow()
    assert got.schema == expected.schema
    assert got.to_pydict() == expected.to_pydict()


def test_timestamps_are_inferred(tmp_path):
    path = write(tmp_path / "ts.csv", "t,v\n2024-01-02 03:04:05,1\n2024-01-03T00:00:00,2\n")
    table = ketch.read_csv(path).to_arrow()
    assert table.schema.field("t").type == pacsv.read_csv(path).schema.field("t").type
    assert table.column("t").to_pylist() == [
        datetime.datetime(2024, 1, 2, 3, 4, 5),
        datetime.datetime(2024, 1, 3, 0, 0, 0),
    ]


def test_empty_fields_are_null_except_in_string_columns(tmp_path):
    # Daft's reading: an empty field is null in a numeric column and "" in a string column.
    path = write(tmp_path / "nulls.csv", "a,b,c\n1,x,1.5\n,,\n3,z,\n")
    assert ketch.read_csv(path).to_pydict() == {
        "a": [1, None, 3],
        "b": ["x", "", "z"],
        "c": [1.5, None, None],
    }


def test_null_like_strings_stay_strings(tmp_path):
    path = write(
        tmp_path / "codes.csv", "code,name\nNA,Namibia\nUS,United States\nnull,x\nN/A,y\nNaN,z\n,empty\n"
    )
    assert ketch.read_csv(path).to_pydict()["code"] == ["NA", "US", "null", "N/A", "NaN", ""]


# -- parsing options ----------------------------------------------------------------------------------


def test_no_headers_names_columns_column_1_2_3(tmp_path):
    path = write(tmp_path / "h.csv", "1,a,true\n2,b,false\n3,c,true\n")
    df = ketch.read_csv(path, has_headers=False)
    assert df.column_names == ["column_1", "column_2", "column_3"]
    assert df.to_pydict() == {
        "column_1": [1, 2, 3],
        "column_2": ["a", "b", "c"],
        "column_3": [True, False, True],
    }


def test_no_headers_with_select_filter_limit_and_hints(tmp_path):
    path = write(tmp_path / "h.csv", "1,a,true\n2,b,false\n3,c,true\n4,d,true\n")
    df = ketch.read_csv(path, has_headers=False).where(col("column_3")).select("column_2")
    assert df.to_pydict() == {"column_2": ["a", "c", "d"]}
    assert ketch.read_csv(path, has_headers=False).limit(2).to_pydict()["column_1"] == [1, 2]
    hinted = ketch.read_csv(path, has_headers=False, schema_hints={"column_1": ketch.DataType.float64()})
    assert hinted.to_pydict()["column_1"] == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("delimiter", ["\t", ";", "|"], ids=["tab", "semicolon", "pipe"])
def test_delimiters(tmp_path, delimiter):
    d = delimiter
    text = f"a{d}b{d}c\n1{d}x y{d}2.5\n2{d}z,w{d}\n"
    path = write(tmp_path / "d.csv", text)
    got = ketch.read_csv(path, delimiter=delimiter).to_pydict()
    assert got == {"a": [1, 2], "b": ["x y", "z,w"], "c": [2.5, None]}
    expected = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter))
    assert got["b"] == expected.column("b").to_pylist()


def test_tsv_file_in_directory_with_tab_delimiter(tmp_path):
    write(tmp_path / "data" / "part.tsv", "a\tb\n1\tx\n")
    assert ketch.read_csv(str(tmp_path / "data"), delimiter="\t").to_pydict() == {"a": [1], "b": ["x"]}


def test_custom_quote_char(tmp_path):
    path = write(tmp_path / "q.csv", "a,b\n1,'x,y'\n2,'it''s'\n3,\"plain\"\n")
    assert ketch.read_csv(path, quote="'").to_pydict() == {"a": [1, 2, 3], "b": ["x,y", "it's", '"plain"']}


def test_escape_char(tmp_path):
    path = write(tmp_path / "e.csv", 'a,b\n1,"x\\"y"\n2,"p\\,q"\n')
    got = ketch.read_csv(path, escape_char="\\").to_pydict()
    assert got == {"a": [1, 2], "b": ['x"y', "p,q"]}
    expected = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(escape_char="\\"))
    assert got["b"] == expected.column("b").to_pylist()


def test_escape_with_custom_quote_delimiter_and_no_double_quote(tmp_path):
    path = write(tmp_path / "e.csv", "a|b\n1|'it\\'s'\n2|'p|q'\n")
    df = ketch.read_csv(path, delimiter="|", quote="'", escape_char="\\", double_quote=False)
    assert df.to_pydict() == {"a": [1, 2], "b": ["it's", "p|q"]}


def test_double_quote_on_and_off(tmp_path):
    path = write(tmp_path / "dq.csv", 'a,b\n1,"say ""hi"""\n')
    assert ketch.read_csv(path).to_pydict()["b"] == ['say "hi"']
    off = ketch.read_csv(path, double_quote=False).to_pydict()["b"]
    expected = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(double_quote=False))
    assert off == expected.column("b").to_pylist()
    assert off != ['say "hi"']


def test_newlines_inside_quoted_fields(tmp_path):
    path = write(tmp_path / "nl.csv", 'a,b\n1,"line1\nline2"\n2,plain\n3,"x\n\ny"\n')
    assert ketch.read_csv(path).to_pydict() == {"a": [1, 2, 3], "b": ["line1\nline2", "plain", "x\n\ny"]}


def test_crlf_line_endings_and_quoted_crlf(tmp_path):
    path = tmp_path / "crlf.csv"
    path.write_bytes(b'a,b\r\n1,"x\r\ny"\r\n2,z\r\n')
    assert ketch.read_csv(str(path)).to_pydict() == {"a": [1, 2], "b": ["x\r\ny", "z"]}


def test_comment_is_not_supported(tmp_path):
    path = write(tmp_path / "c.csv", "a\n1\n")
    with pytest.raises(KetchNotImplementedError, match="comment"):
        ketch.read_csv(path, comment="#")


@pytest.mark.parametrize(
    "kwargs",
    [{"delimiter": ";;"}, {"delimiter": ""}, {"quote": "''"}, {"escape_char": "ab"}],
    ids=["delimiter-2", "delimiter-empty", "quote-2", "escape-2"],
)
def test_multi_character_options_raise_value_error(tmp_path, kwargs):
    path = write(tmp_path / "c.csv", "a\n1\n")
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=f"{name} must be a single character"):
        ketch.read_csv(path, **kwargs)


# -- schemas and hints ------------------------------------------------------------------------------


def test_schema_hints_override_some_columns(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    df = ketch.read_csv(path, schema_hints={"i": ketch.DataType.int32(), "f": ketch.DataType.string()})
    table = df.to_arrow()
    assert table.schema.field("i").type == pa.int32()
    assert table.schema.field("f").type == ketch.DataType.string().to_arrow()
    assert table.schema.field("b").type == pa.bool_()  # not hinted: inferred
    assert table.column("i").to_pylist() == [1, 2, None, -7]
    assert table.column("f").to_pylist() == ["1.5", "", "3.25", "1e3"]  # the text, not 1000.0


def test_schema_with_infer_schema_true_acts_as_hints(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    table = ketch.read_csv(path, schema={"i": ketch.DataType.float64()}).to_arrow()
    assert table.schema.field("i").type == pa.float64()
    assert table.schema.field("d").type == pa.date32()
    assert table.column("i").to_pylist() == [1.0, 2.0, None, -7.0]


def test_schema_and_schema_hints_agreeing_are_combined(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    table = ketch.read_csv(
        path,
        schema={"i": ketch.DataType.float64()},
        schema_hints={"i": ketch.DataType.float64(), "b": ketch.DataType.string()},
    ).to_arrow()
    assert table.schema.field("i").type == pa.float64()
    assert table.column("b").to_pylist() == ["true", "false", "", "true"]


def test_schema_and_schema_hints_disagreeing_is_a_clear_error(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    with pytest.raises(KetchError, match="'i'"):
        ketch.read_csv(
            path, schema={"i": ketch.DataType.float64()}, schema_hints={"i": ketch.DataType.string()}
        )


def test_schema_without_inference_on_headerless_file(tmp_path):
    path = write(tmp_path / "h.csv", "1,a\n2,b\n3,\n")
    df = ketch.read_csv(
        path,
        has_headers=False,
        infer_schema=False,
        schema={"x": ketch.DataType.int32(), "y": ketch.DataType.string()},
    )
    table = df.to_arrow()
    assert table.schema.names == ["x", "y"]
    assert table.schema.field("x").type == pa.int32()
    assert table.to_pydict() == {"x": [1, 2, 3], "y": ["a", "b", ""]}


def test_schema_without_inference_reads_values_as_given_types(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    s = ketch.DataType.string()
    schema = {"i": ketch.DataType.float64(), "f": s, "b": s, "s": s, "d": s, "n": ketch.DataType.int64()}
    table = ketch.read_csv(path, infer_schema=False, schema=schema).to_arrow()
    assert table.schema.field("n").type == pa.int64()
    assert table.to_pydict() == {
        "i": [1.0, 2.0, None, -7.0],
        "f": ["1.5", "", "3.25", "1e3"],  # string columns keep empty fields as ""
        "b": ["true", "false", "", "true"],
        "s": ["x", "y,z", "", "w"],
        "d": ["2024-01-02", "2024-02-03", "", "1999-12-31"],
        "n": [None, None, None, None],
    }


def test_schema_without_inference_plus_hints(tmp_path):
    path = write(tmp_path / "h.csv", "1,a\n2,b\n")
    df = ketch.read_csv(
        path,
        has_headers=False,
        infer_schema=False,
        schema={"x": ketch.DataType.int64(), "y": ketch.DataType.string()},
        schema_hints={"x": ketch.DataType.string()},
    )
    assert df.to_pydict() == {"x": ["1", "2"], "y": ["a", "b"]}


def test_infer_schema_false_needs_schema(tmp_path):
    path = write(tmp_path / "h.csv", "a\n1\n")
    with pytest.raises(ValueError, match="needs schema"):
        ketch.read_csv(path, infer_schema=False)


# -- several files ----------------------------------------------------------------------------------


@pytest.fixture
def csv_dir(tmp_path) -> Path:
    root = tmp_path / "data"
    write(root / "b.csv", "a,s\n2,b\n")
    write(root / "a.csv", "a,s\n1,a\n")
    write(root / "sub" / "c.csv", "a,s\n3,c\n")
    write(root / "notes.txt", "not,a,csv\n")
    return root


def test_directory_is_read_recursively_in_sorted_order(csv_dir):
    assert ketch.read_csv(str(csv_dir)).to_pydict() == {"a": [1, 2, 3], "s": ["a", "b", "c"]}


def test_glob(csv_dir):
    assert ketch.read_csv(str(csv_dir / "*.csv")).to_pydict()["a"] == [1, 2]
    assert ketch.read_csv(str(csv_dir / "**" / "*.csv")).to_pydict()["a"] == [1, 2, 3]


def test_list_keeps_the_given_order(csv_dir):
    paths = [str(csv_dir / "sub" / "c.csv"), str(csv_dir / "a.csv"), str(csv_dir / "b.csv")]
    assert ketch.read_csv(paths).to_pydict() == {"a": [3, 1, 2], "s": ["c", "a", "b"]}


def test_later_file_with_reordered_header_is_matched_by_name(tmp_path):
    first = write(tmp_path / "1.csv", "a,b\n1,x\n")
    second = write(tmp_path / "2.csv", "b,a\ny,2\n")
    assert ketch.read_csv([first, second]).to_pydict() == {"a": [1, 2], "b": ["x", "y"]}


def test_schema_comes_from_the_first_file_and_later_files_are_cast(tmp_path):
    first = write(tmp_path / "1.csv", "a\n1.5\n")
    second = write(tmp_path / "2.csv", "a\n2\n")
    table = ketch.read_csv([first, second]).to_arrow()
    assert table.schema.field("a").type == pa.float64()
    assert table.column("a").to_pylist() == [1.5, 2.0]


def test_many_files_with_filter_and_limit_keep_file_order(tmp_path):
    paths = []
    for i in range(6):
        rows = "".join(f"{i * 10 + j},{j},{i}\n" for j in range(10))
        paths.append(write(tmp_path / f"f{i}.csv", "v,j,file\n" + rows))
    paths.reverse()
    df = ketch.read_csv(paths).where(col("j") == 3).select("v", "file").limit(4)
    assert df.to_pydict() == {"v": [53, 43, 33, 23], "file": [5, 4, 3, 2]}
    assert ketch.read_csv(paths).count_rows() == 60


# -- pushdowns --------------------------------------------------------------------------------------


def test_filter_select_limit_are_pushed_into_the_scan(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    df = ketch.read_csv(path).where(col("i") > 0).select("s", "d").limit(5)
    plan = optimized_plan(df)
    assert "ScanCSV" in plan
    assert "Filter pushdown = (col(i) > lit(0))" in plan
    assert "Projection pushdown = [s, d]" in plan
    assert "Limit pushdown = 5" in plan
    assert "Scan tasks = 1 (1 task from 1 file" in plan
    assert "* Filter:" not in plan
    assert df.to_pydict() == {"s": ["x", "y,z"], "d": [datetime.date(2024, 1, 2), datetime.date(2024, 2, 3)]}


def test_unoptimized_plan_shows_no_pushdowns(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    buf = io.StringIO()
    ketch.read_csv(path).where(col("i") > 0).explain(show_all=True, file=buf)
    unoptimized = buf.getvalue().split("== Optimized Logical Plan ==")[0]
    assert "* Filter: (col(i) > lit(0))" in unoptimized
    assert "Filter pushdown = None" in unoptimized


def test_filter_on_column_not_selected(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    df = ketch.read_csv(path).where(col("b")).select("s")
    plan = optimized_plan(df)
    assert "Projection pushdown = [s]" in plan
    assert "Filter pushdown = col(b)" in plan
    assert df.to_pydict() == {"s": ["x", "w"]}


def test_filter_matches_pyarrow_filter(tmp_path):
    lines = ["k,v,name"] + [f"{i},{(i * 37) % 101},n{i % 7}" for i in range(300)]
    path = write(tmp_path / "nums.csv", "\n".join(lines) + "\n")
    df = ketch.read_csv(path).where((col("v") > 50) & (col("name") != "n3")).select("k")
    expected = pacsv.read_csv(path).to_pandas()
    expected = expected[(expected.v > 50) & (expected.name != "n3")]
    assert df.to_pydict()["k"] == expected.k.tolist()


def test_scan_metrics(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    df = ketch.read_csv(path).where(col("i") > 0)
    stats = scan_stats(df)
    assert set(stats) >= {
        "scan_tasks",
        "files_read",
        "files_pruned",
        "row_groups_read",
        "row_groups_pruned",
        "bytes_read",
        "rows_read",
    }
    assert stats["scan_tasks"] == 1
    assert stats["files_read"] == 1
    assert stats["files_pruned"] == 0
    assert stats["rows_read"] == 4
    assert stats["bytes_read"] == len(MIXED.encode())
    assert df.to_pydict()["i"] == [1, 2]


def test_limit_stops_reading_a_large_file_early(tmp_path):
    n = 150_000
    path = tmp_path / "big.csv"
    path.write_text("i,s\n" + "".join(f"{i},row{i}\n" for i in range(n)))
    df = ketch.read_csv(str(path)).limit(3)
    assert "Limit pushdown = 3" in optimized_plan(df)
    stats = scan_stats(df)
    assert df.to_pydict() == {"i": [0, 1, 2], "s": ["row0", "row1", "row2"]}
    # Decoding stops after the first block (Arrow's reader may still have read ahead, so
    # bytes_read is not checked).
    assert stats["rows_read"] < n


def test_limit_larger_than_data_and_limit_zero(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    assert ketch.read_csv(path).limit(100).to_pydict()["i"] == [1, 2, None, -7]
    assert ketch.read_csv(path).limit(0).to_pydict()["i"] == []


def test_count_rows(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    assert ketch.read_csv(path).count_rows() == 4
    assert ketch.read_csv(path).where(col("i").is_null()).count_rows() == 1


# -- variable-width rows ----------------------------------------------------------------------------


def test_allow_variable_columns_pads_and_truncates(tmp_path):
    path = write(tmp_path / "v.csv", "a,b,c\n1,2,3\n4,5\n6,7,8,9\n10\n")
    df = ketch.read_csv(path, allow_variable_columns=True)
    assert df.to_pydict() == {"a": [1, 4, 6, 10], "b": [2, 5, 7, None], "c": [3, None, 8, None]}


def test_variable_columns_fail_by_default_naming_file_and_row(tmp_path):
    path = write(tmp_path / "v.csv", "a,b,c\n1,2,3\n4,5\n")
    with pytest.raises(KetchError, match=r"v\.csv.*Row #3"):
        ketch.read_csv(path).to_pydict()
