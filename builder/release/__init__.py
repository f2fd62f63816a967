"""The release directory: writing it (`writer`), finding things in it (`layout`), versions and diffs between releases."""

from builder.release.writer import (
    ARROW_SCHEMA,
    ReleaseError,
    check_release,
    load_release,
    parquet_bytes,
    published,
    read_parquet_records,
    sha256_file,
    write_release,
)

__all__ = [
    "ARROW_SCHEMA",
    "ReleaseError",
    "check_release",
    "load_release",
    "parquet_bytes",
    "published",
    "read_parquet_records",
    "sha256_file",
    "write_release",
]
