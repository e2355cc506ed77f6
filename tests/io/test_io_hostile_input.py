"""Hostile input to read_csv / read_json / read_parquet and to path expansion: inputs that crashed
the process, hung, read silently wrong or failed with an error naming nothing. Every failure must
be a ketch.errors exception naming the file and the line/row (or the directory and the OS's
reason). Cases that could kill or hang the interpreter run in a subprocess."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch.errors import KetchError, KetchFileNotFoundError, KetchIOError, KetchValueError

MAX_NESTING = 63  # Ketch's JSON nesting limit (cpp/ketch/io/formats/text_checks.h)


def names(path: str | Path) -> str:
    """A ``match=`` pattern for a message that quotes the path."""
    return re.escape(f"'{path}'")


# A script prelude: `report(fn)` prints one JSON line, the value or the error's classes and text.
PRELUDE = """
import json, os, sys
import ketch, ketch.errors, ketch.io.files, ketch.io.paths

def report(fn):
    try:
        value = fn()
    except Exception as exc:
        print(json.dumps({"error": [c.__name__ for c in type(exc).__mro__], "message": str(exc)}))
    else:
        print(json.dumps({"value": value}))
"""

# Reads a readable file of each format first (so every module a scan imports is loaded while the
# interpreter's own files can still be read), then gives up root: root reads any file.
DROP_ROOT = """
ketch.read_csv(sys.argv[1]).to_pydict()
ketch.read_json(sys.argv[2]).to_pydict()
if os.geteuid() == 0:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
"""


def run_isolated(code: str, *args: str, timeout: float = 120) -> list[dict]:
    """Runs PRELUDE + code in a fresh interpreter (so a crash or hang cannot take pytest with it)
    and returns its report lines; fails the test on a crash or a timeout."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", PRELUDE + code, *args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the read did not finish in {timeout} s")
    assert proc.returncode == 0, (
        f"exit status {proc.returncode} (a negative one is a signal): {proc.stderr[-2000:]}"
    )
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def write_bytes(path: Path, data: bytes) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# -- JSON nesting -------------------------------------------------------------------------------------


def test_json_nested_100k_levels_is_refused_not_a_crash(tmp_path):
    # RapidJSON recursed once per level inside Arrow's reader: SIGSEGV at ~100k levels.
    deep = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    first = write_bytes(tmp_path / "deep.jsonl", deep)
    good = write_bytes(tmp_path / "good.jsonl", b'{"a": 1}\n')
    later = write_bytes(tmp_path / "later.jsonl", b'{"a": 2}\n' + deep)
    code = """
report(lambda: ketch.read_json(sys.argv[1]).count_rows())
report(lambda: ketch.read_json([sys.argv[2], sys.argv[3]]).count_rows())
"""
    outs = run_isolated(code, first, good, later)
    for out, path, line in zip(outs, (first, later), (1, 2), strict=True):
        assert "KetchError" in out.get("error", []), out
        assert f"'{path}'" in out["message"] and f"line {line} " in out["message"], out
        assert f"deeper than {MAX_NESTING} levels" in out["message"], out


def test_json_nested_10k_levels_deep_in_a_later_file_is_refused_quickly(tmp_path):
    # 10k levels took 40 s to 2 min (Arrow's reader is quadratic in depth); the check is a byte scan.
    good = write_bytes(tmp_path / "a.jsonl", jsonl([{"a": 1}]))
    n = 60_000  # the deep line is past the first 1 MiB block
    deep = b'{"a": 2, "b": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n"
    bad = write_bytes(tmp_path / "b.jsonl", jsonl([{"a": i} for i in range(n)]) + deep)
    code = "report(lambda: ketch.read_json([sys.argv[1], sys.argv[2]]).count_rows())"
    [out] = run_isolated(code, good, bad, timeout=30)
    assert "KetchError" in out.get("error", []), out
    assert f"'{bad}'" in out["message"] and f"line {n + 1} " in out["message"], out


