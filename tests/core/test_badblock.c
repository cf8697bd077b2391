/*
 * test_badblock: bad blocks and bit flips on NAND (nand-dhara, 32 blocks).
 *  (a) factory bad blocks, among them where the anchors would be (block 1;
 *      blocks 0 and 1): format and a model run work, the bad blocks are
 *      never erased or programmed, cairn_fs_stat counts them;
 *  (b) blocks failing on program and on erase at random during long model
 *      runs (csim_wear_out_after; csim_fail_op armed by the wrapper device of
 *      spacesup.h at a program or erase into a data or node segment): every
 *      call still succeeds, nothing synced is lost, cairn_check is clean
 *      after each remount, and the retired blocks are counted in bad_blocks.
 *      A program failing in the journal's segment moves the journal: no
 *      call fails, synced data stays and the volume mounts clean;
 *  (c) bit flips: corrected reads at random rates keep the data right and
 *      schedule scrubs, which GC carries out; uncorrectable reads at random
 *      give CAIRN_ERR_IO or the right data, never wrong data; a page that
 *      cannot be read fails that file range only (other ranges and files read);
 *  (d) the checkpoint survives one unreadable or garbled copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cn.h"
#include "spacesup.h"

#define NBLK 32u

static csim *nand_sim(uint64_t seed) { return t_sim_model("nand-dhara", NBLK, 1, seed); }

static void rop_init(struct rop *r, struct tfs *t)
{
    memset(r, 0, sizeof *r);
    r->page = (int32_t)csim_geometry(t->sim)->page_size;
    r->max_bytes = 1536 * 1024; /* about half the volume: GC runs */
    r->big = 96 * 1024;
    r->max_fds = 2;
}

/* Blocks the simulator reports bad (factory or marked). */
static uint32_t sim_bad(csim *sim)
{
    const struct cairn_dev *dv = csim_dev(sim);
    uint32_t b, n = 0;
    for (b = 0; b < csim_geometry(sim)->block_count; b++)
        n += dv->is_bad(dv->ctx, b) == 1;
    return n;
}

static uint32_t sim_bad(csim *sim);

/* Random operations with a remount (and check) every `every` steps. */
static void model_steps(struct mdrv *d, struct tfs *t, uint64_t *rng, const struct rop *r,
                        long steps, long every, void (*hook)(struct tfs *, uint64_t *, long))
{
    long i;
    for (i = 0; i < steps && !d->failed; i++) {
        d->step = i;
        if (hook)
            hook(t, rng, i);
        d_random_op(d, rng, r);
        if ((i + 1) % every == 0 && !d->failed) {
            d_close_all(d);
            if (d->failed || t_fs_remount(t, d->label)) {
                d->failed = 1;
                break;
            }
            d_verify(d);
        }
    }
    if (!d->failed) {
        d_close_all(d);
        if (!d->failed && t_fs_remount(t, d->label) == 0)
            d_verify(d);
    }
}

/* ------------------------------------------------------- (a) factory bad */

static void factory_run(const uint32_t *bad, uint32_t nbad, uint64_t seed)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct rop r;
    struct cairn_fsinfo fi;
    uint64_t rng = seed * 131u + nbad;
    char label[64];
    uint32_t i;
    int rc;
    size_t o = 0;
    o += (size_t)snprintf(label, sizeof label, "factory bad");
    for (i = 0; i < nbad && o < sizeof label - 8; i++)
        o += (size_t)snprintf(label + o, sizeof label - o, " %u", (unsigned)bad[i]);
    t_fs_init(&t, nand_sim(seed), 0);
    for (i = 0; i < nbad; i++)
        csim_set_factory_bad(t.sim, bad[i]);
    t_fs_format_mount(&t);
    rc = cairn_fs_stat(t.fs, &fi);
    CHECK(rc == 0 && fi.bad_blocks == nbad, "[%s] fs_stat bad_blocks %u, expected %u", label,
          (unsigned)fi.bad_blocks, (unsigned)nbad);
    printf("  %s: anchors at blocks %u and %u, bad_blocks %u, total %llu bytes\n", label,
           (unsigned)t.fs->anchor[0], (unsigned)t.fs->anchor[1], (unsigned)fi.bad_blocks,
           (unsigned long long)fi.total_bytes);
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    rop_init(&r, &t);
    model_steps(&d, &t, &rng, &r, 600, 150, NULL);
    for (i = 0; i < nbad; i++)
        CHECK(csim_erase_count(t.sim, bad[i]) == 0, "[%s] factory-bad block %u was erased %u "
              "times", label, (unsigned)bad[i], (unsigned)csim_erase_count(t.sim, bad[i]));
    if (t.mounted && cairn_fs_stat(t.fs, &fi) == 0)
        CHECK(fi.bad_blocks == nbad, "[%s] bad_blocks after the run %u", label,
              (unsigned)fi.bad_blocks);
    CHECK(!d.failed, "[%s] the model held", label);
    m_free(&m);
    t_fs_free(&t);
}

