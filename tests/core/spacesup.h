/*
 * Support shared by test_space and test_badblock: a counting device wrapper
 * that sits between cairn and the simulator and recognises pages moved by
 * garbage collection (a whole page programmed with the content of a page
 * read shortly before), and a capacity probe.
 */
#ifndef SPACESUP_H
#define SPACESUP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tmodel.h"

#define W_RING 64u
struct wdev {
    struct cairn_dev dev;      /* handed to cairn (cfg.dev) */
    const struct cairn_dev *in;/* the simulator's */
    uint64_t ring[W_RING];     /* hashes of whole pages read recently */
    uint32_t nring;
    uint64_t moved;            /* pages programmed with a recently read page's data */
    /* pages [unc_lo, unc_hi) read as CAIRN_DEV_UNCORRECTABLE (a flipped byte) */
    uint32_t unc_lo, unc_hi;
    uint64_t unc_reads;
    int trace; /* print failed programs and erases */
    /* Fault injection: the fail_in-th program or erase from now into a block
     * that is neither an anchor nor (unless fail_meta) the journal's segment
     * fails, and its block goes bad (csim_fail_op). */
    csim *sim;
    const struct cairn *fs;
    uint32_t fail_in;
    int fail_meta; /* 1: those too; 2: only those; 3: only the journal's */
    uint32_t failed_data, failed_meta;
    uint64_t failed_op; /* op index (counters.mutating_ops) of the last one */
};

/* 1 if this program or erase of `block` is to fail (see fail_in). */
static inline int w_fail_now(struct wdev *w, uint32_t block)
{
    struct csim_counters c;
    uint32_t bpl = w->in->geo.blocks_per_lblock ? w->in->geo.blocks_per_lblock : 1;
    uint32_t seg = block / bpl;
    int meta;
    if (w->fail_in == 0 || w->fs == NULL || --w->fail_in > 0)
        return 0;
    meta = seg == w->fs->log.seg ||
           (w->fail_meta < 3 && (seg == w->fs->anchor[0] || seg == w->fs->anchor[1]));
    if ((meta && !w->fail_meta) || (!meta && w->fail_meta > 1)) {
        w->fail_in = 1; /* the next one */
        return 0;
    }
    csim_counters(w->sim, &c);
    csim_fail_op(w->sim, c.mutating_ops);
    w->failed_op = c.mutating_ops;
    if (meta)
        w->failed_meta++;
    else
        w->failed_data++;
    return 1;
}

static inline uint64_t w_hash(const uint8_t *p, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    uint32_t i, same = 1;
    for (i = 0; i < n; i++) {
        h = (h ^ p[i]) * 1099511628211ull;
        same &= p[i] == p[0];
    }
    /* 0: an erased page, or one of a single byte value (a node's padding):
     * such pages say nothing about where their data came from, never counted */
    return same ? 0 : (h | 1u);
}

static inline int w_read(void *ctx, uint32_t page, uint32_t off, void *buf, uint32_t len)
{
    struct wdev *w = (struct wdev *)ctx;
    uint32_t ps = w->in->geo.page_size, i;
    int r = w->in->read(w->in->ctx, page, off, buf, len);
    uint32_t last = page + (off + len - 1) / ps;
    if (r >= 0 && len > 0 && page < w->unc_hi && last >= w->unc_lo) {
        ((uint8_t *)buf)[len / 2] ^= 0x10;
        w->unc_reads++;
        return CAIRN_DEV_UNCORRECTABLE;
    }
    if (r >= 0 && off == 0 && len % ps == 0)
        for (i = 0; i < len / ps; i++) {
            uint64_t h = w_hash((const uint8_t *)buf + (size_t)i * ps, ps);
            if (h)
                w->ring[w->nring++ % W_RING] = h;
        }
    return r;
}

static inline int w_read_spare(void *ctx, uint32_t page, void *buf, uint32_t len)
{
    struct wdev *w = (struct wdev *)ctx;
    return w->in->read_spare(w->in->ctx, page, buf, len);
}

static inline int w_in_anchor(const struct wdev *w, uint32_t page)
{
    uint32_t seg;
    if (w->fs == NULL || w->fs->seg_pages == 0)
        return 0;
    seg = page / w->fs->seg_pages;
    return seg == w->fs->anchor[0] || seg == w->fs->anchor[1];
}

static inline int w_prog(void *ctx, uint32_t page, uint32_t off, const void *data, uint32_t len,
                  const void *spare, uint32_t spare_len)
{
    struct wdev *w = (struct wdev *)ctx;
    uint32_t ps = w->in->geo.page_size, i, k;
    (void)w_fail_now(w, page / w->in->geo.pages_per_block);
    /* checkpoint pages are no moved data, though a table page that did not
     * change matches the read-back of the one before */
    if (off == 0 && len % ps == 0 && !w_in_anchor(w, page))
        for (i = 0; i < len / ps; i++) {
            uint64_t h = w_hash((const uint8_t *)data + (size_t)i * ps, ps);
            for (k = 0; h && k < W_RING; k++)
                if (w->ring[k] == h) {
                    w->moved++;
                    w->ring[k] = 0;
                    break;
                }
        }
    k = (uint32_t)w->in->prog(w->in->ctx, page, off, data, len, spare, spare_len);
    if ((int)k < 0 && w->trace)
        printf("    [device] program of page %u (block %u) +%u: %d\n", (unsigned)page,
               (unsigned)(page / w->in->geo.pages_per_block), (unsigned)len, (int)k);
    return (int)k;
}

