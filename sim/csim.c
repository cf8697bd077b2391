/*
 * cairn flash simulator: models, storage, rule checking, counters, time model
 * and fault injection. See csim.h for the API and docs/DESIGN.md ("Simulator")
 * for the behaviour in prose.
 */
#define _POSIX_C_SOURCE 200809L

#include "csim.h"
#include "csim_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Error text of the last failed csim_new / csim_new_custom / csim_save. It
 * always points to a string literal; the only mutable file-scope state. */
static const char *g_error = "";

const char *csim_error(void) { return g_error; }
void csim_set_error_(const char *text) { g_error = text; }

/* ---------------------------------------------------------------- models */

struct model {
    const char *name;
    struct cairn_geometry geo;
    struct csim_cost cost;
    struct csim_ftl ftl;
};

/* geo: page_size, spare_size, pages_per_block, block_count, medium, NOP,
 *      write_unit, blocks_per_lblock (0: cairn chooses)
 * cost: read_setup, read_bps, prog_setup, prog_bps, prog_page, erase,
 *       ftl_prog, ftl_erase */
static const struct model models[] = {
    {"nor-m25p16",
     {256, 0, 256, 32, CAIRN_MEDIUM_NOR, 0, 0, 0},
     {20000, 4500000, 20000, 4500000, 640000, 600000000, 0, 0},
     {0, 0, 0}},
    {"nor-w25q128",
     {256, 0, 16, 4096, CAIRN_MEDIUM_NOR, 0, 0, 0},
     {10000, 13000000, 10000, 13000000, 400000, 45000000, 0, 0},
     {0, 0, 0}},
    {"nand-dhara",
     {2048, 32, 64, 1024, CAIRN_MEDIUM_NAND, 1, 0, 0},
     {950000, 27000000, 0, 0, 2075000, 3000000, 0, 0},
     {0, 0, 0}},
    {"nand-jffs2",
     {2048, 32, 64, 8192, CAIRN_MEDIUM_NAND, 4, 0, 0},
     {25000, 18400000, 0, 0, 341000, 2000000, 0, 0},
     {0, 0, 0}},
    {"sd-tf",
     {512, 0, 8192, 256, CAIRN_MEDIUM_BLOCK, 0, 262144, 0},
     {0, 20000000, 0, 20000000, 0, 0, 1000000, 3000000},
     {4194304, 16384, 4}},
};

#define N_MODELS (sizeof(models) / sizeof(models[0]))

static const char *const model_names[] = {"nor-m25p16", "nor-w25q128",
                                          "nand-dhara", "nand-jffs2", "sd-tf",
                                          NULL};

const char *const *csim_model_names(void) { return model_names; }

