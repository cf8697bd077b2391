"""mount-scale (JFFS2 seed): nand-jffs2 filled with a source-tree-like file set
(about 18,000 files per copy) in copies, stopping at about 0, 228, 431 and
836 MB used; at each point: unmount + mount, power cut + mount, then append one
line to an existing file and sync."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "mount-scale"
TITLE = "mount time and RAM vs volume used, 0-836 MB (nand-jffs2, 1 GiB)"
MODEL = "nand-jffs2"
POINTS_MB = [0, 228, 431, 836]
SEED_S = {0: 3.48, 228: 1.10, 431: 3.60, 836: 16.74}
FILES = 18_000
MB = 1_000_000


def file_set(rng) -> list[tuple[str, int]]:
    """A kernel-tree-like set: 18,000 files in 600 directories; sizes mostly
    1-20 KiB (log-uniform), some smaller, 2% of 20-200 KiB, a few of 0.3-2 MiB."""
    out = []
    for i in range(FILES):
        x = rng.random()
        if x < 0.15:
            n = rng.randint(100, 1024)
        elif x < 0.97:
            n = int(1024 * 20 ** rng.random())
        elif x < 0.998:
            n = rng.randint(20 * 1024, 200 * 1024)
        else:
            n = rng.randint(300 * 1024, 2 * 1024 * 1024)
        out.append((f"d{i % 600:03d}/f{i:05d}.c", n))
    return out




SMALLEST = common.smallest_cairn_config(max_open=1)  # one file open at a time


def small_clean_mount(sim) -> dict:
    """A clean mount of the unmounted volume with cairn's smallest config
    (counted), then abandoned (it wrote nothing). Its counters and RAM."""
    small = cairn.FS(sim, **SMALLEST)
    sim.reset_counters()
    small.mount()
    c = sim.counters().as_dict()
    small.abandon()
    return dict(c, ram=small.ram_bytes)


def run() -> dict:
    t0 = time.perf_counter()
    rng = random.Random(21)
    fset = file_set(rng)
    set_bytes = sum(n for _, n in fset)
    n_big = sum(1 for _, n in fset if n > 1022)
    blob = random.Random(2).randbytes(2 * 1024 * 1024 + 4096)
    bufp = ffi.from_buffer(blob)
    points = []
    bpl_used = None
    for bpl in (1, 2, 4, 8, 16, 32):
        sim = common.new_sim(MODEL, blocks_per_lblock=bpl, seed=1)
        try:
            fs, fmt_c = common.format_mount_cairn(sim)
            bpl_used = bpl
            break
        except cairn.Error:
            sim.close()
    if bpl_used is None:
        raise RuntimeError("cairn refused nand-jffs2 with every blocks_per_lblock up to 32")
    with sim:
        ctx = fs._ctx
        stored = 0
        copy = 0
        idx = 0
        made_dirs = set()
        written_files = []
        for target in POINTS_MB:
            while stored < target * MB:
                name, n = fset[idx]
                d = f"/c{copy}/{name.split('/')[0]}"
                if f"/c{copy}" not in made_dirs:
                    fs.mkdir(f"/c{copy}")
                    made_dirs.add(f"/c{copy}")
                if d not in made_dirs:
                    fs.mkdir(d)
                    made_dirs.add(d)
                p = f"/c{copy}/{name}".encode()
                fd = lib.cairn_open(ctx, p, lib.CAIRN_O_WRONLY | lib.CAIRN_O_CREAT)
                if fd < 0:
                    raise cairn.Error.from_code(fd, op="open", path=p)
                off = (idx * 4099) % 4096
                r = lib.cairn_write(ctx, fd, bufp + off, n)
                if r != n:
                    raise cairn.Error.from_code(r if r < 0 else -1, op="write", path=p)
                rc = lib.cairn_close(ctx, fd)
                if rc < 0:
                    raise cairn.Error.from_code(rc, op="close", path=p)
                stored += n
                written_files.append(p)
                idx += 1
                if idx == len(fset):
                    idx = 0
                    copy += 1
            st = fs.fs_stat()
            # clean: unmount, then mount
            fs.unmount()
            sim.reset_counters()
            fs.mount()
            cm = sim.counters()
            ram = fs.ram_bytes
            fs.abandon()  # nothing written since the mount: the volume is as it was
            small = small_clean_mount(sim)
            fs.mount()
            # power cut: a file being written when the power goes
            f = fs.open("/victim", "w")
            f.write(blob[:300_000])
            sim.cut_after(3)
            try:
                f.write(blob[:300_000])
                f.sync()
            except cairn.Error:
                pass
            fs.abandon()
            sim.power_on()
            sim.reset_counters()
            fs.mount()
            pm = sim.counters()
            # first write after the mount: one line appended to an existing file
            target_file = written_files[len(written_files) // 2] if written_files else b"/victim"
            with fs.open(target_file.decode() if isinstance(target_file, bytes) else
                         target_file, "a") as f:
                f.write(b"one more line of the log\n")
                f.sync()
            fw = sim.counters()
            if fs.exists("/victim"):
                fs.remove("/victim")
            points.append({"target_mb": target, "stored_mb": stored / MB,
                           "used_mb": st.used_bytes / MB, "files": len(written_files),
                           "clean": cm.as_dict(), "cut": pm.as_dict(),
                           "first_write_ns": fw.time_ns, "first_write_reads": fw.read_calls,
                           "ram": ram, "small": small})
        fs.unmount()
    # littlefs: the empty volume only (see the notes)
    lfs_empty = lcfg = None
    if _lfs.available():
        def one(cfg):
            with common.new_sim(MODEL, seed=1) as s2:
                lf, lfmt = common.format_mount_lfs(s2, cfg)
                lf.unmount()
                s2.reset_counters()
                lf.fs.mount()
                return dict(s2.counters().as_dict(), format=lfmt)
        lfs_empty, lcfg, tried = _lfs.best(one, 2048)
    figs = dict([common.format_figure("", fmt_c, lfs_empty["format"] if lfs_empty else None)])
    for p in points:
        mb = p["target_mb"]
        lab = f"{mb} MB point ({p['stored_mb']:.0f} MB of files, {p['files']:,} files)"
        lfs_txt = None
        if mb == 0 and lfs_empty:
            lfs_txt = f"{lfs_empty['time_ns'] / 1e6:.2f} ms, {lfs_empty['read_calls']} reads"
        figs[lab + ": clean mount"] = figure(
            round(p["clean"]["time_ns"] / 1e6, 2), "ms",
            note=f"{p['clean']['read_calls']} reads, {p['clean']['read_bytes']:,} B",
            seed=f"{SEED_S[mb]} s (JFFS2)", raw="one page read: "
            f"{(25e3 + 2048 / 18.4e6 * 1e9) / 1e6:.3f} ms", lfs=lfs_txt,
            target="<= 50 ms" if mb == 836 else None,
            met=(p["clean"]["time_ns"] <= 50e6) if mb == 836 else None)
        figs[lab + ": mount after a power cut"] = figure(
            round(p["cut"]["time_ns"] / 1e6, 2), "ms",
            note=f"{p['cut']['read_calls']} reads, {p['cut']['read_bytes']:,} B",
            target="<= 50 ms" if mb == 836 else None,
            met=(p["cut"]["time_ns"] <= 50e6) if mb == 836 else None)
        figs[lab + ": first write after that mount (append a line + sync)"] = figure(
            round(p["first_write_ns"] / 1e6, 2), "ms",
            note=f"{p['first_write_reads']} reads")
        figs[lab + ": time to first write (mount after the cut + append + sync)"] = figure(
            round((p["cut"]["time_ns"] + p["first_write_ns"]) / 1e6, 2), "ms")
        k, v = common.ram_figure(lab + ": ", p["ram"], lcfg, 1, p["small"]["ram"])
        figs[k] = v
        k, v = common.matched_figure(lab + ": ", p["small"], p["small"]["ram"],
                                     v["ram"]["lfs"], lfs_empty if mb == 0 else None,
                                     "clean mount")
        figs[k] = v
    if lfs_empty:
        k, v = common.beats_figure(points[0]["clean"], lfs_empty, "empty volume, clean mount: ")
        figs[k] = v
    times = [p["clean"]["time_ns"] for p in points]
    ctimes = [p["cut"]["time_ns"] for p in points]
    r1 = max(times) / max(min(times), 1)
    r2 = max(ctimes) / max(min(ctimes), 1)
    figs["clean mount time, largest / smallest over the points"] = figure(
        round(r1, 2), "x", target="<= 1.5", met=r1 <= 1.5,
        seed=f"{max(SEED_S.values()) / min(SEED_S.values()):.1f} x (JFFS2)")
    figs["mount after a cut, largest / smallest over the points"] = figure(
        round(r2, 2), "x", target="<= 1.5", met=r2 <= 1.5)
    rams = [p["ram"] for p in points]
    figs["RAM, largest / smallest over the points"] = figure(
        round(max(rams) / min(rams), 3), "x", target="flat (1.0)",
        met=max(rams) == min(rams), seed="JFFS2: grows with the files (~40 B per node)")
    notes = [
        f"cairn on the whole 1 GiB nand-jffs2, blocks_per_lblock={bpl_used} (the smallest it "
        "accepts on this volume), default config.",
        f"File set: {FILES:,} files in 600 directories, {set_bytes / MB:.0f} MB per copy "
        "(random.Random(21): 15% of 100 B-1 KiB, 82% of 1-20 KiB log-uniform, 2% of "
        "20-200 KiB, 0.2% of 0.3-2 MiB); copies go to /c0, /c1, ...; filling stops at the "
        "first file that reaches each point, so the used-space points are kept. Every file "
        "written in one write call and closed.",
        "Power cut: a 300 KB file is written, then power is cut at the third program of the "
        "next 300 KB write; the mount is abandoned, power restored, and the volume mounted.",
        "Time to first write: modelled time to append one line to a file in the middle of "
        "the set and sync it, right after the mount after the cut.",
        "RAM in use: cairn's context + buffers (fixed at mount: cairn_mem_size).",
        "littlefs: only the empty volume's mount is measured. littlefs gives every file "
        "larger than its inline limit (at most 1,022 bytes in littlefs 2.9: the smaller of "
        "the cache size and attr_max) at least one whole 128 KiB erase block: one copy of "
        f"the file set has {n_big:,} such files, which need at least "
        f"{n_big * 131072 / 1e9:.2f} GB, so littlefs cannot hold even the 228 MB point on "
        "this 1 GiB device.",
        "The seed's figures are JFFS2 on real hardware (wall-clock).",
        "Raw device limit: one page read (a mount that reads a single page).",
        f"Smallest-RAM rows: a clean mount of the same volume with cairn config {SMALLEST} "
        "(right after the default clean mount, which wrote nothing).",
        common.RAM_TEXT, common.AGING_TEXT, common.TIME_NOTE]
    if lfs_empty:
        notes.append("littlefs empty mount: " + common.lfs_note(lcfg, tried, "time_ns", "ms",
                                                                  1e-6))
    return result(ID, TITLE, figs,
                  params={"model": MODEL, "blocks_per_lblock": bpl_used,
                          "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes, raw={"points": points, "littlefs_empty": lfs_empty})


def plot(res, out) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pts = res["raw"]["points"]
    xs = [p["stored_mb"] for p in pts]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(xs, [p["clean"]["time_ns"] / 1e6 for p in pts], "o-", label="cairn, clean mount")
    ax.plot(xs, [p["cut"]["time_ns"] / 1e6 for p in pts], "s-", label="cairn, after a power cut")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("volume used (MB of files)")
    ax.set_ylabel("modelled mount time (ms)")
    ax2 = ax.twinx()
    ax2.plot(list(SEED_S), [v * 1e3 for v in SEED_S.values()], "x--", color="red",
             label="seed: JFFS2 (ms, right axis)")
    ax2.set_ylabel("JFFS2 mount (ms)")
    ax.set_title("mount-scale: nand-jffs2, 1 GiB")
    ax.grid(True, alpha=0.3)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "mount-scale-time.png", dpi=90)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(xs, [p["ram"] for p in pts], "o-", label="cairn (context + buffers)")
    ax.set_ylim(0, max(p["ram"] for p in pts) * 1.3)
    ax.set_xlabel("volume used (MB of files)")
    ax.set_ylabel("RAM in use (bytes)")
    ax.set_title("mount-scale: RAM vs volume used")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "mount-scale-ram.png", dpi=90)
    plt.close(fig)
    return [("mount time vs volume used", "mount-scale-time.png"),
            ("RAM vs volume used", "mount-scale-ram.png")]


if __name__ == "__main__":
    common.main(sys.modules[__name__])
