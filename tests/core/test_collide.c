/*
 * test_collide: names that share their 24-bit name hash (FNV-1a folded,
 * docs/DESIGN.md "On-disk format"). A bucket holds 15 names; before the
 * overflow area the 17th name of one hash got NOSPC on an empty volume.
 *
 * Colliding names are made, not searched for: FNV-1a's 32-bit state is
 * found to collide for two 4-byte blocks by a birthday search (2^18 random
 * blocks of a 64-letter alphabet; 3-byte blocks never collide),
 * and from that common state the next pair is searched, and so on (Joux's
 * multicollision). k pairs give 2^k names of 3k bytes whose full 32-bit
 * states, and so whose 24-bit hashes, are all equal.
 *
 * Checks: 1,000 such names in one directory are all created, found, listed
 * once each; every other one removed and re-added (holes), renamed within
 * the overflow area and onto bucket names, all removed (the directory is then
 * empty); cairn_check and a remount after each phase; a power cut at every
 * mutating op of a scenario that moves names in and out of the overflow area
 * (state after the cut = the state after some prefix of the scenario). Then
 * prints device reads per lookup with 0, 16, 100 and 1,000 colliding names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsupport.h"

#define BLOCK 4u   /* bytes per colliding block */
#define STAGES 10u /* 2^10 = 1024 names */
#define NAME_LEN (BLOCK * STAGES)
#define SEARCH (1u << 18)

static const char ALPHA[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

static uint32_t fnv_step(uint32_t h, const char *s, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 16777619u;
    }
    return h;
}

/* The name hash as src/dir.c computes it. */
static uint32_t hash24(const char *s, uint32_t n)
{
    uint32_t h = fnv_step(2166136261u, s, n);
    return (h ^ (h >> 24)) & 0xFFFFFFu;
}

struct cand {
    uint32_t state, block; /* block: 4 letters of 6 bits */
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = (const struct cand *)a, *y = (const struct cand *)b;
    if (x->state != y->state)
        return x->state < y->state ? -1 : 1;
    return x->block < y->block ? -1 : x->block > y->block;
}

static void block_text(uint32_t b, char *out)
{
    out[0] = ALPHA[b & 63];
    out[1] = ALPHA[(b >> 6) & 63];
    out[2] = ALPHA[(b >> 12) & 63];
    out[3] = ALPHA[(b >> 18) & 63];
}

/* pairs[i][0..1]: the two blocks of stage i. */
static char pairs[STAGES][2][BLOCK];

static void make_pairs(void)
{
    struct cand *c = (struct cand *)malloc(SEARCH * sizeof *c);
    uint32_t state = 2166136261u, st, i;
    uint64_t rng = 20261123;
    if (!c)
        t_fatal("out of memory");
    for (st = 0; st < STAGES; st++) {
        int found = 0;
        for (i = 0; i < SEARCH; i++) {
            char b[BLOCK];
            c[i].block = (uint32_t)t_rand(&rng) & 0xFFFFFFu;
            block_text(c[i].block, b);
            c[i].state = fnv_step(state, b, BLOCK);
        }
        qsort(c, SEARCH, sizeof *c, cand_cmp);
        for (i = 1; i < SEARCH && !found; i++)
            if (c[i].state == c[i - 1].state && c[i].block != c[i - 1].block) {
                block_text(c[i - 1].block, pairs[st][0]);
                block_text(c[i].block, pairs[st][1]);
                state = c[i].state;
                found = 1;
            }
        if (!found)
            t_fatal("test_collide: no FNV-1a collision at stage %u", (unsigned)st);
    }
    free(c);
}

/* Colliding name number i (0 .. 2^STAGES-1), NUL-terminated. */
static void coll_name(uint32_t i, char *out)
{
    uint32_t st;
    for (st = 0; st < STAGES; st++)
        memcpy(out + st * BLOCK, pairs[st][(i >> st) & 1], BLOCK);
    out[NAME_LEN] = '\0';
}

static void coll_path(const char *dir, uint32_t i, char *out)
{
    char name[NAME_LEN + 1];
    coll_name(i, name);
    sprintf(out, "%s/%s", dir, name);
}