static const struct model *find_model(const char *name)
{
    size_t i;
    if (!name)
        return NULL;
    for (i = 0; i < N_MODELS; i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

int csim_model_info(const char *model, struct cairn_geometry *geo,
                    struct csim_cost *cost, struct csim_ftl *ftl)
{
    const struct model *m = find_model(model);
    if (!m)
        return -1;
    if (geo)
        *geo = m->geo;
    if (cost)
        *cost = m->cost;
    if (ftl)
        *ftl = m->ftl;
    return 0;
}

/* ------------------------------------------------------------------ PRNG */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* xorshift64*: state never 0. */
uint64_t csim_rng_(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n), n >= 1. */
uint32_t csim_below_(uint64_t *s, uint32_t n)
{
    return (uint32_t)(((csim_rng_(s) >> 32) * (uint64_t)n) >> 32);
}

static uint64_t stream_seed(uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    uint64_t v = splitmix64(&x);
    return v ? v : 0x6A09E667F3BCC909ull;
}

/* ------------------------------------------------------------ validation */

const char *csim_validate_(const struct cairn_geometry *g,
                           const struct csim_ftl *f)
{
    uint64_t block_bytes, dev_bytes;
    if (g->medium < CAIRN_MEDIUM_NOR || g->medium > CAIRN_MEDIUM_BLOCK)
        return "geometry: unknown medium";
    if (g->page_size == 0 || g->page_size > (1u << 24))
        return "geometry: page_size must be 1 .. 16 MiB";
    if (g->pages_per_block == 0)
        return "geometry: pages_per_block is 0";
    if (g->block_count == 0)
        return "geometry: block_count is 0";
    block_bytes = (uint64_t)g->page_size * g->pages_per_block;
    if (block_bytes > (1u << 30))
        return "geometry: erase block larger than 1 GiB";
    if ((uint64_t)g->block_count * g->pages_per_block > 0xFFFFFFFFull)
        return "geometry: more than 2^32-1 pages";
    if (g->spare_size > 65536)
        return "geometry: spare_size larger than 64 KiB";
    if (g->medium == CAIRN_MEDIUM_BLOCK && g->spare_size != 0)
        return "geometry: BLOCK media have no spare area";
    if (g->blocks_per_lblock > 1 && g->block_count % g->blocks_per_lblock)
        return "geometry: blocks_per_lblock must divide block_count";
    if (g->medium == CAIRN_MEDIUM_BLOCK) {
        if (!f)
            return "ftl: BLOCK media need a card model (struct csim_ftl)";
        dev_bytes = block_bytes * g->block_count;
        if (f->au_bytes == 0 || f->au_bytes % g->page_size)
            return "ftl: au_bytes must be a non-zero multiple of page_size";
        if (f->flash_page_bytes == 0 || f->flash_page_bytes % g->page_size ||
            f->au_bytes % f->flash_page_bytes)
            return "ftl: flash_page_bytes must be a multiple of page_size "
                   "dividing au_bytes";
        if (f->open_aus == 0 || f->open_aus > 64)
            return "ftl: open_aus must be 1 .. 64";
        if (dev_bytes % f->au_bytes)
            return "ftl: device size must be a multiple of au_bytes";
    }
    return NULL;
}

/* -------------------------------------------------------------- creation */

static int dev_read(void *ctx, uint32_t page, uint32_t off, void *buf,
                    uint32_t len);
static int dev_read_spare(void *ctx, uint32_t page, void *buf, uint32_t len);
static int dev_prog(void *ctx, uint32_t page, uint32_t off, const void *data,
                    uint32_t len, const void *spare, uint32_t spare_len);
static int dev_erase(void *ctx, uint32_t block);
static int dev_is_bad(void *ctx, uint32_t block);
static int dev_mark_bad(void *ctx, uint32_t block);
static int dev_sync(void *ctx);

csim *csim_alloc_(const struct cairn_geometry *geo,
                  const struct csim_cost *cost, const struct csim_ftl *ftl,
                  const char *name, const struct csim_options *opt)
{
    csim *s;
    const char *err = csim_validate_(geo, ftl);
    if (err) {
        csim_set_error_(err);
        return NULL;
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        csim_set_error_("out of memory");
        return NULL;
    }
    s->geo = *geo;
    s->cost = *cost;
    if (geo->medium == CAIRN_MEDIUM_BLOCK)
        s->ftl = *ftl;
    if (name) {
        strncpy(s->model, name, sizeof(s->model) - 1);
        s->model[sizeof(s->model) - 1] = '\0';
    }
    s->ps = geo->page_size;
    s->ppb = geo->pages_per_block;
    s->block_bytes = geo->page_size * geo->pages_per_block;
    s->spare_off = s->block_bytes;
    s->nop_off = s->block_bytes + geo->pages_per_block * geo->spare_size;
    s->mem_bytes = (size_t)s->nop_off + geo->pages_per_block;
    s->total_pages = geo->block_count * geo->pages_per_block;
    s->blk = calloc(geo->block_count, sizeof(*s->blk));
    if (!s->blk)
        goto oom;
    if (geo->medium == CAIRN_MEDIUM_BLOCK) {
        s->spa = ftl->au_bytes / geo->page_size;
        s->spf = ftl->flash_page_bytes / geo->page_size;
        s->au_count = (uint32_t)((uint64_t)s->total_pages / s->spa);
        s->live = calloc(((size_t)s->total_pages + 63) / 64, sizeof(uint64_t));
        s->has_data = calloc(s->au_count, 1);
        s->slots = calloc(ftl->open_aus, sizeof(*s->slots));
        if (!s->live || !s->has_data || !s->slots)
            goto oom;
    }
    if (opt && opt->image_path) {
        size_t n = strlen(opt->image_path);
        s->path = malloc(n + 1);
        if (!s->path)
            goto oom;
        memcpy(s->path, opt->image_path, n + 1);
    }
    s->seed = opt ? opt->seed : 0;
    s->rng_tear = stream_seed(s->seed, 1);
    s->rng_flip = stream_seed(s->seed, 2);
    s->rng_weak = stream_seed(s->seed, 3);
    s->powered = 1;

    s->dev.ctx = s;
    s->dev.geo = s->geo;
    s->dev.read = dev_read;
    s->dev.read_spare = geo->spare_size ? dev_read_spare : NULL;
    s->dev.prog = dev_prog;
    s->dev.erase = dev_erase;
    s->dev.is_bad = dev_is_bad;
    s->dev.mark_bad = dev_mark_bad;
    s->dev.sync = dev_sync;
    return s;
oom:
    csim_destroy_(s);
    csim_set_error_("out of memory");
    return NULL;
}

void csim_destroy_(csim *s)
{
    uint32_t b;
    if (!s)
        return;
    if (s->blk) {
        for (b = 0; b < s->geo.block_count; b++) {
            free(s->blk[b].mem);
            free(s->blk[b].weak);
        }
    }
    free(s->blk);
    free(s->live);
    free(s->has_data);
    free(s->slots);
    free(s->fail_ops);
    free(s->path);
    free(s);
}

static void apply_overrides(struct cairn_geometry *g,
                            const struct csim_options *o)
{
    if (o->block_count)
        g->block_count = o->block_count;
    if (o->blocks_per_lblock)
        g->blocks_per_lblock = o->blocks_per_lblock;
}

static csim *create(const struct cairn_geometry *geo,
                    const struct csim_cost *cost, const struct csim_ftl *ftl,
                    const char *name, const struct csim_options *o)
{
    csim *s = csim_alloc_(geo, cost, ftl, name, o);
    if (s && s->path && csim_save(s) != 0) {
        free(s->path);
        s->path = NULL; /* nothing to save at destroy */
        csim_destroy_(s);
        return NULL;
    }
    return s;
}

csim *csim_new(const char *model, const struct csim_options *opt)
{
    struct csim_options o;
    struct cairn_geometry g;
    const struct model *m;
    memset(&o, 0, sizeof(o));
    if (opt)
        o = *opt;
    if (o.image_path && !o.create)
        return csim_load_(o.image_path, model, &o);
    m = find_model(model);
    if (!m) {
        csim_set_error_("unknown model name");
        return NULL;
    }
    g = m->geo;
    apply_overrides(&g, &o);
    return create(&g, &m->cost, &m->ftl, m->name, &o);
}

csim *csim_new_custom(const struct cairn_geometry *geo,
                      const struct csim_cost *cost, const struct csim_ftl *ftl,
                      const struct csim_options *opt)
{
    struct csim_options o;
    struct cairn_geometry g;
    memset(&o, 0, sizeof(o));
    if (opt)
        o = *opt;
    if (o.image_path && !o.create)
        return csim_load_(o.image_path, NULL, &o);
    if (!geo || !cost) {
        csim_set_error_("csim_new_custom: geometry and cost are required");
        return NULL;
    }
    g = *geo;
    apply_overrides(&g, &o);
    return create(&g, cost, ftl, "custom", &o);
}

void csim_free(csim *s)
{
    if (!s)
        return;
    if (s->path)
        (void)csim_save(s);
    csim_destroy_(s);
}

struct cairn_dev *csim_dev(csim *s) { return &s->dev; }
const struct cairn_geometry *csim_geometry(const csim *s) { return &s->geo; }

void csim_counters(const csim *s, struct csim_counters *out) { *out = s->c; }

void csim_reset_counters(csim *s)
{
    uint64_t keep = s->c.mutating_ops;
    memset(&s->c, 0, sizeof(s->c));
    s->c.mutating_ops = keep;
}

uint32_t csim_erase_count(const csim *s, uint32_t block)
{
    return block < s->geo.block_count ? s->blk[block].erase_count : 0;
}

const char *csim_last_violation(const csim *s) { return s->violation; }

/* ------------------------------------------------------------- utilities */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int violation(csim *s, const char *fmt, ...)
{
    va_list ap;
    s->c.violations++;
    va_start(ap, fmt);
    vsnprintf(s->violation, sizeof(s->violation), fmt, ap);
    va_end(ap);
    return CAIRN_DEV_RULE;
}

static uint64_t xfer_ns(uint64_t bytes, uint64_t bytes_per_s)
{
    return bytes_per_s ? bytes * 1000000000ull / bytes_per_s : 0;
}

static int ensure_mem(csim *s, struct blk *bk)
{
    if (bk->mem)
        return 0;
    bk->mem = malloc(s->mem_bytes);
    if (!bk->mem)
        return -1;
    memset(bk->mem, 0xFF, s->nop_off);
    memset(bk->mem + s->nop_off, 0, s->ppb);
    return 0;
}

/* Full erase of a block's content (not its bad/worn state). */
static void wipe(csim *s, struct blk *bk)
{
    if (bk->mem) {
        memset(bk->mem, 0xFF, s->nop_off);
        memset(bk->mem + s->nop_off, 0, s->ppb);
    }
    bk->top = 0;
    free(bk->weak);
    bk->weak = NULL;
    bk->flags &= ~(uint32_t)BF_WEAK;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void store64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Index of the first byte where `nw` has a 1 bit that `old` lacks, or n. */
static uint32_t nor_first_bad(const uint8_t *old, const uint8_t *nw,
                              uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t o = load64(old + i), w = load64(nw + i);
        if ((o & w) != w)
            break;
    }
    for (; i < n; i++)
        if ((old[i] & nw[i]) != nw[i])
            return i;
    return n;
}

/* dst &= src (programming clears bits only). */
static void and_into(uint8_t *dst, const uint8_t *src, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8)
        store64(dst + i, load64(dst + i) & load64(src + i));
    for (; i < n; i++)
        dst[i] = (uint8_t)(dst[i] & src[i]);
}

/* Programs n bytes the way the medium does. */
static void store_bytes(csim *s, uint8_t *dst, const uint8_t *src, uint32_t n)
{
    if (n == 0)
        return;
    if (s->geo.medium == CAIRN_MEDIUM_NAND)
        and_into(dst, src, n);
    else
        memcpy(dst, src, n); /* BLOCK overwrites; NOR was checked: old&new==new */
}

/* Torn program, RANDOM mode: clears a random subset of the bits it would. */
static void random_clear(csim *s, uint8_t *dst, const uint8_t *src, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t o = load64(dst + i), w = load64(src + i);
        uint64_t clr = o & ~w & csim_rng_(&s->rng_tear);
        store64(dst + i, o & ~clr);
    }
    if (i < n) {
        uint64_t r = csim_rng_(&s->rng_tear);
        for (; i < n; i++, r >>= 8) {
            unsigned clr = (unsigned)(dst[i] & ~src[i]) & (unsigned)(r & 0xFF);
            dst[i] = (uint8_t)(dst[i] & ~clr);
        }
    }
}

