/*
 * test_bd: the sector interface (cairn_bd_*).
 *
 * 1. Model runs: random write / read / trim / sync / remount steps on NOR,
 *    NAND and BLOCK volumes with sectors smaller than, equal to and larger
 *    than a page, compared with an in-memory array after every read, in full
 *    after every remount (cairn_check must be clean after each mount).
 * 2. Power cuts: a short scenario of writes, trims and syncs, cut at every
 *    Nth mutating op (both tear modes); after recovery cairn_check is clean and
 *    each sector holds its last synced content or one written after it (per
 *    page for sectors larger than a page: a multi-page sector may be torn
 *    between pages, as on a disk that only promises sector atomicity for its
 *    own sector size).
 * 3. Costs: device reads of a sequential sector-by-sector read of a cold
 *    volume (at most the data pages plus a small constant: the extent cursor
 *    at work), reads while rewriting whole pages (none), pages programmed per
 *    sector written, and the flash space a trim gives back.
 * 4. Error codes: bad pointers, geometry, ranges, handles, read-only mounts.
 *
 * Usage: test_bd [seed]  (CAIRN_TEST_SEED; CAIRN_TEST_SCALE multiplies the
 * model runs, CAIRN_TEST_STEPS their steps (default 500)).
 * Built with CAIRN_NO_BD (test_bd_off): checks that every call returns
 * CAIRN_ERR_INVAL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CAIRN_NO_BD

#include "tsupport.h"

static csim *vol_sim(int medium, uint64_t seed)
{
    if (medium == T_NAND)
        return t_sim_model("nand-dhara", 32, 1, seed); /* 4 MiB, 128 KiB segments */
    if (medium == T_NAND_B4)
        return t_sim_model("nand-dhara", 64, 4, seed); /* 8 MiB, 512 KiB segments */
    return t_sim_new(medium, seed); /* NOR 1 MiB (32 KiB segments), BLOCK 2 MiB */
}

static uint32_t page_of(const struct tfs *t) { return csim_geometry(t->sim)->page_size; }

/* Sectors for an array of permille/1000 of the free space; an odd count, so
 * that with sectors smaller than a page the file ends inside a page. */
static uint32_t array_sectors(struct tfs *t, uint32_t ss, uint32_t permille)
{
    struct cairn_fsinfo fi;
    int rc = cairn_fs_stat(t->fs, &fi);
    if (rc != 0)
        t_fatal("cairn_fs_stat: %d", rc);
    return (uint32_t)(fi.free_bytes * permille / 1000 / ss) | 1u;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        t_fatal("out of memory");
    return p;
}

/* ==== 1. model runs ==== */

struct mrun {
    struct tfs t;
    struct cairn_bd bd;
    uint32_t ss, count;
    uint8_t *model, *buf;
    const char *label;
    long reads, writes, trims, syncs, remounts;
};

/* Reads sectors [s, s+n) and compares them with the model. */
static int m_cmp(struct mrun *r, uint32_t s, uint32_t n, const char *what)
{
    size_t off = (size_t)s * r->ss, len = (size_t)n * r->ss, i;
    int rc = cairn_bd_read(&r->bd, s, r->buf, n);
    CHECK(rc == 0, "[%s] %s: read %u+%u: %d %s", r->label, what, (unsigned)s, (unsigned)n, rc,
          t_errname(rc));
    if (rc != 0)
        return 1;
    if (memcmp(r->buf, r->model + off, len) == 0)
        return 0;
    for (i = 0; i < len && r->buf[i] == r->model[off + i]; i++)
        ;
    CHECK(0, "[%s] %s: sectors %u+%u differ from the model at sector %u byte %u", r->label,
          what, (unsigned)s, (unsigned)n, (unsigned)(s + i / r->ss), (unsigned)(i % r->ss));
    return 1;
}

/* Every sector, one read call each, in order. */
static int m_cmp_all(struct mrun *r, const char *what)
{
    uint32_t s;
    for (s = 0; s < r->count; s++)
        if (m_cmp(r, s, 1, what))
            return 1;
    return 0;
}

static int m_remount(struct mrun *r, int close_first)
{
    int rc;
    if (close_first) {
        rc = cairn_bd_close(&r->bd);
        CHECK(rc == 0, "[%s] bd_close: %d", r->label, rc);
    }
    if (t_fs_remount(&r->t, r->label))
        return 1;
    rc = cairn_bd_open(r->t.fs, &r->bd, "/disk", r->ss, r->count);
    CHECK(rc == 0, "[%s] bd_open after remount: %d %s", r->label, rc, t_errname(rc));
    r->remounts++;
    return rc != 0 || m_cmp_all(r, "after remount");
}

/* A random range: mostly short, sometimes page-aligned, sometimes long. */
static void pick_range(struct mrun *r, uint64_t *rng, uint32_t *s, uint32_t *n)
{
    uint32_t per = page_of(&r->t) > r->ss ? page_of(&r->t) / r->ss : 1, k = t_randn(rng, 10);
    uint32_t max = k < 6 ? 4 : k < 9 ? 4 * per : 48 * per;
    *s = t_randn(rng, r->count);
    if (k >= 6 && k < 9)
        *s -= *s % per;
    *n = 1 + t_randn(rng, max);
    if (k >= 6 && k < 9 && *n > per)
        *n -= *n % per;
    if (t_randn(rng, 12) == 0) { /* up to the end of the array */
        *s = r->count - 1 - t_randn(rng, r->count < 16 ? r->count : 16);
        *n = r->count - *s;
    }
    if (*n > r->count - *s)
        *n = r->count - *s;
}