/* ------------------------------------------------- (b) failing blocks */

static uint32_t n_failops, n_wearouts;
static struct wdev *fail_w;
static void fail_hook(struct tfs *t, uint64_t *rng, long i)
{
    if (i % 40 != 7 || sim_bad(t->sim) >= 9) /* at most about a quarter goes bad */
        return;
    if (t_randn(rng, 3) == 0) {
        /* a block (not an anchor) that will fail on an erase soon */
        uint32_t b = 2 + t_randn(rng, NBLK - 2);
        csim_wear_out_after(t->sim, b, t_randn(rng, 2));
        n_wearouts++;
    } else if (fail_w->fail_in == 0) {
        fail_w->fail_in = 1 + t_randn(rng, 40);
        n_failops++;
    }
}

static void failing_run(uint64_t seed, long steps, int meta)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct rop r;
    struct cairn_fsinfo fi;
    uint64_t rng = seed * 977u;
    char label[64];
    uint32_t bad = 0, sb;
    int i;
    clock_t c0 = clock();
    struct wdev w;
    snprintf(label, sizeof label, "failing %sblocks seed %llu", meta ? "journal and anchor " : "",
             (unsigned long long)seed);
    t_fs_init(&t, nand_sim(seed), 0);
    w_attach(&w, &t);
    w.trace = (int)t_env_u64("CAIRN_TEST_VERBOSE", 0);
    w.fail_meta = meta;
    fail_w = &w;
    csim_set_factory_bad(t.sim, 9);
    t_fs_format_mount(&t);
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    rop_init(&r, &t);
    r.max_bytes = 1024 * 1024;
    n_failops = n_wearouts = 0;
    model_steps(&d, &t, &rng, &r, steps, 100, fail_hook);
    /* idle collection empties the failing segments left */
    for (i = 0; i < 64 && t.mounted; i++)
        if (cairn_gc(t.fs, 64) <= 0)
            break;
    if (t.mounted && t_fs_remount(&t, label) == 0)
        d_verify(&d);
    sb = sim_bad(t.sim);
    if (t.mounted && cairn_fs_stat(t.fs, &fi) == 0)
        bad = fi.bad_blocks;
    printf("  %s: %ld steps, %u failed programs/erases injected (%u in data and node "
           "segments, %u in the journal's or an anchor), %u blocks worn out early; "
           "bad_blocks %u (the device marks %u bad, 1 of them factory-bad); %.1f s\n",
           label, steps, (unsigned)n_failops, (unsigned)w.failed_data, (unsigned)w.failed_meta,
           (unsigned)n_wearouts, (unsigned)bad, (unsigned)sb,
           (double)(clock() - c0) / CLOCKS_PER_SEC);
    CHECK(bad == sb, "[%s] bad_blocks %u equals the blocks marked bad %u", label,
          (unsigned)bad, (unsigned)sb);
    CHECK(bad > 1, "[%s] some blocks were retired: %u", label, (unsigned)bad);
    CHECK(!d.failed, "[%s] the model held", label);
    m_free(&m);
    t_fs_free(&t);
}

/* A program into the journal's segment fails: the journal moves to a fresh
 * segment behind a checkpoint, so no call fails, nothing synced before is
 * lost, and the volume mounts clean. */
