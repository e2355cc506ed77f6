"""Ctrl-C during a query cancels it: KeyboardInterrupt is raised and no partial output remains."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_sigint_cancels_a_running_write(tmp_path):
    script = textwrap.dedent(f"""
        import os, signal, threading, time
        # A runner started in the background may pass SIGINT on as ignored: act as a terminal would.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import ketch
        from ketch import col, DataType

        @ketch.udf(return_dtype=DataType.int64(), batch_size=100)
        def slow(x):
            time.sleep(0.05)  # 400 batches: about 20 s unless the query is cancelled
            return x.to_arrow()

        df = ketch.from_pydict({{"a": list(range(40000))}}).with_column("b", slow(col("a")))
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            df.write_parquet({str(tmp_path)!r})
            print("COMPLETED")
        except KeyboardInterrupt:
            print("INTERRUPTED")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "INTERRUPTED" in proc.stdout, proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary
