"""video (TF card seed): on sd-tf (1 GiB card), two video streams at 12 and
8 Mbit/s written in frame-sized pieces at 25 fps, each file's index at its head
rewritten every 3 s, a new file every 60 s; a 2 MB log that wraps inside
itself, written in 16 KiB pieces at 11.5 kbit/s; when the card is full the
oldest video file is deleted; until 3x the card's capacity has been written."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _fat, _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "video"
TITLE = "two video streams + a wrapping log on an SD card until 3x its capacity (sd-tf)"
MODEL = "sd-tf"
FPS = 25
STREAMS = [("A", 12_000_000), ("B", 8_000_000)]     # bit/s
NEED = sum(b for _, b in STREAMS) / 8              # 2.5 MB/s
INDEX = 16 * 1024                                  # the index region at a file's head
INDEX_EVERY = 3 * FPS                              # ticks
FILE_EVERY = 60 * FPS
LOG_CAP = 2 * 1000 * 1000 // 512 * 512             # 2 MB, a multiple of the sector
LOG_PIECE = 16 * 1024
LOG_RATE = 11_500 / 8                              # B/s
CAPACITY_FACTOR = 3
LFS_SECONDS = 30                                   # littlefs: the first 30 s of video only
# cairn's smallest config: the log and one file per stream open at once
SMALLEST = common.smallest_cairn_config(max_open=len(STREAMS) + 1)
LFS_SWEEP_SECONDS = 10                             # its config sweep: the first 10 s
LFS_BLOCK = 64 * 1024                              # littlefs block on the card (sectors)
SEED = {"waf": 5.6, "frag": "1,399 fragments in a 179 MB file", "rate": "~2 MB/s"}


class Trace:
    """A struct cairn_dev that forwards to the Sim's device and records the
    reads (page, off, len) while `on` is set."""

    def __init__(self, sim):
        self.orig = sim.dev
        self.dev = ffi.new("struct cairn_dev *")
        self.dev[0] = self.orig[0]
        self.reads = []
        self.on = False
        orig = self.orig

        @ffi.callback("int(void *, uint32_t, uint32_t, void *, uint32_t)")
        def rd(ctx, page, off, buf, ln):
            if self.on:
                self.reads.append((page, off, ln))
            return orig.read(ctx, page, off, buf, ln)
        self._cb = rd
        self.dev.read = rd


def fragments(reads, page: int, node: int, au: int) -> tuple[int, int, int]:
    """(data runs, allocation units touched, units holding more than one run)
    of a sequential read: device reads merged when contiguous; reads of exactly
    one index node are left out."""
    runs, aus = [], set()
    for p, off, ln in reads:
        if ln == node:
            continue
        a = p * page + off
        if runs and runs[-1][1] == a:
            runs[-1][1] = a + ln
        else:
            runs.append([a, a + ln])
    starts: dict = {}
    for a, b in runs:
        for u in range(a // au, (b - 1) // au + 1):
            aus.add(u)
            starts[u] = starts.get(u, 0) + 1
    return len(runs), len(aus), sum(1 for v in starts.values() if v > 1)


def run_lfs(cfg, seconds: int = LFS_SECONDS) -> dict:
    """littlefs, the same workload for the first LFS_SECONDS of video (the
    log as a file overwritten in place: littlefs has no ring files)."""
    L = _lfs.lfs_module()
    frame = {n: b // 8 // FPS for n, b in STREAMS}
    blob = random.Random(9).randbytes(max(frame.values()) + 4096)
    idx = random.Random(10).randbytes(INDEX)
    logp = random.Random(11).randbytes(LOG_PIECE)
    with common.new_sim(MODEL, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg, lfs_block_size=LFS_BLOCK)
        lfs = fs.lfs
        log = L.file_open(lfs, "/log", _lfs.O_RW | 0x100)
        fh = {n: L.file_open(lfs, f"/v0{n}.mp4", _lfs.O_RW | 0x100) for n, _ in STREAMS}
        sim.reset_counters()
        host, log_acc, log_pos = 0, 0.0, 0
        for n in fh:
            L.file_write(lfs, fh[n], idx)
            host += INDEX
        for tick in range(1, seconds * FPS + 1):
            for n in fh:
                o = tick % 4096
                L.file_write(lfs, fh[n], blob[o:o + frame[n]])
                host += frame[n]
            log_acc += LOG_RATE / FPS
            if log_acc >= LOG_PIECE:
                log_acc -= LOG_PIECE
                L.file_seek(lfs, log, log_pos, 0)
                L.file_write(lfs, log, logp)
                L.file_sync(lfs, log)
                host += LOG_PIECE
                log_pos = (log_pos + LOG_PIECE) % (LOG_CAP - LOG_CAP % LOG_PIECE)
            if tick % INDEX_EVERY == 0:
                for n in fh:
                    end = L.file_tell(lfs, fh[n])
                    L.file_seek(lfs, fh[n], 0, 0)
                    L.file_write(lfs, fh[n], idx)
                    L.file_seek(lfs, fh[n], end, 0)
                    host += INDEX
        for f in list(fh.values()) + [log]:
            L.file_close(lfs, f)
        c = sim.counters().as_dict()
    c["host"] = host
    c["format"] = fmt_c
    return c


def run_fat() -> dict:
    """FAT (FatFS defaults through fatfs-ng) on the same card model, the same
    workload to 3x the capacity: the log is a 2 MB file overwritten in place,
    each file is synced after its index rewrite (every 3 s) and the log after
    each piece; the oldest video file is deleted when the next two minutes
    would not fit (FatFS's free count is not exposed: live bytes are tracked)."""
    mi = cairn.Sim.model_info(MODEL)
    cap = mi.geometry.total_bytes
    flash_page = mi.ftl.flash_page_bytes
    frame = {n: b // 8 // FPS for n, b in STREAMS}
    blob = random.Random(9).randbytes(max(frame.values()) + 4096)
    idx = random.Random(10).randbytes(INDEX)
    logp = random.Random(11).randbytes(LOG_PIECE)
    samples = []
    with common.new_sim(MODEL, seed=1) as sim:
        before = sim.counters()
        fs = _fat.FatFS(sim)  # FatFS's mkfs + mount
        fmt_c = (sim.counters() - before).as_dict()
        log = fs.open("/log.txt")
        sim.reset_counters()
        host, log_acc, log_pos, tick, nfile, deleted = 0, 0.0, 0, 0, 0, 0
        files, live, open_f = [], {}, {}

        def new_files():
            nonlocal nfile, host, deleted
            for name, bits in STREAMS:
                if name in open_f:
                    fs.close(open_f.pop(name)[0])
                while files and sum(live.values()) + 2 * (NEED * 60 + INDEX) > 0.95 * cap:
                    old = files.pop(0)
                    fs.remove(old)
                    live.pop(old)
                    deleted += 1
                path = f"/V{nfile:05d}{name}.MP4"
                nfile += 1
                fh = fs.open(path)
                open_f[name] = [fh, path, 0]
                files.append(path)
                host += fs.write(fh, idx)
                open_f[name][2] = INDEX
                live[path] = INDEX
        new_files()
        last = (0, 0, 0, 0)
        while host < CAPACITY_FACTOR * cap:
            for name, _ in STREAMS:
                fh, path, pos = open_f[name]
                o = tick % 4096
                host += fs.write(fh, blob[o:o + frame[name]])
                open_f[name][2] = pos + frame[name]
                live[path] = pos + frame[name]
            log_acc += LOG_RATE / FPS
            if log_acc >= LOG_PIECE:
                log_acc -= LOG_PIECE
                fs.seek(log, log_pos)
                host += fs.write(log, logp)
                fs.sync(log)
                log_pos = (log_pos + LOG_PIECE) % (LOG_CAP - LOG_CAP % LOG_PIECE)
            tick += 1
            if tick % INDEX_EVERY == 0:
                for name, _ in STREAMS:
                    fh, path, pos = open_f[name]
                    fs.seek(fh, 0)
                    host += fs.write(fh, idx)
                    fs.seek(fh, pos)
                    fs.sync(fh)
            if tick % FILE_EVERY == 0:
                new_files()
                c = sim.counters()
                d_prog = c.prog_bytes - last[1]
                samples.append({"host": host, "prog": c.prog_bytes, "ftl_pages": c.ftl_prog_pages,
                                "time_ns": c.time_ns,
                                "card_waf": (c.ftl_prog_pages - last[2]) * flash_page / d_prog
                                if d_prog else 0,
                                "rate": (host - last[0]) / ((c.time_ns - last[3]) / 1e9)})
                last = (host, c.prog_bytes, c.ftl_prog_pages, c.time_ns)
        for fh, _p, _pos in open_f.values():
            fs.close(fh)
        fs.close(log)
        c = sim.counters().as_dict()
    c["host"] = host
    c["samples"] = samples
    c["deleted"] = deleted
    c["errors"] = fs.disk.errors
    c["format"] = fmt_c
    return c


def run_cairn(data_heads: int, use_ring: bool, use_falloc: bool, frame: dict, bp, idx,
              mi, cap: int, au: int, flash_page: int, config: dict | None = None,
              seconds: int | None = None) -> dict:
    """The whole 3x-capacity run on cairn (or its first `seconds` of video);
    data_heads=1 turns per-writer heads off; config: more cairn config."""
    samples = []
    deleted = nospc = 0
    with common.new_sim(MODEL, seed=1) as sim:
        fs, fmt_c = common.format_mount_cairn(sim, data_heads=data_heads, **(config or {}))
        ram = fs.ram_bytes
        ctx = fs._ctx
        if use_ring:
            fs.ring_create("/log", LOG_CAP)
            logf = fs.open("/log", "a")
        else:
            logf = fs.open("/log", "w+")
        logbuf = ffi.from_buffer(random.Random(11).randbytes(LOG_PIECE))
        log_pos = 0
        log_acc = 0.0
        sim.reset_counters()
        host = 0
        files = []                 # (path, stream) oldest first
        open_fds = {}
        nfile = 0
        tick = 0

        def delete_oldest() -> bool:
            nonlocal deleted
            for i, (p, _) in enumerate(files):
                if p not in open_names():
                    fs.remove(p)
                    files.pop(i)
                    deleted += 1
                    return True
            return False

        def open_names():
            return {v[1] for v in open_fds.values()}

        def wr(fd, buf, n) -> int:
            nonlocal nospc
            while True:
                r = lib.cairn_write(ctx, fd, buf, n)
                if r == n:
                    return n
                if r == lib.CAIRN_ERR_NOSPC or 0 <= r < n:
                    nospc += 1
                    if r > 0:
                        buf, n = buf + r, n - r
                    if not delete_oldest():
                        raise cairn.Error.from_code(lib.CAIRN_ERR_NOSPC, op="write")
                    continue
                raise cairn.Error.from_code(r, op="write")

        def new_files():
            nonlocal nfile, host
            for name, bits in STREAMS:
                if name in open_fds:
                    fd, _ = open_fds.pop(name)
                    rc = lib.cairn_close(ctx, fd)
                    if rc < 0:
                        raise cairn.Error.from_code(rc, op="close")
                want = bits // 8 * 60 + INDEX
                # keep room for the next minute of both streams
                while fs.fs_stat().free_bytes < 2 * (NEED * 60 + INDEX) and delete_oldest():
                    pass
                p = f"/v{nfile:05d}{name}.mp4"
                nfile += 1
                fd = lib.cairn_open(ctx, p.encode(), lib.CAIRN_O_RDWR | lib.CAIRN_O_CREAT)
                if fd < 0:
                    raise cairn.Error.from_code(fd, op="open", path=p)
                if use_falloc:
                    rc = lib.cairn_fallocate(ctx, fd, want)
                    if rc < 0:
                        raise cairn.Error.from_code(rc, op="fallocate", path=p)
                open_fds[name] = (fd, p)
                files.append((p, name))
                host += wr(fd, idx, INDEX)

        new_files()
        last_sample = (0, 0, 0, 0)
        first = None
        while host < CAPACITY_FACTOR * cap and (seconds is None or tick < seconds * FPS):
            if tick == LFS_SECONDS * FPS:
                first = sim.counters().as_dict()
                first["host"] = host
            for name, _ in STREAMS:
                fd, _p = open_fds[name]
                host += wr(fd, bp + (tick % 4096), frame[name])
            log_acc += LOG_RATE / FPS
            if log_acc >= LOG_PIECE:
                log_acc -= LOG_PIECE
                if not use_ring:
                    logf.seek(log_pos)
                host += wr(logf._fd, logbuf, LOG_PIECE)
                log_pos = (log_pos + LOG_PIECE) % (LOG_CAP - LOG_CAP % LOG_PIECE)
            tick += 1
            if tick % INDEX_EVERY == 0:
                for name, _ in STREAMS:
                    fd, _p = open_fds[name]
                    end = lib.cairn_tell(ctx, fd)
                    lib.cairn_seek(ctx, fd, 0, lib.CAIRN_SEEK_SET)
                    host += wr(fd, idx, INDEX)
                    lib.cairn_seek(ctx, fd, end, lib.CAIRN_SEEK_SET)
            if tick % FILE_EVERY == 0:
                new_files()
                c = sim.counters()
                d_host = host - last_sample[0]
                d_prog = c.prog_bytes - last_sample[1]
                d_ftl = c.ftl_prog_pages - last_sample[2]
                samples.append({"t_s": tick / FPS, "host": host, "prog": c.prog_bytes,
                                "ftl_pages": c.ftl_prog_pages, "time_ns": c.time_ns,
                                "fs_waf": d_prog / d_host if d_host else 0,
                                "card_waf": d_ftl * flash_page / d_prog if d_prog else 0,
                                "rate": d_host / ((c.time_ns - last_sample[3]) / 1e9)})
                last_sample = (host, c.prog_bytes, c.ftl_prog_pages, c.time_ns)
        if first is None and tick == LFS_SECONDS * FPS:  # a run of LFS_SECONDS only
            first = sim.counters().as_dict()
            first["host"] = host
        for name, (fd, _p) in list(open_fds.items()):
            lib.cairn_close(ctx, fd)
        open_fds.clear()
        logf.close()
        c = sim.counters()
        fs.unmount()
        # Fragments: the last four complete video files read through a tracing device.
        tr = Trace(sim)
        fs2 = cairn.FS(tr.dev)
        fs2.mount()
        frag = []
        buf = ffi.new("uint8_t[]", 1 << 20)
        for p, name in files[-6:-2]:
            f = fs2.open(p, "r")
            size = f.size()
            tr.reads.clear()
            tr.on = True
            while lib.cairn_read(fs2._ctx, f._fd, buf, 1 << 20) > 0:
                pass
            tr.on = False
            f.close()
            n, aus, split = fragments(tr.reads, mi.geometry.page_size, 1024, au)
            frag.append({"file": p, "size": size, "fragments": n, "aus": aus, "split": split})
        fs2.unmount()
    return {"c": c, "host": host, "samples": samples, "frag": frag, "first": first,
            "deleted": deleted, "nospc": nospc, "tick": tick, "ram": ram, "format": fmt_c}


def run() -> dict:
    t0 = time.perf_counter()
    mi = cairn.Sim.model_info(MODEL)
    cap = mi.geometry.total_bytes
    au = mi.ftl.au_bytes
    flash_page = mi.ftl.flash_page_bytes
    use_ring = cairn.has_feature("ring")
    use_falloc = cairn.has_feature("fallocate")
    frame = {n: b // 8 // FPS for n, b in STREAMS}
    blob = random.Random(9).randbytes(max(frame.values()) + 4096)
    bp = ffi.from_buffer(blob)
    idx = ffi.from_buffer(random.Random(10).randbytes(INDEX))
    r = run_cairn(0, use_ring, use_falloc, frame, bp, idx, mi, cap, au, flash_page)
    off = run_cairn(1, use_ring, use_falloc, frame, bp, idx, mi, cap, au, flash_page)
    c, host, samples, frag, first = r["c"], r["host"], r["samples"], r["frag"], r["first"]
    deleted, nospc, tick, ram = r["deleted"], r["nospc"], r["tick"], r["ram"]
    fat = run_fat() if _fat.available() else None
    lb = lcfg = None
    lnotes = []
    if _lfs.available():
        _, lcfg, tried = _lfs.best(lambda cf: run_lfs(cf, LFS_SWEEP_SECONDS),
                                   mi.geometry.page_size)
        lb = run_lfs(lcfg) if lcfg else None
        lnotes.append(common.lfs_note(lcfg, tried, "time_ns", f"ms for the first "
                                      f"{LFS_SWEEP_SECONDS} s (the sweep); the best config "
                                      f"then ran {LFS_SECONDS} s", 1e-6))

    def lwaf(d):
        return d["prog_bytes"] / d["host"], d["ftl_prog_pages"] * flash_page / d["prog_bytes"], \
            d["host"] / (d["time_ns"] / 1e9)
    prog = c.prog_bytes
    fs_waf = prog / host
    card_waf = c.ftl_prog_pages * flash_page / prog
    rate = host / (c.time_ns / 1e9)
    video_s = tick / FPS
    # Raw: host transfer + the card's program of each flash page + its erase of
    # each allocation unit's old data (the aged card holds data everywhere).
    raw_rate = 1 / (1 / mi.cost.prog_bytes_per_s + mi.cost.ftl_prog_ns / 1e9 / flash_page
                    + mi.cost.ftl_erase_ns / 1e9 / au)
    lw = lwaf(lb) if lb else None
    cw = lwaf(first) if first else None
    lt = f" (littlefs: first {LFS_SECONDS} s only)"
    figs = dict([common.format_figure("", r["format"], None if lb is None else lb["format"])])
    # littlefs holds the log and one file per stream open at once
    small = run_cairn(0, use_ring, use_falloc, frame, bp, idx, mi, cap, au, flash_page,
                      SMALLEST, LFS_SECONDS)
    k, v = common.ram_figure("", ram, lcfg, len(STREAMS) + 1, small["ram"])
    figs[k] = v
    if lb is not None:
        k, v = common.matched_figure("", small["first"], small["ram"], v["ram"]["lfs"], lb,
                                     f"first {LFS_SECONDS} s of video")
        figs[k] = v
    if fat is not None:
        figs["FAT (FatFS mkfs): format + mount (modelled time, card AU erases)"] = figure(
            f"{fat['format']['time_ns'] / 1e9:,.3f} s, {fat['format']['ftl_erases']:,} card "
            "AU erases", "")
    figs.update({
        "FS write amplification (bytes to the card / bytes the application wrote)": figure(
            round(fs_waf, 4), "x", target="<= 1.1", met=fs_waf <= 1.1, raw="1.0",
            lfs=None if lw is None else f"{lw[0]:.3f} x{lt}"),
        "card write amplification (flash programmed inside / bytes to the card)": figure(
            round(card_waf, 4), "x", target="<= 1.2", met=card_waf <= 1.2, raw="1.0",
            seed=f"{SEED['waf']} (FAT on the TF card, measured)",
            lfs=None if lw is None else f"{lw[1]:.3f} x{lt}"),
        "sustained rate (application bytes / modelled card time)": figure(
            round(rate / 1e6, 3), "MB/s", target=f"> {NEED / 1e6:.1f} MB/s (the streams)",
            met=rate > NEED, raw=f"{raw_rate / 1e6:.2f} MB/s (sequential, no merges)",
            seed=SEED["rate"] + " (after degradation; 5 MB/s formatted)",
            lfs=None if lw is None else f"{lw[2] / 1e6:.3f} MB/s{lt}"),
        "lowest per-minute rate": figure(
            round(min(s["rate"] for s in samples) / 1e6, 3) if samples else 0, "MB/s"),
    })
    worst = max((f["fragments"] - f["aus"] for f in frag), default=0)
    for f in frag:
        figs[f"fragments of {f['file']} ({f['size'] / 1e6:.0f} MB)"] = figure(
            f["fragments"], "", note=f"spans {f['aus']} allocation units, {f['split']} of them "
            "hold more than one run of the file",
            seed=SEED["frag"])
    figs["every video file in <= 1 fragment per allocation unit it spans"] = figure(
        worst <= 0, "", target="yes", met=worst <= 0,
        note=f"the worst file has {worst} more fragments than allocation units" if worst > 0
        else None)
    if fat is not None:
        fw = lwaf(fat)
        figs["FAT on the same card (FatFS defaults), whole run: FS WAF / card WAF / rate"] = \
            figure(f"(cairn) {fs_waf:.3f} / {card_waf:.3f} / {rate / 1e6:.2f} MB/s", "",
                   seed=f"FAT on the seed's TF card: WAF {SEED['waf']}, ~2 MB/s",
                   note=f"FAT: {fw[0]:.3f} / {fw[1]:.3f} / {fw[2] / 1e6:.3f} MB/s, "
                   f"{fat['ftl_merges']:,} card merges")
    oc = off["c"]
    figs["per-writer data heads off (data_heads=1): FS write amplification"] = figure(
        round(oc.prog_bytes / off["host"], 4), "x",
        note="the same run with every writer sharing one data head")
    figs["per-writer data heads off: card write amplification"] = figure(
        round(oc.ftl_prog_pages * flash_page / oc.prog_bytes, 4), "x")
    worst_off = max((f["fragments"] - f["aus"] for f in off["frag"]), default=0)
    figs["per-writer data heads off: most fragments beyond one per allocation unit"] = \
        figure(worst_off, "", note=f"heads on: {worst}")
    figs["card merges (forced by the write pattern)"] = figure(
        c.ftl_merges, "", raw="0", lfs=None if lb is None else f"{lb['ftl_merges']:,}{lt}")
    if lb is not None and cw is not None:
        figs[f"first {LFS_SECONDS} s of video, cairn: FS WAF / card WAF / rate"] = figure(
            f"{cw[0]:.3f} / {cw[1]:.3f} / {cw[2] / 1e6:.2f} MB/s", "",
            lfs=f"{lw[0]:.3f} / {lw[1]:.3f} / {lw[2] / 1e6:.2f} MB/s")
        k, v = common.beats_figure(first, lb, f"first {LFS_SECONDS} s of video: ")
        figs[k] = v
    figs["application bytes written"] = figure(round(host / 1e9, 3), "GB",
                                               note=f"{CAPACITY_FACTOR}x the card's "
                                               f"{cap / 1e9:.2f} GB")
    notes = [
        f"sd-tf card model: {cap / 2**30:.0f} GiB, 512 B sectors, {au >> 20} MiB allocation "
        f"units, {flash_page >> 10} KiB flash pages, {mi.ftl.open_aus} open units; cairn "
        f"default config (RAM {ram:,} B). The smallest-RAM row runs the first "
        f"{LFS_SECONDS} s again with cairn config {SMALLEST}.", common.RAM_TEXT,
        f"Streams: {frame['A']:,} B and {frame['B']:,} B frames at 25 fps "
        f"(12 and 8 Mbit/s); each file starts with a {INDEX >> 10} KiB index rewritten in "
        "place every 3 s; a new file per stream every 60 s of video; log: 16 KiB pieces at "
        f"11.5 kbit/s into a {LOG_CAP:,}-byte "
        + ("ring file (cairn_ring_create)." if use_ring else
           "file overwritten in place from its start when it reaches 2 MB (this build has "
           "no cairn_ring_create)."),
        "fallocate: " + ("each video file reserves its minute (cairn_fallocate) when "
                         "opened." if use_falloc else
                         "not used (this build has no cairn_fallocate)."),
        f"Before each new pair of files, the oldest video files are deleted until two "
        f"minutes of both streams fit; {deleted} files deleted in all; {nospc} writes met "
        "NOSPC and deleted more.",
        f"Video time simulated: {video_s:,.0f} s; the card's modelled busy time "
        f"{c.time_ns / 1e9:,.0f} s.",
        "Fragments: the last four complete video files are read with 1 MiB reads through a "
        "device wrapper that records every read; contiguous reads are merged, reads of one "
        "index node (1 KiB) left out.",
        ("FAT: " + _fat.version() + ", formatted with FatFS's defaults for the whole card "
         "(its own choice of FAT type and cluster size), same streams, index rewrites and "
         "log, until 3x the capacity; the log is a 2 MB file overwritten in place and synced "
         "after each piece, each video file synced after each index rewrite; "
         f"{fat['deleted']} old files deleted. The card model is a simple hybrid FTL (a "
         "write behind an open unit's write point, or to a unit not open, merges it), so "
         "FAT's in-place FAT-table and directory updates cost far more here than on the "
         "seed's real card (WAF 5.6)." if fat is not None else
         "FAT: not run (" + str(_fat.FAT_ERROR) + ")."),
        f"littlefs: the first {LFS_SECONDS} s of video only (the same streams, index "
        "rewrites and log; the log as a file overwritten in place), littlefs blocks of "
        f"{LFS_BLOCK >> 10} KiB of sectors, erase a no-op. A write at a littlefs file's head "
        "rewrites the file from there to its end (its block lists only append), so every "
        "3-s index rewrite copies the whole file so far: the cost grows with the file, and "
        f"the first {LFS_SECONDS} s understate a full minute. The full 3x-capacity run "
        "would program tens of GB through littlefs: hours here. cairn's figures for the "
        f"same first {LFS_SECONDS} s are in their own row. No FAT wrapper package was tried.",
        "Format row on the SD card: erases are the file system's erase (discard) calls; "
        "the card's own AU erases are counted apart (ftl_erases).",
        common.AGING_TEXT, common.TIME_NOTE] + lnotes
    return result(ID, TITLE, figs,
                  params={"model": MODEL, "card bytes": cap, "ring": use_ring,
                          "fallocate": use_falloc,
                          "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes, raw={"counters": c.as_dict(), "samples": samples,
                                    "fragments": frag, "first": first, "littlefs": lb,
                                    "fat": fat})


def plot(res, out) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s = res["raw"]["samples"]
    if not s:
        return []
    fig, ax = plt.subplots(figsize=(8, 4.2))
    xs = [x["host"] / 1e9 for x in s]
    ax.plot(xs, [x["card_waf"] for x in s], lw=1, label="card WAF (per minute of video)")
    ax.plot(xs, [x["fs_waf"] for x in s], lw=1, label="FS WAF (per minute)")
    cum = [x["ftl_pages"] * 16384 / x["prog"] for x in s]
    ax.plot(xs, cum, lw=1.5, ls="--", label="card WAF (cumulative)")
    fat = res["raw"].get("fat")
    if fat and fat.get("samples"):
        fs_ = fat["samples"]
        ax.plot([x["host"] / 1e9 for x in fs_], [x["card_waf"] for x in fs_], lw=1,
                color="purple", label="FAT (FatFS) on the same card model: card WAF")
    ax.axhline(5.6, color="red", ls=":", label="seed: FAT on the TF card, 5.6")
    ax.set_xlabel("application bytes written (GB)")
    ax.set_ylabel("write amplification")
    top = max([6] + [x["card_waf"] * 1.1 for x in s]
              + [x["card_waf"] * 1.1 for x in (fat or {}).get("samples", [])])
    ax.set_ylim(0.5, top)
    ax.set_yscale("log")
    ax.set_title("video: write amplification over time (sd-tf, 1 GiB)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "video-waf.png", dpi=90)
    plt.close(fig)
    return [("card write amplification over time", "video-waf.png")]


if __name__ == "__main__":
    common.main(sys.modules[__name__])
