"""Independent references for Daft's hash, minhash and simhash (Daft 0.7.26's rules, read from
its Rust sources: daft-core src/kernels/hashing.rs, daft-minhash, daft-functions src/simhash.rs).

xxHash comes from the system libxxhash (Debian libxxhash0) through ctypes, a path independent of
Ketch's C++ build, which compiles xxhash.h inline; SHA-1 from hashlib; MurmurHash3_x86_32 and
fastrand's wyrand generator are written out here in Python."""

from __future__ import annotations

import ctypes
import ctypes.util
import decimal
import hashlib
import struct
from typing import Any

import pyarrow as pa


def _load_xxhash() -> ctypes.CDLL:
    name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
    lib = ctypes.CDLL(name)
    for fn, width in (("XXH3_64bits_withSeed", ctypes.c_uint64), ("XXH64", ctypes.c_uint64)):
        getattr(lib, fn).restype = width
        getattr(lib, fn).argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    lib.XXH32.restype = ctypes.c_uint32
    lib.XXH32.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32]
    return lib


XXHASH = _load_xxhash()
M64 = 2**64 - 1


def xxh3(data: bytes, seed: int = 0) -> int:
    return int(XXHASH.XXH3_64bits_withSeed(data, len(data), seed))


def xxh64(data: bytes, seed: int = 0) -> int:
    return int(XXHASH.XXH64(data, len(data), seed))


def xxh32(data: bytes, seed: int = 0) -> int:
    return int(XXHASH.XXH32(data, len(data), seed & 0xFFFFFFFF))


def murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3_x86_32 (github.com/aappleby/smhasher, src/MurmurHash3.cpp)."""
    c1, c2, m32 = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m32

    h, n = seed & m32, len(data)
    for i in range(0, n - n % 4, 4):
        k = (rotl((int.from_bytes(data[i : i + 4], "little") * c1) & m32, 15) * c2) & m32
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & m32
    tail, k = data[n - n % 4 :], 0
    for j in reversed(range(len(tail))):
        k ^= tail[j] << (8 * j)
    if tail:
        h ^= (rotl((k * c1) & m32, 15) * c2) & m32
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m32
    return h ^ (h >> 16)


def sha1_first8(data: bytes, seed: int | None) -> int:
    prefix = b"" if seed is None else struct.pack("<Q", seed)
    return int.from_bytes(hashlib.sha1(prefix + data).digest()[:8], "little")


def hash_bytes(data: bytes, kind: str, seed: int | None) -> int:
    """One value's hash; ``seed`` None means unseeded (Daft's defaults)."""
    if kind in ("xxhash", "xxhash3_64"):
        return xxh3(data, seed or 0)
    if kind == "xxhash64":
        return xxh64(data, seed or 0)
    if kind == "xxhash32":
        return xxh32(data, seed or 0)
    if kind == "murmurhash3":
        return murmur3_32(data, 42 if seed is None else seed)
    assert kind == "sha1"
    return sha1_first8(data, seed)


def null_scalar_hash(kind: str, seed: int | None) -> int:
    """A null number/bool/decimal/temporal: xxHash's unseeded hash of no bytes whatever the seed;
    murmurhash3 and sha1 hash no bytes with the seed."""
    if kind in ("murmurhash3", "sha1"):
        return hash_bytes(b"", kind, seed)
    return hash_bytes(b"", kind, None)


def value_bytes(value: Any, dtype: pa.DataType) -> bytes:
    if pa.types.is_boolean(dtype):
        return b"1" if value else b"0"
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return value.encode()
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype) or pa.types.is_fixed_size_binary(dtype):
        return bytes(value)
    if pa.types.is_decimal(dtype):
        return f"{decimal.Decimal(value):.{dtype.scale}f}".encode()
    if pa.types.is_floating(dtype):
        return struct.pack({4: "<f", 8: "<d"}[dtype.bit_width // 8], value)
    if pa.types.is_integer(dtype):
        return value.to_bytes(dtype.bit_width // 8, "little", signed=pa.types.is_signed_integer(dtype))
    raise TypeError(dtype)


def daft_hash(values: list[Any], dtype: pa.DataType, kind: str, seeds: list[int] | None) -> list[int | None]:
    """Daft's hash of a flat column of ``values`` (``seeds``: one per row, or None)."""
    out: list[int | None] = []
    for i, v in enumerate(values):
        seed = None if seeds is None else seeds[i]
        if v is not None:
            out.append(hash_bytes(value_bytes(v, dtype), kind, seed))
        elif pa.types.is_fixed_size_binary(dtype):
            out.append(hash_bytes(bytes(dtype.byte_width), kind, seed))
        elif (
            pa.types.is_string(dtype)
            or pa.types.is_large_string(dtype)
            or pa.types.is_binary(dtype)
            or pa.types.is_large_binary(dtype)
        ):
            out.append(hash_bytes(b"", kind, seed))
        else:
            out.append(null_scalar_hash(kind, seed))
    return out


class WyRand:
    """fastrand 2.x's generator (github.com/smol-rs/fastrand, src/lib.rs)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & M64

    def next(self) -> int:
        self.state = (self.state + 0x2D358DCCAA6C78A5) & M64
        t = self.state * (self.state ^ 0x8BB84B93962EACC9)
        return (t & M64) ^ (t >> 64)

    def below(self, n: int) -> int:
        """Lemire's multiply-shift with rejection (fastrand's gen_mod_u64)."""
        product = self.next() * n
        if product & M64 < n:
            threshold = (-n & M64) % n
            while product & M64 < threshold:
                product = self.next() * n
        return product >> 64


def word_windows(text: str, size: int) -> list[bytes]:
    """daft-minhash src/windowed.rs: windows of ``size`` words cut at ASCII spaces."""
    data = text.encode()
    if not data:
        return []
    spaces = [i for i, c in enumerate(data) if c == 0x20]
    starts = [0] + [i + 1 for i in spaces]
    ends = spaces + [len(data)]
    if len(starts) <= size:
        return [data]
    return [data[starts[w] : ends[w + size - 1]] for w in range(len(starts) - size + 1)]


def daft_minhash(text: str, num_hashes: int, ngram_size: int, seed: int, kind: str) -> list[int]:
    rng = WyRand(seed)
    a = [1 + rng.below(2**31 - 2) for _ in range(num_hashes)]
    b = [rng.below(2**31 - 1) for _ in range(num_hashes)]
    mins = [0xFFFFFFFF] * num_hashes
    for gram in word_windows(text, ngram_size):
        h = hash_bytes(gram, kind, None if kind == "sha1" else seed) & 0xFFFFFFFF
        for i in range(num_hashes):
            v = (h * a[i] + b[i]) & M64
            mins[i] = min(mins[i], (v + (v >> 61)) & 0xFFFFFFFF)
    return mins


def daft_simhash(text: str, ngram_size: int, kind: str) -> int:
    if len(text) < ngram_size:
        return 0
    weights = [0] * 64
    for c in range(len(text) - ngram_size + 1):
        h = hash_bytes(text[c : c + ngram_size].encode(), kind, None if kind == "sha1" else 0)
        for bit in range(64):
            weights[bit] += 1 if (h >> bit) & 1 else -1
    return sum(1 << bit for bit in range(64) if weights[bit] > 0)