def test_json_nesting_up_to_the_limit_reads(tmp_path):
    depth = MAX_NESTING - 1  # the object holding "a" is one level
    value = 7
    for _ in range(depth):
        value = [value]
    path = write_bytes(tmp_path / "ok.jsonl", jsonl([{"a": value}]))
    assert ketch.read_json(path).to_pydict() == {"a": [value]}
    too_deep = write_bytes(tmp_path / "too.jsonl", jsonl([{"a": [value]}]))
    with pytest.raises(KetchError, match=names(too_deep) + f".*line 1 .*{MAX_NESTING} levels"):
        ketch.read_json(too_deep).to_pydict()
    # Objects count as levels too (struct columns).
    nested: dict = {"leaf": 1}
    for _ in range(MAX_NESTING - 2):
        nested = {"k": nested}
    objects = write_bytes(tmp_path / "objects.jsonl", jsonl([{"a": nested}]))
    assert ketch.read_json(objects).to_pydict() == {"a": [nested]}
    deeper = write_bytes(tmp_path / "deeper.jsonl", jsonl([{"a": {"k": nested}}]))
    with pytest.raises(KetchError, match=names(deeper) + f".*line 1 .*{MAX_NESTING} levels"):
        ketch.read_json(deeper)


def test_json_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    text = "[" * 500 + '\\"{{{'
    path = write_bytes(tmp_path / "s.jsonl", jsonl([{"s": text, "t": "]" * 3}, {"s": "x", "t": "y"}]))
    assert ketch.read_json(path).to_pydict() == {"s": [text, "x"], "t": ["]]]", "y"]}


# -- invalid UTF-8 ------------------------------------------------------------------------------------


def test_json_invalid_utf8_in_a_string_is_refused_with_file_and_line(tmp_path):
    # Was read into a string column that failed Arrow's own ValidateFull.
    path = write_bytes(tmp_path / "u.jsonl", b'{"a": "ok"}\n{"a": "bad\xff\xfe"}\n')
    with pytest.raises(KetchError, match=names(path) + ".*line 2 is not valid UTF-8"):
        ketch.read_json(path).to_arrow()


def test_json_invalid_utf8_in_a_key_or_past_the_first_block_of_a_later_file(tmp_path):
    # A key with \xff was a bare UnicodeDecodeError (the column name reached Python).
    key = write_bytes(tmp_path / "k.jsonl", b'{"a": 1}\n{"\xff": 2}\n')
    with pytest.raises(KetchError, match=names(key) + ".*line 2 is not valid UTF-8"):
        ketch.read_json(key).to_arrow()
    good = write_bytes(tmp_path / "a.jsonl", jsonl([{"s": "x"}]))
    n = 50_000
    late = write_bytes(
        tmp_path / "b.jsonl", jsonl([{"s": f"v{i}"} for i in range(n)]) + b'{"s": "\xc0\x80"}\n'
    )
    with pytest.raises(KetchError, match=names(late) + f".*line {n + 1} is not valid UTF-8") as info:
        ketch.read_json([good, late]).count_rows()
    assert good not in str(info.value)


def test_json_valid_multibyte_utf8_reads_exactly(tmp_path):
    values = ["héllo", "€uro", "😀 emoji", "日本語", "Ωmega"]
    path = write_bytes(
        tmp_path / "m.jsonl",
        "".join(json.dumps({"s": v}, ensure_ascii=False) + "\n" for v in values).encode(),
    )
    table = ketch.read_json(path).to_arrow()
    table.validate(full=True)
    assert table.column("s").to_pylist() == values


def test_csv_invalid_utf8_in_a_field_names_file_and_row(tmp_path):
    # Arrow inferred a binary column from such a field; CSV columns are text.
    path = write_bytes(tmp_path / "u.csv", b"a,b\n1,x\n2,\xff\xfe\n")
    with pytest.raises(KetchValueError, match=names(path) + r".*Row #3.*invalid UTF8"):
        ketch.read_csv(path).to_arrow()
    # Declared binary, the bytes are read as they are.
    df = ketch.read_csv(path, schema_hints={"b": ketch.DataType.binary()})
    assert df.to_pydict() == {"a": [1, 2], "b": [b"x", b"\xff\xfe"]}