/* Pending csim_fail_op index? Consumes it. */
static int take_fail(csim *s, uint64_t idx)
{
    size_t i;
    for (i = 0; i < s->n_fail; i++) {
        if (s->fail_ops[i] == idx) {
            s->fail_ops[i] = s->fail_ops[--s->n_fail];
            return 1;
        }
    }
    return 0;
}

/* -------------------------------------------------------- weak blocks */

/* First program into page `pg` of a weak block: choose 1-3 bit positions
 * (inside the bytes [lo, hi) of the page this program wrote) that will read
 * back wrong. */
static void weak_mark(csim *s, struct blk *bk, uint32_t pg, uint32_t lo,
                      uint32_t hi)
{
    struct weak_page *w = &bk->weak[pg];
    const uint8_t *d = bk->mem + (size_t)pg * s->ps;
    uint32_t k, t;
    if (w->n)
        return;
    if (hi <= lo) {
        lo = 0;
        hi = s->ps;
    }
    w->n = (uint8_t)(1 + csim_below_(&s->rng_weak, 3));
    for (k = 0; k < w->n; k++) {
        uint32_t byte = lo, bit = 0, j;
        for (t = 0; t < 64; t++) {
            byte = lo + csim_below_(&s->rng_weak, hi - lo);
            bit = csim_below_(&s->rng_weak, 8);
            for (j = 0; j < k && w->pos[j] != byte * 8 + bit; j++)
                ;
            if (j < k)
                continue; /* distinct positions (there are >= 8) */
            /* NOR: prefer a bit that reads 1, so that the flip shows. */
            if (s->geo.medium != CAIRN_MEDIUM_NOR || ((d[byte] >> bit) & 1u) ||
                t >= 32)
                break;
        }
        w->pos[k] = byte * 8 + bit;
    }
}

/* Marks the pages of a program [start, start + len) (byte offsets in the
 * block) in a weak block. */