#define PATH_LEN (NAME_LEN + 16)

/* ------------------------------------------------------------ checks */

/* Every name of [0, n) whose bit in present[] is set is found, the others
 * are NOENT; readdir of dir returns each present one exactly once and
 * nothing else. */
static void expect_set(cairn *fs, const char *dir, uint32_t n, const uint8_t *present,
                       const char *label)
{
    struct cairn_info info;
    uint8_t *seen = (uint8_t *)calloc(n, 1);
    char path[PATH_LEN];
    uint32_t i, bad = 0, listed = 0, want = 0, dup = 0, stray = 0;
    int dd, rc;
    if (!seen)
        t_fatal("out of memory");
    for (i = 0; i < n; i++) {
        coll_path(dir, i, path);
        rc = cairn_stat(fs, path, &info);
        want += present[i];
        if (present[i] ? rc != 0 : rc != CAIRN_ERR_NOENT) {
            if (bad++ < 3)
                printf("  %s: name %u: stat %d %s, expected %s\n", label, (unsigned)i, rc,
                       t_errname(rc), present[i] ? "found" : "NOENT");
        }
    }
    CHECK_EQ(bad, 0, "%s: stat of %u colliding names as expected", label, (unsigned)n);
    dd = cairn_opendir(fs, dir);
    CHECK(dd >= 0, "%s: opendir: %d", label, dd);
    while (dd >= 0 && (rc = cairn_readdir(fs, dd, &info)) == 1) {
        listed++;
        for (i = 0; i < n; i++) {
            char name[NAME_LEN + 1];
            coll_name(i, name);
            if (strcmp(name, info.name) == 0)
                break;
        }
        if (i == n || !present[i])
            stray++;
        else if (seen[i]++)
            dup++;
    }
    if (dd >= 0)
        cairn_closedir(fs, dd);
    CHECK(listed == want && dup == 0 && stray == 0,
          "%s: readdir listed %u (want %u), %u twice, %u not expected", label,
          (unsigned)listed, (unsigned)want, (unsigned)dup, (unsigned)stray);
    free(seen);
}

static int create(cairn *fs, const char *dir, uint32_t i)
{
    char path[PATH_LEN];
    int fd;
    coll_path(dir, i, path);
    fd = cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_EXCL);
    return fd < 0 ? fd : cairn_close(fs, fd);
}

static int removen(cairn *fs, const char *dir, uint32_t i)
{
    char path[PATH_LEN];
    coll_path(dir, i, path);
    return cairn_remove(fs, path);
}

static int renamen(cairn *fs, const char *dir, uint32_t a, uint32_t b)
{
    char pa[PATH_LEN], pb[PATH_LEN];
    coll_path(dir, a, pa);
    coll_path(dir, b, pb);
    return cairn_rename(fs, pa, pb);
}

