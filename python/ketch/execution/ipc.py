"""Arrow IPC batches through POSIX shared memory: only the segment's name and size cross the
socket between the engine and a UDF worker process."""

from __future__ import annotations

from multiprocessing import resource_tracker, shared_memory

import pyarrow as pa


def write_batch(arrays: list[pa.Array], owned_by_peer: bool = False) -> tuple[str, int]:
    """Writes the arrays (columns a0, a1, ...) as one Arrow IPC stream into a new shared-memory
    segment; returns (name, size). ``owned_by_peer``: the other process unlinks it."""
    batch = pa.record_batch(arrays, names=[f"a{i}" for i in range(len(arrays))])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    data = sink.getvalue()
    shm = shared_memory.SharedMemory(create=True, size=max(1, data.size))
    name = shm.name
    try:
        shm.buf[: data.size] = memoryview(data).cast("B")
    except BaseException:
        shm.close()
        shm.unlink()
        raise
    shm.close()
    if owned_by_peer:
        # The reader unlinks it; this process's resource tracker must not clean it up at exit.
        resource_tracker.unregister(f"/{name}" if not name.startswith("/") else name, "shared_memory")
    return name, data.size


def read_batch(name: str, size: int, unlink: bool = True) -> list[pa.Array]:
    """The arrays of a segment written by write_batch (copied out, so the segment can go)."""
    shm = shared_memory.SharedMemory(name=name)
    try:
        data = bytes(shm.buf[:size])
    finally:
        shm.close()
        if unlink:
            shm.unlink()
    batch = pa.ipc.open_stream(pa.py_buffer(data)).read_next_batch()
    return list(batch.columns)


def discard(name: str) -> None:
    """Unlinks a segment that will not be read."""
    try:
        shm = shared_memory.SharedMemory(name=name)
        shm.close()
        shm.unlink()
    except FileNotFoundError:
        pass