static void weak_mark_range(csim *s, struct blk *bk, uint32_t start,
                            uint32_t len)
{
    uint32_t ps = s->ps, pg, last;
    if (!bk->weak)
        return;
    if (len == 0) { /* spare-only program */
        weak_mark(s, bk, start / ps, 0, 0);
        return;
    }
    last = (start + len - 1) / ps;
    for (pg = start / ps; pg <= last; pg++) {
        uint32_t p0 = pg * ps;
        uint32_t lo = start > p0 ? start - p0 : 0;
        uint32_t hi = start + len < p0 + ps ? start + len - p0 : ps;
        weak_mark(s, bk, pg, lo, hi);
    }
}

/* NOR: weak pages read back with their chosen bits cleared. */
static void nor_weak_apply(csim *s, const struct blk *bk, uint32_t start,
                           uint8_t *buf, uint32_t len)
{
    uint32_t pg, k, last = (start + len - 1) / s->ps;
    for (pg = start / s->ps; pg <= last; pg++) {
        const struct weak_page *w = &bk->weak[pg];
        for (k = 0; k < w->n; k++) {
            uint32_t byte = pg * s->ps + w->pos[k] / 8;
            if (byte >= start && byte - start < len)
                buf[byte - start] =
                    (uint8_t)(buf[byte - start] & ~(1u << (w->pos[k] % 8)));
        }
    }
}

/* ---------------------------------------------------------- bit flips */

static int worse(int a, int b)
{
    if (a == CAIRN_DEV_UNCORRECTABLE || b == CAIRN_DEV_UNCORRECTABLE)
        return CAIRN_DEV_UNCORRECTABLE;
    if (a == CAIRN_DEV_CORRECTED || b == CAIRN_DEV_CORRECTED)
        return CAIRN_DEV_CORRECTED;
    return CAIRN_DEV_OK;
}

/* ECC outcome of one NAND page read. `buf`/`n` is the part of the returned
 * buffer that belongs to this page; `base` is the page byte offset of buf[0]
 * (for weak positions; spare reads pass UINT32_MAX: positions wrap). */
static int page_ecc(csim *s, const struct blk *bk, uint32_t pg, uint8_t *buf,
                    uint32_t n, uint32_t base)
{
    int r = CAIRN_DEV_OK;
    uint32_t k;
    if (bk->weak && bk->weak[pg].n) {
        const struct weak_page *w = &bk->weak[pg];
        if (w->n <= 1) {
            r = CAIRN_DEV_CORRECTED;
        } else {
            r = CAIRN_DEV_UNCORRECTABLE;
            for (k = 0; k < w->n && n; k++) {
                uint32_t byte = w->pos[k] / 8;
                if (base == UINT32_MAX)
                    byte %= n;
                else if (byte < base || byte - base >= n)
                    continue;
                else
                    byte -= base;
                buf[byte] = (uint8_t)(buf[byte] ^ (1u << (w->pos[k] % 8)));
            }
        }
    }
    if (s->corr_ppm || s->unc_ppm) {
        uint32_t u = csim_below_(&s->rng_flip, 1000000);
        if (u < s->unc_ppm) {
            /* 2-4 distinct bits of this page's part of the buffer */
            uint32_t nflip = 2 + csim_below_(&s->rng_flip, 3), pos[4], j;
            r = CAIRN_DEV_UNCORRECTABLE;
            if (nflip > n * 8)
                nflip = n * 8;
            for (k = 0; k < nflip; k++) {
                do {
                    pos[k] = csim_below_(&s->rng_flip, n * 8);
                    for (j = 0; j < k && pos[j] != pos[k]; j++)
                        ;
                } while (j < k);
                buf[pos[k] / 8] =
                    (uint8_t)(buf[pos[k] / 8] ^ (1u << (pos[k] % 8)));
            }
        } else if (u < (uint64_t)s->unc_ppm + s->corr_ppm) {
            r = worse(r, CAIRN_DEV_CORRECTED);
        }
    }
    return r;
}

static int count_result(csim *s, int r)
{
    if (r == CAIRN_DEV_CORRECTED)
        s->c.corrected++;
    else if (r == CAIRN_DEV_UNCORRECTABLE)
        s->c.uncorrectable++;
    return r;
}

/* ----------------------------------------------------------------- reads */

/* NOR and BLOCK: a read may run on into the following erase blocks (a NOR
 * chip streams across its whole array, a card reads multiple blocks), at the
 * cost of one call: each block's piece is read, then the counters are set
 * back to count a single call. */
static int read_across(csim *s, uint32_t page, uint32_t off, uint8_t *out, uint32_t len)
{
    struct csim_counters before = s->c;
    int r = CAIRN_DEV_OK;
    uint64_t end = (uint64_t)page * s->ps + off + len;
    if (end > (uint64_t)s->total_pages * s->ps)
        return violation(s, "read: page %lu off %lu len %lu runs past the device",
                         (unsigned long)page, (unsigned long)off, (unsigned long)len);
    while (len > 0) {
        uint32_t start = (page % s->ppb) * s->ps + off;
        uint32_t n = len < s->block_bytes - start ? len : s->block_bytes - start;
        int r1 = dev_read(s, page, off, out, n);
        if (r1 < 0)
            return r1;
        r = worse(r, r1);
        out += n;
        len -= n;
        page = (page / s->ppb + 1) * s->ppb;
        off = 0;
    }
    s->c.read_calls = before.read_calls + 1;
    s->c.time_ns = before.time_ns + s->cost.read_setup_ns +
                   xfer_ns(s->c.read_bytes - before.read_bytes, s->cost.read_bytes_per_s);
    return r;
}