/* 1,000 names of one hash in one directory, on one medium. */
static void thousand(int medium)
{
    struct tfs t;
    const uint32_t n = 1000;
    uint8_t present[1024];
    char label[64];
    uint32_t i, fails = 0;
    int rc;
    t_fs_init(&t, t_sim_new(medium, 5), 0);
    t_fs_format_mount(&t);
    snprintf(label, sizeof label, "%s 1000 names", t_medium_name[medium]);
    CHECK_EQ(cairn_mkdir(t.fs, "/c"), 0, "%s: mkdir", label);
    memset(present, 0, sizeof present);
    for (i = 0; i < n; i++) {
        rc = create(t.fs, "/c", i);
        if (rc && fails++ < 3)
            printf("  %s: create %u: %d %s\n", label, (unsigned)i, rc, t_errname(rc));
        present[i] = rc == 0;
    }
    CHECK_EQ(fails, 0, "%s: every create succeeded", label);
    expect_set(t.fs, "/c", n, present, label);
    t_fs_remount(&t, label);
    expect_set(t.fs, "/c", n, present, label);

    for (i = 0; i < n; i += 2) { /* holes in the bucket and in the overflow area */
        CHECK_EQ(removen(t.fs, "/c", i), 0, "%s: remove %u", label, (unsigned)i);
        present[i] = 0;
    }
    expect_set(t.fs, "/c", n, present, "every other one removed");
    t_fs_check(&t, "every other one removed");
    for (i = 0; i < n; i += 2) {
        CHECK_EQ(create(t.fs, "/c", i), 0, "%s: re-add %u", label, (unsigned)i);
        present[i] = 1;
    }
    expect_set(t.fs, "/c", n, present, "re-added");
    t_fs_remount(&t, "re-added");

    /* renames: to a new colliding name, onto an existing one, out and back */
    CHECK_EQ(renamen(t.fs, "/c", 999, 1000), 0, "%s: rename 999 -> 1000 (new)", label);
    present[999] = 0;
    present[1000] = 1;
    CHECK_EQ(renamen(t.fs, "/c", 998, 3), 0, "%s: rename 998 -> 3 (replaces)", label);
    present[998] = 0;
    CHECK_EQ(renamen(t.fs, "/c", 4, 997), 0, "%s: rename 4 -> 997 (replaces)", label);
    present[4] = 0;
    CHECK_EQ(cairn_rename(t.fs, "/c/\x01plain", "/x"), CAIRN_ERR_NOENT, "%s: rename absent",
             label);
    {
        char p[PATH_LEN];
        coll_path("/c", 500, p);
        CHECK_EQ(cairn_rename(t.fs, p, "/c/plain"), 0, "%s: rename 500 -> plain", label);
        CHECK_EQ(cairn_rename(t.fs, "/c/plain", p), 0, "%s: rename plain -> 500", label);
        CHECK_EQ(renamen(t.fs, "/c", 501, 501), 0, "%s: rename onto itself", label);
    }
    expect_set(t.fs, "/c", 1001, present, "renamed");
    t_fs_remount(&t, "renamed");
    expect_set(t.fs, "/c", 1001, present, "renamed, remounted");

    CHECK_EQ(cairn_remove(t.fs, "/c"), CAIRN_ERR_NOTEMPTY, "%s: rmdir of the full dir", label);
    for (i = 0; i <= n; i++)
        if (present[i]) {
            CHECK_EQ(removen(t.fs, "/c", i), 0, "%s: remove %u", label, (unsigned)i);
            present[i] = 0;
        }
    expect_set(t.fs, "/c", 1001, present, "all removed");
    CHECK_EQ(cairn_remove(t.fs, "/c"), 0, "%s: rmdir once empty (no mark left)", label);
    t_fs_remount(&t, "all removed");
    t_fs_free(&t);
    printf("  %s: done\n", label);
}

/* ------------------------------------------------------------ power cut */

#define CUT_BASE 30u /* names 0..29 exist: 15 in the bucket, 15 overflowed */
#define CUT_NAMES 33u
#define CUT_STEPS 6

/* The scenario, one namespace op per step, each synced. */
static int cut_step(cairn *fs, int step)
{
    int err;
    switch (step) {
    case 0: err = create(fs, "/c", 30); break;      /* into the overflow area */
    case 1: err = removen(fs, "/c", 3); break;      /* a hole in the bucket */
    case 2: err = removen(fs, "/c", 20); break;     /* out of the overflow area */
    case 3: err = renamen(fs, "/c", 21, 31); break; /* overflow -> overflow */
    case 4: err = renamen(fs, "/c", 22, 5); break;  /* overflow onto a bucket name */
    default: err = create(fs, "/c", 32); break;     /* fills the hole */
    }
    return err ? err : cairn_sync(fs);
}

static void cut_state(int steps, uint8_t *present)
{
    static const int8_t add[CUT_STEPS] = {30, -1, -1, 31, -1, 32};
    static const int8_t del[CUT_STEPS] = {-1, 3, 20, 21, 22, -1};
    int s;
    memset(present, 0, CUT_NAMES);
    memset(present, 1, CUT_BASE);
    for (s = 0; s < steps; s++) {
        if (add[s] >= 0)
            present[add[s]] = 1;
        if (del[s] >= 0)
            present[del[s]] = 0;
    }
}

