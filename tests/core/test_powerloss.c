/*
 * test_powerloss: invariants 1 and 2 at every power cut.
 *
 * Scenarios: each is run once to count its mutating device operations (n);
 * then for every op index i < n and both tear modes (PREFIX, RANDOM): fresh
 * volume, the scenario's pre-state (synced, remounted), power cut at op i,
 * the scenario until a call fails, power on, and then:
 *   - mount must succeed and cairn_check must return 0 (invariant 1);
 *   - the volume must match the recorded history (invariant 2): the namespace
 *     equals the namespace after some completed call (or the call in flight)
 *     at or after the last point that made it durable, and every file holds
 *     one of its states at or after its last completed file_sync/close/sync:
 *     the state after a completed call or the call in flight, or the state
 *     inside one of those write calls where a prefix of its bytes had been
 *     written (see tmodel.h);
 *   - the recovered volume is writable: a new file survives a remount.
 * Space management under the cuts: "gc-nearly-full" overwrites in place on
 * a nearly full volume (GC steps and collections move data), "wear-levelling"
 * runs with wear_spread 1 and idle cairn_gc calls (static levelling moves
 * cold data), "relocation" has its third program into a data or node
 * segment fail (the block goes bad; the data is written elsewhere and the
 * segment retired) and cuts at every op after it; "journal-relocation" the
 * same with the failure in the journal's segment (the journal moves behind a
 * checkpoint). The long ones cut at every Nth op (scen.cuts).
 * Then random runs (like test_model) with a power cut at a random op, three
 * rounds per run, each verified the same way.
 *
 * Usage: test_powerloss [seed]   (seed of the random runs; default 1, or
 * CAIRN_TEST_SEED). CAIRN_TEST_SCALE multiplies the random runs (20 per
 * medium), CAIRN_TEST_STEPS sets their steps per round (100).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cn.h"
#include "spacesup.h"

#define R(call)                                                                \
    do {                                                                       \
        call;                                                                  \
        if (d->stop)                                                           \
            return;                                                            \
    } while (0)

static int32_t PG; /* page size of the medium under test */

static uint8_t *pat(int32_t len, uint64_t seed)
{
    static uint8_t *buf;
    static int32_t cap;
    if (len > cap) {
        buf = (uint8_t *)realloc(buf, (size_t)len);
        if (!buf)
            t_fatal("out of memory");
        cap = len;
    }
    t_pattern(buf, (size_t)len, seed);
    return buf;
}

static void mkfile(struct mdrv *d, const char *path, int32_t len, uint64_t seed)
{
    int fd;
    R(fd = d_open(d, path, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC));
    if (len)
        R(d_write(d, fd, pat(len, seed), len));
    R(d_close(d, fd));
}

/* ---- scenarios ---- */

static void pre_none(struct mdrv *d) { (void)d; }

