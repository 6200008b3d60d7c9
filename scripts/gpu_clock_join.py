#!/usr/bin/env python3
"""Adds the GPU's clock and board power during each row's timed repeats to a bench JSON.

Measurement tooling for the GPU machine (never run by foxeval itself). The log is what
scripts/device_prefill_bench.sh samples beside the bench:
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
             --format=csv,noheader,nounits -lms 100
Each row's `timed_window_unix_s` (foxeval bench prefill) selects its samples; nvidia-smi prints
local time, which time.mktime reads in the same time zone as the bench's clock.
Why: at 64k the H100 runs these models at its 700 W software power cap, so seconds per document
follow the SM clock the cap leaves (results/bench/prefill-power-h100.json).
Usage: gpu_clock_join.py BENCH.json CLOCKS.csv
"""
import json
import os
import statistics
import sys
import time

POWER_CAP = 0x4  # clocks_event_reasons: software power cap


def read_samples(path):
    samples = []
    with open(path) as f:
        lines = f.readlines()
    for lineno, line in enumerate(lines, 1):
        try:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != 4:
                raise ValueError(f"expected 4 fields (timestamp, clocks.sm, power.draw, "
                                 f"clocks_event_reasons.active), got {len(parts)}")
            stamp, frac = parts[0].rsplit(".", 1)
            t = time.mktime(time.strptime(stamp, "%Y/%m/%d %H:%M:%S")) + float("0." + frac)
            samples.append((t, float(parts[1]), float(parts[2]), int(parts[3], 16)))
        except ValueError as e:
            if lineno == len(lines):
                continue  # the last line may be cut short when the logger is stopped
            sys.exit(f"{path}:{lineno}: not a clock sample ({e}): {line.strip()!r}")
    return samples


def summary(samples, t0, t1):
    s = [x for x in samples if t0 <= x[0] <= t1]
    if not s:
        return {"samples": 0}
    return {"samples": len(s),
            "sm_clock_mhz_median": statistics.median(x[1] for x in s),
            "sm_clock_mhz_min": min(x[1] for x in s),
            "power_w_median": round(statistics.median(x[2] for x in s), 1),
            "power_capped_fraction": round(sum(1 for x in s if x[3] & POWER_CAP) / len(s), 3)}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bench_path, log_path = sys.argv[1:]
    with open(bench_path) as f:
        doc = json.load(f)
    samples = read_samples(log_path)
    for row in doc["rows"]:
        if "timed_window_unix_s" not in row:
            sys.exit(f"{bench_path}: a row has no timed_window_unix_s (a foxeval from before it was recorded)")
        row["gpu_during_timed_repeats"] = summary(samples, *row["timed_window_unix_s"])
    doc["gpu_clock_log"] = ("nvidia-smi clocks.sm, power.draw and clocks_event_reasons.active every 100 ms during "
                            "the timed repeats (scripts/gpu_clock_join.py); power_capped_fraction: samples with "
                            "the software power cap active")
    tmp = bench_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, bench_path)


if __name__ == "__main__":
    main()
