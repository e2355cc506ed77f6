"""ketch.udf.metrics (Daft's daft.udf.metrics): counters incremented inside row, batch, class and
process-mode UDFs are totalled per UDF over the query and shown by explain_analyze; outside a UDF
call they warn and count nothing; bad arguments are Daft's ValueErrors. Expected totals are
computed from the input rows here."""

from __future__ import annotations

import io
import warnings

import pytest

import ketch
from ketch import col

increment_counter = ketch.udf.metrics.increment_counter

TEXTS = ["a ", "", None, " bcd", "", "ef"]


def _analyze(df: ketch.DataFrame) -> tuple[str, dict[str, dict[str, int]]]:
    out = io.StringIO()
    df.explain_analyze(file=out)
    return out.getvalue(), ketch.udf.metrics.last_query_metrics()


def test_row_and_batch_udfs_count_per_udf_and_attribute():
    @ketch.func
    def clean(text: str | None) -> str:
        if not text:
            increment_counter("empty_rows", description="rows without text")
        increment_counter("chars", len(text or ""), attributes={"kind": "text"})
        return (text or "").strip()

    @ketch.func.batch(return_dtype=ketch.DataType.int64())
    def lengths(texts: ketch.Series) -> list[int]:
        increment_counter("batches")
        return [len(t or "") for t in texts.to_pylist()]

    df = ketch.from_pydict({"t": TEXTS}).into_partitions(2)
    text, counters = _analyze(df.select(clean(col("t")), lengths(col("t")).alias("n")))
    assert counters["clean"] == {
        "chars{kind=text}": sum(len(t or "") for t in TEXTS),
        "empty_rows": sum(1 for t in TEXTS if not t),
    }
    assert counters["lengths"]["batches"] >= 1
    assert "UDF metrics:" in text and "clean: empty_rows = 3  (rows without text)" in text
    # A second query starts from zero.
    _, again = _analyze(ketch.from_pydict({"t": ["x"]}).select(clean(col("t"))))
    assert again == {"clean": {"chars{kind=text}": 1}}


@pytest.mark.parametrize("use_process", [False, True])
def test_class_and_process_mode_udfs_send_their_counts(use_process: bool):
    @ketch.cls(use_process=use_process)
    class Upper:
        def __init__(self) -> None:
            self.calls = 0

        @ketch.method(return_dtype=str)
        def __call__(self, text: str) -> str:
            increment_counter("rows", attributes={"first": str(text[:1])})
            return text.upper()

    words = ["apple", "avocado", "banana", "cherry", "apricot"] * 20
    _, counters = _analyze(ketch.from_pydict({"w": words}).select(Upper()(col("w"))))
    expected: dict[str, int] = {}
    for w in words:
        expected[f"rows{{first={w[0]}}}"] = expected.get(f"rows{{first={w[0]}}}", 0) + 1
    assert counters == {"Upper": expected}


def test_outside_a_udf_it_warns_and_bad_arguments_raise():
    from ketch.udf.metrics import increment_counter as imported  # Daft's import path

    assert imported is increment_counter
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        increment_counter("outside")
    assert [w.category for w in caught] == [RuntimeWarning]
    assert "only be recorded during execution within a UDF" in str(caught[0].message)
    with pytest.raises(ValueError, match="Metric name must be a non-empty string"):
        increment_counter("")
    with pytest.raises(ValueError, match="Metric attribute values must be strings"):
        increment_counter("x", attributes={"k": 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="Metric description must be a string"):
        increment_counter("x", description=3)  # type: ignore[arg-type]