/* Run the scenario with a cut at op `cut` (-1: none); returns the ops it took. */
static long cut_run(long cut, enum csim_tear tear)
{
    struct tfs t;
    struct csim_counters c;
    uint8_t present[CUT_NAMES], got[CUT_NAMES];
    struct cairn_info info;
    char path[PATH_LEN], label[48];
    uint64_t start;
    uint32_t i;
    int s, rc, match = 0;
    long ops;
    snprintf(label, sizeof label, "cut at op %ld, tear %d", cut, (int)tear);
    t_fs_init(&t, t_sim_new(T_NOR, 11), 1);
    t_fs_format_mount(&t);
    if (cairn_mkdir(t.fs, "/c"))
        t_fatal("mkdir");
    for (i = 0; i < CUT_BASE; i++)
        if (create(t.fs, "/c", i))
            t_fatal("create");
    cairn_sync(t.fs);
    csim_counters(t.sim, &c);
    start = c.mutating_ops;
    if (cut >= 0)
        csim_cut_at(t.sim, start + (uint64_t)cut, tear);
    for (s = 0; s < CUT_STEPS; s++)
        if (cut_step(t.fs, s))
            break;
    csim_counters(t.sim, &c);
    ops = (long)(c.mutating_ops - start);
    if (cut >= 0 && !csim_powered(t.sim)) {
        rc = cairn_unmount(t.fs);
        (void)rc;
        t_fs_abandon(&t);
        csim_power_on(t.sim);
        rc = t_fs_mount(&t);
        CHECK_EQ(rc, 0, "%s: mount", label);
        if (rc) {
            t_fs_free(&t);
            return ops;
        }
    } else {
        csim_cut_cancel(t.sim);
        CHECK_EQ(s, CUT_STEPS, "%s: the scenario ran to its end", label);
    }
    CHECK_EQ(t_fs_check(&t, label), 0, "%s: cairn_check", label);
    for (i = 0; i < CUT_NAMES; i++) {
        coll_path("/c", i, path);
        got[i] = cairn_stat(t.fs, path, &info) == 0;
    }
    for (s = 0; s <= CUT_STEPS && !match; s++) {
        cut_state(s, present);
        match = memcmp(present, got, CUT_NAMES) == 0;
    }
    CHECK(match, "%s: the names present are the state after some prefix of the scenario",
          label);
    if (match) {
        memcpy(present, got, CUT_NAMES);
        expect_set(t.fs, "/c", CUT_NAMES, present, label);
    }
    t_fs_free(&t);
    return ops;
}

static void power_cuts(void)
{
    long ops = cut_run(-1, CSIM_TEAR_PREFIX), k;
    int tear;
    for (tear = CSIM_TEAR_PREFIX; tear <= CSIM_TEAR_RANDOM; tear++)
        for (k = 0; k < ops; k++)
            cut_run(k, (enum csim_tear)tear);
    printf("  power cuts: %ld mutating ops, a cut at each, 2 tear modes: done\n", ops);
}

/* ------------------------------------------------------------ cost */

/* Unmount and mount: nothing cached but what mount reads (no check). */
static void cold(struct tfs *t)
{
    if (t_fs_unmount(t) || t_fs_mount(t))
        t_fatal("test_collide: remount");
}

static uint64_t reads_of_stat(struct tfs *t, const char *path, int expect)
{
    struct csim_counters c;
    struct cairn_info info;
    csim_reset_counters(t->sim);
    CHECK_EQ(cairn_stat(t->fs, path, &info), expect, "stat %s", path);
    csim_counters(t->sim, &c);
    return c.read_calls;
}

/* Device reads of one cold lookup (right after a mount) and of the same
 * lookup warm, in a directory of 200 ordinary names plus n colliding ones. */
