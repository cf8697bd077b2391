/*
 * The segment table at 4 bytes a segment (issue 11, docs/DESIGN.md "RAM"):
 *
 *  (a) the RAM a mount needs grows by 4 bytes a segment, nothing else;
 *  (b) erase counts: kept relative to the least worn segment, they equal the
 *      simulator's per-block counts for every segment (anchors included),
 *      before and after a remount, on one-block segments under a hot/cold
 *      load with wear levelling on; with levelling off (wear_spread 30) the
 *      worn ones saturate at 31 above the least worn and no lower count is
 *      lost;
 *  (c) the age classes of the data go through a checkpoint unchanged, and so
 *      do relative erase counts of every value from 0 to the saturated 31
 *      (whatever order the table holds them in) and the anchors' exact ones;
 *  (d) erase fronts: eight data heads, the metadata, cold and journal heads
 *      on segments of eight erase blocks each keep part-erased segments of
 *      their own; no program lands in an unerased block (the simulator's
 *      rules), the files read back after a remount and after power cuts;
 *  (e) cairn_check counts pages per segment in windows of the record
 *      buffer: a wrong live count is found in the first window and past it
 *      (a 1 GiB NAND volume of 1,024 segments, 200 MiB written);
 *  (f) a checkpoint that calls a segment FREE while it holds live pages (what
 *      GC's move left before session 40, docs/DESIGN.md "Session 40" under
 *      "Space") is repaired by the mount: the segment is closed, checks
 *      clean, its data reads back and GC can take it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn.h"
#include "tsupport.h"

/* ---------------------------------------------------------------- (a) */

static uint32_t mem_of(const char *model, uint32_t blocks, uint32_t bpl)
{
    csim *s = t_sim_model(model, blocks, bpl, 1);
    struct cairn_config cfg;
    uint32_t m;
    memset(&cfg, 0, sizeof cfg);
    cfg.dev = csim_dev(s);
    m = cairn_mem_size(&cfg);
    csim_free(s);
    return m;
}

static void ram_per_segment(void)
{
    static const struct {
        const char *model;
        uint32_t blocks, bpl;
    } v[] = {{"nor-w25q128", 1024, 8}, {"nor-w25q128", 4096, 16}, {"nand-jffs2", 1024, 2},
             {"nand-jffs2", 8192, 8}};
    uint32_t i;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint32_t a = mem_of(v[i].model, v[i].blocks / 2, v[i].bpl);
        uint32_t b = mem_of(v[i].model, v[i].blocks, v[i].bpl);
        uint32_t segs = v[i].blocks / 2 / v[i].bpl;
        CHECK(a > 0 && b - a == 4u * segs,
              "[ram %s %u blocks] %u more segments cost %u bytes (4 a segment)", v[i].model,
              (unsigned)v[i].blocks, (unsigned)segs, (unsigned)(b - a));
        printf("  ram: %s, %u and %u segments of %u blocks: %u and %u bytes\n", v[i].model,
               (unsigned)segs, (unsigned)(2u * segs), (unsigned)v[i].bpl, (unsigned)a,
               (unsigned)b);
    }
}

/* ---------------------------------------------------------------- (b) */

/* Every segment's erase count as cairn keeps it against the simulator's
 * count of its (only) block. Returns the segments that differ; `saturated`
 * counts the ones cairn keeps at the cap. */
static uint32_t erase_mismatches(struct tfs *t, const char *label, uint32_t *saturated,
                                 uint32_t *spread)
{
    cairn *fs = t->fs;
    uint32_t s, bad = 0, lo = UINT32_MAX, hi = 0;
    *saturated = 0;
    for (s = 0; s < fs->seg_count; s++) {
        uint32_t sim = csim_erase_count(t->sim, s), mine = cn_seg_erases(fs, s);
        int anchor = s == fs->anchor[0] || s == fs->anchor[1];
        if (fs->segs[s].state == CN_SEG_BAD)
            continue;
        if (!anchor) {
            lo = sim < lo ? sim : lo;
            hi = sim > hi ? sim : hi;
        }
        if (!anchor && fs->segs[s].wear == CN_WEAR_MAX) {
            (*saturated)++;
            if (sim < mine) { /* a saturated count is a lower bound */
                bad++;
                printf("  [%s] segment %u: %u erases, kept %u (saturated)\n", label,
                       (unsigned)s, (unsigned)sim, (unsigned)mine);
            }
            continue;
        }
        if (sim != mine) {
            if (bad < 5)
                printf("  [%s] segment %u%s: %u erases, kept %u\n", label, (unsigned)s,
                       anchor ? " (anchor)" : "", (unsigned)sim, (unsigned)mine);
            bad++;
        }
    }
    *spread = hi >= lo ? hi - lo : 0;
    return bad;
}

