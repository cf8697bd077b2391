/*
 * test_model: model-based random testing. Random sequences of API calls
 * (create, write at random offsets and sizes, read-back, seek, truncate,
 * rename, remove, mkdir, sync, close/reopen, unmount+mount) run on NOR, NAND
 * and BLOCK volumes; every call's result is compared with an in-memory model,
 * the whole volume is compared with the model regularly and after every
 * remount, and cairn_check must return 0 after every mount.
 *
 * Usage: test_model [seed ...]   (or CAIRN_TEST_SEED=n; default seeds 1..12,
 * 12 x CAIRN_TEST_SCALE). CAIRN_TEST_STEPS: steps per run (default 2500).
 * Seeds 1, 4, 7, ... run with the smallest node cache (12) and commit_pages 2.
 * CAIRN_TEST_VERBOSE=1 prints every call; CAIRN_TEST_SKIP_OPS=truncate,...
 * leaves operations out (to look behind a known failure).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmodel.h"

static int run_seq(int medium, uint64_t seed, long steps)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct rop r;
    struct cairn_fsinfo fi;
    uint64_t rng = seed * 7919 + (uint64_t)medium;
    char label[64];
    long step, remounts = 0, verifies = 0;
    const char *last[8] = {0};
    int rc;

    t_fs_init(&t, t_sim_new(medium, seed), 0);
    /* every third seed: the smallest node cache and frequent commits */
    if (seed % 3 == 1) {
        t.cfg.cache_nodes = 12;
        t.cfg.commit_pages = 2;
    }
    snprintf(label, sizeof label, "model %s%s", t_medium_name[medium],
             t.cfg.cache_nodes ? " small-cache" : "");
    t_fs_format_mount(&t);
    m_init(&m);
    memset(&d, 0, sizeof d);
    d.fs = t.fs;
    d.sim = t.sim;
    d.m = &m;
    d.label = label;
    d.seed = seed;

    memset(&fi, 0, sizeof fi);
    rc = cairn_fs_stat(t.fs, &fi);
    CHECK(rc == 0 && fi.total_bytes > 0, "[%s] fs_stat: %d", label, rc);
    memset(&r, 0, sizeof r);
    r.page = (int32_t)csim_geometry(t.sim)->page_size;
    r.max_bytes = (int64_t)(fi.total_bytes / 5);
    if (r.max_bytes > 512 * 1024)
        r.max_bytes = 512 * 1024;
    if (r.max_bytes < 16 * 1024)
        r.max_bytes = 16 * 1024;
    r.big = (int32_t)(r.max_bytes / 6);
    r.max_fds = 2;

    for (step = 0; step < steps && !d.failed; step++) {
        uint32_t c = t_randn(&rng, 1000);
        d.step = step;
        if (c < 35) {
            d_close_all(&d);
            if (d.failed)
                break;
            last[step % 8] = "remount";
            remounts++;
            if (t_fs_remount(&t, label)) {
                d.failed = 1;
                break;
            }
            d_verify(&d);
            verifies++;
        } else {
            last[step % 8] = d_random_op(&d, &rng, &r);
            if (c > 960 && !d.failed) {
                d_verify(&d);
                verifies++;
            }
        }
    }
    if (!d.failed) {
        d_close_all(&d);
        d_verify(&d);
        if (!d.failed && t_fs_remount(&t, label) == 0)
            d_verify(&d);
    }
    if (d.failed) {
        long s;
        printf("  %s seed %llu: FAILED at step %ld; the last operations:", label,
               (unsigned long long)seed, d.step);
        for (s = step - 7; s <= step; s++)
            if (s >= 0 && last[s % 8])
                printf(" [%ld] %s", s, last[s % 8]);
        printf("\n  reproduce: test_model %llu\n", (unsigned long long)seed);
    } else {
        printf("  %s seed %llu: %ld steps, %ld remounts, %ld full compares, %d entries, "
               "%lld bytes: ok\n",
               label, (unsigned long long)seed, steps, remounts, verifies, m.nnodes,
               (long long)m.bytes);
    }
    if (t_fs_no_violations(&t, label))
        printf("  (seed %llu)\n", (unsigned long long)seed);
    t.allow_violations = 1;
    m_free(&m);
    t_fs_free(&t);
    return d.failed;
}

int main(int argc, char **argv)
{
    uint64_t *seeds;
    int nseeds = 0, i, med;
    uint32_t n = 12 * t_scale();
    long steps = (long)t_env_u64("CAIRN_TEST_STEPS", 2500);
    t_begin("test_model");
    seeds = (uint64_t *)malloc(sizeof *seeds * ((size_t)argc + n + 1));
    if (!seeds)
        t_fatal("out of memory");
    for (i = 1; i < argc; i++)
        seeds[nseeds++] = strtoull(argv[i], NULL, 0);
    if (!nseeds && getenv("CAIRN_TEST_SEED"))
        seeds[nseeds++] = t_env_u64("CAIRN_TEST_SEED", 1);
    if (!nseeds)
        for (i = 0; i < (int)n; i++)
            seeds[nseeds++] = (uint64_t)i + 1;
    printf("test_model: %d seeds (first %llu), %ld steps each, on nor, nand, block\n",
           nseeds, (unsigned long long)(nseeds > 0 ? seeds[0] : 0), steps);
    for (med = 0; med < T_NMEDIA; med++)
        for (i = 0; i < nseeds; i++)
            run_seq(med, seeds[i], steps);
    free(seeds);
    return t_summary("test_model");
}
