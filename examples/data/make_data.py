"""Derives the small data files of the comparison workload examples (run from this folder).

- camera_128.pgm: scikit-image's `camera` sample (512 x 512, 8-bit grey), 4 x 4 block means
  rounded down: 128 x 128 pixels, binary PGM.
"""
import numpy as np
from skimage import data

img = data.camera().astype(np.uint32)
small = img.reshape(128, 4, 128, 4).sum(axis=(1, 3)) // 16
with open("camera_128.pgm", "wb") as f:
    f.write(b"P5\n128 128\n255\n")
    f.write(small.astype(np.uint8).tobytes())