/* Two hot files rewritten over and over among cold ones (the cold files fill
 * most of the volume, so levelling has to move them). */
static void erase_counts(uint16_t wear_spread)
{
    struct tfs t;
    char label[64], p[32];
    uint8_t buf[4096];
    uint64_t rng = 7;
    uint32_t i, sat = 0, spread = 0, bad;
    struct cairn_fsinfo fi;
    snprintf(label, sizeof label, "erase counts, wear_spread %u", (unsigned)wear_spread);
    t_fs_init(&t, t_sim_model("nor-m25p16", 32, 1, 3), 0);
    t.cfg.wear_spread = wear_spread;
    t_fs_format_mount(&t);
    t_pattern(buf, sizeof buf, 1);
    for (i = 0; i < 10; i++) { /* cold: 10 x 96 KiB of a 2 MiB volume */
        int fd;
        uint32_t k;
        sprintf(p, "/cold%u", (unsigned)i);
        fd = cairn_open(t.fs, p, CAIRN_O_RDWR | CAIRN_O_CREAT);
        for (k = 0; k < 24 && fd >= 0; k++)
            CHECK(cairn_write(t.fs, fd, buf, sizeof buf) == (int32_t)sizeof buf, "[%s] cold",
                  label);
        CHECK(fd >= 0 && cairn_close(t.fs, fd) == 0, "[%s] cold file %u", label, (unsigned)i);
    }
    for (i = 0; i < 6000 * t_scale(); i++) {
        int fd;
        sprintf(p, "/hot%u", (unsigned)t_randn(&rng, 2));
        fd = cairn_open(t.fs, p, CAIRN_O_RDWR | CAIRN_O_CREAT);
        if (fd < 0)
            break;
        (void)cairn_seek(t.fs, fd, (int32_t)(t_randn(&rng, 16) * sizeof buf), CAIRN_SEEK_SET);
        buf[0] = (uint8_t)i;
        CHECK(cairn_write(t.fs, fd, buf, sizeof buf) == (int32_t)sizeof buf, "[%s] hot write",
              label);
        CHECK(cairn_close(t.fs, fd) == 0, "[%s] hot close", label);
        if (i % 500 == 0)
            (void)cairn_gc(t.fs, 64);
    }
    bad = erase_mismatches(&t, label, &sat, &spread);
    CHECK(bad == 0, "[%s] every segment's erase count is the device's (%u differ)", label,
          (unsigned)bad);
    CHECK(cairn_fs_stat(t.fs, &fi) == 0 && fi.erase_max - fi.erase_min <= CN_WEAR_MAX,
          "[%s] fs_stat erase min %u max %u", label, (unsigned)fi.erase_min,
          (unsigned)fi.erase_max);
    printf("  [%s] %u hot writes: device spread %u erases, %u segments saturated; fs_stat "
           "min %u max %u mean %u\n",
           label, (unsigned)i, (unsigned)spread, (unsigned)sat, (unsigned)fi.erase_min,
           (unsigned)fi.erase_max, (unsigned)fi.erase_mean);
    if (wear_spread <= 16) /* levelling on: nothing may saturate */
        CHECK(sat == 0 && spread < CN_WEAR_MAX, "[%s] levelled: spread %u, %u saturated", label,
              (unsigned)spread, (unsigned)sat);
    CHECK(t_fs_remount(&t, label) == 0, "[%s] remount", label);
    bad = erase_mismatches(&t, label, &sat, &spread);
    CHECK(bad == 0, "[%s] after a remount: %u segments differ", label, (unsigned)bad);
    t_fs_free(&t);
}

/* ---------------------------------------------------------------- (c) */

