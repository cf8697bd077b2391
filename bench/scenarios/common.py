"""Shared helpers of the benchmark scenarios: library lookup, result dicts,
printing, the aged device every scenario starts from, the format row."""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The benchmark measures the optimised build (make bench builds build-release/);
# the package's own lookup would prefer build/ (Debug) when CAIRN_LIB is unset.
_REL = ROOT / "build-release" / "python" / "libcairn_py.so"
if "CAIRN_LIB" not in os.environ and _REL.exists():
    os.environ["CAIRN_LIB"] = str(_REL)
if str(ROOT / "python") not in sys.path:
    try:
        import cairn  # noqa: F401  (installed through the venv's .pth)
    except ImportError:
        sys.path.insert(0, str(ROOT / "python"))

import cairn  # noqa: E402
from cairn._ffi import ffi, lib  # noqa: E402,F401  (tight loops call the C API directly)

TIME_NOTE = ("Modelled time counts device time only (the device model's cost of every "
             "read, program and erase); CPU time is not included.")


def figure(value, unit="", seed=None, target=None, met=None, note=None, raw=None,
           lfs=None, fresh=None, summary=False, why=None) -> dict:
    """One reported figure: cairn's value, the raw device limit (raw), the seed's
    figure, littlefs's figure in the same run (lfs) and the target (strings, as
    in the benchmark issue), met = True/False/None (no target). Every value is
    measured on an aged device (age()); `fresh` is the same figure on a fresh,
    pre-erased device (text, cairn and littlefs), where the scenario runs both.
    summary=True puts a figure without a target into the summary table; `why`
    is the cause of a miss as this run measured it (text built from its
    counters), shown in the report's list of missed targets."""
    d = {"value": value, "unit": unit, "raw": raw, "seed": seed, "lfs": lfs,
         "target": target, "met": met, "fresh": fresh}
    if summary:
        d["summary"] = True
    if note:
        d["note"] = note
    if why:
        d["why"] = why
    return d


def with_unit(v, unit="") -> str | None:
    """A figure of another column as text ("1,234 B/s"); None stays None."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return f"{fmt(v)} {unit}".strip()


def lfs_figs(tried: dict) -> dict:
    """{config text: time or failure} for the report's littlefs notes."""
    return {k: (v if isinstance(v, str) else {kk: vv for kk, vv in v.items()
                                               if not isinstance(vv, (list, dict))})
            for k, v in tried.items()}


def result(id_: str, title: str, figures: dict, params: dict | None = None,
           notes: list | None = None, raw: dict | None = None) -> dict:
    return {"id": id_, "title": title, "params": params or {}, "notes": notes or [],
            "figures": figures, "raw": raw or {}}


def fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return "" if v is None else str(v)


def met_text(m) -> str:
    return {True: "met", False: "**MISSED**", None: ""}[m]


def print_result(res: dict) -> None:
    print(f"== {res['id']}: {res['title']}")
    for k, v in res["params"].items():
        print(f"   {k}: {v}")
    w = max(len(k) for k in res["figures"]) if res["figures"] else 10
    for name, f in res["figures"].items():
        line = f"   {name:<{w}}  {fmt(f['value'])} {f['unit']}".rstrip()
        if f.get("lfs") is not None:
            line += f"   [littlefs {fmt(f['lfs'])}]"
        if f.get("target"):
            state = {True: "met", False: "MISSED", None: "n/a"}[f["met"]]
            line += f"   [target {f['target']}: {state}]"
        print(line)
    for n in res["notes"]:
        print(f"   note: {n}")


def main(module) -> None:
    print_result(module.run())


# ---- the aged device every scenario starts from ----
AGE_SEED = 0xA6ED

AGING_TEXT = (
    "Aged device: before the file system is formatted, the simulated device is used "
    "up once, as one in the field has been: every erase block is erased once and then "
    "programmed whole with pseudo-random bytes (random.Random(0xA6ED)), one erase and one "
    "whole-block program call per block through the device's own interface, so the "
    "simulator's page state and erase counts are real (NAND: the data area; the spare "
    "area stays erased; SD card: every sector written once, nothing discarded). No "
    "block is erased when the format starts: each file system must erase what it "
    "programs, inside its format or inside the measured run. The aging's own counters "
    "are reset; format + mount on the aged device are counted as their own row; the "
    "scenario's counters start after them. cairn and littlefs (and FAT) age the same "
    "way, with the same bytes.")
