/*
 * The anchors and their checkpoints under repeated power cuts, failing anchor
 * blocks and hostile images (issue 9, items 1, 2 and 10; invariants I1-I4 of
 * docs/DESIGN.md):
 * - a brown-out boot loop: mount, cut at one of the first programs of the
 *   session, again and again (up to 40 times in a row), on NOR, NAND (anchors
 *   of one erase block and of four), BLOCK: every mount succeeds and the file
 *   synced before the loop is intact;
 * - NAND, the anchor without the newest checkpoint worn out, recovery
 *   mounts cut again and again at their first operations: each mount's
 *   checkpoint goes into the standby segment (anchor.c), never into a page an
 *   earlier attempt may have torn;
 * - a failing anchor (program or erase fails, block 0 factory-bad or not):
 *   the call that hit it still succeeds, the volume keeps working through many
 *   more checkpoints and remounts, and its data stays;
 * - both anchors failing at once, on an empty volume (both are replaced,
 *   the appends go on) and a full one (no checkpoint can be written: a
 *   writable mount answers CAIRN_ERR_ROFS, cut or not, and a read-only
 *   mount reads every synced append, the same each time);
 * - hostile images: the newest checkpoint slots erased (mount finds an older
 *   one), a NAND slot whose first copy reads blank: cairn never programs a
 *   page it does not know to be erased (the simulator's rule check);
 * - a format cut at each of its operations over aged earlier volumes, also
 *   in the layout zero config gave before session 34: the new volume, none,
 *   or the earlier one as last synced, also after a second cut format and
 *   with one of the format's operations failing; a format after the cuts
 *   always works.
 */
#include <stdlib.h>
#include <string.h>

#include "cn.h"
#include "tsupport.h"

struct geo_case {
    const char *label, *model;
    uint32_t blocks, per_lblock;
};

static const struct geo_case geos[] = {
    {"nor-m25p16 whole", "nor-m25p16", 0, 0},
    {"nor-w25q128 8/seg", "nor-w25q128", 256, 8},
    {"nand-dhara", "nand-dhara", 64, 1},
    {"nand-dhara 4/seg", "nand-dhara", 128, 4},
    {"sd-tf slice", "sd-tf", 0, 0},
};
#define NGEOS (sizeof geos / sizeof geos[0])

/* Zero config on block counts whose segment size changed in session 34 (the
 * size before, the volume's old layout, still mounts: fs.c mount_by). */
static const struct {
    struct geo_case g;
    uint32_t bpl_before;
} odd[] = {
    {{"nand-jffs2 361 blocks", "nand-jffs2", 361, 0}, 19},
    {{"nand-dhara 391 blocks", "nand-dhara", 391, 0}, 17},
    {{"nor-w25q128 253 sectors", "nor-w25q128", 253, 0}, 11},
};
#define NODD (sizeof odd / sizeof odd[0])

/* More geometries for format_cut in longer runs (CAIRN_TEST_SCALE > 1, as
 * make torture): NAND anchors of 2 and 8 blocks (erase_newest_last's order),
 * NOR anchors of 4 and 16 sectors, 16 blocks of m25p16, zero config. */
static const struct geo_case wider[] = {
    {"nand-jffs2 8/seg", "nand-jffs2", 128, 8},
    {"nand-jffs2 2/seg", "nand-jffs2", 64, 2},
    {"nor-w25q128 16/seg", "nor-w25q128", 1024, 16},
    {"nor-w25q128 4/seg", "nor-w25q128", 256, 4},
    {"nor-m25p16 16 blocks", "nor-m25p16", 16, 1},
    {"nand-dhara 2/seg", "nand-dhara", 96, 2},
    {"nor-w25q128 1024 zero config", "nor-w25q128", 1024, 0},
    {"nand-jffs2 256 zero config", "nand-jffs2", 256, 0},
};
#define NWIDER (sizeof wider / sizeof wider[0])

static csim *geo_sim(const struct geo_case *g, uint64_t seed)
{
    if (strcmp(g->model, "sd-tf") == 0)
        return t_sim_new(T_BLOCK, seed);
    return t_sim_model(g->model, g->blocks, g->per_lblock, seed);
}

static uint8_t payload[6000];

/* Mount after a cut; a mount that fails is a failure of the test. */
static int mount_ok(struct tfs *t, const char *label, unsigned round)
{
    int rc;
    csim_power_on(t->sim);
    rc = t_fs_mount(t);
    CHECK(rc == 0, "%s: mount after cut %u: %s", label, round, t_errname(rc));
    return rc;
}

/* One step of a session's first write: appends to "log" and syncs. */
static int session_write(struct tfs *t, unsigned round)
{
    int32_t fd = cairn_open(t->fs, "/log", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_APPEND);
    int32_t rc;
    if (fd < 0)
        return fd;
    rc = cairn_write(t->fs, fd, payload + round % 64, 100);
    if (rc >= 0)
        rc = cairn_close(t->fs, fd);
    else
        (void)cairn_close(t->fs, fd);
    return rc < 0 ? rc : 0;
}

/* A fresh volume holding "/keep" (5,000 B), cleanly remounted: where a
 * boot loop starts. */
static void loop_volume(struct tfs *t, const struct geo_case *g, uint64_t seed, const char *label)
{
    t_fs_init(t, geo_sim(g, seed), 1);
    t_fs_format_mount(t);
    CHECK_EQ(t_write_file(t->fs, "/keep", payload, 5000), 0, "%s: write keep", label);
    CHECK_EQ(t_fs_remount(t, label), 0, "%s: clean remount", label);
}

/* Brown-out loop: every session is cut at one of its first `depth` mutating
 * operations, `rounds` times in a row, then the volume must mount and hold
 * the synced file. Both tear modes alternate. */
