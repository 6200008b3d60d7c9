"""Writes tests/fixtures/loss/: the same token rows as .npy and as a zarr v2 array written by the
real zarr library (blosc lz4 + shuffle, ragged chunks, like LongCrawl64's heldout.zarr), with ids
below 256 for the byte-level tiny checkpoints in tests/fixtures/official.

Run: .venv/bin/python tests/tools/make_loss_fixtures.py   (zarr 2.18.x, numcodecs < 0.16)
"""
import os

import numcodecs
import numpy as np
import zarr

here = os.path.join(os.path.dirname(__file__), "..", "fixtures", "loss")
os.makedirs(here, exist_ok=True)
rng = np.random.default_rng(20261122)
# 6 documents of 640 tokens: windows of 128/256/640 and chunks [4, 256] that are ragged both ways.
rows = rng.integers(0, 256, size=(6, 640)).astype(np.uint16)
np.save(os.path.join(here, "tokens.npy"), rows)
z = zarr.open(os.path.join(here, "tokens.zarr"), mode="w", shape=rows.shape, chunks=(4, 256), dtype="<u2",
              compressor=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE))
z[:] = rows
print("wrote", here)