static void run_create_write_close(struct mdrv *d)
{
    int fd;
    R(fd = d_open(d, "/a", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    R(d_write(d, fd, pat(PG + 17, 1), PG + 17));
    R(d_write(d, fd, pat(2 * PG + 300, 2), 2 * PG + 300));
    R(d_close(d, fd));
}

static void pre_log(struct mdrv *d) { mkfile(d, "/log", 0, 0); }
static void run_append_synced(struct mdrv *d)
{
    int fd, i;
    R(fd = d_open(d, "/log", CAIRN_O_WRONLY | CAIRN_O_APPEND));
    for (i = 0; i < 12; i++) {
        R(d_write(d, fd, pat(40, 100 + (uint64_t)i), 40));
        R(d_fsync(d, fd));
    }
    R(d_close(d, fd));
}

static void pre_f4(struct mdrv *d) { mkfile(d, "/f", 4 * PG + 123, 3); }
static void run_overwrite_middle(struct mdrv *d)
{
    int fd;
    R(fd = d_open(d, "/f", CAIRN_O_RDWR));
    R(d_seek(d, fd, PG + 7, CAIRN_SEEK_SET));
    R(d_write(d, fd, pat(2 * PG, 4), 2 * PG));
    R(d_fsync(d, fd));
    R(d_close(d, fd));
}

/* Small writes in sequence: full pages go to the stage (file.c) and are
 * programmed four (NOR) or two (SD-like) at a time; a second file taking
 * the stage programs the first's; synced once half-way. */
static void run_small_appends(struct mdrv *d)
{
    int f1, f2, i;
    R(f1 = d_open(d, "/s1", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    R(f2 = d_open(d, "/s2", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    for (i = 0; i < 60; i++) {
        R(d_write(d, f1, pat(PG / 6 + 1, 200 + (uint64_t)i), PG / 6 + 1));
        if (i == 30)
            R(d_fsync(d, f1));
        if (i % 20 == 19)
            R(d_write(d, f2, pat(PG + 5, 300 + (uint64_t)i), PG + 5));
    }
    R(d_close(d, f1));
    R(d_close(d, f2));
}

static void pre_ab(struct mdrv *d)
{
    mkfile(d, "/a", 1000, 5);
    mkfile(d, "/b", 1500, 6);
}
static void run_rename_over(struct mdrv *d)
{
    R(d_rename(d, "/a", "/b"));
    R(d_sync(d));
}

static void pre_remove(struct mdrv *d)
{
    mkfile(d, "/a", 700, 7);
    mkfile(d, "/b", 3 * PG, 8);
    d_mkdir(d, "/d");
    mkfile(d, "/d/c", 2 * PG + 5, 9);
}
static void run_remove(struct mdrv *d)
{
    R(d_remove(d, "/a"));
    R(d_remove(d, "/d/c"));
    R(d_remove(d, "/d"));
    R(d_sync(d));
}

static void run_mkdir_create(struct mdrv *d)
{
    int fd;
    R(d_mkdir(d, "/d"));
    R(d_mkdir(d, "/d/e"));
    R(fd = d_open(d, "/d/e/f", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    R(d_write(d, fd, pat(500, 10), 500));
    R(d_close(d, fd));
}

static void pre_f5(struct mdrv *d) { mkfile(d, "/f", 5 * PG + 9, 11); }
static void run_truncate(struct mdrv *d)
{
    int fd;
    R(fd = d_open(d, "/f", CAIRN_O_RDWR));
    R(d_truncate(d, fd, PG + 100));
    R(d_fsync(d, fd));
    R(d_truncate(d, fd, 3 * PG));
    R(d_seek(d, fd, 0, CAIRN_SEEK_END));
    R(d_write(d, fd, pat(64, 12), 64));
    R(d_close(d, fd));
}

static void run_many_small(struct mdrv *d)
{
    int i;
    char p[32];
    R(d_mkdir(d, "/s"));
    for (i = 0; i < 12; i++) {
        snprintf(p, sizeof p, "/s/f%02d", i);
        mkfile(d, p, 20 + i, 20 + (uint64_t)i);
        if (d->stop)
            return;
    }
    R(d_sync(d));
}

static void pre_dir(struct mdrv *d)
{
    d_mkdir(d, "/d");
    d_mkdir(d, "/d/sub");
    mkfile(d, "/d/x", 300, 13);
    mkfile(d, "/d/y", PG + 1, 14);
    mkfile(d, "/d/sub/z", 50, 15);
}
static void run_dir_rename(struct mdrv *d)
{
    int fd;
    R(d_rename(d, "/d", "/e"));
    R(fd = d_open(d, "/e/x", CAIRN_O_RDWR));
    R(d_seek(d, fd, 10, CAIRN_SEEK_SET));
    R(d_write(d, fd, pat(100, 16), 100));
    R(d_close(d, fd));
}

static void pre_h(struct mdrv *d) { mkfile(d, "/h", 100, 17); }
static void run_hole(struct mdrv *d)
{
    int fd;
    R(fd = d_open(d, "/h", CAIRN_O_WRONLY));
    R(d_seek(d, fd, 3 * PG + 5, CAIRN_SEEK_SET));
    R(d_write(d, fd, pat(50, 18), 50));
    R(d_fsync(d, fd));
    R(d_close(d, fd));
}

static void pre_t(struct mdrv *d) { mkfile(d, "/t", 2 * PG + 40, 19); }
static void run_rewrite_trunc(struct mdrv *d)
{
    int fd;
    R(fd = d_open(d, "/t", CAIRN_O_WRONLY | CAIRN_O_TRUNC));
    R(d_write(d, fd, pat(300, 20), 300));
    R(d_close(d, fd));
}

static void run_interleaved(struct mdrv *d)
{
    int f1, f2, i;
    R(f1 = d_open(d, "/p", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    R(f2 = d_open(d, "/q", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    for (i = 0; i < 5; i++) {
        R(d_write(d, f1, pat(PG / 2 + 13, 30 + (uint64_t)i), PG / 2 + 13));
        R(d_write(d, f2, pat(PG / 2 + 29, 40 + (uint64_t)i), PG / 2 + 29));
    }
    R(d_fsync(d, f1));
    R(d_close(d, f2));
    R(d_close(d, f1));
}

/* Fill the volume with files of almost a segment each until a third of it
 * is free, then remove every other one: the scenario then writes more than
 * the free space, so garbage collection has to run (and be cut). */
static int32_t SEG;
static int64_t TOTAL;
/* FREE0: what the empty volume takes (free_bytes), the scale the fills go
 * by: on 2 MiB of NAND the reserve and the heads hold back about half of
 * the total, and fills that went by the total stopped after a file or two,
 * so GC had nothing to move (0-4 pages in a run). */
static int64_t FREE0;
static void gc_geometry(cairn *fs)
{
    struct cairn_fsinfo fi;
    if (cairn_fs_stat(fs, &fi) == 0) {
        SEG = (int32_t)fi.block_size;
        TOTAL = (int64_t)fi.total_bytes;
        FREE0 = (int64_t)fi.free_bytes;
    }
}
static void pre_gc(struct mdrv *d)
{
    struct cairn_fsinfo fi;
    char p[32];
    int i, n;
    gc_geometry(d->fs);
    for (n = 0; n < 1000 && !d->stop; n++) {
        if (cairn_fs_stat(d->fs, &fi) != 0 || (int64_t)fi.free_bytes < FREE0 / 3)
            break;
        snprintf(p, sizeof p, "/g%03d", n);
        mkfile(d, p, SEG - PG, 200 + (uint64_t)n);
    }
    for (i = 0; i < n && !d->stop; i += 2) {
        snprintf(p, sizeof p, "/g%03d", i);
        d_remove(d, p);
    }
}
static void run_gc(struct mdrv *d)
{
    int fd, i, chunks = (int)(TOTAL / 3 / (SEG / 4));
    R(fd = d_open(d, "/new", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    for (i = 0; i < chunks; i++) {
        R(d_write(d, fd, pat(SEG / 4, 300 + (uint64_t)i), SEG / 4));
        if (i % 2)
            R(d_fsync(d, fd));
    }
    R(d_close(d, fd));
    R(d_remove(d, "/g001"));
    R(d_sync(d));
}

/* Space management at work under the cuts (issue 4). */

/* Nearly full: files of about half a segment until an eighth of the volume
 * is free, every third removed; the scenario then overwrites data in place,
 * so bounded GC steps and whole collections move live pages. */
static void pre_gc_full(struct mdrv *d)
{
    struct cairn_fsinfo fi;
    char p[32];
    int i, n;
    gc_geometry(d->fs);
    for (n = 0; n < 1000 && !d->stop; n++) {
        if (cairn_fs_stat(d->fs, &fi) != 0 || (int64_t)fi.free_bytes < FREE0 / 8 + SEG)
            break;
        snprintf(p, sizeof p, "/g%03d", n);
        mkfile(d, p, SEG / 2, 500 + (uint64_t)n);
    }
    for (i = 0; i < n && !d->stop; i += 3) {
        snprintf(p, sizeof p, "/g%03d", i);
        d_remove(d, p);
    }
}
static void run_gc_full(struct mdrv *d)
{
    struct cairn_fsinfo fi;
    int fd, i, k, round = 0;
    int64_t written = 0, goal;
    char p[32];
    /* overwrite files in place until more than the free space was written */
    goal = (cairn_fs_stat(d->fs, &fi) == 0 ? (int64_t)fi.free_bytes : TOTAL / 4) + 2 * SEG;
    for (k = 1; written < goal && k < 1000; k++) {
        if (k % 3 == 0)
            continue; /* removed */
        snprintf(p, sizeof p, "/g%03d", k);
        if (m_find(d->m, p) < 0) {
            k = 0; /* round again */
            round++;
            continue;
        }
        R(fd = d_open(d, p, CAIRN_O_RDWR));
        for (i = (k + round) % 8; i < (k + round) % 8 + 2; i += 1) { /* the rest lives */
            R(d_seek(d, fd, (int32_t)((i % 8) * SEG / 16), CAIRN_SEEK_SET));
            R(d_write(d, fd, pat(SEG / 16, 600 + (uint64_t)(k * 8 + i)), SEG / 16));
            written += SEG / 16;
        }
        R(d_fsync(d, fd));
        R(d_close(d, fd));
    }
    R(d_sync(d));
}

/* Static wear levelling forced (wear_spread 1): cold files, then a hot file
 * rewritten until the erase counts spread; the scenario keeps rewriting, so
 * GC steps move the cold data off the least-worn segments. */
static void pre_wear(struct mdrv *d)
{
    char p[32];
    int i;
    gc_geometry(d->fs);
    for (i = 0; i < 4 && !d->stop; i++) {
        snprintf(p, sizeof p, "/cold%d", i);
        mkfile(d, p, SEG - PG, 700 + (uint64_t)i);
    }
    for (i = 0; i < 40 && !d->stop; i++)
        mkfile(d, "/hot", 2 * SEG, 720 + (uint64_t)i);
}
static void run_wear(struct mdrv *d)
{
    int fd, i;
    for (i = 0; i < 6; i++) {
        R(fd = d_open(d, "/hot", CAIRN_O_WRONLY | CAIRN_O_TRUNC));
        R(d_write(d, fd, pat(SEG + SEG / 2, 740 + (uint64_t)i), SEG + SEG / 2));
        R(d_close(d, fd));
        /* idle collection: with the counts spread, static levelling moves */
        (void)cairn_gc(d->fs, 32);
        (void)cairn_gc(d->fs, 32);
    }
    R(d_sync(d));
}

/* Relocation: a program fails (the trial arms it, see scen.fail) while a
 * file is written; its segment is emptied and retired; then the cut. */
static void pre_reloc(struct mdrv *d)
{
    gc_geometry(d->fs);
    mkfile(d, "/base", 3 * PG + 11, 800);
}
static void run_reloc(struct mdrv *d)
{
    int fd, i;
    R(fd = d_open(d, "/r", CAIRN_O_WRONLY | CAIRN_O_CREAT));
    for (i = 0; i < 6; i++) {
        R(d_write(d, fd, pat(2 * PG, 810 + (uint64_t)i), 2 * PG));
        if (i % 2)
            R(d_fsync(d, fd));
    }
    R(d_close(d, fd));
    R(d_sync(d));
}

struct scen {
    const char *name;
    void (*pre)(struct mdrv *d);
    void (*run)(struct mdrv *d);
    int small; /* on the small volume of t_sim_small */
    uint16_t wear_spread; /* config (0: default) */
    int fail;   /* arm a program failure: 1 at a data write, 3 in the journal */
    int cuts;   /* at most this many cut points (every Nth op); 0: every op */
    int raw;    /* NOR and NAND only */
};

static const struct scen scens[] = {
    {"create-write-close", pre_none, run_create_write_close, 0, 0, 0, 0, 0},
    {"append-synced", pre_log, run_append_synced, 0, 0, 0, 0, 0},
    {"overwrite-middle", pre_f4, run_overwrite_middle, 0, 0, 0, 0, 0},
    {"rename-over", pre_ab, run_rename_over, 0, 0, 0, 0, 0},
    {"remove", pre_remove, run_remove, 0, 0, 0, 0, 0},
    {"mkdir-create", pre_none, run_mkdir_create, 0, 0, 0, 0, 0},
    {"truncate", pre_f5, run_truncate, 0, 0, 0, 0, 0},
    {"many-small", pre_none, run_many_small, 0, 0, 0, 0, 0},
    {"dir-rename", pre_dir, run_dir_rename, 0, 0, 0, 0, 0},
    {"hole", pre_h, run_hole, 0, 0, 0, 0, 0},
    {"rewrite-trunc", pre_t, run_rewrite_trunc, 0, 0, 0, 0, 0},
    {"interleaved", pre_none, run_interleaved, 0, 0, 0, 0, 0},
    {"small-appends", pre_none, run_small_appends, 0, 0, 0, 0, 0},
    {"gc", pre_gc, run_gc, 1, 0, 0, 0, 0},
    {"gc-nearly-full", pre_gc_full, run_gc_full, 1, 0, 0, 120, 0},
    {"wear-levelling", pre_wear, run_wear, 1, 1, 0, 120, 0},
    {"relocation", pre_reloc, run_reloc, 0, 0, 1, 0, 1},
    {"journal-relocation", pre_reloc, run_reloc, 0, 0, 3, 0, 1},
};
#define N_SCENS ((int)(sizeof scens / sizeof scens[0]))

/* ---- one trial ---- */

static long n_trials, n_no_cut, n_mount_fail, n_check_fail, n_state_fail;

static const char *tear_name(int tear) { return tear == CSIM_TEAR_PREFIX ? "prefix" : "random"; }

/* After recovery: a new file is written and survives a remount. */
static void post_write(struct tfs *t, const char *label)
{
    int32_t len = 2 * PG + 10;
    uint8_t *buf = (uint8_t *)malloc((size_t)len);
    int rc;
    t_pattern(buf, (size_t)len, 999);
    rc = t_write_file(t->fs, "/zz_post", buf, len);
    CHECK(rc == 0, "[%s] writing a new file after recovery: %d %s (last rule violation: %s)",
          label, rc, t_errname(rc), csim_last_violation(t->sim));
    if (rc == 0 && t_fs_remount(t, label) == 0)
        t_check_file(t->fs, "/zz_post", buf, len, label);
    free(buf);
}

static csim *scen_sim(int medium, const struct scen *s, uint64_t seed)
{
    if (!s->small || medium == T_NOR)
        return t_sim_new(medium, seed); /* NOR: 512 KiB already */
    if (medium == T_NAND)
        return t_sim_model("nand-dhara", 16, 1, seed); /* 2 MiB */
    {
        struct cairn_geometry geo;
        struct csim_ftl ftl;
        struct csim_cost cost;
        struct csim_options opt;
        csim *sim;
        memset(&geo, 0, sizeof geo);
        memset(&cost, 0, sizeof cost);
        memset(&opt, 0, sizeof opt);
        geo.page_size = 512;
        geo.pages_per_block = 64;
        geo.block_count = 16; /* 512 KiB */
        geo.medium = CAIRN_MEDIUM_BLOCK;
        geo.write_unit = 4096;
        geo.blocks_per_lblock = 1;
        ftl.au_bytes = 32768;
        ftl.flash_page_bytes = 4096;
        ftl.open_aus = 4;
        opt.seed = seed;
        sim = csim_new_custom(&geo, &cost, &ftl, &opt);
        if (!sim)
            t_fatal("csim_new_custom: %s", csim_error());
        return sim;
    }
}

/* Builds the scenario's pre-state (checked against the model, synced,
 * unmounted) and returns its image. */
static int prepare(int medium, const struct scen *s, struct t_image *im)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    char label[128];
    int bad;
    snprintf(label, sizeof label, "%s %s pre-state", t_medium_name[medium], s->name);
    t_fs_init(&t, scen_sim(medium, s, 1), 1);
    t.cfg.wear_spread = s->wear_spread;
    t_fs_format_mount(&t);
    m_init(&m);
    memset(&d, 0, sizeof d);
    d.fs = t.fs;
    d.sim = t.sim;
    d.m = &m;
    d.label = label;
    s->pre(&d);
    d_close_all(&d);
    if (!d.failed)
        d_sync(&d);
    bad = d.failed || t_fs_remount(&t, label) || d_verify(&d);
    if (!bad)
        bad = t_fs_unmount(&t) != 0;
    if (!bad)
        t_image_take(im, t.sim);
    m_free(&m);
    t_fs_free(&t);
    return bad;
}

/* Power cut at op `cut` (-1: none, the dry run). Returns the scenario's ops. */
/* Scenarios with `fail`: the fail_nth program or erase into a data or node
 * segment (not an anchor, not the journal's) fails and its block goes bad;
 * fail_at is the op (from the scenario's start) it was in the dry run. */
static const uint32_t fail_nth = 3;
static int64_t fail_at = -1;
static int trial_ok;          /* the scenario ran to its end (no cut, no failed call) */
static uint32_t trial_bad;    /* bad_blocks after it (mounted again) */

static uint64_t trial(int medium, const struct scen *s, const struct t_image *im,
                      int64_t cut, int tear)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct csim_counters c;
    struct wdev w;
    uint64_t start, ops;
    char label[128];
    int rc;

    snprintf(label, sizeof label, "%s %s cut %lld %s", t_medium_name[medium], s->name,
             (long long)cut, tear_name(tear));
    t_fs_init(&t, scen_sim(medium, s, 1000 + (uint64_t)(cut + 1)), 1);
    t.cfg.wear_spread = s->wear_spread;
    memset(&w, 0, sizeof w);
    if (s->fail || s->small)
        w_attach(&w, &t); /* counts the pages GC moves */
    t_image_put(im, t.sim);
    m_init(&m);
    rc = t_fs_mount(&t);
    CHECK(rc == 0, "[%s] mount of the pre-state: %d %s", label, rc, t_errname(rc));
    if (rc == 0)
        rc = m_load(&m, t.fs);
    if (rc != 0) {
        m_free(&m);
        t_fs_free(&t);
        return 0;
    }
    if (s->small) { /* the scenario's sizes follow the volume's */
        gc_geometry(t.fs);
        if (cut < 0) {
            struct cairn_fsinfo fi;
            cairn_fs_stat(t.fs, &fi);
            printf("  %s %s: segment %ld, total %lld, free %llu before the scenario, which "
                   "writes %lld\n",
                   t_medium_name[medium], s->name, (long)SEG, (long long)TOTAL,
                   (unsigned long long)fi.free_bytes,
                   (long long)(TOTAL / 3 / (SEG / 4)) * (SEG / 4));
        }
    }
    memset(&d, 0, sizeof d);
    d.fs = t.fs;
    d.sim = t.sim;
    d.m = &m;
    d.label = label;
    m_rec_start(&m);
    d.record = 1;
    csim_counters(t.sim, &c);
    start = c.mutating_ops;
    if (cut >= 0)
        csim_cut_at(t.sim, start + (uint64_t)cut, (enum csim_tear)tear);
    if (s->fail) {
        w.fail_in = fail_nth;
        w.fail_meta = s->fail == 3 ? 3 : 0;
    }
    s->run(&d);
    if (s->fail && cut < 0)
        fail_at = w.failed_data || w.failed_meta ? (int64_t)(w.failed_op - start) : -1;
    if (s->small && cut < 0) {
        struct cairn_fsinfo fi;
        cairn_fs_stat(t.fs, &fi);
        printf("  %s %s: GC moved %llu pages during the scenario; erase counts %u..%u after "
               "it (wear_spread %u)\n",
               t_medium_name[medium], s->name, (unsigned long long)w.moved,
               (unsigned)fi.erase_min, (unsigned)fi.erase_max,
               (unsigned)(s->wear_spread ? s->wear_spread : 16));
        CHECK(w.moved > 0, "[%s] GC moved pages during the scenario", label);
    }
    csim_counters(t.sim, &c);
    ops = c.mutating_ops - start;

    if (cut < 0) {
        trial_ok = !d.stop && !d.failed;
        if (!s->fail)
            CHECK(trial_ok, "[%s] the scenario without a cut", label);
        if (!d.failed) {
            d_verify(&d);
            if (t_fs_remount(&t, label) == 0) {
                struct cairn_fsinfo fi;
                CHECK(m_verify_cut(&m, t.fs, label) == 0, "[%s] state after remount",
                      label);
                if (s->fail) { /* idle GC empties the failing segment, which is retired */
                    int g;
                    for (g = 0; g < 32 && cairn_gc(t.fs, 256) > 0; g++)
                        ;
                    CHECK(t_fs_check(&t, label) == 0, "[%s] check after idle GC", label);
                    CHECK(m_verify_cut(&m, t.fs, label) == 0, "[%s] state after idle GC",
                          label);
                }
                trial_bad = cairn_fs_stat(t.fs, &fi) == 0 ? fi.bad_blocks : 0;
            }
        }
        t_fs_no_violations(&t, label);
        t.allow_violations = 1;
        m_free(&m);
        t_fs_free(&t);
        return ops;
    }

    n_trials++;
    if (csim_powered(t.sim)) {
        n_no_cut++; /* the scenario issued fewer ops this time */
        csim_cut_cancel(t.sim);
        d_close_all(&d);
    }
    CHECK(!d.failed, "[%s] a call failed before the cut (in %s)", label,
          d.cut_in ? d.cut_in : "-");
    rc = cairn_unmount(t.fs);
    CHECK(rc == 0 || t_is_err(rc), "[%s] unmount after the cut: %d", label, rc);
    t_fs_abandon(&t);
    csim_power_on(t.sim);
    rc = t_fs_mount(&t);
    CHECK(rc == 0, "[%s] mount after the cut (in %s): %d %s", label,
          d.cut_in ? d.cut_in : "-", rc, t_errname(rc));
    if (rc != 0) {
        n_mount_fail++;
    } else {
        rc = t_fs_check(&t, label);
        CHECK(rc == 0, "[%s] cairn_check after the cut (in %s): %d %s", label,
              d.cut_in ? d.cut_in : "-", rc, t_errname(rc));
        if (rc != 0)
            n_check_fail++;
        if (m_verify_cut(&m, t.fs, label) != 0) {
            n_state_fail++;
            printf("    (cut in %s)\n", d.cut_in ? d.cut_in : "-");
        }
        post_write(&t, label);
    }
    t_fs_no_violations(&t, label);
    t.allow_violations = 1;
    m_free(&m);
    t_fs_free(&t);
    return ops;
}

static void run_scenarios(int medium)
{
    int i;
    for (i = 0; i < N_SCENS; i++) {
        const struct scen *s = &scens[i];
        long f0 = (long)tc_fail;
        clock_t t0 = clock();
        struct t_image im;
        uint64_t n, k, stride = 1, tried = 0;
        int tear;
        if (s->raw && medium == T_BLOCK)
            continue;
        /* NAND in 4-block segments: the small GC volumes are tuned for
         * one-block segments (on 12 segments of 512 KiB the victims die whole
         * and GC moves nothing); GC under cuts there is test_torture's
         * nand-dhara-b4 and nand-jffs2-b8 */
        if (s->small && medium == T_NAND_B4)
            continue;
        if (prepare(medium, s, &im)) {
            printf("  %s %-20s the pre-state failed\n", t_medium_name[medium], s->name);
            continue;
        }
        fail_at = -1;
        n = trial(medium, s, &im, -1, CSIM_TEAR_PREFIX);
        if (s->fail) {
            CHECK(fail_at >= 0 && trial_ok && trial_bad > 0,
                  "[%s %s] the scenario rides out a failed program (at op %lld; %u bad "
                  "blocks after)",
                  t_medium_name[medium], s->name, (long long)fail_at, (unsigned)trial_bad);
            if (fail_at < 0) {
                t_image_free(&im);
                continue;
            }
            printf("  %s %-20s op %lld failed (its block went bad) and was relocated: %u bad "
                   "block(s) after; cuts at every op from there\n",
                   t_medium_name[medium], s->name, (long long)fail_at, (unsigned)trial_bad);
        }
        if (s->cuts > 0 && n > (uint64_t)s->cuts)
            stride = (n + (uint64_t)s->cuts - 1) / (uint64_t)s->cuts;
        /* (a cut at the failing op itself would leave its failure pending for
         * the ops after power-on, the mount's: the cuts start after it) */
        for (k = s->fail ? (uint64_t)fail_at + 1 : 0; k < n; k += stride) {
            tried++;
            for (tear = CSIM_TEAR_PREFIX; tear <= CSIM_TEAR_RANDOM; tear++)
                trial(medium, s, &im, (int64_t)k, tear);
        }
        fail_at = -1;
        t_image_free(&im);
        printf("  %s %-20s %3llu ops, %3llu cut points (every %llu), %.1f s: %s\n",
               t_medium_name[medium], s->name, (unsigned long long)n,
               (unsigned long long)(2 * tried), (unsigned long long)stride,
               (double)(clock() - t0) / CLOCKS_PER_SEC, (long)tc_fail == f0 ? "ok" : "FAILED");
    }
}

/* ---- random runs with cuts ---- */

static void random_run(int medium, uint64_t seed, int steps)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct rop r;
    struct csim_counters c;
    uint64_t rng = seed * 31 + (uint64_t)medium, span = 200;
    char label[128];
    int round, i, rc;

    t_fs_init(&t, t_sim_new(medium, seed), 1);
    t_fs_format_mount(&t);
    memset(&r, 0, sizeof r);
    r.page = PG;
    r.max_bytes = 48 * 1024;
    r.big = 6 * 1024;
    r.max_fds = 2;
    r.one_handle = 1;
    m_init(&m);

    for (round = 0; round < 3; round++) {
        uint64_t start, cutop;
        snprintf(label, sizeof label, "random %s seed %llu round %d", t_medium_name[medium],
                 (unsigned long long)seed, round);
        rc = m_load(&m, t.fs);
        CHECK(rc == 0, "[%s] loading the model: %d %s", label, rc, t_errname(rc));
        if (rc != 0)
            break;
        m_rec_start(&m);
        memset(&d, 0, sizeof d);
        d.fs = t.fs;
        d.sim = t.sim;
        d.m = &m;
        d.label = label;
        d.seed = seed;
        d.record = 1;
        csim_counters(t.sim, &c);
        start = c.mutating_ops;
        cutop = start + t_randn(&rng, (uint32_t)span);
        csim_cut_at(t.sim, cutop, (enum csim_tear)t_randn(&rng, 2));
        for (i = 0; i < steps && !d.stop; i++) {
            d.step = i;
            d_random_op(&d, &rng, &r);
        }
        n_trials++;
        csim_counters(t.sim, &c);
        if (csim_powered(t.sim) && c.mutating_ops - start > span)
            span = c.mutating_ops - start; /* no cut: aim within the ops seen */
        CHECK(!d.failed, "[%s] a call failed before the cut", label);
        if (d.failed)
            break;
        if (csim_powered(t.sim)) {
            /* no cut in this round: everything closed must be there */
            n_no_cut++;
            csim_cut_cancel(t.sim);
            d_close_all(&d);
            d_sync(&d);
            if (d.failed || t_fs_remount(&t, label))
                break;
            CHECK(m_verify_cut(&m, t.fs, label) == 0, "[%s] state without a cut", label);
            continue;
        }
        rc = cairn_unmount(t.fs);
        CHECK(rc == 0 || t_is_err(rc), "[%s] unmount after the cut: %d", label, rc);
        t_fs_abandon(&t);
        csim_power_on(t.sim);
        rc = t_fs_mount(&t);
        CHECK(rc == 0, "[%s] mount after the cut (in %s): %d %s", label,
              d.cut_in ? d.cut_in : "-", rc, t_errname(rc));
        if (rc != 0) {
            n_mount_fail++;
            break;
        }
        rc = t_fs_check(&t, label);
        CHECK(rc == 0, "[%s] cairn_check after the cut: %d %s", label, rc, t_errname(rc));
        if (rc != 0)
            n_check_fail++;
        if (m_verify_cut(&m, t.fs, label) != 0) {
            n_state_fail++;
            printf("    (cut in %s at step %ld; reproduce: test_powerloss %llu)\n",
                   d.cut_in ? d.cut_in : "-", d.step, (unsigned long long)seed);
            break;
        }
    }
    t_fs_no_violations(&t, label);
    t.allow_violations = 1;
    m_free(&m);
    t_fs_free(&t);
}

/* The oracle must reject states that break invariant 2 (else every cut
 * would "pass"): a few damaged volumes it must not accept. */
static void oracle_selftest(void)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    int fd, fb, verdict[6];
    uint8_t *a = (uint8_t *)malloc((size_t)(3 * PG));
    t_pattern(a, (size_t)(3 * PG), 1); /* = pat(3 * PG, 1) */
    t_fs_init(&t, t_sim_new(T_NOR, 1), 1);
    t_fs_format_mount(&t);
    m_init(&m);
    memset(&d, 0, sizeof d);
    d.fs = t.fs;
    d.sim = t.sim;
    d.m = &m;
    d.label = "oracle self-test";
    m_rec_start(&m);
    d.record = 1;
    fd = d_open(&d, "/a", CAIRN_O_RDWR | CAIRN_O_CREAT);
    d_write(&d, fd, pat(3 * PG, 1), 3 * PG);
    d_close(&d, fd);                                  /* /a durable: 3 pages */
    fb = d_open(&d, "/b", CAIRN_O_RDWR | CAIRN_O_CREAT);
    d_write(&d, fb, pat(100, 2), 100);                /* /b: not durable */
    d_close(&d, fb);
    fd = d_open(&d, "/a", CAIRN_O_RDWR);
    d_seek(&d, fd, PG, CAIRN_SEEK_SET);
    d_write(&d, fd, pat(PG, 3), PG);                  /* /a: a later state */
    m_verify_quiet = 1;
    verdict[0] = m_verify_cut(&m, t.fs, "self-test as is");
    /* /a rolled back to its first durable state: allowed */
    fd = cairn_open(t.fs, "/a", CAIRN_O_WRONLY);
    cairn_seek(t.fs, fd, PG, CAIRN_SEEK_SET);
    cairn_write(t.fs, fd, a + PG, PG);
    cairn_close(t.fs, fd);
    verdict[1] = m_verify_cut(&m, t.fs, "self-test rolled back");
    /* a mix: half of the later write */
    fd = cairn_open(t.fs, "/a", CAIRN_O_WRONLY);
    cairn_seek(t.fs, fd, PG + PG / 2, CAIRN_SEEK_SET);
    cairn_write(t.fs, fd, pat(PG, 3) + PG / 2, PG / 2);
    cairn_close(t.fs, fd);
    verdict[2] = m_verify_cut(&m, t.fs, "self-test mixed");
    /* synced content lost: /a shorter than its durable state */
    fd = cairn_open(t.fs, "/a", CAIRN_O_WRONLY);
    cairn_truncate(t.fs, fd, 2 * PG);
    cairn_close(t.fs, fd);
    verdict[3] = m_verify_cut(&m, t.fs, "self-test truncated");
    /* a durable file gone */
    t_write_file(t.fs, "/a", a, 3 * PG);
    verdict[4] = m_verify_cut(&m, t.fs, "self-test restored");
    cairn_remove(t.fs, "/a");
    verdict[5] = m_verify_cut(&m, t.fs, "self-test removed");
    m_verify_quiet = 0;
    cairn_close(t.fs, fd);
    CHECK(verdict[0] == 0 && verdict[1] == 0 && verdict[4] == 0,
          "oracle self-test: allowed states accepted (%d %d %d)", verdict[0], verdict[1],
          verdict[4]);
    CHECK(verdict[2] != 0 && verdict[3] != 0 && verdict[5] != 0,
          "oracle self-test: a mixed file, lost synced bytes and a lost file are "
          "rejected (%d %d %d)",
          verdict[2], verdict[3], verdict[5]);
    free(a);
    m_free(&m);
    t_fs_free(&t);
}

int main(int argc, char **argv)
{
    int med;
    uint64_t seed = t_env_u64("CAIRN_TEST_SEED", 1), s;
    uint32_t runs = 20 * t_scale();
    int steps = (int)t_env_u64("CAIRN_TEST_STEPS", 100);
    t_begin("test_powerloss");
    if (argc > 1)
        seed = strtoull(argv[1], NULL, 0);
    printf("test_powerloss: %d scenarios x every op x tear prefix/random; "
           "%u random runs per medium (3 rounds of %d steps) from seed %llu\n",
           N_SCENS, (unsigned)runs, steps, (unsigned long long)seed);
    PG = 256;
    oracle_selftest();
    for (med = 0; med < T_NMEDIA; med++) {
        csim *probe = t_sim_new(med, 1);
        PG = (int32_t)csim_geometry(probe)->page_size;
        csim_free(probe);
        printf("%s (page %ld):\n", t_medium_name[med], (long)PG);
        run_scenarios(med);
        for (s = 0; s < runs; s++)
            random_run(med, seed + s, steps);
        printf("  %s: %u random runs done\n", t_medium_name[med], (unsigned)runs);
    }
    printf("cut points tried: %ld (of which the cut did not fire: %ld); mount failed: "
           "%ld, check failed: %ld, state not allowed: %ld; files matching only a "
           "state inside a completed write: %ld\n",
           n_trials, n_no_cut, n_mount_fail, n_check_fail, n_state_fail,
           m_mid_write_count());
    return t_summary("test_powerloss");
}
