"""Shared helpers of the benchmark scenarios: library lookup, result dicts,
printing."""
from __future__ import annotations

import os
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
           lfs=None) -> dict:
    """One reported figure: cairn's value, the raw device limit (raw), the seed's
    figure, littlefs's figure in the same run (lfs) and the target (strings, as
    in the benchmark issue), met = True/False/None (no target)."""
    d = {"value": value, "unit": unit, "raw": raw, "seed": seed, "lfs": lfs,
         "target": target, "met": met}
    if note:
        d["note"] = note
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


# ---- raw device limits from a model's cost table ----
def raw_write_bytes_per_s(model_or_sim) -> float:
    """Fastest programming the model allows: whole erase blocks in one call
    (erases not counted: the device is assumed erased)."""
    mi = _info(model_or_sim)
    g, c = mi.geometry, mi.cost
    ns = 0.0
    if g.medium == cairn.Medium.BLOCK:
        return float(c.prog_bytes_per_s)
    bs = g.block_size
    ns = c.prog_setup_ns + (bs * 1e9 / c.prog_bytes_per_s if c.prog_bytes_per_s else 0) \
        + g.pages_per_block * c.prog_page_ns
    return bs / (ns / 1e9)


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


def raw_prog_seconds(model_or_sim, nbytes: int) -> float:
    return nbytes / raw_write_bytes_per_s(model_or_sim)


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
    return (f"littlefs ({_lfs.version()}) best config: {_lfs.cfg_text(best_cfg)}; RAM about "
            f"{_lfs.ram_estimate(best_cfg):,} B. Tried: " + "; ".join(parts) + "." + extra)


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
