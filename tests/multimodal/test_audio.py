"""Audio kernels (audio_metadata, decode_audio / .audio.decode, resample, audio_file) against the
references Daft uses: soundfile (libsndfile) for metadata and samples, soxr (librosa's default
resampler) for resampling."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import soundfile as sf
import soxr
from audio_fixtures import make_audio_files, write_pcm_wav

import ketch
from ketch import col
from ketch.functions import audio_file, audio_metadata, decode_audio, resample


@pytest.fixture(scope="module")
def audio(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_audio_files(tmp_path_factory.mktemp("audio"))


def _files_df(paths: list[Path]) -> ketch.DataFrame:
    return ketch.from_pydict({"path": [str(p) for p in paths]}).with_column("f", audio_file(col("path")))


ALL = [
    "speech.wav",
    "speech.flac",
    "speech.mp3",
    "speech.ogg",
    "speech.opus",
    "stereo.wav",
    "stereo24.flac",
    "float.wav",
]


def test_metadata_equals_soundfile_for_every_format(audio: dict[str, Path]) -> None:
    rows = _files_df([audio[n] for n in ALL]).select(audio_metadata(col("f")).alias("m")).to_pydict()["m"]
    for name, got in zip(ALL, rows, strict=True):
        info = sf.info(str(audio[name]))
        want = {
            "sample_rate": info.samplerate,
            "channels": info.channels,
            "frames": float(info.frames),
            "format": info.format,
            "subtype": info.subtype,
        }
        if name.endswith((".mp3", ".ogg", ".opus")):
            # Lossy streams: libsndfile and FFmpeg trim encoder delay and padding by their own
            # rules; the counts agree within one codec frame.
            assert abs(got.pop("frames") - want.pop("frames")) <= 1152, name
        assert got == want, name


def test_pcm_samples_equal_soundfile_exactly(audio: dict[str, Path]) -> None:
    names = ["speech.wav", "speech.flac", "stereo.wav", "stereo24.flac", "float.wav"]
    df = _files_df([audio[n] for n in names]).select(decode_audio(col("f"), dtype="float64").alias("x"))
    for name, got in zip(names, df.to_pydict()["x"], strict=True):
        want, _ = sf.read(str(audio[name]), dtype="float64")
        assert got.dtype == np.float64 and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_lossy_samples_match_soundfile_closely(audio: dict[str, Path]) -> None:
    for name in ["speech.mp3", "speech.ogg"]:
        got = ketch.from_pydict({"b": [audio[name].read_bytes()]}).select(col("b").audio.decode().alias("x"))
        x = got.to_pydict()["x"][0]
        want, _ = sf.read(str(audio[name]), dtype="float32")
        n = min(len(x), len(want))
        assert abs(len(x) - len(want)) <= 1152, name
        # Same decoded signal up to the decoders' alignment and float rounding: correlation ~1.
        best = max(np.corrcoef(x[s : n - 2000 + s], want[: n - 2000])[0, 1] for s in range(0, 1153, 1))
        assert best > 0.99, (name, best)


def test_resample_equals_librosa_soxr_hq(audio: dict[str, Path]) -> None:
    names = ["speech.wav", "stereo.wav"]
    df = _files_df([audio[n] for n in names]).select(resample(col("f"), 16000).alias("x"))
    for name, got in zip(names, df.to_pydict()["x"], strict=True):
        data, rate = sf.read(str(audio[name]), dtype="float64")
        # librosa.resample(res_type="soxr_hq"), what Daft calls: soxr's output, zero-padded to
        # ceil(frames * 16000 / rate) frames.
        want = soxr.resample(data, rate, 16000, quality="HQ")
        size = -(-len(data) * 16000 // rate)
        want = np.pad(want, [(0, size - len(want))] + [(0, 0)] * (want.ndim - 1))[:size]
        assert got.dtype == np.float64 and got.shape == want.shape, name
        # The same soxr recipe on the same samples: bit for bit what Daft's resample gives for PCM.
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_mono_is_the_mean_of_the_channels_and_float32_is_the_default(audio: dict[str, Path]) -> None:
    df = ketch.from_pydict({"b": [audio["stereo.wav"].read_bytes()]})
    out = df.select(
        col("b").audio.decode(mono=True).alias("mono"), col("b").audio.decode().alias("both")
    ).to_pydict()
    both, mono = out["both"][0], out["mono"][0]
    assert both.dtype == np.float32 and both.shape == (22050, 2)
    assert mono.shape == (22050,)
    np.testing.assert_allclose(mono, both.mean(axis=1), atol=1e-7)


def test_schema_types_and_audio_file_objects(audio: dict[str, Path]) -> None:
    df = _files_df([audio["speech.flac"]])
    assert str(df.schema()["f"].dtype) == "File[Audio]"
    df = df.with_column("m", col("f").audio.metadata()).with_column("x", col("f").audio.resample(8000))
    schema = df.schema()
    assert schema["m"].dtype.to_arrow() == pa.struct(
        [
            ("sample_rate", pa.int64()),
            ("channels", pa.int64()),
            ("frames", pa.float64()),
            ("format", pa.string()),
            ("subtype", pa.string()),
        ]
    )
    row = df.to_pylist()[0]
    f = row["f"]
    assert isinstance(f, ketch.AudioFile) and f.path == str(audio["speech.flac"])
    assert f.metadata() == row["m"]
    np.testing.assert_array_equal(f.resample(8000), row["x"])
    np.testing.assert_array_equal(f.to_numpy(), sf.read(str(audio["speech.flac"]), dtype="float64")[0])


def test_bad_rows_raise_naming_the_row_or_become_null(audio: dict[str, Path], tmp_path: Path) -> None:

    good = audio["speech.wav"].read_bytes()
    truncated = good[: len(good) // 2]
    jpeg = tmp_path / "photo.wav"
    from PIL import Image

    Image.new("RGB", (8, 8), "red").save(jpeg, format="JPEG")
    cases = {
        "empty": b"",
        "zeros": b"\0" * 4096,
        "truncated": truncated,
        "jpeg": jpeg.read_bytes(),
    }
    video_only = tmp_path / "video.mp4"
    import subprocess

    subprocess.run(
        [
            "ffmpeg",
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=64x48:rate=5",
            "-t",
            "1",
            "-c:v",
            "mjpeg",
            str(video_only),
        ],
        check=True,
    )
    cases["video_only"] = video_only.read_bytes()
    for reason, bad in cases.items():
        df = ketch.from_pydict({"b": [good, bad, good]})
        with pytest.raises(ValueError, match=r"audio\.decode failed at row 1") as info:
            df.select(col("b").audio.decode()).collect()
        print(reason, info.value)
        out = df.select(col("b").audio.decode(on_error="null").alias("x")).to_pydict()["x"]
        assert out[1] is None and out[0].shape == out[2].shape == (102256,), reason
        meta = df.select(audio_metadata(col("b"), on_error="null").alias("m")).to_pydict()["m"]
        assert meta[0]["frames"] == 102256.0 and meta[2] == meta[0], reason
        if reason != "truncated":  # the header of a truncated file is whole
            assert meta[1] is None, reason
    with pytest.raises(ValueError, match="no audio stream"):
        ketch.from_pydict({"b": [cases["video_only"]]}).select(col("b").audio.decode()).collect()
    with pytest.raises(ValueError, match="truncated audio"):
        ketch.from_pydict({"b": [truncated]}).select(col("b").audio.decode()).collect()


def test_a_row_over_the_memory_budget_is_refused_from_its_header(tmp_path: Path) -> None:
    path = tmp_path / "long.wav"
    write_pcm_wav(path, np.zeros(8_000_000, dtype=np.int16), 8000)  # 1,000 s, 16 MB of PCM
    df = ketch.from_pydict({"b": [path.read_bytes()]})
    with ketch.execution_config_ctx(memory_budget_bytes=20 << 20):
        with pytest.raises(ValueError, match="over the limit"):
            df.select(col("b").audio.decode(sample_rate=48000)).collect()  # 48M float32 = 192 MB


def test_plan_time_errors() -> None:
    df = ketch.from_pydict({"s": ["a"], "i": [1]})
    with pytest.raises(Exception, match="expects encoded bytes"):
        df.select(col("i").audio.decode())
    with pytest.raises(ValueError, match="dtype"):
        col("s").audio.decode(dtype="int16")
    with pytest.raises(Exception, match="audio_file expects a string column"):
        ketch.from_pydict({"b": [b"x"]}).select(audio_file(col("b")))
    with pytest.raises(ValueError, match="io_config"):
        audio_file(col("s"), io_config=ketch.io.IOConfig())


def test_nulls_pass_through(audio: dict[str, Path]) -> None:
    df = ketch.from_pydict({"p": [None, str(audio["speech.wav"])]}).with_column("f", audio_file(col("p")))
    out = df.select(audio_metadata(col("f")).alias("m"), resample(col("f"), 8000).alias("x")).to_pydict()
    assert out["m"][0] is None and out["x"][0] is None
    assert out["m"][1]["sample_rate"] == 22050 and out["x"][1].shape == (37100,)


def test_explain_shows_the_read_on_the_io_pool_and_the_decoder_as_its_own_node(
    audio: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    df = (
        _files_df([audio["speech.wav"]])
        .with_column("m", audio_metadata(col("f")))
        .with_column("x", col("f").audio.decode(sample_rate=8000))
    )
    df.explain(show_all=True)
    physical = capsys.readouterr().out.split("== Physical Plan ==")[1]
    reads = [line for line in physical.splitlines() if "file_read(col(f)" in line]
    assert len(reads) == 1 and reads[0].count("file_read") == 1  # one read feeds both kernels
    read_node = physical.split(reads[0])[1].split("* ")[0]
    assert "Runs on = I/O pool" in read_node
    decode = [line for line in physical.splitlines() if "audio_decode(col(__ketch_split_" in line]
    assert len(decode) == 1 and "audio_metadata" not in decode[0]
    assert df.select("m").to_pydict()["m"][0]["frames"] == 102256.0


def test_an_endless_http_stream_fails_its_row_at_the_size_limit(audio: dict[str, Path]) -> None:
    """A server that never stops sending (here: up to 64 MiB, then it gives up) is cut at
    HTTPConfig.max_object_bytes: that row fails naming its URL, the other rows decode."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    good = audio["speech.wav"].read_bytes()

    class Endless(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "audio/wav")
            self.end_headers()
            if self.path == "/good.wav":
                self.wfile.write(good)
                return
            try:
                self.wfile.write(good[:44])
                for _ in range(1024):  # bounded: 64 MiB at most
                    self.wfile.write(b"\x01\x00" * 32768)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        df = ketch.from_pydict({"u": [f"{base}/good.wav", f"{base}/endless.wav"]}).with_column(
            "f", audio_file(col("u"))
        )
        config = ketch.io.IOConfig(http=ketch.io.HTTPConfig(max_object_bytes=4 << 20))
        with pytest.raises(Exception, match=r"row 1 .*endless\.wav.*larger than the limit"):
            df.select(decode_audio(col("f"), io_config=config)).collect()
        out = df.select(decode_audio(col("f"), io_config=config, on_error="null").alias("x")).to_pydict()["x"]
        assert out[0].shape == (102256,) and out[1] is None
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_header_lies_and_empty_pcm(audio: dict[str, Path]) -> None:
    """Samples keep the rate their frames are decoded at, whatever the header says (a FLAC whose
    STREAMINFO says 1 Hz); a WAV with an empty data chunk is empty audio, as soundfile reads it;
    a file cut inside its container names the truncation."""
    import struct

    flac = bytearray(audio["speech.flac"].read_bytes())
    v = (flac[18] << 16) | (flac[19] << 8) | flac[20]
    v = (v & 0xF) | (1 << 4)  # STREAMINFO's 20-bit sample rate := 1 Hz
    flac[18:21] = bytes([(v >> 16) & 255, (v >> 8) & 255, v & 255])
    got = (
        ketch.from_pydict({"b": [bytes(flac)]}).select(decode_audio(col("b")).alias("x")).to_pydict()["x"][0]
    )
    assert got.shape == (102256,)
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    empty = (
        b"RIFF"
        + struct.pack("<I", 36)
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + struct.pack("<I", 0)
    )
    out = (
        ketch.from_pydict({"b": [empty]})
        .select(decode_audio(col("b")).alias("x"), audio_metadata(col("b")).alias("m"))
        .to_pydict()
    )
    assert out["x"][0].shape == (0,) and out["m"][0]["frames"] == 0.0
    assert sf.read(io.BytesIO(empty))[0].shape == (0,)
    ogg = audio["speech.ogg"].read_bytes()
    with pytest.raises(ValueError, match="truncated: the file ends before"):
        ketch.from_pydict({"b": [ogg[:200]]}).select(decode_audio(col("b"))).collect()


