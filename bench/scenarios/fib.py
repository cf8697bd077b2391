"""fib (spiffs seed): 1,000,000 writes of 4 bytes to one file on nor-w25q128,
then close. Write amplification = bytes programmed / 4,000,000."""
from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import common  # noqa: E402
from bench.scenarios import _lfs  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "fib"
TITLE = "1,000,000 writes of 4 bytes to one file (nor-w25q128)"
MODEL = "nor-w25q128"
BPL = 16
WRITES = 1_000_000
SIZE = 4


def run_lfs(cfg) -> dict:
    L = _lfs.lfs_module()
    with cairn.Sim(MODEL, seed=1) as sim:
        fs = _lfs.LfsFS(sim, **cfg)
        sim.reset_counters()
        lfs = fs.lfs
        fh = L.file_open(lfs, "/fib", _lfs.O_W)
        w, b = L.file_write, b"\x01\x01\x02\x03"
        for _ in range(WRITES):
            w(lfs, fh, b)
        L.file_close(lfs, fh)
        c = sim.counters()
        if L.stat(lfs, "/fib").size != WRITES * SIZE:
            raise RuntimeError("littlefs fib: wrong size")
    return c.as_dict()


def run() -> dict:
    t0 = time.perf_counter()
    lb, lcfg, ltried = (None, None, {})
    if _lfs.available():
        lb, lcfg, ltried = _lfs.best(run_lfs, 256)
    with cairn.Sim(MODEL, blocks_per_lblock=BPL, seed=1) as sim:
        cairn.format(sim)
        fs = cairn.mount(sim)
        ram = fs.ram_bytes
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
    raw_s = common.raw_prog_seconds(MODEL, total)

    def lf(key):
        return None if lb is None else lb[key]
    ops = c.prog_calls + c.read_calls + c.erases
    lops = None if lb is None else lb["prog_calls"] + lb["read_calls"] + lb["erases"]
    figs = {
        "write amplification (bytes programmed / 4,000,000)": figure(
            round(wa, 4), "x", seed="\"would wear the flash extremely\" (no write cache)",
            target="<= 1.05", met=wa <= 1.05, raw="1.0 x",
            lfs=None if lb is None else f"{lb['prog_bytes'] / total:.4f} x"),
        "bytes programmed": figure(c.prog_bytes, "B", raw=f"{total:,} B", lfs=lf("prog_bytes")),
        "page programs": figure(c.prog_pages, raw=f"{total // 256:,}", lfs=lf("prog_pages")),
        "erases": figure(c.erases, raw="0 (erased device)", lfs=lf("erases")),
        "device reads": figure(c.read_calls, raw="0", lfs=lf("read_calls")),
        "device operations (read + program calls + erases)": figure(
            ops, raw=f"{total // 4096:,} (one program per erase block)", lfs=lops),
        "modelled time": figure(round(c.time_ns / 1e9, 3), "s", raw=f"{raw_s:.3f} s",
                                lfs=None if lb is None else f"{lb['time_ns'] / 1e9:.3f} s"),
        "modelled time per write": figure(
            round(c.time_ns / WRITES / 1e3, 3), "us", raw=f"{raw_s / WRITES * 1e6:.3f} us",
            lfs=None if lb is None else f"{lb['time_ns'] / WRITES / 1e3:.3f} us"),
    }
    if lb is not None:
        k, v = common.beats_figure(c, lb)
        figs[k] = v
    return result(ID, TITLE, figs,
                  params={"model": MODEL, "volume": "16 MiB (full device)",
                          "blocks_per_lblock": BPL, "writes": WRITES, "write size": SIZE,
                          "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=["Counters cover the writes and the close (format, mount and "
                         "open excluded).", common.TIME_NOTE,
                         f"RAM: cairn's mount uses {ram:,} B (context + buffers, default "
                         "config)" + ("" if lcfg is None else
                                      f"; littlefs about {_lfs.ram_estimate(lcfg):,} B"),
                         "Raw device limit: programming 4,000,000 B in whole erase blocks "
                         "on an erased device (cost table)."]
                  + ([common.lfs_note(lcfg, ltried, "time_ns", "s", 1e-9)] if ltried else
                     [f"littlefs not run: {_lfs.LFS_ERROR}"]),
                  raw={"cairn": c.as_dict(), "littlefs": ltried})


if __name__ == "__main__":
    common.main(sys.modules[__name__])
