"""latency-aged: 256 B appends (a file sync every 4 KiB) on aged NOR with 4 KiB
erase blocks (nor-w25q128) and 64 KiB erase blocks (nor-m25p16), on a volume
used before: files written and deleted until about half of it is live and the
space the format left erased is used up. Run (a) writes without pause; run
(b) writes in bursts of 4 KiB with idle-time garbage collection between them
(cairn_gc; littlefs's lfs_fs_gc). Per-call latency and erases, both FS, aged
and fresh device."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _burst, _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "latency-aged"
TITLE = "256 B write latency on aged NOR, 4 KiB and 64 KiB erase blocks, with and without idle GC"
# (label, model, block_count, bytes appended in a run)
VOLUMES = [
    ("4 KiB erase blocks", "nor-w25q128", 1024, 512 << 10),   # 4 MiB of the 16 MiB chip
    ("64 KiB erase blocks", "nor-m25p16", 32, 256 << 10),     # the whole 2 MiB chip
]
W = 256                  # bytes per write call
BURST = 16               # writes per burst (4 KiB); a file sync ends each burst
FILE = 100 * 1024        # size of the files of the history before the run
LIVE = 0.5               # of the volume: the history keeps this much live
HISTORY = 1.5            # the history writes this many volumes of files in all
GC_BUDGET = 16           # cairn_gc's budget per call: pages moved (its default step)
IDLE_CALLS = 1000        # at most this many cairn_gc calls per idle period (each is bounded)
NEW = "/new"
SMALLEST = common.smallest_cairn_config(max_open=1)


def history(volume: int) -> list[tuple[str, object]]:
    """The volume's past: files of FILE bytes written one after another; once
    more than LIVE of the volume would be live, a random live file is deleted
    first; HISTORY volumes written in all. [("w", (path, data)) | ("rm", path)]."""
    rng = random.Random(volume)
    keep = int(volume * LIVE) // FILE
    steps, live = [], []
    for i in range(int(volume * HISTORY) // FILE):
        if len(live) >= keep:
            steps.append(("rm", live.pop(rng.randrange(len(live)))))
        p = f"/h{i:04d}"
        steps.append(("w", (p, rng.randbytes(FILE))))
        live.append(p)
    return steps


def live_bytes(steps) -> int:
    """File data live after the history."""
    return FILE * (sum(1 for op, _ in steps if op == "w") - sum(1 for op, _ in steps if op == "rm"))


def pattern() -> list[bytes]:
    """The run's data: a 4 KiB random block in 256 B pieces, written in turn."""
    d = random.Random(3).randbytes(BURST * W)
    return [d[i:i + W] for i in range(0, len(d), W)]