def test_errors_over_a_file_column_name_the_row_and_the_path(audio: dict[str, Path], tmp_path: Path) -> None:
    from PIL import Image

    bad = tmp_path / "photo.wav"
    Image.new("RGB", (8, 8), "red").save(bad, format="JPEG")
    df = _files_df([audio["speech.wav"], bad])
    for expr in (audio_metadata(col("f")), decode_audio(col("f"))):
        with pytest.raises(ValueError, match=r"failed at row 1 \('.*photo\.wav'\): not an audio file"):
            df.select(expr).collect()


def _metadata_with_one_io_thread(paths: list[str]) -> list[int]:
    with ketch.execution_config_ctx(num_io_threads=2, morsel_size_rows=1):
        rates = audio_metadata(audio_file(col("p")))["sample_rate"]
        return ketch.from_pydict({"p": paths}).select(rates.alias("r")).to_pydict()["r"]


def test_a_read_stage_on_the_io_pool_never_waits_on_its_own_pool(run_isolated, audio) -> None:
    """The optimizer gives file_read a stage on the I/O pool; the kernel's reads must not be queued
    on that same pool while its thread waits for them (with every I/O thread in such a stage, the
    query hung). One I/O thread makes the old deadlock certain."""
    paths = [str(audio["speech.wav"]), str(audio["stereo.wav"])] * 4
    assert run_isolated(_metadata_with_one_io_thread, paths, timeout=60) == [22050, 44100] * 4