static int dev_read(void *ctx, uint32_t page, uint32_t off, void *buf,
                    uint32_t len)
{
    csim *s = ctx;
    uint32_t ps = s->ps, pib, start, npages;
    struct blk *bk;
    uint8_t *out = buf;
    int r = CAIRN_DEV_OK;

    if (!s->powered)
        return CAIRN_DEV_IO;
    if (page >= s->total_pages)
        return violation(s, "read: page %lu beyond the device (%lu pages)",
                         (unsigned long)page, (unsigned long)s->total_pages);
    if (off >= ps)
        return violation(s, "read: off %lu not inside the page (page_size %lu)",
                         (unsigned long)off, (unsigned long)ps);
    pib = page % s->ppb;
    start = pib * ps + off;
    if (s->geo.medium != CAIRN_MEDIUM_NAND && len > s->block_bytes - start)
        return read_across(s, page, off, out, len);
    if (len > s->block_bytes - start)
        return violation(s,
                         "read: page %lu off %lu len %lu runs past the end of "
                         "erase block %lu",
                         (unsigned long)page, (unsigned long)off,
                         (unsigned long)len, (unsigned long)(page / s->ppb));
    if (len && !buf)
        return violation(s, "read: NULL buffer");
    bk = &s->blk[page / s->ppb];
    if (len) {
        if (bk->flags & BF_FACTORY)
            memset(out, 0x00, len); /* a factory-bad block reads garbage */
        else if (bk->mem)
            memcpy(out, bk->mem + start, len);
        else
            memset(out, 0xFF, len);
    }
    npages = len ? (start + len - 1) / ps - start / ps + 1 : 0;
    s->c.read_calls++;
    s->c.read_bytes += len;
    s->c.time_ns += (s->geo.medium == CAIRN_MEDIUM_NAND
                         ? s->cost.read_setup_ns * npages
                         : s->cost.read_setup_ns) +
                    xfer_ns(len, s->cost.read_bytes_per_s);
    if (!len || (bk->flags & BF_FACTORY))
        return CAIRN_DEV_OK;
    if (s->geo.medium == CAIRN_MEDIUM_NAND) {
        if (bk->weak || s->corr_ppm || s->unc_ppm) {
            uint32_t pg, last = (start + len - 1) / ps;
            for (pg = start / ps; pg <= last; pg++) {
                uint32_t p0 = pg * ps;
                uint32_t lo = p0 > start ? p0 - start : 0;
                uint32_t hi = p0 + ps < start + len ? p0 + ps - start : len;
                r = worse(r, page_ecc(s, bk, pg, out + lo, hi - lo,
                                      start + lo - p0));
            }
        }
    } else if (s->geo.medium == CAIRN_MEDIUM_NOR && bk->weak) {
        nor_weak_apply(s, bk, start, out, len);
    }
    return count_result(s, r);
}

static int dev_read_spare(void *ctx, uint32_t page, void *buf, uint32_t len)
{
    csim *s = ctx;
    struct blk *bk;
    uint32_t pib;
    uint8_t *out = buf;
    int r = CAIRN_DEV_OK;

    if (!s->powered)
        return CAIRN_DEV_IO;
    if (page >= s->total_pages)
        return violation(s, "read_spare: page %lu beyond the device (%lu pages)",
                         (unsigned long)page, (unsigned long)s->total_pages);
    if (len > s->geo.spare_size)
        return violation(s, "read_spare: len %lu > spare_size %lu",
                         (unsigned long)len, (unsigned long)s->geo.spare_size);
    if (len && !buf)
        return violation(s, "read_spare: NULL buffer");
    bk = &s->blk[page / s->ppb];
    pib = page % s->ppb;
    if (len) {
        if (bk->flags & BF_FACTORY)
            memset(out, 0x00, len);
        else if (bk->mem)
            memcpy(out, bk->mem + s->spare_off + (size_t)pib * s->geo.spare_size,
                   len);
        else
            memset(out, 0xFF, len);
    }
    s->c.read_calls++;
    s->c.spare_reads++;
    s->c.read_bytes += len;
    s->c.time_ns += s->cost.read_setup_ns + xfer_ns(len, s->cost.read_bytes_per_s);
    if (len && !(bk->flags & BF_FACTORY) &&
        s->geo.medium == CAIRN_MEDIUM_NAND &&
        (bk->weak || s->corr_ppm || s->unc_ppm))
        r = page_ecc(s, bk, pib, out, len, UINT32_MAX);
    return count_result(s, r);
}

/* -------------------------------------------------------------- programs */

static void nand_count(csim *s, struct blk *bk, uint32_t first, uint32_t last)
{
    uint8_t *nop = bk->mem + s->nop_off;
    uint32_t p;
    for (p = first; p <= last; p++)
        if (nop[p] < 255)
            nop[p]++;
    if (bk->top < last + 1)
        bk->top = last + 1;
}