static int m_step(struct mrun *r, uint64_t *rng, long step)
{
    uint32_t op = t_randn(rng, 100), s, n;
    int rc;
    pick_range(r, rng, &s, &n);
    if (t_env_u64("CAIRN_TEST_VERBOSE", 0))
        printf("    %ld: %s %u+%u\n", step,
               op < 40 ? "write" : op < 70 ? "read" : op < 85 ? "trim" : op < 95 ? "sync"
               : op < 97 ? "check" : op < 99 ? "close+remount" : "remount", (unsigned)s,
               (unsigned)n);
    if (op < 40) {
        t_pattern(r->buf, (size_t)n * r->ss, t_rand(rng));
        rc = cairn_bd_write(&r->bd, s, r->buf, n);
        CHECK(rc == 0, "[%s] step %ld: write %u+%u: %d %s", r->label, step, (unsigned)s,
              (unsigned)n, rc, t_errname(rc));
        if (rc == CAIRN_ERR_NOSPC) {
            struct cairn_fsinfo fi;
            cairn_fs_stat(r->t.fs, &fi);
            printf("    (total %llu, used %llu, free %llu bytes)\n",
                   (unsigned long long)fi.total_bytes, (unsigned long long)fi.used_bytes,
                   (unsigned long long)fi.free_bytes);
        }
        if (rc == 0)
            memcpy(r->model + (size_t)s * r->ss, r->buf, (size_t)n * r->ss);
        r->writes++;
        return rc != 0;
    }
    if (op < 70) {
        r->reads++;
        return m_cmp(r, s, n, "read");
    }
    if (op < 85) {
        rc = cairn_bd_trim(&r->bd, s, n);
        CHECK(rc == 0, "[%s] step %ld: trim %u+%u: %d %s", r->label, step, (unsigned)s,
              (unsigned)n, rc, t_errname(rc));
        if (rc == 0)
            memset(r->model + (size_t)s * r->ss, 0, (size_t)n * r->ss);
        r->trims++;
        return rc != 0;
    }
    if (op < 95) {
        rc = cairn_bd_sync(&r->bd);
        CHECK(rc == 0, "[%s] step %ld: sync: %d %s", r->label, step, rc, t_errname(rc));
        r->syncs++;
        return rc != 0;
    }
    if (op < 97) {
        rc = t_fs_check(&r->t, r->label);
        CHECK(rc == 0, "[%s] step %ld: cairn_check mid-run: %d", r->label, step, rc);
        return rc != 0;
    }
    return m_remount(r, op < 99);
}

static void model_run(int medium, uint32_t ss, uint64_t seed, long steps)
{
    struct mrun r;
    char label[96];
    long step;
    int rc, bad = 0;
    memset(&r, 0, sizeof r);
    t_fs_init(&r.t, vol_sim(medium, seed), 0);
    if (seed % 3 == 1) { /* small cache, frequent commits: more replay, more flushes */
        r.t.cfg.cache_nodes = 12;
        r.t.cfg.commit_pages = 2;
    }
    t_fs_format_mount(&r.t);
    r.ss = ss;
    /* filled at the start, so that the random writes make GC work: NOR's
     * small segments get there with a third of the space, the others with
     * two thirds */
    r.count = array_sectors(&r.t, ss, medium == T_NOR ? 333 : 667);
    snprintf(label, sizeof label, "model %s sector %u x %u seed %llu", t_medium_name[medium],
             (unsigned)ss, (unsigned)r.count, (unsigned long long)seed);
    r.label = label;
    r.model = (uint8_t *)xmalloc((size_t)r.count * ss);
    r.buf = (uint8_t *)xmalloc((size_t)r.count * ss); /* a range is never longer */
    memset(r.model, 0, (size_t)r.count * ss);
    rc = cairn_bd_open(r.t.fs, &r.bd, "/disk", ss, r.count);
    CHECK(rc == 0, "[%s] bd_open: %d %s", label, rc, t_errname(rc));
    if (rc == 0) {
        uint64_t mix = seed << 24 ^ (uint64_t)ss << 4 ^ (unsigned)medium, rng = t_rand(&mix);
        bad = m_cmp_all(&r, "fresh array reads zeros");
        t_pattern(r.model, (size_t)r.count * ss, seed + 1000);
        rc = cairn_bd_write(&r.bd, 0, r.model, r.count);
        CHECK(rc == 0, "[%s] filling the array: %d %s", label, rc, t_errname(rc));
        bad = bad || rc != 0;
        for (step = 0; step < steps && !bad; step++)
            bad = m_step(&r, &rng, step);
        if (!bad)
            bad = m_remount(&r, 1);
        if (!bad)
            cairn_bd_close(&r.bd);
    }
    {
        struct csim_counters c;
        csim_counters(r.t.sim, &c);
        printf("  %s: %ld writes, %ld reads, %ld trims, %ld syncs, %ld remounts, %llu "
               "erases%s\n", label, r.writes, r.reads, r.trims, r.syncs, r.remounts,
               (unsigned long long)c.erases, bad ? " (FAILED)" : "");
    }
    free(r.model);
    free(r.buf);
    t_fs_free(&r.t);
}

/* ==== 2. power cuts ==== */

/* Per unit (a sector, or a page of a sector larger than a page): the contents
 * it went through (0 = zeros, else the seed of its pattern) and the index of
 * the last one a completed sync made durable. */
struct units {
    uint32_t n, bytes;
    uint64_t *hist; /* n x cap */
    uint32_t *len, *dur, cap;
};

struct cut {
    struct tfs t;
    struct cairn_bd bd;
    struct units *u;
    uint32_t ss, count, per; /* per: units per sector */
    uint8_t *buf;
    int model_only; /* only the model follows (rebuilding the pre-state's history) */
    int stop;       /* an op failed: the power is off (or a bug) */
    const char *in; /* the op during which it failed */
};

static void unit_fill(uint8_t *p, uint32_t bytes, uint64_t tag)
{
    if (tag == 0)
        memset(p, 0, bytes);
    else
        t_pattern(p, bytes, tag);
}

static void unit_push(struct units *u, uint32_t i, uint64_t tag)
{
    if (u->len[i] >= u->cap)
        t_fatal("unit history full");
    u->hist[(size_t)i * u->cap + u->len[i]++] = tag;
}

static void c_write(struct cut *c, uint32_t s, uint32_t n, uint64_t seed)
{
    uint32_t i, first = s * c->per, units = n * c->per;
    int rc;
    if (c->stop)
        return;
    for (i = 0; i < units; i++) {
        uint64_t tag = seed * 1000003u + first + i + 1;
        unit_push(c->u, first + i, tag);
        unit_fill(c->buf + (size_t)i * c->u->bytes, c->u->bytes, tag);
    }
    rc = c->model_only ? 0 : cairn_bd_write(&c->bd, s, c->buf, n);
    if (rc != 0) {
        c->stop = 1;
        c->in = "write";
    }
}

static void c_trim(struct cut *c, uint32_t s, uint32_t n)
{
    uint32_t i;
    if (c->stop)
        return;
    for (i = 0; i < n * c->per; i++)
        unit_push(c->u, s * c->per + i, 0);
    if (!c->model_only && cairn_bd_trim(&c->bd, s, n) != 0) {
        c->stop = 1;
        c->in = "trim";
    }
}