static void ages_round_trip(void)
{
    struct tfs t;
    uint8_t buf[4096], before[4096];
    uint32_t i, s, classes = 0, differ = 0;
    t_fs_init(&t, t_sim_model("nor-w25q128", 1024, 8, 5), 0);
    t_fs_format_mount(&t);
    t_pattern(buf, sizeof buf, 2);
    for (i = 0; i < 1500 * t_scale(); i++) { /* files come and go: segments of all ages */
        char p[32];
        sprintf(p, "/f%u", (unsigned)(i % 40));
        CHECK(t_write_file(t.fs, p, buf, (int32_t)(1024u + (i % 4u) * 1024u)) == 0,
              "[ages] write %u", (unsigned)i);
    }
    CHECK(t.fs->seg_count <= sizeof before, "[ages] table fits");
    for (s = 0; s < t.fs->seg_count; s++) {
        before[s] = (uint8_t)t.fs->segs[s].age;
        classes |= 1u << t.fs->segs[s].age;
    }
    CHECK(t_fs_remount(&t, "ages") == 0, "[ages] remount");
    for (s = 0; s < t.fs->seg_count; s++)
        differ += t.fs->segs[s].age != before[s];
    CHECK(differ == 0, "[ages] %u segments changed age class over a remount", (unsigned)differ);
    CHECK((classes & ~1u) != 0, "[ages] data of several ages (classes seen: 0x%x)",
          (unsigned)classes);
    printf("  ages: %u segments, classes seen 0x%02x, the same after a remount\n",
           (unsigned)t.fs->seg_count, (unsigned)classes);
    t_fs_free(&t);
}

/* Every wear from 0 to the saturated CN_WEAR_MAX, in an order that makes the
 * load lower its running base many times, and anchors worn far past the
 * rest: after a remount the same counts. */
static void wear_round_trip(void)
{
    struct tfs t;
    uint32_t s, n = 0, differ = 0, base, a0, a1;
    t_fs_init(&t, t_sim_model("nor-w25q128", 1024, 8, 6), 0);
    t_fs_format_mount(&t);
    CHECK(t_write_file(t.fs, "/x", "x", 1) == 0, "[wear trip] a file");
    /* the first session's unmount finishes erasing anchor 1 (ckpt.c
     * partial_quiet), counting it: done before the counts are set */
    CHECK(t_fs_remount(&t, "wear trip") == 0, "[wear trip] first remount");
    CHECK(t_write_file(t.fs, "/y", "y", 1) == 0, "[wear trip] a change to write at unmount");
    for (s = t.fs->seg_base; s < t.fs->seg_count; s++)
        if (t.fs->segs[s].state != CN_SEG_BAD && t.fs->segs[s].state != CN_SEG_ANCHOR)
            t.fs->segs[s].wear = (CN_WEAR_MAX - (n++ * 7u) % (CN_WEAR_MAX + 1u)) & CN_WEAR_MAX;
    t.fs->wear_base = 1000;
    t.fs->anchor_erases[0] = 5000;
    t.fs->anchor_erases[1] = 7001;
    base = t.fs->wear_base;
    a0 = t.fs->anchor_erases[0];
    a1 = t.fs->anchor_erases[1];
    CHECK(t_fs_unmount(&t) == 0 && t_fs_mount(&t) == 0, "[wear trip] remount");
    CHECK(t.fs->wear_base == base && t.fs->anchor_erases[0] == a0 &&
              t.fs->anchor_erases[1] == a1,
          "[wear trip] base %u (was %u), anchors %u %u (were %u %u)", (unsigned)t.fs->wear_base,
          (unsigned)base, (unsigned)t.fs->anchor_erases[0], (unsigned)t.fs->anchor_erases[1],
          (unsigned)a0, (unsigned)a1);
    n = 0;
    for (s = t.fs->seg_base; s < t.fs->seg_count; s++)
        if (t.fs->segs[s].state != CN_SEG_BAD && t.fs->segs[s].state != CN_SEG_ANCHOR)
            differ += t.fs->segs[s].wear != (CN_WEAR_MAX - (n++ * 7u) % (CN_WEAR_MAX + 1u));
    CHECK(differ == 0, "[wear trip] %u of %u segments changed wear over a remount",
          (unsigned)differ, (unsigned)n);
    printf("  wear trip: %u segments worn 0..31 above a base of %u, anchors %u and %u: the "
           "same after a remount\n", (unsigned)n, (unsigned)base, (unsigned)a0, (unsigned)a1);
    t_fs_free(&t);
}

