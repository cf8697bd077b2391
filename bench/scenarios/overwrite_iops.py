"""overwrite-iops: a 4 MiB volume of nor-w25q128 (4 KiB erase sectors), aged,
filled to 80% (other files + the target file); then random 256 B-aligned
overwrites of 256 B, each followed by a file sync, in a 256 KiB and in a
1 MiB target file (two runs). Per-op modelled latency, IOPS, erases and bytes
programmed per op, cairn vs littlefs on the same aged device."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _burst, _lfs, common, fill_write  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "overwrite-iops"
TITLE = "random 256 B overwrites + sync at 80% full, 256 KiB and 1 MiB files (nor-w25q128)"
MODEL, BLOCKS = "nor-w25q128", 1024    # 4 MiB of the 16 MiB chip
LEVEL = 0.80                           # of the raw volume, the target file included
W = 256                                # overwrite size and alignment (one NOR page)
OTHER = 32 << 10                       # size of the other files of the fill
TARGET = "/target"
TARGETS = [("256 KiB file", 256 << 10), ("1 MiB file", 1 << 20)]
OPS = 10_000         # cairn's overwrites per target file
LFS_OPS = 100        # littlefs's (it copies the file's tail per op: ~20 ms of wall time each)
LFS_SWEEP_OPS = 20   # per configuration in littlefs's sweep
PER = 100            # the comparison rows scale both runs to this many overwrites
SMALLEST = common.smallest_cairn_config(max_open=1)


def fill_plan(fsize: int) -> list[tuple[str, bytes]]:
    """The other files (OTHER bytes each, the last one shorter), then the target:
    LEVEL of the volume in all."""
    rng = random.Random(21)
    left = int(BLOCKS * 4096 * LEVEL) - fsize
    files = []
    while left > 0:
        n = min(OTHER, left)
        files.append((f"/o{len(files):04d}", rng.randbytes(n)))
        left -= n
    return files + [(TARGET, rng.randbytes(fsize))]


def overwrite_plan(fsize: int, n: int) -> list[tuple[int, bytes]]:
    """n (offset, 256 B of data), offsets W-aligned, uniform over the file."""
    rng = random.Random(fsize)
    return [(rng.randrange(fsize // W) * W, rng.randbytes(W)) for _ in range(n)]


def smallest_bpl() -> tuple[int, list[str]]:
    """cairn's smallest blocks_per_lblock on this volume, and the refusals."""
    sim, fs, bpl, _, refused = common.cairn_smallest_bpl(MODEL, block_count=BLOCKS, seed=1)
    fs.unmount()
    sim.close()
    return bpl, refused


def apply(model: bytearray, plan) -> bytes:
    for off, data in plan:
        model[off:off + W] = data
    return bytes(model)


def run_cairn(fsize: int, plan, bpl: int, **config) -> dict:
    """Format + mount (counted apart), the fill, then the counted overwrites
    until the plan ends or one fails (the failure is a result: "failed"); the
    file is read back and compared with the model of the completed ones."""
    with common.new_sim(MODEL, block_count=BLOCKS, blocks_per_lblock=bpl, seed=1) as sim:
        fs, fmt_c = common.format_mount_cairn(sim, **config)
        files = fill_plan(fsize)
        write = fill_write.cairn_writer(fs)
        for p, data in files:
            if not write(p, data):
                raise RuntimeError(f"cairn refused {p} of the {LEVEL:.0%} fill (NOSPC)")
        free = fs.fs_stat().free_bytes
        f = fs.open(TARGET, "r+")
        ctx, fd = fs._ctx, f._fd
        bufs = [(off, ffi.from_buffer(d)) for off, d in plan]

        def overwrite(off, buf):
            _burst.cairn_ok(lib.cairn_seek(ctx, fd, off, lib.CAIRN_SEEK_SET), "seek", off)
            _burst.cairn_ok(lib.cairn_write(ctx, fd, buf, W), "write", W, TARGET)
            _burst.cairn_ok(lib.cairn_file_sync(ctx, fd), "sync", 0, TARGET)
        log = _burst.CallLog(sim)
        failed = None
        before = sim.counters()
        for i, (off, buf) in enumerate(bufs):
            try:
                log.call(overwrite, off, buf)
            except cairn.Error as e:
                failed = f"{e.name} from cairn_{e.op} at overwrite {i + 1:,} of {len(plan):,}"
                break
        c = (sim.counters() - before).as_dict()
        f.close()
        same = fs.read_file(TARGET) == apply(bytearray(files[-1][1]), plan[:len(log.lat_ns)])
        fs.unmount()
        ram = fs.ram_bytes
    if not same:
        raise RuntimeError(f"cairn: {TARGET} differs from the model after the overwrites")
    return dict(log.as_dict(), counters=c, format=fmt_c, ram=ram, free_after_fill=free,
                failed=failed)


