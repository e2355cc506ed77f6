"""Writes expected.json: Daft 0.7.26's image_hash of images.make_images() for every case in
images.CASES. Run with a Python that has Daft 0.7.26 (not a test dependency):

    python tests/data/image_hash_daft/generate.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))

import daft  # noqa: E402
from daft.functions import convert_image, image_hash  # noqa: E402
from images import CASES, DCT_DEGENERATE, DCT_METHODS, MODES, case_key, luma_f32, make_images  # noqa: E402


def column(pixels: np.ndarray) -> daft.DataFrame:
    mode = MODES[pixels.shape[2]]
    df = daft.from_pydict({"img": [pixels]})
    return df.with_column("img", df["img"].cast(daft.DataType.image(mode)))


def main() -> None:
    assert daft.__version__ == "0.7.26", daft.__version__
    images = make_images()
    for name, pixels in images:
        if pixels.shape[2] >= 3:  # the grayscale Ketch computes is Daft's for these pixels
            got = np.asarray(column(pixels).select(convert_image(daft.col("img"), "L")).to_pydict()["img"][0])
            assert np.array_equal(got.reshape(pixels.shape[:2]), luma_f32(pixels)), name
    out: dict[str, object] = {"daft_version": daft.__version__, "images": [n for n, _ in images], "cases": {}}
    for method, hash_size, binbits, segments in CASES:
        hashes = []
        for name, pixels in images:
            if method in DCT_METHODS and name in DCT_DEGENERATE:
                hashes.append(None)
                continue
            expr = image_hash(
                daft.col("img"), method=method, hash_size=hash_size, binbits=binbits, segments=segments
            )
            value = column(pixels).select(expr.alias("h")).to_pydict()["h"][0]
            hashes.append(value.hex())
        out["cases"][case_key(method, hash_size, binbits, segments)] = hashes  # type: ignore[index]
    (HERE / "expected.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
