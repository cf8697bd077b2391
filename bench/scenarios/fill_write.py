"""fill-write (spiffs seed): a 1 MiB volume on nor-m25p16 filled to about 80%
with files of mixed sizes, about half of them deleted, then 100,000 bytes
written to a new file in 256 B writes; the same on an empty volume. Second row:
the whole 2 MiB chip. cairn vs littlefs is compared at equal fill: both hold
the same first N files of the list, N the most both can hold."""
from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "fill-write"
TITLE = "100,000 B in 256 B writes at 80% full vs empty (nor-m25p16)"
MODEL = "nor-m25p16"
TOTAL = 100_000
W = 256
LEVEL = 0.80
SEED = (1384, 6330)
VOLUMES = [("1 MiB volume", 16), ("whole 2 MiB chip", 32)]
SMALLEST = common.smallest_cairn_config(max_open=1)  # one file open at a time


def file_sizes(rng, budget: int) -> list[int]:
    """Mixed sizes (many small, some large) adding up to budget."""
    out, s = [], 0
    while s < budget:
        n = rng.choice([rng.randint(200, 2000)] * 3 + [rng.randint(2000, 16000)] * 2
                       + [rng.randint(16000, 60000)])
        n = min(n, budget - s)
        out.append(n)
        s += n
    return out


GIVE_UP = 5  # consecutive refused files that end a fill (smaller ones may still fit)


def file_list(volume: int) -> list[tuple[str, bytes]]:
    """The files of a fill, in order: mixed sizes adding up to LEVEL * volume."""
    rng = random.Random(11)
    return [(f"/f{i:04d}", rng.randbytes(n))
            for i, n in enumerate(file_sizes(rng, int(volume * LEVEL)))]


def fill(write, files, limit: int | None):
    """Writes the files with write(path, data) -> bool (False: refused, NOSPC).
    limit=None: as many as the volume takes (a refused file is skipped, GIVE_UP
    refusals in a row end the fill); limit=N: exactly the first N, all must fit.
    Returns (names, bytes stored, files written before the first refusal)."""
    names, stored, refused, first = [], 0, 0, None
    for p, data in files if limit is None else files[:limit]:
        if not write(p, data):
            if limit is not None:
                raise RuntimeError(f"fill-write: {p} refused at equal fill")
            first = len(names) if first is None else first
            refused += 1
            if refused >= GIVE_UP:
                break
            continue
        refused = 0
        names.append(p)
        stored += len(data)
    return names, stored, len(names) if first is None else first


def cairn_writer(fs):
    def write(p, data) -> bool:
        try:
            with fs.open(p, "w") as f:
                f.write(data)
            return True
        except cairn.NoSpaceError:
            try:
                fs.remove(p)
            except cairn.Error:
                pass
            return False
    return write


GC_BUDGET = 16     # cairn_gc's budget per idle call: pages moved (its default step)
IDLE_CALLS = 1000  # at most this many cairn_gc calls between two writes (each is bounded)


