"""wear: a long hot/cold run on an aged 1 MiB volume of nor-w25q128 (4 KiB
erase sectors): half the volume filled with cold files written once, then a
few small hot files rewritten whole, over and over, until about 24 volumes
have been written. The spread of the per-block erase counts, cairn vs
littlefs."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _burst, _lfs, common  # noqa: E402
from bench.scenarios.common import figure, result  # noqa: E402

ID = "wear"
TITLE = "erase-count spread after a long hot/cold run (nor-w25q128, 1 MiB)"
MODEL, BLOCKS = "nor-w25q128", 256    # 1 MiB of the 16 MiB chip, 256 erase sectors of 4 KiB
COLD_FILE = 16 << 10
COLD = 0.5                            # of the volume, written once
HOT_FILES, HOT_SIZE = 4, 8 << 10
VERSIONS = 8                          # contents a hot file is rewritten with, in turn at random
REWRITES = 3_000                      # hot-file rewrites (24 MiB, about 24 volumes)
SMALLEST = common.smallest_cairn_config(max_open=1)


def workload() -> tuple[list, list, list]:
    """(cold files [(path, data)], hot contents [data], rewrites [(hot file, content)])."""
    rng = random.Random(31)
    cold = [(f"/cold{i:03d}", rng.randbytes(COLD_FILE))
            for i in range(int(BLOCKS * 4096 * COLD) // COLD_FILE)]
    hot = [rng.randbytes(HOT_SIZE) for _ in range(VERSIONS)]
    seq = [(rng.randrange(HOT_FILES), rng.randrange(VERSIONS)) for _ in range(REWRITES)]
    return cold, hot, seq


def final_hot(hot, seq) -> dict:
    """Each hot file's content after the run."""
    return {f"/hot{h}": hot[v] for h, v in seq}


def wear_of(sim, base: list[int], before) -> dict:
    """Erase counts of the run (base: the counts after format + mount),
    their statistics, and the run's counters."""
    counts = [a - b for a, b in zip(sim.erase_counts(), base)]
    return {"counts": counts, "stats": _burst.erase_stats(counts),
            "counters": (sim.counters() - before).as_dict()}


def run_cairn(bpl: int, work, **config) -> dict:
    cold, hot, seq = work
    with common.new_sim(MODEL, block_count=BLOCKS, blocks_per_lblock=bpl, seed=1) as sim:
        fs, fmt_c = common.format_mount_cairn(sim, **config)
        # csim keeps erase counts over the device's life (the aging's and the
        # format's erases included; reset_counters leaves them): the run's are
        # the counts now subtracted from those at its end
        base, before = sim.erase_counts(), sim.counters()
        for p, data in cold:
            fs.write_file(p, data)
        for h, v in seq:
            fs.write_file(f"/hot{h}", hot[v])
        w = wear_of(sim, base, before)
        ok = all(fs.read_file(p) == d for p, d in list(final_hot(hot, seq).items()) + cold)
        fs.unmount()
        ram = fs.ram_bytes
    if not ok:
        raise RuntimeError("cairn: a file read back differs")
    return dict(w, format=fmt_c, ram=ram)


def run_lfs(work, cfg: dict) -> dict:
    L = _lfs.lfs_module()
    cold, hot, seq = work
    with common.new_sim(MODEL, block_count=BLOCKS, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg)
        lfs = fs.lfs
        base, before = sim.erase_counts(), sim.counters()
        for p, data in cold + [(f"/hot{h}", hot[v]) for h, v in seq]:
            if not _lfs.write_file(lfs, p, data):
                raise RuntimeError(f"littlefs refused {p}")
        w = wear_of(sim, base, before)
        for p, d in list(final_hot(hot, seq).items()) + cold:
            fh = L.file_open(lfs, p, _lfs.O_R)
            back = L.file_read(lfs, fh, len(d) + 1)
            L.file_close(lfs, fh)
            if back != d:
                raise RuntimeError(f"littlefs: {p} read back differs")
    return dict(w, format=fmt_c, erase_max=w["stats"]["max"],
                time_ns=w["counters"]["time_ns"])


def smallest_bpl() -> tuple[int, list[str]]:
    sim, fs, bpl, _, refused = common.cairn_smallest_bpl(MODEL, block_count=BLOCKS, seed=1)
    fs.unmount()
    sim.close()
    return bpl, refused


def stats_text(s: dict | None, keys=("max", "mean", "min")) -> str | None:
    if s is None:
        return None
    return " / ".join(f"{s[k]:,.1f}" if isinstance(s[k], float) else f"{s[k]:,}" for k in keys)


