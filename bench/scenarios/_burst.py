"""Shared helpers of overwrite-iops, latency-aged and wear: a per-call probe
of the device's counters, latency statistics and their report texts, per-op
means of a run's counters, erase-count statistics, and cairn's open flags."""
from __future__ import annotations

import math
import statistics

from bench.scenarios.common import cairn, ffi, lib

O_RW = lib.CAIRN_O_RDWR                                        # an existing file, read + write
O_NEW = lib.CAIRN_O_WRONLY | lib.CAIRN_O_CREAT | lib.CAIRN_O_TRUNC  # "w"


class Probe:
    """Reads the simulator's counters through one preallocated struct: these
    loops take thousands of snapshots, and cairn.Sim.counters() builds a
    dataclass each time."""

    def __init__(self, sim):
        self._sim = sim._ptr
        self._c = ffi.new("struct csim_counters *")

    def snap(self) -> tuple[int, int, int]:
        """(modelled time ns, erases, device operations) so far."""
        c = self._c
        lib.csim_counters(self._sim, c)
        return c.time_ns, c.erases, c.read_calls + c.prog_calls + c.erases


class CallLog:
    """Per-call modelled latency (ns), erases and device operations of the
    calls made through call()."""

    def __init__(self, sim):
        self.probe = Probe(sim)
        self.lat_ns: list[int] = []
        self.erases: list[int] = []
        self.ops: list[int] = []

    def call(self, fn, *args):
        t0, e0, o0 = self.probe.snap()
        r = fn(*args)
        t1, e1, o1 = self.probe.snap()
        self.lat_ns.append(t1 - t0)
        self.erases.append(e1 - e0)
        self.ops.append(o1 - o0)
        return r

    def as_dict(self) -> dict:
        return {"lat_ns": self.lat_ns, "erases": self.erases, "ops": self.ops}


def cairn_ok(rc: int, op: str, want: int = 0, path: str | None = None) -> None:
    """Raises cairn's error for a C call that did not return `want`."""
    if rc != want:
        if rc < 0:
            raise cairn.Error.from_code(rc, op=op, path=path)
        raise RuntimeError(f"{op} returned {rc}, not {want}")


def lat_stats(lat_ns: list[int]) -> dict:
    """Median, p99 and max (ms) of per-call latencies; p99 as fill-write takes it."""
    s = sorted(lat_ns)
    return {"median": statistics.median(s) / 1e6, "p99": s[max(int(len(s) * 0.99) - 1, 0)] / 1e6,
            "max": s[-1] / 1e6, "n": len(s)}


def lat_text(st: dict | None) -> str | None:
    """"0.717 / 3.055 / 608.9 ms" (median / p99 / max)."""
    if st is None:
        return None
    return " / ".join(_ms(st[k]) for k in ("median", "p99", "max")) + " ms"


def _ms(v: float) -> str:
    return f"{v:,.1f}" if v >= 100 else f"{v:.3f}"


def max_median(st: dict) -> float:
    return st["max"] / st["median"] if st["median"] else math.inf


def max_median_text(st: dict | None) -> str | None:
    """"12.3 x", or why there is no ratio (half the calls took no device time)."""
    if st is None:
        return None
    if not st["median"]:
        return "none (median 0: most calls only fill a RAM buffer)"
    return f"{max_median(st):,.1f} x"


def per_ops(c: dict, n: int, per: int) -> dict:
    """A run's counters of n operations scaled to `per` operations, as whole
    numbers (beats_figure and matched_figure compare and print these when the
    two file systems ran different numbers of operations)."""
    return {k: round(v * per / n) for k, v in c.items() if isinstance(v, (int, float))}


def erase_stats(counts: list[int]) -> dict:
    """max, mean, min, max / mean and standard deviation of per-block erases."""
    mean = statistics.fmean(counts)
    return {"max": max(counts), "mean": mean, "min": min(counts),
            "max_mean": max(counts) / mean if mean else math.inf,
            "stddev": statistics.pstdev(counts), "total": sum(counts)}


def plot_latency(panels, title: str, xlabel: str, path) -> None:
    """Per-call modelled latency over the call index, log scale, one panel per
    (subtitle, [(label, lat_ns, style)]); a marker per call (lines between
    calls of 0 and 50 ms would fill the panel). style: the FS's colour and
    whether the device is fresh (hollow, larger: drawn over the aged run's
    dots, which show where the two differ). Written to path (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.2 * len(panels)), squeeze=False)
    for ax, (sub, lines) in zip(axes[:, 0], panels):
        for label, lat_ns, (color, fresh) in lines:
            # a call that cost no device time (buffered in RAM) is drawn at
            # FLOOR_MS instead of vanishing from the log scale
            ax.plot([max(v / 1e6, FLOOR_MS) for v in lat_ns], ls="none",
                    marker="o", ms=5 if fresh else 2.5, mfc="none" if fresh else color,
                    mec=color, mew=0.6, alpha=0.7, label=label)
        ax.set_yscale("log")
        ax.set_ylabel("modelled latency (ms)")
        ax.set_title(sub, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, markerscale=3)
    axes[-1, 0].set_xlabel(xlabel + f"; calls without device time drawn at {FLOOR_MS} ms")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


FLOOR_MS = 0.001
CAIRN, LFS = "tab:blue", "tab:red"   # the file systems' colours in the plots