static void c_sync(struct cut *c)
{
    uint32_t i;
    if (c->stop)
        return;
    if (!c->model_only && cairn_bd_sync(&c->bd) != 0) {
        c->stop = 1;
        c->in = "sync";
        return;
    }
    for (i = 0; i < c->u->n; i++)
        c->u->dur[i] = c->u->len[i] - 1;
}

/* The scenario cut into. Positions are in sectors per page (sp, 1 when a
 * sector is a page or more), so every medium sees writes and trims of parts of
 * pages and of whole pages, over unsynced and over synced data. */
static void scenario(struct cut *c)
{
    uint32_t pg = page_of(&c->t), sp = pg > c->ss ? pg / c->ss : 1; /* sectors per page */
    c_write(c, 0, 2, 101);             /* part of a page (or whole pages) */
    c_write(c, 4 * sp, 4 * sp, 102);   /* four whole pages */
    c_write(c, 1, 1, 103);
    c_sync(c);
    c_trim(c, 4 * sp + 1, 2 * sp);     /* partial + whole pages */
    c_write(c, 10 * sp, 1, 104);
    c_trim(c, 0, 1);
    c_sync(c);
    c_write(c, 12 * sp, 3 * sp + 1, 105); /* over the pre-state's data */
    c_trim(c, 13 * sp, sp);
    c_write(c, 13 * sp, 1, 106);
    c_trim(c, 20 * sp, 4 * sp);        /* pre-state data: whole pages punched */
    c_sync(c);
    c_write(c, 2, 2, 107);
    c_trim(c, 12 * sp, 1);
}

/* Content before the scenario: sectors [12sp, 24sp) written and synced. */
static void pre_state(struct cut *c)
{
    uint32_t pg = page_of(&c->t), sp = pg > c->ss ? pg / c->ss : 1;
    c_write(c, 12 * sp, 12 * sp, 100);
    c_sync(c);
}

static int verify_units(struct cut *c, const char *label)
{
    uint32_t i, k, bad = 0, bytes = c->u->bytes;
    uint8_t *exp = (uint8_t *)xmalloc(bytes);
    int rc = cairn_bd_read(&c->bd, 0, c->buf, c->count);
    CHECK(rc == 0, "[%s] reading the array after recovery: %d %s", label, rc, t_errname(rc));
    for (i = 0; i < c->u->n && rc == 0; i++) {
        const uint64_t *h = c->u->hist + (size_t)i * c->u->cap;
        int ok = 0;
        for (k = c->u->dur[i]; k < c->u->len[i] && !ok; k++) {
            unit_fill(exp, bytes, h[k]);
            ok = memcmp(exp, c->buf + (size_t)i * bytes, bytes) == 0;
        }
        if (!ok && bad++ < 3)
            CHECK(0, "[%s] unit %u (sector %u) matches none of its %u states since the last "
                  "sync", label, (unsigned)i, (unsigned)(i / c->per),
                  (unsigned)(c->u->len[i] - c->u->dur[i]));
    }
    free(exp);
    return rc != 0 || bad != 0;
}

static void units_init(struct units *u, uint32_t n, uint32_t bytes)
{
    uint32_t i;
    u->n = n;
    u->bytes = bytes;
    u->cap = 16;
    u->hist = (uint64_t *)xmalloc((size_t)n * u->cap * sizeof *u->hist);
    u->len = (uint32_t *)xmalloc(n * sizeof *u->len);
    u->dur = (uint32_t *)xmalloc(n * sizeof *u->dur);
    for (i = 0; i < n; i++) {
        u->hist[(size_t)i * u->cap] = 0;
        u->len[i] = 1;
        u->dur[i] = 0;
    }
}

static void units_free(struct units *u)
{
    free(u->hist);
    free(u->len);
    free(u->dur);
}

static long cut_trials, cut_fail, cut_in[4]; /* cut during write, trim, sync, none */

/* cut < 0: dry run, returns the scenario's mutating ops. */
static uint64_t cut_trial(int medium, uint32_t ss, const struct t_image *im, int64_t cut,
                          int tear)
{
    struct cut c;
    struct units u;
    struct csim_counters cc;
    uint64_t start, ops = 0;
    char label[96];
    int rc, bad = 0;
    memset(&c, 0, sizeof c);
    snprintf(label, sizeof label, "cut %s sector %u op %lld %s", t_medium_name[medium],
             (unsigned)ss, (long long)cut, tear == CSIM_TEAR_PREFIX ? "prefix" : "random");
    t_fs_init(&c.t, vol_sim(medium, 77 + (uint64_t)(cut + 1)), 1);
    c.t.cfg.commit_pages = 2; /* checkpoints inside the scenario: cuts in them too */
    t_image_put(im, c.t.sim);
    c.ss = ss;
    c.count = 32 * (page_of(&c.t) > ss ? page_of(&c.t) / ss : 1);
    c.per = ss > page_of(&c.t) ? ss / page_of(&c.t) : 1;
    units_init(&u, c.count * c.per, ss / c.per);
    c.u = &u;
    c.buf = (uint8_t *)xmalloc((size_t)c.count * ss);
    rc = t_fs_mount(&c.t);
    if (rc == 0)
        rc = cairn_bd_open(c.t.fs, &c.bd, "/disk", ss, c.count);
    CHECK(rc == 0, "[%s] mount and open of the pre-state: %d %s", label, rc, t_errname(rc));
    if (rc != 0)
        goto out;
    c.model_only = 1; /* the pre-state's history, in the model only */
    pre_state(&c);
    c.model_only = 0;
    csim_counters(c.t.sim, &cc);
    start = cc.mutating_ops;
    if (cut >= 0)
        csim_cut_at(c.t.sim, start + (uint64_t)cut, (enum csim_tear)tear);
    scenario(&c);
    csim_counters(c.t.sim, &cc);
    ops = cc.mutating_ops - start;
    if (cut < 0) {
        CHECK(!c.stop, "[%s] the scenario without a cut failed in %s", label, c.in);
        cairn_bd_close(&c.bd);
        goto out;
    }
    cut_trials++;
    cut_in[!c.in ? 3 : c.in[0] == 'w' ? 0 : c.in[0] == 't' ? 1 : 2]++;
    CHECK(!c.stop || !csim_powered(c.t.sim), "[%s] an op failed with the power on (%s)", label,
          c.in ? c.in : "-");
    if (csim_powered(c.t.sim))
        csim_cut_cancel(c.t.sim);
    cairn_unmount(c.t.fs); /* fails: the power is off */
    t_fs_abandon(&c.t);
    csim_power_on(c.t.sim);
    rc = t_fs_mount(&c.t);
    CHECK(rc == 0, "[%s] mount after the cut (in %s): %d %s", label, c.in ? c.in : "-", rc,
          t_errname(rc));
    if (rc == 0) {
        rc = t_fs_check(&c.t, label);
        CHECK(rc == 0, "[%s] cairn_check after the cut (in %s): %d", label,
              c.in ? c.in : "-", rc);
        bad |= rc != 0;
        rc = cairn_bd_open(c.t.fs, &c.bd, "/disk", ss, c.count);
        CHECK(rc == 0, "[%s] bd_open after the cut: %d %s", label, rc, t_errname(rc));
        bad |= rc != 0 || verify_units(&c, label);
        if (rc == 0) { /* still writable, and that survives a remount */
            uint8_t *one = (uint8_t *)xmalloc(ss), *back = (uint8_t *)xmalloc(ss);
            t_pattern(one, ss, 4242);
            rc = cairn_bd_write(&c.bd, c.count - 1, one, 1);
            if (rc == 0)
                rc = cairn_bd_close(&c.bd);
            CHECK(rc == 0, "[%s] write after recovery: %d %s", label, rc, t_errname(rc));
            if (rc == 0 && t_fs_remount(&c.t, label) == 0 &&
                cairn_bd_open(c.t.fs, &c.bd, "/disk", ss, c.count) == 0) {
                rc = cairn_bd_read(&c.bd, c.count - 1, back, 1);
                CHECK(rc == 0 && memcmp(one, back, ss) == 0,
                      "[%s] the sector written after recovery did not survive", label);
                cairn_bd_close(&c.bd);
            } else {
                bad = 1;
            }
            free(one);
            free(back);
        }
    } else {
        bad = 1;
    }
    cut_fail += bad;
out:
    t_fs_no_violations(&c.t, label);
    c.t.allow_violations = 1;
    t_fs_free(&c.t);
    units_free(&u);
    free(c.buf);
    return cut < 0 ? ops : 0;
}

