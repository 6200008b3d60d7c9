#!/usr/bin/env python3
"""Writes the zarr v2 test fixtures of foxeval's token readers with the real zarr library.

Each fixture NAME is a zarr array directory NAME.zarr plus NAME.npy holding the same data (the
expected values the C++ tests compare against). Random token ids, fixed seed, so reruns give the
same arrays. Shapes are small and chunks deliberately do not divide them, so edge chunks are
ragged both ways like LongCrawl64's heldout.zarr ([52131, 65536] <u2, chunks [2048, 2048],
blosc lz4 clevel 5 shuffle 1).

Also writes .npy header variants (format 2.0 and 3.0, <i4/<i8, Fortran order) for the npy tests.

Usage:
  python3 tests/tools/make_zarr_fixtures.py [OUT_DIR]          # default tests/fixtures/zarr
  python3 tests/tools/make_zarr_fixtures.py --big OUT.zarr ROWS COLS   # one large u2 lz4 array

Needs zarr 2.x and numcodecs (Debian's python3-zarr works; zarr 2.18.3 needs numcodecs < 0.16).
"""
import os
import shutil
import sys

import numcodecs
import numpy as np
import zarr

VOCAB = 50257  # GPT-2 ids: many are >= 32768, which catches signed 16-bit reads

# name: (shape, chunks, dtype, compressor, extra zarr.open kwargs)
FIXTURES = {
    # Like heldout.zarr, scaled down: ragged in both dimensions.
    "u2_lz4_shuffle": ((5, 700), (2, 256), "<u2",
                       numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE), {}),
    "i4_zstd_noshuffle": ((7, 300), (3, 128), "<i4",
                          numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.NOSHUFFLE), {}),
    "i8_blosclz_bitshuffle": ((4, 333), (4, 100), "<i8",
                              numcodecs.Blosc(cname="blosclz", clevel=9,
                                              shuffle=numcodecs.Blosc.BITSHUFFLE), {}),
    "u2_zlib": ((6, 200), (4, 64), "<u2",
                numcodecs.Blosc(cname="zlib", clevel=1, shuffle=numcodecs.Blosc.SHUFFLE), {}),
    "u2_raw": ((3, 100), (2, 40), "<u2", None, {}),
    # Chunk keys "i/j" (nested directories) instead of "i.j".
    "u2_lz4_nested": ((5, 130), (2, 64), "<u2",
                      numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
                      {"dimension_separator": "/"}),
}


def token_data(rng, shape, dtype):
    data = rng.integers(0, VOCAB, size=shape, dtype=np.int64)
    if dtype == "<i4":  # sign handling: a few negative and large values
        data[0, :3] = [-1, -2**31, 2**31 - 1]
    if dtype == "<i8":  # values beyond 32 bits
        data[0, :3] = [-1, -2**63, 2**40 + 7]
    return data.astype(dtype)


def write_zarr(path, data, chunks, compressor, **kwargs):
    if os.path.exists(path):
        shutil.rmtree(path)
    z = zarr.open(path, mode="w", shape=data.shape, chunks=chunks, dtype=data.dtype,
                  compressor=compressor, fill_value=0, order="C", **kwargs)
    z[...] = data
    # Every chunk must exist: the C++ reader treats a missing chunk as an error.
    assert np.array_equal(zarr.open(path, mode="r")[...], data)


def write_fixtures(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240607)
    for name, (shape, chunks, dtype, compressor, kwargs) in FIXTURES.items():
        data = token_data(rng, shape, dtype)
        write_zarr(os.path.join(out, name + ".zarr"), data, chunks, compressor, **kwargs)
        np.save(os.path.join(out, name + ".npy"), data)

    # npy header variants: same values, other format versions, dtypes and orders.
    base = rng.integers(0, VOCAB, size=(3, 17), dtype=np.int64)
    for version in [(1, 0), (2, 0), (3, 0)]:
        with open(os.path.join(out, "npy_u2_v%d.npy" % version[0]), "wb") as f:
            np.lib.format.write_array(f, base.astype("<u2"), version=version)
    np.save(os.path.join(out, "npy_i4.npy"), base.astype("<i4"))
    np.save(os.path.join(out, "npy_i8.npy"), base.astype("<i8"))
    np.save(os.path.join(out, "npy_fortran.npy"), np.asfortranarray(base.astype("<u2")))
    np.save(os.path.join(out, "npy_f4.npy"), base.astype("<f4"))
    np.save(os.path.join(out, "npy_3d.npy"), base.astype("<u2").reshape(3, 1, 17))
    np.save(os.path.join(out, "npy_expected.npy"), base)  # int64 values of all variants above


def write_big(path, rows, cols):
    """A LongCrawl64-like array for throughput measurements (not committed)."""
    rng = np.random.default_rng(1)
    data = rng.integers(0, VOCAB, size=(rows, cols), dtype=np.int64).astype("<u2")
    write_zarr(path, data, (min(2048, rows), 2048),
               numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE))
    np.save(path[:-5] + ".npy" if path.endswith(".zarr") else path + ".npy", data)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--big":
        write_big(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        write_fixtures(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(here, "..", "fixtures", "zarr"))
