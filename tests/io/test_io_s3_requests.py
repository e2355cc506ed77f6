"""How many S3 requests a Parquet scan over many small objects makes, counted by a recording proxy
in front of the moto server: a limit reads O(1) objects, a full scan reads each footer once (one
ranged GET ending at the object's last byte) and each object's data once, and planning again
(explain, a second collect) fetches no footer again."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3_request_log import S3RequestLog

import ketch
from ketch import col
from ketch.errors import KetchIOError
from ketch.io import IOConfig, S3Config

N = 200
BUCKET = "footers"
PREFIX = f"/{BUCKET}/many/"
GLOB = f"s3://{BUCKET}/many/*.parquet"


@pytest.fixture(scope="module")
def objects(moto_s3: Any) -> tuple[str, dict[str, int], pa.Table]:
    """N small Parquet objects (2 rows each: a = i, i + 1000) on moto: (endpoint, size per path,
    the rows of all of them in order)."""
    config, client = moto_s3
    client.create_bucket(Bucket=BUCKET)
    sizes: dict[str, int] = {}
    tables = []
    bodies = {}
    for i in range(N):
        table = pa.table({"a": pa.array([i, i + 1000], pa.int64()), "s": [f"x{i}", f"y{i}"]})
        buf = io.BytesIO()
        pq.write_table(table, buf)
        bodies[f"many/part-{i:04d}.parquet"] = buf.getvalue()
        sizes[f"/{BUCKET}/many/part-{i:04d}.parquet"] = len(buf.getvalue())
        tables.append(table)
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(lambda item: client.put_object(Bucket=BUCKET, Key=item[0], Body=item[1]), bodies.items())
        )
    return config.s3.endpoint_url, sizes, pa.concat_tables(tables)


@pytest.fixture
def logged(objects: tuple[str, dict[str, int], pa.Table]) -> Iterator[tuple[IOConfig, S3RequestLog]]:
    endpoint = objects[0]
    with S3RequestLog(endpoint) as log:
        config = IOConfig(
            s3=S3Config(
                region_name="us-east-1", endpoint_url=log.endpoint, key_id="testing", access_key="testing"
            )
        )
        yield config, log


def footer_reads(log: S3RequestLog, sizes: dict[str, int]) -> Counter[str]:
    """Per object: the GETs of a range ending at its last byte (the Parquet reader's footer read;
    data reads of column chunks end before the footer)."""
    return Counter(
        r.path
        for r in log.of("GET", PREFIX)
        if r.range is not None and r.path in sizes and r.range[1] in (sizes[r.path] - 1, None)
    )


def test_limit_reads_only_the_first_object(objects, logged):
    _, sizes, table = objects
    config, log = logged
    df = ketch.read_parquet(GLOB, io_config=config)
    assert len(log.of("GET", PREFIX)) == 1  # the first object's footer, for the schema
    limited = df.limit(1)
    limited.explain(show_all=True, file=io.StringIO())
    assert limited.to_pydict() == {"a": [0], "s": ["x0"]}
    # Listing, the first footer (kept from read_parquet) and one data read: not one per object.
    assert len(log.requests) <= 10, Counter((r.method, r.path) for r in log.requests)
    assert len(log.of("GET", PREFIX)) <= 3
    assert not log.of("HEAD")  # the listing gave the sizes
    assert max(footer_reads(log, sizes).values()) == 1


def test_limit_spanning_objects_reads_footers_until_covered(objects, logged):
    _, sizes, table = objects
    config, log = logged
    got = ketch.read_parquet(GLOB, io_config=config).limit(7).to_arrow()
    assert got.equals(table.slice(0, 7))
    reads = footer_reads(log, sizes)
    # 4 objects hold the 7 rows; footers are read in waves of 1, 2, 4 objects (7 footers).
    assert 4 <= len(reads) <= 8 and max(reads.values()) == 1
    assert len(log.of("GET", PREFIX)) <= 8 + 4


def test_full_scan_reads_each_footer_once(objects, logged):
    _, sizes, table = objects
    config, log = logged
    df = ketch.read_parquet(GLOB, io_config=config)
    df.explain(show_all=True, file=io.StringIO())
    df.explain(show_all=True, file=io.StringIO())
    with ketch.execution_config_ctx(num_compute_threads=8):  # more objects in flight: latency-bound
        got = df.to_arrow()
    assert got.equals(table)
    gets = log.of("GET", PREFIX)
    reads = footer_reads(log, sizes)
    assert set(reads) == set(sizes) and max(reads.values()) == 1, reads.most_common(3)
    assert len(gets) <= 2 * N + 5
    assert not log.of("HEAD")


def test_filter_reads_every_footer_once_and_only_matching_data(objects, logged):
    _, sizes, table = objects
    config, log = logged
    df = ketch.read_parquet(GLOB, io_config=config).where(col("a") < 3)
    assert df.to_pydict() == {"a": [0, 1, 2], "s": ["x0", "x1", "x2"]}
    reads = footer_reads(log, sizes)
    assert set(reads) == set(sizes) and max(reads.values()) == 1
    # Statistics rule out every other object: its data is not read.
    assert len(log.of("GET", PREFIX)) <= N + 3 + 2


def test_kept_footer_of_a_local_file_is_read_again_after_it_changes(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), path)
    df = ketch.read_parquet(str(path))
    assert df.limit(5).to_pydict() == {"a": [1, 2]}
    pq.write_table(pa.table({"a": [3, 4, 5, 6]}), path)
    assert df.to_pydict() == {"a": [3, 4, 5, 6]}


def test_object_removed_after_listing_is_named_as_unreadable_not_invalid(moto_s3):
    config, client = moto_s3
    client.create_bucket(Bucket="footers-gone")
    for i in range(2):
        buf = io.BytesIO()
        pq.write_table(pa.table({"a": [i]}), buf)
        client.put_object(Bucket="footers-gone", Key=f"part-{i}.parquet", Body=buf.getvalue())
    df = ketch.read_parquet("s3://footers-gone/*.parquet", io_config=config)
    client.delete_object(Bucket="footers-gone", Key="part-1.parquet")
    with pytest.raises(KetchIOError, match=r"cannot read 's3://footers-gone/part-1.parquet': AWS Error"):
        df.collect()
