"""from_glob_path lists files (path, size, num_rows) and feeds url.download."""

from __future__ import annotations

import pytest

import ketch
from ketch import col
from ketch.errors import KetchFileNotFoundError


def test_from_glob_path_lists_files_and_downloads_them(tmp_path):
    (tmp_path / "sub").mkdir()
    contents = {"a.bin": b"1234", "b.bin": b"", "sub/c.bin": b"xyz" * 100, "d.txt": b"no"}
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
    df = ketch.from_glob_path(str(tmp_path / "**" / "*.bin"))
    out = df.to_pydict()
    expected = sorted(str(tmp_path / n) for n in contents if n.endswith(".bin"))
    assert out["path"] == ["file://" + p for p in expected]  # Daft's file:// URLs
    assert out["size"] == [len(contents[p[len(str(tmp_path)) + 1 :]]) for p in expected]
    assert out["num_rows"] == [None] * 3
    data = df.with_column("data", col("path").url.download()).to_pydict()["data"]
    assert data == [contents[p[len(str(tmp_path)) + 1 :]] for p in expected]
    # A directory lists everything under it; file:// URLs work too.
    assert len(ketch.from_glob_path(f"file://{tmp_path}").to_pydict()["path"]) == 4


def test_from_glob_path_lists_a_file_matched_by_several_entries_once(tmp_path):
    for name in ("a.txt", "b.txt", "a.csv"):
        (tmp_path / name).write_bytes(b"x")
    got = ketch.from_glob_path([str(tmp_path / "*.txt"), str(tmp_path / "a.*"), f"file://{tmp_path}/a.txt"])
    # Daft 0.7.26 gives each file once
    assert got.to_pydict()["path"] == [f"file://{tmp_path}/{n}" for n in ("a.txt", "b.txt", "a.csv")]


def test_from_glob_path_matching_nothing_names_the_pattern(tmp_path):
    with pytest.raises(KetchFileNotFoundError, match="matched no files"):
        ketch.from_glob_path(str(tmp_path / "*.jpg"))