def write_probe(sim, write_one, idle=None, calls: list | None = None) -> list[float]:
    """TOTAL bytes in W-byte writes; per-write modelled latency (ms). idle(),
    when given, runs before each write and its device time is not the write's
    (idle time between writes). calls, when given, gets each write's (erases,
    pages programmed)."""
    lat = []
    for _ in range(TOTAL // W + (1 if TOTAL % W else 0)):
        if idle is not None:
            idle()
        c0 = sim.counters()
        write_one()
        c1 = sim.counters()
        lat.append((c1.time_ns - c0.time_ns) / 1e6)
        if calls is not None:
            calls.append((c1.erases - c0.erases, c1.prog_pages - c0.prog_pages))
    return lat


def bound_ms() -> float:
    """The issue's worst-call bound on this model: one erase block's erase and
    16 page programs (modelled times)."""
    c = cairn.Sim.model_info(MODEL).cost
    g = cairn.Sim.model_info(MODEL).geometry
    page_ns = c.prog_setup_ns + c.prog_page_ns + (g.page_size * 1e9 / c.prog_bytes_per_s
                                                 if c.prog_bytes_per_s else 0)
    return (c.erase_ns + 16 * page_ns) / 1e6


def run_cairn(blocks: int, limit, aged: bool = True, config: dict | None = None,
              idle_gc: bool = False) -> dict:
    """cairn (cairn config `config`): format + mount (counted apart); fill
    (limit: None = empty volume, "max" = as far as it takes, N = the first N
    files); delete every other file; the counted 100,000 B in 256 B writes and
    the close. idle_gc: cairn_gc until it returns 0 (at most IDLE_CALLS calls)
    before each write, in idle time (not in the write's latency)."""
    with common.new_sim(MODEL, aged, block_count=blocks, seed=1) as sim:
        fs, fmt_c = common.format_mount_cairn(sim, **(config or {}))
        volume = blocks * sim.geometry.block_size
        stored = nfirst = 0
        if limit is not None:
            names, stored, nfirst = fill(cairn_writer(fs), file_list(volume),
                                         None if limit == "max" else limit)
            for p in names[::2]:
                fs.remove(p)
            fs.sync()
        kept = fs.fs_stat()
        base = {"level": stored / volume, "stored": stored, "first_refusal": nfirst,
                "format": fmt_c, "free_after_fill": kept.free_bytes, "ram": fs.ram_bytes}
        try:
            f = fs.open("/new", "w")
        except cairn.Error as e:
            fs.unmount()
            return dict(base, lat_ms=[], time_ns=None, counters=None, failed=[
                f"open of the new file failed: {e.name} with {kept.free_bytes:,} B "
                "reported free"])
        ctx, fd = fs._ctx, f._fd
        buf = ffi.new("uint8_t[]", random.Random(5).randbytes(W))
        err = []

        def one():
            if not err:
                r = lib.cairn_write(ctx, fd, buf, W)
                if r != W:
                    err.append(r)
        idle_ns = []

        def idle():
            t = sim.time_ns
            for _ in range(IDLE_CALLS):
                if lib.cairn_gc(ctx, GC_BUDGET) <= 0:
                    break
            idle_ns.append(sim.time_ns - t)
        base["before"] = sim.counters().as_dict()  # format, mount, fill, deletions, open
        sim.reset_counters()
        calls = []
        lat = write_probe(sim, one, idle if idle_gc else None, calls)
        base["calls"] = calls
        base["idle_ms"] = sum(idle_ns) / 1e6
        t_close = sim.time_ns
        try:
            f.close()
        except cairn.Error as e:
            err.append(f"close: {e.name}")
        c = sim.counters()
        lat.append((c.time_ns - t_close) / 1e6)  # the close (its sync) as a last step
        fs.unmount()
    fails = [f"a 256 B write returned {e}" if isinstance(e, int) else e for e in err[:1]]
    return dict(base, lat_ms=lat, time_ns=c.time_ns, counters=c.as_dict(), failed=fails)


def lfs_fill(blocks: int, cfg, limit, aged: bool = True):
    """littlefs formatted (counted apart) and filled as run_cairn's fill;
    returns (sim, LfsFS, format counters, names, stored, first refusal)."""
    sim = common.new_sim(MODEL, aged, block_count=blocks, seed=1)
    fs, fmt_c = common.format_mount_lfs(sim, cfg)
    names, stored, nfirst = [], 0, 0
    if limit is not None:
        names, stored, nfirst = fill(lambda p, d: _lfs.write_file(fs.lfs, p, d),
                                     file_list(blocks * sim.geometry.block_size),
                                     None if limit == "max" else limit)
    return sim, fs, fmt_c, names, stored, nfirst


def lfs_max(blocks: int, cfg) -> dict:
    """littlefs's highest fill with this config (the fill alone)."""
    sim, fs, _, names, stored, nfirst = lfs_fill(blocks, cfg, "max")
    with sim:
        volume = blocks * sim.geometry.block_size
    return {"level": stored / volume, "stored": stored, "first_refusal": nfirst}


def run_lfs(blocks: int, limit, cfg, aged: bool = True) -> dict:
    L = _lfs.lfs_module()
    sim, fs, fmt_c, names, stored, nfirst = lfs_fill(blocks, cfg, limit, aged)
    with sim:
        lfs = fs.lfs
        volume = blocks * sim.geometry.block_size
        for p in names[::2]:
            L.remove(lfs, p)
        fh = L.file_open(lfs, "/new", _lfs.O_W)
        b = random.Random(5).randbytes(W)
        err = []

        def one():
            if not err:
                try:
                    L.file_write(lfs, fh, b)
                except Exception as e:  # noqa: BLE001
                    err.append(str(e))
        before = sim.counters().as_dict()  # format, mount, fill, deletions, open
        sim.reset_counters()
        lat = write_probe(sim, one)
        t_close = sim.time_ns
        try:
            L.file_close(lfs, fh)
        except Exception as e:  # noqa: BLE001
            err.append(str(e))
        c = sim.counters()
        lat.append((c.time_ns - t_close) / 1e6)
    if err:
        raise RuntimeError(f"littlefs: the 100,000-byte file failed: {err[0]}")
    return {"level": stored / volume, "stored": stored, "lat_ms": lat, "time_ns": c.time_ns,
            "counters": c.as_dict(), "format": fmt_c, "before": before}


def stats(r) -> dict | None:
    """Throughput and latency of a run; None when it failed."""
    if r is None or r.get("failed") or r["time_ns"] is None:
        return None
    lat = r["lat_ms"]
    s = sorted(lat)
    return {"Bps": TOTAL / (r["time_ns"] / 1e9), "median": statistics.median(lat),
            "p99": s[int(len(s) * 0.99) - 1], "max": s[-1]}


def bps_text(st) -> str | None:
    return None if st is None else f"{st['Bps']:,.0f} B/s"


def lat_text(st) -> str | None:
    return None if st is None else f"{st['median']:.3f} / {st['p99']:.3f} / {st['max']:.3f}"


def pair(c, lf) -> str | None:
    """The fresh column's "cairn X; littlefs Y" (either may be missing)."""
    if c is None and lf is None:
        return None
    return f"cairn {c or 'failed'}; littlefs {lf or 'not run'}"


def max_median(st) -> float | None:
    if st is None:
        return None
    return st["max"] / st["median"] if st["median"] else float("inf")


def equal_fill(blocks: int, cairn_max: dict, notes: list, label: str) -> tuple[int, dict]:
    """The most files (a prefix of the list) both file systems hold: the files
    cairn stored before its first refusal, or the most any littlefs config
    stored before its first, whichever is fewer. Returns (N, littlefs's
    highest fill: the config that stored most)."""
    tried = {}
    for cfg in _lfs.configs(256):
        try:
            tried[_lfs.cfg_text(cfg)] = lfs_max(blocks, cfg)
        except Exception as e:  # noqa: BLE001  (reported)
            tried[_lfs.cfg_text(cfg)] = f"failed: {type(e).__name__}: {e}"
    ok = [v for v in tried.values() if isinstance(v, dict)]
    notes.append(label + "littlefs's highest fill per configuration: " + "; ".join(
        f"{k}: {v}" if isinstance(v, str) else f"{k}: {v['level'] * 100:.1f}% "
        f"({v['first_refusal']} files before its first refusal)" for k, v in tried.items())
        + ".")
    n = cairn_max["first_refusal"]
    if not ok:
        return n, None
    return min(n, max(v["first_refusal"] for v in ok)), max(ok, key=lambda v: v["stored"])


def gc_cause(run: dict, empty: dict) -> str:
    """What the filled run's writes did beyond the empty volume's (its
    counters): the measured cause of a slower, spikier run."""
    c, e = run.get("counters"), empty.get("counters")
    if c is None or e is None:
        return "the run failed"
    return (f"cairn held {run['level'] * 100:.1f}% of the volume; its 100,000 B took "
            f"{c['erases']} erases, {c['read_bytes']:,} B read and {c['prog_bytes']:,} B "
            f"programmed against {e['erases']}, {e['read_bytes']:,} B and "
            f"{e['prog_bytes']:,} B on the empty volume (garbage collection).")


def worst_text(run: dict) -> str:
    """The slowest write call of a run: its time and device work."""
    lat, calls = run["lat_ms"], run.get("calls") or []
    i = max(range(len(calls)), key=lambda k: lat[k])
    return (f"the worst write took {lat[i]:.1f} ms ({calls[i][0]} erases, {calls[i][1]} pages "
            f"programmed); most in one call: {max(c[0] for c in calls)} erases, "
            f"{max(c[1] for c in calls)} pages")


def worst_call_figs(p, r, figs) -> None:
    """The issue's fill-write bounds: the worst write call within one block
    erase and 16 page programs; with idle cairn_gc between writes, the worst
    within 5x the median."""
    b = bound_ms()
    for tag, run in (("at its own fill", r["full"]), ("equal fill", r["equal"])):
        st = stats(run)
        key = p + f"cairn, {tag}: worst write call (modelled time)"
        if st is None:
            figs[key] = figure("FAILED: " + run["failed"][0], "", met=False,
                               target=f"<= {b:.1f} ms (one erase + 16 page programs)")
            continue
        figs[key] = figure(round(st["max"], 1), "ms", target=f"<= {b:.1f} ms (one erase + 16 "
                           "page programs)", met=st["max"] <= b, why=worst_text(run))
    run = r["full, idle gc"]
    st = stats(run)
    key = p + "cairn, at its own fill, idle cairn_gc between writes: max / median write latency"
    if st is None:
        figs[key] = figure("FAILED: " + run["failed"][0], "", target="<= 5", met=False)
        return
    mm = st["max"] / st["median"] if st["median"] else float("inf")
    figs[key] = figure(round(mm, 1), "x", target="<= 5", met=mm <= 5,
                       note=f"median {st['median']:.3f} ms, max {st['max']:.3f} ms; idle "
                       f"cairn_gc time {run['idle_ms']:,.1f} ms in all",
                       why=worst_text(run))


def volume_figs(p, r, figs, notes) -> None:
    """The figures of one volume (p: its label) from the runs in r."""
    raw_Bps = common.raw_write_bytes_per_s(MODEL)
    raw_kw = {"raw": f"{raw_Bps:,.0f} B/s"}
    empty, full, eq = stats(r["empty"]), stats(r["full"]), stats(r["equal"])
    l_empty, l_eq = stats(r.get("littlefs empty")), stats(r.get("littlefs equal"))
    fr_empty, fr_eq = stats(r["empty, fresh"]), stats(r["equal, fresh"])
    lfr_empty, lfr_eq = stats(r.get("littlefs empty, fresh")), stats(r.get("littlefs equal, fresh"))
    lmax = r.get("littlefs max")

    def failed(run):
        return figure("FAILED: " + run["failed"][0], "")
    k, v = common.format_figure(p, r["empty"]["format"], (r.get("littlefs empty") or {}).get(
        "format"), r["empty, fresh"]["format"],
        (r.get("littlefs empty, fresh") or {}).get("format"))
    figs[k] = v
    lvl = r["full"]["level"]
    figs[p + "cairn: fill level reached before the deletions (its highest, up to 80%)"] = figure(
        round(lvl * 100, 1), "%", raw="100%", note=None if lvl >= LEVEL - 0.01 else
        "cairn refused more (NOSPC); its own rows ran at this level",
        lfs=None if lmax is None else f"{lmax['level'] * 100:.1f}% (its highest)")
    figs[p + "cairn, empty volume: throughput"] = failed(r["empty"]) if empty is None else \
        figure(round(empty["Bps"]), "B/s", seed=f"{SEED[1]:,} B/s (formatted)", lfs=bps_text(
            l_empty), fresh=pair(bps_text(fr_empty), bps_text(lfr_empty)), **raw_kw)
    figs[p + "cairn, at its own fill: throughput"] = failed(r["full"]) if full is None else \
        figure(round(full["Bps"]), "B/s", seed=f"{SEED[0]:,} B/s (80% full)", **raw_kw)
    ratio = None if not (empty and full) else full["Bps"] / empty["Bps"]
    figs[p + "cairn, at its own fill: throughput filled / empty"] = figure(
        "FAILED" if ratio is None else round(ratio, 3), "", target=">= 0.70",
        met=ratio is not None and ratio >= 0.70, seed=f"{SEED[0] / SEED[1]:.3f}", raw="1.0",
        why=gc_cause(r["full"], r["empty"]))
    for tag, st, run in (("empty volume", empty, r["empty"]),
                         ("at its own fill", full, r["full"])):
        if st is None:
            figs[p + f"cairn, {tag}: max / median write latency"] = figure(
                "FAILED: " + run["failed"][0], "", target="<= 5", met=False)
            continue
        mm = st["max"] / st["median"] if st["median"] else float("inf")
        figs[p + f"cairn, {tag}: write latency median / p99 / max"] = figure(
            lat_text(st), "ms", raw=f"{W / raw_Bps * 1e3:.3f} ms")
        figs[p + f"cairn, {tag}: max / median write latency"] = figure(
            round(mm, 1), "x", target="<= 5", met=mm <= 5,
            why=f"the worst call took {st['max']:.1f} ms against a median of "
            f"{st['median']:.3f} ms; " + gc_cause(run, r["empty"]))
    worst_call_figs(p, r, figs)
    n = r["equal n"]
    pe = p + f"equal fill ({r['equal']['level'] * 100:.1f}%): "
    figs[pe + "level both hold (the same first files of the list)"] = figure(
        round(r["equal"]["level"] * 100, 1), "%", note=f"{n} files, "
        f"{r['equal']['stored']:,} B", lfs=None if r.get("littlefs equal") is None else
        f"{r['littlefs equal']['level'] * 100:.1f}%")
    figs[pe + "throughput"] = failed(r["equal"]) if eq is None else figure(
        round(eq["Bps"]), "B/s", lfs=bps_text(l_eq),
        fresh=pair(bps_text(fr_eq), bps_text(lfr_eq)), **raw_kw)
    if eq is not None:
        figs[pe + "write latency median / p99 / max"] = figure(
            lat_text(eq), "ms", raw=f"{W / raw_Bps * 1e3:.3f} ms",
            lfs=None if l_eq is None else lat_text(l_eq) + " ms",
            fresh=pair(lat_text(fr_eq), lat_text(lfr_eq)))
        mm, lmm = max_median(eq), max_median(l_eq)
        figs[pe + "max / median write latency"] = figure(
            round(mm, 1), "x", lfs=None if lmm is None else f"{lmm:.1f} x")
    le = r.get("littlefs equal")
    if eq is not None:
        lfr = r.get("littlefs equal, fresh")
        cfr = r["equal, fresh"]
        k, v = common.total_figure(
            pe, r["equal"]["before"], r["equal"]["counters"], None if le is None else
            le["before"], None if le is None else le["counters"],
            None if fr_eq is None else common.total_fresh_text(
                cfr["before"], cfr["counters"], None if lfr is None else lfr["before"],
                None if lfr is None else lfr["counters"]),
            what="format + mount + fill + deletions + measured run")
        figs[k] = v
    if le is not None and eq is not None:
        k, v = common.beats_figure(r["equal"]["counters"], le["counters"], pe)
        lfr = r.get("littlefs equal, fresh")
        if fr_eq is not None and lfr is not None:
            v["fresh"] = "yes" if common.beats_figure(
                r["equal, fresh"]["counters"], lfr["counters"])[1]["value"] else "no"
        figs[k] = v
    elif le is not None:
        figs[pe + "cairn beats littlefs on modelled time and device operations"] = figure(
            "FAILED: " + r["equal"]["failed"][0], "", target="yes", met=False)
    k, v = common.ram_figure(p, r["full"]["ram"], r.get("littlefs equal cfg"), 1,
                             r["equal, smallest"]["ram"])
    figs[k] = v
    sm = r["equal, smallest"]
    if sm["counters"] is not None:
        k, v = common.matched_figure(pe, sm["counters"], sm["ram"], v["ram"]["lfs"],
                                     None if le is None else le["counters"])
        figs[k] = v


def run_volume(blocks: int, notes: list, label: str) -> dict:
    """Every run of one volume: cairn empty / at its own fill / at equal fill
    (aged), the equal fill and empty on a fresh device; littlefs the same."""
    r = {"empty": run_cairn(blocks, None), "full": run_cairn(blocks, "max"),
         "full, idle gc": run_cairn(blocks, "max", idle_gc=True)}
    n = r["full"]["first_refusal"]
    if _lfs.available():
        n, r["littlefs max"] = equal_fill(blocks, r["full"], notes, label)
    r["equal n"] = n
    r["equal"] = run_cairn(blocks, n)
    r["equal, smallest"] = run_cairn(blocks, n, config=SMALLEST)
    r["empty, fresh"] = run_cairn(blocks, None, aged=False)
    r["equal, fresh"] = run_cairn(blocks, n, aged=False)
    if _lfs.available():
        r["littlefs empty"], cfg_e, tried_e = _lfs.best(lambda c: run_lfs(blocks, None, c), 256)
        r["littlefs equal"], cfg_q, tried_q = _lfs.best(lambda c: run_lfs(blocks, n, c), 256)
        r["littlefs equal cfg"] = cfg_q
        notes.append(label + "empty: " + common.lfs_note(cfg_e, tried_e, "time_ns", "ms", 1e-6))
        notes.append(label + "equal fill: " + common.lfs_note(cfg_q, tried_q, "time_ns", "ms",
                                                             1e-6))
        if cfg_e:
            r["littlefs empty, fresh"] = run_lfs(blocks, None, cfg_e, aged=False)
        if cfg_q:
            r["littlefs equal, fresh"] = run_lfs(blocks, n, cfg_q, aged=False)
    return r


def run() -> dict:
    t0 = time.perf_counter()
    figs, notes, raw = {}, [], {}
    for vname, blocks in VOLUMES:
        p = f"{vname}: "
        r = run_volume(blocks, notes, p)
        raw[vname] = r
        volume_figs(p, r, figs, notes)
    notes += [
        f"Files: mixed sizes (200 B-60 KB, random.Random(11)) adding up to {LEVEL:.0%} of the "
        f"volume. cairn's own fill: written in order until all are stored or the file system "
        f"refuses {GIVE_UP} files in a row (NOSPC; a refused file is skipped and the next, "
        "maybe smaller, tried): the level reached is reported. Then every other file is "
        "deleted and 100,000 B are written to a new file in 256 B writes, then it is closed "
        "(synced).",
        "Equal fill: the first N files of the same list, N = the files cairn stored before "
        "its first refusal, or littlefs's (its best configuration's), whichever is fewer: "
        "both file systems then hold exactly the same files, delete the same half and write "
        "the same 100,000 B. Only this comparison says whether cairn beats littlefs; cairn's "
        "own-fill rows are cairn alone (littlefs cannot hold that much on these volumes).",
        "Latency of a write = modelled device time spent in that call; the close is the last "
        "latency sample. Throughput = 100,000 B / modelled time of the writes and the close.",
        f"Worst write call: the issue's bound is one erase of an erase block and 16 page "
        f"programs of this model ({bound_ms():.1f} ms); the why column gives the erases and "
        "pages programmed of the worst call and the most of each in any call.",
        f"Idle cairn_gc rows: before each 256 B write cairn_gc(fs, {GC_BUDGET}) is called until "
        f"it returns 0 (at most {IDLE_CALLS} calls), as the spiffs seed advises (\"call gc in "
        "beforehand\"); that time is idle time, not the write's latency, and is given apart.",
        "The seed's figures are wall-clock on real hardware with spiffs.",
        f"The smallest-RAM rows run the equal fill again with cairn config {SMALLEST}.",
        common.RAM_TEXT,
        "Raw device limit: programming in whole erase blocks, each erased first (aged device). "
        "Both file systems erase inside the run, as the raw limit does (cairn's format erases "
        "only its anchors and the segment it writes).",
        common.AGING_TEXT, common.FRESH_TEXT, common.TIME_NOTE]
    return result(ID, TITLE, figs, params={"model": MODEL, "write size": W, "bytes": TOTAL,
                                           "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes, raw=raw)


def plot(res, out) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    vname = VOLUMES[0][0]
    r = res["raw"][vname]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.plot(r["empty"]["lat_ms"], lw=0.8, label="cairn, empty volume")
    ax.plot(r["full"]["lat_ms"], lw=0.8,
            label=f"cairn, filled to {r['full']['level'] * 100:.0f}% then half deleted")
    ax.plot(r["equal"]["lat_ms"], lw=0.8,
            label=f"cairn, equal fill {r['equal']['level'] * 100:.1f}%")
    if r.get("littlefs equal"):
        ax.plot(r["littlefs empty"]["lat_ms"], lw=0.6, ls=":", label="littlefs, empty volume")
        ax.plot(r["littlefs equal"]["lat_ms"], lw=0.6, ls="--",
                label=f"littlefs, equal fill {r['littlefs equal']['level'] * 100:.1f}%")
    ax.set_yscale("log")
    ax.set_xlabel("write number (256 B each; last = close)")
    ax.set_ylabel("modelled latency (ms)")
    ax.set_title(f"fill-write: {vname} on nor-m25p16, aged device")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fn = "fill-write.png"
    fig.savefig(out / fn, dpi=90)
    plt.close(fig)
    return [("write latency over time, filled vs empty", fn)]


if __name__ == "__main__":
    common.main(sys.modules[__name__])
