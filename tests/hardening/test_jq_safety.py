"""jq runs libjq (jq 1.6) in a ketch-jq-worker process: filters that used to abort or crash the
interpreter, allocate without bound or ignore Ctrl-C now give a clear error naming the row, or
stop within a second of Ctrl-C; the worker sees no environment (no secrets through $ENV)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import ketch
from ketch import col
from ketch.errors import KetchValueError

ROWS = ['{"a": 1, "b": [1, 2]}', '{"a": 2}', None]


def run(filter_: str, rows=ROWS):
    df = ketch.from_pydict({"j": rows})
    return df.select(col("j").jq(filter_).alias("o")).to_pydict()["o"]


@pytest.mark.parametrize(
    "filter_, name",
    [
        ('include "nope"; .', "include"),
        ('import "a" as a; .', "import"),
        ("input", "input"),
        ("[inputs]", "inputs"),
        ('"x\\(input)"', "input"),
        ("$__loc__", "$__loc__"),
        ("debug", "debug"),
    ],
)
def test_constructs_that_crashed_libjq_fail_at_plan_time(filter_, name):
    with pytest.raises(KetchValueError, match=f"the filter uses '{name.replace('$', '[$]')}'"):
        run(filter_)


def test_field_and_key_named_like_rejected_builtins_still_work():
    assert run("{input: .a} | .input") == ["1", "2", None]
    assert run(".input") == ["null", "null", None]
    assert run(".a # input is only a comment") == ["1", "2", None]


def test_nul_in_the_filter_is_an_error_not_a_truncation():
    with pytest.raises(KetchValueError, match="contains a NUL byte at offset 2"):
        run(".a\x00|.b")


def test_unbounded_outputs_are_capped_with_the_row():
    with pytest.raises(KetchValueError, match=r"source row 0 .*more than 1000000 outputs for one row"):
        run("repeat(1)")


def test_an_unbounded_value_kills_only_the_worker_and_names_the_row():
    rows = ['{"n": 5}'] * 200 + ['{"n": 1e12}'] + ['{"n": 3}'] * 5
    # a 64 MiB budget caps the worker at 256 + 128 MiB of address space
    with ketch.execution_config_ctx(memory_budget_bytes=64 << 20):
        died = r"source row 200 .*jq worker died of signal (6|11).*384 MiB"  # abort or segfault when out
        with pytest.raises(KetchValueError, match=died):
            run("[range(.n)] | length", rows)
    # the next query gets a fresh worker
    assert run("[range(.n)] | length", ['{"n": 4}']) == ["4"]


def test_halt_and_halt_error_are_row_errors():
    with pytest.raises(KetchValueError, match=r"source row 0 .*the filter halted"):
        run("halt")
    with pytest.raises(KetchValueError, match=r"the filter halted: \{\"a\":1"):
        run("halt_error")


def test_error_of_null_is_a_row_error_not_a_silent_null():
    # libjq 1.6 could not tell error(null) from "no output"; Daft reports the value ("null").
    with pytest.raises(KetchValueError, match=r"source row 0 .*jq error: null"):
        run("error(null)")
    with pytest.raises(KetchValueError, match=r"source row 1 .*jq error: null"):
        run("if .a == 2 then .c | error else .a end")
    assert run("try error(null) catch .") == ['"null"', '"null"', None]
    assert run('def error(f): "mine"; error(1)') == ['"mine"', '"mine"', None]  # a user's own def wins
    with pytest.raises(KetchValueError, match=r"source row 0 .*jq error: 1"):
        run("error(.a)")


def test_the_worker_sees_no_environment(monkeypatch):
    monkeypatch.setenv("KETCH_TEST_SECRET", "s3cr3t")
    assert run("$ENV | length") == ["0", "0", None]
    assert run("env.KETCH_TEST_SECRET") == ["null", "null", None]


def test_ordinary_filters_keep_their_results():
    assert run(".b[]?") == ["[1,2]", None, None]  # several outputs: one JSON array, as Daft
    assert run("[.a, (.b | length)]") == ["[1,2]", "[2,0]", None]
    with pytest.raises(KetchValueError, match=r"source row 0 .*jq error: boom"):
        run('error("boom")')


CHILD = r"""
import signal
import sys
# The test process may ignore SIGINT (an earlier test or Ray set it so), and an ignored signal
# stays ignored across exec: take Python's own handler, as an interactive run has.
signal.signal(signal.SIGINT, signal.default_int_handler)
import ketch
from ketch import col
df = ketch.from_pydict({"j": ["1"]})
print("start", flush=True)
try:
    df.select(col("j").jq(sys.argv[1]).alias("o")).to_pydict()
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.parametrize("filter_", ["last(range(1e12))", "def f: f; f"])
def test_ctrl_c_stops_an_endless_filter_within_a_second(filter_):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, filter_], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        assert child.stdout.readline().strip() == "start"
        time.sleep(1.5)  # let the filter run (it never ends on its own)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out = child.communicate(timeout=30)[0]
        assert out.strip() == "interrupted"
        assert time.monotonic() - sent < 1.5
    finally:
        child.kill()
    leftover = subprocess.run(["pgrep", "-P", str(child.pid)], capture_output=True, text=True).stdout
    assert leftover.strip() == ""


def test_no_jq_worker_outlives_its_engine():
    code = (
        "import os, ketch\n"
        "from ketch import col\n"
        "df = ketch.from_pydict({'j': ['{\"a\": 1}'] * 10})\n"
        "assert df.select(col('j').jq('.a').alias('o')).to_pydict()['o'] == ['1'] * 10\n"
        "print(os.getpid(), flush=True)\n"
        "os._exit(0)  # no clean-up at all: the workers must still go\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    engine = out.stdout.strip().splitlines()[-1]
    deadline = time.monotonic() + 10
    while True:
        left = subprocess.run(
            ["pgrep", "-f", f"ketch-jq-worker .* {engine}$"], capture_output=True, text=True
        )
        if not left.stdout.strip() or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left.stdout.strip() == ""