FRESH_TEXT = ("Fresh column: the same run on a fresh device (every block erased, never "
              "programmed: the simulator's initial state), cairn / littlefs (littlefs with "
              "the configuration that was best on the aged device).")


def age(sim, seed: int = AGE_SEED) -> None:
    """Ages the device as described in AGING_TEXT, then resets the counters."""
    g = sim.geometry
    rng = random.Random(seed)
    block = g.medium == cairn.Medium.BLOCK
    for b in range(g.block_count):
        if not block:
            _dev_ok(sim.dev_erase(b), f"aging: erase of block {b}")
        _dev_ok(sim.dev_prog(b * g.pages_per_block, 0, rng.randbytes(g.block_size)),
                f"aging: program of block {b}")
    sim.reset_counters()


def _dev_ok(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} returned {rc}")


def new_sim(model: str, aged: bool = True, **sim_kw) -> "cairn.Sim":
    """A Sim of `model` (cairn.Sim's keywords), aged unless aged=False."""
    sim = cairn.Sim(model, **sim_kw)
    if aged:
        age(sim)
    return sim


def format_mount_cairn(sim, **config):
    """cairn_format + cairn_mount; returns (mounted FS, their counters)."""
    before = sim.counters()
    cairn.format(sim, **config)
    fs = cairn.mount(sim, **config)
    return fs, (sim.counters() - before).as_dict()


def cairn_smallest_bpl(model: str, bpls=(1, 2, 4, 8), config: dict | None = None,
                       **sim_kw):
    """An aged `model` formatted and mounted by cairn (cairn config `config`)
    with the first blocks_per_lblock of bpls it accepts. Returns (sim, FS, bpl,
    format + mount counters, [refusal texts])."""
    refused = []
    for bpl in bpls:
        sim = new_sim(model, blocks_per_lblock=bpl, **sim_kw)
        try:
            fs, fmt_c = format_mount_cairn(sim, **(config or {}))
            return sim, fs, bpl, fmt_c, refused
        except cairn.Error as e:
            refused.append(f"blocks_per_lblock={bpl} refused: {e.message}")
            sim.close()
    raise RuntimeError("; ".join(refused))


def format_mount_lfs(sim, cfg: dict, **lfs_kw):
    """littlefs's format + mount (LfsFS does both); returns (LfsFS, their counters)."""
    from bench.scenarios import _lfs
    before = sim.counters()
    fs = _lfs.LfsFS(sim, **cfg, **lfs_kw)
    return fs, (sim.counters() - before).as_dict()


def fmt_counts(c: dict | None) -> str | None:
    """"184.3 s, 4,096 erases" of a format row (None stays None)."""
    if c is None:
        return None
    return f"{c['time_ns'] / 1e9:,.3f} s, {c['erases']:,} erases"


def format_figure(label: str, c: dict, lfs: dict | None = None, fresh_c: dict | None = None,
                  fresh_lfs: dict | None = None) -> tuple[str, dict]:
    """The format row: format + mount on the aged device (modelled time, erases),
    cairn and littlefs; the fresh device's in the fresh column."""
    fresh = None
    if fresh_c is not None:
        fresh = fmt_counts(fresh_c) + (" / littlefs " + fmt_counts(fresh_lfs)
                                       if fresh_lfs else "")
    return (label + "format + mount (modelled time, erases)",
            figure(fmt_counts(c), "", lfs=fmt_counts(lfs), fresh=fresh, summary=True))


def _plus(a: dict, b: dict) -> dict:
    return {"time_ns": a["time_ns"] + b["time_ns"], "erases": a["erases"] + b["erases"]}