static void cut_series(int medium, uint32_t ss, uint32_t max_trials)
{
    struct cut c;
    struct units u;
    struct t_image im;
    uint64_t ops, i, stride;
    long before = cut_trials, fail_before = cut_fail;
    memset(cut_in, 0, sizeof cut_in);
    int rc;
    /* pre-state: the array with sectors [12sp, 24sp) synced, unmounted */
    memset(&c, 0, sizeof c);
    t_fs_init(&c.t, vol_sim(medium, 5), 1);
    c.t.cfg.commit_pages = 2;
    t_fs_format_mount(&c.t);
    c.ss = ss;
    c.count = 32 * (page_of(&c.t) > ss ? page_of(&c.t) / ss : 1);
    c.per = ss > page_of(&c.t) ? ss / page_of(&c.t) : 1;
    units_init(&u, c.count * c.per, ss / c.per);
    c.u = &u;
    c.buf = (uint8_t *)xmalloc((size_t)c.count * ss);
    rc = cairn_bd_open(c.t.fs, &c.bd, "/disk", ss, c.count);
    CHECK(rc == 0, "[cut pre-state] bd_open: %d", rc);
    pre_state(&c);
    CHECK(!c.stop, "[cut pre-state] writes failed");
    cairn_bd_close(&c.bd);
    if (t_fs_unmount(&c.t) != 0)
        t_fatal("unmount of the pre-state failed");
    t_image_take(&im, c.t.sim);
    t_fs_free(&c.t);
    units_free(&u);
    free(c.buf);

    ops = cut_trial(medium, ss, &im, -1, 0);
    stride = ops / max_trials + 1;
    for (i = 0; i < ops; i += stride)
        cut_trial(medium, ss, &im, (int64_t)i, (int)((i / stride) % 2));
    /* the last op (often the sync's final program) too */
    if (ops > 0 && (ops - 1) % stride != 0)
        cut_trial(medium, ss, &im, (int64_t)(ops - 1), CSIM_TEAR_RANDOM);
    printf("  cuts %s sector %u: scenario of %llu mutating ops, cut at every %llu: %ld "
           "trials (cut in a write %ld, a trim %ld, a sync %ld, none %ld), %ld failed\n",
           t_medium_name[medium], (unsigned)ss, (unsigned long long)ops,
           (unsigned long long)stride, cut_trials - before, cut_in[0], cut_in[1], cut_in[2],
           cut_in[3], cut_fail - fail_before);
    t_image_free(&im);
}

/* ==== 3. costs ==== */

struct cost {
    struct tfs t;
    struct cairn_bd bd;
    const char *name;
    uint32_t ss, count, pg, chunk, data_pages;
    uint8_t *buf;
    struct csim_counters c; /* since the last cost_begin */
};

static void cost_begin(struct cost *k) { csim_reset_counters(k->t.sim); }
static void cost_end(struct cost *k) { csim_counters(k->t.sim, &k->c); }

/* The array holds pattern chunk s / chunk + 1 in every 4 KiB piece. */
static int cost_fill(struct cost *k)
{
    uint32_t s;
    for (s = 0; s < k->count; s += k->chunk) {
        uint32_t n = k->count - s < k->chunk ? k->count - s : k->chunk;
        t_pattern(k->buf, (size_t)n * k->ss, s + 1);
        if (cairn_bd_write(&k->bd, s, k->buf, n) != 0)
            return 1;
    }
    return 0;
}

/* Never-written sectors have no data pages to read. */
static void cost_unwritten(struct cost *k)
{
    uint32_t s;
    int bad = 0;
    cost_begin(k);
    for (s = 0; s < k->count && !bad; s++)
        bad = cairn_bd_read(&k->bd, s, k->buf, 1) != 0;
    cost_end(k);
    CHECK(!bad && k->c.read_calls <= 16, "[%s] reading an unwritten array: %llu device reads",
          k->name, (unsigned long long)k->c.read_calls);
    printf("  %s sector %u: reading %u unwritten sectors: %llu device reads\n", k->name,
           (unsigned)k->ss, (unsigned)k->count, (unsigned long long)k->c.read_calls);
}

/* Sequential 4 KiB writes, one sync; rewriting whole pages reads nothing;
 * single sectors written and synced one by one (a FAT updating its table). */