static void meta_failure(uint64_t seed)
{
    struct tfs t;
    struct wdev w;
    const char *label = "program failure in the journal";
    uint8_t buf[3000];
    int fd, i, rc, io = 0;
    t_fs_init(&t, nand_sim(seed), 0);
    w_attach(&w, &t);
    t_fs_format_mount(&t);
    t_pattern(buf, sizeof buf, 3);
    CHECK(t_write_file(t.fs, "/synced", buf, sizeof buf) == 0, "[%s] write /synced", label);
    w.fail_meta = 2;
    w.fail_in = 1;
    fd = cairn_open(t.fs, "/f", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    for (i = 0; i < 20 && w.failed_meta == 0; i++) {
        rc = (int)cairn_write(t.fs, fd, buf, 100);
        io += rc == CAIRN_ERR_IO;
        rc = cairn_file_sync(t.fs, fd);
        io += rc == CAIRN_ERR_IO;
    }
    rc = cairn_close(t.fs, fd);
    io += rc == CAIRN_ERR_IO;
    printf("  %s: the failed program (%u) surfaced as %d CAIRN_ERR_IO results\n", label,
           (unsigned)w.failed_meta, io);
    CHECK(w.failed_meta > 0 && io == 0, "[%s] %u failed programs, %d calls returned "
          "CAIRN_ERR_IO", label, (unsigned)w.failed_meta, io);
    t_fs_unmount(&t);
    rc = t_fs_mount(&t);
    CHECK(rc == 0, "[%s] mount after the failure: %d %s", label, rc, t_errname(rc));
    if (rc == 0) {
        CHECK(t_fs_check(&t, label) == 0, "[%s] check", label);
        t_check_file(t.fs, "/synced", buf, sizeof buf, label);
    }
    t.allow_violations = 1;
    t_fs_free(&t);
}

/* ------------------------------------------------------- (c) bit flips */

static uint32_t flagged(const cairn *fs, uint8_t flag)
{
    uint32_t s, n = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        n += (fs->segs[s].flags & flag) != 0;
    return n;
}

/* Flagged segments that GC could take (closed ones; an open head or the
 * journal's segment is taken once it is closed). */
static uint32_t flagged_full(const cairn *fs, uint8_t flag)
{
    uint32_t s, n = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        n += (fs->segs[s].flags & flag) != 0 && fs->segs[s].state == CN_SEG_FULL;
    return n;
}

static void corrected_run(uint32_t ppm, uint64_t seed)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct rop r;
    struct csim_counters c;
    uint64_t rng = seed * 4099u + ppm;
    char label[64];
    uint32_t most = 0, after;
    long i;
    int k;
    snprintf(label, sizeof label, "corrected reads %u ppm", (unsigned)ppm);
    t_fs_init(&t, nand_sim(seed), 0);
    t_fs_format_mount(&t);
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    rop_init(&r, &t);
    csim_set_bitflips(t.sim, ppm, 0);
    for (i = 0; i < 800 && !d.failed; i++) {
        uint32_t f;
        d.step = i;
        d_random_op(&d, &rng, &r);
        f = flagged(t.fs, CN_SF_SCRUB);
        most = f > most ? f : most;
        if (i % 200 == 199) {
            d_close_all(&d);
            if (t_fs_remount(&t, label))
                d.failed = 1;
            else
                d_verify(&d);
        }
    }
    d_close_all(&d);
    { /* (the closing flushes read too; reads of the anchors flag nothing) */
        uint32_t f = flagged(t.fs, CN_SF_SCRUB);
        most = f > most ? f : most;
    }
    csim_set_bitflips(t.sim, 0, 0);
    /* scrubbing is GC work: idle collection carries it out */
    for (k = 0; k < 200 && flagged_full(t.fs, CN_SF_SCRUB) > 0; k++)
        if (cairn_gc(t.fs, 64) < 0)
            break;
    after = flagged_full(t.fs, CN_SF_SCRUB);
    csim_counters(t.sim, &c);
    {
        uint32_t sg;
        for (sg = t.fs->seg_base; sg < t.fs->seg_count; sg++)
            if (t.fs->segs[sg].flags & CN_SF_SCRUB)
                printf("    segment %u still flagged: state %u, live %u, flags 0x%x (log %u)\n",
                       (unsigned)sg, (unsigned)t.fs->segs[sg].state,
                       (unsigned)t.fs->segs[sg].live, (unsigned)t.fs->segs[sg].flags,
                       (unsigned)t.fs->log.seg);
    }
    if (!d.failed && t_fs_remount(&t, label) == 0)
        d_verify(&d);
    printf("  %s: %llu reads reported corrected; up to %u segments flagged for scrubbing at "
           "once; after %d idle cairn_gc calls %u closed ones left, %u open (head or "
           "journal) ones still flagged\n",
           label, (unsigned long long)c.corrected, (unsigned)most, k, (unsigned)after,
           (unsigned)(flagged(t.fs, CN_SF_SCRUB) - after));
    CHECK(c.corrected > 0 && most > 0, "[%s] corrected reads flagged segments", label);
    CHECK(after == 0, "[%s] idle GC scrubbed every closed flagged segment: %u left", label,
          (unsigned)after);
    CHECK(!d.failed, "[%s] the model held", label);
    m_free(&m);
    t_fs_free(&t);
}