/* ---------------------------------------------------------------- (d) */

static uint32_t fronts_used(const cairn *fs)
{
    uint32_t i, n = 0;
    for (i = 0; i < CN_FRONTS; i++)
        n += fs->fronts[i].seg != CN_NONE;
    return n;
}

#define NFILES 8
static void fronts(void)
{
    struct tfs t;
    uint8_t *want[NFILES];
    int32_t len[NFILES];
    int fd[NFILES];
    uint32_t i, k, most = 0, round;
    uint64_t rng = 11;
    char p[32];
    t_fs_init(&t, t_sim_model("nor-w25q128", 1024, 8, 9), 0);
    t.cfg.data_heads = 8;
    t.cfg.max_open = NFILES;
    t.cfg.mem_size = cairn_mem_size(&t.cfg); /* own memory: mounts are abandoned */
    t.mem = malloc(t.cfg.mem_size);
    CHECK(t.mem != NULL, "[fronts] memory");
    t.cfg.mem = t.mem;
    t_fs_format_mount(&t);
    for (i = 0; i < NFILES; i++) {
        want[i] = malloc(200000);
        CHECK(want[i] != NULL, "[fronts] memory");
        len[i] = 0;
        sprintf(p, "/w%u", (unsigned)i);
        fd[i] = cairn_open(t.fs, p, CAIRN_O_RDWR | CAIRN_O_CREAT);
        CHECK(fd[i] >= 0, "[fronts] open %s", p);
    }
    for (k = 0; k < 600; k++) { /* side by side: every head part-way into a segment */
        for (i = 0; i < NFILES; i++) {
            uint32_t n = 64u + t_randn(&rng, 512);
            t_pattern(want[i] + len[i], n, k * NFILES + i);
            CHECK(cairn_write(t.fs, fd[i], want[i] + len[i], (int32_t)n) == (int32_t)n,
                  "[fronts] write");
            len[i] += (int32_t)n;
            if (fronts_used(t.fs) > most)
                most = fronts_used(t.fs);
        }
        if (k % 50 == 49)
            for (i = 0; i < NFILES; i++)
                CHECK(cairn_file_sync(t.fs, fd[i]) == 0, "[fronts] sync");
    }
    for (i = 0; i < NFILES; i++)
        CHECK(cairn_close(t.fs, fd[i]) == 0, "[fronts] close");
    CHECK(most >= 8 && most <= CN_FRONTS, "[fronts] part-erased segments at once: %u (8..%u)",
          (unsigned)most, (unsigned)CN_FRONTS);
    CHECK(t_fs_remount(&t, "fronts") == 0, "[fronts] remount");
    for (i = 0; i < NFILES; i++) {
        sprintf(p, "/w%u", (unsigned)i);
        t_check_file(t.fs, p, want[i], len[i], "fronts");
    }
    /* power cuts in the middle of side-by-side appends, then mount and read */
    for (round = 0; round < 12; round++) {
        struct csim_counters c;
        int rc;
        for (i = 0; i < NFILES; i++) {
            sprintf(p, "/w%u", (unsigned)i);
            fd[i] = cairn_open(t.fs, p, CAIRN_O_RDWR | CAIRN_O_APPEND);
            CHECK(fd[i] >= 0, "[fronts] reopen");
        }
        csim_counters(t.sim, &c);
        csim_cut_at(t.sim, c.mutating_ops + 5u + t_randn(&rng, 200), CSIM_TEAR_PREFIX);
        for (k = 0; k < 400; k++) {
            i = k % NFILES;
            rc = cairn_write(t.fs, fd[i], want[i], 300);
            if (rc < 0)
                break;
        }
        t_fs_abandon(&t);
        csim_power_on(t.sim);
        rc = t_fs_mount(&t);
        CHECK(rc == 0, "[fronts] mount after cut %u: %d", (unsigned)round, rc);
        if (rc != 0)
            break;
        CHECK(t_fs_check(&t, "fronts after a cut") == 0, "[fronts] check after cut %u",
              (unsigned)round);
        for (i = 0; i < NFILES; i++) { /* what was synced is there, in front */
            uint8_t *got;
            int32_t glen;
            sprintf(p, "/w%u", (unsigned)i);
            CHECK(t_read_file(t.fs, p, &got, &glen) == 0 && glen >= len[i] &&
                      memcmp(got, want[i], (size_t)len[i]) == 0,
                  "[fronts] %s after cut %u", p, (unsigned)round);
            free(got);
        }
    }
    printf("  fronts: 8 data heads on 32 KiB segments of 8 blocks: at most %u of %u fronts "
           "in use; 12 power cuts, no rule broken\n", (unsigned)most, (unsigned)CN_FRONTS);
    for (i = 0; i < NFILES; i++)
        free(want[i]);
    t_fs_free(&t); /* checks that the simulator saw no rule violation */
}