def total_figure(label: str, fmt_c: dict, run_c: dict, lfs_fmt: dict | None = None,
                 lfs_run: dict | None = None, fresh: str | None = None,
                 what: str = "format + mount + measured run") -> tuple[str, dict]:
    """Format + mount + the measured run, added up (modelled time, erases): what a
    device that is formatted and then does this job costs in all. Marked with
    whether cairn's total time is lower than littlefs's."""
    tot = _plus(fmt_c, run_c)
    ltot = None if lfs_fmt is None or lfs_run is None else _plus(lfs_fmt, lfs_run)
    text = fmt_counts(tot)
    if ltot is not None:
        text += ("; lower than littlefs's" if tot["time_ns"] < ltot["time_ns"]
                 else "; NOT lower than littlefs's")
    return (label + what + ", in all (modelled time, erases)",
            figure(text, "", lfs=fmt_counts(ltot), fresh=fresh, summary=True))


def total_fresh_text(fmt_c: dict, run_c: dict, lfs_fmt: dict | None = None,
                     lfs_run: dict | None = None) -> str:
    """The fresh column of total_figure."""
    t = fmt_counts(_plus(fmt_c, run_c))
    if lfs_fmt is not None and lfs_run is not None:
        t += " / littlefs " + fmt_counts(_plus(lfs_fmt, lfs_run))
    return t


# ---- raw device limits from a model's cost table ----
def raw_write_bytes_per_s(model_or_sim, aged: bool = True) -> float:
    """Fastest programming the model allows: whole erase blocks, one page program
    command per page (the device takes no more per command).
    aged=True (the default, as every scenario's device): each block is erased
    first, one erase per erase block written (erase_ns); aged=False: the device
    is assumed erased. BLOCK media: the host transfer rate (the card erases
    inside; its internal cost is the scenario's own figure)."""
    mi = _info(model_or_sim)
    g, c = mi.geometry, mi.cost
    if g.medium == cairn.Medium.BLOCK:
        return float(c.prog_bytes_per_s)
    bs = g.block_size
    # one program command (and its setup) per page: raw flash takes no more
    ns = g.pages_per_block * (c.prog_setup_ns + c.prog_page_ns) \
        + (bs * 1e9 / c.prog_bytes_per_s if c.prog_bytes_per_s else 0) \
        + (c.erase_ns if aged else 0)
    return bs / (ns / 1e9)


def raw_erase_ns(model_or_sim, nbytes: float) -> float:
    """The erase time nbytes of new data need on an aged device, pro rata: nbytes /
    erase block size erases (0 on BLOCK media)."""
    mi = _info(model_or_sim)
    if mi.geometry.medium == cairn.Medium.BLOCK:
        return 0.0
    return nbytes / mi.geometry.block_size * mi.cost.erase_ns


def raw_read_bytes_per_s(model_or_sim) -> float:
    """Fastest reading the model allows: whole erase blocks per call (NAND pays
    the array load per page)."""
    mi = _info(model_or_sim)
    g, c = mi.geometry, mi.cost
    if g.medium == cairn.Medium.BLOCK:
        return float(c.read_bytes_per_s)
    bs = g.block_size
    setups = g.pages_per_block if g.medium == cairn.Medium.NAND else 1
    ns = setups * c.read_setup_ns + bs * 1e9 / c.read_bytes_per_s
    return bs / (ns / 1e9)


def raw_prog_seconds(model_or_sim, nbytes: int, aged: bool = True) -> float:
    return nbytes / raw_write_bytes_per_s(model_or_sim, aged)


def _info(m):
    if isinstance(m, str):
        return cairn.Sim.model_info(m)
    return cairn.Sim.model_info(m.model)


def lfs_note(best_cfg, tried: dict, key: str, unit: str, scale=1.0, extra="") -> str:
    """One report line: the configs littlefs was run with and the best."""
    from bench.scenarios import _lfs
    if best_cfg is None:
        return "littlefs: no configuration ran (" + "; ".join(
            f"{k}: {v}" for k, v in tried.items()) + ")."
    parts = []
    for k, v in tried.items():
        if isinstance(v, str):
            parts.append(f"{k}: {v}")
        else:
            parts.append(f"{k}: {fmt(v[key] * scale)} {unit}")
    return (f"littlefs ({_lfs.version()}) best config: {_lfs.cfg_text(best_cfg)}; RAM "
            f"{_lfs.ram_bytes(best_cfg):,} B. Tried: " + "; ".join(parts) + "." + extra)


def ops(c) -> int:
    """Device operations: read calls + program calls + erases."""
    d = c if isinstance(c, dict) else c.as_dict()
    return d["read_calls"] + d["prog_calls"] + d["erases"]


