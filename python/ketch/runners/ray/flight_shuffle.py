"""The Flight shuffle (``shuffle_algorithm="flight_shuffle"``): map outputs on local disk, served
over Arrow Flight, never through Ray's object store.

- Map side (``ShuffleStore.write_buckets``, in a map task on an engine worker): each of the N
  buckets of the task's output is written as one Arrow IPC stream file (compressed with lz4 or
  zstd per ``flight_shuffle_compression``) under
  ``<dir>/ketch-shuffle-<query id>/<node>-<pid>/<stage>-<map>-<bucket>.arrow``, where ``<dir>``
  is one of ``flight_shuffle_dirs`` (map task i uses dir i mod len(dirs)). The task returns only
  metadata: the worker's Flight address and rows / bytes per bucket. Empty buckets and buckets of
  a table without columns (their rows are in the metadata) write no file.
- Each engine worker serves its files with a ``pyarrow.flight`` server started on first use
  (``ShuffleServer``, on the node's IP, port chosen by the OS). A ticket is
  ``"<shuffle id>/<map task>/<bucket>"``, the shuffle id being ``"<query id>-s<stage>"``.
- Reduce side (``fetch``, in a reduce task): the task's input leaf lists one ``FlightPiece``
  (address, ticket, rows) per map task; each is fetched with a ``FlightClient`` kept per address
  for the worker's life.
- Cleanup: when the query ends (success, failure, cancel) the driver asks every engine worker to
  ``drop_query(query id)``: each deletes ``<dir>/ketch-shuffle-<query id>`` on its node (the files
  of a worker that died on that node included) and forgets its tickets. A worker also deletes the
  directories it wrote into when its process exits (``atexit``; a worker killed with SIGKILL
  leaves its files until the query's ``drop_query``).

A reduce task that cannot fetch a piece (its worker gone) fails with ``FlightFetchError`` (a
KetchIOError) naming the address and ticket. The stage planner then runs again, on the workers
alive, every map task whose outputs were at that address (stages.py ``_recover_flight``) and
retries the reduce task on the new outputs; when that is impossible (the coordinator's attempts
are used up) the query fails with that error, the coordinator adding the stage and partition."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ketch.errors import KetchIOError

COMPRESSIONS = ("lz4", "zstd")
DEFAULT_DIR = os.path.join(tempfile.gettempdir(), "ketch_flight_shuffle")
FETCH_TIMEOUT_S = 300.0  # one Flight do_get, seconds


@dataclass(frozen=True)
class FlightMap:
    """What a flight shuffle map task needs besides its fragment: ``query_id`` (hex), ``stage``
    (the stage's number in the query), ``map_index`` (the task's index in the stage), ``dirs``
    (``flight_shuffle_dirs``) and ``compression`` ("lz4", "zstd" or None)."""

    query_id: str
    stage: int
    map_index: int
    dirs: tuple[str, ...]
    compression: str | None

    @property
    def shuffle_id(self) -> str:
        return f"{self.query_id}-s{self.stage}"


@dataclass(frozen=True)
class FlightPiece:
    """One bucket of one map task as a reduce task reads it: the Flight ``address`` of the worker
    holding it (``grpc+tcp://ip:port``), its ``ticket`` and ``rows``; ``num_columns`` 0 means a
    table without columns, rebuilt from ``rows`` without a fetch."""

    address: str
    ticket: str
    rows: int
    num_columns: int = 1


class FlightFetchError(KetchIOError):
    """A flight shuffle piece could not be fetched: ``address`` is the Flight server that held it
    (its worker gone, its files deleted)."""

    def __init__(self, message: str, address: str | None = None) -> None:
        super().__init__(message)
        self.address = address


def query_dir(base: str, query_id: str) -> str:
    """The directory of one query's shuffle files under one of ``flight_shuffle_dirs``."""
    return os.path.join(base, f"ketch-shuffle-{query_id}")


def normalize_compression(value: str | None) -> str | None:
    """``flight_shuffle_compression`` as pyarrow's codec name or None ("none" and None: no
    compression). Raises ValueError for another value."""
    if value is None or value == "none":
        return None
    if value not in COMPRESSIONS:
        raise ValueError(f"flight_shuffle_compression must be 'lz4', 'zstd', 'none' or None, got {value!r}")
    return value


def start_server(host: str, store: ShuffleStore) -> Any:
    """A running ``pyarrow.flight.FlightServerBase`` on ``host`` (port chosen by the OS, read as
    ``.port``) serving ``store``'s files by ticket; a ticket it does not hold is a
    FlightServerError naming it."""
    import pyarrow.flight as flight

    class _Server(flight.FlightServerBase):  # type: ignore[misc]
        def do_get(self, context: Any, ticket: Any) -> Any:
            key = ticket.ticket.decode()
            path, compression = store.lookup(key)
            if path is None:
                raise flight.FlightServerError(f"no shuffle file for ticket {key!r} on this worker")
            reader = pa.ipc.open_stream(pa.memory_map(path))
            options = pa.ipc.IpcWriteOptions(compression=compression)
            return flight.RecordBatchStream(reader, options=options)

    return _Server(f"grpc+tcp://{host}:0")


class ShuffleStore:
    """One engine worker's shuffle files and Flight server (started on the first map task)."""

    def __init__(self, host: str, owner: str) -> None:
        """``host``: the IP the Flight server binds to and is reached at; ``owner``: a name unique
        to this worker among those sharing the directories (node id and pid)."""
        self.host = host
        self.owner = owner
        self._server: Any = None
        self._lock = threading.Lock()
        self._files: dict[str, tuple[str, str | None]] = {}  # ticket -> (path, compression)
        self._dirs: set[str] = set()  # worker directories written into (removed at exit)
        self._clients: dict[str, Any] = {}
        atexit.register(self.close)

    @property
    def address(self) -> str:
        """``grpc+tcp://host:port`` of this worker's Flight server (started here if needed)."""
        with self._lock:
            if self._server is None:
                self._server = start_server(self.host, self)
            return f"grpc+tcp://{self.host}:{self._server.port}"

    def lookup(self, ticket: str) -> tuple[str | None, str | None]:
        with self._lock:
            return self._files.get(ticket, (None, None))

    def write_buckets(self, spec: FlightMap, tables: list[pa.Table]) -> dict[str, Any]:
        """Writes bucket j of ``tables`` (one table per bucket, same schema) to an IPC file and
        returns the task's metadata: "flight" (this worker's address), "shuffle_id", per bucket
        "rows", "bytes" (in memory, as map_reduce counts them) and "file_bytes" (on disk,
        compressed), "num_columns". Raises KetchIOError naming the file when it cannot be written."""
        address = self.address
        base = spec.dirs[spec.map_index % len(spec.dirs)]
        directory = os.path.join(query_dir(base, spec.query_id), self.owner)
        with self._lock:
            self._dirs.add(directory)
        options = pa.ipc.IpcWriteOptions(compression=spec.compression)
        file_bytes = []
        for bucket, table in enumerate(tables):
            if table.num_rows == 0 or table.num_columns == 0:
                file_bytes.append(0)
                continue
            path = os.path.join(directory, f"{spec.stage}-{spec.map_index}-{bucket}.arrow")
            try:
                os.makedirs(directory, exist_ok=True)
                with (
                    pa.OSFile(path, "wb") as sink,
                    pa.ipc.new_stream(sink, table.schema, options=options) as w,
                ):
                    w.write_table(table)
            except (OSError, pa.ArrowException) as error:
                raise KetchIOError(
                    f"flight shuffle: cannot write {path} (flight_shuffle_dirs): {error}"
                ) from None
            file_bytes.append(os.path.getsize(path))
            with self._lock:
                self._files[f"{spec.shuffle_id}/{spec.map_index}/{bucket}"] = (path, spec.compression)
        return {
            "flight": address,
            "shuffle_id": spec.shuffle_id,
            "rows": [t.num_rows for t in tables],
            "bytes": [t.nbytes for t in tables],
            "file_bytes": file_bytes,
            "num_columns": tables[0].num_columns if tables else 0,
        }

    def fetch(self, pieces: list[FlightPiece]) -> list[pa.Table]:
        """The tables of ``pieces`` (empty ones skipped), fetched over Flight (a client per
        address, kept). Raises FlightFetchError (a KetchIOError) naming the address and ticket
        when one cannot be fetched (its worker gone, its file deleted)."""
        import pyarrow.flight as flight

        from ketch.runners.ray.tables import without_columns

        tables = []
        options = flight.FlightCallOptions(timeout=FETCH_TIMEOUT_S)
        for piece in pieces:
            if piece.rows == 0:
                continue
            if piece.num_columns == 0:
                tables.append(without_columns(piece.rows))
                continue
            try:
                client = self._clients.get(piece.address)
                if client is None:
                    client = self._clients[piece.address] = flight.FlightClient(piece.address)
                table = client.do_get(flight.Ticket(piece.ticket.encode()), options).read_all()
            except (pa.ArrowException, OSError) as error:
                self._clients.pop(piece.address, None)
                raise FlightFetchError(
                    f"flight shuffle: cannot fetch {piece.ticket!r} ({piece.rows} rows) from "
                    f"{piece.address}: {str(error).splitlines()[0]}",
                    piece.address,
                ) from None
            tables.append(table)
        return tables

    def drop_query(self, query_id: str, dirs: list[str] | tuple[str, ...]) -> None:
        """Deletes query ``query_id``'s shuffle files under ``dirs`` on this node (every
        worker's, a dead one's included) and forgets its tickets."""
        prefix = f"{query_id}-s"
        with self._lock:
            self._files = {t: v for t, v in self._files.items() if not t.startswith(prefix)}
            self._dirs = {d for d in self._dirs if f"ketch-shuffle-{query_id}" not in d}
        for base in dirs:
            shutil.rmtree(query_dir(base, query_id), ignore_errors=True)

    def close(self) -> None:
        """Stops the Flight server and deletes every directory this worker wrote into."""
        with self._lock:
            dirs, self._dirs, self._files = self._dirs, set(), {}
            server, self._server = self._server, None
        for directory in dirs:
            shutil.rmtree(directory, ignore_errors=True)
            parent = os.path.dirname(directory)
            try:
                os.rmdir(parent)  # the query's directory, once no other worker's is left in it
            except OSError:
                pass
        if server is not None:
            server.shutdown()
