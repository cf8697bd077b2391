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


def figure(value, unit="", seed=None, target=None, met=None, note=None) -> dict:
    """One reported figure: cairn's value, the seed's figure and the target
    (strings, as in the benchmark issue), met = True/False/None (no target)."""
    d = {"value": value, "unit": unit, "seed": seed, "target": target, "met": met}
    if note:
        d["note"] = note
    return d


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
        if f.get("target"):
            line += f"   [target {f['target']}: {'met' if f['met'] else 'MISSED'}]"
        print(line)
    for n in res["notes"]:
        print(f"   note: {n}")


def main(module) -> None:
    print_result(module.run())