static void cost_writes(struct cost *k)
{
    uint32_t s, per = k->pg > k->ss ? k->pg / k->ss : 1;
    uint64_t seq;
    int bad;
    cost_begin(k);
    bad = cost_fill(k) || cairn_bd_sync(&k->bd) != 0;
    cost_end(k);
    seq = k->c.prog_pages;
    CHECK(!bad && k->c.read_calls <= 16, "[%s] sequential write of fresh sectors: %d, %llu "
          "device reads", k->name, bad, (unsigned long long)k->c.read_calls);
    cost_begin(k);
    for (s = 0; s + per <= k->count && s < 64 * per && !bad; s += per) {
        t_pattern(k->buf, (size_t)per * k->ss, s + 7);
        bad = cairn_bd_write(&k->bd, s, k->buf, per) != 0;
    }
    cost_end(k);
    CHECK(!bad && k->c.read_calls <= 8, "[%s] rewriting %u whole pages cost %llu device reads",
          k->name, (unsigned)(s / per), (unsigned long long)k->c.read_calls);
    printf("  %s sector %u: rewriting %u whole pages: %llu device reads\n", k->name,
           (unsigned)k->ss, (unsigned)(s / per), (unsigned long long)k->c.read_calls);
    cost_begin(k);
    for (s = 0; s < 32 && !bad; s++) {
        t_pattern(k->buf, k->ss, s + 99);
        bad = cairn_bd_write(&k->bd, (s * 7) % k->count, k->buf, 1) != 0 ||
              cairn_bd_sync(&k->bd) != 0;
    }
    cost_end(k);
    CHECK(!bad, "[%s] synced single-sector writes", k->name);
    printf("  %s sector %u: writing %u sectors in 4 KiB writes + sync: %.3f pages programmed "
           "per sector (%.3f per page of data); one sector written and synced: %.2f pages\n",
           k->name, (unsigned)k->ss, (unsigned)k->count, (double)seq / k->count,
           (double)seq / k->data_pages, (double)k->c.prog_pages / 32);
}

/* After a remount (cold cache), one sector per call, in order. */
static void cost_read(struct cost *k)
{
    uint8_t *exp = (uint8_t *)xmalloc((size_t)k->chunk * k->ss);
    uint64_t pages;
    uint32_t s;
    int bad = 0;
    cost_begin(k);
    for (s = 0; s < k->count && !bad; s++) {
        bad = cairn_bd_read(&k->bd, s, k->buf, 1) != 0;
        if (!bad && s % k->chunk == 0)
            t_pattern(exp, (size_t)k->chunk * k->ss, s + 1);
        bad = bad || memcmp(k->buf, exp + (size_t)(s % k->chunk) * k->ss, k->ss) != 0;
    }
    cost_end(k);
    free(exp);
    CHECK(!bad, "[%s] sequential read returned wrong data at sector %u", k->name, (unsigned)s);
    pages = (k->c.read_bytes + k->pg - 1) / k->pg;
    /* data pages once, plus the index nodes on the way; read-ahead shares the
     * node cache, so a few nodes may be read twice (32 pages: 16 nodes at most) */
    CHECK(pages <= (uint64_t)k->data_pages + 32,
          "[%s] sequential read of %u sectors (%u data pages) read %llu pages", k->name,
          (unsigned)k->count, (unsigned)k->data_pages, (unsigned long long)pages);
    CHECK(k->c.read_calls <=
              (uint64_t)(k->data_pages > k->count ? k->data_pages : k->count) + 16,
          "[%s] sequential read: %llu device calls", k->name,
          (unsigned long long)k->c.read_calls);
    printf("  %s sector %u: cold sequential read of %u sectors = %u data pages: %llu device "
           "reads, %llu pages read (%.3f per data page)\n",
           k->name, (unsigned)k->ss, (unsigned)k->count, (unsigned)k->data_pages,
           (unsigned long long)k->c.read_calls, (unsigned long long)pages,
           (double)pages / k->data_pages);
}

/* Trimming the whole array gives its pages back and it reads zeros. */
static void cost_trim(struct cost *k)
{
    struct cairn_fsinfo fi;
    uint64_t used;
    uint32_t s, i;
    int rc;
    cairn_fs_stat(k->t.fs, &fi);
    used = fi.used_bytes;
    rc = cairn_bd_trim(&k->bd, 0, k->count);
    if (rc == 0)
        rc = cairn_bd_sync(&k->bd);
    CHECK(rc == 0, "[%s] trim of the whole array: %d", k->name, rc);
    cairn_fs_stat(k->t.fs, &fi);
    CHECK(used > fi.used_bytes &&
              used - fi.used_bytes >= (uint64_t)k->data_pages * k->pg / 10 * 9,
          "[%s] trim freed %llu of %llu bytes", k->name,
          (unsigned long long)(used - fi.used_bytes),
          (unsigned long long)k->data_pages * k->pg);
    printf("  %s sector %u: trim of the whole array: used %llu -> %llu bytes\n", k->name,
           (unsigned)k->ss, (unsigned long long)used, (unsigned long long)fi.used_bytes);
    for (s = 0; s < k->count && rc == 0; s += k->chunk) {
        uint32_t n = k->count - s < k->chunk ? k->count - s : k->chunk;
        rc = cairn_bd_read(&k->bd, s, k->buf, n);
        for (i = 0; i < n * k->ss && rc == 0; i++)
            rc = k->buf[i] ? -100 : 0;
    }
    CHECK(rc == 0, "[%s] trimmed sectors read as zeros: %d", k->name, rc);
}

static void cost_run(const char *name, csim *sim, uint32_t ss, uint32_t bytes)
{
    struct cost k;
    int rc;
    memset(&k, 0, sizeof k);
    t_fs_init(&k.t, sim, 0);
    t_fs_format_mount(&k.t);
    k.name = name;
    k.ss = ss;
    k.count = bytes / ss;
    k.pg = page_of(&k.t);
    k.data_pages = (uint32_t)(((uint64_t)k.count * ss + k.pg - 1) / k.pg);
    k.chunk = 4096 / ss ? 4096 / ss : 1; /* a FAT cluster of 4 KiB per write */
    k.buf = (uint8_t *)xmalloc((size_t)k.chunk * ss + k.pg);
    rc = cairn_bd_open(k.t.fs, &k.bd, "/disk", ss, k.count);
    CHECK(rc == 0, "[%s] bd_open: %d %s", name, rc, t_errname(rc));
    if (rc == 0) {
        cost_unwritten(&k);
        cost_writes(&k);
        rc = cost_fill(&k) || cairn_bd_close(&k.bd) != 0; /* back to the pattern */
        if (rc == 0 && t_fs_remount(&k.t, name) == 0 &&
            cairn_bd_open(k.t.fs, &k.bd, "/disk", ss, k.count) == 0) {
            cost_read(&k);
            cost_trim(&k);
            cairn_bd_close(&k.bd);
            t_fs_remount(&k.t, name);
        } else {
            CHECK(0, "[%s] rewrite, remount and reopen for the read", name);
        }
    }
    free(k.buf);
    t_fs_free(&k.t);
}