/* A power cut tears this program. */
static void tear_prog(csim *s, struct blk *bk, uint32_t page, uint32_t off,
                      const uint8_t *d, uint32_t len, const uint8_t *sp,
                      uint32_t spare_len, uint32_t npages)
{
    uint32_t ps = s->ps, pib = page % s->ppb;
    uint32_t start = pib * ps + off;
    uint8_t *dst, *sdst;
    uint32_t medium = s->geo.medium;

    if (s->cut_tear == CSIM_TEAR_NONE || npages == 0 || (bk->flags & BF_WORN))
        return;
    if (ensure_mem(s, bk))
        return;
    dst = bk->mem + start;
    sdst = bk->mem + s->spare_off + (size_t)pib * s->geo.spare_size;

    if (s->cut_tear == CSIM_TEAR_EMPTY) {
        if (medium == CAIRN_MEDIUM_NAND)
            nand_count(s, bk, pib, pib);
        return;
    }
    if (s->cut_tear == CSIM_TEAR_PREFIX) {
        /* The byte stream data || spare stops after n bytes, 0 <= n < total:
         * the spare is programmed (partly) only once all data was. */
        uint32_t total = len + spare_len;
        uint32_t n = csim_below_(&s->rng_tear, total);
        uint32_t dlen = n < len ? n : len, lastp;
        store_bytes(s, dst, d, dlen);
        if (n > len)
            store_bytes(s, sdst, sp, n - len);
        if (medium == CAIRN_MEDIUM_BLOCK) {
            if (dlen)
                csim_ftl_write_(s, page, (dlen + ps - 1) / ps);
            return;
        }
        /* pages started: up to the one the cut fell in */
        lastp = (dlen < len) ? (off + dlen) / ps : (len ? (off + len - 1) / ps : 0);
        if (lastp > npages - 1)
            lastp = npages - 1;
        if (medium == CAIRN_MEDIUM_NAND)
            nand_count(s, bk, pib, pib + lastp);
        if (bk->weak)
            weak_mark_range(s, bk, start, dlen);
        return;
    }

    /* CSIM_TEAR_RANDOM */
    if (medium == CAIRN_MEDIUM_BLOCK) {
        /* sectors before k new, sector k a byte mix, later sectors old */
        uint32_t k = csim_below_(&s->rng_tear, npages), i;
        uint8_t *sec;
        const uint8_t *src;
        uint64_t r = 0;
        memcpy(dst, d, (size_t)k * ps);
        sec = dst + (size_t)k * ps;
        src = d + (size_t)k * ps;
        for (i = 0; i < ps; i++) {
            if (i % 64 == 0)
                r = csim_rng_(&s->rng_tear);
            if ((r >> (i % 64)) & 1u)
                sec[i] = src[i];
        }
        csim_ftl_write_(s, page, k + 1);
        return;
    }
    random_clear(s, dst, d, len);
    random_clear(s, sdst, sp, spare_len);
    if (medium == CAIRN_MEDIUM_NAND)
        nand_count(s, bk, pib, pib + npages - 1);
    if (bk->weak)
        weak_mark_range(s, bk, start, len);
}

static int dev_prog(void *ctx, uint32_t page, uint32_t off, const void *data,
                    uint32_t len, const void *spare, uint32_t spare_len)
{
    csim *s = ctx;
    const uint8_t *d = data, *sp = spare;
    uint32_t ps = s->ps, pib, start, npages;
    uint32_t medium = s->geo.medium;
    struct blk *bk;
    uint64_t idx, cost, setups;

    if (!s->powered)
        return CAIRN_DEV_IO;
    if (page >= s->total_pages)
        return violation(s, "prog: page %lu beyond the device (%lu pages)",
                         (unsigned long)page, (unsigned long)s->total_pages);
    if (len && !data)
        return violation(s, "prog: NULL data");
    if (spare_len && !spare)
        return violation(s, "prog: NULL spare");
    pib = page % s->ppb;
    bk = &s->blk[page / s->ppb];
    if (medium == CAIRN_MEDIUM_BLOCK && (off != 0 || len == 0 || len % ps))
        return violation(s,
                         "prog: BLOCK medium needs off 0 and whole sectors "
                         "(page %lu off %lu len %lu)",
                         (unsigned long)page, (unsigned long)off,
                         (unsigned long)len);
    if (len > ps) {
        if (off != 0 || len % ps)
            return violation(s,
                             "prog: multi-page program needs off 0 and whole "
                             "pages (page %lu off %lu len %lu)",
                             (unsigned long)page, (unsigned long)off,
                             (unsigned long)len);
        if (len / ps > s->ppb - pib)
            return violation(s,
                             "prog: multi-page program from page %lu (%lu "
                             "pages) runs past its erase block",
                             (unsigned long)page, (unsigned long)(len / ps));
        if (spare)
            return violation(s, "prog: multi-page program with spare");
        npages = len / ps;
    } else {
        if (off > ps || len > ps - off)
            return violation(s,
                             "prog: page %lu off %lu len %lu runs past the page",
                             (unsigned long)page, (unsigned long)off,
                             (unsigned long)len);
        npages = (len || spare_len) ? 1 : 0;
    }
    if (spare_len > s->geo.spare_size)
        return violation(s, "prog: spare_len %lu > spare_size %lu",
                         (unsigned long)spare_len,
                         (unsigned long)s->geo.spare_size);
    start = pib * ps + off;
    if (medium == CAIRN_MEDIUM_NOR && bk->mem && !(bk->flags & BF_FACTORY)) {
        uint32_t i = nor_first_bad(bk->mem + start, d, len);
        if (i < len)
            return violation(s,
                             "prog: NOR bit 0->1 at page %lu byte %lu (old "
                             "0x%02x new 0x%02x)",
                             (unsigned long)(page + (off + i) / ps),
                             (unsigned long)((off + i) % ps),
                             (unsigned)bk->mem[start + i], (unsigned)d[i]);
        if (spare_len) {
            const uint8_t *os =
                bk->mem + s->spare_off + (size_t)pib * s->geo.spare_size;
            i = nor_first_bad(os, sp, spare_len);
            if (i < spare_len)
                return violation(s, "prog: NOR bit 0->1 in spare of page %lu",
                                 (unsigned long)page);
        }
    }
    if (medium == CAIRN_MEDIUM_NAND && npages) {
        if (bk->top > pib + 1)
            return violation(s,
                             "prog: NAND page %lu (page %lu of block %lu) after "
                             "page %lu of that block: pages go in increasing "
                             "order",
                             (unsigned long)page, (unsigned long)pib,
                             (unsigned long)(page / s->ppb),
                             (unsigned long)(bk->top - 1));
        if (s->geo.max_partial_programs && bk->mem &&
            bk->mem[s->nop_off + pib] >= s->geo.max_partial_programs)
            return violation(s,
                             "prog: NAND page %lu programmed more than NOP=%lu "
                             "times since its erase",
                             (unsigned long)page,
                             (unsigned long)s->geo.max_partial_programs);
    }

    idx = s->c.mutating_ops++;
    s->c.prog_calls++;
    if (s->cut_armed && idx == s->cut_index) {
        tear_prog(s, bk, page, off, d, len, sp, spare_len, npages);
        s->cut_armed = 0;
        s->powered = 0;
        return CAIRN_DEV_IO;
    }
    /* Raw flash takes at most one page per program command (SPI NOR's page
     * program, NAND's program page), so a multi-page call pays the command
     * setup once per page; a card takes a multi-sector write as one command. */
    setups = medium == CAIRN_MEDIUM_BLOCK || npages == 0 ? 1 : npages;
    cost = s->cost.prog_setup_ns * setups +
           xfer_ns((uint64_t)len + spare_len, s->cost.prog_bytes_per_s) +
           s->cost.prog_page_ns * npages;
    s->c.time_ns += cost;
    if (s->n_fail && take_fail(s, idx)) {
        bk->flags |= BF_WORN;
        return CAIRN_DEV_PROG_FAIL;
    }
    if (bk->flags & BF_WORN)
        return CAIRN_DEV_PROG_FAIL;
    if (npages == 0)
        return CAIRN_DEV_OK;
    if (ensure_mem(s, bk))
        return CAIRN_DEV_IO;
    store_bytes(s, bk->mem + start, d, len);
    if (spare_len)
        store_bytes(s, bk->mem + s->spare_off + (size_t)pib * s->geo.spare_size,
                    sp, spare_len);
    if (medium == CAIRN_MEDIUM_NAND)
        nand_count(s, bk, pib, pib + npages - 1);
    if (bk->weak)
        weak_mark_range(s, bk, start, len);
    s->c.prog_bytes += (uint64_t)len + spare_len;
    s->c.prog_pages += npages;
    if (medium == CAIRN_MEDIUM_BLOCK)
        csim_ftl_write_(s, page, npages);
    return CAIRN_DEV_OK;
}

