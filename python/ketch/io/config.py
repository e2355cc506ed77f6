"""Object-store settings: ``IOConfig(s3=S3Config(...))``, as in Daft."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse


@dataclass(frozen=True)
class S3Config:
    """S3 connection settings (Arrow's S3FileSystem over the AWS SDK). Fields left None take the
    SDK's defaults (environment variables, ~/.aws/config, instance metadata).

    ``endpoint_url`` is a full URL such as ``"http://127.0.0.1:9000"`` (MinIO, moto, R2);
    ``anonymous=True`` sends unsigned requests (public buckets)."""

    region_name: str | None = None
    endpoint_url: str | None = None
    key_id: str | None = None
    access_key: str | None = None
    session_token: str | None = None
    anonymous: bool = False

    def to_options(self) -> dict[str, str]:
        """The ``s3_*`` options the native kernels read."""
        out: dict[str, str] = {}
        if self.region_name:
            out["s3_region"] = self.region_name
        if self.endpoint_url:
            parsed = urlparse(self.endpoint_url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise ValueError(
                    f"S3Config.endpoint_url must look like http(s)://host:port, got {self.endpoint_url!r}"
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


@dataclass(frozen=True)
class IOConfig:
    """Settings for every object store a query touches (only S3 in this version)."""

    s3: S3Config = field(default_factory=S3Config)

    def to_options(self) -> dict[str, str]:
        return self.s3.to_options()


def io_options(io_config: IOConfig | None) -> dict[str, str]:
    """Options for a native kernel call; TypeError for anything but an IOConfig."""
    if io_config is None:
        return {}
    if not isinstance(io_config, IOConfig):
        raise TypeError(f"io_config must be a ketch.io.IOConfig, got {type(io_config).__name__}")
    return io_config.to_options()
