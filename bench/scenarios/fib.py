"""fib (spiffs seed): 1,000,000 writes of 4 bytes to one file on nor-w25q128,
then close. Write amplification = bytes programmed / 4,000,000."""
from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "fib"
TITLE = "1,000,000 writes of 4 bytes to one file (nor-w25q128)"
MODEL = "nor-w25q128"
BPL = 16
WRITES = 1_000_000
SIZE = 4


def run() -> dict:
    t0 = time.perf_counter()
    with cairn.Sim(MODEL, blocks_per_lblock=BPL, seed=1) as sim:
        cairn.format(sim)
        fs = cairn.mount(sim)
        f = fs.open("/fib", "w")
        sim.reset_counters()
        # Tight loop straight into the C API with one preallocated buffer:
        # File.write would add a cffi buffer per call.
        ctx, fd = fs._ctx, f._fd
        buf = ffi.new("uint8_t[]", b"\x01\x01\x02\x03")
        write = lib.cairn_write
        bad = 0
        for _ in range(WRITES):
            if write(ctx, fd, buf, SIZE) != SIZE:
                bad += 1
        if bad:
            raise RuntimeError(f"fib: {bad} short or failed writes")
        f.close()
        c = sim.counters()
        size = fs.stat("/fib").size
        fs.unmount()
    total = WRITES * SIZE
    if size != total:
        raise RuntimeError(f"fib: file size {size} != {total}")
    wa = c.prog_bytes / total
    figs = {
        "write amplification (bytes programmed / 4,000,000)": figure(
            round(wa, 4), "x", seed="\"would wear the flash extremely\" (no write cache)",
            target="<= 1.05", met=wa <= 1.05),
        "bytes programmed": figure(c.prog_bytes, "B"),
        "page programs": figure(c.prog_pages),
        "erases": figure(c.erases),
        "device reads": figure(c.read_calls),
        "modelled time": figure(round(c.time_ns / 1e9, 3), "s"),
        "modelled time per write": figure(round(c.time_ns / WRITES / 1e3, 3), "us"),
    }
    return result(ID, TITLE, figs,
                  params={"model": MODEL, "volume": "16 MiB (full device)",
                          "blocks_per_lblock": BPL, "writes": WRITES, "write size": SIZE,
                          "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=["Counters cover the writes and the close (format, mount and "
                         "open excluded).", common.TIME_NOTE],
                  raw=c.as_dict())


if __name__ == "__main__":
    common.main(sys.modules[__name__])
