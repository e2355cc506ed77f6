"""url.download and url.upload against S3: a moto server on loopback started by the test, reached
through Arrow's S3FileSystem with an explicit IOConfig (endpoint, region, static credentials)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image

import ketch
from ketch import col
from ketch.errors import KetchError
from ketch.io import IOConfig, S3Config


@pytest.fixture
def s3(moto_s3) -> Iterator[tuple[IOConfig, object]]:
    config, client = moto_s3
    client.create_bucket(Bucket="images")
    yield config, client


def _png(rng, h: int, w: int) -> tuple[bytes, np.ndarray]:
    a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, "PNG")
    return buf.getvalue(), a


def test_download_images_from_s3(s3, rng):
    config, client = s3
    arrays = []
    for i in range(20):
        data, a = _png(rng, 5 + i % 4, 7)
        client.put_object(Bucket="images", Key=f"raw/{i}.png", Body=data)
        arrays.append(a)
    urls = [f"s3://images/raw/{i}.png" for i in range(20)]
    df = ketch.from_pydict({"url": urls})
    df = df.with_column("img", col("url").url.download(io_config=config).image.decode())
    for got, a in zip(df.to_pydict()["img"], arrays, strict=True):
        np.testing.assert_array_equal(got, a)


def test_missing_object_and_bad_urls_name_the_row(s3):
    config, client = s3
    client.put_object(Bucket="images", Key="ok.bin", Body=b"fine")
    urls = ["s3://images/ok.bin", "s3://images/missing.bin", "s3://no-such-bucket/x", "s3://bucket-only"]
    df = ketch.from_pydict({"url": urls})
    out = df.with_column("b", col("url").url.download(on_error="null", io_config=config)).to_pydict()
    assert out["b"] == [b"fine", None, None, None]
    # Rows download in parallel (one URL per morsel at first): the error names whichever failing
    # row failed first, with its URL.
    with pytest.raises(KetchError, match=r"row (1 .*missing\.bin|2 .*no-such-bucket|3 .*bucket-only)"):
        df.with_column("b", col("url").url.download(io_config=config)).collect()


def test_upload_to_s3_and_read_back(s3):
    config, client = s3
    payloads = [b"alpha", None, b"", b"x" * 100_000]
    df = ketch.from_pydict({"data": payloads})
    paths = df.with_column("p", col("data").url.upload("s3://images/out/", io_config=config)).to_pydict()["p"]
    assert paths[1] is None
    assert all(p.startswith("s3://images/out/") for i, p in enumerate(paths) if i != 1)
    assert len(set(p for p in paths if p)) == 3
    back = ketch.from_pydict({"p": paths}).with_column("b", col("p").url.download(io_config=config))
    assert back.to_pydict()["b"] == payloads


def test_upload_local_is_atomic_and_round_trips(tmp_path):
    payloads = [b"one", b"two", None]
    target = tmp_path / "new" / "dir"
    df = ketch.from_pydict({"data": payloads})
    paths = df.with_column("p", col("data").url.upload(str(target))).to_pydict()["p"]
    assert paths[2] is None
    assert [open(p, "rb").read() for p in paths[:2]] == payloads[:2]
    assert sorted(p.name for p in target.iterdir()) == sorted(p.rsplit("/", 1)[1] for p in paths[:2])
    # Nothing temporary is left behind.
    assert not [p for p in target.iterdir() if p.name.startswith(".")]


def test_upload_into_unwritable_location_raises_naming_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    df = ketch.from_pydict({"data": [b"1"]})
    with pytest.raises(KetchError, match="file"):
        df.with_column("p", col("data").url.upload(str(blocker / "sub"))).collect()


def test_io_config_type_is_checked():
    with pytest.raises(TypeError, match="IOConfig"):
        col("u").url.download(io_config={"s3": {}})
    with pytest.raises(ValueError, match="endpoint_url"):
        IOConfig(s3=S3Config(endpoint_url="localhost:9000")).to_options()


def test_glob_and_files_on_s3(s3):
    config, client = s3
    for key in ["listing/1.png", "listing/2.png", "listing/x.txt"]:
        client.put_object(Bucket="images", Key=key, Body=b"12345")
    listed = ketch.from_glob_path("s3://images/listing/*.png", io_config=config).to_pydict()
    assert listed["path"] == ["s3://images/listing/1.png", "s3://images/listing/2.png"]
    assert listed["size"] == [5, 5]
    files = ketch.from_files("s3://images/listing/", io_config=config)
    out = files.select(col("file").file.read(io_config=config).alias("b")).to_pydict()
    assert out["b"] == [b"12345"] * 3