@pytest.mark.parametrize("seed", range(4))
def test_csv_and_json_binary_garbage_raise_ketch_errors_naming_the_file(tmp_path, seed):
    # Was a bare UnicodeDecodeError: Arrow's message quoted the row's bytes.
    garbage = np.random.default_rng(seed).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    csv_path = write_bytes(tmp_path / "g.csv", b"a,b\n1,2\n" + garbage)
    with pytest.raises(KetchError, match=names(csv_path) + r".*Row #\d+"):
        ketch.read_csv(csv_path).to_arrow()
    json_path = write_bytes(tmp_path / "g.jsonl", b'{"a": 1}\n' + garbage)
    with pytest.raises(KetchError, match=names(json_path) + r".*line \d+"):
        ketch.read_json(json_path).to_arrow()


def test_csv_row_error_quoting_invalid_utf8_is_a_ketch_error(tmp_path):
    path = write_bytes(tmp_path / "w.csv", b"a,b\n1,x\n2,\xff\xfe,3\n")
    with pytest.raises(
        KetchError, match=names(path) + r".*Row #3: Expected 2 columns, got 3: 2,\\xff\\xfe,3"
    ):
        ketch.read_csv(path).to_arrow()


def test_csv_header_with_invalid_utf8(tmp_path):
    path = write_bytes(tmp_path / "h.csv", b"a,\xffb\n1,2\n")
    with pytest.raises(KetchError, match=names(path) + r".*Row #1.*header is not valid UTF-8"):
        ketch.read_csv(path)


# -- CSV quotes ---------------------------------------------------------------------------------------


def test_csv_unterminated_quote_names_file_row_and_line(tmp_path):
    # Was read as one giant field holding the rest of the file, without an error.
    path = write_bytes(tmp_path / "q.csv", b'a,b\n\n1,2\n"x\ny",3\n4,"5\n6,7\n')
    with pytest.raises(
        KetchError, match=names(path) + r".*Row #4: the quoted field opened on line 6 is never closed"
    ):
        ketch.read_csv(path).to_arrow()


def test_csv_unterminated_quote_deep_in_a_later_file(tmp_path):
    good = write_bytes(tmp_path / "a.csv", b"a,b\n1,x\n")
    n = 150_000  # past the first 1 MiB block, with 1.5 MiB after the quote
    body = "".join(f"{i},x\n" for i in range(n)) + '5,"never closed\n' + "6,y\n" * 400_000
    bad = write_bytes(tmp_path / "b.csv", ("a,b\n" + body).encode())
    with pytest.raises(
        KetchError, match=names(bad) + rf".*Row #{n + 2}: the quoted field opened on line {n + 2}\b"
    ):
        ketch.read_csv([good, bad]).count_rows()


def test_csv_quoted_fields_with_newlines_and_quotes_still_read(tmp_path):
    path = write_bytes(tmp_path / "ok.csv", b'a,b\r\n1,"x\r\ny"\r\n2,"say ""hi"""\r\n3,z"w\r\n4,"ok"tail\r\n')
    assert ketch.read_csv(path).to_pydict() == {
        "a": [1, 2, 3, 4],
        "b": ["x\r\ny", 'say "hi"', 'z"w', "oktail"],
    }


def test_csv_unterminated_quote_with_an_escape_character(tmp_path):
    ok = write_bytes(tmp_path / "ok.csv", b'a,b\n1,"x\\"y"\n')
    assert ketch.read_csv(ok, escape_char="\\").to_pydict() == {"a": [1], "b": ['x"y']}
    bad = write_bytes(tmp_path / "bad.csv", b'a,b\n1,"x\\"\n2,y\n')
    with pytest.raises(KetchError, match=names(bad) + r".*Row #2: the quoted field opened on line 2"):
        ketch.read_csv(bad, escape_char="\\").to_arrow()


# -- records longer than a block ----------------------------------------------------------------------


