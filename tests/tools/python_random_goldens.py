#!/usr/bin/env python3
"""Goldens for foxeval's ports of CPython's `random`, NumPy's legacy RandomState and
uuid.UUID(version=4) (data/python/python_random.h, numpy_random.h), the generators lm-eval 0.4.13's
RULER tasks draw from.

Writes tests/fixtures/ruler/python_random.json:
  python: per seed, a script of calls on random.Random(seed) (ops drawn by a separate driver
          generator: getrandbits, randbelow, randint, randrange, random, choice, choices, sample of
          range(n) in both of CPython's algorithms, shuffle, uuid4) and what each returned; random()
          as the integer random() * 2**53 (exact), uuid4 as str(uuid.UUID(int=getrandbits(128),
          version=4)); then the next getrandbits(32), which pins where the stream ends.
  numpy:  per seed, np.random.seed(seed) then randint(low, high) calls and their values.
  depths: list(np.round(np.linspace(0, 100, num=40, endpoint=True)).astype(int)) and other sizes.

Run with the CPython 3.11 and NumPy of the RULER test venv (scripts/setup.sh: /opt/ruler-venv):
    /opt/ruler-venv/bin/python tests/tools/python_random_goldens.py
"""
import json
import os
import random
import string
import sys
import uuid

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ruler", "python_random.json")


def python_script(seed, driver, n_ops):
    rng = random.Random(seed)
    ops = []
    for _ in range(n_ops):
        kind = driver.choice(["getrandbits", "randbelow", "randint", "randrange", "random", "choice",
                              "choices", "sample", "sample", "shuffle", "uuid4"])
        if kind == "getrandbits":
            k = driver.choice([0, 1, 5, 31, 32, 33, 53, 63, 64])
            ops.append({"op": kind, "k": k, "out": rng.getrandbits(k)})
        elif kind == "randbelow":
            n = driver.choice([1, 2, 3, 7, 40, 500, 1000, 2**31 + 5, 2**40 - 1, 2**63 + 11])
            ops.append({"op": kind, "n": n, "out": rng._randbelow(n)})
        elif kind == "randint":
            a, b = driver.choice([(1000000, 9999999), (0, 0), (-5, 5), (10000, 99999), (0, 2**33)])
            ops.append({"op": kind, "a": a, "b": b, "out": rng.randint(a, b)})
        elif kind == "randrange":
            a, b = driver.choice([(0, 1), (0, 10), (3, 17), (-100, 100)])
            ops.append({"op": kind, "a": a, "b": b, "out": rng.randrange(a, b)})
        elif kind == "random":
            x = rng.random()
            assert (x * 2**53).is_integer()
            ops.append({"op": kind, "out": int(x * 2**53)})
        elif kind == "choice":
            n = driver.choice([1, 2, 26, 1000, 123457])
            ops.append({"op": kind, "n": n, "out": rng.choice(range(n))})
        elif kind == "choices":
            alphabet = driver.choice([string.ascii_uppercase, string.ascii_lowercase])
            k = driver.choice([0, 1, 3, 5, 6])
            ops.append({"op": kind, "alphabet": alphabet, "k": k, "out": "".join(rng.choices(alphabet, k=k))})
        elif kind == "sample":
            # Both algorithms: the pool (n small against k's set) and the set (n large).
            n = driver.choice([1, 4, 21, 22, 40, 45, 100, 500, 5000, 100000])
            k = min(n, driver.choice([0, 1, 2, 4, 5, 6, 10, 16, 21, 22, 40]))
            ops.append({"op": kind, "n": n, "k": k, "out": rng.sample(range(n), k)})
        elif kind == "shuffle":
            n = driver.choice([0, 1, 2, 10, 37, 300])
            x = list(range(n))
            rng.shuffle(x)
            ops.append({"op": kind, "n": n, "out": x})
        else:
            ops.append({"op": kind, "out": str(uuid.UUID(int=rng.getrandbits(128), version=4))})
    return {"seed": seed, "ops": ops, "next32": rng.getrandbits(32)}


def numpy_script(seed, driver, n_ops):
    np.random.seed(seed)
    calls = []
    for _ in range(n_ops):
        low, high = driver.choice([(10000, 99999), (0, 1), (0, 2), (5, 6), (-3, 1000), (0, 2**32), (0, 2**31 + 1)])
        calls.append({"low": low, "high": high, "out": int(np.random.randint(low, high))})
    return {"seed": seed, "calls": calls}


def main():
    driver = random.Random(20261128)
    python = [python_script(s, driver, 400) for s in [0, 1, 42, 1234, 2**32 - 1, 2**32, 2**40 + 3, 2**64 - 1]]
    numpy = [numpy_script(s, driver, 300) for s in [0, 1, 42, 1234, 2**32 - 1]]
    depths = {str(n): [int(x) for x in np.round(np.linspace(0, 100, num=n, endpoint=True)).astype(int)]
              for n in [2, 11, 21, 40, 41, 99]}
    out = {"python": sys.version.split()[0], "numpy_version": np.__version__,
           "python_scripts": python, "numpy_scripts": numpy, "depths": depths}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