static inline int w_erase(void *ctx, uint32_t block)
{
    struct wdev *w = (struct wdev *)ctx;
    int r;
    (void)w_fail_now(w, block);
    r = w->in->erase(w->in->ctx, block);
    if (r < 0 && w->trace)
        printf("    [device] erase of block %u: %d\n", (unsigned)block, r);
    return r;
}

static inline int w_is_bad(void *ctx, uint32_t block)
{
    struct wdev *w = (struct wdev *)ctx;
    return w->in->is_bad(w->in->ctx, block);
}

static inline int w_mark_bad(void *ctx, uint32_t block)
{
    struct wdev *w = (struct wdev *)ctx;
    return w->in->mark_bad(w->in->ctx, block);
}

static inline int w_sync(void *ctx)
{
    struct wdev *w = (struct wdev *)ctx;
    return w->in->sync(w->in->ctx);
}

/* Puts the wrapper between t's file system and its simulator. */
static inline void w_attach(struct wdev *w, struct tfs *t)
{
    memset(w, 0, sizeof *w);
    w->sim = t->sim;
    w->fs = t->fs;
    w->in = csim_dev(t->sim);
    w->dev = *w->in;
    w->dev.ctx = w;
    w->dev.read = w_read;
    w->dev.read_spare = w->in->read_spare ? w_read_spare : NULL;
    w->dev.prog = w_prog;
    w->dev.erase = w_erase;
    w->dev.is_bad = w->in->is_bad ? w_is_bad : NULL;
    w->dev.mark_bad = w->in->mark_bad ? w_mark_bad : NULL;
    w->dev.sync = w->in->sync ? w_sync : NULL;
    t->cfg.dev = &w->dev;
}

/* Device work of one call. */
struct work {
    uint64_t erases, pages, moved, bytes;
};
static inline void work_take(const struct wdev *w, csim *sim, struct work *o)
{
    struct csim_counters c;
    csim_counters(sim, &c);
    o->erases = c.erases;
    o->pages = c.prog_pages;
    o->bytes = c.prog_bytes;
    o->moved = w ? w->moved : 0;
}
static inline void work_diff(const struct work *a, const struct work *b, struct work *o)
{
    o->erases = b->erases - a->erases;
    o->pages = b->pages - a->pages;
    o->moved = b->moved - a->moved;
    o->bytes = b->bytes - a->bytes;
}

/* What the mounted volume accepts: one file written in 4 KiB pieces until
 * NOSPC (which must be the error), then removed (a delete on a full volume
 * must work). Returns the bytes accepted. */
static inline int64_t probe_capacity(cairn *fs, const char *label)
{
    static uint8_t buf[4096];
    int64_t got = 0;
    int32_t n = 0;
    int fd = cairn_open(fs, "/probe", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC), rc;
    CHECK(fd >= 0, "[%s] open /probe: %d %s", label, fd, t_errname(fd));
    if (fd < 0)
        return 0;
    t_pattern(buf, sizeof buf, 4242);
    while ((n = cairn_write(fs, fd, buf, (int32_t)sizeof buf)) == (int32_t)sizeof buf)
        got += n;
    if (n > 0) {
        got += n;
        n = cairn_write(fs, fd, buf, (int32_t)sizeof buf);
    }
    CHECK(n == CAIRN_ERR_NOSPC, "[%s] filling the volume ends with NOSPC: %ld %s", label,
          (long)n, t_errname(n));
    rc = cairn_close(fs, fd);
    CHECK(rc == 0 || rc == CAIRN_ERR_NOSPC, "[%s] close /probe on a full volume: %d %s",
          label, rc, t_errname(rc));
    rc = cairn_remove(fs, "/probe");
    CHECK(rc == 0, "[%s] remove /probe on a full volume: %d %s", label, rc, t_errname(rc));
    return got;
}

static inline int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* max, median and 99th percentile of v[0..n) (sorts v). */
static inline void stats(uint64_t *v, size_t n, uint64_t *mx, uint64_t *med, uint64_t *p99)
{
    if (n == 0) {
        *mx = *med = *p99 = 0;
        return;
    }
    qsort(v, n, sizeof *v, cmp_u64);
    *mx = v[n - 1];
    *med = v[n / 2];
    *p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
}

/* A model driver over the mounted volume t (tmodel.h). */
static inline void drv_init(struct mdrv *d, struct tfs *t, struct model *m, const char *label,
                            uint64_t seed)
{
    memset(d, 0, sizeof *d);
    d->fs = t->fs;
    d->sim = t->sim;
    d->m = m;
    d->label = label;
    d->seed = seed;
    d->max_open = t->cfg.max_open ? t->cfg.max_open : 4; /* cairn's default (fs.c) */
}

#endif