static void costs(void)
{
    cost_run("nor-w25q128", t_sim_new(T_NOR, 3), 512, 96 * 1024);
    cost_run("nand-dhara", vol_sim(T_NAND, 3), 512, 1024 * 1024);
    cost_run("nand-dhara", vol_sim(T_NAND, 3), 4096, 1024 * 1024);
    cost_run("nand-jffs2", t_sim_model("nand-jffs2", 64, 1, 3), 512, 1024 * 1024);
    cost_run("sd-like", t_sim_new(T_BLOCK, 3), 512, 512 * 1024);
    cost_run("sd-tf", t_sim_model("sd-tf", 32, 1, 3), 512, 1024 * 1024);
}

/* ==== 4. error codes ==== */

#define ERR(call, want, what)                                                  \
    do {                                                                       \
        int rc_ = (call);                                                      \
        CHECK(rc_ == (want), "%s: got %d %s, want %s", what, rc_,              \
              t_errname(rc_), t_errname(want));                                \
    } while (0)

static void errors(void)
{
    struct tfs t;
    struct cairn_bd bd, bad;
    uint8_t buf[2048];
    int fd, i, fds[64];
    t_fs_init(&t, t_sim_new(T_NAND, 9), 0);
    t_fs_format_mount(&t);
    memset(buf, 0xAB, sizeof buf);

    ERR(cairn_bd_open(NULL, &bd, "/d", 512, 8), CAIRN_ERR_INVAL, "open: NULL fs");
    ERR(cairn_bd_open(t.fs, NULL, "/d", 512, 8), CAIRN_ERR_INVAL, "open: NULL bd");
    ERR(cairn_bd_open(t.fs, &bd, NULL, 512, 8), CAIRN_ERR_INVAL, "open: NULL path");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 0, 8), CAIRN_ERR_INVAL, "open: sector size 0");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 64, 8), CAIRN_ERR_INVAL, "open: sector size 64");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 1536, 8), CAIRN_ERR_INVAL, "open: sector size 1536");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 512, 0), CAIRN_ERR_INVAL, "open: 0 sectors");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 512, 1u << 22), CAIRN_ERR_INVAL, "open: 2 GiB");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 1u << 31, 1), CAIRN_ERR_INVAL, "open: 2 GiB sector");
    ERR(cairn_bd_open(t.fs, &bd, "/", 512, 8), CAIRN_ERR_ISDIR, "open: a directory");
    ERR(cairn_bd_open(t.fs, &bd, "/no/d", 512, 8), CAIRN_ERR_NOENT, "open: no parent");
    CHECK(bd.fd == -1 && bd.fs == NULL, "a failed open leaves bd unusable");
    ERR(cairn_bd_read(&bd, 0, buf, 1), CAIRN_ERR_BADF, "read on a failed open");
    ERR(cairn_bd_write(&bd, 0, buf, 1), CAIRN_ERR_BADF, "write on a failed open");
    ERR(cairn_bd_trim(&bd, 0, 1), CAIRN_ERR_BADF, "trim on a failed open");
    ERR(cairn_bd_sync(&bd), CAIRN_ERR_BADF, "sync on a failed open");
    ERR(cairn_bd_close(&bd), CAIRN_ERR_BADF, "close on a failed open");

    /* the largest array: sparse, costs nothing until written */
    ERR(cairn_bd_open(t.fs, &bd, "/big", 512, (1u << 22) - 1), 0, "open: 2 GiB - 512");
    ERR(cairn_bd_read(&bd, (1u << 22) - 2, buf, 1), 0, "read of the last sector");
    CHECK(buf[0] == 0 && buf[511] == 0, "the last sector of a fresh array reads zeros");
    ERR(cairn_bd_close(&bd), 0, "close /big");

    ERR(cairn_bd_open(t.fs, &bd, "/d", 512, 8), 0, "open /d");
    ERR(cairn_bd_read(NULL, 0, buf, 1), CAIRN_ERR_INVAL, "read: NULL bd");
    ERR(cairn_bd_read(&bd, 0, NULL, 1), CAIRN_ERR_INVAL, "read: NULL buf");
    ERR(cairn_bd_write(&bd, 0, NULL, 1), CAIRN_ERR_INVAL, "write: NULL buf");
    ERR(cairn_bd_read(&bd, 0, NULL, 0), 0, "read of 0 sectors with NULL buf");
    ERR(cairn_bd_read(&bd, 8, buf, 1), CAIRN_ERR_INVAL, "read: sector == count");
    ERR(cairn_bd_write(&bd, 7, buf, 2), CAIRN_ERR_INVAL, "write: past the end");
    ERR(cairn_bd_write(&bd, 1, buf, UINT32_MAX), CAIRN_ERR_INVAL, "write: count overflows");
    ERR(cairn_bd_read(&bd, UINT32_MAX, buf, 2), CAIRN_ERR_INVAL, "read: sector overflows");
    ERR(cairn_bd_trim(&bd, 3, UINT32_MAX - 1), CAIRN_ERR_INVAL, "trim: count overflows");
    ERR(cairn_bd_trim(&bd, 9, 0), CAIRN_ERR_INVAL, "trim: sector past the end");
    ERR(cairn_bd_trim(NULL, 0, 1), CAIRN_ERR_INVAL, "trim: NULL bd");
    ERR(cairn_bd_sync(NULL), CAIRN_ERR_INVAL, "sync: NULL bd");
    ERR(cairn_bd_close(NULL), CAIRN_ERR_INVAL, "close: NULL bd");
    memset(buf, 0xAB, sizeof buf);
    ERR(cairn_bd_write(&bd, 7, buf, 1), 0, "write of the last sector");
    bad = bd;
    bad.fd = 1000;
    ERR(cairn_bd_read(&bad, 0, buf, 1), CAIRN_ERR_BADF, "read: handle out of range");
    ERR(cairn_bd_write(&bad, 0, buf, 1), CAIRN_ERR_BADF, "write: handle out of range");
    ERR(cairn_bd_trim(&bad, 0, 1), CAIRN_ERR_BADF, "trim: handle out of range");
    bad.fd = bd.fd;
    bad.sector_size = 1u << 30;
    ERR(cairn_bd_read(&bad, 1, buf, 1), CAIRN_ERR_INVAL, "read: tampered sector size");
    ERR(cairn_bd_close(&bd), 0, "close /d");
    ERR(cairn_bd_write(&bd, 0, buf, 1), CAIRN_ERR_BADF, "write after close");

    /* an existing file: larger refused, smaller grown with zeros */
    ERR(cairn_bd_open(t.fs, &bd, "/d", 512, 4), CAIRN_ERR_INVAL, "open: file larger");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 256, 16), 0, "open: same bytes, other sector size");
    ERR(cairn_bd_read(&bd, 14, buf, 2), 0, "read the last sector as two of 256");
    CHECK(buf[0] == 0xAB && buf[511] == 0xAB, "the data stays at its byte offset");
    ERR(cairn_bd_close(&bd), 0, "close");
    ERR(cairn_bd_open(t.fs, &bd, "/d", 512, 12), 0, "open: file smaller, grown");
    ERR(cairn_bd_read(&bd, 7, buf, 2), 0, "read across the old end");
    CHECK(buf[0] == 0xAB && buf[512] == 0 && buf[1023] == 0, "grown sectors read zeros");
    fd = cairn_open(t.fs, "/d", CAIRN_O_RDONLY);
    CHECK(fd >= 0 && cairn_size(t.fs, fd) == 12 * 512, "the file is 12 sectors long");
    cairn_close(t.fs, fd);

    /* the file removed under it */
    ERR(cairn_remove(t.fs, "/d"), 0, "remove the array's file");
    ERR(cairn_bd_write(&bd, 0, buf, 1), CAIRN_ERR_BADF, "write to a removed array");
    ERR(cairn_bd_trim(&bd, 0, 1), CAIRN_ERR_BADF, "trim of a removed array");
    ERR(cairn_bd_read(&bd, 0, buf, 1), CAIRN_ERR_BADF, "read of a removed array");
    ERR(cairn_bd_close(&bd), 0, "close of a removed array");

    /* no handle left */
    for (i = 0; i < 64; i++)
        fds[i] = -1;
    for (i = 0; i < 64; i++) {
        fds[i] = cairn_opendir(t.fs, "/");
        if (fds[i] < 0)
            break;
    }
    ERR(cairn_bd_open(t.fs, &bd, "/e", 512, 8), CAIRN_ERR_MFILE, "open: no handle left");
    for (i = 0; i < 64 && fds[i] >= 0; i++)
        cairn_closedir(t.fs, fds[i]);

    /* read-only mount: reads work, changes are refused */
    ERR(cairn_bd_open(t.fs, &bd, "/r", 512, 8), 0, "open /r");
    memset(buf, 0xAB, sizeof buf);
    ERR(cairn_bd_write(&bd, 2, buf, 1), 0, "write /r");
    ERR(cairn_bd_close(&bd), 0, "close /r");
    t_fs_unmount(&t);
    t.cfg.read_only = 1;
    ERR(t_fs_mount(&t), 0, "read-only mount");
    ERR(cairn_bd_open(t.fs, &bd, "/r", 512, 8), 0, "open /r read-only");
    ERR(cairn_bd_read(&bd, 2, buf, 1), 0, "read on a read-only mount");
    CHECK(buf[0] == 0xAB, "read-only read returns the data");
    ERR(cairn_bd_write(&bd, 2, buf, 1), CAIRN_ERR_ROFS, "write on a read-only mount");
    ERR(cairn_bd_trim(&bd, 2, 1), CAIRN_ERR_ROFS, "trim on a read-only mount");
    ERR(cairn_bd_sync(&bd), 0, "sync on a read-only mount (nothing to do)");
    ERR(cairn_bd_close(&bd), 0, "close read-only");
    ERR(cairn_bd_open(t.fs, &bd, "/new", 512, 8), CAIRN_ERR_NOENT, "create on read-only");
    t_fs_unmount(&t);
    ERR(cairn_bd_open(t.fs, &bd, "/r", 512, 8), CAIRN_ERR_INVAL, "open on an unmounted fs");
    t.cfg.read_only = 0;
    t_fs_free(&t);
    printf("  error codes: checked\n");
}