def run_lfs(fsize: int, plan, cfg: dict) -> dict:
    """littlefs: the same fill and overwrites (file_seek, file_write, file_sync);
    raises at the first failing op, saying which."""
    L = _lfs.lfs_module()
    with common.new_sim(MODEL, block_count=BLOCKS, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg)
        lfs = fs.lfs
        files = fill_plan(fsize)
        for p, data in files:
            if not _lfs.write_file(lfs, p, data):
                raise RuntimeError(f"littlefs refused {p} of the {LEVEL:.0%} fill")
        used = L.fs_size(lfs)
        fh = L.file_open(lfs, TARGET, _lfs.O_RW)

        def overwrite(off, data):
            L.file_seek(lfs, fh, off, 0)
            L.file_write(lfs, fh, data)
            L.file_sync(lfs, fh)
        log = _burst.CallLog(sim)
        before = sim.counters()
        try:
            for i, (off, data) in enumerate(plan):
                log.call(overwrite, off, data)
        except Exception as e:  # noqa: BLE001  (NOSPC is littlefs's result here)
            raise RuntimeError(f"{e} at overwrite {i + 1} of {len(plan)} (offset {off:,}; "
                               f"{used} of {BLOCKS} blocks in use after the fill)") from None
        finally:
            try:
                L.file_close(lfs, fh)  # littlefs keeps open handles in a list: always close
            except Exception:  # noqa: BLE001  (the error above is the one reported)
                pass
        c = (sim.counters() - before).as_dict()
        fh = L.file_open(lfs, TARGET, _lfs.O_R)
        back = L.file_read(lfs, fh, fsize + 1)
        L.file_close(lfs, fh)
    if back != apply(bytearray(files[-1][1]), plan):
        raise RuntimeError(f"littlefs: {TARGET} differs from the model after the overwrites")
    return dict(log.as_dict(), counters=c, format=fmt_c, time_ns=c["time_ns"], used_blocks=used)


def lfs_runs(fsize: int, plan, notes: list, label: str) -> tuple[dict | None, dict | None, str]:
    """littlefs's sweep (LFS_SWEEP_OPS overwrites per configuration, by
    modelled time), then its best configuration on LFS_OPS overwrites. Returns
    (run, config, failure text for the report when no configuration ran)."""
    _, cfg, tried = _lfs.best(lambda c: run_lfs(fsize, plan[:LFS_SWEEP_OPS], c), 256)
    notes.append(label + common.lfs_note(
        cfg, tried, "time_ns", f"ms per overwrite (sweep over the first {LFS_SWEEP_OPS} "
        f"overwrites; the best config then ran {LFS_OPS})", 1e-6 / LFS_SWEEP_OPS))
    if cfg is None:  # the reasons are in the note just made
        errs = sorted({v.removeprefix("failed: RuntimeError: ").split(" (offset")[0]
                       for v in tried.values()})
        return None, None, ("could not run: " + "; ".join(errs)
                            + (", every configuration" if len(errs) == 1 else ""))
    return run_lfs(fsize, plan[:LFS_OPS], cfg), cfg, ""


def op_stats(r: dict) -> dict:
    """IOPS and per-op figures of a run."""
    n = len(r["lat_ns"])
    c = r["counters"]
    return dict(_burst.lat_stats(r["lat_ns"]), n=n, iops=n / (c["time_ns"] / 1e9),
                erases=c["erases"] / n, max_erases=max(r["erases"]),
                prog_bytes=c["prog_bytes"] / n, ops=common.ops(c) / n)