static void boot_loop(const struct geo_case *g, unsigned rounds, unsigned depth, uint64_t seed)
{
    struct tfs t;
    char label[96];
    unsigned r, mounts = 0;
    uint64_t rng = seed;
    snprintf(label, sizeof label, "boot loop %s depth %u", g->label, depth);
    loop_volume(&t, g, seed, label);
    for (r = 0; r < rounds; r++) {
        struct csim_counters c;
        uint32_t k = t_randn(&rng, depth);
        csim_counters(t.sim, &c);
        csim_cut_at(t.sim, c.mutating_ops + k, (r & 1) ? CSIM_TEAR_RANDOM : CSIM_TEAR_PREFIX);
        (void)session_write(&t, r);
        (void)session_write(&t, r + 1);
        if (csim_powered(t.sim)) {
            csim_cut_cancel(t.sim); /* the writes needed fewer ops than k */
            t_fs_unmount(&t);
        } else {
            t_fs_abandon(&t);
        }
        if (mount_ok(&t, label, r) != 0)
            break;
        mounts++;
    }
    if (t.mounted) {
        t_check_file(t.fs, "/keep", payload, 5000, label);
        CHECK_EQ(session_write(&t, 7), 0, "%s: a write after the loop", label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount after the loop", label);
        t_check_file(t.fs, "/keep", payload, 5000, label);
    }
    printf("  %s: %u cuts in a row at one of the first %u programs of a session, %u mounts\n",
           label, rounds, depth, mounts);
    t_fs_free(&t);
}

/* Brown-out loop after clean unmounts: every session mounts a clean volume,
 * its first write is cut at one of its first `depth` mutating operations
 * (the session mark's checkpoint on NAND and BLOCK, its byte on NOR; one cut
 * in three stores nothing, CSIM_TEAR_EMPTY), and the
 * next session's first write must succeed, then unmount cleanly. A session
 * mark retried into the slot its cut attempt tore (a torn NAND page reads
 * blank and may not be programmed again) failed that write with IO in every
 * such session, and the session went on unmarked. */
static void clean_boot_loop(const struct geo_case *g, unsigned rounds, unsigned depth,
                            uint64_t seed)
{
    static const enum csim_tear tears[3] = {CSIM_TEAR_EMPTY, CSIM_TEAR_PREFIX, CSIM_TEAR_RANDOM};
    struct tfs t;
    char label[96];
    unsigned r, cut = 0, failed = 0;
    uint64_t rng = seed;
    snprintf(label, sizeof label, "clean boot loop %s depth %u", g->label, depth);
    loop_volume(&t, g, seed, label);
    for (r = 0; r < rounds; r++) {
        struct csim_counters c;
        int rc;
        csim_counters(t.sim, &c);
        csim_cut_at(t.sim, c.mutating_ops + t_randn(&rng, depth), tears[r % 3]);
        (void)session_write(&t, r);
        if (csim_powered(t.sim)) {
            csim_cut_cancel(t.sim);
        } else {
            cut++;
            t_fs_abandon(&t);
            if (mount_ok(&t, label, r) != 0)
                break;
        }
        rc = session_write(&t, r + 1);
        failed += rc != 0;
        CHECK(rc == 0, "%s: round %u: the first write after the mount: %s", label, r,
              t_errname(rc));
        /* a file written and closed (synced) later in that session survives
         * a power loss: the session was made durable as unclean */
        CHECK_EQ(t_write_file(t.fs, "/synced", payload + r, 300), 0, "%s: round %u: synced",
                 label, r);
        t_fs_abandon(&t);
        if (mount_ok(&t, label, r) != 0)
            break;
        t_check_file(t.fs, "/synced", payload + r, 300, label);
        CHECK_EQ(t_fs_unmount(&t), 0, "%s: round %u: unmount", label, r);
        if (mount_ok(&t, label, r) != 0)
            break;
    }
    if (t.mounted)
        t_check_file(t.fs, "/keep", payload, 5000, label);
    CHECK(t_fs_no_violations(&t, label) == 0, "%s: nothing programmed twice", label);
    printf("  %s: %u rounds, %u cut, %u first writes after them failed\n", label, rounds, cut,
           failed);
    t_fs_free(&t);
}

/* Mutating device operations of the next mount (after power-on or abandon). */
static uint64_t mount_ops(struct tfs *t, const char *label)
{
    struct csim_counters c;
    csim_power_on(t->sim);
    CHECK_EQ(t_fs_mount(t), 0, "%s: mount", label);
    csim_counters(t->sim, &c);
    return c.mutating_ops;
}

/* The session mark (FORMAT.md "The session byte"): on NOR the first change
 * after a clean mount programs one byte of the clean checkpoint it loaded,
 * one 1-byte program more than the next change costs (NAND and BLOCK write a
 * checkpoint); a cut after that byte, even one that leaves the next program
 * undone (its page still reads erased), makes the next mount recover (it
 * writes: a clean mount writes nothing), and a session that changed nothing
 * leaves the volume clean. Without the byte, the mount after such a cut
 * took the volume as clean and would program over pages the cut may have
 * touched. */
static void session_mark(const struct geo_case *g, uint64_t seed)
{
    struct tfs t;
    struct csim_counters c0, c1;
    char label[96];
    unsigned k, recovered = 0;
    int nor = strncmp(g->model, "nor", 3) == 0;
    uint64_t ops, mark_ops;
    snprintf(label, sizeof label, "session mark %s", g->label);
    loop_volume(&t, g, seed, label);
    csim_counters(t.sim, &c0);
    CHECK_EQ(cn_begin_write(t.fs), 0, "%s: the session's first change", label);
    csim_counters(t.sim, &c1);
    mark_ops = c1.mutating_ops - c0.mutating_ops;
    if (nor)
        CHECK(c1.prog_calls - c0.prog_calls == 1 && c1.prog_bytes - c0.prog_bytes == 1 &&
                  c1.erases == c0.erases,
              "%s: the mark is one 1-byte program (%llu programs, %llu B, %llu erases)", label,
              (unsigned long long)(c1.prog_calls - c0.prog_calls),
              (unsigned long long)(c1.prog_bytes - c0.prog_bytes),
              (unsigned long long)(c1.erases - c0.erases));
    else
        CHECK(c1.prog_bytes - c0.prog_bytes >= csim_geometry(t.sim)->page_size,
              "%s: the mark is a checkpoint (%llu B)", label,
              (unsigned long long)(c1.prog_bytes - c0.prog_bytes));
    csim_counters(t.sim, &c0);
    CHECK_EQ(cn_begin_write(t.fs), 0, "%s: a later change", label);
    csim_counters(t.sim, &c1);
    CHECK(c1.mutating_ops == c0.mutating_ops, "%s: only the first change marks", label);
    t_fs_unmount(&t);
    ops = mount_ops(&t, label);
    CHECK(ops == 0, "%s: a clean mount writes nothing (%llu ops)", label,
          (unsigned long long)ops);
    t_check_file(t.fs, "/keep", payload, 5000, label);
    t_fs_abandon(&t); /* a session that only read, then power lost */
    ops = mount_ops(&t, label);
    CHECK(ops == 0, "%s: after a session that changed nothing the volume is clean (%llu ops)",
          label, (unsigned long long)ops);
    for (k = 0; k < 6; k++) {
        csim_counters(t.sim, &c0);
        /* the cut falls on the k-th operation after the mark; TEAR_NONE leaves
         * that operation undone, its page reading erased */
        csim_cut_at(t.sim, c0.mutating_ops + mark_ops + k,
                    k % 3 == 0 ? CSIM_TEAR_NONE : (k % 3 == 1 ? CSIM_TEAR_PREFIX
                                                                : CSIM_TEAR_RANDOM));
        (void)session_write(&t, 10 + k);
        (void)session_write(&t, 20 + k);
        if (csim_powered(t.sim)) {
            csim_cut_cancel(t.sim);
            t_fs_unmount(&t);
            (void)mount_ops(&t, label);
        } else {
            t_fs_abandon(&t);
            ops = mount_ops(&t, label);
            CHECK(ops > 0, "%s: cut at the op %u after the mark: the mount recovers (%llu ops)",
                  label, k, (unsigned long long)ops);
            recovered += ops > 0;
        }
        if (!t.mounted)
            break;
        t_check_file(t.fs, "/keep", payload, 5000, label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: clean remount", label);
    }
    printf("  %s: the mark is %s (%llu op%s); %u cuts after it, each mount recovered\n", label,
           nor ? "one 1-byte program" : "a checkpoint", (unsigned long long)mark_ops,
           mark_ops == 1 ? "" : "s", recovered);
    t_fs_free(&t);
}

/* Cuts inside the recovery mount itself: after a cut in a session, the next
 * mounts are cut at each of their own programs in turn. */
static void cut_in_recovery(const struct geo_case *g, uint64_t seed)
{
    struct tfs t;
    char label[96];
    unsigned k, cuts = 0;
    snprintf(label, sizeof label, "recovery cuts %s", g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/keep", payload, 5000), 0, "%s: write keep", label);
    CHECK_EQ(cairn_sync(t.fs), 0, "%s: sync", label);
    {
        struct csim_counters c;
        csim_counters(t.sim, &c);
        csim_cut_at(t.sim, c.mutating_ops + 3, CSIM_TEAR_PREFIX);
        (void)session_write(&t, 1);
        (void)session_write(&t, 2);
        (void)session_write(&t, 3);
        t_fs_abandon(&t);
    }
    for (k = 0; k < 40; k++) { /* the k-th program of the recovery mount */
        csim_power_on(t.sim);
        csim_cut_at(t.sim, k, (k & 1) ? CSIM_TEAR_RANDOM : CSIM_TEAR_PREFIX);
        if (t_fs_mount(&t) == 0) {
            csim_cut_cancel(t.sim);
            break; /* the recovery needs fewer programs than k */
        }
        cuts++;
        t_fs_abandon(&t);
    }
    if (!t.mounted)
        mount_ok(&t, label, k);
    if (t.mounted) {
        t_check_file(t.fs, "/keep", payload, 5000, label);
        CHECK_EQ(t_fs_check(&t, label), 0, "%s: check", label);
    }
    printf("  %s: %u mounts cut in a row, then mounted\n", label, cuts);
    t_fs_free(&t);
}

/* The anchor blocks of the volume (its first two good segments). */
static void anchor_blocks(struct tfs *t, uint32_t first_block[2], uint32_t *bpl)
{
    const struct cairn_geometry *geo = csim_geometry(t->sim);
    *bpl = geo->blocks_per_lblock ? geo->blocks_per_lblock : 1;
    first_block[0] = t->fs->anchor[0] * *bpl;
    first_block[1] = t->fs->anchor[1] * *bpl;
}

/* NAND: a brown-out loop of recovery mounts while the anchor that does not
 * hold the newest checkpoint is worn out (its erase fails at once). Each
 * recovery's checkpoint must go into a page no earlier attempt reached; the
 * current anchor's next slot was the same for every attempt, and one cut
 * before its first byte (CSIM_TEAR_EMPTY: reads erased, yet programmed once)
 * made every later mount's program there refused: mount IO for ever
 * (torture nand-4k seed 244092). Now the standby (anchor.c) takes it. Each
 * round cuts the mount at its k-th mutating operation, k = 0..7 in turn,
 * with stored-nothing tears; a mount that fails without being cut fails
 * the test. */
static void worn_other_anchor(const struct geo_case *g, uint64_t seed)
{
    struct tfs t;
    char label[96];
    uint32_t ab[2], bpl, i, worn, r, cuts = 0, refused = 0;
    snprintf(label, sizeof label, "worn other anchor, recovery loop %s", g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/keep", payload, 5000), 0, "%s: write keep", label);
    CHECK_EQ(cairn_sync(t.fs), 0, "%s: sync", label);
    (void)session_write(&t, 1);
    anchor_blocks(&t, ab, &bpl);
    worn = ab[t.fs->ckpt_anchor ^ 1u] / bpl;
    for (i = 0; i < bpl; i++)
        csim_wear_out_after(t.sim, ab[t.fs->ckpt_anchor ^ 1u] + i, 0);
    t_fs_abandon(&t);
    for (r = 0; r < 32; r++) {
        int rc;
        csim_power_on(t.sim);
        csim_cut_at(t.sim, r % 8u, CSIM_TEAR_EMPTY);
        rc = t_fs_mount(&t);
        if (rc != 0 && csim_powered(t.sim)) {
            refused++;
            csim_cut_cancel(t.sim);
            continue;
        }
        if (rc == 0) {
            csim_cut_cancel(t.sim);
            (void)session_write(&t, r); /* a session that ends in a cut */
            t_fs_abandon(&t);
        } else {
            cuts++;
            t_fs_abandon(&t);
        }
    }
    CHECK_EQ(refused, 0, "%s: mounts that failed without a cut", label);
    mount_ok(&t, label, r);
    if (t.mounted) {
        t_check_file(t.fs, "/keep", payload, 5000, label);
        CHECK_EQ(session_write(&t, 9), 0, "%s: a write after the loop", label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
        t_check_file(t.fs, "/keep", payload, 5000, label);
        CHECK_EQ(t_fs_check(&t, label), 0, "%s: check", label);
        CHECK(t.fs->anchor[0] != worn && t.fs->anchor[1] != worn,
              "%s: the worn anchor was replaced", label);
    }
    printf("  %s: 32 recovery mounts, %u cut, %u failed uncut; anchors now %u, %u\n", label,
           cuts, refused, t.mounted ? t.fs->anchor[0] : 0, t.mounted ? t.fs->anchor[1] : 0);
    t_fs_free(&t);
}

/* A failing anchor: its blocks wear out after `after` more erases (0: the
 * next program or erase fails). Many checkpoints and remounts follow. */
static void failing_anchor(const struct geo_case *g, int block0_bad, unsigned which,
                           uint32_t after, uint64_t seed)
{
    struct tfs t;
    char label[112];
    uint32_t ab[2], bpl, i, fails = 0, n;
    snprintf(label, sizeof label, "failing anchor %u %s%s after %u erases", which, g->label,
             block0_bad ? " (block 0 factory-bad)" : "", after);
    t_fs_init(&t, geo_sim(g, seed), 1);
    if (block0_bad)
        csim_set_factory_bad(t.sim, 0);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/keep", payload, 5000), 0, "%s: write keep", label);
    anchor_blocks(&t, ab, &bpl);
    for (i = 0; i < bpl; i++)
        csim_wear_out_after(t.sim, ab[which] + i, after);
    for (n = 0; n < 600; n++) {
        int rc = session_write(&t, n);
        if (rc != 0)
            fails++;
        if (n % 2 == 1 && t_fs_remount(&t, label) != 0)
            break;
    }
    CHECK_EQ(fails, 0, "%s: writes that failed", label);
    if (t.mounted) {
        int32_t size;
        struct cairn_info info;
        t_check_file(t.fs, "/keep", payload, 5000, label);
        CHECK_EQ(cairn_stat(t.fs, "/log", &info), 0, "%s: stat log", label);
        size = info.size;
        CHECK_EQ(size, 600 * 100, "%s: every append is there", label);
        CHECK(t.fs->anchor[0] != ab[which] / bpl && t.fs->anchor[1] != ab[which] / bpl,
              "%s: the failing anchor was replaced", label);
    }
    printf("  %s: 600 synced appends, 300 remounts, %u failed calls, anchors now %u, %u\n", label,
           fails, t.mounted ? t.fs->anchor[0] : 0, t.mounted ? t.fs->anchor[1] : 0);
    t_fs_free(&t);
}

/* Append 100 B of the pattern session_write uses to "/log" and close it: 0,
 * or the error of the first call that failed (a short write: NOSPC). */
static int append_log(struct tfs *t, uint32_t n)
{
    int32_t fd = cairn_open(t->fs, "/log", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_APPEND);
    int32_t w, rc;
    if (fd < 0)
        return fd;
    w = cairn_write(t->fs, fd, payload + n % 64, 100);
    rc = cairn_close(t->fs, fd);
    if (w >= 0 && w < 100)
        w = CAIRN_ERR_NOSPC;
    return w < 0 ? w : rc;
}

/* What a read-only mount of a volume whose anchors both failed shows: /keep
 * whole, and /log `synced` appends of append_log, perhaps part or all of
 * the next (the failing call's, which may have reached the journal).
 * Returns /log's size, or -1. */
static int32_t read_only_view(struct tfs *t, uint32_t synced, const char *label)
{
    struct cairn_info info;
    int32_t fd, size = -1, at = 0, got = 0;
    uint8_t buf[100];
    int rc;
    csim_power_on(t->sim);
    t->cfg.read_only = 1;
    rc = t_fs_mount(t);
    t->cfg.read_only = 0;
    CHECK(rc == 0, "%s: read-only mount: %s", label, t_errname(rc));
    if (rc != 0)
        return -1;
    CHECK_EQ(t_fs_check(t, label), 0, "%s: check", label);
    t_check_file(t->fs, "/keep", payload, 5000, label);
    rc = cairn_stat(t->fs, "/log", &info);
    if (rc == CAIRN_ERR_NOENT && synced == 0)
        info.size = rc = 0;
    CHECK(rc == 0 && (uint32_t)info.size >= synced * 100u &&
              (uint32_t)info.size <= synced * 100u + 100u,
          "%s: /log holds %u appends: %s, size %ld", label, synced, t_errname(rc),
          rc == 0 ? (long)info.size : -1L);
    fd = rc == 0 && info.size > 0 ? cairn_open(t->fs, "/log", CAIRN_O_RDONLY) : -1;
    while (fd >= 0 && at < info.size) {
        got = cairn_read(t->fs, fd, buf, 100);
        if (got <= 0 || memcmp(buf, payload + (at / 100) % 64, (size_t)got) != 0)
            break;
        at += got;
    }
    CHECK(rc == 0 && at == info.size, "%s: /log reads back (%ld of %ld bytes)", label, (long)at,
          rc == 0 ? (long)info.size : -1L);
    if (rc == 0 && at == info.size)
        size = at;
    if (fd >= 0)
        (void)cairn_close(t->fs, fd);
    CHECK_EQ(t_fs_unmount(t), 0, "%s: read-only unmount", label);
    return size;
}

/* Fill the volume with "/fill" (4 KiB synced writes) until NOSPC, then give
 * `room` bytes back (a truncate). */
static void fill_but(struct tfs *t, uint32_t room, const char *label)
{
    int32_t fd = cairn_open(t->fs, "/fill", CAIRN_O_WRONLY | CAIRN_O_CREAT), w, size = 0;
    CHECK(fd >= 0, "%s: create fill: %s", label, t_errname(fd));
    if (fd < 0)
        return;
    while ((w = cairn_write(t->fs, fd, payload, 4096)) == 4096 && cairn_file_sync(t->fs, fd) == 0)
        size += w;
    CHECK_EQ(cairn_truncate(t->fs, fd, size > (int32_t)room ? size - (int32_t)room : 0), 0,
             "%s: truncate fill", label);
    CHECK_EQ(cairn_close(t->fs, fd), 0, "%s: close fill", label);
}

static unsigned rofs_mounts; /* over every both_anchors_fail run */

/* Both anchors fail (every block worn out, after `after` more erases) while
 * synced appends go on, on an empty volume or one filled but for `room`
 * bytes. With room the failing anchors are replaced (anchor.c) and the
 * appends go on. On a full volume the replacement may hold data no
 * checkpoint can move away: no checkpoint can be written any more. After a
 * cut a writable mount must then say CAIRN_ERR_ROFS, not IO, also when it
 * is cut itself (8 more tries, cut at its k-th mutating operation), and a
 * read-only mount must read every append synced before the failure, the
 * same each time (before session 38 the writable mount answered IO, and
 * nothing told that the volume still reads). */
static void both_anchors_fail(const struct geo_case *g, uint32_t room, uint32_t after,
                              uint64_t seed)
{
    struct tfs t;
    char label[112];
    uint32_t ab[2], bpl, i, synced = 0, k, rofs = 0;
    int32_t first = -1, again;
    int rc = 0, ended = 0;
    if (room)
        snprintf(label, sizeof label, "both anchors fail %s after %u erases, full but %u B",
                 g->label, after, room);
    else
        snprintf(label, sizeof label, "both anchors fail %s after %u erases", g->label, after);
    t_fs_init(&t, geo_sim(g, seed), 1);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/keep", payload, 5000), 0, "%s: write keep", label);
    if (room)
        fill_but(&t, room, label);
    anchor_blocks(&t, ab, &bpl);
    for (i = 0; i < bpl; i++) {
        csim_wear_out_after(t.sim, ab[0] + i, after);
        csim_wear_out_after(t.sim, ab[1] + i, after);
    }
    while (synced < 400 && (ended = append_log(&t, synced)) == 0)
        synced++;
    CHECK(ended == 0 || ended == CAIRN_ERR_NOSPC || ended == CAIRN_ERR_IO,
          "%s: append %u: %s", label, synced, t_errname(ended));
    t_fs_abandon(&t);
    csim_power_on(t.sim);
    rc = t_fs_mount(&t);
    CHECK(rc == 0 || rc == CAIRN_ERR_ROFS, "%s: writable mount after %u appends: %s", label,
          synced, t_errname(rc));
    t_fs_abandon(&t);
    if (rc == 0 || rc == CAIRN_ERR_ROFS)
        first = read_only_view(&t, synced, label);
    for (k = 0; rc == CAIRN_ERR_ROFS && k < 8; k++) {
        rofs++;
        csim_power_on(t.sim);
        csim_cut_at(t.sim, k, k % 2u ? CSIM_TEAR_EMPTY : CSIM_TEAR_PREFIX);
        rc = t_fs_mount(&t);
        csim_cut_cancel(t.sim);
        CHECK(rc == CAIRN_ERR_ROFS || (rc != 0 && !csim_powered(t.sim)),
              "%s: writable mount %u: %s", label, k, t_errname(rc));
        t_fs_abandon(&t);
        again = read_only_view(&t, synced, label);
        CHECK(again == first, "%s: read-only mount %u shows %ld bytes of /log, the first %ld",
              label, k, (long)again, (long)first);
        if (rc != CAIRN_ERR_ROFS)
            rc = CAIRN_ERR_ROFS; /* cut: the next try */
    }
    rofs_mounts += rofs;
    printf("  %s: %u appends, then %s; writable mounts answering ROFS %u; read-only /log %ld "
           "bytes\n",
           label, synced, ended ? t_errname(ended) : "none failed", rofs, (long)first);
    t_fs_free(&t);
}

/* NAND anchors of several erase blocks (ckpt.c block_anchors): short
 * sessions (mount, one synced append, clean unmount) each erase one anchor
 * block, for the session mark: the anchors at most one block a session (plus
 * one whole anchor's worth for the switches a long run makes), the first
 * write at most that block and one its data opens (when the append crosses
 * into a new block: 1 session in 64 here), every append is there. Erasing
 * the anchor left behind whole took 1 + 4 blocks a session here, and the
 * mark in place (no erase) was programmed twice after a cut (clean boot
 * loop). */
static void block_anchor_sessions(uint64_t seed)
{
    static const struct geo_case g = {"nand-dhara 4/seg", "nand-dhara", 128, 4};
    const char *label = "short sessions, nand-dhara 4/seg";
    struct tfs t;
    uint32_t ab[2], bpl, i, n, sessions = 100, worst = 0, two = 0;
    uint64_t before = 0, after = 0;
    loop_volume(&t, &g, seed, label);
    anchor_blocks(&t, ab, &bpl);
    for (i = 0; i < bpl; i++)
        before += csim_erase_count(t.sim, ab[0] + i) + csim_erase_count(t.sim, ab[1] + i);
    for (n = 0; n < sessions; n++) {
        struct csim_counters c0, c1;
        csim_counters(t.sim, &c0);
        CHECK_EQ(session_write(&t, n), 0, "%s: session %u: first write", label, n);
        csim_counters(t.sim, &c1);
        worst = c1.erases - c0.erases > worst ? (uint32_t)(c1.erases - c0.erases) : worst;
        two += c1.erases - c0.erases >= 2u;
        if (t_fs_remount(&t, label) != 0)
            break;
    }
    anchor_blocks(&t, ab, &bpl);
    for (i = 0; i < bpl; i++)
        after += csim_erase_count(t.sim, ab[0] + i) + csim_erase_count(t.sim, ab[1] + i);
    CHECK(worst <= 2 && two <= sessions / 32u, "%s: a first write erased %u blocks (%u erased 2)",
          label, worst, two);
    CHECK(after - before <= sessions + 2u * bpl, "%s: %llu anchor block erases in %u sessions",
          label, (unsigned long long)(after - before), sessions);
    if (t.mounted) {
        struct cairn_info info;
        CHECK_EQ(cairn_stat(t.fs, "/log", &info), 0, "%s: stat log", label);
        CHECK_EQ(info.size, (int32_t)(sessions * 100u), "%s: every append is there", label);
    }
    CHECK(t_fs_no_violations(&t, label) == 0, "%s: nothing programmed twice", label);
    printf("  %s: %u sessions, %llu anchor block erases, at most %u in a first write (%u "
           "erased 2)\n",
           label, sessions, (unsigned long long)(after - before), worst, two);
    t_fs_free(&t);
}

/* The highest block of segment `seg` holding a byte that is not 0xFF (its
 * data or spare), or -1: the blocks a recovery must erase before it writes
 * into that anchor again. */
static int32_t last_written_block(struct tfs *t, uint32_t seg, uint32_t bpl)
{
    const struct cairn_geometry *geo = csim_geometry(t->sim);
    static uint8_t data[4096], spare[256];
    uint32_t b, p, i;
    int32_t hi = -1;
    for (b = 0; b < bpl; b++)
        for (p = 0; p < geo->pages_per_block; p++) {
            uint32_t page = (seg * bpl + b) * geo->pages_per_block + p, dirty = 0;
            if (csim_peek(t->sim, page, data, spare) != 0)
                continue;
            for (i = 0; i < geo->page_size && !dirty; i++)
                dirty = data[i] != 0xFF;
            for (i = 0; i < geo->spare_size && !dirty; i++)
                dirty = spare[i] != 0xFF;
            if (dirty)
                hi = (int32_t)b;
        }
    return hi;
}

/* Power cut now (the volume as it stands), then a recovery mount: delta[i]
 * = erases of block i of segment seg (up to 16) during that mount. */
static int cut_and_recover(struct tfs *t, uint32_t seg, uint32_t bpl, uint32_t delta[16],
                           const char *label)
{
    uint32_t i;
    for (i = 0; i < bpl && i < 16; i++)
        delta[i] = csim_erase_count(t->sim, seg * bpl + i);
    t_fs_abandon(t);
    if (mount_ok(t, label, 0) != 0)
        return -1;
    for (i = 0; i < bpl && i < 16; i++)
        delta[i] = csim_erase_count(t->sim, seg * bpl + i) - delta[i];
    return 0;
}

/* NAND anchors of several blocks: a cut after a switch, before the anchor
 * left behind was erased and a checkpoint said so, left a recovery no claim,
 * and it erased that anchor whole (8 blocks of nand-jffs2: 28.9 ms of the
 * mount-scale scenario's 836 MB point). Each checkpoint now records how
 * many of the other anchor's first blocks may hold anything
 * (CN_CK_F_OTHER_BLOCKS_SHIFT), and a recovery erases those only. Cut right
 * after a switch and after 1-3 more appends (synced records: no checkpoint
 * records the erases those calls made, so the recovery erases those blocks
 * again): checked, the recovery erased no block of that anchor past the one
 * after its last block written before the switch (the slot after the
 * newest may hold a torn checkpoint), and fewer blocks than the whole
 * anchor; the data is intact and nothing was programmed twice. */
static void recovery_tail(const char *model, uint32_t blocks, uint32_t per_lblock,
                          unsigned extra, uint64_t seed)
{
    const struct geo_case g = {model, model, blocks, per_lblock};
    struct tfs t;
    char label[96];
    uint32_t n, bpl = per_lblock, left, i, erased = 0, past = 0, appends = 0, delta[16];
    uint32_t seen = CN_NONE;
    int32_t hi = -1;
    snprintf(label, sizeof label, "recovery after a switch, %s %u/seg, %u appends after", model,
             per_lblock, extra);
    loop_volume(&t, &g, seed, label);
    CHECK_EQ(session_write(&t, 0), 0, "%s: the session's first append", label); /* its mark */
    appends++;
    left = t.fs->ckpt_anchor;
    for (n = 1; n < 20000 && t.fs->ckpt_anchor == left; n++, appends++) {
        if (t.fs->ckpt_slot != seen) /* before the switch (read when a checkpoint landed) */
            hi = last_written_block(&t, t.fs->anchor[left], bpl);
        seen = t.fs->ckpt_slot;
        CHECK_EQ(session_write(&t, n), 0, "%s: append %u", label, n);
    }
    CHECK(t.fs->ckpt_anchor != left, "%s: no switch in %u appends", label, n);
    for (i = 0; i < extra; i++, appends++)
        CHECK_EQ(session_write(&t, n + i), 0, "%s: append after the switch", label);
    left = t.fs->anchor[left];
    if (cut_and_recover(&t, left, bpl, delta, label) != 0) {
        t_fs_free(&t);
        return;
    }
    for (i = 0; i < bpl && i < 16; i++) {
        erased += delta[i];
        past += (int32_t)i > hi + 1 ? delta[i] : 0u;
    }
    CHECK_EQ(past, 0, "%s: erases past block %d + 1", label, hi);
    CHECK(erased < bpl, "%s: the recovery erased %u of %u blocks", label, erased, bpl);
    t_check_file(t.fs, "/keep", payload, 5000, label);
    {
        struct cairn_info info;
        CHECK_EQ(cairn_stat(t.fs, "/log", &info), 0, "%s: stat log", label);
        CHECK_EQ(info.size, (int32_t)(appends * 100u), "%s: every append is there", label);
    }
    CHECK_EQ(session_write(&t, 1), 0, "%s: a write after the recovery", label);
    CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
    CHECK(t_fs_no_violations(&t, label) == 0, "%s: nothing programmed twice", label);
    printf("  %s: last block written before the switch %d, the recovery erased %u of its %u "
           "blocks\n",
           label, hi,
           erased, bpl);
    t_fs_free(&t);
}

/* NAND anchors of several blocks, a session that wrote checkpoints past the
 * first block of its anchor, then a clean unmount: the unmount moves them
 * into the other anchor's first block and erases the rest behind them
 * (ckpt.c leave_at_unmount), so that a recovery in the next session erases
 * one block, not the blocks that session's checkpoints reached (the
 * mount-scale scenario: 22.6 ms to mount after a cut at its 431 MB point,
 * 14.7 ms at its empty point). Checked: after the unmount the newest
 * checkpoints lie in one anchor's first block and the other anchor holds
 * nothing past its first block; the next session, cut after two appends,
 * mounts with one erase of that anchor; the data is intact. */
static void recovery_after_long_session(const char *model, uint32_t blocks, uint32_t per_lblock,
                                        uint64_t seed)
{
    const struct geo_case g = {model, model, blocks, per_lblock};
    struct tfs t;
    char label[96];
    uint32_t n, bpl = per_lblock, cur, i, erased = 0, delta[16];
    int32_t hi = -1, other_hi;
    snprintf(label, sizeof label, "recovery after a long session, %s %u/seg", model, per_lblock);
    loop_volume(&t, &g, seed, label);
    for (n = 0; n < 20000 && hi < 1; n++) {
        uint32_t slot = t.fs->ckpt_slot;
        CHECK_EQ(session_write(&t, n), 0, "%s: append %u", label, n);
        if (t.fs->ckpt_slot != slot)
            hi = last_written_block(&t, t.fs->anchor[t.fs->ckpt_anchor], bpl);
    }
    CHECK(hi >= 1, "%s: checkpoints past the first block in %u appends", label, n);
    CHECK_EQ(t_fs_remount(&t, label), 0, "%s: clean remount", label);
    cur = t.fs->anchor[t.fs->ckpt_anchor];
    hi = last_written_block(&t, cur, bpl);
    other_hi = last_written_block(&t, t.fs->anchor[t.fs->ckpt_anchor ^ 1u], bpl);
    CHECK(hi == 0 && other_hi <= 0, "%s: after the unmount: blocks %d and %d hold checkpoints",
          label, hi, other_hi);
    CHECK_EQ(session_write(&t, n), 0, "%s: the next session's first append", label);
    CHECK_EQ(session_write(&t, n + 1), 0, "%s: and one more", label);
    if (cut_and_recover(&t, cur, bpl, delta, label) != 0) {
        t_fs_free(&t);
        return;
    }
    for (i = 0; i < bpl && i < 16; i++)
        erased += delta[i];
    CHECK_EQ(erased, 1, "%s: anchor blocks the recovery erased", label);
    {
        struct cairn_info info;
        CHECK_EQ(cairn_stat(t.fs, "/log", &info), 0, "%s: stat log", label);
        CHECK_EQ(info.size, (int32_t)((n + 2u) * 100u), "%s: every append is there", label);
    }
    t_check_file(t.fs, "/keep", payload, 5000, label);
    CHECK(t_fs_no_violations(&t, label) == 0, "%s: nothing programmed twice", label);
    printf("  %s: %u appends, unmount, 2 appends, cut: the recovery erased %u of %u blocks\n",
           label, n, erased, bpl);
    t_fs_free(&t);
}

/* Erase blocks of both anchors erased so far (the device's own counts). */
static uint32_t seg_blocks(struct tfs *t)
{
    return t->fs->seg_pages / csim_geometry(t->sim)->pages_per_block;
}

/* take: snapshot the erase counts of the anchors' blocks (up to 16 each);
 * else the most erases of any one of them since the snapshot. */
static uint32_t anchor_block_most(struct tfs *t, uint32_t *snap, int take)
{
    uint32_t bpl = seg_blocks(t), a, i, most = 0;
    for (a = 0; a < 2; a++)
        for (i = 0; i < bpl && i < 16; i++) {
            uint32_t n = csim_erase_count(t->sim, t->fs->anchor[a] * bpl + i);
            if (take)
                snap[a * 16 + i] = n;
            else if (n - snap[a * 16 + i] > most)
                most = n - snap[a * 16 + i];
        }
    return most;
}

static uint64_t anchor_erases(struct tfs *t)
{
    uint32_t bpl = seg_blocks(t), a, i;
    uint64_t n = 0;
    for (a = 0; a < 2; a++)
        for (i = 0; i < bpl; i++)
            n += csim_erase_count(t->sim, t->fs->anchor[a] * bpl + i);
    return n;
}

/* The anchor a switch leaves behind is erased a block a call (ckpt.c
 * cn_ckpt_erase_step), not whole in the call that switched: on 4 MiB of
 * 4 KiB-sector NOR (zero config: 32 KiB segments of 8 blocks) a call erased
 * 8 anchor blocks at each switch before. Three workloads: 256 B overwrites
 * with a sync every 8 (write calls end with a step), directory changes only
 * (each one commits; the steps come from the checkpoints), and short
 * sessions (remount, one synced 256 B overwrite: a boot loop; the unmount
 * finishes the erase so that its checkpoint records it, else every session
 * began the erase again: 1-2 blocks a session on the same blocks). Checked:
 * the run switched anchors at least 4 times, no write or directory call
 * erased more than one anchor block, the anchors were erased no more than
 * once a switch, and the data is intact after a remount. */
enum spread_load { SPREAD_OVERWRITES, SPREAD_DIRS, SPREAD_SESSIONS };

static int spread_call(struct tfs *t, enum spread_load load, uint32_t call, int32_t fd,
                       uint8_t *image, uint64_t *rng)
{
    uint8_t buf[256];
    int32_t off = (int32_t)t_randn(rng, 256) * 256;
    if (load == SPREAD_DIRS)
        return call % 2 ? cairn_remove(t->fs, "/d") : cairn_mkdir(t->fs, "/d");
    if (load == SPREAD_OVERWRITES && call % 9 == 8)
        return cairn_file_sync(t->fs, fd);
    t_pattern(buf, sizeof buf, t_rand(rng));
    memcpy(image + off, buf, sizeof buf);
    if (cairn_seek(t->fs, fd, off, CAIRN_SEEK_SET) != off || cairn_write(t->fs, fd, buf, 256) != 256)
        return -1;
    return load == SPREAD_SESSIONS ? cairn_file_sync(t->fs, fd) : 0;
}

static void anchor_erase_spread(enum spread_load load, uint32_t blocks, uint64_t seed)
{
    static const char *const names[] = {"synced overwrites", "directory changes",
                                        "short sessions"};
    struct tfs t;
    char label[64];
    uint8_t *image = (uint8_t *)calloc(1, 65536);
    uint64_t rng = seed, first, most = 0, most_all = 0, calls_over_one = 0;
    uint32_t switches = 0, calls, bpl, snap[32], block_most, slots, per_call;
    int32_t fd = -1;
    snprintf(label, sizeof label, "anchor erase spread, %u MiB, %s", (unsigned)(blocks / 256u),
             names[load]);
    t_fs_init(&t, t_sim_model("nor-w25q128", blocks, 0, seed), 1);
    t_fs_format_mount(&t);
    bpl = seg_blocks(&t);
    CHECK(image != NULL && bpl >= 8 && bpl <= 16, "%s: 8-16 blocks an anchor (%u)", label, bpl);
    /* a landed checkpoint erases at most the anchor's blocks spread over
     * the checkpoints before the switch (ckpt.c erase_due) */
    slots = t.fs->seg_pages / (t.fs->ckpt_pages * t.fs->ckpt_copies);
    per_call = (bpl + (slots - slots / 2u) - 1u) / (slots - slots / 2u);
    if (load != SPREAD_DIRS) {
        CHECK_EQ(t_write_file(t.fs, "/f", image, 65536), 0, "%s: write /f", label);
        fd = cairn_open(t.fs, "/f", CAIRN_O_RDWR);
        CHECK(fd >= 0, "%s: open /f: %d", label, fd);
    }
    first = anchor_erases(&t);
    (void)anchor_block_most(&t, snap, 1);
    for (calls = 0; calls < 60000 && switches < 4 && (load == SPREAD_DIRS || fd >= 0); calls++) {
        struct csim_counters c0, c1;
        uint64_t a0, a1;
        uint32_t newest = t.fs->anchor[t.fs->ckpt_anchor];
        int rc;
        if (load == SPREAD_SESSIONS) {
            cairn_close(t.fs, fd);
            fd = t_fs_remount(&t, label) == 0 ? cairn_open(t.fs, "/f", CAIRN_O_RDWR) : -1;
            if (fd < 0)
                break;
        }
        a0 = anchor_erases(&t);
        csim_counters(t.sim, &c0);
        rc = spread_call(&t, load, calls, fd, image, &rng);
        csim_counters(t.sim, &c1);
        a1 = anchor_erases(&t);
        CHECK_EQ(rc, 0, "%s: call %u", label, calls);
        if (rc != 0)
            break;
        switches += t.fs->anchor[t.fs->ckpt_anchor] != newest;
        most = a1 - a0 > most ? a1 - a0 : most;
        most_all = c1.erases - c0.erases > most_all ? c1.erases - c0.erases : most_all;
        calls_over_one += c1.erases - c0.erases > 1;
    }
    CHECK(switches >= 4, "%s: %u anchor switches in %u calls (at least 4)", label, switches,
          calls);
    CHECK(most <= per_call, "%s: most anchor blocks erased in one call %llu <= %u (%u blocks, %u "
          "slots)", label, (unsigned long long)most, per_call, bpl, slots);
    CHECK(anchor_erases(&t) - first <= (uint64_t)(switches + 1u) * bpl,
          "%s: anchor blocks erased %llu <= (switches + 1) x %u", label,
          (unsigned long long)(anchor_erases(&t) - first), bpl);
    /* each anchor is erased once for every two switches; a block erased
     * again by every session would stand out */
    block_most = anchor_block_most(&t, snap, 0);
    CHECK(block_most <= switches / 2u + 1u, "%s: most erases of one anchor block %u <= %u",
          label, block_most, switches / 2u + 1u);
    printf("  %s: %u calls, %u switches, %llu anchor blocks erased (one block at most %u "
           "times), at most %llu in one call; at most %llu erase blocks in one call, %llu calls "
           "erased more than one\n",
           label, calls, switches, (unsigned long long)(anchor_erases(&t) - first), block_most,
           (unsigned long long)most, (unsigned long long)most_all,
           (unsigned long long)calls_over_one);
    if (fd >= 0)
        CHECK_EQ(cairn_close(t.fs, fd), 0, "%s: close", label);
    if (load != SPREAD_DIRS && t_fs_remount(&t, label) == 0)
        t_check_file(t.fs, "/f", image, 65536, label);
    free(image);
    t_fs_free(&t);
}

/* A fresh volume's first session of light writes (bench fib: 4-byte writes,
 * one checkpoint): format left anchor 1 as it was (the partial run), and its
 * write calls used to erase an anchor block each until both anchors were
 * ready, 22 blocks on 16 MiB of nor-w25q128 (64 KiB segments) that no
 * checkpoint of the session needed. Now the calls take the next slot's block
 * and the share of anchor 1 the next checkpoint could not take with one
 * block, so at most two; the unmount finishes both anchors (its clean
 * checkpoint says so), and the next session's light writes erase no anchor
 * block. The data is intact after each remount. */
static void quiet_first_session(uint64_t seed)
{
    const char *label = "quiet first session, 16 MiB";
    struct tfs t;
    uint8_t four[4] = {1, 1, 2, 3};
    uint64_t before, in_calls, after_unmount, next_session;
    uint32_t i, bpl;
    int32_t fd;
    t_fs_init(&t, t_sim_model("nor-w25q128", 4096, 0, seed), 1);
    t_fs_format_mount(&t);
    bpl = seg_blocks(&t);
    fd = cairn_open(t.fs, "/fib", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    CHECK(fd >= 0, "%s: open: %d", label, fd);
    before = anchor_erases(&t);
    for (i = 0; i < 20000 && fd >= 0; i++)
        if (cairn_write(t.fs, fd, four, 4) != 4) {
            CHECK(0, "%s: write %u", label, i);
            break;
        }
    in_calls = anchor_erases(&t) - before;
    CHECK(in_calls <= 2, "%s: anchor blocks the 20,000 writes erased %llu <= 2 (%u blocks an "
          "anchor)", label, (unsigned long long)in_calls, bpl);
    if (fd >= 0)
        CHECK_EQ(cairn_close(t.fs, fd), 0, "%s: close", label);
    CHECK_EQ(cairn_unmount(t.fs), 0, "%s: unmount", label);
    after_unmount = anchor_erases(&t);
    CHECK_EQ(t_fs_mount(&t), 0, "%s: mount", label);
    fd = cairn_open(t.fs, "/fib", CAIRN_O_WRONLY | CAIRN_O_APPEND);
    CHECK(fd >= 0, "%s: reopen: %d", label, fd);
    for (i = 0; i < 20000 && fd >= 0; i++)
        if (cairn_write(t.fs, fd, four, 4) != 4) {
            CHECK(0, "%s: second session write %u", label, i);
            break;
        }
    if (fd >= 0)
        CHECK_EQ(cairn_close(t.fs, fd), 0, "%s: close", label);
    next_session = anchor_erases(&t) - after_unmount;
    CHECK(next_session <= 1, "%s: anchor blocks the next session's writes erased %llu <= 1",
          label, (unsigned long long)next_session);
    if (t_fs_remount(&t, label) == 0) {
        uint8_t *image = (uint8_t *)malloc(160000);
        CHECK(image != NULL, "%s: image", label);
        for (i = 0; image != NULL && i < 160000; i++)
            image[i] = four[i % 4];
        if (image != NULL)
            t_check_file(t.fs, "/fib", image, 160000, label);
        free(image);
    }
    printf("  %s: 20,000 writes of 4 B erased %llu anchor blocks, the unmount %llu, the next "
           "session's 20,000 writes %llu\n",
           label, (unsigned long long)in_calls, (unsigned long long)(after_unmount - before - in_calls),
           (unsigned long long)next_session);
    t_fs_free(&t);
}

/* Format on a device whose first blocks fail their first erase: format
 * takes the next good segments as anchors, and the volume works. */
static void format_failing_anchor(const struct geo_case *g, uint32_t failing, uint64_t seed)
{
    struct tfs t;
    char label[96];
    uint32_t b, bpl;
    int rc;
    snprintf(label, sizeof label, "format, first %u blocks fail, %s", failing, g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    bpl = csim_geometry(t.sim)->blocks_per_lblock ? csim_geometry(t.sim)->blocks_per_lblock : 1;
    for (b = 0; b < failing * bpl; b++)
        csim_wear_out_after(t.sim, b, 0);
    rc = cairn_format(t.fs, &t.cfg);
    CHECK_EQ(rc, 0, "%s: format", label);
    if (rc == 0 && t_fs_mount(&t) == 0) {
        CHECK(t.fs->anchor[0] >= failing, "%s: anchors past the failing blocks (%u, %u)", label,
              t.fs->anchor[0], t.fs->anchor[1]);
        CHECK_EQ(t_write_file(t.fs, "/a", payload, 3000), 0, "%s: write", label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
        t_check_file(t.fs, "/a", payload, 3000, label);
    }
    printf("  %s: anchors %u, %u\n", label, t.mounted ? t.fs->anchor[0] : 0,
           t.mounted ? t.fs->anchor[1] : 0);
    t_fs_free(&t);
}

/* Erase the newest checkpoint slots of a clean volume that went on after
 * them: mount must not program over the pages written since (I4). */
static void rolled_back_image(const struct geo_case *g, uint64_t seed)
{
    struct tfs t;
    char label[96];
    uint32_t a, s, pages_per_slot, ps;
    uint8_t *blank;
    snprintf(label, sizeof label, "rolled-back image %s", g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/a", payload, 3000), 0, "%s: write a", label);
    CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
    CHECK_EQ(t_write_file(t.fs, "/b", payload + 7, 4000), 0, "%s: write b", label);
    CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
    /* erase the two newest slots of the current anchor */
    a = t.fs->ckpt_anchor;
    s = t.fs->ckpt_slot;
    pages_per_slot = t.fs->ckpt_pages * t.fs->ckpt_copies;
    ps = t.fs->page_size;
    blank = malloc(ps);
    memset(blank, 0xFF, ps);
    {
        uint32_t slot, j, seg_pages = t.fs->seg_pages, anchor_seg = t.fs->anchor[a];
        t_fs_unmount(&t); /* its clean checkpoint goes to slot s */
        for (slot = s >= 2 ? s - 2 : 0; slot <= s; slot++)
            for (j = 0; j < pages_per_slot; j++) {
                uint32_t page = anchor_seg * seg_pages + slot * pages_per_slot + j;
                uint8_t spare[256];
                memset(spare, 0xFF, sizeof spare);
                csim_poke(t.sim, page, blank, spare);
            }
    }
    free(blank);
    { /* a fresh device with that image: the dump written back to a chip */
        struct t_image im;
        t_image_take(&im, t.sim);
        csim_free(t.sim);
        t.sim = geo_sim(g, seed);
        t.cfg.dev = csim_dev(t.sim);
        t_image_put(&im, t.sim);
        t_image_free(&im);
    }
    if (t_fs_mount(&t) == 0) {
        (void)session_write(&t, 1);
        (void)t_write_file(t.fs, "/c", payload, 2000);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount after writes", label);
        CHECK_EQ(t_fs_check(&t, label), 0, "%s: check", label);
    }
    CHECK(t_fs_no_violations(&t, label) == 0, "%s: no program over written pages", label);
    printf("  %s: mounted, wrote, remounted; rule violations: %s\n", label,
           csim_last_violation(t.sim)[0] ? csim_last_violation(t.sim) : "none");
    t.allow_violations = 1;
    t_fs_free(&t);
}

/* Bytes past a clean checkpoint at the heads' next pages, the journal's next
 * bytes blank (a lost session's pages where its journal went on in another
 * segment). Since session 23 a clean mount reads only the journal's next
 * bytes and the heads' next pages are read at the session's first change
 * (alloc.c cn_heads_check): the mount stays clean and programs nothing, a
 * session that only reads leaves them alone, and the first change must not
 * program over them (I4): the test fails with the check left out. */
static void heads_written_past(const struct geo_case *g, uint64_t seed)
{
    struct tfs t;
    char label[96];
    uint32_t h, ppb, poked = 0, pages[CN_HEADS];
    uint8_t junk[4096], spare[256];
    struct csim_counters c0, c1;
    snprintf(label, sizeof label, "heads written past %s", g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/a", payload, 3000), 0, "%s: write a", label);
    CHECK_EQ(t_write_file(t.fs, "/b", payload + 5, 5900), 0, "%s: write b", label);
    CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
    ppb = t.fs->dev->geo.pages_per_block;
    for (h = 0; h < CN_HEADS; h++) {
        const struct cn_head *hd = &t.fs->head[h];
        if (hd->seg != CN_NONE && hd->page < t.fs->seg_pages && (hd->page == 0 || hd->page % ppb))
            pages[poked++] = hd->seg * t.fs->seg_pages + hd->page;
    }
    CHECK_EQ(t_fs_unmount(&t), 0, "%s: unmount", label);
    t_pattern(junk, sizeof junk, seed);
    memset(spare, 0xFF, sizeof spare);
    for (h = 0; h < poked; h++)
        csim_poke(t.sim, pages[h], junk, spare);
    csim_counters(t.sim, &c0);
    CHECK_EQ(t_fs_mount(&t), 0, "%s: mount", label);
    t_check_file(t.fs, "/a", payload, 3000, label);
    csim_counters(t.sim, &c1);
    CHECK(c1.prog_calls == c0.prog_calls && c1.erases == c0.erases,
          "%s: the clean mount and a read program nothing (%llu programs, %llu erases)", label,
          (unsigned long long)(c1.prog_calls - c0.prog_calls),
          (unsigned long long)(c1.erases - c0.erases));
    CHECK_EQ(t_write_file(t.fs, "/c", payload + 9, 5000), 0, "%s: write c", label);
    CHECK_EQ(t_write_file(t.fs, "/a", payload + 1, 3000), 0, "%s: rewrite a", label);
    CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount after writes", label);
    t_check_file(t.fs, "/a", payload + 1, 3000, label);
    t_check_file(t.fs, "/b", payload + 5, 5900, label);
    t_check_file(t.fs, "/c", payload + 9, 5000, label);
    CHECK(poked > 0, "%s: a head to write past", label);
    CHECK(t_fs_no_violations(&t, label) == 0, "%s: no program over written pages", label);
    printf("  %s: %u head pages written past the checkpoint; mount read %llu pages, "
           "programmed nothing; writes went elsewhere\n",
           label, poked, (unsigned long long)(c1.read_calls - c0.read_calls));
    t.allow_violations = 1;
    t_fs_free(&t);
}

/* The mount searches first the anchor whose written slots end in the newer
 * header (session 23: the other anchor is then searched only for slots
 * whose header is newer than what the first one holds). A torn slot with a
 * plausible header and a far newer seq past the end of the older anchor
 * misleads that guess: the mount must still find the newest valid
 * checkpoint, in the other anchor, and load its state. */
static void misleading_header(const struct geo_case *g, uint64_t seed)
{
    struct tfs t;
    char label[96];
    uint32_t w, l, s, slots, per_slot, seg_pages, best_seq = 0, end = 0, ps;
    uint8_t page[4096], spare[256], newest[4096];
    snprintf(label, sizeof label, "misleading header %s", g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    t_fs_format_mount(&t);
    for (s = 0; s < 6; s++) {
        CHECK_EQ(t_write_file(t.fs, "/a", payload + s, 3000), 0, "%s: write a", label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
    }
    w = t.fs->ckpt_anchor;
    l = w ^ 1u;
    per_slot = t.fs->ckpt_pages * t.fs->ckpt_copies;
    seg_pages = t.fs->seg_pages;
    slots = seg_pages / per_slot;
    ps = t.fs->page_size;
    /* the newest header in the winner, and the end of the loser's slots */
    for (s = 0; s < slots; s++) {
        csim_peek(t.sim, t.fs->anchor[w] * seg_pages + s * per_slot, page, NULL);
        if (memcmp(page, "\xff\xff\xff\xff", 4) != 0 && cn_get32(page + 8) >= best_seq) {
            best_seq = cn_get32(page + 8);
            memcpy(newest, page, ps);
        }
        csim_peek(t.sim, t.fs->anchor[l] * seg_pages + s * per_slot, page, NULL);
        if (memcmp(page, "\xff\xff\xff\xff", 4) != 0)
            end = s + 1;
    }
    CHECK_EQ(t_fs_unmount(&t), 0, "%s: unmount", label); /* changed nothing: writes nothing */
    if (end < slots) {
        cn_put32(newest + 8, best_seq + 1000u); /* its CRC no longer holds */
        memset(spare, 0xFF, sizeof spare);
        csim_poke(t.sim, t.fs->anchor[l] * seg_pages + end * per_slot, newest, spare);
    }
    CHECK_EQ(t_fs_mount(&t), 0, "%s: mount", label);
    if (t.mounted) {
        CHECK(t.fs->ckpt_anchor == w, "%s: the newest checkpoint's anchor (%u, not %u)", label,
              t.fs->ckpt_anchor, w);
        t_check_file(t.fs, "/a", payload + 5, 3000, label);
        CHECK_EQ(t_write_file(t.fs, "/b", payload, 2000), 0, "%s: write b", label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount after", label);
        t_check_file(t.fs, "/a", payload + 5, 3000, label);
        t_check_file(t.fs, "/b", payload, 2000, label);
    }
    printf("  %s: a torn header seq %u at slot %u of the older anchor, past its written slots; "
           "mounted from the newer anchor\n", label, best_seq + 1000u, end);
    t.allow_violations = 1;
    t_fs_free(&t);
}

/* NAND: the slots after the newest hold bytes in their second copy only
 * (the first reads blank). The next checkpoints must not be programmed over
 * them (issue 9 item 10: the search looked at the first copy alone). */
static void second_copy_written(uint64_t seed)
{
    struct tfs t;
    const char *label = "second copy written, nand-dhara";
    uint32_t a, s, k, ps, seg_pages, pages, anchor_seg;
    uint8_t *junk;
    t_fs_init(&t, t_sim_model("nand-dhara", 64, 1, seed), 1);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/a", payload, 3000), 0, "%s: write a", label);
    a = t.fs->ckpt_anchor;
    ps = t.fs->page_size;
    seg_pages = t.fs->seg_pages;
    pages = t.fs->ckpt_pages;
    anchor_seg = t.fs->anchor[a];
    t_fs_unmount(&t);
    s = t.fs->ckpt_slot; /* the clean checkpoint's slot */
    junk = malloc(ps);
    memset(junk, 0x5A, ps);
    { /* the next four slots: second copy written, first blank */
        struct t_image im;
        t_image_take(&im, t.sim);
        csim_free(t.sim);
        t.sim = t_sim_model("nand-dhara", 64, 1, seed);
        t.cfg.dev = csim_dev(t.sim);
        t_image_put(&im, t.sim);
        t_image_free(&im);
    }
    for (k = 1; k <= 4 && (s + k + 1) * 2 * pages <= seg_pages; k++) {
        uint8_t spare[64];
        memset(spare, 0xFF, sizeof spare);
        csim_poke(t.sim, anchor_seg * seg_pages + (s + k) * 2 * pages + pages, junk, spare);
    }
    if (t_fs_mount(&t) == 0) {
        CHECK_EQ(session_write(&t, 1), 0, "%s: write", label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount", label);
        t_check_file(t.fs, "/a", payload, 3000, label);
    } else {
        CHECK(0, "%s: mount", label);
    }
    { /* the simulator lets a poked page be programmed again: look at the bytes */
        uint8_t *now = malloc(ps);
        uint32_t intact = 0, j;
        for (j = 1; j < k; j++) {
            csim_peek(t.sim, anchor_seg * seg_pages + (s + j) * 2 * pages + pages, now, NULL);
            intact += memcmp(now, junk, ps) == 0;
        }
        CHECK_EQ(intact, k - 1, "%s: the written second copies were left alone", label);
        free(now);
    }
    free(junk);
    CHECK(t_fs_no_violations(&t, label) == 0, "%s: nothing programmed over written pages", label);
    printf("  %s: mounted, wrote, remounted; rule violations: %s\n", label,
           csim_last_violation(t.sim)[0] ? csim_last_violation(t.sim) : "none");
    t.allow_violations = 1;
    t_fs_free(&t);
}

/* Format over an earlier volume whose checkpoints fill both anchors (issue
 * 11: "format erases no more than it must"). On NOR format erases only the
 * blocks of anchor 0's slot 0 and leaves anchor 1 as it was (ckpt.c
 * "partial run"); its seq starts above every checkpoint found there. On
 * NAND and BLOCK both anchors are erased whole, as before. Then sessions cut
 * at one of their first 12 mutating operations, each followed by a mount:
 * nothing of the earlier volume may ever be found (its files, its
 * checkpoints), and what the new one synced must stay, through enough
 * sessions to switch anchors several times. */
static void reformat(const struct geo_case *g, uint64_t seed)
{
    struct tfs t;
    struct csim_counters c0, c1;
    char label[96];
    unsigned r, cuts = 0, logged = 0;
    uint64_t rng = seed;
    uint32_t old_seq, first_block[2], bpl, expect;
    uint64_t format_erases;
    struct cairn_info info;
    int rc;
    snprintf(label, sizeof label, "reformat %s", g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    t_fs_format_mount(&t);
    CHECK_EQ(t_write_file(t.fs, "/old", payload, 3000), 0, "%s: the earlier volume's file", label);
    for (r = 0; r < 50; r++) {
        CHECK_EQ(session_write(&t, r), 0, "%s: earlier session %u", label, r);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: earlier remount %u", label, r);
    }
    old_seq = t.fs->ckpt_seq;
    anchor_blocks(&t, first_block, &bpl);
    t_fs_unmount(&t);
    csim_counters(t.sim, &c0);
    rc = cairn_format(t.fs, &t.cfg);
    csim_counters(t.sim, &c1);
    CHECK_EQ(rc, 0, "%s: format over it", label);
    format_erases = c1.erases - c0.erases;
    expect = csim_geometry(t.sim)->medium == CAIRN_MEDIUM_NOR ? 1u : 2u * bpl;
    CHECK(format_erases <= expect, "%s: format erased %llu blocks <= %u", label,
          (unsigned long long)format_erases, (unsigned)expect);
    CHECK_EQ(t_fs_mount(&t), 0, "%s: mount the new volume", label);
    if (csim_geometry(t.sim)->medium == CAIRN_MEDIUM_NOR)
        CHECK((int32_t)(t.fs->ckpt_seq - old_seq) > 0, "%s: the new seq %u is above the old %u",
              label, (unsigned)t.fs->ckpt_seq, (unsigned)old_seq);
    CHECK_EQ(t_write_file(t.fs, "/new", payload + 7, 5000), 0, "%s: the new volume's file", label);
    for (r = 0; r < 120 && t.mounted; r++) {
        csim_counters(t.sim, &c0);
        if (r % 3 != 2) {
            csim_cut_at(t.sim, c0.mutating_ops + t_randn(&rng, 12),
                        (r & 1) ? CSIM_TEAR_RANDOM : CSIM_TEAR_PREFIX);
        }
        if (session_write(&t, r) == 0)
            logged++;
        (void)session_write(&t, r + 1);
        if (csim_powered(t.sim)) {
            csim_cut_cancel(t.sim);
            t_fs_unmount(&t);
        } else {
            t_fs_abandon(&t);
            cuts++;
        }
        if (mount_ok(&t, label, r) != 0)
            break;
        CHECK(cairn_stat(t.fs, "/old", &info) == CAIRN_ERR_NOENT, "%s: round %u: nothing of the "
              "earlier volume comes back", label, r);
        if (r % 10 == 0)
            t_check_file(t.fs, "/new", payload + 7, 5000, label);
    }
    if (t.mounted)
        t_check_file(t.fs, "/new", payload + 7, 5000, label);
    /* the first clean unmount ends format's deferred work: afterwards no
     * write of a session erases an anchor block until the next switch */
    if (t.mounted) {
        uint64_t a0;
        CHECK_EQ(session_write(&t, 1), 0, "%s: a write before the clean unmount", label);
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: clean remount", label);
        CHECK(t.fs->ckpt_partial == 0, "%s: no partial run after a clean unmount", label);
        unsigned w, mark = csim_geometry(t.sim)->medium == CAIRN_MEDIUM_NAND; /* its session
                                                    mark: the other anchor's first block */
        a0 = anchor_erases(&t);
        for (w = 0; w < 6; w++)
            CHECK_EQ(session_write(&t, w), 0, "%s: write %u after the remount", label, w);
        CHECK(anchor_erases(&t) - a0 <= mark, "%s: writes after the first clean unmount erased "
              "%llu anchor blocks (<= %u)", label, (unsigned long long)(anchor_erases(&t) - a0),
              mark);
    }
    printf("  %s: format erased %llu blocks (anchors of %u), the earlier volume's newest seq %u; "
           "%u sessions, %u cut\n", label, (unsigned long long)format_erases,
           (unsigned)bpl, (unsigned)old_seq, r, cuts);
    CHECK(logged > 0, "%s: some sessions wrote", label);
    t_fs_free(&t);
}

/* The earlier volume of format_cut: what each of its files holds. */
#define FC_FILES 4
#define FC_LONG 40 /* the writes of every fifth session */
struct fc_volume {
    uint8_t bytes[FC_FILES][40000];
    uint32_t len[FC_FILES];
    unsigned gen[FC_FILES]; /* 0: never written */
};

/* How many of the earlier volume's files a mount shows; where it shows any,
 * each must hold its last synced bytes and cairn_check must pass. */
static unsigned fc_shown(struct tfs *c, const struct fc_volume *v, const char *label)
{
    struct cairn_info info;
    unsigned j, present = 0, bad = 0;
    char name[8];
    for (j = 0; j < FC_FILES; j++) {
        snprintf(name, sizeof name, "/f%u", j);
        present += cairn_stat(c->fs, name, &info) == 0;
    }
    for (j = 0; j < FC_FILES && present > 0; j++) {
        snprintf(name, sizeof name, "/f%u", j);
        if (v->gen[j] > 0)
            bad += !t_check_file(c->fs, name, v->bytes[j], (int32_t)v->len[j], label);
    }
    CHECK(bad == 0 && (present == 0 || t_fs_check(c, label) == 0), "%s: the earlier volume "
          "shown: %u files differ", label, bad);
    return present;
}

/* A format of the device cut at its operation k (counted from now), then a
 * mount, left unmounted: shown[0] counts the new volume, [1] the earlier
 * one, [2] none (CORRUPT; also NOSPC once a device operation failed, `worn`:
 * the earlier volume with a failing anchor block and no segment free to
 * replace it, as DESIGN.md "Session 33" leaves). With `fail`, one of the
 * format's operations before k fails and its block wears out. 1 when the
 * format finished (k is past its last operation). */
static int fc_format_cut(struct tfs *c, uint32_t k, int fail, int worn, const struct fc_volume *v,
                         unsigned shown[3], const char *label)
{
    struct csim_counters n;
    int rc, done;
    csim_counters(c->sim, &n);
    csim_cut_at(c->sim, n.mutating_ops + k, k % 2 ? CSIM_TEAR_RANDOM : CSIM_TEAR_PREFIX);
    if (fail && k > 0)
        csim_fail_op(c->sim, n.mutating_ops + k / 3u);
    rc = cairn_format(c->fs, &c->cfg);
    done = csim_powered(c->sim);
    csim_cut_cancel(c->sim);
    csim_power_on(c->sim);
    CHECK(!done || rc == 0, "%s: the format uncut: %d", label, rc);
    rc = t_fs_mount(c);
    if (rc == 0) {
        unsigned present = fc_shown(c, v, label);
        shown[present > 0]++;
        CHECK(!done || present == 0, "%s: a whole format shows the earlier volume", label);
        CHECK_EQ(t_fs_unmount(c), 0, "%s: unmount", label);
    } else {
        shown[2]++;
        CHECK((rc == CAIRN_ERR_CORRUPT || (worn && rc == CAIRN_ERR_NOSPC)) && !done,
              "%s: mount after a format cut at %u: %d", label, (unsigned)k, rc);
    }
    return done;
}

/* The image formatted with a cut at operation k, then (a boot loop) with a
 * cut at an earlier operation of the next format, each followed by a mount;
 * then a format that finishes must give an empty volume. In every third, an
 * operation of the first format fails and its block wears out (before
 * session 35 a failed erase in the old layout's clearing left a new anchor
 * flagged failing, and every format after it failed with IO). 1 when the
 * first format finished. */
static int fc_cut_once(const struct geo_case *g, const struct t_image *im, uint32_t k,
                       const struct fc_volume *v, unsigned shown[3], const char *label)
{
    struct tfs c;
    struct cairn_info info;
    int rc, done, fail = k % 3u == 2u;
    t_fs_init(&c, geo_sim(g, 1), 1);
    t_image_put(im, c.sim);
    done = fc_format_cut(&c, k, fail, fail, v, shown, label);
    if (!done) {
        (void)fc_format_cut(&c, k / 2u, 0, fail, v, shown, label);
        rc = cairn_format(c.fs, &c.cfg);
        CHECK(rc == 0 && t_fs_mount(&c) == 0 && cairn_stat(c.fs, "/f0", &info) == CAIRN_ERR_NOENT &&
              cairn_stat(c.fs, "/f1", &info) == CAIRN_ERR_NOENT && t_fs_check(&c, label) == 0,
              "%s: a format after the cuts: %d", label, rc);
    }
    c.allow_violations = 1; /* the cut's tears: checked by the mount alone */
    t_fs_free(&c);
    return done;
}

/* A format cut at each of its operations over an aged earlier volume (files
 * rewritten until GC has erased and reused segments, checkpoints across both
 * anchors): the mount after the cut must show the new, empty volume, refuse
 * with CORRUPT, or show the earlier volume exactly as it was last synced, with
 * a clean cairn_check. An earlier checkpoint than its newest would name
 * segments erased since (I12): files of other bytes, or a check that fails.
 * The earlier volume is formatted over after every session from `from` on,
 * so its newest checkpoint is in every slot of both anchors in turn, left
 * mounted (its last files synced, not unmounted). A session writes one file,
 * every other one two (the second after the session's first checkpoint),
 * every fifth FC_LONG: their checkpoints switch anchors in the middle, and
 * the segments the switch's checkpoint freed are written again before the
 * session ends (the format before session 35 erased the new anchor's first
 * block and a cut there gave the anchor before the switch: files of an
 * older generation, or a mount refused with NOSPC). With bpl_before the
 * earlier volume is laid out in the segments zero config gave before
 * session 34 (the format's own layout differs: fs.c clear_dividing_anchors,
 * the same fault in its erase order). */
static void format_cut(const struct geo_case *g, uint32_t bpl_before, unsigned from,
                       unsigned sessions, uint64_t seed)
{
    static struct fc_volume v;
    struct cairn_dev before;
    struct tfs t;
    char label[96], name[8];
    unsigned s, i, vols = 0, cuts = 0, shown[3] = {0, 0, 0};
    uint64_t rng = seed;
    memset(&v, 0, sizeof v);
    snprintf(label, sizeof label, "format cut %s", g->label);
    t_fs_init(&t, geo_sim(g, seed), 1);
    if (bpl_before) {
        before = *t.cfg.dev;
        before.geo.blocks_per_lblock = bpl_before;
        t.cfg.dev = &before;
        snprintf(label, sizeof label, "format cut %s over segments of %u blocks", g->label,
                 (unsigned)bpl_before);
    }
    t_fs_format_mount(&t);
    for (s = 0; s < from + sessions && t.mounted; s++) {
        struct t_image im;
        uint32_t k, w;
        CHECK_EQ(t_fs_remount(&t, label), 0, "%s: remount %u", label, s);
        for (w = 0; w < (s % 5u == 4u ? FC_LONG : 1u + s % 2u); w++) {
            i = t_randn(&rng, FC_FILES);
            v.gen[i]++;
            v.len[i] = 1000u + t_randn(&rng, (uint32_t)sizeof v.bytes[0] - 1000u);
            t_pattern(v.bytes[i], v.len[i], seed * 1000u + i * 100u + v.gen[i]);
            snprintf(name, sizeof name, "/f%u", i);
            CHECK_EQ(t_write_file(t.fs, name, v.bytes[i], (int32_t)v.len[i]), 0, "%s: write",
                     label);
        }
        if (s < from)
            continue;
        vols++;
        t_image_take(&im, t.sim);
        for (k = 0; k < 200; k++) {
            char what[160];
            snprintf(what, sizeof what, "%s, %u sessions, cut at operation %u", label, s + 1,
                     (unsigned)k);
            if (fc_cut_once(g, &im, k, &v, shown, what))
                break;
            cuts++;
        }
        t_image_free(&im);
    }
    printf("  %s: %u earlier volumes, a format over each cut at each of its operations (%u "
           "cuts, each followed by a second cut format): the new volume %u, the earlier one %u, "
           "none %u\n",
           label, vols, cuts, shown[0], shown[1], shown[2]);
    t_fs_free(&t);
}

int main(int argc, char **argv)
{
    unsigned i, scale = t_scale();
    uint64_t seed = t_env_u64("CAIRN_TEST_SEED", 1);
    (void)argc;
    (void)argv;
    t_begin("test_anchor");
    t_pattern(payload, sizeof payload, 99);
    printf("test_anchor: seed %llu\n", (unsigned long long)seed);
    for (i = 0; i < NGEOS; i++) {
        boot_loop(&geos[i], 2, 1, seed);       /* the reported sequence */
        boot_loop(&geos[i], 12 * scale, 3, seed + i);
        boot_loop(&geos[i], 40 * scale, 8, seed + 17 + i);
        clean_boot_loop(&geos[i], 40 * scale, 4, seed + 31 + i);
        cut_in_recovery(&geos[i], seed + i);
        session_mark(&geos[i], seed + i);
        rolled_back_image(&geos[i], seed + i);
        heads_written_past(&geos[i], seed + i);
        misleading_header(&geos[i], seed + i);
        reformat(&geos[i], seed + i);
        format_cut(&geos[i], 0, 30, (strncmp(geos[i].model, "nor", 3) == 0 ? 32 : 12) * scale,
                   seed + i); /* NOR, where a cut format first left an older checkpoint */
    }
    for (i = 0; scale > 1u && i < NWIDER; i++) /* longer runs: more geometries */
        format_cut(&wider[i], 0, 20, 10 * scale, seed + 100 + i);
    for (i = 0; i < NODD; i++)
        format_cut(&odd[i].g, odd[i].bpl_before, 36, 6 * scale, seed + i);
    second_copy_written(seed);
    block_anchor_sessions(seed);
    for (i = 0; i < 4; i++) {
        recovery_tail("nand-dhara", 128, 4, i, seed + i);
        recovery_tail("nand-jffs2", 512, 8, i, seed + i);
    }
    recovery_after_long_session("nand-dhara", 128, 4, seed);
    recovery_after_long_session("nand-jffs2", 512, 8, seed);
    anchor_erase_spread(SPREAD_OVERWRITES, 1024, seed);
    anchor_erase_spread(SPREAD_DIRS, 1024, seed);
    anchor_erase_spread(SPREAD_SESSIONS, 1024, seed);
    anchor_erase_spread(SPREAD_DIRS, 4096, seed);
    quiet_first_session(seed);
    for (i = 0; i < NGEOS; i++) {
        failing_anchor(&geos[i], 0, 0, 0, seed + i);
        failing_anchor(&geos[i], 0, 1, 0, seed + i);
        failing_anchor(&geos[i], 1, 0, 1, seed + i);
        failing_anchor(&geos[i], 0, 1, 2, seed + i);
        format_failing_anchor(&geos[i], 1, seed + i);
        format_failing_anchor(&geos[i], 3, seed + i);
        if (strncmp(geos[i].model, "nand", 4) == 0)
            worn_other_anchor(&geos[i], seed + i);
        both_anchors_fail(&geos[i], 0, 0, seed + i);
        both_anchors_fail(&geos[i], 0, 2, seed + i);
        both_anchors_fail(&geos[i], 8192, 0, seed + i);
        both_anchors_fail(&geos[i], 65536, 0, seed + i);
    }
    CHECK(rofs_mounts > 0, "both anchors fail: some writable mount answered ROFS (%u)",
          rofs_mounts);
    return t_summary("test_anchor");
}