/* ---------------------------------------------------------------- erases */

static void recompute_top(csim *s, struct blk *bk)
{
    uint32_t p;
    bk->top = 0;
    if (!bk->mem)
        return;
    for (p = s->ppb; p > 0; p--) {
        if (bk->mem[s->nop_off + p - 1]) {
            bk->top = p;
            return;
        }
    }
}

static void tear_erase(csim *s, struct blk *bk, uint32_t block)
{
    uint32_t ps = s->ps, n, full, p;
    if (s->cut_tear == CSIM_TEAR_NONE || (bk->flags & BF_WORN))
        return;
    bk->erase_count++;
    if (s->cut_tear == CSIM_TEAR_EMPTY)
        return;
    if (s->geo.medium == CAIRN_MEDIUM_BLOCK) {
        /* a discard is per sector: a prefix of whole sectors (PREFIX) or all
         * of them (RANDOM; cards have their own ECC, no weak state) */
        uint32_t k = s->cut_tear == CSIM_TEAR_PREFIX
                         ? csim_below_(&s->rng_tear, s->ppb)
                         : s->ppb;
        if (bk->mem)
            memset(bk->mem, 0xFF, (size_t)k * ps);
        csim_ftl_discard_(s, block * s->ppb, k);
        return;
    }
    if (s->cut_tear == CSIM_TEAR_RANDOM) {
        wipe(s, bk);
        bk->weak = calloc(s->ppb, sizeof(*bk->weak));
        if (bk->weak)
            bk->flags |= BF_WEAK;
        return;
    }
    /* PREFIX: bytes [0, n) erased; the boundary page is half erased and
     * keeps its spare and its program count */
    n = csim_below_(&s->rng_tear, s->block_bytes);
    if (!bk->mem)
        return;
    full = n / ps;
    memset(bk->mem, 0xFF, n);
    memset(bk->mem + s->spare_off, 0xFF, (size_t)full * s->geo.spare_size);
    memset(bk->mem + s->nop_off, 0, full);
    if (bk->weak)
        for (p = 0; p < full; p++)
            bk->weak[p].n = 0;
    recompute_top(s, bk);
}

static int dev_erase(void *ctx, uint32_t block)
{
    csim *s = ctx;
    struct blk *bk;
    uint64_t idx;

    if (!s->powered)
        return CAIRN_DEV_IO;
    if (block >= s->geo.block_count)
        return violation(s, "erase: block %lu beyond the device (%lu blocks)",
                         (unsigned long)block,
                         (unsigned long)s->geo.block_count);
    bk = &s->blk[block];
    idx = s->c.mutating_ops++;
    s->c.erases++;
    if (s->cut_armed && idx == s->cut_index) {
        tear_erase(s, bk, block);
        s->cut_armed = 0;
        s->powered = 0;
        return CAIRN_DEV_IO;
    }
    s->c.time_ns += s->cost.erase_ns;
    if (s->n_fail && take_fail(s, idx)) {
        bk->flags |= BF_WORN;
        return CAIRN_DEV_ERASE_FAIL;
    }
    if (bk->flags & BF_WORN)
        return CAIRN_DEV_ERASE_FAIL;
    if (bk->flags & BF_WEAR_ARMED) {
        if (bk->wear_left == 0) {
            bk->flags = (bk->flags | BF_WORN) & ~(uint32_t)BF_WEAR_ARMED;
            return CAIRN_DEV_ERASE_FAIL;
        }
        bk->wear_left--;
    }
    wipe(s, bk);
    bk->erase_count++;
    if (s->geo.medium == CAIRN_MEDIUM_BLOCK)
        csim_ftl_discard_(s, block * s->ppb, s->ppb);
    return CAIRN_DEV_OK;
}

/* ----------------------------------------------------- bad blocks, sync */

