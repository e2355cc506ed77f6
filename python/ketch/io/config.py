"""Object-store settings: ``IOConfig(s3=S3Config(...))``, as in Daft."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from ketch.io.redact import MASK, redact


@dataclass(frozen=True, repr=False)
class S3Config:
    """S3 connection settings (Arrow's S3FileSystem over the AWS SDK). Fields left None take the
    SDK's defaults (environment variables, ~/.aws/config, instance metadata).

    ``endpoint_url`` is a full URL such as ``"http://127.0.0.1:9000"`` (MinIO, moto, R2);
    ``anonymous=True`` sends unsigned requests (public buckets). ``repr``/``str`` show ``***`` for
    ``key_id``, ``access_key`` and ``session_token`` (and for credentials in ``endpoint_url``); errors
    and ``explain()`` never show them either."""

    region_name: str | None = None
    endpoint_url: str | None = None
    key_id: str | None = None
    access_key: str | None = None
    session_token: str | None = None
    anonymous: bool = False

    def __repr__(self) -> str:
        def show(name: str, value: object) -> str:
            if value is None or name not in ("key_id", "access_key", "session_token"):
                return f"{name}={redact(repr(value), self.secrets())}"
            return f"{name}='{MASK}'"

        fields = ("region_name", "endpoint_url", "key_id", "access_key", "session_token", "anonymous")
        return f"S3Config({', '.join(show(name, getattr(self, name)) for name in fields)})"

    def secrets(self) -> list[str]:
        """The credentials set (key id, access key, session token): what redaction masks."""
        return [s for s in (self.key_id, self.access_key, self.session_token) if s]

    def to_options(self) -> dict[str, str]:
        """The ``s3_*`` options the native kernels read."""
        out: dict[str, str] = {}
        if self.region_name:
            out["s3_region"] = self.region_name
        if self.endpoint_url:
            parsed = urlparse(self.endpoint_url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                # No scheme, so not a URL to redact(): hide any "user:password@" by hand.
                shown = self.endpoint_url
                if "@" in shown:
                    shown = MASK + shown[shown.rindex("@") :]
                raise ValueError(
                    "S3Config.endpoint_url must look like http(s)://host:port, got "
                    f"{redact(repr(shown), self.secrets())}"
                )
            out["s3_endpoint_override"] = parsed.netloc
            out["s3_scheme"] = parsed.scheme
        if self.key_id:
            out["s3_key_id"] = self.key_id
            out["s3_access_key"] = self.access_key or ""
        if self.session_token:
            out["s3_session_token"] = self.session_token
        if self.anonymous:
            out["s3_anonymous"] = "true"
        return out

    def to_filesystem(self) -> Any:
        """The same settings as a pyarrow S3FileSystem (listing objects for from_glob_path)."""
        import pyarrow.fs as pafs

        options = self.to_options()
        kwargs: dict[str, Any] = {"anonymous": self.anonymous}
        for ours, theirs in (
            ("s3_region", "region"),
            ("s3_endpoint_override", "endpoint_override"),
            ("s3_scheme", "scheme"),
            ("s3_key_id", "access_key"),
            ("s3_access_key", "secret_key"),
            ("s3_session_token", "session_token"),
        ):
            if ours in options:
                kwargs[theirs] = options[ours]
        return pafs.S3FileSystem(**kwargs)


@dataclass(frozen=True)
class HTTPConfig:
    """HTTP(S) download settings (libcurl).

    - ``connect_timeout_ms``: give up connecting after this long (default 10,000).
    - ``low_speed_timeout_s``: abort a transfer slower than 1 KiB/s for this long (default 30);
      a stalled transfer is retried like a reset connection (``max_retries``).
    - ``max_object_bytes``: refuse a response body larger than this (default 2 GiB): endless or
      compressed-bomb bodies fail their row instead of exhausting memory.
    - ``max_retries``: extra attempts after connection errors, timeouts (connect or low-speed),
      HTTP 429 and 5xx (default 2)."""

    connect_timeout_ms: int = 10_000
    low_speed_timeout_s: int = 30
    max_object_bytes: int = 2 << 30
    max_retries: int = 2

    def to_options(self) -> dict[str, Any]:
        for name in ("connect_timeout_ms", "low_speed_timeout_s", "max_object_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 2**63:
                raise ValueError(f"HTTPConfig.{name} must be a positive int, got {value!r}")
        if not isinstance(self.max_retries, int) or not 0 <= self.max_retries <= 100:
            raise ValueError(f"HTTPConfig.max_retries must be an int in 0..100, got {self.max_retries!r}")
        return {
            "http_connect_timeout_ms": self.connect_timeout_ms,
            "http_low_speed_timeout_s": self.low_speed_timeout_s,
            "http_max_object_bytes": self.max_object_bytes,
            "http_max_attempts": self.max_retries + 1,
        }


@dataclass(frozen=True)
class IOConfig:
    """Settings for every object store a query touches: ``s3`` (S3Config) and ``http`` (HTTPConfig)."""

    s3: S3Config = field(default_factory=S3Config)
    http: HTTPConfig = field(default_factory=HTTPConfig)

    def to_options(self) -> dict[str, Any]:
        return {**self.s3.to_options(), **self.http.to_options()}


def io_options(io_config: IOConfig | None) -> dict[str, Any]:
    """Options for a native kernel call; TypeError for anything but an IOConfig."""
    if io_config is None:
        return {}
    if not isinstance(io_config, IOConfig):
        raise TypeError(f"io_config must be a ketch.io.IOConfig, got {type(io_config).__name__}")
    return io_config.to_options()