def beats_figure(c, lb, label: str = "") -> tuple[str, dict]:
    """The issue's rule "cairn beats littlefs on modelled time and device
    operations" as a figure (None when littlefs did not run)."""
    d = c if isinstance(c, dict) else c.as_dict()
    beat = d["time_ns"] < lb["time_ns"] and ops(d) < ops(lb)
    return (label + "cairn beats littlefs on modelled time and device operations",
            figure(beat, "", lfs=f"{lb['time_ns'] / 1e6:,.1f} ms, {ops(lb):,} ops vs "
                   f"cairn {d['time_ns'] / 1e6:,.1f} ms, {ops(d):,} ops",
                   target="yes", met=beat))


# ---- RAM of both file systems (docs/BENCHMARKS.md, "RAM accounting") ----
MIN_CACHE_NODES = 12  # cairn_config.cache_nodes may not go lower (include/cairn.h)

RAM_TEXT = (
    "RAM: cairn's is cairn_context_size() + cairn_mem_size(cfg) for the config the run "
    "used (the context plus the one buffer the user provides: segment table, node cache, "
    "scratch and journal pages, per-open-file state and page buffer for max_open files); "
    "littlefs's is sizeof(lfs_t) (128 B) + read cache + program cache (cache_size each) + "
    "lookahead buffer + sizeof(lfs_file_t) (84 B) and one cache_size file cache per open "
    "file (sizes of littlefs 2.11 on Cortex-M3). cairn's smallest config: cache_nodes = "
    f"{MIN_CACHE_NODES} (its minimum), max_open = the files the scenario opens at once, "
    "node_size = its default (the smallest it accepts: the page raised to 1 KiB).")


def smallest_cairn_config(max_open: int = 1) -> dict:
    """The cairn config with the least RAM that a scenario opening max_open files
    at once can use (node_size's default is already its minimum)."""
    return {"cache_nodes": MIN_CACHE_NODES, "max_open": max_open}


def cairn_ram(sim, **config) -> int:
    """cairn_context_size() + cairn_mem_size(config) on this device (nothing mounted)."""
    return cairn.FS(sim, **config).ram_bytes


def ram_figure(label: str, cairn_bytes: int, lfs_cfg: dict | None, lfs_open_files: int = 1,
               smallest: int | None = None, what: str = "default config") -> tuple[str, dict]:
    """The RAM row of a scenario: cairn's RAM (the config run, and its smallest
    working config when given) and littlefs's at its best config. The runner's
    summary takes its RAM column from these rows (their "ram" entry)."""
    from bench.scenarios import _lfs
    lfs_bytes = None if lfs_cfg is None else _lfs.ram_bytes(lfs_cfg, lfs_open_files)
    note = what + ("" if smallest is None else f"; smallest working config {smallest:,} B")
    f = figure(cairn_bytes, "B", note=note,
               lfs=None if lfs_bytes is None else
               f"{lfs_bytes:,} B ({lfs_open_files} open file(s), best config)")
    f["ram"] = {"cairn": cairn_bytes, "cairn_smallest": smallest, "lfs": lfs_bytes}
    return label + "RAM (bytes)", f


def matched_figure(label: str, c: dict, ram: int, lfs_ram: int | None, lb: dict | None,
                   what: str = "run") -> tuple[str, dict]:
    """The run again with cairn at its smallest config: modelled time and device
    operations next to littlefs's best, and whether cairn's RAM fits littlefs's."""
    fits = lfs_ram is not None and ram <= lfs_ram
    text = f"{c['time_ns'] / 1e6:,.1f} ms, {ops(c):,} ops at {ram:,} B RAM"
    if lfs_ram is not None:
        text += ("" if fits else f"; matched RAM not possible (cairn's smallest is "
                 f"{ram / lfs_ram:.1f}x littlefs's {lfs_ram:,} B)")
    return (label + f"{what} at cairn's smallest RAM (modelled time, device ops)",
            figure(text, "", lfs=None if lb is None else
                   f"{lb['time_ns'] / 1e6:,.1f} ms, {ops(lb):,} ops at {lfs_ram:,} B RAM"))