/* ---------------------------------------------------------------- (e) */

static void check_windows(void)
{
    struct tfs t;
    uint8_t buf[16384];
    uint32_t i, s, far = CN_NONE, near = CN_NONE;
    t_fs_init(&t, t_sim_model("nand-jffs2", 0, 0, 4), 0);
    t_fs_format_mount(&t);
    CHECK(t.fs->seg_count > 3u * (CN_REC_MAX / 2u), "[check] %u segments: several windows",
          (unsigned)t.fs->seg_count);
    t_pattern(buf, sizeof buf, 3);
    for (i = 0; i < 200; i++) { /* 200 x 1 MiB files: data far into the volume */
        char p[32];
        int fd;
        uint32_t k;
        sprintf(p, "/big%u", (unsigned)i);
        fd = cairn_open(t.fs, p, CAIRN_O_RDWR | CAIRN_O_CREAT);
        for (k = 0; k < 64 && fd >= 0; k++)
            (void)cairn_write(t.fs, fd, buf, sizeof buf);
        CHECK(fd >= 0 && cairn_close(t.fs, fd) == 0, "[check] file %u", (unsigned)i);
    }
    CHECK(t_fs_check(&t, "check windows") == 0, "[check] a sound volume checks clean");
    for (s = t.fs->seg_base; s < t.fs->seg_count; s++)
        if (t.fs->segs[s].live > 0 && t.fs->segs[s].state == CN_SEG_FULL) {
            if (near == CN_NONE && s < CN_REC_MAX / 2u)
                near = s;
            if (s >= CN_REC_MAX / 2u)
                far = s;
        }
    CHECK(near != CN_NONE && far != CN_NONE, "[check] data segments in the first window (%u) "
          "and past it (%u)", (unsigned)near, (unsigned)far);
    if (near != CN_NONE && far != CN_NONE) {
        uint32_t pick[2], j;
        pick[0] = near;
        pick[1] = far;
        for (j = 0; j < 2; j++) {
            struct cairn_check_report r;
            t.fs->segs[pick[j]].live--; /* RAM only: the flash stays sound */
            CHECK(cairn_check(t.fs, &r, NULL, NULL) == CAIRN_ERR_CORRUPT && r.errors == 1,
                  "[check] segment %u one page short: found (%u problems)", (unsigned)pick[j],
                  (unsigned)r.errors);
            t.fs->segs[pick[j]].live++;
        }
        CHECK(cairn_check(t.fs, NULL, NULL, NULL) == 0, "[check] sound again");
        printf("  check: %u segments, %u windows: a live count one short found in segment %u "
               "and in segment %u\n", (unsigned)t.fs->seg_count,
               (unsigned)((t.fs->seg_count + CN_REC_MAX / 2u - 1u) / (CN_REC_MAX / 2u)),
               (unsigned)near, (unsigned)far);
    }
    t_fs_free(&t);
}

/* ---------------------------------------------------------------- (f) */

static uint32_t live_full_segment(const cairn *fs)
{
    uint32_t s;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (fs->segs[s].state == CN_SEG_FULL && fs->segs[s].live > 0)
            return s;
    return CN_NONE;
}