static void cost(uint32_t n, uint64_t *worst)
{
    struct tfs t;
    char path[PATH_LEN];
    uint64_t plain_cold, plain_warm, first_cold, coll_cold, coll_warm, miss;
    uint32_t i;
    t_fs_init(&t, t_sim_new(T_NOR, 9), 0);
    t_fs_format_mount(&t);
    cairn_mkdir(t.fs, "/c");
    for (i = 0; i < 200; i++) {
        sprintf(path, "/c/plain%u", (unsigned)i);
        if (t_write_file(t.fs, path, "", 0))
            t_fatal("create %s", path);
    }
    for (i = 0; i < n; i++)
        if (create(t.fs, "/c", i))
            t_fatal("create colliding %u", (unsigned)i);
    cold(&t);
    plain_cold = reads_of_stat(&t, "/c/plain77", 0);
    plain_warm = reads_of_stat(&t, "/c/plain77", 0);
    coll_path("/c", 0, path); /* in the bucket */
    cold(&t);
    first_cold = reads_of_stat(&t, path, n ? 0 : CAIRN_ERR_NOENT);
    coll_path("/c", n ? n - 1 : 0, path); /* in the overflow area from n = 16 */
    cold(&t);
    coll_cold = reads_of_stat(&t, path, n ? 0 : CAIRN_ERR_NOENT);
    coll_warm = reads_of_stat(&t, path, n ? 0 : CAIRN_ERR_NOENT);
    coll_path("/c", 1023, path); /* absent: scans the whole overflow area */
    cold(&t);
    miss = reads_of_stat(&t, path, CAIRN_ERR_NOENT);
    printf("  %4u  | %u / %u         | %u          | %3u / %-3u        | %3u\n",
           (unsigned)n, (unsigned)plain_cold, (unsigned)plain_warm, (unsigned)first_cold,
           (unsigned)coll_cold, (unsigned)coll_warm, (unsigned)miss);
    worst[0] = plain_cold;
    worst[1] = miss;
    t_fs_free(&t);
}

static void costs(void)
{
    static const uint32_t ns[] = {0, 16, 100, 1000};
    uint64_t w[4][2];
    unsigned i;
    printf("  device reads per lookup (cairn_stat; NOR, 1 KiB nodes, 16 cached; a directory\n"
           "  of 200 other names and n names of one hash; cold = first lookup after a mount)\n"
           "  n     | other name    | 1st of n   | n-th of n       | absent, same hash\n"
           "        | cold / warm   | cold       | cold / warm     | cold\n");
    for (i = 0; i < 4; i++)
        cost(ns[i], w[i]);
    /* an ordinary name costs its path in the tree (height <= 3 here) and no
     * more, whatever another bucket holds */
    for (i = 0; i < 4; i++)
        CHECK(w[i][0] <= 3, "other name with %u colliders: %u cold reads (<= 3)",
              (unsigned)ns[i], (unsigned)w[i][0]);
    /* below a mark the cost is the overflow area's leaves: 18 entries of 56
     * bytes fill a 1 KiB leaf, and a leaf is at least half full */
    for (i = 0; i < 4; i++)
        CHECK(w[i][1] <= 3 + ns[i] / 8, "absent name of %u colliders: %u reads (<= %u)",
              (unsigned)ns[i], (unsigned)w[i][1], (unsigned)(3 + ns[i] / 8));
}

int main(void)
{
    char a[NAME_LEN + 1], b[NAME_LEN + 1];
    uint32_t i, h0;
    t_begin("test_collide");
    make_pairs();
    coll_name(0, a);
    h0 = hash24(a, NAME_LEN);
    for (i = 1; i < 1024; i++) {
        coll_name(i, b);
        if (hash24(b, NAME_LEN) != h0 || strcmp(a, b) == 0)
            break;
    }
    CHECK_EQ(i, 1024, "1,024 distinct names share the hash %06x (e.g. %s)", (unsigned)h0, a);
    printf("  1,024 names of %u bytes share the 24-bit hash %06x\n", (unsigned)NAME_LEN,
           (unsigned)h0);
    thousand(T_NOR);
    thousand(T_NAND);
    thousand(T_BLOCK);
    power_cuts();
    costs();
    return t_summary("test_collide");
}
