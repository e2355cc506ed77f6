"""Arrow IPC batches through POSIX shared memory: only a segment's name and a size cross the socket
between the engine and a UDF worker process. Each side keeps one reusable segment for what it
sends (grown, under a new name, when a batch does not fit): the batch is written into it directly
and the reader copies it out, so a batch costs two memory copies and no system calls beyond the
socket round trip.

A batch of ``HANDOFF_BYTES`` or more (a UDF result of large blobs, possibly over 2 GiB) goes into a
segment of its own, of its exact size, that the reader maps and unlinks: its arrays live on the
mapping without a copy, and the writer keeps nothing once the batch is sent."""

from __future__ import annotations

import mmap
import os
import secrets

import pyarrow as pa

_MIN_CAPACITY = 1 << 20
_HANDOFF_MARK = "h"  # segment names <prefix>-h<n>: handed off to the reader


HANDOFF_BYTES = 64 << 20


def _batch(arrays: list[pa.Array]) -> pa.RecordBatch:
    return pa.record_batch(arrays, names=[f"a{i}" for i in range(len(arrays))])


def _write(batch: pa.RecordBatch, sink: pa.NativeFile) -> None:
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)


def _stream_size(batch: pa.RecordBatch) -> int:
    """Bytes of ``batch`` as an IPC stream (counted, nothing copied)."""
    sink = pa.MockOutputStream()
    _write(batch, sink)
    return sink.size()


def serialize(arrays: list[pa.Array]) -> pa.Buffer:
    """The arrays (columns a0, a1, ...) as one Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    _write(_batch(arrays), sink)
    return sink.getvalue()


def deserialize(data: pa.Buffer | bytes) -> list[pa.Array]:
    """Arrays of a stream written by serialize (zero-copy over ``data``)."""
    return list(
        pa.ipc.open_stream(pa.py_buffer(data) if isinstance(data, bytes) else data).read_next_batch().columns
    )


_SHM_DIR = "/dev/shm"


class _Segment:
    """A POSIX shared-memory segment (a file under /dev/shm on Linux), mapped read-write.

    multiprocessing.shared_memory is not used: it starts a resource-tracker helper process in
    every process that creates or attaches a segment, which outlives the query's pools; ownership
    is explicit here (the creator unlinks, reclaim_segments cleans up after a killed worker)."""

    def __init__(self, name: str, size: int | None = None) -> None:
        """Creates ``name`` with ``size`` bytes (pages allocated up front: OSError ENOSPC when
        /dev/shm is full, rather than SIGBUS on the first write), or attaches to it when ``size``
        is None."""
        self.name = name
        path = os.path.join(_SHM_DIR, name)
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if size is not None else 0)
        fd = os.open(path, flags, 0o600)
        try:
            if size is not None:
                try:
                    os.posix_fallocate(fd, 0, size)
                except OSError:
                    os.unlink(path)
                    raise
            else:
                size = os.fstat(fd).st_size
            self._map = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        self.size = size
        self.buf = memoryview(self._map)

    def close(self) -> None:
        self.buf.release()
        self._map.close()

    def unlink(self) -> None:
        try:
            os.unlink(os.path.join(_SHM_DIR, self.name))
        except FileNotFoundError:
            pass


def reclaim_segments(prefix: str) -> None:
    """Unlinks every segment whose name starts with ``prefix`` (a worker's, once it is gone)."""
    try:
        names = [n for n in os.listdir(_SHM_DIR) if n.startswith(prefix)]
    except OSError:
        return
    for name in names:
        try:
            os.unlink(os.path.join(_SHM_DIR, name))
        except OSError:
            pass


class Outbox:
    """A writer's reusable segment: ``put_arrays`` writes a batch in and says where it is. The
    segment's pages are allocated up front (posix_fallocate): when /dev/shm is full that fails
    with ENOSPC instead of a SIGBUS on the first write, and ``put_arrays`` returns the batch's
    bytes themselves to send over the socket instead."""

    def __init__(self, prefix: str | None = None) -> None:
        self._shm: _Segment | None = None
        # Segments are named <prefix>-<n> (reclaim_segments finds them).
        self._prefix = prefix or f"ketch-{os.getpid()}-{secrets.token_hex(4)}"
        self._count = 0

    def put_arrays(self, arrays: list[pa.Array]) -> tuple[str | None, int | bytes]:
        """The arrays (as :func:`serialize` writes them) into shared memory, written in place;
        says where they are. ``HANDOFF_BYTES`` or more: a segment of their own that the reader
        takes over (see :meth:`Inbox.take`)."""
        batch = _batch(arrays)
        size = _stream_size(batch)
        if size < HANDOFF_BYTES:
            if self._shm is None or self._shm.size < size:
                self.close()
                self._count += 1
                try:
                    self._shm = _Segment(f"{self._prefix}-{self._count}", max(_MIN_CAPACITY, 2 * size))
                except OSError:
                    return None, serialize(arrays).to_pybytes()
            _write(batch, pa.FixedSizeBufferWriter(pa.py_buffer(self._shm.buf[:size])))
            return self._shm.name, size
        self._count += 1
        try:
            segment = _Segment(f"{self._prefix}-{_HANDOFF_MARK}{self._count}", size)
        except OSError:
            return None, serialize(arrays).to_pybytes()
        try:
            _write(batch, pa.FixedSizeBufferWriter(pa.py_buffer(segment.buf)))
        except BaseException:
            segment.close()
            segment.unlink()
            raise
        segment.close()  # the pages stay in the segment until the reader unlinks it
        return segment.name, size

    def close(self) -> None:
        if self._shm is not None:
            shm, self._shm = self._shm, None
            shm.close()
            shm.unlink()


class Inbox:
    """A reader's view of the peer's segment (re-attached when the peer grows it)."""

    def __init__(self) -> None:
        self._shm: _Segment | None = None

    def view(self, name: str, size: int) -> memoryview:
        if self._shm is None or self._shm.name != name:
            self.close()
            self._shm = _Segment(name)
        return self._shm.buf[:size]

    def take(self, name: str | None, size: int | bytes) -> bytes | pa.Buffer:
        """A copy of the bytes (the peer reuses its segment for the next message); bytes sent
        inline (name None: shared memory was full) come back as they are. A segment handed off
        (``Outbox.put_arrays`` of ``HANDOFF_BYTES`` or more) is mapped and unlinked, and comes
        back as a buffer over the mapping (no copy; unmapped when its last array is freed)."""
        if name is None:
            return size  # type: ignore[return-value]
        if name.rsplit("-", 1)[-1].startswith(_HANDOFF_MARK):
            segment = _Segment(name)
            segment.unlink()
            return pa.py_buffer(segment.buf[:size])
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
