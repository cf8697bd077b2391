"""Runs the benchmark scenarios of bench/scenarios/ and writes the report.

    python bench/runner.py [--out DIR] [SCENARIO ...]

Writes DIR/<id>.json per scenario and DIR/REPORT.md (one table per scenario and
a summary table), and prints the summary. The exit status is 1 when a scenario
failed to run (a missed target is a result, not a failure)."""
from __future__ import annotations

import argparse
import datetime
import importlib
import subprocess
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
from bench import report_misses, report_ram  # noqa: E402


# The benchmark issue's order; scenarios not listed follow by name.
ORDER = ["fib", "sync-log", "chunk-read", "http", "fill-write", "mount-scale", "fragments",
         "seq-rw", "video", "cpu-cost"]


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
    return fmt(v).replace("|", "\\|").replace("\n", " ")


def commit() -> str:
    """git rev-parse HEAD, with "+ uncommitted changes" when the tree is dirty."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return head + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def other(f, key) -> str:
    v = f.get(key)
    return "" if v is None else cell(v)


def scenario_md(res: dict) -> list[str]:
    out = [f"## {res['id']}: {res['title']}", ""]
    if res.get("error"):
        return out + ["**The scenario failed to run:**", "", "```", res["error"].rstrip(),
                      "```", ""]
    if res["params"]:
        out.append("Parameters: " + "; ".join(f"{k} = {cell(v)}"
                                               for k, v in res["params"].items()) + ".")
        out.append("")
    out += ["| figure | cairn | raw device limit | seed's figure | littlefs (best config) "
            "| target | | fresh device (cairn / littlefs) |",
            "|---|---|---|---|---|---|---|---|"]
    for name, f in res["figures"].items():
        val = f"{cell(f['value'])} {f['unit']}".strip()
        if f.get("note"):
            val += f" ({cell(f['note'])})"
        out.append(f"| {cell(name)} | {val} | {other(f, 'raw')} | {other(f, 'seed')} "
                   f"| {other(f, 'lfs')} | {other(f, 'target')} | {met_text(f['met'])} "
                   f"| {other(f, 'fresh')} |")
    out.append("")
    for title, fn in res.get("plots", []):
        out += [f"![{title}]({fn})", ""]
    for n in res["notes"]:
        out.append(f"- {n}")
    missed = [n for n, f in res["figures"].items() if f["met"] is False]
    if missed:
        out += ["", "**cairn misses the target of this scenario for: "
                + "; ".join(missed) + ".**"]
    out.append("")
    return out


def ram_rows(res: dict) -> dict:
    """{label: "cairn / littlefs" RAM text} of a scenario's RAM rows
    (common.ram_figure; the label is the figure name before "RAM (bytes)")."""
    out = {}
    for name, f in res["figures"].items():
        r = f.get("ram")
        if r:
            t = f"{fmt(r['cairn'])} / " + ("-" if r["lfs"] is None else fmt(r["lfs"]))
            out[name[:-len("RAM (bytes)")]] = t
    return out


def ram_cell(rams: dict, figure_name: str) -> str:
    """The RAM of the run a summary row comes from: the RAM row whose label
    starts the figure's name (the longest), else the scenario's unlabelled one,
    else the one text they all share, else all of them."""
    hits = [lab for lab in rams if lab and figure_name.startswith(lab)]
    if hits:
        return rams[max(hits, key=len)]
    if "" in rams:
        return rams[""]
    if len(set(rams.values())) == 1:
        return next(iter(rams.values()))
    return "; ".join(f"{lab.rstrip(': ')}: {t}" for lab, t in rams.items())


def summary_rows(results: list[dict]) -> list[tuple]:
    """Every figure with a target, the figures marked summary (format rows), and
    all figures of a scenario without targets (cpu-cost); the last column is the
    RAM (bytes) of cairn / littlefs in the run the figure comes from."""
    rows = []
    for res in results:
        if res.get("error"):
            rows.append((res["id"], "(failed to run)", "", "", "", "", "", "ERROR", "", ""))
            continue
        rams = ram_rows(res)
        # a scenario without targets shows all its figures, unless it marked
        # the ones that summarise it (summary=True)
        untargeted = all(f["target"] is None and not f.get("summary")
                         for f in res["figures"].values())
        for name, f in res["figures"].items():
            if f["target"] is None and not untargeted and not f.get("summary"):
                continue
            if f["target"] is None:  # cpu-cost's figures, format rows
                rows.append((res["id"], name, f"{fmt(f['value'])} {f['unit']}".strip(),
                             "", "", fmt(f.get("lfs")), "", "", fmt(f.get("fresh")),
                             ram_cell(rams, name)))
                continue
            state = {True: "met", False: "MISSED", None: "n/a"}[f["met"]]
            rows.append((res["id"], name, f"{fmt(f['value'])} {f['unit']}".strip(),
                         fmt(f.get("raw")), fmt(f.get("seed")), fmt(f.get("lfs")),
                         f["target"], state, fmt(f.get("fresh")), ram_cell(rams, name)))
    return rows


BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def update_docs(summary: list[str], results: list[dict]) -> None:
    """Replaces the text between the results markers of docs/BENCHMARKS.md with
    this run's summary table and the commit it came from."""
    doc = ROOT / "docs" / "BENCHMARKS.md"
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        print(f"{doc}: no results markers; not updated", file=sys.stderr)
        return
    from bench.scenarios import _lfs
    body = [BEGIN, "",
            f"Measured {datetime.date.today().isoformat()} from commit `{commit()}` "
            f"(Release build, {_lfs.version()}); `make bench` regenerates "
            "bench/report/REPORT.md with every figure, note and plot.", ""]
    body += summary
    body += ["", END]
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    text = head + "\n".join(body) + tail
    with_misses = report_misses.update_doc_section(text, report_misses.misses_md(results))
    if with_misses is None:
        print(f"{doc}: no misses markers; the list of missed targets not updated",
              file=sys.stderr)
    doc.write_text(with_misses or text)
    print(f"Updated {doc.relative_to(ROOT)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "report"))
    ap.add_argument("--update-docs", action="store_true",
                    help="also put the summary into docs/BENCHMARKS.md (between its "
                         "results markers)")
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
        if not res.get("error") and hasattr(m, "plot"):
            try:
                res["plots"] = m.plot(res, out)
            except Exception:  # noqa: BLE001  (a plot that fails is reported)
                res["notes"].append("plot failed: " + traceback.format_exc().splitlines()[-1])
        dt = time.perf_counter() - t0
        res["wall_seconds"] = round(dt, 2)
        nmiss = sum(1 for f in res["figures"].values() if f["met"] is False)
        if dt > 60:
            res["notes"].append(f"This scenario took {dt:.0f} s of wall time (over the "
                                "one-minute budget).")
        state = "ERROR" if res.get("error") else (f"{nmiss} target(s) missed" if nmiss
                                                  else "ok")
        print(f"      done in {dt:.1f} s: {state}", flush=True)
        (out / f"{m.ID}.json").write_text(json.dumps(res, indent=2) + "\n")
        results.append(res)

    rows = summary_rows(results)
    from bench.scenarios import _lfs
    md = ["# cairn benchmark report", "",
          f"Generated {datetime.datetime.now().isoformat(timespec='seconds')} by "
          "`bench/runner.py` from commit `" + commit() + "` with the library "
          f"`{lib_name()}` and {_lfs.version()}. "
          "Scenarios: /work/shared/BENCH-SCENARIOS.md; what each figure means: "
          "docs/BENCHMARKS.md.", "",
          f"**Note:** {common.TIME_NOTE}", "",
          common.AGING_TEXT, "",
          common.FRESH_TEXT, "", common.RAM_TEXT, "", "## Summary", "",
          "| scenario | figure | cairn | raw device limit | seed's figure | littlefs "
          "| target | | fresh device (cairn / littlefs) | RAM, B (cairn / littlefs) |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append("| " + " | ".join(cell(x) if i != 7 else
                                    (x if x in ("met", "n/a", "") else f"**{x}**")
                                    for i, x in enumerate(r)) + " |")
    md.append("")
    summary = md[md.index("## Summary") + 2:]
    md += ["## Targets missed", ""] + report_misses.misses_md(results) + [""]
    ram_png = report_ram.plot(results, out)
    if ram_png:
        md += ["## RAM per scenario", "", f"![RAM per scenario]({ram_png})", ""]
    md += ["Wall time per scenario: " + ", ".join(
        f"{r['id']} {r.get('wall_seconds', 0):.0f} s" for r in results) + ".", ""]
    for res in results:
        md += scenario_md(res)
    (out / "REPORT.md").write_text("\n".join(md))
    if a.update_docs:
        update_docs(summary, results)

    print()
    print("Summary (targets):")
    for r in rows:
        print(f"  {r[0]:<12} {r[1][:70]:<70} {r[2]:>16}"
              + (f"  [{r[6]}: {r[7]}]" if r[6] else "")
              + (f"  littlefs {r[5]}" if r[5] else ""))
    print(f"Report: {out / 'REPORT.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