def expected(nbytes: int) -> bytes:
    return b"".join(pattern()) * (nbytes // (BURST * W))


def drive(sim, write, sync, idle, nbytes: int) -> dict:
    """nbytes in W-byte write calls, a sync after every BURST of them; with
    idle (not None) idle() runs before the first burst and after each burst's sync, outside the calls'
    latencies. Returns the calls' latencies and erases and the idle totals."""
    log = _burst.CallLog(sim)
    probe = log.probe
    tot = dict(idle_ns=0, idle_erases=0, idle_calls=0, moved=0, capped=0, periods=0)

    def idle_period():
        t0, e0, _ = probe.snap()
        n, m, cap = idle()
        t1, e1, _ = probe.snap()
        for k, v in (("idle_ns", t1 - t0), ("idle_erases", e1 - e0), ("idle_calls", n),
                     ("moved", m), ("capped", cap), ("periods", 1)):
            tot[k] += v
    before = sim.counters()
    if idle is not None:
        idle_period()  # the device was idle after the history too
    for i in range(nbytes // W):
        log.call(write, i % BURST)
        if i % BURST == BURST - 1:
            log.call(sync)
            if idle is not None:
                idle_period()
    c = (sim.counters() - before).as_dict()
    return dict(log.as_dict(), counters=c, time_ns=c["time_ns"], **tot)


def run_cairn(vol, steps, idle: bool, aged: bool = True, bpl: int = 0, **config) -> dict:
    """cairn: format + mount (counted apart), the history, then the counted run."""
    _, model, blocks, nbytes = vol
    with common.new_sim(model, aged, block_count=blocks, blocks_per_lblock=bpl,
                        seed=1) as sim:
        fs, fmt_c = common.format_mount_cairn(sim, **config)
        for op, arg in steps:
            if op == "rm":
                fs.remove(arg)
            elif fs.write_file(*arg) != FILE:
                raise RuntimeError(f"cairn: short write of {arg[0]}")
        fs.sync()
        f = fs.open(NEW, "w")
        ctx, fd = fs._ctx, f._fd
        bufs = [ffi.from_buffer(b) for b in pattern()]

        def write(k):
            _burst.cairn_ok(lib.cairn_write(ctx, fd, bufs[k], W), "write", W, NEW)

        def sync():
            _burst.cairn_ok(lib.cairn_file_sync(ctx, fd), "sync", 0, NEW)

        def gc():
            """cairn_gc until it says nothing is worth collecting, at most IDLE_CALLS."""
            moved = 0
            for k in range(IDLE_CALLS):
                r = lib.cairn_gc(ctx, GC_BUDGET)
                if r < 0:
                    raise cairn.Error.from_code(r, op="gc")
                if r == 0:
                    return k + 1, moved, False
                moved += r
            return IDLE_CALLS, moved, True
        r = drive(sim, write, sync, gc if idle else None, nbytes)
        f.close()
        same = fs.read_file(NEW) == expected(nbytes)
        fs.unmount()
        ram = fs.ram_bytes
    if not same:
        raise RuntimeError(f"cairn: {NEW} read back differs")
    return dict(r, format=fmt_c, ram=ram)


def run_lfs(vol, steps, idle: bool, cfg: dict, aged: bool = True) -> dict:
    """littlefs: the same history and run; idle time calls lfs_fs_gc once."""
    L = _lfs.lfs_module()
    _, model, blocks, nbytes = vol
    with common.new_sim(model, aged, block_count=blocks, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg)
        lfs = fs.lfs
        for op, arg in steps:
            if op == "rm":
                L.remove(lfs, arg)
            elif not _lfs.write_file(lfs, *arg):
                raise RuntimeError(f"littlefs refused {arg[0]} of the history")
        fh = L.file_open(lfs, NEW, _lfs.O_W)
        data = pattern()

        def gc():
            L.fs_gc(lfs)
            return 1, 0, False
        try:
            r = drive(sim, lambda k: L.file_write(lfs, fh, data[k]),
                      lambda: L.file_sync(lfs, fh), gc if idle else None, nbytes)
        finally:
            L.file_close(lfs, fh)  # littlefs keeps open handles in a list: always close
        fh = L.file_open(lfs, NEW, _lfs.O_R)
        back = L.file_read(lfs, fh, nbytes + 1)
        L.file_close(lfs, fh)
    if back != expected(nbytes):
        raise RuntimeError(f"littlefs: {NEW} read back differs")
    return dict(r, format=fmt_c)


def smallest_bpl(model: str, blocks: int) -> tuple[int, list[str]]:
    sim, fs, bpl, _, refused = common.cairn_smallest_bpl(model, block_count=blocks, seed=1)
    fs.unmount()
    sim.close()
    return bpl, refused


def call_stats(r: dict | None) -> dict | None:
    """Latency statistics and erases of the write and sync calls of a run."""
    if r is None:
        return None
    er = r["erases"]
    return dict(_burst.lat_stats(r["lat_ns"]), max_erases=max(er), erasing=sum(1 for e in er if e),
                erases=sum(er) / len(er), calls=len(er))


def erase_text(st: dict | None) -> str | None:
    if st is None:
        return None
    return f"{st['max_erases']} (in {st['erasing']:,} of {st['calls']:,} calls)"


def idle_text(r: dict | None, what: str) -> str | None:
    """The idle-time work of a run (b)."""
    if r is None:
        return None
    t = (f"{r['idle_ns'] / 1e9:,.3f} s in {r['periods']} idle periods "
         f"({r['idle_ns'] / max(r['periods'], 1) / 1e6:,.1f} ms each on average), "
         f"{r['idle_calls']:,} {what} calls, {r['idle_erases']:,} erases")
    if what == "cairn_gc":
        t += f", {r['moved']:,} pages moved, {r['capped']} periods cut at {IDLE_CALLS} calls"
    return t


def pair(c, lf) -> str | None:
    """The fresh column: "cairn X / littlefs Y"."""
    if c is None:
        return None
    return c + ("" if lf is None else f" / littlefs {lf}")


def volume_runs(vol, notes: list) -> dict:
    """Every run of one volume: cairn and littlefs, (a) and (b), aged and fresh,
    and cairn (a) at its smallest config."""
    label, model, blocks, _ = vol
    steps = history(blocks * cairn.Sim.model_info(model).geometry.block_size)
    bpl, refused = smallest_bpl(model, blocks)
    r = {"bpl": bpl, "refused": refused, "live": live_bytes(steps)}
    for run, idle in (("a", False), ("b", True)):
        r[run] = run_cairn(vol, steps, idle, bpl=bpl)
        r[run + " fresh"] = run_cairn(vol, steps, idle, aged=False, bpl=bpl)
    r["a smallest"] = run_cairn(vol, steps, False, bpl=bpl, **SMALLEST)
    r["lfs cfg"] = None
    if _lfs.available():
        # littlefs's best configuration: the fastest on run (a), aged
        la, cfg, tried = _lfs.best(lambda c: run_lfs(vol, steps, False, c), 256)
        notes.append(f"{label}: " + common.lfs_note(cfg, tried, "time_ns", "ms (run (a))", 1e-6))
        if cfg is not None:
            r["lfs cfg"] = cfg
            r["lfs a"] = la
            r["lfs b"] = run_lfs(vol, steps, True, cfg)
            r["lfs a fresh"] = run_lfs(vol, steps, False, cfg, aged=False)
            r["lfs b fresh"] = run_lfs(vol, steps, True, cfg, aged=False)
    return r


def volume_figs(vol, r: dict, figs: dict) -> None:
    label, model, blocks, nbytes = vol
    geo = cairn.Sim.model_info(model).geometry
    p = f"{label} ({model}, {blocks * geo.block_size >> 20} MiB): "
    g = r.get
    k, v = common.format_figure(p, r["a"]["format"], None if g("lfs a") is None else
                                g("lfs a")["format"], r["a fresh"]["format"],
                                None if g("lfs a fresh") is None else g("lfs a fresh")["format"])
    figs[k] = v
    vol_bytes = blocks * geo.block_size
    figs[p + "live file data before the run (after the history; the same on both)"] = figure(
        round(r["live"] / vol_bytes * 100, 1), "% of the volume",
        note=f"{HISTORY * vol_bytes / 2**20:.0f} MiB of files written and "
        f"{(HISTORY * vol_bytes - r['live']) / 2**20:.1f} MiB deleted before")
    cost = cairn.Sim.model_info(model).cost
    page_ms = (cost.prog_setup_ns + W * 1e9 / cost.prog_bytes_per_s + cost.prog_page_ns) / 1e6
    for run, what in (("a", "(a) no idle calls"), ("b", "(b) idle GC between bursts")):
        st, fr = call_stats(r[run]), call_stats(r[run + " fresh"])
        ls, lfr = call_stats(g("lfs " + run)), call_stats(g(f"lfs {run} fresh"))
        q = p + what + ": "
        figs[q + "latency per call median / p99 / max"] = figure(
            _burst.lat_text(st), "", raw=f"{page_ms:.3f} ms (one page program)",
            lfs=_burst.lat_text(ls), fresh=pair(_burst.lat_text(fr), _burst.lat_text(lfr)))
        mm = _burst.max_median(st)
        figs[q + "max / median latency"] = figure(
            round(mm, 1), "x", lfs=_burst.max_median_text(ls),
            fresh=pair(_burst.max_median_text(fr), _burst.max_median_text(lfr)),
            target="<= 5" if run == "b" else None, met=(mm <= 5) if run == "b" else None)
        target, met = ("<= 1", st["max_erases"] <= 1) if run == "a" else \
            ("0", st["max_erases"] == 0)
        figs[q + "most erase blocks erased in one call"] = figure(
            erase_text(st), "", lfs=erase_text(ls), fresh=pair(erase_text(fr), erase_text(lfr)),
            target=target, met=met)
        figs[q + "erases per call (mean)"] = figure(
            round(st["erases"], 4), "", lfs=None if ls is None else round(ls["erases"], 4),
            fresh=pair(f"{fr['erases']:.4f}", None if lfr is None else f"{lfr['erases']:.4f}"))
        if run == "b":
            figs[q + "idle time (modelled, not in the latencies)"] = figure(
                idle_text(r["b"], "cairn_gc"), "", lfs=idle_text(g("lfs b"), "lfs_fs_gc"),
                fresh=pair(idle_text(r["b fresh"], "cairn_gc"),
                           idle_text(g("lfs b fresh"), "lfs_fs_gc")))
        elif g("lfs a") is not None:
            k, v = common.beats_figure(r["a"]["counters"], g("lfs a")["counters"], q)
            v["fresh"] = "yes" if common.beats_figure(
                r["a fresh"]["counters"], g("lfs a fresh")["counters"])[1]["value"] else "no"
            figs[k] = v
    lcfg = g("lfs cfg")
    k, v = common.ram_figure(p, r["a"]["ram"], lcfg, 1, r["a smallest"]["ram"])
    figs[k] = v
    k, v = common.matched_figure(p, r["a smallest"]["counters"], r["a smallest"]["ram"],
                                 v["ram"]["lfs"], None if g("lfs a") is None else
                                 g("lfs a")["counters"], "run (a)")
    figs[k] = v


def run() -> dict:
    t0 = time.perf_counter()
    figs, notes, raw = {}, [], {}
    for vol in VOLUMES:
        r = volume_runs(vol, notes)
        raw[vol[0]] = r
        volume_figs(vol, r, figs)
        label, model, blocks, nbytes = vol
        same = [fs for fs, key in (("cairn", ""), ("littlefs", "lfs ")) if key + "a" in r
                and all(r[f"{key}{x}"]["lat_ns"] == r[f"{key}{x} fresh"]["lat_ns"]
                        for x in "ab")]
        why = {"cairn": "cairn's history before the run had used up the segments its "
               "format left erased", "littlefs": "littlefs erases each block before it "
               "programs it, fresh or not"}
        if same:
            notes.append(f"{label}: the fresh device gave the same per-call latencies as the "
                         f"aged one, call for call ({' and '.join(same)}): "
                         + "; ".join(why[fs] for fs in same) + ".")
        notes.append(
            f"{label}: {model}, block_count={blocks}; cairn with blocks_per_lblock={r['bpl']} "
            "(the smallest it accepts" + (": " + "; ".join(r["refused"]) if r["refused"] else "")
            + f"); the run appends {nbytes >> 10} KiB.")
    notes += [
        f"History before each run (the volume was used before): files of {FILE // 1024} KiB "
        f"(random bytes) written one after another; when {LIVE:.0%} of the volume is live, a "
        f"random live file is deleted before each new one (random.Random); {HISTORY} volumes "
        "written in all, so the space the format left erased is used up and deleted data lies "
        "about for GC. The same steps on both file systems. The 64 KiB volume is the whole "
        "2 MiB chip: on a 1 MiB slice (16 blocks) cairn holds about 44% as file data "
        "(docs/DESIGN.md), too little for half of it live plus the run.",
        f"Run: a new file, {W} B appends; after every {BURST} (4 KiB) a file sync. A call = one "
        "write or one sync, each with its own latency (modelled device time spent in it). "
        f"(a): no other calls. (b): before the first burst and after each burst's sync, idle "
        f"time: cairn calls "
        f"cairn_gc(fs, {GC_BUDGET}) until it returns 0 (nothing worth collecting), at most "
        f"{IDLE_CALLS} calls per idle period (include/cairn.h: it moves at most `budget` "
        "pages a call); littlefs calls lfs_fs_gc once (littlefs-python 0.19.0 exposes it; "
        "it compacts metadata and scans for free blocks: littlefs erases a block when it "
        "programs it). Idle time is reported apart and is not in any latency. The file is "
        "read back and compared after each run.",
        "Erases are counted in physical erase blocks of the device (a cairn segment of "
        "blocks_per_lblock blocks is that many erases). Targets (follow-up issue): a write "
        "call erases at most one erase block (run (a)); \"with idle cairn_gc between bursts "
        "no write call erases at all while the burst fits in pre-erased space\" (measured: "
        "no call of run (b) erases); with idle GC the worst call is at most 5x the median "
        "(run (b)).",
        "cairn_gc frees segments but does not erase them ahead: a free segment is erased "
        "when it is handed out (cn_seg_alloc, src/seg.c), so in run (b) a write call whose "
        "data head needs a new segment still erases it; the erases inside the idle periods "
        "are GC's own (its moves go to a segment of their own).",
        f"The smallest-RAM rows run (a) again with cairn config {SMALLEST}, aged.",
        common.RAM_TEXT, common.AGING_TEXT, common.FRESH_TEXT, common.TIME_NOTE]
    return result(ID, TITLE, figs, params={
        "write": f"{W} B", "sync": f"every {BURST} writes", "history": f"{HISTORY} volumes, "
        f"{LIVE:.0%} live", "wall seconds": round(time.perf_counter() - t0, 2)},
        notes=notes, raw=raw)


def plot(res, out) -> list:
    panels = []
    for label, model, _, _ in VOLUMES:
        r = res["raw"][label]
        for run, what in (("a", "(a) no idle calls"), ("b", "(b) idle GC between bursts")):
            lines = []
            if r.get("lfs " + run):
                lines += [("littlefs, aged", r["lfs " + run]["lat_ns"], (_burst.LFS, False)),
                          ("littlefs, fresh", r[f"lfs {run} fresh"]["lat_ns"], (_burst.LFS, True))]
            lines += [("cairn, aged", r[run]["lat_ns"], (_burst.CAIRN, False)),    # on top
                      ("cairn, fresh", r[run + " fresh"]["lat_ns"], (_burst.CAIRN, True))]
            panels.append((f"{label} ({model}), {what}", lines))
    fn = f"{ID}.png"
    _burst.plot_latency(panels, f"{ID}: 256 B writes + a sync every 4 KiB",
                        "call number (16 writes, then a sync)", out / fn)
    return [("latency over time, aged vs fresh, both FS", fn)]


if __name__ == "__main__":
    common.main(sys.modules[__name__])