def test_csv_row_longer_than_a_block_reads(tmp_path):
    # Failed with "straddling object straddles two block boundaries".
    n = 300_000
    long_value = "x" * 5_000_000
    text = "a,b\n" + "".join(f"{i},y\n" for i in range(n)) + f'-1,"{long_value}"\n7,z\n'
    path = write_bytes(tmp_path / "long.csv", text.encode())
    out = ketch.read_csv(path).to_pydict()
    assert out["a"] == [*range(n), -1, 7]
    assert out["b"][n] == long_value and out["b"][-1] == "z"
    first = write_bytes(tmp_path / "first.csv", f"a,b\n1,{long_value}\n2,q\n".encode())  # while inferring
    assert ketch.read_csv(first).to_pydict() == {"a": [1, 2], "b": [long_value, "q"]}


def test_json_line_longer_than_a_block_reads(tmp_path):
    n = 100_000
    long_value = "x" * 5_000_000
    rows = [{"a": i, "b": "y"} for i in range(n)] + [{"a": -1, "b": long_value}, {"a": 7, "b": "z"}]
    path = write_bytes(tmp_path / "long.jsonl", jsonl(rows))
    out = ketch.read_json(path).to_pydict()
    assert out["a"] == [*range(n), -1, 7]
    assert out["b"][n] == long_value and out["b"][-1] == "z"
    first = write_bytes(tmp_path / "first.jsonl", jsonl([{"a": long_value}, {"a": "q"}]))
    assert ketch.read_json(first).to_pydict() == {"a": [long_value, "q"]}


def test_json_long_line_with_a_filter_and_limit(tmp_path):
    rows = [{"a": i, "b": "y" * (3_000_000 if i == 5 else 1)} for i in range(10)]
    path = write_bytes(tmp_path / "f.jsonl", jsonl(rows))
    df = ketch.read_json(path).where(ketch.col("a") >= 4).limit(3)
    assert df.to_pydict()["a"] == [4, 5, 6]


# -- Parquet page checksums ---------------------------------------------------------------------------


def corrupt_one_value_byte(src: str, dst: Path, row_group: int, column: int) -> str:
    """Flips one byte inside a data page's values (not its header) of one column chunk."""
    chunk = pq.read_metadata(src).row_group(row_group).column(column)
    data = bytearray(Path(src).read_bytes())
    data[chunk.data_page_offset + chunk.total_compressed_size - 100] ^= 0xFF
    dst.write_bytes(bytes(data))
    return str(dst)


def test_parquet_page_with_a_wrong_crc_names_file_and_row_group(tmp_path):
    # Was decoded into wrong values without an error.
    src = str(tmp_path / "good.parquet")
    table = pa.table({"a": np.arange(10_000, dtype=np.int64), "b": np.arange(10_000, dtype=np.float64)})
    pq.write_table(
        table, src, row_group_size=5_000, write_page_checksum=True, compression="none", use_dictionary=False
    )
    assert ketch.read_parquet(src).to_arrow().equals(table)
    bad = corrupt_one_value_byte(src, tmp_path / "bad.parquet", row_group=1, column=0)
    with pytest.raises(KetchIOError, match=names(bad) + ".*row group 1.*CRC checksum verification failed"):
        ketch.read_parquet(bad).to_arrow()
    # The undamaged row group and column still read.
    assert ketch.read_parquet(bad).where(ketch.col("a") < 5_000).count_rows() == 5_000


def test_parquet_without_checksums_still_reads(tmp_path):
    path = str(tmp_path / "plain.parquet")
    table = pa.table({"a": np.arange(1000, dtype=np.int64)})
    pq.write_table(table, path, write_page_checksum=False)
    assert ketch.read_parquet(path).to_arrow().equals(table)


# -- unreadable directories and files -----------------------------------------------------------------


@pytest.fixture
def shared_dir():
    """A directory other users may enter (pytest's tmp_path is private to root), removed after."""
    root = tempfile.mkdtemp(prefix="ketch-hostile-", dir="/tmp")
    os.chmod(root, 0o755)
    yield Path(root)
    for dirpath, dirnames, _ in os.walk(root):
        for d in dirnames:
            os.chmod(os.path.join(dirpath, d), 0o755)
    shutil.rmtree(root)