/* ==== 5. a full volume ==== */

/* Fills the volume with /fill in synced pages until NOSPC; the unsynced
 * rest is given up. */
static void fill_volume(struct tfs *t)
{
    uint8_t page[512];
    int32_t w, ps = (int32_t)page_of(t), n = ps < 512 ? ps : 512;
    int fd = cairn_open(t->fs, "/fill", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    if (fd < 0)
        t_fatal("open /fill: %s", t_errname(fd));
    memset(page, 0x5A, sizeof page);
    do {
        w = cairn_write(t->fs, fd, page, n);
        if (w == n)
            w = cairn_file_sync(t->fs, fd) == 0 ? n : CAIRN_ERR_NOSPC;
    } while (w == n);
    CHECK(w == CAIRN_ERR_NOSPC || (w >= 0 && w < n), "fill ends in NOSPC: %d %s", (int)w,
          t_errname(w));
    if (cairn_close(t->fs, fd) != 0)
        ERR(cairn_discard(t->fs, fd), 0, "discard /fill");
}

/* Sector s of r->model is what reading it gives now, whole or per page. */
static int sector_is_old_or_new(struct mrun *r, uint32_t s, const uint8_t *nw)
{
    uint32_t ps = page_of(&r->t), unit = r->ss < ps ? r->ss : ps, o;
    uint8_t *old = r->model + (size_t)s * r->ss;
    if (cairn_bd_read(&r->bd, s, r->buf, 1) != 0)
        return 0;
    for (o = 0; o < r->ss; o += unit)
        if (memcmp(r->buf + o, old + o, unit) != 0 && memcmp(r->buf + o, nw + o, unit) != 0)
            return 0;
    memcpy(old, r->buf, r->ss);
    return 1;
}

/* An array written whole, then a volume filled around it: rewrites until
 * NOSPC, then sync and close refused keep the array open and its data;
 * after room is made, close succeeds and a remount reads what was written. */
static void full_run(int medium, uint32_t ss, uint64_t seed)
{
    struct mrun r;
    uint64_t rng = seed;
    uint8_t *nw;
    uint32_t s, writes = 0, refused = 0;
    int rc = 0, i;
    memset(&r, 0, sizeof r);
    r.ss = ss;
    r.label = "full";
    t_fs_init(&r.t, vol_sim(medium, seed), 0);
    t_fs_format_mount(&r.t);
    r.count = array_sectors(&r.t, ss, 300);
    r.model = xmalloc((size_t)r.count * ss);
    r.buf = xmalloc(ss);
    nw = xmalloc(ss);
    t_pattern(r.model, (size_t)r.count * ss, seed);
    ERR(cairn_bd_open(r.t.fs, &r.bd, "/disk", ss, r.count), 0, "full: open");
    ERR(cairn_bd_write(&r.bd, 0, r.model, r.count), 0, "full: write the array");
    ERR(cairn_bd_sync(&r.bd), 0, "full: sync the array");
    fill_volume(&r.t);
    for (i = 0; i < 20000 && rc == 0; i++) {
        s = t_randn(&rng, r.count);
        t_pattern(nw, ss, rng);
        rc = cairn_bd_write(&r.bd, s, nw, 1);
        if (rc == 0) {
            memcpy(r.model + (size_t)s * ss, nw, ss);
            writes++;
            if (t_randn(&rng, 8) == 0)
                rc = cairn_bd_sync(&r.bd);
        } else {
            CHECK(rc == CAIRN_ERR_NOSPC, "full: write %s", t_errname(rc));
            CHECK(sector_is_old_or_new(&r, s, nw), "full: a refused write left sector %u "
                  "neither old nor new", (unsigned)s);
        }
    }
    if (rc == 0) /* rewrites alone may never run out: the array keeps its pages */
        rc = cairn_bd_sync(&r.bd);
    if (ss < page_of(&r.t)) {
        /* a part of a page waits in RAM: the write succeeds, its sync and
         * close may find no room */
        t_pattern(nw, ss, rng + 1);
        s = t_randn(&rng, r.count);
        rc = cairn_bd_write(&r.bd, s, nw, 1);
        CHECK(rc == 0 || rc == CAIRN_ERR_NOSPC, "full: a sub-page write: %s", t_errname(rc));
        if (rc == 0)
            memcpy(r.model + (size_t)s * ss, nw, ss);
        else
            CHECK(sector_is_old_or_new(&r, s, nw), "full: a refused sub-page write");
    }
    rc = cairn_bd_close(&r.bd);
    while (rc == CAIRN_ERR_NOSPC && refused < 3) {
        refused++;
        CHECK(r.bd.fs != NULL && r.bd.fd >= 0, "full: a close refused keeps the array open");
        CHECK(m_cmp_all(&r, "full, close refused") == 0, "full: reads after a refused close");
        if (refused == 1)
            ERR(cairn_remove(r.t.fs, "/fill"), 0, "full: remove /fill");
        rc = cairn_bd_close(&r.bd);
    }
    ERR(rc, 0, "full: close after room was made");
    CHECK(r.bd.fs == NULL, "full: closed");
    ERR(t_fs_remount(&r.t, "full"), 0, "full: remount");
    ERR(cairn_bd_open(r.t.fs, &r.bd, "/disk", ss, r.count), 0, "full: reopen");
    CHECK(m_cmp_all(&r, "full, remounted") == 0, "full: the array after a remount");
    ERR(cairn_bd_close(&r.bd), 0, "full: close");
    printf("  full volume, %s, %u-byte sectors: %u sectors, %u rewrites, %u closes refused\n",
           medium == T_NOR ? "NOR" : medium == T_NAND ? "NAND" : "BLOCK", (unsigned)ss,
           (unsigned)r.count, (unsigned)writes, (unsigned)refused);
    free(nw);
    free(r.buf);
    free(r.model);
    t_fs_free(&r.t);
}

int main(int argc, char **argv)
{
    static const struct {
        int medium;
        uint32_t ss;
    } vols[] = {{T_NOR, 512}, {T_NOR, 128}, {T_NAND, 512}, {T_NAND, 4096},
                {T_BLOCK, 512}, {T_BLOCK, 2048}};
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : t_env_u64("CAIRN_TEST_SEED", 1);
    long steps = (long)t_env_u64("CAIRN_TEST_STEPS", 500);
    uint32_t runs = 2 * t_scale(), v, k;
    t_begin("test_bd");

    printf("model runs (%ld steps):\n", steps);
    for (v = 0; v < sizeof vols / sizeof vols[0]; v++)
        for (k = 0; k < runs; k++)
            model_run(vols[v].medium, vols[v].ss, seed + k, steps);

    printf("power cuts:\n");
    cut_series(T_NOR, 128, 40);
    cut_series(T_NOR, 512, 30);
    cut_series(T_NAND, 512, 40);
    cut_series(T_NAND, 4096, 40);
    cut_series(T_BLOCK, 512, 40);

    printf("costs:\n");
    costs();

    printf("errors:\n");
    errors();

    printf("full volume:\n");
    full_run(T_NOR, 128, seed);
    full_run(T_NOR, 512, seed);
    full_run(T_NAND, 512, seed);
    full_run(T_BLOCK, 512, seed);
    return t_summary("test_bd");
}

#else /* CAIRN_NO_BD: only the stubs are linked */

#include "cairn.h"

int main(void)
{
    struct cairn_bd bd;
    unsigned fails = 0;
    char buf[512];
    memset(&bd, 0, sizeof bd);
    fails += cairn_bd_open(NULL, &bd, "/d", 512, 8) != CAIRN_ERR_INVAL;
    fails += cairn_bd_read(&bd, 0, buf, 1) != CAIRN_ERR_INVAL;
    fails += cairn_bd_write(&bd, 0, buf, 1) != CAIRN_ERR_INVAL;
    fails += cairn_bd_trim(&bd, 0, 1) != CAIRN_ERR_INVAL;
    fails += cairn_bd_sync(&bd) != CAIRN_ERR_INVAL;
    fails += cairn_bd_close(&bd) != CAIRN_ERR_INVAL;
    printf("  CAIRN_NO_BD: all six calls return CAIRN_ERR_INVAL: %s\n", fails ? "no" : "yes");
    printf("test_bd_off: %u passed, %u failed\n", 6 - fails, fails);
    return fails ? 1 : 0;
}

#endif