static int dev_is_bad(void *ctx, uint32_t block)
{
    csim *s = ctx;
    if (!s->powered)
        return CAIRN_DEV_IO;
    if (block >= s->geo.block_count)
        return violation(s, "is_bad: block %lu beyond the device",
                         (unsigned long)block);
    return (s->blk[block].flags & BF_MARKED) ? 1 : 0;
}

static int dev_mark_bad(void *ctx, uint32_t block)
{
    csim *s = ctx;
    if (!s->powered)
        return CAIRN_DEV_IO;
    if (block >= s->geo.block_count)
        return violation(s, "mark_bad: block %lu beyond the device",
                         (unsigned long)block);
    s->blk[block].flags |= BF_MARKED;
    return CAIRN_DEV_OK;
}

static int dev_sync(void *ctx)
{
    csim *s = ctx;
    if (!s->powered)
        return CAIRN_DEV_IO;
    if (s->geo.medium == CAIRN_MEDIUM_BLOCK)
        csim_ftl_sync_(s);
    return CAIRN_DEV_OK;
}

/* ------------------------------------------------------- fault controls */

void csim_cut_at(csim *s, uint64_t op_index, enum csim_tear tear)
{
    s->cut_armed = 1;
    s->cut_index = op_index;
    s->cut_tear = tear;
}

void csim_cut_cancel(csim *s) { s->cut_armed = 0; }

int csim_powered(const csim *s) { return s->powered; }

void csim_power_on(csim *s)
{
    s->powered = 1;
    s->cut_armed = 0;
    s->n_fail = 0; /* op indexes restart at 0: a pending failure must not
                      fire at an unrelated op of the next boot */
    s->c.mutating_ops = 0;
}

void csim_set_factory_bad(csim *s, uint32_t block)
{
    if (block < s->geo.block_count)
        s->blk[block].flags |= BF_FACTORY | BF_MARKED | BF_WORN;
}

void csim_wear_out_after(csim *s, uint32_t block, uint32_t erases)
{
    if (block < s->geo.block_count) {
        s->blk[block].flags |= BF_WEAR_ARMED;
        s->blk[block].wear_left = erases;
    }
}

void csim_wear_out_now(csim *s, uint32_t block)
{
    if (block < s->geo.block_count)
        s->blk[block].flags = (s->blk[block].flags | BF_WORN) & ~(uint32_t)BF_WEAR_ARMED;
}

void csim_fail_op(csim *s, uint64_t op_index)
{
    if (s->n_fail == s->cap_fail) {
        size_t cap = s->cap_fail ? s->cap_fail * 2 : 8;
        uint64_t *p = realloc(s->fail_ops, cap * sizeof(*p));
        if (!p)
            return;
        s->fail_ops = p;
        s->cap_fail = cap;
    }
    s->fail_ops[s->n_fail++] = op_index;
}

void csim_fail_cancel(csim *s) { s->n_fail = 0; }

void csim_set_bitflips(csim *s, uint32_t corrected_ppm,
                       uint32_t uncorrectable_ppm)
{
    s->corr_ppm = corrected_ppm;
    s->unc_ppm = uncorrectable_ppm;
}

/* ---------------------------------------------------------- peek / poke */

int csim_peek(const csim *s, uint32_t page, void *data, void *spare)
{
    const struct blk *bk;
    uint32_t pib;
    if (page >= s->total_pages)
        return -1;
    bk = &s->blk[page / s->ppb];
    pib = page % s->ppb;
    if (data) {
        if (bk->mem)
            memcpy(data, bk->mem + (size_t)pib * s->ps, s->ps);
        else
            memset(data, 0xFF, s->ps);
    }
    if (spare && s->geo.spare_size) {
        if (bk->mem)
            memcpy(spare, bk->mem + s->spare_off + (size_t)pib * s->geo.spare_size,
                   s->geo.spare_size);
        else
            memset(spare, 0xFF, s->geo.spare_size);
    }
    return 0;
}

int csim_poke(csim *s, uint32_t page, const void *data, const void *spare)
{
    struct blk *bk;
    uint32_t pib;
    if (page >= s->total_pages)
        return -1;
    bk = &s->blk[page / s->ppb];
    pib = page % s->ppb;
    if (!data && !(spare && s->geo.spare_size))
        return 0;
    if (ensure_mem(s, bk))
        return -1;
    if (data)
        memcpy(bk->mem + (size_t)pib * s->ps, data, s->ps);
    if (spare && s->geo.spare_size)
        memcpy(bk->mem + s->spare_off + (size_t)pib * s->geo.spare_size, spare,
               s->geo.spare_size);
    return 0;
}

int csim_peek_block(const csim *s, uint32_t block, void *data, void *spare)
{
    const struct blk *bk;
    size_t spare_bytes = (size_t)s->ppb * s->geo.spare_size;
    if (block >= s->geo.block_count)
        return -1;
    bk = &s->blk[block];
    if (data) {
        if (bk->mem)
            memcpy(data, bk->mem, s->block_bytes);
        else
            memset(data, 0xFF, s->block_bytes);
    }
    if (spare && spare_bytes) {
        if (bk->mem)
            memcpy(spare, bk->mem + s->spare_off, spare_bytes);
        else
            memset(spare, 0xFF, spare_bytes);
    }
    return 0;
}

int csim_poke_block(csim *s, uint32_t block, const void *data, const void *spare)
{
    struct blk *bk;
    size_t spare_bytes = (size_t)s->ppb * s->geo.spare_size;
    if (block >= s->geo.block_count)
        return -1;
    bk = &s->blk[block];
    if (!data && !(spare && spare_bytes))
        return 0;
    if (ensure_mem(s, bk))
        return -1;
    if (data)
        memcpy(bk->mem, data, s->block_bytes);
    if (spare && spare_bytes)
        memcpy(bk->mem + s->spare_off, spare, spare_bytes);
    return 0;
}
