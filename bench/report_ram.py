"""The report's RAM plot: per scenario run, cairn's RAM at the config the run
used, cairn's smallest working config and littlefs's best config (the "ram"
entries of the scenarios' RAM rows, common.ram_figure)."""
from __future__ import annotations

from pathlib import Path

FILE = "ram-per-scenario.png"


def ram_points(results: list[dict]) -> list[tuple[str, dict]]:
    """(label, {"cairn", "cairn_smallest", "lfs"}) per RAM row of every scenario."""
    pts = []
    for res in results:
        for name, f in res.get("figures", {}).items():
            r = f.get("ram")
            if r:
                label = name[:-len("RAM (bytes)")].rstrip(": ")
                pts.append((res["id"] + (": " + label if label else ""), r))
    return pts


def plot(results: list[dict], out: Path) -> str | None:
    """Draws the bars into out/FILE; returns the file name (None: no RAM rows)."""
    pts = ram_points(results)
    if not pts:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    series = (("cairn", "cairn, config run"), ("cairn_smallest", "cairn, smallest config"),
              ("lfs", "littlefs, best config"))
    width = 0.27
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(pts) + 1.6))
    for i, (key, text) in enumerate(series):
        ys = [k + (i - 1) * width for k in range(len(pts))]
        xs = [r.get(key) or 0 for _, r in pts]
        ax.barh(ys, xs, height=width, label=text)
    ax.set_yticks(range(len(pts)))
    ax.set_yticklabels([lab[:48] for lab, _ in pts], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("RAM (bytes): context + buffers + open files")
    ax.set_title("RAM per scenario (0 = not run)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(Path(out) / FILE, dpi=90)
    plt.close(fig)
    return FILE