static void free_with_live(void)
{
    struct tfs t;
    uint8_t data[48 * 1024];
    uint32_t s, live, n = 0;
    int32_t k;
    int fd, rc = 0;
    t_fs_init(&t, t_sim_model("nor-w25q128", 128, 4, 5), 1); /* 512 KiB, 16 KiB segments */
    t_fs_format_mount(&t);
    t_pattern(data, sizeof data, 41);
    CHECK(t_write_file(t.fs, "/keep", data, (int32_t)sizeof data) == 0, "[repair] /keep written");
    /* what cairn_unmount does before its checkpoint */
    CHECK(cairn_sync(t.fs) == 0 && cn_flush_nodes(t.fs) == 0, "[repair] synced, nodes written");
    cn_seg_release_dead(t.fs);
    s = live_full_segment(t.fs);
    CHECK(s != CN_NONE, "[repair] a full segment with live pages (%u)", (unsigned)s);
    if (s == CN_NONE) {
        t_fs_free(&t);
        return;
    }
    live = t.fs->segs[s].live;
    /* RAM only, then a clean checkpoint of it and a cut: no call runs the
     * state check (I6) in between */
    t.fs->segs[s].state = CN_SEG_FREE;
    CHECK(cn_ckpt_write(t.fs, 1) == 0, "[repair] a checkpoint calling segment %u free with %u "
          "live pages", (unsigned)s, (unsigned)live);
    t_fs_abandon(&t);
    rc = t_fs_mount(&t);
    CHECK(rc == 0, "[repair] mounts (%s)", t_errname(rc));
    CHECK(t.fs->segs[s].state == CN_SEG_FULL && t.fs->segs[s].live == live,
          "[repair] segment %u closed (state %u, live %u)", (unsigned)s,
          (unsigned)t.fs->segs[s].state, (unsigned)t.fs->segs[s].live);
    CHECK(t_fs_check(&t, "repair") == 0, "[repair] checks clean");
    t_check_file(t.fs, "/keep", data, (int32_t)sizeof data, "repair");
    /* the segment takes part in GC again: overwrite /keep until GC has
     * emptied it and it was handed out again (a FREE segment is never a
     * victim: without the repair it stays as it is) */
    fd = cairn_open(t.fs, "/keep", CAIRN_O_RDWR);
    for (k = 0; fd >= 0 && rc >= 0 && n < 4000u && t.fs->segs[s].state == CN_SEG_FULL; n++) {
        uint32_t off = (n * 7u % 48u) * 1024u; /* the same bytes again, elsewhere */
        rc = (int)cairn_seek(t.fs, fd, (int32_t)off, CAIRN_SEEK_SET);
        if (rc >= 0)
            rc = (int)cairn_write(t.fs, fd, data + off, 1024);
        if (rc >= 0)
            rc = cairn_file_sync(t.fs, fd);
    }
    k = fd >= 0 ? cairn_close(t.fs, fd) : fd;
    CHECK(rc >= 0 && k == 0, "[repair] %u overwrites of /keep (rc %d)", (unsigned)n, rc);
    CHECK(t.fs->segs[s].state != CN_SEG_FULL, "[repair] segment %u collected (state %u, %u live "
          "pages)", (unsigned)s, (unsigned)t.fs->segs[s].state, (unsigned)t.fs->segs[s].live);
    CHECK(t_fs_remount(&t, "repair") == 0 && t_fs_check(&t, "repair remount") == 0,
          "[repair] remounts clean");
    t_check_file(t.fs, "/keep", data, (int32_t)sizeof data, "repair remount");
    printf("  repair: segment %u of %u live pages, free in the checkpoint: closed at mount, "
           "collected after %u overwrites\n", (unsigned)s, (unsigned)live, (unsigned)n);
    t_fs_free(&t);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    t_begin("test_segtab");
    if (!only || strcmp(only, "ram") == 0)
        ram_per_segment();
    if (!only || strcmp(only, "erases") == 0) {
        erase_counts(0);
        erase_counts(30);
    }
    if (!only || strcmp(only, "ages") == 0) {
        ages_round_trip();
        wear_round_trip();
    }
    if (!only || strcmp(only, "fronts") == 0)
        fronts();
    if (!only || strcmp(only, "check") == 0)
        check_windows();
    if (!only || strcmp(only, "repair") == 0)
        free_with_live();
    return t_summary("test_segtab");
}
