"""The report's "Targets missed" list, generated from the measured figures so
it cannot go stale: every figure whose target was missed, with cairn's value,
the target, littlefs's figure in the same run and, where the scenario measured
one, the reason (a figure's `why`, text built from that run's counters)."""
from __future__ import annotations

from bench.scenarios.common import fmt

BEGIN, END = "<!-- misses:begin -->", "<!-- misses:end -->"


def missed(results: list[dict]) -> list[tuple[str, str, dict]]:
    """(scenario id, figure name, figure) of every missed target, in report order."""
    out = []
    for res in results:
        for name, f in res.get("figures", {}).items():
            if f.get("met") is False:
                out.append((res["id"], name, f))
    return out


def failed(results: list[dict]) -> list[str]:
    return [res["id"] for res in results if res.get("error")]


def miss_line(sid: str, name: str, f: dict) -> str:
    value = f"{fmt(f['value'])} {f['unit']}".strip()
    line = f"- **{sid}: {name}**: cairn {value}; target {f['target']}"
    if f.get("lfs") is not None:
        line += f"; littlefs {fmt(f['lfs'])}"
    line += "."
    if f.get("why"):
        line += f" Measured cause: {f['why']}"
    return line


def misses_md(results: list[dict]) -> list[str]:
    """Markdown lines: a count, then one bullet per miss (and per scenario that
    failed to run, which is worse than a miss)."""
    rows = missed(results)
    bad = failed(results)
    n_targets = sum(1 for res in results for f in res.get("figures", {}).values()
                    if f.get("target") is not None)
    out = [f"{len(rows)} of {n_targets} targets missed"
           + (f"; {len(bad)} scenario(s) failed to run: {', '.join(bad)}" if bad else "")
           + " (generated from this run's figures; the reasons in prose follow in "
           "docs/BENCHMARKS.md).", ""]
    out += [miss_line(*r) for r in rows]
    return out


def update_doc_section(text: str, lines: list[str]) -> str | None:
    """text with the part between the misses markers replaced by lines (None
    when the markers are missing)."""
    if BEGIN not in text or END not in text:
        return None
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return head + "\n".join([BEGIN, ""] + lines + ["", END]) + tail