def run() -> dict:
    t0 = time.perf_counter()
    work = _cold, _hot, seq = workload()
    user = sum(len(d) for _, d in _cold) + len(seq) * HOT_SIZE
    bpl, refused = smallest_bpl()
    r = run_cairn(bpl, work)
    small = run_cairn(bpl, work, **SMALLEST)
    lr = lcfg = None
    notes = []
    if _lfs.available():
        # littlefs at its best for this scenario: the configuration whose most
        # worn block is erased least (the whole run per configuration)
        lr, lcfg, tried = _lfs.best(lambda c: run_lfs(work, c), 256, key="erase_max")
        notes.append(common.lfs_note(lcfg, tried, "erase_max", "erases of the most worn block", 1))
    s = r["stats"]
    ls = None if lr is None else lr["stats"]

    def lf(fn):
        return None if ls is None else fn(ls)
    figs = {}
    k, v = common.format_figure("", r["format"], None if lr is None else lr["format"])
    figs[k] = v
    mib = user / 2**20
    figs["bytes written by the user (cold files once, hot files rewritten)"] = figure(
        user, "B", note=f"{mib:.1f} MiB, {mib * 2**20 / (BLOCKS * 4096):.1f} volumes")
    figs["erase count per block: max / mean / min"] = figure(
        stats_text(s), "", lfs=lf(stats_text), summary=True)
    figs["erase count per block: max / mean"] = figure(
        round(s["max_mean"], 2), "x", lfs=lf(lambda x: f"{x['max_mean']:.2f} x"), summary=True,
        raw="1.00 x (perfectly even)")
    figs["erase count per block: standard deviation"] = figure(
        round(s["stddev"], 1), "", lfs=lf(lambda x: round(x["stddev"], 1)), summary=True)
    figs["blocks never erased in the run"] = figure(
        sum(1 for c in r["counts"] if c == 0), f"of {BLOCKS}",
        lfs=None if lr is None else sum(1 for c in lr["counts"] if c == 0))
    # no raw limit: one erase per 4 KiB written is not one here, as the run may
    # start on blocks erased before it (the format's, the fill's)
    figs["erases in all; per user MiB"] = figure(
        f"{s['total']:,}; {s['total'] / mib:.1f}", "",
        note=f"one erase per 4 KiB written would be {user / 4096:,.0f}; "
        f"{2**20 / 4096:.0f}; the format's erases are not counted here",
        lfs=lf(lambda x: f"{x['total']:,}; {x['total'] / mib:.1f}"))
    if lr is not None:
        k, v = common.beats_figure(r["counters"], lr["counters"], "the run: ")
        figs[k] = v
    k, v = common.ram_figure("", r["ram"], lcfg, 1, small["ram"])
    figs[k] = v
    figs["at cairn's smallest RAM: erase count max / mean / min"] = figure(
        stats_text(small["stats"]), "", note=f"{small['ram']:,} B RAM")
    notes += [
        f"Volume: {MODEL}, block_count={BLOCKS} (1 MiB, 4 KiB erase sectors); cairn with "
        f"blocks_per_lblock={bpl} (the smallest it accepts"
        + (": " + "; ".join(refused) if refused else "") + "). 1 MiB of nor-m25p16 (16 "
        "blocks of 64 KiB) would give 16 erase counts and holds about 44% as cairn file data "
        "(docs/DESIGN.md), less than the cold half; 4 MiB of nor-w25q128 takes littlefs's "
        "sweep minutes of wall time (read_size=1 configurations).",
        f"Run: {len(_cold)} cold files of {COLD_FILE // 1024} KiB ({COLD:.0%} of the volume) "
        f"written once; then {REWRITES:,} rewrites of {HOT_FILES} hot files of "
        f"{HOT_SIZE // 1024} KiB: each a file picked at random, opened with truncation, "
        f"written whole with one of {VERSIONS} contents, closed (random.Random(31)). No idle "
        "calls (cairn_gc, lfs_fs_gc). The same work on both; every file is read back and "
        "compared at the end.",
        "Erase counts: the simulator's per-block count over the device's life "
        "(sim.erase_counts(); reset_counters does not clear it), minus the counts after "
        "format + mount: the aging's erase and the format's are left out, the cold fill and "
        "the rewrites counted. Statistics over all blocks of the volume.",
        "littlefs's sweep picks the configuration whose most worn block has the fewest "
        "erases (each configuration runs the whole work); block_cycles (its wear levelling "
        "of metadata pairs) is one of the knobs swept.",
        common.RAM_TEXT, common.AGING_TEXT, common.TIME_NOTE]
    return result(ID, TITLE, figs, params={
        "model": MODEL, "volume": "1 MiB", "cold": f"{COLD:.0%}",
        "hot": f"{HOT_FILES} x {HOT_SIZE // 1024} KiB", "rewrites": REWRITES,
        "wall seconds": round(time.perf_counter() - t0, 2)}, notes=notes,
        raw={"cairn": r, "cairn smallest RAM": small, "littlefs": lr})


def plot(res, out) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    raw = res["raw"]
    runs = [("cairn", raw["cairn"]["counts"], _burst.CAIRN)]
    if raw["littlefs"]:
        runs.append(("littlefs (best config)", raw["littlefs"]["counts"], _burst.LFS))
    fig, ax = plt.subplots(figsize=(8, 4))
    top = max(max(c) for _, c, _ in runs)
    bins = range(0, top + 2, max(1, (top + 1) // 40))
    for label, counts, color in runs:
        ax.hist(counts, bins=bins, histtype="step", lw=1.4, color=color, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("erases of a block in the run")
    ax.set_ylabel("blocks")
    ax.set_title(f"{ID}: per-block erase counts, {MODEL} 1 MiB, aged", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fn = f"{ID}.png"
    fig.savefig(out / fn, dpi=90)
    plt.close(fig)
    return [("per-block erase counts, both FS", fn)]


if __name__ == "__main__":
    common.main(sys.modules[__name__])
