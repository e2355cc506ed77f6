"""Arrow IPC batches through POSIX shared memory: only a segment's name and a size cross the socket
between the engine and a UDF worker process. Each side keeps one reusable segment for what it
sends (grown, under a new name, when a batch does not fit), so a batch costs two memory copies
and no system calls beyond the socket round trip."""

from __future__ import annotations

import os
from multiprocessing import resource_tracker, shared_memory

import pyarrow as pa

_MIN_CAPACITY = 1 << 20


def serialize(arrays: list[pa.Array]) -> pa.Buffer:
    """The arrays (columns a0, a1, ...) as one Arrow IPC stream."""
    batch = pa.record_batch(arrays, names=[f"a{i}" for i in range(len(arrays))])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def deserialize(data: pa.Buffer | bytes) -> list[pa.Array]:
    """Arrays of a stream written by serialize (zero-copy over ``data``)."""
    return list(
        pa.ipc.open_stream(pa.py_buffer(data) if isinstance(data, bytes) else data).read_next_batch().columns
    )


def _untrack(shm: shared_memory.SharedMemory) -> None:
    # Python's resource tracker would unlink segments at exit that this process only attached to,
    # or that the peer is meant to clean up; ownership is managed explicitly here.
    name = shm._name  # type: ignore[attr-defined]  # with the leading slash the tracker uses
    try:
        resource_tracker.unregister(name, "shared_memory")
    except Exception:  # noqa: BLE001
        pass


class Outbox:
    """A writer's reusable segment: ``put`` copies bytes in and says where they are. The segment's
    pages are allocated up front (posix_fallocate): when /dev/shm is full that fails with ENOSPC
    instead of a SIGBUS on the first write, and ``put`` returns the bytes themselves to send over
    the socket instead."""

    def __init__(self) -> None:
        self._shm: shared_memory.SharedMemory | None = None

    def put(self, data: pa.Buffer) -> tuple[str | None, int | bytes]:
        size = data.size
        if self._shm is None or self._shm.size < size:
            self.close()
            try:
                shm = shared_memory.SharedMemory(create=True, size=max(_MIN_CAPACITY, 2 * size))
            except OSError:
                return None, data.to_pybytes()
            try:
                os.posix_fallocate(shm._fd, 0, shm.size)  # type: ignore[attr-defined]
            except OSError:
                shm.close()
                shm.unlink()
                return None, data.to_pybytes()
            self._shm = shm
        self._shm.buf[:size] = memoryview(data).cast("B")
        return self._shm.name, size

    def close(self) -> None:
        if self._shm is not None:
            shm, self._shm = self._shm, None
            shm.close()
            try:
                shm.unlink()
            except FileNotFoundError:
                pass


class Inbox:
    """A reader's view of the peer's segment (re-attached when the peer grows it)."""

    def __init__(self) -> None:
        self._shm: shared_memory.SharedMemory | None = None

    def view(self, name: str, size: int) -> memoryview:
        if self._shm is None or self._shm.name != name:
            self.close()
            self._shm = shared_memory.SharedMemory(name=name)
            _untrack(self._shm)
        return self._shm.buf[:size]

    def take(self, name: str | None, size: int | bytes) -> bytes:
        """A copy of the bytes (the peer reuses its segment for the next message); bytes sent
        inline (name None: shared memory was full) come back as they are."""
        if name is None:
            return size  # type: ignore[return-value]
        view = self.view(name, size)
        try:
            return bytes(view)
        finally:
            view.release()

    def close(self) -> None:
        if self._shm is not None:
            shm, self._shm = self._shm, None
            try:
                shm.close()
            except BufferError:
                pass  # arrays still view it; the mapping goes with them
