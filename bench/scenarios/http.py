"""http (spiffs seed): a small web server's files on a 1 MiB volume of
nor-w25q128 (256 B pages, 8 KiB logical blocks): 7 html files of about 2 KiB
and one css file; 10,000 requests drawn with the seed's probabilities; a
request opens, reads and closes the html file, then the css. Variant: 500
other files on the volume."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "http"
TITLE = "10,000 web requests (html + css) on a 1 MiB nor-w25q128 volume"
MODEL = "nor-w25q128"
BLOCKS = 256          # 256 x 4 KiB = 1 MiB
BPL = 2               # 8 KiB logical blocks, as in the seed
REQUESTS = 10_000
PROBS = [25, 20, 16, 12, 8, 5, 4]   # %, the rest uniform over the 7
OTHERS = 500
SEED_TEMPORAL = (276_361, 63_361_517)
SEED_NONE = (1_595_258, 389_395_837)
BUF = 4096
SMALLEST = common.smallest_cairn_config(max_open=1)  # a request has one file open


def files(rng):
    html = {f"/page{i}.html": rng.randbytes(rng.randint(1800, 2300)) for i in range(7)}
    css = ("/style.css", rng.randbytes(1500))
    return html, css


def requests(rng) -> list[int]:
    out = []
    for _ in range(REQUESTS):
        x = rng.random() * 100
        acc = 0
        for i, p in enumerate(PROBS):
            acc += p
            if x < acc:
                out.append(i)
                break
        else:
            out.append(rng.randrange(7))
    return out


def others(rng) -> dict:
    return {f"/other{i:03d}.dat": rng.randbytes(rng.randint(64, 700)) for i in range(OTHERS)}


def layout(variant: bool):
    """(path, data) in creation order: half the other files before the site,
    half after, so the site's entries sit among them."""
    rng = random.Random(7)
    html, css = files(rng)
    oth = list(others(rng).items()) if variant else []
    site = list(html.items()) + [css]
    return oth[:len(oth) // 2] + site + oth[len(oth) // 2:], list(html), css[0], \
        dict(site)


REFUSED: list = []


def site_files() -> dict:
    """{path: data} of the site (the 7 html files and the css)."""
    return layout(False)[3]


def make_sim(**config):
    """An aged device formatted and mounted (cairn config `config`) with the
    seed's 8 KiB logical block if cairn accepts it, else the smallest larger one
    it does (the refusal is reported). Returns (sim, bpl, FS, format + mount
    counters)."""
    for bpl in (BPL, 4, 8, 16):
        sim = common.new_sim(MODEL, block_count=BLOCKS, blocks_per_lblock=bpl, seed=1)
        try:
            fs, fmt_c = common.format_mount_cairn(sim, **config)
            return sim, bpl, fs, fmt_c
        except cairn.Error as e:
            if bpl == BPL and not REFUSED:
                REFUSED.append(f"cairn refused {bpl * 4} KiB logical blocks ({e.message}); "
                               "it ran with the smallest it accepts")
            sim.close()
    raise RuntimeError("cairn refused every logical block size on a 1 MiB volume")


def run_cairn(variant: bool, reqs, **config) -> dict:
    order, html, css, site = layout(variant)
    sim, bpl, fs, fmt_c = make_sim(**config)
    with sim:
        for p, d in order:
            fs.write_file(p, d)
        fs.unmount()
        fs.mount()
        ram = fs.ram_bytes
        ctx = fs._ctx
        buf = ffi.new("uint8_t[]", BUF)
        opn, rd, cls = lib.cairn_open, lib.cairn_read, lib.cairn_close
        paths = [p.encode() for p in html]
        cssb = css.encode()
        sim.reset_counters()
        got = 0
        for r in reqs:
            for p in (paths[r], cssb):
                fd = opn(ctx, p, lib.CAIRN_O_RDONLY)
                if fd < 0:
                    raise cairn.Error.from_code(fd, op="open", path=p)
                while True:
                    n = rd(ctx, fd, buf, BUF)
                    if n < 0:
                        raise cairn.Error.from_code(n, op="read", path=p)
                    if n == 0:
                        break
                    got += n
                cls(ctx, fd)
        c = sim.counters().as_dict()
        fs.unmount()
    c["ram"] = ram
    c["bpl"] = bpl
    c["file_bytes"] = got
    c["format"] = fmt_c
    return c


def run_lfs(variant: bool, reqs, cfg) -> dict:
    L = _lfs.lfs_module()
    order, html, css, site = layout(variant)
    with common.new_sim(MODEL, block_count=BLOCKS, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg)
        for p, d in order:
            fh = L.file_open(fs.lfs, p, _lfs.O_W)
            L.file_write(fs.lfs, fh, d)
            L.file_close(fs.lfs, fh)
        fs.remount()
        lfs = fs.lfs
        opn, rd, cls = L.file_open, L.file_read, L.file_close
        sim.reset_counters()
        got = 0
        for r in reqs:
            for p in (html[r], css):
                fh = opn(lfs, p, _lfs.O_R)
                while True:
                    b = rd(lfs, fh, BUF)
                    if not b:
                        break
                    got += len(b)
                cls(lfs, fh)
        c = sim.counters().as_dict()
    c["file_bytes"] = got
    c["format"] = fmt_c
    return c


def run() -> dict:
    t0 = time.perf_counter()
    reqs = requests(random.Random(3))
    figs, notes, raw = {}, [], {}
    for variant in (False, True):
        label = "with 500 other files: " if variant else ""
        c = run_cairn(variant, reqs)
        raw[label or "plain"] = c
        lb = lcfg = None
        if _lfs.available():
            lb, lcfg, tried = _lfs.best(lambda cf: run_lfs(variant, reqs, cf), 256)
            notes.append((label or "site only: ") + common.lfs_note(
                lcfg, tried, "time_ns", "ms", 1e-6))
            raw[(label or "plain") + " littlefs"] = tried
        if variant and _lfs.available() and lb is None:
            notes.append("littlefs cannot hold the 500 other files with the site on the 1 MiB "
                         "volume: it runs out of blocks (NOSPC above) after 303 files (cache "
                         "256 B) or 391 files (cache 1 KiB), about 130-170 KB of data. Files "
                         "above its inline limit (the cache size) take a whole 4 KiB block "
                         "each, and inline files fill metadata pairs of two 4 KiB blocks.")
        # Bytes requested: the files' bytes of every request, what a file system
        # without a file data cache reads. Not a minimum: cairn's cache keeps file
        # data (pages of the files) across open/close, so it can read less. The
        # physical minimum is every file of the site read once.
        requested = c["file_bytes"]
        minimum = sum(len(d) for d in site_files().values())

        def lf(fn):
            return None if lb is None else fn(lb)
        if not variant:
            k, v = common.format_figure("", c["format"], lf(lambda d: d["format"]))
            figs[k] = v
        figs[label + "device read calls"] = figure(
            c["read_calls"], "", seed=f"{SEED_TEMPORAL[0]:,} (spiffs, temporal cache); "
            f"{SEED_NONE[0]:,} without",
            target=f"<= {SEED_TEMPORAL[0] // 10:,} (10x fewer than the seed)",
            met=c["read_calls"] * 10 <= SEED_TEMPORAL[0],
            raw=f"{2 * REQUESTS:,} (one per file requested, no data cache); 8 (each file once)",
            lfs=lf(lambda d: d["read_calls"]))
        ratio = c["read_bytes"] / requested
        figs[label + "device bytes read"] = figure(
            c["read_bytes"], "B", seed=f"{SEED_TEMPORAL[1]:,} (temporal cache); "
            f"{SEED_NONE[1]:,} without", raw=f"{minimum:,} B (each file once: the physical "
            f"minimum); {requested:,} B requested", lfs=lf(lambda d: d["read_bytes"]))
        figs[label + "bytes read / bytes requested (the files' bytes of every request)"] = \
            figure(round(ratio, 3), "x", target="<= 1.2", met=ratio <= 1.2,
                   raw=f"1.0 without a file data cache; {minimum / requested:.5f} (each file "
                   "once)", lfs=lf(lambda d: f"{d['read_bytes'] / requested:.3f} x"))
        figs[label + "read calls per request"] = figure(
            round(c["read_calls"] / REQUESTS, 2), "", raw="2",
            seed=f"{SEED_TEMPORAL[0] / REQUESTS:.1f} (temporal cache)",
            lfs=lf(lambda d: round(d["read_calls"] / REQUESTS, 2)))
        figs[label + "bytes read per request"] = figure(
            round(c["read_bytes"] / REQUESTS), "B",
            raw=f"{requested / REQUESTS:,.0f} B requested (no data cache)",
            seed=f"{SEED_TEMPORAL[1] / REQUESTS:,.0f} B (temporal cache)",
            lfs=lf(lambda d: f"{d['read_bytes'] / REQUESTS:,.0f} B"))
        raw_ms = (2 * REQUESTS * cairn.Sim.model_info(MODEL).cost.read_setup_ns / 1e6
                  + requested / cairn.Sim.model_info(MODEL).cost.read_bytes_per_s * 1e3)
        figs[label + "modelled time per request"] = figure(
            round(c["time_ns"] / REQUESTS / 1e3, 1), "us",
            raw=f"{raw_ms / REQUESTS * 1e3:.1f} us (no data cache)",
            lfs=lf(lambda d: f"{d['time_ns'] / REQUESTS / 1e3:.1f} us"))
        if lb is not None:
            better = (c["read_calls"] < lb["read_calls"] and c["read_bytes"] < lb["read_bytes"]
                      and c["time_ns"] < lb["time_ns"])
            figs[label + "fewer calls, bytes and modelled time than littlefs"] = figure(
                better, "", target="yes", met=better,
                lfs=f"{lb['read_calls']:,} calls, {lb['read_bytes']:,} B, "
                f"{lb['time_ns'] / 1e6:,.1f} ms vs cairn {c['read_calls']:,}, "
                f"{c['read_bytes']:,} B, {c['time_ns'] / 1e6:,.1f} ms")
        small = run_cairn(variant, reqs, **SMALLEST)
        k, v = common.ram_figure(label, c["ram"], lcfg, 1, small["ram"])
        figs[k] = v
        k, v = common.matched_figure(label, small, small["ram"], v["ram"]["lfs"], lb,
                                     "10,000 requests")
        figs[k] = v
    notes += REFUSED + [
        f"cairn's logical block: {c['bpl'] * 4} KiB (blocks_per_lblock={c['bpl']}); "
        "littlefs's block: 4 KiB (the erase block).",
        "Files: 7 html files of 1,800-2,300 bytes and a 1,500-byte css (random.Random(7)); "
        "requests from random.Random(3): 25, 20, 16, 12, 8, 5, 4% for pages 0-6, the other "
        "10% uniform. Each file is read with 4 KiB read calls until EOF.",
        "The volume is written, unmounted and mounted again; counters cover the 10,000 "
        "requests only. Variant: 500 other files of 64-700 bytes, half created before the "
        "site's files and half after.",
        "Bytes requested: the files' bytes of every request, what a file system without a "
        "file data cache must read. It is not a minimum: cairn's cache keeps file data "
        "across open/close and serves part of the requests from RAM, so it reads less "
        "than requested. The physical minimum is each of the 8 files read once "
        f"({minimum:,} B, 8 read calls), reachable with a cache that holds the site.",
        "Raw device limit columns: one read call per file requested, reading exactly its "
        "bytes (a reader without a data cache), and the physical minimum.",
        f"The smallest-RAM row runs the requests again with cairn config {SMALLEST}.",
        common.RAM_TEXT, common.AGING_TEXT, common.TIME_NOTE]
    return result(ID, TITLE, figs,
                  params={"model": MODEL, "volume": "1 MiB (256 blocks of 4 KiB)",
                          "blocks_per_lblock": c["bpl"], "requests": REQUESTS,
                          "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes, raw=raw)


if __name__ == "__main__":
    common.main(sys.modules[__name__])