/* Files written cleanly, then read with random uncorrectable reads: each read
 * returns the right bytes or CAIRN_ERR_IO, nothing else. */
static void uncorrectable_run(uint32_t ppm, uint64_t seed)
{
    struct tfs t;
    char label[64], p[32];
    uint8_t *want, *got;
    int32_t sz = 200 * 1024, n;
    int f, round, fd, ok = 0, io = 0, wrong = 0, other = 0, rc;
    snprintf(label, sizeof label, "uncorrectable reads %u ppm", (unsigned)ppm);
    t_fs_init(&t, nand_sim(seed), 0);
    t_fs_format_mount(&t);
    want = (uint8_t *)malloc((size_t)sz);
    got = (uint8_t *)malloc((size_t)sz);
    for (f = 0; f < 6; f++) {
        snprintf(p, sizeof p, "/u%d", f);
        t_pattern(want, (size_t)sz, (uint64_t)f);
        rc = t_write_file(t.fs, p, want, sz);
        CHECK(rc == 0, "[%s] write %s: %d", label, p, rc);
    }
    t_fs_remount(&t, label);
    csim_set_bitflips(t.sim, 0, ppm);
    for (round = 0; round < 20; round++)
        for (f = 0; f < 6; f++) {
            int32_t off = (int32_t)((uint32_t)(round * 7919 + f * 104729) % (uint32_t)(sz - 8192));
            snprintf(p, sizeof p, "/u%d", f);
            t_pattern(want, (size_t)sz, (uint64_t)f);
            fd = cairn_open(t.fs, p, CAIRN_O_RDONLY);
            if (fd < 0) {
                if (fd == CAIRN_ERR_IO)
                    io++;
                else
                    other++;
                continue;
            }
            cairn_seek(t.fs, fd, off, CAIRN_SEEK_SET);
            n = cairn_read(t.fs, fd, got, 8192);
            if (n == CAIRN_ERR_IO)
                io++;
            else if (n < 0)
                other++;
            else if (memcmp(got, want + off, (size_t)n) != 0)
                wrong++;
            else
                ok++;
            cairn_close(t.fs, fd);
        }
    csim_set_bitflips(t.sim, 0, 0);
    printf("  %s: %d reads right, %d CAIRN_ERR_IO, %d wrong data, %d other errors\n", label,
           ok, io, wrong, other);
    CHECK(wrong == 0 && other == 0, "[%s] only right data or CAIRN_ERR_IO", label);
    CHECK(ok > 0 && (io > 0 || ppm < 10000), "[%s] both outcomes seen", label);
    if (t_fs_remount(&t, label) == 0)
        for (f = 0; f < 6; f++) {
            snprintf(p, sizeof p, "/u%d", f);
            t_pattern(want, (size_t)sz, (uint64_t)f);
            t_check_file(t.fs, p, want, sz, label);
        }
    free(want);
    free(got);
    t_fs_free(&t);
}

/* One unreadable page in /a: reads of its range fail with CAIRN_ERR_IO, the
 * rest of /a and all of /b read right. */
