"""COIL-20 processed (Nene, Nayar & Murase 1996, Columbia CAVE): 20 objects × 72 poses, 128×128 grayscale.

Source: https://www.cs.columbia.edu/CAVE/databases/SLAM_coil-20_coil-100/coil-20/coil-20-proc.zip, files
``coil-20-proc/obj{1..20}__{0..71}.png`` (pose k is a 5k-degree turn of the object).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

from ..constraints import IntOptions, declare
from ..errors import UserError
from .base import Dataset

N_OBJECTS, N_POSES, SIDE = 20, 72, 128
#: The image sides ``size`` may take: the divisors of 128.
SIZES = tuple(SIDE >> k for k in range(8))


@declare({"size": [IntOptions(SIZES)]})
def coil20(raw_dir: str | os.PathLike, size: int = 128) -> Dataset:
    """Load the 1,440 PNGs ``raw_dir/obj{o}__{p}.png`` decoded with Pillow.

    - Rows are ordered by (object, pose): obj1 poses 0..71, then obj2, ...; labels ``obj{o}`` → ``o - 1``,
      names ``"obj1".."obj20"``; ``meta["pose"]`` holds each row's pose index.
    - ``X`` = pixel values / 255, row-major, float64: 1,440×16,384 for ``size=128``.
    - ``size`` < 128 (a divisor of 128, e.g. 32 → 1,440×1,024) downsamples by **area averaging**: the mean of
      each ``(128/size)×(128/size)`` pixel block (4×4 for 32).

    Missing files raise ``FileNotFoundError`` with their count and the first few names; images that are not
    8-bit grayscale 128×128 raise ``ValueError``.
    """
    raw_dir = Path(raw_dir)
    paths = [raw_dir / f"obj{o}__{p}.png" for o in range(1, N_OBJECTS + 1) for p in range(N_POSES)]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"COIL-20: {len(missing)} of {len(paths)} images missing in {raw_dir}, "
                                f"e.g. {missing[:3]}")
    images = np.empty((len(paths), SIDE, SIDE), dtype=np.uint8)
    for i, path in enumerate(paths):
        with Image.open(path) as im:
            if im.mode != "L" or im.size != (SIDE, SIDE):
                raise UserError(f"{path}: expected an 8-bit grayscale (mode 'L') {SIDE}x{SIDE} image, "
                                 f"got mode {im.mode!r} size {im.size}")
            images[i] = np.asarray(im)
    X = images.astype(np.float64) / 255.0
    b = SIDE // size
    if b > 1:
        X = X.reshape(len(paths), size, b, size, b).mean(axis=(2, 4))
    labels = np.repeat(np.arange(N_OBJECTS), N_POSES)
    return Dataset(X.reshape(len(paths), -1), labels, [f"obj{o}" for o in range(1, N_OBJECTS + 1)], meta={
        "source": "COIL-20 processed (coil-20-proc.zip)", "size": size,
        "downsampling": "none" if b == 1 else f"area average of {b}x{b} blocks",
        "pixel_scale": "x/255", "order": "(object, pose)", "pose": np.tile(np.arange(N_POSES), N_OBJECTS).tolist(),
        "n_samples": len(paths)})
