"""Credentials never leave: user-info and signed query values of URLs, and the S3 keys of an
IOConfig, show as ``***`` in error messages, log records, ``explain()`` output and reprs."""

from __future__ import annotations

import base64
import io
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import ketch
from ketch import col
from ketch.errors import KetchError, KetchIOError
from ketch.io import HTTPConfig, IOConfig, S3Config

SECRETS = (
    "s3cr3tPassw0rd",
    "t0kenValue77",
    "sigValue1234",
    "AKIAKEYID0000",
    "accessKeySecret99",
    "sessTok42",
)
USERINFO = "alice:s3cr3tPassw0rd"
QUERY = "token=t0kenValue77&X-Amz-Signature=sigValue1234&w=1"
IO_CONFIG = IOConfig(
    s3=S3Config(
        region_name="us-east-1",
        key_id="AKIAKEYID0000",
        access_key="accessKeySecret99",
        session_token="sessTok42",
    ),
    http=HTTPConfig(max_retries=0),
)


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into: {text}"


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[str]]]:
    """Loopback HTTP: /ok answers 200 with the request's Authorization header as body (basic auth
    from the URL's user-info must still be sent), /private answers 401, anything else 404."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            auth = self.headers.get("Authorization", "")
            seen.append(auth)
            code, body = (200, auth.encode()) if self.path.startswith("/ok") else (404, b"no")
            if self.path.startswith("/private"):
                code, body = 401, b"who are you"
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _download_error(url: str, **kwargs) -> str:
    df = ketch.from_pydict({"u": [url]}).with_column(
        "b", col("u").url.download(io_config=IO_CONFIG, **kwargs)
    )
    with pytest.raises(KetchIOError) as info:
        df.collect()
    return str(info.value)


def test_credentials_in_url_still_authenticate(server):
    host, seen = server
    out = ketch.from_pydict({"u": [f"http://{USERINFO}@{host}/ok"]}).with_column("b", col("u").url.download())
    expected = "Basic " + base64.b64encode(USERINFO.encode()).decode()
    assert out.to_pydict()["b"] == [expected.encode()]


@pytest.mark.parametrize("path", ["/missing", "/private"])
def test_http_status_errors_redact_userinfo_and_signed_query(server, path):
    host, _ = server
    message = _download_error(f"http://{USERINFO}@{host}{path}?{QUERY}")
    _assert_clean(message)
    status = "404" if path == "/missing" else "401"
    assert (
        f"url.download failed at row 0 ('http://***@{host}{path}?token=***&X-Amz-Signature=***&w=1')"
        in message
    )
    assert f"HTTP {status}" in message


def test_connection_refused_error_redacts_userinfo():
    port = _closed_port()
    message = _download_error(f"https://{USERINFO}@127.0.0.1:{port}/x?{QUERY}")
    _assert_clean(message)
    assert f"https://***@127.0.0.1:{port}/x" in message


def test_file_read_error_redacts_url(server):
    host, _ = server
    df = ketch.from_pydict({"u": [f"http://{USERINFO}@{host}/missing?{QUERY}"]})
    df = df.with_column("b", col("u").url.to_file().file.read(io_config=IO_CONFIG))
    with pytest.raises(KetchIOError) as info:
        df.collect()
    _assert_clean(str(info.value))
    assert "file_read failed at row 0" in str(info.value)


def test_explain_hides_literal_urls_and_io_config_keys(server):
    host, _ = server
    df = (
        ketch.from_pydict({"x": [1]})
        .with_column("u", ketch.lit(f"http://{USERINFO}@{host}/ok?{QUERY}"))
        .with_column("b", col("u").url.download(io_config=IO_CONFIG))
        .with_column("p", col("b").url.upload("s3://bucket/prefix", io_config=IO_CONFIG))
    )
    out = io.StringIO()
    df.explain(show_all=True, file=out)
    text = out.getvalue()
    _assert_clean(text)
    assert "s3_access_key=***" in text and "s3_key_id=***" in text and "s3_session_token=***" in text
    assert f"http://***@{host}/ok?token=***&X-Amz-Signature=***&w=1" in text
    assert "s3_region=us-east-1" in text  # only credentials are hidden
    _assert_clean(repr(col("u").url.download(io_config=IO_CONFIG)))


def test_config_reprs_hide_keys():
    config = IOConfig(
        s3=S3Config(
            endpoint_url="http://alice:s3cr3tPassw0rd@127.0.0.1:9000",
            key_id="AKIAKEYID0000",
            access_key="accessKeySecret99",
            session_token="sessTok42",
        )
    )
    for text in (repr(config), str(config), repr(config.s3), str(config.s3), f"{config}"):
        _assert_clean(text)
    assert "key_id='***'" in repr(config.s3) and "endpoint_url='http://***@127.0.0.1:9000'" in repr(config.s3)
    assert "session_token=None" in repr(S3Config())
    with pytest.raises(ValueError) as info:
        S3Config(endpoint_url="alice:s3cr3tPassw0rd@host:9000", access_key="accessKeySecret99").to_options()
    _assert_clean(str(info.value))


def _fetch(url: str) -> int:
    raise OSError(f"could not fetch {url}")


def test_udf_on_error_log_warnings_are_redacted(server, caplog):
    host, _ = server
    udf = ketch.func(_fetch, return_dtype=int, on_error="log")
    url = f"http://{USERINFO}@{host}/x?{QUERY}"
    with caplog.at_level(logging.WARNING, logger="ketch.udf"):
        out = ketch.from_pydict({"u": [url]}).with_column("y", udf(col("u"))).to_pydict()
    assert out["y"] == [None]
    assert caplog.records, "expected a warning"
    _assert_clean(caplog.text)
    assert f"could not fetch http://***@{host}/x?token=***" in caplog.text
    assert "OSError" in caplog.text  # the traceback is still there


def test_s3_errors_with_wrong_keys_hide_them(moto_s3):
    config, client = moto_s3
    client.create_bucket(Bucket="secrets-bucket")
    client.put_object(Bucket="secrets-bucket", Key="a.bin", Body=b"hello")
    wrong = IOConfig(
        s3=S3Config(
            region_name="us-east-1",
            endpoint_url=config.s3.endpoint_url,
            key_id="AKIAKEYID0000",
            access_key="accessKeySecret99",
            session_token="sessTok42",
        )
    )
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin

    saved = settings.INITIAL_NO_AUTH_ACTION_COUNT
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0  # moto checks signatures and keys from now on
    ActionAuthenticatorMixin.request_count = 0
    try:
        df = ketch.from_pydict({"u": ["s3://secrets-bucket/a.bin"], "d": [b"x"]})
        for expr in (
            col("u").url.download(io_config=wrong),
            col("d").url.upload("s3://secrets-bucket/up", io_config=wrong),
            col("u").url.to_file().file.size(io_config=wrong),
        ):
            with pytest.raises(KetchError) as info:
                df.with_column("out", expr).collect()
            _assert_clean(str(info.value))
            assert "failed at row 0" in str(info.value) and "AWS Error" in str(info.value)  # refused keys
        with pytest.raises(KetchError) as info:
            ketch.from_glob_path("s3://secrets-bucket/*", io_config=wrong).collect()
        _assert_clean(str(info.value))
    finally:
        settings.INITIAL_NO_AUTH_ACTION_COUNT = saved


def test_redact_rules():
    from ketch.io.redact import redact

    assert (
        redact("see http://u:p@h:1/a@b?X-Amz-Credential=AK%2F1&x=2#f")
        == "see http://***@h:1/a@b?X-Amz-Credential=***&x=2#f"
    )
    assert (
        redact("('s3://k:s@bucket/key'), https://TOKEN@github.com/x")
        == "('s3://***@bucket/key'), https://***@github.com/x"
    )
    assert redact("file:///tmp/a b http://h/p?q=1") == "file:///tmp/a b http://h/p?q=1"
    assert redact("key AKIAKEYID0000 denied", ["AKIAKEYID0000", None, "ab"]) == "key *** denied"