static void unreadable_page(uint64_t seed)
{
    struct tfs t;
    struct wdev w;
    const char *label = "unreadable page";
    uint8_t *a, *b, *got, spare[64];
    int32_t sz = 64 * 2048, n;
    uint32_t page, np, ps, target = CN_NONE;
    struct cairn_info ia;
    int fd, rc;
    t_fs_init(&t, nand_sim(seed), 0);
    w_attach(&w, &t);
    t_fs_format_mount(&t);
    ps = csim_geometry(t.sim)->page_size;
    np = csim_geometry(t.sim)->pages_per_block * NBLK;
    a = (uint8_t *)malloc((size_t)sz);
    b = (uint8_t *)malloc((size_t)sz);
    got = (uint8_t *)malloc((size_t)sz);
    t_pattern(a, (size_t)sz, 1);
    t_pattern(b, (size_t)sz, 2);
    CHECK(t_write_file(t.fs, "/a", a, sz) == 0, "[%s] write /a", label);
    CHECK(t_write_file(t.fs, "/b", b, sz) == 0, "[%s] write /b", label);
    t_fs_remount(&t, label);
    /* the page holding byte 10 * ps of /a: its data matches */
    for (page = 0; page < np && target == CN_NONE; page++) {
        csim_peek(t.sim, page, got, spare);
        if (memcmp(got, a + 10 * ps, ps) == 0)
            target = page;
    }
    CHECK(target != CN_NONE, "[%s] found the page of /a", label);
    w.unc_lo = target;
    w.unc_hi = target + 1;
    CHECK(cairn_stat(t.fs, "/a", &ia) == 0, "[%s] stat /a", label);
    fd = cairn_open(t.fs, "/a", CAIRN_O_RDONLY);
    cairn_seek(t.fs, fd, (int32_t)(10 * ps + 100), CAIRN_SEEK_SET);
    n = cairn_read(t.fs, fd, got, 200);
    CHECK(n == CAIRN_ERR_IO, "[%s] reading the bad page's range: %ld %s", label, (long)n,
          t_errname(n));
    cairn_seek(t.fs, fd, 0, CAIRN_SEEK_SET);
    n = cairn_read(t.fs, fd, got, (int32_t)(10 * ps));
    CHECK(n == (int32_t)(10 * ps) && memcmp(got, a, (size_t)n) == 0,
          "[%s] /a before the bad page: %ld", label, (long)n);
    cairn_seek(t.fs, fd, (int32_t)(11 * ps), CAIRN_SEEK_SET);
    n = cairn_read(t.fs, fd, got, sz - (int32_t)(11 * ps));
    CHECK(n == sz - (int32_t)(11 * ps) && memcmp(got, a + 11 * ps, (size_t)n) == 0,
          "[%s] /a after the bad page: %ld", label, (long)n);
    cairn_close(t.fs, fd);
    t_check_file(t.fs, "/b", b, sz, label);
    /* rewriting the range replaces the bad page: the file reads whole again */
    fd = cairn_open(t.fs, "/a", CAIRN_O_WRONLY);
    cairn_seek(t.fs, fd, (int32_t)(10 * ps), CAIRN_SEEK_SET);
    n = cairn_write(t.fs, fd, a + 10 * ps, (int32_t)ps);
    CHECK(n == (int32_t)ps, "[%s] rewrite the bad page: %ld %s", label, (long)n, t_errname(n));
    rc = cairn_close(t.fs, fd);
    CHECK(rc == 0, "[%s] close: %d", label, rc);
    t_check_file(t.fs, "/a", a, sz, label);
    printf("  %s: page %u of /a unreadable (%llu reads failed): its range gives "
           "CAIRN_ERR_IO, the rest of /a and /b read right, rewriting it heals the file\n",
           label, (unsigned)target, (unsigned long long)w.unc_reads);
    w.unc_lo = w.unc_hi = 0;
    t_fs_remount(&t, label);
    free(a);
    free(b);
    free(got);
    t_fs_free(&t);
}

/* ------------------------------------------- (d) checkpoint copies */

/* Pages of the two anchors holding a checkpoint header with sequence seq. */
static uint32_t newest_ckpt(csim *sim, const cairn *fs, uint32_t *pages, uint32_t max)
{
    uint8_t buf[2048];
    uint32_t a, p, best = 0, n = 0;
    for (a = 0; a < 2; a++)
        for (p = 0; p < fs->seg_pages; p++) {
            uint32_t pg = fs->anchor[a] * fs->seg_pages + p, seq;
            csim_peek(sim, pg, buf, NULL);
            if (memcmp(buf, "CRN1", 4) != 0)
                continue;
            seq = cn_get32(buf + 8);
            if (seq > best) {
                best = seq;
                n = 0;
            }
            if (seq == best && n < max)
                pages[n++] = pg;
        }
    return n;
}