def file_figs(p: str, r: dict, small: dict, lr: dict | None, lfail: str, lcfg: dict | None,
              figs: dict) -> None:
    """The figures of one target file (p: its label)."""
    cost = cairn.Sim.model_info(MODEL).cost
    raw_Bps = common.raw_write_bytes_per_s(MODEL)          # aged: whole blocks, erased first
    page_ms = (cost.prog_setup_ns + W * 1e9 / cost.prog_bytes_per_s + cost.prog_page_ns) / 1e6
    st = op_stats(r)
    ls = None if lr is None else op_stats(lr)
    figs[p + "overwrites completed"] = figure(
        f"{st['n']:,} of {OPS:,}" + (f" ({r['failed']})" if r["failed"] else ""), "",
        lfs=None if ls is None else f"{ls['n']:,} of {LFS_OPS:,}", summary=True,
        note=None if small["failed"] is None else
        f"at cairn's smallest RAM: {small['failed']}")

    def lf(fn, first=False):
        """littlefs's figure; when it did not run, the reason (in full in the first row)."""
        if ls is None:
            return lfail if first else ("did not run" if lfail else None)
        return fn(ls)
    figs[p + "IOPS (overwrites per modelled second)"] = figure(
        round(st["iops"], 2), "IOPS", lfs=lf(lambda s: f"{s['iops']:.3f} IOPS", True),
        raw=f"{raw_Bps / W:,.0f} IOPS (a page program and 1/16 of an erase per op)")
    figs[p + "latency median / p99 / max"] = figure(
        _burst.lat_text(st), "", raw=f"{page_ms:.3f} ms (one page program)",
        lfs=lf(_burst.lat_text))
    figs[p + "erases per overwrite (mean; most in one)"] = figure(
        f"{st['erases']:.3f}; {st['max_erases']}", "", raw=f"{W / 4096:.4f}; 1",
        lfs=lf(lambda s: f"{s['erases']:.2f}; {s['max_erases']}"))
    # issue 11, "no erase storms": a write call erases at most one erase block;
    # an overwrite is two calls (cairn_write, cairn_file_sync)
    over = sum(1 for e in r["erases"] if e > 2)
    f = figs[p + "most erase blocks erased by one overwrite (a write and a file sync call)"] = \
        figure(st["max_erases"], "", target="<= 2 (one a call)", met=st["max_erases"] <= 2,
               raw="1", lfs=lf(lambda s: f"{s['max_erases']}"),
               note=f"{over:,} of {st['n']:,} overwrites erased more than 2")
    if st["max_erases"] > 2:
        f["why"] = (f"{over:,} of {st['n']:,} overwrites erased more than 2 blocks: with the "
                    "free segments at the reserve a call empties a whole victim (GC's hard "
                    "path, docs/DESIGN.md \"Space\"), and its moves, node writes and "
                    "checkpoint cross several erase blocks of the cold head, the metadata head "
                    "and the anchor, each erased when the first program reaches it")
    figs[p + "bytes programmed per overwrite"] = figure(
        round(st["prog_bytes"]), "B", raw=f"{W} B", lfs=lf(lambda s: f"{s['prog_bytes']:,.0f} B"))
    figs[p + "device operations per overwrite"] = figure(
        round(st["ops"], 2), "", lfs=lf(lambda s: f"{s['ops']:,.1f}"))
    cp = _burst.per_ops(r["counters"], st["n"], PER)
    if ls is not None:
        k, v = common.beats_figure(cp, _burst.per_ops(lr["counters"], ls["n"], PER),
                                   p + f"per {PER} overwrites (each FS's mean): ")
        figs[k] = v
    else:
        figs[p + "cairn beats littlefs on modelled time and device operations"] = figure(
            "littlefs did not run", "", lfs=lf(None), target="yes", met=None)
    lram = None if lcfg is None else _lfs.ram_bytes(lcfg, 1)
    k, v = common.matched_figure(
        p, _burst.per_ops(small["counters"], len(small["lat_ns"]), PER), small["ram"], lram,
        None if ls is None else _burst.per_ops(lr["counters"], ls["n"], PER),
        f"{PER} overwrites (mean)")
    if lfail:
        v["lfs"] = lf(None)
    figs[k] = v


