"""Runs the benchmark scenarios of bench/scenarios/ and writes the report.

    python bench/runner.py [--out DIR] [SCENARIO ...]

Writes DIR/<id>.json per scenario and DIR/REPORT.md (one table per scenario and
a summary table), and prints the summary. The exit status is 1 when a scenario
failed to run (a missed target is a result, not a failure)."""
from __future__ import annotations

import argparse
import datetime
import importlib
import json
import pkgutil
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import bench.scenarios as scenarios_pkg  # noqa: E402
from bench.scenarios import common  # noqa: E402
from bench.scenarios.common import fmt, met_text  # noqa: E402


# The benchmark issue's order; scenarios not listed follow by name.
ORDER = ["fib", "sync-log", "chunk-read"]


def discover() -> list:
    mods = []
    for info in sorted(pkgutil.iter_modules(scenarios_pkg.__path__), key=lambda i: i.name):
        if info.name in ("common",) or info.name.startswith("_"):
            continue
        m = importlib.import_module(f"bench.scenarios.{info.name}")
        if hasattr(m, "run") and hasattr(m, "ID"):
            mods.append(m)
    rank = {n: i for i, n in enumerate(ORDER)}
    return sorted(mods, key=lambda m: (rank.get(m.ID, len(ORDER)), m.ID))


def lib_name() -> str:
    p = Path(str(common.cairn._ffi.lib_path)).resolve()
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def cell(v) -> str:
    return fmt(v).replace("|", "\\|")


def scenario_md(res: dict) -> list[str]:
    out = [f"## {res['id']}: {res['title']}", ""]
    if res.get("error"):
        return out + ["**The scenario failed to run:**", "", "```", res["error"].rstrip(),
                      "```", ""]
    if res["params"]:
        out.append("Parameters: " + "; ".join(f"{k} = {cell(v)}"
                                               for k, v in res["params"].items()) + ".")
        out.append("")
    out += ["| figure | cairn | seed's figure | target | |", "|---|---|---|---|---|"]
    for name, f in res["figures"].items():
        val = f"{cell(f['value'])} {f['unit']}".strip()
        if f.get("note"):
            val += f" ({cell(f['note'])})"
        out.append(f"| {cell(name)} | {val} | {cell(f['seed'])} | {cell(f['target'])} "
                   f"| {met_text(f['met'])} |")
    out.append("")
    for n in res["notes"]:
        out.append(f"- {n}")
    missed = [n for n, f in res["figures"].items() if f["met"] is False]
    if missed:
        out += ["", "**cairn misses the target of this scenario for: "
                + "; ".join(missed) + ".**"]
    out.append("")
    return out


def summary_rows(results: list[dict]) -> list[tuple]:
    rows = []
    for res in results:
        if res.get("error"):
            rows.append((res["id"], "(failed to run)", "", "", "ERROR"))
            continue
        for name, f in res["figures"].items():
            if f["target"] is None:
                continue
            rows.append((res["id"], name, f"{fmt(f['value'])} {f['unit']}".strip(),
                         f["target"], "met" if f["met"] else "MISSED"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "report"))
    ap.add_argument("names", nargs="*", help="scenario ids or module names (default: all)")
    a = ap.parse_args(argv)
    mods = discover()
    if a.names:
        want = {n.replace("_", "-") for n in a.names}
        unknown = want - {m.ID for m in mods}
        if unknown:
            print(f"unknown scenario(s): {', '.join(sorted(unknown))}; "
                  f"known: {', '.join(m.ID for m in mods)}", file=sys.stderr)
            return 2
        mods = [m for m in mods if m.ID in want]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results, failed = [], 0
    for i, m in enumerate(mods, 1):
        print(f"[{i}/{len(mods)}] {m.ID}: {m.TITLE} ...", flush=True)
        t0 = time.perf_counter()
        try:
            res = m.run()
        except Exception:
            failed += 1
            res = {"id": m.ID, "title": m.TITLE, "error": traceback.format_exc(),
                   "figures": {}, "params": {}, "notes": []}
            print(res["error"], file=sys.stderr)
        dt = time.perf_counter() - t0
        res["wall_seconds"] = round(dt, 2)
        nmiss = sum(1 for f in res["figures"].values() if f["met"] is False)
        state = "ERROR" if res.get("error") else (f"{nmiss} target(s) missed" if nmiss
                                                  else "ok")
        print(f"      done in {dt:.1f} s: {state}", flush=True)
        (out / f"{m.ID}.json").write_text(json.dumps(res, indent=2) + "\n")
        results.append(res)

    rows = summary_rows(results)
    md = ["# cairn benchmark report", "",
          f"Generated {datetime.datetime.now().isoformat(timespec='seconds')} by "
          "`bench/runner.py` with the library "
          f"`{lib_name()}`. "
          "Scenarios: /work/shared/BENCH-SCENARIOS.md.", "",
          f"**Note:** {common.TIME_NOTE}", "", "## Summary", "",
          "| scenario | figure | cairn | target | |", "|---|---|---|---|---|"]
    for r in rows:
        md.append("| " + " | ".join(cell(x) if i != 4 else
                                    ("met" if x == "met" else f"**{x}**")
                                    for i, x in enumerate(r)) + " |")
    md.append("")
    for res in results:
        md += scenario_md(res)
    (out / "REPORT.md").write_text("\n".join(md))

    print()
    print("Summary (targets):")
    w = [max([len(str(r[i])) for r in rows] + [8]) for i in range(5)]
    for r in rows:
        print("  " + "  ".join(str(x).ljust(w[i]) for i, x in enumerate(r)).rstrip())
    print(f"Report: {out / 'REPORT.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