static void ckpt_copy(int how, uint64_t seed)
{
    struct tfs t;
    struct wdev w;
    struct model m;
    struct mdrv d;
    struct rop r;
    uint64_t rng = seed * 11u + (uint64_t)how;
    uint32_t pages[4], n;
    uint8_t junk[2048];
    char label[64];
    int rc;
    snprintf(label, sizeof label, "checkpoint, first copy %s", how ? "unreadable" : "garbled");
    t_fs_init(&t, nand_sim(seed), 0);
    w_attach(&w, &t);
    t_fs_format_mount(&t);
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    rop_init(&r, &t);
    model_steps(&d, &t, &rng, &r, 200, 1000, NULL); /* ends with a remount */
    rc = t_fs_unmount(&t);
    CHECK(rc == 0, "[%s] unmount: %d", label, rc);
    n = newest_ckpt(t.sim, t.fs, pages, 4);
    CHECK(n == 2, "[%s] the newest checkpoint has two copies: %u", label, (unsigned)n);
    if (n >= 1) {
        if (how) {
            w.unc_lo = pages[0];
            w.unc_hi = pages[0] + 1;
        } else {
            t_pattern(junk, sizeof junk, 5);
            csim_poke(t.sim, pages[0], junk, NULL);
        }
    }
    rc = t_fs_mount(&t);
    CHECK(rc == 0, "[%s] mount: %d %s", label, rc, t_errname(rc));
    if (rc == 0) {
        rc = t_fs_check(&t, label);
        CHECK(rc == 0, "[%s] check: %d", label, rc);
        d_verify(&d);
    }
    printf("  %s (page %u of %u copies): mount %s, same content: %s\n", label,
           n ? (unsigned)pages[0] : 0u, (unsigned)n, rc == 0 ? "ok" : "FAILED",
           d.failed ? "no" : "yes");
    w.unc_lo = w.unc_hi = 0;
    t.allow_violations = 1; /* the poke rewrote a programmed page */
    m_free(&m);
    t_fs_free(&t);
}

int main(int argc, char **argv)
{
    uint64_t seed = t_env_u64("CAIRN_TEST_SEED", 1), s;
    static const uint32_t bad1[] = {1}, bad2[] = {0, 1, 7}, bad3[] = {3, 4, 5, 20, 31};
    clock_t c0 = clock(), c1;
    uint32_t runs = t_scale();
    (void)argc;
    (void)argv;
    t_begin("test_badblock");
    printf("test_badblock: nand-dhara, %u blocks; factory bad blocks, failing programs and "
           "erases, bit flips, checkpoint copies; seed %llu\n",
           NBLK, (unsigned long long)seed);
    c1 = clock();
    factory_run(bad1, 1, seed);
    factory_run(bad2, 3, seed);
    factory_run(bad3, 5, seed);
    printf("factory bad blocks: %.1f s\n", (double)(clock() - c1) / CLOCKS_PER_SEC);
    c1 = clock();
    for (s = 0; s < 3 * runs; s++)
        failing_run(seed + s, 3000, 0);
    meta_failure(seed);
    printf("failing blocks: %.1f s\n", (double)(clock() - c1) / CLOCKS_PER_SEC);
    c1 = clock();
    corrected_run(20000, seed);
    corrected_run(200000, seed);
    uncorrectable_run(2000, seed);
    uncorrectable_run(30000, seed);
    unreadable_page(seed);
    printf("bit flips: %.1f s\n", (double)(clock() - c1) / CLOCKS_PER_SEC);
    c1 = clock();
    ckpt_copy(0, seed);
    ckpt_copy(1, seed);
    printf("checkpoint copies: %.1f s\n", (double)(clock() - c1) / CLOCKS_PER_SEC);
    printf("test_badblock: %.1f s\n", (double)(clock() - c0) / CLOCKS_PER_SEC);
    return t_summary("test_badblock");
}