def run() -> dict:
    t0 = time.perf_counter()
    bpl, refused = smallest_bpl()
    figs, notes, raw = {}, [], {}
    runs = []
    for label, fsize in TARGETS:
        plan = overwrite_plan(fsize, OPS)
        r = run_cairn(fsize, plan, bpl)
        small = run_cairn(fsize, plan, bpl, **SMALLEST)
        lr = lcfg = None
        lfail = ""
        if _lfs.available():
            lr, lcfg, lfail = lfs_runs(fsize, plan, notes, label + ": ")
        else:
            lfail = _lfs.LFS_ERROR
        runs.append((label, fsize, r, small, lr, lcfg, lfail))
        raw[label] = {"cairn": r, "cairn smallest RAM": small, "littlefs": lr,
                      "littlefs failure": lfail}
    # format + mount and RAM are the same for both runs: from the first file's
    # (littlefs: the first run with a best configuration)
    r0 = runs[0][2]
    lrun = next((x for x in runs if x[4] is not None), None)
    k, v = common.format_figure("", r0["format"], None if lrun is None else lrun[4]["format"])
    figs[k] = v
    lused = None if lrun is None else lrun[4]["used_blocks"]
    figs["fill: file data stored before the overwrites (both hold it)"] = figure(
        round(LEVEL * 100, 1), "% of 4 MiB", note=f"other files of {OTHER // 1024} KiB + "
        "the target file", lfs=None if lused is None else
        f"{LEVEL * 100:.1f}% ({lused} of {BLOCKS} blocks in use with the {lrun[0]})")
    k, v = common.ram_figure("", r0["ram"], None if lrun is None else lrun[5], 1,
                             runs[0][3]["ram"])
    figs[k] = v
    for label, _, r, small, lr, lcfg, lfail in runs:
        file_figs(label + ": ", r, small, lr, lfail, lcfg, figs)
    notes += [
        f"Volume: {MODEL}, block_count={BLOCKS} (4 MiB, 4 KiB erase sectors); cairn with "
        f"blocks_per_lblock={bpl}, the smallest it accepts here"
        + (f" ({'; '.join(refused)})" if refused else "") + ".",
        f"Fill: files of {OTHER // 1024} KiB (random bytes) and then the target file, "
        f"{LEVEL:.0%} of the 4 MiB volume in all, written whole; then the target file is "
        f"opened read+write and {OPS:,} overwrites (cairn) are made: a seek to a random "
        f"256 B-aligned offset (random.Random(file size)), a 256 B write and a file sync "
        "(durable on return). littlefs makes the first "
        f"{LFS_OPS} of the same overwrites (scaled down: littlefs copies the file from the "
        "overwritten block to its end at each sync, about 20 ms of wall time per op). "
        "Each file system's figures are over its own run, or over the overwrites completed "
        "when a call failed (the row \"overwrites completed\" says); the comparison rows "
        f"scale each run's counters to {PER} overwrites (its mean per overwrite x {PER}). "
        "The file is read back and compared with an in-memory model of the completed "
        "overwrites after the run, for both file systems.",
        "Latency of an overwrite = modelled device time of its seek + write + sync; IOPS = "
        "overwrites / modelled seconds of all of them. Open, close, fill, format and mount "
        "are outside the counters (format + mount is its own row). Aged device only (no "
        "fresh column).",
        "Raw device limit: each overwrite programs one 256 B page into erased flash and "
        "uses up 1/16 of a 4 KiB erase sector (aged device: erased before use).",
        f"The smallest-RAM rows run cairn's overwrites again with config {SMALLEST}.",
        common.RAM_TEXT, common.AGING_TEXT, common.TIME_NOTE]
    return result(ID, TITLE, figs, params={
        "model": MODEL, "volume": "4 MiB", "fill": f"{LEVEL:.0%}", "overwrite": f"{W} B + sync",
        "overwrites (cairn / littlefs)": f"{OPS:,} / {LFS_OPS}",
        "wall seconds": round(time.perf_counter() - t0, 2)}, notes=notes, raw=raw)


def plot(res, out) -> list:
    panels = []
    for label, _ in TARGETS:
        r = res["raw"][label]
        lines = [("cairn", r["cairn"]["lat_ns"], (_burst.CAIRN, False))]
        if r["littlefs"]:
            lines.append(("littlefs", r["littlefs"]["lat_ns"], (_burst.LFS, False)))
        panels.append((f"{label}, 80% full", lines))
    fn = f"{ID}.png"
    _burst.plot_latency(panels, f"{ID}: 256 B overwrite + sync on aged nor-w25q128 (4 MiB)",
                        "overwrite number", out / fn)
    return [("latency of each overwrite + sync, both FS", fn)]


if __name__ == "__main__":
    common.main(sys.modules[__name__])