def run_unprivileged(code: str, root: Path) -> list[dict]:
    """Runs `code` in a subprocess that cannot read what mode 000 protects (as root it switches to
    the user nobody after warming up); skips when that is impossible."""
    warm_csv = write_bytes(root / "warm" / "w.csv", b"a\n1\n")
    warm_json = write_bytes(root / "warm" / "w.jsonl", b'{"a": 1}\n')
    os.chmod(root / "warm", 0o755)
    try:
        return run_isolated(DROP_ROOT + code, warm_csv, warm_json)
    except AssertionError as exc:
        if "PermissionError" in str(exc) and "setuid" in str(exc):
            pytest.skip("cannot drop root privileges here, so mode 000 denies nothing")
        raise


def make_tree(root: Path) -> tuple[Path, Path]:
    data = root / "data"
    write_bytes(data / "a.csv", b"x\n1\n")
    write_bytes(data / "open" / "b.csv", b"x\n2\n")
    write_bytes(data / "private" / "c.csv", b"x\n3\n")
    for d in (data, data / "open"):
        os.chmod(d, 0o755)
    os.chmod(data / "private", 0o000)
    return data, data / "private"


@pytest.mark.parametrize("pattern", ["{data}", "{data}/**/*.csv", "{data}/*/*.csv", "{data}/private/c.csv"])
def test_unreadable_subdirectory_is_an_error_not_missing_rows(shared_dir, pattern):
    # Directory listing skipped it silently: its rows were missing from the result.
    data, private = make_tree(shared_dir)
    entry = pattern.format(data=data)
    [out] = run_unprivileged(f"report(lambda: ketch.read_csv({entry!r}).to_pydict())", shared_dir)
    assert "KetchIOError" in out.get("error", []), out
    assert str(private) in out["message"] and "Permission denied" in out["message"], out


def test_unreadable_subdirectory_the_glob_does_not_enter_is_fine(shared_dir):
    data, _ = make_tree(shared_dir)
    [out] = run_unprivileged(
        f"report(lambda: ketch.read_csv({str(data / '*.csv')!r}).to_pydict())", shared_dir
    )
    assert out == {"value": {"x": [1]}}


def test_unreadable_file_says_permission_denied(shared_dir):
    ok = write_bytes(shared_dir / "d" / "ok.csv", b"x\n1\n")
    secret = write_bytes(shared_dir / "d" / "secret.csv", b"x\n2\n")
    os.chmod(shared_dir / "d", 0o755)
    os.chmod(secret, 0o000)
    code = f"""
report(lambda: ketch.read_csv({secret!r}).to_pydict())
report(lambda: ketch.read_csv([{ok!r}, {secret!r}]).to_pydict())
"""
    first, later = run_unprivileged(code, shared_dir)
    for out in (first, later):
        assert "KetchIOError" in out.get("error", []), out
        assert "KetchFileNotFoundError" not in out["error"], out
        assert f"cannot open '{secret}': permission denied" in out["message"], out


def test_file_removed_after_listing_says_no_such_file(tmp_path):
    # Was "Failed to open local file", which does not say why.
    first = write_bytes(tmp_path / "a.csv", b"x\n1\n")
    second = write_bytes(tmp_path / "b.csv", b"x\n2\n")
    df = ketch.read_csv([first, second])
    os.remove(second)
    with pytest.raises(KetchFileNotFoundError, match=f"cannot open {names(second)}: no such file"):
        df.to_pydict()


@pytest.mark.parametrize("form", ["file://{p}", "file://localhost{p}", "{p}"])
def test_missing_path_is_named_as_the_user_wrote_it(tmp_path, form):
    entry = form.format(p=tmp_path / "missing.csv")
    with pytest.raises(KetchFileNotFoundError, match=f"read_csv: no such file or directory: {names(entry)}"):
        ketch.read_csv(entry)
    pattern = form.format(p=tmp_path / "nothing" / "*.csv")
    with pytest.raises(KetchFileNotFoundError, match=f"read_json: {names(pattern)} matched no files"):
        ketch.read_json(pattern)
