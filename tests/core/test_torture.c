/*
 * test_torture: repeated power cuts, cuts inside recovery, brown-out boot
 * loops and device failures under a random workload, on many geometries,
 * checked against an oracle of its own (torture_oracle.c).
 *
 * Each run: one geometry, one seed. A random workload through the public API
 * (create/open, writes of many sizes, file_sync, close, truncate, remove,
 * rename also over a file, mkdir, rmdir, directory rename, cairn_sync),
 * often keeping the volume 85-95% full. The cut scheduler places power cuts
 * (csim_cut_at, PREFIX, RANDOM and NONE tears) at random ops, at the first
 * ops of a session, inside the recovery mount, and in brown-out loops (2-8
 * cuts in a row, each at the first ops after a mount). Some runs add factory
 * bad blocks (block 0 too: the anchors move), failing programs and erases
 * (anchor blocks too) and corrected bit flips.
 *
 * The rules checked (docs/DESIGN.md "Why it is power-loss safe", cairn.h):
 *   R1 After every power-on cairn_mount succeeds (a mount that a cut
 *      interrupted is retried), cairn_check reports no error, and the
 *      simulator saw no rule violation.
 *   R2 Namespace: the tree equals the namespace after some completed
 *      namespace call (or the call in flight) at or after the last durable
 *      point. A durable point is a returned cairn_sync, cairn_file_sync (any
 *      handle) or close of a writable handle: each writes out the whole
 *      journal, so every namespace call completed before it is durable.
 *      Create, mkdir, remove and rename are atomic.
 *   R3 Content: each file holds its content at its last durable point
 *      (cairn_sync, or file_sync/close of that file), or a later state it
 *      passed through: its writes and size changes since then applied in
 *      order, the last applied one possibly only up to one of its page
 *      boundaries (file offsets that are multiples of the page size).
 *      Bytes nothing wrote never appear; holes read as zeros. A ring
 *      file (--ring) holds the window of such a state of its stream, a
 *      write being present up to a page boundary of the stream.
 *   R4 What a mount showed is durable: another cut before any new call
 *      must bring back the same state (no silent rollback), however often.
 *   R5 A call that fails cleanly (NOSPC) changes nothing: size and content
 *      stay as before (the open handle's view and the next full read).
 *      Exceptions, handled as "state uncertain" (the test then reboots and
 *      checks R2/R3): a close that fails (the handle is gone), and any
 *      CAIRN_ERR_IO or short write in a run with injected device failures.
 *   R6 NOSPC only on a full volume: a write that fails with NOSPC while the
 *      files (and the open files' promises, two segments more each) hold less
 *      than 40% of the space the fresh volume offered
 *      (cairn_fs_stat free_bytes after format, less retired blocks) is a
 *      failure, after idle GC and a sync had their chance.
 *   R7 No space leak: at the end of a run every file is removed and the
 *      volume remounted; free_bytes must be back to what the fresh volume
 *      had, less retired blocks, within 2 segments.
 *   R8 Without injected device failures no call returns CAIRN_ERR_IO or
 *      CAIRN_ERR_CORRUPT; with them a call may return IO (the test then
 *      reboots), but mounting and the durable data must survive.
 *   R9 (--falloc) A write inside what cairn_fallocate promised the open
 *      file does not fail with NOSPC (cairn.h), on however full a volume; a
 *      ring promised its capacity takes every append.
 *   R10 (--ro-look) After a cut, a read-only mount (its cache grown while
 *      NOSPC says the replay outgrows it) succeeds and shows exactly what
 *      the recovery mount after it shows, writing nothing.
 *
 * Usage: test_torture [--geo NAME[,NAME...]|all] [--seed S] [--runs N] [--cuts N]
 *                     [--long] [--idle P] [--aged P] [--overwrite P] [--falloc P]
 *                     [--ring P] [--ro-look P] [--vary] [--kinds K,...]
 *                     [--verbose] [--list]
 *                     [--expect-failures] [--scenario double-tear|mount-cuts|anchor-wear]
 *                     [--find-smallest] [--regress [P/N]]
 *   --runs  runs per geometry (seeds S, S+1, ...)
 *   --cuts  cut episodes per run (each places one or more power cuts)
 *   --long  the bigger geometries and counts of `make torture`
 *   --idle  P% of the workload's calls are idle cairn_gc calls
 *   --overwrite  P% of the writes overwrite a page or less inside a file
 *   --falloc  P% of the calls on an open file promise it room (R9), which
 *           it then fills as a data logger
 *   --ring  P% of the files created are ring files (R3 on their windows)
 *   --ro-look  P% of the power-ons first mount read-only (its cache doubled
 *           while the replay outgrows it): that view must equal the
 *           recovered one (R10)
 *   --vary  each run draws data_heads, wear_spread and gc_step_pages
 *   --min-cuts  runs go on (seeds S+N, ...) until the cut points of each
 *           geometry reach this (make torture: 12,000 a geometry)
 *   --kinds episode kinds in use: random, early, brownout, mount, unmount
 *   --expect-failures  known-failures switch: exit 0 only if some run
 *           failed (the core is being fixed); a crash still fails
 *   --scenario  reduced deterministic repros of the failure kinds found
 *   --regress [P/N]  the runs that once failed (entries P, P+N, ... of them)
 * Environment: CAIRN_TORTURE_SEED, CAIRN_TORTURE_RUNS, CAIRN_TORTURE_CUTS,
 * CAIRN_TORTURE_GEO give the same defaults. A failure prints the seed,
 * geometry, the last ops and a command line that reproduces it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "torture_oracle.h"
#include "tsupport.h"

/* ------------------------------------------------------------ geometries */

enum geo_kind { G_MODEL, G_NAND4K, G_SDSMALL, G_NAND_ODD, G_RANDOM };

struct geo_def {
    const char *name;
    enum geo_kind kind;
    const char *model;     /* G_MODEL */
    uint32_t blocks;       /* block_count (0 = the model's) */
    uint32_t blocks_long;  /* with --long */
    uint32_t bpl;          /* blocks_per_lblock (0 = the model's) */
    uint32_t runs, cuts;   /* default runs and cut episodes per run (scaled) */
    uint32_t runs_long, cuts_long;
};

/* The smallest volume cairn_format accepts: 11 segments (4 + the reserve of
 * 4 + 3); with nor-w25q128 and 4 erase blocks a segment (16 KiB, the least
 * that holds 16 nodes of 1 KiB) that is 44 blocks, 176 KiB (found by
 * --find-smallest). */
#define CN_SMALLEST_SEGS 11u
static const struct geo_def geos[] = {
    {"nor-m25p16", G_MODEL, "nor-m25p16", 0, 0, 0, 4, 60, 12, 1000},
    {"nor-w25q128-b4", G_MODEL, "nor-w25q128", 256, 256, 4, 4, 60, 12, 1000},
    {"nor-w25q128-b16", G_MODEL, "nor-w25q128", 512, 1024, 16, 4, 60, 12, 1000},
    {"nand-4k", G_NAND4K, NULL, 16, 64, 1, 2, 30, 8, 400},
    {"nand-jffs2", G_MODEL, "nand-jffs2", 40, 128, 1, 2, 40, 10, 800},
    /* 144 with --long: with 128 blocks it ran the very stream of nand-jffs2
     * (the same geometry but for partial programs, which cairn never makes
     * on NAND: identical counts, cut for cut) */
    {"nand-dhara", G_MODEL, "nand-dhara", 48, 144, 1, 2, 40, 10, 800},
    /* NAND segments (and anchors) of several erase blocks: the session mark
     * into the other anchor's first block, the anchor left behind erased from
     * its top down, the blocks a recovery erases recorded in the checkpoint,
     * the unmount's move into the other anchor (ckpt.c block_anchors) */
    {"nand-dhara-b4", G_MODEL, "nand-dhara", 64, 128, 4, 1, 40, 10, 800},
    {"nand-jffs2-b8", G_MODEL, "nand-jffs2", 128, 256, 8, 1, 40, 10, 800},
    {"sd-tf", G_MODEL, "sd-tf", 12, 16, 1, 1, 15, 4, 200},
    {"sd-small", G_SDSMALL, NULL, 64, 64, 1, 2, 30, 8, 600},
    {"smallest", G_MODEL, "nor-w25q128", 44, 44, 4, 6, 60, 20, 2000},
    /* zero config on a block count no small segment divides (143 = 11 x 13;
     * 361 = 19 x 19 with --long): segments of 2 (3) blocks, the blocks past
     * the last whole one unused, where the rule before session 34 took 11
     * (19) (fs.c pick_bpl) */
    {"nand-odd", G_NAND_ODD, NULL, 143, 361, 0, 2, 40, 10, 800},
    /* a geometry of its own for every run, drawn from the run's seed
     * (random_geometry); only when named: --geo random */
    {"random", G_RANDOM, NULL, 0, 0, 0, 8, 20, 16, 400},
};
#define N_GEOS (sizeof geos / sizeof geos[0])

static int opt_long, opt_verbose;
/* --idle P: P% of the workload's calls are idle cairn_gc calls (0: none, and
 * the operation stream of every seed is what it was without the option). */
static uint32_t opt_idle;
/* --aged P: P% of the runs format over an earlier volume of the same
 * geometry (age_device), whose checkpoints fill both anchors: a format on
 * NOR erases only the first blocks of one anchor (ckpt.c "partial run"),
 * and nothing of the earlier volume may come back. Chosen from the seed alone,
 * so the runs' operation streams are what they were without the option. */
static uint32_t opt_aged;
/* --overwrite P: P% of the writes are overwrites of one page or less inside
 * a file, none past its end: files fragment into one-page extents, which GC
 * pulls along with a victim's runs (gc.c move_data). 0: the operation stream
 * of every seed is what it was without the option. */
static uint32_t opt_overwrite;
/* --falloc P: P% of the workload's calls on an open file are a
 * cairn_fallocate to somewhat past its end; a write that then fails with
 * NOSPC inside the promise (from the file's end at the first call up to the
 * length, no truncate since, no device failures injected) is a failure (R9).
 * 0: the operation stream of every seed is what it was without the option. */
static uint32_t opt_falloc;
/* --ring P: P% of the files created are ring files (cairn_ring_create, 2-31
 * pages), written by appends of every size the workload draws, checked
 * against the oracle's windows. 0: every seed's stream is unchanged. */
static uint32_t opt_ring;
/* --ro-look P: P% of the power-ons first mount read-only and look (R10) */
static uint32_t opt_ro_look;
/* --vary: each run draws the settings a user may choose besides the cache:
 * data heads 1-8, a wear spread of 1-30 (1: static wear levelling moves data
 * all the time), a GC step of 1-256 pages. Off: streams unchanged. */
static int opt_vary;
/* Episode kinds in use (--kinds): random, early, brownout, mount, unmount. */
static unsigned opt_kinds = 0x1F;
static const char *const kind_names[] = {"random", "early", "brownout", "mount", "unmount"};

/* splitmix64: the random geometry depends on the seed alone */
static uint64_t geo_mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t geo_pick(uint64_t *x, const uint32_t *v, uint32_t n)
{
    return v[geo_mix(x) % n];
}

/* A NOR, NAND or BLOCK geometry none of the models has: page sizes, erase
 * blocks, partial-program limits, volume sizes and logical blocks drawn from
 * the seed, with the nearest model's costs. cairn picks its segment size
 * (zero config); a geometry it refuses is a skipped run, printed. */
static csim *random_geometry(uint64_t seed, struct csim_options *opt)
{
    static const uint32_t nor_pages[] = {256, 256, 512, 1024};
    static const uint32_t nor_block[] = {4096, 4096, 32768, 65536, 262144};
    static const uint32_t nand_pages[] = {512, 2048, 2048, 4096};
    static const uint32_t nand_ppb[] = {32, 64, 64, 128};
    static const uint32_t nops[] = {1, 1, 2, 4};
    static const uint32_t bpls[] = {0, 0, 0, 0, 1, 2, 4}; /* 0: cairn picks */
    uint64_t x = seed * 7919u + 17u;
    uint32_t kind = (uint32_t)(geo_mix(&x) % 10u), bpl = geo_pick(&x, bpls, 7), want;
    struct cairn_geometry geo;
    struct csim_cost cost;
    struct csim_ftl ftl;
    memset(&geo, 0, sizeof geo);
    if (kind < 5) { /* NOR: 256 KiB to 8 MiB */
        csim_model_info(kind < 2 ? "nor-m25p16" : "nor-w25q128", NULL, &cost, NULL);
        geo.medium = CAIRN_MEDIUM_NOR;
        geo.page_size = geo_pick(&x, nor_pages, 4);
        geo.pages_per_block = geo_pick(&x, nor_block, 5) / geo.page_size;
        want = (256u << (geo_mix(&x) % 6u)) * 1024u;
        geo.block_count = want / (geo.page_size * geo.pages_per_block);
    } else if (kind < 9) { /* NAND: 16 to 160 erase blocks */
        csim_model_info(kind < 7 ? "nand-jffs2" : "nand-dhara", NULL, &cost, NULL);
        geo.medium = CAIRN_MEDIUM_NAND;
        geo.page_size = geo_pick(&x, nand_pages, 4);
        geo.spare_size = geo.page_size / 32u;
        geo.pages_per_block = geo_pick(&x, nand_ppb, 4);
        geo.max_partial_programs = geo_pick(&x, nops, 4);
        geo.block_count = 16u + (uint32_t)(geo_mix(&x) % 145u);
    } else { /* BLOCK: sd-tf's card in 128-512 KiB erase blocks, 2-4 of its AUs */
        csim_model_info("sd-tf", &geo, &cost, &ftl);
        geo.pages_per_block = 256u << (geo_mix(&x) % 3u);
        geo.block_count = ftl.au_bytes / (geo.page_size * geo.pages_per_block) *
                          (2u + (uint32_t)(geo_mix(&x) % 3u));
        bpl = 0;
    }
    while (bpl > 1u && geo.block_count % bpl != 0)
        bpl /= 2u;
    if (geo.block_count < 8u)
        geo.block_count = 8u;
    geo.blocks_per_lblock = bpl;
    opt->blocks_per_lblock = bpl;
    printf("  random geometry (seed %llu): %s, %u B pages, %u pages/block, %u blocks, "
           "NOP %u, %u blocks a logical block (0: cairn picks)\n",
           (unsigned long long)seed,
           geo.medium == CAIRN_MEDIUM_NOR ? "NOR" : geo.medium == CAIRN_MEDIUM_NAND ? "NAND" : "BLOCK",
           (unsigned)geo.page_size, (unsigned)geo.pages_per_block, (unsigned)geo.block_count,
           (unsigned)geo.max_partial_programs, (unsigned)bpl);
    return csim_new_custom(&geo, &cost, geo.medium == CAIRN_MEDIUM_BLOCK ? &ftl : NULL, opt);
}

static csim *make_sim(const struct geo_def *g, uint64_t seed)
{
    struct csim_options opt;
    csim *sim;
    memset(&opt, 0, sizeof opt);
    opt.seed = seed;
    opt.block_count = opt_long ? g->blocks_long : g->blocks;
    opt.blocks_per_lblock = g->bpl;
    if (g->kind == G_MODEL) {
        sim = csim_new(g->model, &opt);
    } else if (g->kind == G_RANDOM) {
        sim = random_geometry(seed, &opt);
    } else {
        struct cairn_geometry geo;
        struct csim_cost cost;
        struct csim_ftl ftl;
        memset(&geo, 0, sizeof geo);
        if (g->kind == G_NAND4K) {
            csim_model_info("nand-dhara", NULL, &cost, NULL);
            geo.page_size = 4096;
            geo.spare_size = 128;
            geo.pages_per_block = 64;
            geo.block_count = 256;
            geo.medium = CAIRN_MEDIUM_NAND;
            geo.max_partial_programs = 1;
            geo.blocks_per_lblock = 1;
            sim = csim_new_custom(&geo, &cost, NULL, &opt);
        } else if (g->kind == G_NAND_ODD) { /* small pages, 32 KiB blocks */
            csim_model_info("nand-dhara", NULL, &cost, NULL);
            geo.page_size = 512;
            geo.spare_size = 16;
            geo.pages_per_block = 64;
            geo.block_count = opt.block_count;
            geo.medium = CAIRN_MEDIUM_NAND;
            geo.max_partial_programs = 1;
            geo.blocks_per_lblock = 0;
            sim = csim_new_custom(&geo, &cost, NULL, &opt);
        } else { /* sd-tf's card and costs, 256 KiB erase blocks */
            csim_model_info("sd-tf", &geo, &cost, &ftl);
            geo.pages_per_block = 512;
            geo.block_count = 64;
            geo.blocks_per_lblock = 1;
            sim = csim_new_custom(&geo, &cost, &ftl, &opt);
        }
    }
    if (!sim)
        t_fatal("%s: csim: %s", g->name, csim_error());
    return sim;
}

/* ----------------------------------------------------------- statistics */

struct stats {
    uint64_t runs, failed_runs, cuts, cuts_prefix, cuts_random, cuts_empty, cuts_none, pulls, remounts,
        mount_cuts, brownouts, early_cuts, io_reboots, nospc, injected, leak_checks,
        format_refused, promises, promised_writes, rings, ring_writes, ring_wraps, ro_looks,
        ro_slots_max;
};

/* ------------------------------------------------------------------ runs */

#define MAX_HANDLES 3
#define LOG_N 32
#define LOG_LEN 200

struct hnd {
    int fd;
    uint32_t obj;
    int append, writable;
    char path[TO_PATH_MAX];
    int32_t promise_from, promise_to; /* R9: a cairn_fallocate promise, 0 none */
    int32_t held_to; /* R6: the longest promise of its file while a handle of it
                        stays open (cairn holds it to the last close), 0 none */
    uint32_t logger; /* calls left in which it appends small records (--falloc) */
};

struct run {
    const struct geo_def *geo;
    uint64_t seed, rng;
    uint32_t cuts_planned, episode;
    csim *sim;
    cairn *fs;
    struct cairn_config cfg;
    void *mem;
    int mounted;
    struct to_oracle o;
    struct hnd h[MAX_HANDLES];
    uint32_t nh;
    int32_t ps;
    uint32_t seg_bytes;
    uint64_t capacity; /* free_bytes of the fresh volume */
    uint64_t room;     /* what the workload fills: capacity, or measured if fs_stat says 0 */
    uint32_t bad_at_format;
    uint32_t fill_pct;  /* data the workload aims at, percent of capacity */
    uint32_t churn;     /* ops left in delete-heavy mode after NOSPC */
    int failures;       /* program/erase failures injected in this run */
    uint32_t fail_budget;
    uint32_t mount_ops_max;
    uint64_t opno;
    char log[LOG_N][LOG_LEN];
    uint64_t nlog;
    struct stats *st;
    int failed;
    uint8_t *wbuf;
    int32_t wmax;
    int armed_tear;
    int growing; /* the files hold less than the run aims at: keep them */
    uint32_t io_streak; /* IO reboots since the last write that worked */
};

static uint32_t rnd(struct run *r, uint32_t n) { return t_randn(&r->rng, n); }
static int chance(struct run *r, uint32_t pct) { return rnd(r, 100) < pct; }

static void logf_(struct run *r, const char *fmt, ...) TC_FMT(2, 3);
static void logf_(struct run *r, const char *fmt, ...)
{
    char *line = r->log[r->nlog % LOG_N];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, LOG_LEN, fmt, ap);
    va_end(ap);
    r->nlog++;
    if (opt_verbose)
        printf("    [%llu] %s\n", (unsigned long long)r->nlog, line);
}

enum { OUT_OK = 0, OUT_DOWN = 1, OUT_FAIL = 2, OUT_SKIP = 3 };

static int fail(struct run *r, const char *kind, const char *fmt, ...) TC_FMT(3, 4);
static int fail(struct run *r, const char *kind, const char *fmt, ...)
{
    va_list ap;
    uint64_t i;
    if (r->failed)
        return OUT_FAIL;
    r->failed = 1;
    printf("FAIL [%s seed %llu episode %u] %s: ", r->geo->name, (unsigned long long)r->seed,
           r->episode, kind);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n  last ops (oldest first):\n");
    i = r->nlog > LOG_N ? r->nlog - LOG_N : 0;
    for (; i < r->nlog; i++)
        printf("    %s\n", r->log[i % LOG_N]);
    printf("  reproduce: test_torture --geo %s --seed %llu --runs 1 --cuts %u%s",
           r->geo->name, (unsigned long long)r->seed,
           r->episode < r->cuts_planned ? r->episode + 1 : r->cuts_planned,
           opt_long ? " --long" : "");
    if (opt_idle)
        printf(" --idle %u", (unsigned)opt_idle);
    if (opt_aged)
        printf(" --aged %u", (unsigned)opt_aged);
    if (opt_overwrite)
        printf(" --overwrite %u", (unsigned)opt_overwrite);
    if (opt_falloc)
        printf(" --falloc %u", (unsigned)opt_falloc);
    if (opt_ring)
        printf(" --ring %u", (unsigned)opt_ring);
    if (opt_ro_look)
        printf(" --ro-look %u", (unsigned)opt_ro_look);
    if (opt_vary)
        printf(" --vary");
    if (opt_kinds != 0x1F) {
        const char *sep = " --kinds ";
        for (i = 0; i < 5; i++)
            if (opt_kinds >> i & 1u) {
                printf("%s%s", sep, kind_names[i]);
                sep = ",";
            }
    }
    printf("\n");
    fflush(stdout);
    return OUT_FAIL;
}

static const char *tear_name(int t)
{
    return t == CSIM_TEAR_PREFIX   ? "prefix"
           : t == CSIM_TEAR_RANDOM ? "random"
           : t == CSIM_TEAR_EMPTY  ? "empty"
                                   : "none";
}

static uint64_t ops_now(struct run *r)
{
    struct csim_counters c;
    csim_counters(r->sim, &c);
    return c.mutating_ops;
}


/* ---------------------------------------------------------- cut scheduler
 * (the pieces that place cuts; the episodes that use them are further down) */

/* Arms a cut `ahead` mutating ops from now, with a random tear. One in 20
 * stores nothing yet counts as a program on NAND (CSIM_TEAR_EMPTY: what
 * PREFIX gives only 1 time in 2,112; taken from NONE's share, so a seed's
 * PREFIX and RANDOM cuts stay what they were). */
static void arm_cut(struct run *r, uint64_t ahead, const char *why)
{
    uint32_t u = rnd(r, 100);
    uint64_t at = ops_now(r) + ahead;
    r->armed_tear = u < 45   ? CSIM_TEAR_PREFIX
                    : u < 90 ? CSIM_TEAR_RANDOM
                    : u < 95 ? CSIM_TEAR_EMPTY
                             : CSIM_TEAR_NONE;
    csim_cut_at(r->sim, at, (enum csim_tear)r->armed_tear);
    logf_(r, "arm cut (%s) at op %llu (+%llu), tear %s", why, (unsigned long long)at,
          (unsigned long long)ahead, tear_name(r->armed_tear));
}

static void count_cut(struct run *r)
{
    r->st->cuts++;
    if (r->armed_tear == CSIM_TEAR_PREFIX)
        r->st->cuts_prefix++;
    else if (r->armed_tear == CSIM_TEAR_RANDOM)
        r->st->cuts_random++;
    else if (r->armed_tear == CSIM_TEAR_EMPTY)
        r->st->cuts_empty++;
    else
        r->st->cuts_none++;
}

/* A distance to the next cut: mostly near, sometimes far. */
static uint64_t cut_distance(struct run *r)
{
    static const uint32_t scale[] = {4, 16, 64, 256, 1024, 4096};
    return rnd(r, scale[rnd(r, 6)]);
}

/* ------------------------------------------------------------ inspection */

struct walk_ctx {
    struct to_view *v;
};

static int walk_fn(void *arg, const char *path, const struct cairn_info *info)
{
    struct walk_ctx *w = (struct walk_ctx *)arg;
    struct to_seen *x;
    if (w->v->n >= sizeof w->v->e / sizeof w->v->e[0] || strlen(path) >= TO_PATH_MAX) {
        w->v->overflow = 1;
        return 0;
    }
    x = &w->v->e[w->v->n++];
    memset(x, 0, sizeof *x);
    strcpy(x->path, path);
    x->type = info->type == CAIRN_TYPE_DIR ? TO_DIR : TO_FILE;
    x->size = info->size;
    return 0;
}

/* The capacity of the file at path (of size bytes) if it is a ring, 0 if
 * it is plain; negative: an error. A ring also refuses a seek past its end
 * (it has no holes), a plain file takes it: both are checked. */
static int32_t ring_capacity_of(struct run *r, const char *path, int32_t size)
{
    int fd = cairn_open(r->fs, path, CAIRN_O_RDONLY), rc;
    int32_t at, cap;
    if (fd < 0)
        return fd;
    cap = cairn_ring_capacity(r->fs, fd);
    at = cairn_seek(r->fs, fd, size + 1, CAIRN_SEEK_SET);
    rc = cairn_close(r->fs, fd);
    if (rc)
        return rc;
    if (cap < 0)
        return cap;
    return (cap > 0 ? at == CAIRN_ERR_INVAL : at == size + 1) ? cap : CAIRN_ERR_CORRUPT;
}

/* Reads the whole tree and every file. 0, or an error (described). */
static int gather(struct run *r, struct to_view *v, char *why, size_t len)
{
    struct walk_ctx w;
    uint32_t i;
    int rc;
    memset(v, 0, sizeof *v);
    w.v = v;
    rc = t_walk(r->fs, "/", walk_fn, &w);
    if (rc) {
        snprintf(why, len, "listing the tree: %d %s", rc, t_errname(rc));
        return rc;
    }
    for (i = 0; i < v->n; i++) {
        int32_t n;
        if (v->e[i].type != TO_FILE)
            continue;
        rc = t_read_file(r->fs, v->e[i].path, &v->e[i].data, &n);
        if (rc) {
            snprintf(why, len, "reading %s: %d %s", v->e[i].path, rc, t_errname(rc));
            return rc;
        }
        if (n != v->e[i].size) {
            snprintf(why, len, "%s: readdir size %ld, read %ld bytes", v->e[i].path,
                     (long)v->e[i].size, (long)n);
            return CAIRN_ERR_CORRUPT;
        }
        v->e[i].ring_cap = ring_capacity_of(r, v->e[i].path, n);
        if (v->e[i].ring_cap < 0) {
            rc = (int)v->e[i].ring_cap;
            snprintf(why, len, "telling whether %s is a ring: %d %s", v->e[i].path, rc,
                     t_errname(rc));
            return rc;
        }
    }
    return 0;
}

static void check_problem(void *arg, const char *problem)
{
    struct run *r = (struct run *)arg;
    printf("    cairn_check: %s\n", problem);
    (void)r;
}

/* R1 (check, violations) for the mounted volume. */
static int check_volume(struct run *r, const char *when)
{
    struct cairn_check_report rep;
    struct csim_counters c;
    int rc;
    memset(&rep, 0, sizeof rep);
    rc = cairn_check(r->fs, &rep, check_problem, r);
    if (rc != 0)
        return fail(r, "check", "cairn_check %s: %d %s, %u errors", when, rc, t_errname(rc),
                    (unsigned)rep.errors);
    csim_counters(r->sim, &c);
    if (c.violations)
        return fail(r, "violation", "%s: the simulator saw %llu rule violations, the last: %s",
                    when, (unsigned long long)c.violations, csim_last_violation(r->sim));
    return OUT_OK;
}

/* After a power-on and a mount: R2, R3, R4 (through the oracle) and R1. */
static int verify_recovered(struct run *r)
{
    static char why[16384];
    struct to_view *v = (struct to_view *)calloc(1, sizeof *v);
    int rc;
    if (!v)
        t_fatal("out of memory");
    rc = gather(r, v, why, sizeof why);
    if (rc) {
        to_view_free(v);
        free(v);
        return fail(r, "read-after-mount", "%s", why);
    }
    rc = to_check_recovered(&r->o, v, why, sizeof why);
    to_view_free(v);
    free(v);
    if (rc)
        return fail(r, "durability", "the recovered volume is no state the rules allow\n%s",
                    why);
    logf_(r, "verified after mount: %u entries, %llu data bytes", (unsigned)to_ns(&r->o)->n,
          (unsigned long long)to_data_bytes(&r->o, 0));
    return check_volume(r, "after mount");
}

/* In a session: the volume equals the oracle's current state (R5 too). */
static int verify_live(struct run *r)
{
    static char why[16384];
    struct to_view *v = (struct to_view *)calloc(1, sizeof *v);
    int rc;
    if (!v)
        t_fatal("out of memory");
    rc = gather(r, v, why, sizeof why);
    if (rc == CAIRN_ERR_IO && r->failures) {
        to_view_free(v);
        free(v);
        return OUT_DOWN;
    }
    if (rc) {
        to_view_free(v);
        free(v);
        return fail(r, "read", "%s", why);
    }
    rc = to_check_live(&r->o, v, why, sizeof why);
    to_view_free(v);
    free(v);
    if (rc)
        return fail(r, "live-state", "the volume differs from what the calls did\n%s", why);
    return OUT_OK;
}

/* ----------------------------------------------------------- the mount */

static int do_mount(struct run *r) { return cairn_mount(r->fs, &r->cfg); }

/* R10 (--ro-look): after a cut, a read-only mount shows what the recovery
 * mount will (it replays the journal in RAM and writes nothing). Its cache
 * starts at the run's and doubles while the replay outgrows it (NOSPC: the
 * nodes the records change stay in the cache); any other refusal, but an
 * injected I/O failure, fails the run. Fills v; OUT_DOWN when there is
 * nothing to compare (an injected failure). */
static int read_only_look(struct run *r, struct to_view *v)
{
    static char why[16384];
    struct cairn_config cfg = r->cfg;
    uint32_t slots = cfg.cache_nodes ? cfg.cache_nodes : 16u;
    uint64_t ops = ops_now(r);
    int rc;
    cfg.read_only = 1;
    cfg.mem = NULL; /* (the core's own, sized for each try) */
    cfg.mem_size = 0;
    for (;;) {
        cfg.cache_nodes = slots;
        rc = cairn_mount(r->fs, &cfg);
        if (rc != CAIRN_ERR_NOSPC || slots >= 16384u)
            break;
        slots *= 2u;
    }
    if (rc == CAIRN_ERR_IO && r->failures)
        return OUT_DOWN;
    if (rc)
        return fail(r, "read-only mount", "a read-only mount after a power cut, %u cache "
                    "slots: %d %s", (unsigned)slots, rc, t_errname(rc));
    r->st->ro_looks++;
    if (slots > r->st->ro_slots_max)
        r->st->ro_slots_max = slots;
    rc = gather(r, v, why, sizeof why);
    if (rc && !(rc == CAIRN_ERR_IO && r->failures))
        return fail(r, "read-only read", "%s", why);
    if (cairn_unmount(r->fs) != 0 && !r->failures)
        return fail(r, "read-only mount", "its unmount failed");
    if (ops_now(r) != ops)
        return fail(r, "read-only mount", "it programmed or erased %llu times",
                    (unsigned long long)(ops_now(r) - ops));
    return rc ? OUT_DOWN : OUT_OK;
}

/* R10: the recovered volume shows what the read-only mount before it did. */
static int same_as_read_only(struct run *r, const struct to_view *ro)
{
    static char why[16384];
    struct to_view *v = (struct to_view *)calloc(1, sizeof *v);
    uint32_t i;
    int rc, same;
    if (!v)
        t_fatal("out of memory");
    rc = gather(r, v, why, sizeof why);
    same = rc == 0 && v->n == ro->n && !v->overflow && !ro->overflow;
    for (i = 0; same && i < v->n; i++) {
        const struct to_seen *a = &v->e[i], *b = &ro->e[i];
        same = strcmp(a->path, b->path) == 0 && a->type == b->type && a->size == b->size &&
               (a->type != TO_FILE || a->size == 0 || memcmp(a->data, b->data, (size_t)a->size) == 0);
        if (!same)
            snprintf(why, sizeof why, "first difference at entry %u: %s (%ld B) read-only, %s "
                     "(%ld B) recovered", (unsigned)i, b->path, (long)b->size, a->path,
                     (long)a->size);
    }
    if (rc == 0 && i == v->n && !same)
        snprintf(why, sizeof why, "%u entries read-only, %u recovered", (unsigned)ro->n,
                 (unsigned)v->n);
    to_view_free(v);
    free(v);
    if (rc == CAIRN_ERR_IO && r->failures)
        return OUT_OK;
    return same ? OUT_OK : fail(r, "read-only view", "%s", why);
}

static int power_cycle_mount(struct run *r, uint32_t cuts_in_mount);

/* Power on and mount, with `cuts_in_mount` cuts placed inside the mount
 * first (each interrupted mount is retried); then verify. With --ro-look
 * (R10) a read-only mount looks first. */
static int power_cycle(struct run *r, uint32_t cuts_in_mount)
{
    struct to_view *ro = NULL;
    int rc = 0;
    r->mounted = 0;
    r->nh = 0;
    if (opt_ro_look && rnd(r, 100) < opt_ro_look) {
        ro = (struct to_view *)calloc(1, sizeof *ro);
        if (!ro)
            t_fatal("out of memory");
        csim_power_on(r->sim);
        rc = read_only_look(r, ro);
        if (rc != OUT_OK) {
            to_view_free(ro);
            free(ro);
            ro = NULL;
            if (rc != OUT_DOWN)
                return rc;
        }
    }
    rc = power_cycle_mount(r, cuts_in_mount);
    if (rc == OUT_OK && ro)
        rc = same_as_read_only(r, ro);
    if (ro) {
        to_view_free(ro);
        free(ro);
    }
    return rc;
}

static int power_cycle_mount(struct run *r, uint32_t cuts_in_mount)
{
    uint32_t attempt, io_retries = 0;
    int rc = 0;
    for (attempt = 0; attempt < 16; attempt++) {
        csim_power_on(r->sim);
        if (attempt < cuts_in_mount)
            arm_cut(r, rnd(r, r->mount_ops_max + 4), "inside the recovery mount");
        rc = do_mount(r);
        if (!csim_powered(r->sim)) {
            count_cut(r);
            r->st->mount_cuts++;
            logf_(r, "power cut inside mount (mount returned %d %s)", rc, t_errname(rc));
            if (rc == 0)
                return fail(r, "mount", "cairn_mount returned 0 although the device lost power "
                                        "during it");
            continue;
        }
        csim_cut_cancel(r->sim);
        logf_(r, "mount -> %d %s (%llu mutating ops)", rc, t_errname(rc),
              (unsigned long long)ops_now(r));
        if (rc == CAIRN_ERR_IO && r->failures && io_retries++ < 3)
            continue; /* a failure injected into the mount: once more */
        if (rc != 0 && rc != CAIRN_ERR_IO && io_retries++ < 2)
            continue; /* a mount that fails must keep failing: shown in the log */
        break;
    }
    if (rc != 0)
        return fail(r, "mount", "cairn_mount after a power cut: %d %s", rc, t_errname(rc));
    if (ops_now(r) > r->mount_ops_max)
        r->mount_ops_max = (uint32_t)ops_now(r);
    r->mounted = 1;
    r->st->remounts++;
    return verify_recovered(r);
}

/* Forget the mount (power is gone, or the test pulls the plug). */
static void abandon(struct run *r)
{
    r->mounted = 0;
    r->nh = 0;
}

/* ------------------------------------------------------- call outcomes */

/* After a call that may write: power gone, an IO error (device failure),
 * or corruption? */
static int outcome(struct run *r, long rc, const char *what)
{
    if (!csim_powered(r->sim)) {
        count_cut(r);
        logf_(r, "power cut during %s (returned %ld %s)", what, rc, t_errname(rc));
        return OUT_DOWN;
    }
    if (rc == CAIRN_ERR_IO && r->failures) {
        r->st->io_reboots++;
        logf_(r, "%s: CAIRN_ERR_IO with device failures injected: reboot", what);
        if (++r->io_streak >= 25) /* R8: the volume must work again */
            return fail(r, "io-forever", "%u reboots in a row for CAIRN_ERR_IO without a "
                                         "write that worked in between",
                        (unsigned)r->io_streak);
        return OUT_DOWN;
    }
    if (rc == CAIRN_ERR_IO || rc == CAIRN_ERR_CORRUPT)
        return fail(r, "error", "%s returned %ld %s (no device failure injected)", what, rc,
                    t_errname(rc));
    return OUT_OK;
}

/* -------------------------------------------------------- the workload */

static const char *const dir_paths[] = {"/d0", "/d1", "/d2", "/d0/e"};
#define N_DIRS 4
static const char *const parents[] = {"", "/d0", "/d1", "/d2", "/d0/e"};
#define N_PARENTS 5
#define N_NAMES 5
#define MAX_FILES 10

static int exists(struct run *r, const char *path, uint8_t type)
{
    const struct to_entry *e = to_lookup(&r->o, path);
    return e && e->type == type;
}

static int parent_exists(struct run *r, const char *path)
{
    char p[TO_PATH_MAX];
    char *slash;
    strcpy(p, path);
    slash = strrchr(p, '/');
    if (!slash || slash == p)
        return 1;
    *slash = '\0';
    return exists(r, p, TO_DIR);
}

static uint32_t file_count(struct run *r)
{
    const struct to_snap *s = to_ns(&r->o);
    uint32_t i, n = 0;
    for (i = 0; i < s->n; i++)
        n += s->e[i].type == TO_FILE;
    return n;
}

static int handle_of_obj(struct run *r, uint32_t obj)
{
    uint32_t i;
    for (i = 0; i < r->nh; i++)
        if (r->h[i].obj == obj)
            return (int)i;
    return -1;
}

/* A random existing file that is (open = 0) closed, (1) open, (2) either. */
static const struct to_entry *pick_file(struct run *r, int open)
{
    const struct to_snap *s = to_ns(&r->o);
    uint32_t i, n = 0, k;
    const struct to_entry *pick[TO_MAX_ENTRIES];
    for (i = 0; i < s->n; i++) {
        int is_open;
        if (s->e[i].type != TO_FILE)
            continue;
        is_open = handle_of_obj(r, s->e[i].obj) >= 0;
        if (open == 2 || is_open == open)
            pick[n++] = &s->e[i];
    }
    if (!n)
        return NULL;
    k = rnd(r, n);
    return pick[k];
}

static void random_file_path(struct run *r, char *out)
{
    /* one draw per statement: the order of a call's arguments is unspecified,
     * and armhf and s390x took another path than x86-64 from the same seed */
    uint32_t parent = rnd(r, N_PARENTS);
    uint32_t name = rnd(r, N_NAMES);
    snprintf(out, TO_PATH_MAX, "%s/f%u", parents[parent], (unsigned)name);
}

/* Bytes the open files' promises hold beyond their sizes, at most: the
 * pages promised and two segments each (cairn.h: a promise takes two
 * segments more until the last close). On the smallest volume a segment is a
 * third of what the fresh volume offers: R6 refused a ring_create at "20%"
 * full with two thirds of the volume promised (seed 3105, --falloc 20). */
static uint64_t promised_bytes(const struct run *r)
{
    uint64_t n = 0;
    uint32_t k, j;
    for (k = 0; k < r->nh; k++) {
        int32_t size = r->o.objs[r->h[k].obj].cur_size;
        for (j = 0; j < k && r->h[j].obj != r->h[k].obj; j++)
            ;
        if (j < k || r->h[k].held_to <= 0)
            continue; /* its file is counted once */
        n += (uint64_t)(r->h[k].held_to > size ? r->h[k].held_to - size : 0) +
             (uint64_t)r->ps + 2u * r->seg_bytes;
    }
    return n;
}

/* Something failed with NOSPC: R6 unless the volume is really full. */
static int nospc(struct run *r, const char *what)
{
    uint64_t data = to_data_bytes(&r->o, 1) + promised_bytes(r);
    struct cairn_fsinfo fi;
    uint64_t cap = r->capacity;
    r->st->nospc++;
    r->churn = 10 + rnd(r, 30);
    logf_(r, "%s: NOSPC (files and promises hold %llu bytes, %llu%% of %llu)", what,
          (unsigned long long)data, (unsigned long long)(cap ? data * 100 / cap : 0),
          (unsigned long long)cap);
    if (cairn_fs_stat(r->fs, &fi) == 0 && fi.bad_blocks > r->bad_at_format) {
        uint64_t lost = (uint64_t)(fi.bad_blocks - r->bad_at_format) * r->seg_bytes;
        cap = cap > lost ? cap - lost : 0;
    }
    if (data * 100 < cap * 40) {
        int32_t moved = 0, k;
        for (k = 0; k < 20; k++) {
            moved = cairn_gc(r->fs, 1u << 20);
            if (!csim_powered(r->sim) || moved <= 0)
                break;
        }
        if (!csim_powered(r->sim)) {
            count_cut(r);
            return OUT_DOWN;
        }
        return fail(r, "nospc", "%s: NOSPC with files and promises holding %llu bytes, %llu%% of the "
                                "%llu the fresh volume offered (idle GC last returned %ld; "
                                "fs_stat free %llu used %llu total %llu)",
                    what, (unsigned long long)data,
                    (unsigned long long)(cap ? data * 100 / cap : 0), (unsigned long long)cap,
                    (long)moved, (unsigned long long)fi.free_bytes,
                    (unsigned long long)fi.used_bytes, (unsigned long long)fi.total_bytes);
    }
    return OUT_OK;
}

/* R9: is a write of len bytes at off inside a promise held for h's file? */
static int promised(struct run *r, const struct hnd *h, int32_t off, int32_t len)
{
    uint32_t k;
    if (r->failures)
        return 0; /* a retired block may take what was promised */
    for (k = 0; k < r->nh; k++)
        if (r->h[k].obj == h->obj && r->h[k].promise_to > 0 && off >= r->h[k].promise_from &&
            (int64_t)off + len <= r->h[k].promise_to)
            return 1;
    return 0;
}

/* A promise ends for every handle of the file (truncate, a close). */
static void promise_end(struct run *r, uint32_t obj)
{
    uint32_t k;
    for (k = 0; k < r->nh; k++)
        if (r->h[k].obj == obj)
            r->h[k].promise_to = 0;
}

static int ns_call_done(struct run *r, int rc, const char *what);
static int stat_matches(struct run *r, const char *path);

static int is_ring(const struct run *r, uint32_t obj) { return r->o.objs[obj].ring_cap > 0; }

static uint32_t ring_count(struct run *r)
{
    const struct to_snap *s = to_ns(&r->o);
    uint32_t i, n = 0;
    for (i = 0; i < s->n; i++)
        n += s->e[i].type == TO_FILE && is_ring(r, s->e[i].obj);
    return n;
}

/* A ring file of 2-31 pages at path (a namespace call; not opened). */
static int op_ring_create(struct run *r, const char *path)
{
    int32_t cap = r->ps * (int32_t)(2 + rnd(r, 30));
    int rc, out;
    to_snap_add(to_ns_push(&r->o), path, to_new_ring(&r->o, cap), TO_FILE);
    rc = cairn_ring_create(r->fs, path, cap);
    logf_(r, "ring_create %s %ld -> %d %s", path, (long)cap, rc, t_errname(rc));
    out = ns_call_done(r, rc, "ring_create");
    r->st->rings += rc == 0;
    return out == OUT_OK && rc ? stat_matches(r, path) : out;
}

static int op_open(struct run *r)
{
    char path[TO_PATH_MAX];
    const struct to_entry *e;
    struct hnd *h;
    int flags, fd, created = 0, trunc = 0, out;
    uint32_t obj;
    if (r->nh >= MAX_HANDLES)
        return OUT_OK;
    e = chance(r, 60) ? pick_file(r, 0) : NULL;
    if (e) {
        strcpy(path, e->path);
        obj = e->obj;
        flags = CAIRN_O_RDWR;
        if (chance(r, r->growing ? 1 : 10))
            flags |= CAIRN_O_TRUNC;
        else if (chance(r, 15))
            flags |= CAIRN_O_APPEND;
        if (is_ring(r, obj))
            flags &= ~CAIRN_O_TRUNC; /* rings are not truncated here (oracle) */
    } else {
        if (file_count(r) >= MAX_FILES)
            return OUT_OK;
        random_file_path(r, path);
        if (to_lookup(&r->o, path) || !parent_exists(r, path))
            return OUT_OK;
        flags = (chance(r, 50) ? CAIRN_O_WRONLY : CAIRN_O_RDWR) | CAIRN_O_CREAT;
        if (chance(r, 50))
            flags |= CAIRN_O_EXCL;
        if (opt_ring && chance(r, opt_ring) && ring_count(r) < 3)
            return op_ring_create(r, path); /* at most 3: the others fill the volume */
        obj = to_new_obj(&r->o, TO_FILE);
        to_snap_add(to_ns_push(&r->o), path, obj, TO_FILE);
        created = 1;
    }
    if ((flags & CAIRN_O_TRUNC) && r->o.objs[obj].cur_size > 0) {
        to_size_begin(&r->o, obj, 0);
        trunc = 1;
    }
    if (flags & CAIRN_O_TRUNC)
        promise_end(r, obj);
    fd = cairn_open(r->fs, path, flags);
    logf_(r, "open %s flags 0x%x -> %d %s", path, (unsigned)flags, fd, fd < 0 ? t_errname(fd) : "");
    out = outcome(r, fd, "open");
    if (out != OUT_OK)
        return out;
    if (fd < 0) {
        if (trunc)
            to_step_done(&r->o, obj, 0);
        if (created)
            to_ns_pop(&r->o);
        if (fd == CAIRN_ERR_NOSPC)
            return nospc(r, "open");
        return fail(r, "error", "open %s flags 0x%x: %d %s", path, (unsigned)flags, fd,
                    t_errname(fd));
    }
    if (trunc)
        to_step_done(&r->o, obj, 1);
    h = &r->h[r->nh++];
    memset(h, 0, sizeof *h);
    h->fd = fd;
    h->obj = obj;
    h->append = (flags & CAIRN_O_APPEND) != 0;
    h->writable = 1;
    strcpy(h->path, path);
    return OUT_OK;
}

static int32_t write_len(struct run *r, int grow)
{
    uint32_t u = rnd(r, 100);
    int32_t ps = r->ps, n;
    if (u < 10)
        n = 1 + (int32_t)rnd(r, 32);
    else if (u < 25)
        n = 256;
    else if (u < 35)
        n = ps;
    else if (u < 60)
        n = 1 + (int32_t)rnd(r, (uint32_t)(3 * ps));
    else if (u < 90 || !grow) {
        n = (2 + (int32_t)rnd(r, 15)) * ps;
        if (chance(r, 50)) /* (a draw per statement: see random_file_path) */
            n += (int32_t)rnd(r, (uint32_t)ps);
    }
    else
        n = r->wmax / 2 + (int32_t)rnd(r, (uint32_t)(r->wmax / 2));
    return n > r->wmax ? r->wmax : n;
}

/* A ring promised its capacity takes every append however full the volume
 * gets (cairn.h), also when it was full at the call, opened again after a
 * cut (session 28: such a promise held nothing). Its appends land anywhere
 * below the capacity: the promise covers every offset. */
static int ring_falloc(struct run *r, struct hnd *h)
{
    int32_t cap = r->o.objs[h->obj].ring_cap;
    int rc = cairn_fallocate(r->fs, h->fd, cap), out;
    uint32_t k;
    logf_(r, "fallocate ring %s %ld (size %ld) -> %d %s", h->path, (long)cap,
          (long)r->o.objs[h->obj].cur_size, rc, t_errname(rc));
    out = outcome(r, rc, "fallocate");
    if (out != OUT_OK)
        return out;
    if (rc != 0 && rc != CAIRN_ERR_NOSPC)
        return fail(r, "error", "fallocate ring %s: %d %s", h->path, rc, t_errname(rc));
    if (rc != 0)
        return OUT_OK;
    r->st->promises++;
    for (k = 0; k < r->nh; k++)
        if (r->h[k].obj == h->obj) {
            r->h[k].promise_from = 0;
            r->h[k].promise_to = INT32_MAX;
            r->h[k].held_to = cap;
        }
    return OUT_OK;
}

static int op_falloc(struct run *r, struct hnd *h)
{
    int32_t size = r->o.objs[h->obj].cur_size, len;
    int rc, out;
    if (is_ring(r, h->obj)) /* (no draw: the stream of a seed is as before) */
        return ring_falloc(r, h);
    len = size + 1 + (int32_t)rnd(r, (uint32_t)(16 * r->ps));
    rc = cairn_fallocate(r->fs, h->fd, len);
    logf_(r, "fallocate %s %ld (size %ld) -> %d %s", h->path, (long)len, (long)size, rc,
          t_errname(rc));
    out = outcome(r, rc, "fallocate");
    if (out != OUT_OK)
        return out;
    if (rc != 0 && rc != CAIRN_ERR_NOSPC)
        return fail(r, "error", "fallocate %s: %d %s", h->path, rc, t_errname(rc));
    if (cairn_size(r->fs, h->fd) != size)
        return fail(r, "size", "fallocate %s (returned %d) changed the size: %ld, expected %ld",
                    h->path, rc, (long)cairn_size(r->fs, h->fd), (long)size);
    if (rc == 0) {
        uint32_t k;
        int32_t from = size;
        r->st->promises++;
        for (k = 0; k < r->nh; k++) /* a promise held goes on from where it began */
            if (r->h[k].obj == h->obj && r->h[k].promise_to > 0)
                from = r->h[k].promise_from;
        if (h->promise_to == 0 || len > h->promise_to) {
            h->promise_from = from;
            h->promise_to = len;
        }
        for (k = 0; k < r->nh; k++)
            if (r->h[k].obj == h->obj && r->h[k].held_to < len)
                r->h[k].held_to = len;
        h->logger = 20 + rnd(r, 100); /* a data logger in the room it reserved */
    }
    return OUT_OK;
}

static int write_at(struct run *r, struct hnd *h, int32_t off, int32_t len);

static int op_write(struct run *r, struct hnd *h, int grow)
{
    int32_t size = r->o.objs[h->obj].cur_size, off, len = write_len(r, grow);
    int32_t max_size = (int32_t)(r->room / 4 > 0x7FFFFFF ? 0x7FFFFFF : r->room / 4);
    uint32_t u = rnd(r, 100);
    if (opt_overwrite && !h->append && size > 0 && rnd(r, 100) < opt_overwrite) {
        len = chance(r, 70) ? r->ps : 1 + (int32_t)rnd(r, (uint32_t)r->ps);
        len = len > size ? size : len;
        off = (int32_t)rnd(r, (uint32_t)(size - len + 1));
        if (chance(r, 70))
            off -= off % r->ps; /* page-aligned mostly: one page replaced whole */
    } else if (h->append || grow == 2 || (grow && u < 70) || u < 50)
        off = size;
    else if (u < 90 || !grow)
        off = size ? (int32_t)rnd(r, (uint32_t)size) : 0;
    else
        off = size + (int32_t)rnd(r, (uint32_t)(3 * r->ps));
    if (off + len > max_size) {
        if (h->append || size >= max_size)
            return OUT_OK;
        off = (int32_t)rnd(r, (uint32_t)(max_size - len > 0 ? max_size - len : 1));
    }
    return write_at(r, h, off, len);
}

/* A write of len bytes at off through h, checked: the oracle's content,
 * the size after it, R5 (a failed write changes nothing), R9. */
static int write_at(struct run *r, struct hnd *h, int32_t off, int32_t len)
{
    struct to_obj *b;
    int32_t n;
    int out;
    t_pattern(r->wbuf, (size_t)len, t_rand(&r->rng));
    if (is_ring(r, h->obj)) { /* appends wherever the handle is */
        off = r->o.objs[h->obj].cur_size;
        r->st->ring_writes++;
        r->st->ring_wraps += (int64_t)off + len > r->o.objs[h->obj].ring_cap;
        to_ring_begin(&r->o, h->obj, r->wbuf, len);
    } else {
        if (!h->append && cairn_seek(r->fs, h->fd, off, CAIRN_SEEK_SET) != off)
            return fail(r, "error", "seek %s to %ld failed", h->path, (long)off);
        to_write_begin(&r->o, h->obj, off, r->wbuf, len);
    }
    n = cairn_write(r->fs, h->fd, r->wbuf, len);
    logf_(r, "write %s off %ld len %ld -> %ld %s", h->path, (long)off, (long)len, (long)n,
          n < 0 ? t_errname(n) : "");
    out = outcome(r, n, "write");
    if (out != OUT_OK)
        return out;
    if (promised(r, h, off, len))
        r->st->promised_writes++;
    if ((n == CAIRN_ERR_NOSPC || (n >= 0 && n < len && !r->failures)) &&
        promised(r, h, off, len))
        return fail(r, "promise", "write %s off %ld len %ld inside a cairn_fallocate promise: "
                                  "%ld %s", h->path, (long)off, (long)len, (long)n,
                    n < 0 ? t_errname(n) : "(short)");
    if (n < 0) {
        to_step_done(&r->o, h->obj, 0);
        if (n != CAIRN_ERR_NOSPC)
            return fail(r, "error", "write %s: %ld %s", h->path, (long)n, t_errname(n));
        out = nospc(r, "write");
    } else if (n < len && r->failures) {
        r->st->io_reboots++;
        logf_(r, "short write with device failures injected: reboot");
        if (++r->io_streak >= 25)
            return fail(r, "io-forever", "%u reboots in a row for CAIRN_ERR_IO or short "
                                         "writes without a write that worked in between",
                        (unsigned)r->io_streak);
        return OUT_DOWN;
    } else {
        to_step_done(&r->o, h->obj, n);
        if (n == len)
            r->io_streak = 0;
        if (n < len)
            out = nospc(r, "write (short)");
    }
    b = &r->o.objs[h->obj];
    if (out == OUT_OK && cairn_size(r->fs, h->fd) != b->cur_size)
        return fail(r, "size", "after write %s (returned %ld): size %ld, expected %ld", h->path,
                    (long)n, (long)cairn_size(r->fs, h->fd), (long)b->cur_size);
    return out;
}

static int op_fsync(struct run *r, struct hnd *h);

/* A data logger's record: 1-64 bytes at the end, often synced. */
static int op_log(struct run *r, struct hnd *h)
{
    int32_t len = 1 + (int32_t)rnd(r, 64), off = r->o.objs[h->obj].cur_size;
    int out;
    h->logger--;
    if ((int64_t)off + len > (int64_t)(r->room / 4))
        return OUT_OK;
    out = write_at(r, h, off, len);
    if (out == OUT_OK && chance(r, 60))
        out = op_fsync(r, h);
    return out;
}

static int op_truncate(struct run *r, struct hnd *h, int grow)
{
    int32_t size = r->o.objs[h->obj].cur_size, ns;
    int rc, out;
    if (is_ring(r, h->obj))
        return OUT_OK; /* only to 0 on a ring, which the oracle does not model */
    if (grow) /* filling: mostly extend, shrink a little at most */
        ns = chance(r, 25) ? size - (int32_t)rnd(r, (uint32_t)size / 4 + 1)
                           : size + (int32_t)rnd(r, (uint32_t)(2 * r->ps));
    else
        ns = chance(r, 80) ? (int32_t)rnd(r, (uint32_t)size + 1)
                           : size + (int32_t)rnd(r, (uint32_t)(2 * r->ps));
    to_size_begin(&r->o, h->obj, ns);
    promise_end(r, h->obj); /* holes and cut pages: not what a promise covers */
    rc = cairn_truncate(r->fs, h->fd, ns);
    logf_(r, "truncate %s %ld -> %ld -> %d %s", h->path, (long)size, (long)ns, rc,
          t_errname(rc));
    out = outcome(r, rc, "truncate");
    if (out != OUT_OK)
        return out;
    to_step_done(&r->o, h->obj, rc == 0 && ns != size);
    if (rc == CAIRN_ERR_NOSPC)
        out = nospc(r, "truncate");
    else if (rc)
        return fail(r, "error", "truncate %s: %d %s", h->path, rc, t_errname(rc));
    if (out == OUT_OK && cairn_size(r->fs, h->fd) != r->o.objs[h->obj].cur_size)
        return fail(r, "size", "after truncate %s (returned %d): size %ld, expected %ld",
                    h->path, rc, (long)cairn_size(r->fs, h->fd),
                    (long)r->o.objs[h->obj].cur_size);
    return out;
}

static int op_fsync(struct run *r, struct hnd *h)
{
    int rc = cairn_file_sync(r->fs, h->fd), out;
    logf_(r, "file_sync %s -> %d %s", h->path, rc, t_errname(rc));
    out = outcome(r, rc, "file_sync");
    if (out != OUT_OK)
        return out;
    if (rc == CAIRN_ERR_NOSPC)
        return nospc(r, "file_sync");
    if (rc)
        return fail(r, "error", "file_sync %s: %d %s", h->path, rc, t_errname(rc));
    to_ns_durable(&r->o);
    to_file_durable(&r->o, h->obj);
    return OUT_OK;
}

static int op_close(struct run *r, uint32_t k)
{
    struct hnd h = r->h[k];
    int rc, out;
    promise_end(r, h.obj); /* the last handle's close ends it; any: conservative */
    r->h[k] = r->h[--r->nh];
    rc = cairn_close(r->fs, h.fd);
    logf_(r, "close %s -> %d %s", h.path, rc, t_errname(rc));
    out = outcome(r, rc, "close");
    if (out != OUT_OK)
        return out;
    if (rc == CAIRN_ERR_NOSPC) {
        /* the handle is gone and with it what the file buffered: the state
         * is uncertain; reboot and let the cut rules judge it */
        nospc(r, "close");
        logf_(r, "close failed: reboot");
        return OUT_DOWN;
    }
    if (rc)
        return fail(r, "error", "close %s: %d %s", h.path, rc, t_errname(rc));
    to_ns_durable(&r->o);
    to_file_durable(&r->o, h.obj);
    return OUT_OK;
}

static int op_sync(struct run *r)
{
    int rc = cairn_sync(r->fs), out;
    logf_(r, "sync -> %d %s", rc, t_errname(rc));
    out = outcome(r, rc, "sync");
    if (out != OUT_OK)
        return out;
    if (rc == CAIRN_ERR_NOSPC)
        return nospc(r, "sync");
    if (rc)
        return fail(r, "error", "sync: %d %s", rc, t_errname(rc));
    to_all_durable(&r->o);
    return OUT_OK;
}

/* A namespace call: the oracle's new snapshot was pushed by the caller. */
static int ns_call_done(struct run *r, int rc, const char *what)
{
    int out = outcome(r, rc, what);
    if (out != OUT_OK)
        return out;
    if (rc == 0)
        return OUT_OK;
    to_ns_pop(&r->o);
    if (rc == CAIRN_ERR_NOSPC)
        return nospc(r, what);
    return fail(r, "error", "%s: %d %s", what, rc, t_errname(rc));
}

/* Checks (R5) that a namespace call that failed left path as it was. */
static int stat_matches(struct run *r, const char *path)
{
    struct cairn_info info;
    int rc = cairn_stat(r->fs, path, &info);
    const struct to_entry *e = to_lookup(&r->o, path);
    if ((rc == 0) != (e != NULL))
        return fail(r, "namespace", "stat %s: %d %s, but the oracle says it %s", path, rc,
                    t_errname(rc), e ? "exists" : "does not exist");
    return OUT_OK;
}

static int op_remove(struct run *r)
{
    char path[TO_PATH_MAX];
    const struct to_entry *e = pick_file(r, 0);
    int rc, out;
    if (!e || (r->growing && !chance(r, 15)))
        return OUT_OK;
    strcpy(path, e->path);
    to_snap_del(to_ns_push(&r->o), path);
    rc = cairn_remove(r->fs, path);
    logf_(r, "remove %s -> %d %s", path, rc, t_errname(rc));
    out = ns_call_done(r, rc, "remove");
    return out == OUT_OK && rc ? stat_matches(r, path) : out;
}

static int op_rename(struct run *r)
{
    char to[TO_PATH_MAX], from[TO_PATH_MAX];
    const struct to_entry *e = pick_file(r, 2), *t;
    int rc, out, k;
    if (!e)
        return OUT_OK;
    strcpy(from, e->path);
    if (chance(r, r->growing ? 5 : 40)) {
        /* over an existing closed file */
        t = pick_file(r, 0);
        if (!t || strcmp(t->path, from) == 0)
            return OUT_OK;
        strcpy(to, t->path);
    } else {
        random_file_path(r, to);
        if (to_lookup(&r->o, to) || !parent_exists(r, to))
            return OUT_OK;
    }
    k = handle_of_obj(r, e->obj);
    to_snap_rename(to_ns_push(&r->o), from, to);
    rc = cairn_rename(r->fs, from, to);
    logf_(r, "rename %s -> %s -> %d %s", from, to, rc, t_errname(rc));
    out = ns_call_done(r, rc, "rename");
    if (out == OUT_OK && rc == 0 && k >= 0)
        strcpy(r->h[k].path, to);
    if (out == OUT_OK && rc)
        out = stat_matches(r, from);
    return out;
}

static int dir_empty(struct run *r, const char *dir)
{
    const struct to_snap *s = to_ns(&r->o);
    size_t n = strlen(dir);
    uint32_t i;
    for (i = 0; i < s->n; i++)
        if (strncmp(s->e[i].path, dir, n) == 0 && s->e[i].path[n] == '/')
            return 0;
    return 1;
}

static int op_dir(struct run *r)
{
    const char *d = dir_paths[rnd(r, N_DIRS)];
    int rc;
    if (!to_lookup(&r->o, d)) {
        if (!parent_exists(r, d) || chance(r, 30))
            return OUT_OK;
        to_snap_add(to_ns_push(&r->o), d, to_new_obj(&r->o, TO_DIR), TO_DIR);
        rc = cairn_mkdir(r->fs, d);
        logf_(r, "mkdir %s -> %d %s", d, rc, t_errname(rc));
        return ns_call_done(r, rc, "mkdir");
    }
    if (strcmp(d, "/d1") == 0 || strcmp(d, "/d2") == 0) { /* move a directory */
        const char *other = strcmp(d, "/d1") == 0 ? "/d2" : "/d1";
        uint32_t i;
        if (to_lookup(&r->o, other))
            return OUT_OK;
        to_snap_rename(to_ns_push(&r->o), d, other);
        rc = cairn_rename(r->fs, d, other);
        logf_(r, "rename dir %s -> %s -> %d %s", d, other, rc, t_errname(rc));
        if (rc == 0)
            for (i = 0; i < r->nh; i++)
                if (strncmp(r->h[i].path, d, 3) == 0 && r->h[i].path[3] == '/')
                    memcpy(r->h[i].path, other, 3);
        return ns_call_done(r, rc, "rename dir");
    }
    if (!dir_empty(r, d))
        return OUT_OK;
    to_snap_del(to_ns_push(&r->o), d);
    rc = cairn_remove(r->fs, d);
    logf_(r, "rmdir %s -> %d %s", d, rc, t_errname(rc));
    return ns_call_done(r, rc, "rmdir");
}

/* One random call. `grow`: the files hold less than the run aims at. */
/* Idle-time collection: one cairn_gc call of a random budget, or (one time
 * in four) calls until it returns 0, at most 16, as an application preparing
 * a burst does. A victim it begins waits for the next idle call while free
 * segments last (space.c cn_settle), so writes, commits and cuts meet it half
 * emptied. Nothing a caller sees changes, so the oracle does not either. */
static int op_gc(struct run *r)
{
    uint32_t calls = rnd(r, 4) == 0 ? 16 : 1, i;
    for (i = 0; i < calls; i++) {
        uint32_t budget = 1 + rnd(r, 64);
        int32_t rc = cairn_gc(r->fs, budget);
        int out;
        logf_(r, "gc(%u) -> %ld %s", (unsigned)budget, (long)rc, rc < 0 ? t_errname(rc) : "");
        out = outcome(r, rc < 0 ? rc : 0, "gc");
        if (out != OUT_OK)
            return out;
        if (rc == CAIRN_ERR_NOSPC)
            return OUT_OK;
        if (rc < 0)
            return fail(r, "error", "gc: %ld %s", (long)rc, t_errname(rc));
        if (rc == 0)
            break;
    }
    return OUT_OK;
}

static int wl_step(struct run *r)
{
    uint64_t data = to_data_bytes(&r->o, 1);
    int grow = r->churn == 0 && data * 100 < r->room * r->fill_pct;
    uint32_t u = rnd(r, 100);
    struct hnd *h = r->nh ? &r->h[rnd(r, r->nh)] : NULL;
    r->growing = grow;
    r->opno++;
    if (opt_idle && rnd(r, 100) < opt_idle)
        return op_gc(r);
    if (opt_falloc && h && rnd(r, 100) < opt_falloc)
        return op_falloc(r, h);
    if (opt_falloc) {
        uint32_t k;
        for (k = 0; k < r->nh; k++)
            if (r->h[k].logger > 0 && chance(r, 70))
                return op_log(r, &r->h[k]);
    }
    if (r->churn)
        r->churn--;
    if (!grow) { /* churn: delete, shrink, overwrite, sync */
        if (u < 20)
            return op_remove(r);
        if (u < 30)
            return h ? op_truncate(r, h, 0) : op_open(r);
        if (u < 40)
            return op_rename(r);
        if (u < 50 && h)
            return op_close(r, (uint32_t)(h - r->h));
        if (u < 55)
            return op_sync(r);
        if (u < 60)
            return op_dir(r);
        if (u < 65 && h)
            return op_fsync(r, h);
        return h && r->churn == 0 ? op_write(r, h, 0) : op_open(r);
    }
    if (!h || (u < 12 && r->nh < MAX_HANDLES))
        return op_open(r);
    if (u < 66 && is_ring(r, h->obj) && chance(r, 10))
        return op_close(r, (uint32_t)(h - r->h)); /* a ring never fills the volume */
    if (u < 66)
        return op_write(r, h, 1);
    if (u < 73)
        return op_fsync(r, h);
    if (u < 80)
        return op_close(r, (uint32_t)(h - r->h));
    if (u < 83)
        return op_truncate(r, h, 1);
    if (u < 85)
        return op_remove(r);
    if (u < 90)
        return op_rename(r);
    if (u < 93)
        return op_dir(r);
    return op_sync(r);
}

/* Up to `steps` calls; stops early when power is gone or on a failure. A
 * full in-session comparison every 40 calls. */
static int workload(struct run *r, uint32_t steps)
{
    uint32_t i;
    for (i = 0; i < steps; i++) {
        int out = wl_step(r);
        if (out != OUT_OK)
            return out;
        if (r->opno % 40 == 0 && (out = verify_live(r)) != OUT_OK)
            return out;
    }
    return OUT_OK;
}

/* ---------------------------------------------------- device failures */

/* First block of the n-th good segment (the anchors are the first two). */
static uint32_t good_segment_block(struct run *r, uint32_t n, const uint8_t *bad)
{
    uint32_t bpl = r->seg_bytes / (uint32_t)r->ps / csim_geometry(r->sim)->pages_per_block;
    uint32_t blocks = csim_geometry(r->sim)->block_count, s, b, seen = 0;
    for (s = 0; s * bpl < blocks; s++) {
        int good = 1;
        for (b = 0; b < bpl; b++)
            good &= !bad[s * bpl + b];
        if (good && seen++ == n)
            return s * bpl;
    }
    return 0;
}

/* Between episodes of a run with failures: now and then a program or erase
 * fails (anywhere, also in the anchors) or a block wears out. */
static void maybe_inject(struct run *r)
{
    const struct cairn_geometry *g = csim_geometry(r->sim);
    uint32_t u = rnd(r, 100);
    if (!r->failures || r->fail_budget == 0 || !chance(r, 8))
        return;
    r->fail_budget--;
    r->st->injected++;
    if (u < 50) {
        uint64_t at = ops_now(r) + 1 + rnd(r, 400);
        csim_fail_op(r->sim, at);
        logf_(r, "inject: mutating op %llu fails", (unsigned long long)at);
    } else {
        uint32_t b = rnd(r, g->block_count), n = rnd(r, 4);
        csim_wear_out_after(r->sim, b, n);
        logf_(r, "inject: block %u wears out after %u more erases", (unsigned)b, (unsigned)n);
    }
}

/* ------------------------------------------------------------ episodes */

enum ep_kind { EP_RANDOM, EP_EARLY, EP_BROWNOUT, EP_MOUNTCUT, EP_UNMOUNT, EP_N };

/* A session ended without a cut: clean unmount and mount (everything is
 * durable then), or pull the plug now (no torn op). */
static int end_session(struct run *r)
{
    int rc;
    if (chance(r, 50)) {
        r->st->pulls++;
        logf_(r, "pull the plug (idle)");
        abandon(r);
        return power_cycle(r, (opt_kinds & 8u) && chance(r, 25) ? 1 + rnd(r, 3) : 0);
    }
    rc = cairn_unmount(r->fs);
    logf_(r, "unmount -> %d %s", rc, t_errname(rc));
    r->nh = 0;
    r->mounted = 0;
    if (!csim_powered(r->sim)) {
        count_cut(r);
        return power_cycle(r, 0);
    }
    if (rc == CAIRN_ERR_IO && r->failures)
        return power_cycle(r, 0);
    if (rc == CAIRN_ERR_NOSPC) {
        /* the contract (cairn.h): still mounted, nothing lost. The user
         * gives up and powers off: what was durable must be there, which
         * is what a pulled plug checks */
        r->st->pulls++;
        logf_(r, "unmount NOSPC (the mount stays): pull the plug");
        abandon(r);
        return power_cycle(r, 0);
    }
    if (rc)
        return fail(r, "unmount", "cairn_unmount: %d %s", rc, t_errname(rc));
    to_all_durable(&r->o); /* a clean unmount syncs everything */
    csim_power_on(r->sim);
    rc = do_mount(r);
    logf_(r, "clean mount -> %d %s", rc, t_errname(rc));
    if (rc == CAIRN_ERR_IO && r->failures)
        return power_cycle(r, 0);
    if (rc)
        return fail(r, "mount", "cairn_mount after a clean unmount: %d %s", rc, t_errname(rc));
    r->mounted = 1;
    r->st->remounts++;
    return verify_recovered(r);
}

/* Runs the workload until the armed cut fires (then power cycles) or
 * `steps` calls passed (then the cut is cancelled and, with `end`, the
 * session ends). */
static int until_cut(struct run *r, uint32_t steps, uint32_t mount_cuts, int end)
{
    int out = workload(r, steps);
    if (out == OUT_DOWN) {
        abandon(r);
        return power_cycle(r, mount_cuts);
    }
    csim_cut_cancel(r->sim);
    if (out != OUT_OK)
        return out;
    return end ? end_session(r) : OUT_OK;
}

static int episode(struct run *r)
{
    static const uint32_t weight[] = {45, 15, 15, 15, 10};
    uint32_t u, i, n, sum = 0, kind = 0;
    int out = OUT_OK;
    maybe_inject(r);
    for (i = 0; i < 5; i++)
        sum += (opt_kinds >> i & 1u) ? weight[i] : 0;
    u = rnd(r, sum ? sum : 1);
    for (i = 0; i < 5; i++) {
        uint32_t w = (opt_kinds >> i & 1u) ? weight[i] : 0;
        if (u < w) {
            kind = i;
            break;
        }
        u -= w;
    }
    u = kind == 0 ? 0 : kind == 1 ? 45 : kind == 2 ? 60 : kind == 3 ? 75 : 90;
    if (u < 45) { /* a cut at a random op */
        /* without the early and mount kinds, no cut falls among the first
         * ops of a session nor inside a mount (see --kinds) */
        uint64_t d = cut_distance(r) + ((opt_kinds & 2u) ? 0 : 8);
        uint32_t mc = (opt_kinds & 8u) && chance(r, 20) ? 1 + rnd(r, 3) : 0;
        uint32_t steps, end;
        arm_cut(r, d, "random");
        steps = 20 + rnd(r, 200);
        end = (uint32_t)chance(r, 30);
        return until_cut(r, steps, mc, (int)end);
    }
    if (u < 60) { /* a cut among the first ops of a session */
        r->st->early_cuts++;
        arm_cut(r, rnd(r, 6), "first ops of the session");
        return until_cut(r, 40, 0, 1);
    }
    if (u < 75) { /* brown-out loop: cut, mount, cut again ... */
        n = 2 + rnd(r, 7);
        r->st->brownouts++;
        logf_(r, "brown-out loop of %u cuts", (unsigned)n);
        for (i = 0; i < n && out == OUT_OK; i++) {
            arm_cut(r, rnd(r, 4), "brown-out");
            out = until_cut(r, 30, (uint32_t)chance(r, 25), 0);
        }
        if (out == OUT_OK) /* then a full check: the volume works again */
            out = workload(r, 20);
        if (out == OUT_DOWN) {
            abandon(r);
            out = power_cycle(r, 0);
        }
        return out == OUT_OK ? verify_live(r) : out;
    }
    if (u < 90) { /* cuts inside the recovery mount */
        arm_cut(r, cut_distance(r), "before mount cuts");
        return until_cut(r, 20 + rnd(r, 100), 1 + rnd(r, 4), 1);
    }
    /* a cut inside the clean unmount (or shortly after it) */
    out = workload(r, 10 + rnd(r, 60));
    if (out == OUT_DOWN) {
        abandon(r);
        return power_cycle(r, 0);
    }
    if (out != OUT_OK)
        return out;
    arm_cut(r, rnd(r, 16), "inside unmount");
    n = (uint32_t)cairn_unmount(r->fs);
    logf_(r, "unmount -> %d %s", (int)n, t_errname((int)n));
    abandon(r);
    if (csim_powered(r->sim)) {
        csim_cut_cancel(r->sim);
        if ((int)n == 0)
            to_all_durable(&r->o);
    } else {
        count_cut(r);
    }
    return power_cycle(r, 0);
}

/* ----------------------------------------------------------- a whole run */

/* fs_stat offers (next to) nothing: how much does one file really take? */
static int measure_room(struct run *r)
{
    int fd = cairn_open(r->fs, "/room", CAIRN_O_WRONLY | CAIRN_O_CREAT), rc;
    int32_t n = 0;
    uint64_t got = 0;
    if (fd < 0)
        return fail(r, "error", "measuring the room: open: %d %s", fd, t_errname(fd));
    memset(r->wbuf, 0x5A, (size_t)r->ps);
    while (got < (1ull << 30) && (n = cairn_write(r->fs, fd, r->wbuf, r->ps)) == r->ps)
        got += (uint64_t)n;
    rc = cairn_close(r->fs, fd);
    if (rc == 0)
        rc = cairn_remove(r->fs, "/room");
    if (rc == 0)
        rc = cairn_sync(r->fs);
    logf_(r, "fs_stat offers %llu bytes; one file took %llu (last write %ld %s)",
          (unsigned long long)r->capacity, (unsigned long long)got, (long)n,
          n < 0 ? t_errname(n) : "");
    if (rc)
        return fail(r, "error", "measuring the room: %d %s", rc, t_errname(rc));
    r->room = got;
    return OUT_OK;
}

/* Full runs start by filling the volume to their aim (no cuts yet): big
 * appends to a few files (each at most a quarter of the room), a sync now
 * and then, until the aim or NOSPC. */
static int fill_phase(struct run *r)
{
    uint32_t k, last_growth = 0;
    uint64_t most = 0;
    int out = OUT_OK;
    for (k = 0; k < 100000 && out == OUT_OK; k++) {
        struct hnd *h;
        uint64_t data = to_data_bytes(&r->o, 1);
        if (data * 100 >= r->room * r->fill_pct || r->churn)
            break;
        if (data > most) {
            most = data;
            last_growth = k;
        } else if (opt_ring && k - last_growth > 2000) {
            break; /* rings hold the names the files that would fill it need */
        }
        if (r->nh == 0 || (r->o.objs[r->h[0].obj].cur_size + r->wmax) * 4 > (int64_t)r->room ||
            (is_ring(r, r->h[0].obj) && chance(r, 20))) {
            /* a ring never fills the volume: a few writes, then another file */
            if (r->nh)
                out = op_close(r, 0);
            if (out == OUT_OK && file_count(r) >= MAX_FILES)
                break;
            while (out == OUT_OK && r->nh == 0 && k++ < 100000)
                out = op_open(r);
            continue;
        }
        h = &r->h[0];
        out = op_write(r, h, 2);
        if (out == OUT_OK && chance(r, 5))
            out = op_fsync(r, h);
    }
    if (out == OUT_DOWN) {
        abandon(r);
        out = power_cycle(r, 0);
    }
    if (out != OUT_OK)
        return out;
    logf_(r, "filled: %llu data bytes of %llu after %u calls",
          (unsigned long long)to_data_bytes(&r->o, 1), (unsigned long long)r->room,
          (unsigned)k);
    return verify_live(r);
}

/* An earlier volume on the device: formatted, then sessions of a file
 * write, a sync and an unmount (and some cut short), enough checkpoints to
 * switch anchors a few times. Its files are named /old*: the oracle, which
 * knows none of them, fails the run if one is ever seen. */
static void age_device(struct run *r)
{
    struct cairn_config cfg = r->cfg;
    cairn *fs = (cairn *)malloc(cairn_context_size());
    uint64_t x = r->seed * 0x9E3779B97F4A7C15ull + 7u;
    uint32_t sessions = 20u + (uint32_t)(geo_mix(&x) % 40u), i;
    char path[32];
    uint8_t buf[700];
    if (!fs)
        t_fatal("out of memory");
    cfg.mem = NULL;
    cfg.mem_size = 0;
    if (cairn_format(fs, &cfg) != 0) {
        free(fs);
        return;
    }
    for (i = 0; i < sessions; i++) {
        int32_t fd;
        if (cairn_mount(fs, &cfg) != 0)
            break;
        snprintf(path, sizeof path, "/old%u", (unsigned)(i % 7u));
        memset(buf, (int)(0xA0u + i), sizeof buf);
        fd = cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_APPEND);
        if (fd >= 0) {
            (void)cairn_write(fs, fd, buf, (int32_t)(64u + geo_mix(&x) % 600u));
            (void)cairn_close(fs, fd);
        }
        if (geo_mix(&x) % 4u == 0) {
            (void)cairn_mkdir(fs, "/olddir");
            (void)cairn_remove(fs, "/olddir");
        }
        (void)cairn_unmount(fs);
    }
    free(fs);
    logf_(r, "aged: an earlier volume, %u sessions", (unsigned)i);
}

/* Good segments the volume keeps when the factory-bad blocks in `bad` are
 * left out, with the segment size zero config picks (read from a format of
 * the same geometry on a sim of its own, without bad blocks). A format
 * refused with NOSPC is the contract when fewer than the smallest volume's
 * 11 are left: zero config may group many blocks into a segment (a random
 * NAND geometry of 143 blocks got 13 segments of 11 blocks, and three bad
 * blocks took three of them). 0 when that format fails. */
static uint32_t good_segments(struct run *r, const uint8_t *bad)
{
    csim *sim = make_sim(r->geo, r->seed);
    const struct cairn_geometry *g = csim_geometry(sim);
    struct cairn_config cfg = r->cfg;
    struct cairn_fsinfo fi;
    cairn *fs = (cairn *)malloc(cairn_context_size());
    uint32_t bpl = 0, segs, s, b, good = 0;
    if (!fs)
        t_fatal("out of memory");
    cfg.dev = csim_dev(sim);
    cfg.mem = NULL;
    cfg.mem_size = 0;
    cfg.mem = malloc(cairn_mem_size(&cfg) ? cairn_mem_size(&cfg) : 1);
    cfg.mem_size = cairn_mem_size(&cfg);
    if (cfg.mem && cairn_format(fs, &cfg) == 0 && cairn_mount(fs, &cfg) == 0) {
        if (cairn_fs_stat(fs, &fi) == 0)
            bpl = fi.block_size / (g->page_size * g->pages_per_block);
        (void)cairn_unmount(fs);
    }
    segs = bpl ? g->block_count / bpl : 0;
    for (s = 0; s < segs; s++) {
        int hit = 0;
        for (b = s * bpl; b < (s + 1) * bpl; b++)
            hit |= bad[b];
        good += !hit;
    }
    free(cfg.mem);
    free(fs);
    csim_free(sim);
    return good;
}

static int setup_run(struct run *r)
{
    const struct cairn_geometry *g;
    struct cairn_fsinfo fi;
    uint8_t *bad;
    uint32_t nbad = 0, i;
    int rc;
    r->sim = make_sim(r->geo, r->seed);
    g = csim_geometry(r->sim);
    r->ps = (int32_t)g->page_size;
    r->seg_bytes = g->page_size * g->pages_per_block *
                   (g->blocks_per_lblock ? g->blocks_per_lblock : 1);
    bad = (uint8_t *)calloc(g->block_count, 1);
    if (!bad)
        t_fatal("out of memory");
    r->failures = g->medium != CAIRN_MEDIUM_BLOCK && chance(r, 35);
    r->fail_budget = r->failures ? 4 : 0;
    if (r->failures && chance(r, 60)) { /* factory bad blocks, often at the start */
        uint32_t k, want = 1 + rnd(r, 3);
        for (k = 0; k < want; k++) {
            uint32_t b = chance(r, 50) ? rnd(r, 3) : rnd(r, g->block_count);
            if (!bad[b]) {
                bad[b] = 1;
                nbad++;
                csim_set_factory_bad(r->sim, b);
                logf_(r, "factory bad block %u", (unsigned)b);
            }
        }
    }
    if (g->medium == CAIRN_MEDIUM_NAND && chance(r, 30)) {
        uint32_t ppm = 2000 + rnd(r, 20000);
        csim_set_bitflips(r->sim, ppm, 0);
        logf_(r, "corrected bit flips: %u ppm", (unsigned)ppm);
    }
    memset(&r->cfg, 0, sizeof r->cfg);
    r->cfg.dev = csim_dev(r->sim);
    r->cfg.max_open = 8;
    if (chance(r, 40))
        r->cfg.commit_pages = 2 + rnd(r, 16);
    if (chance(r, 30))
        r->cfg.cache_nodes = 12 + rnd(r, 8);
    if (opt_vary) {
        r->cfg.data_heads = (uint8_t)(1 + rnd(r, 8));
        r->cfg.wear_spread = (uint16_t)(1 + rnd(r, 30));
        r->cfg.gc_step_pages = 1u << rnd(r, 9);
        logf_(r, "config: data_heads %u wear_spread %u gc_step_pages %u",
              (unsigned)r->cfg.data_heads, (unsigned)r->cfg.wear_spread,
              (unsigned)r->cfg.gc_step_pages);
    }
    r->mem = malloc(cairn_mem_size(&r->cfg));
    r->fs = (cairn *)malloc(cairn_context_size());
    if (!r->mem || !r->fs)
        t_fatal("out of memory");
    r->cfg.mem = r->mem;
    r->cfg.mem_size = cairn_mem_size(&r->cfg);
    logf_(r, "config: commit_pages %u cache_nodes %u", (unsigned)r->cfg.commit_pages,
          (unsigned)r->cfg.cache_nodes);
    if (opt_aged) {
        uint64_t x = r->seed ^ 0xA6EDull;
        if (geo_mix(&x) % 100u < opt_aged)
            age_device(r);
    }
    rc = cairn_format(r->fs, &r->cfg);
    logf_(r, "format -> %d %s", rc, t_errname(rc));
    if (rc == CAIRN_ERR_NOSPC && nbad > 0 &&
        (g->block_count < 64u || good_segments(r, bad) < CN_SMALLEST_SEGS)) {
        /* the contract: factory-bad blocks left fewer good segments than the
         * smallest volume; nothing to torture */
        free(bad);
        r->st->format_refused++;
        return OUT_SKIP;
    }
    if (rc == CAIRN_ERR_INVAL && r->geo->kind == G_RANDOM) {
        /* a drawn geometry cairn cannot use: printed, not tortured */
        printf("  seed %llu: format refused the geometry: %s\n", (unsigned long long)r->seed,
               cairn_config_why(&r->cfg) ? cairn_config_why(&r->cfg) : "(no reason)");
        free(bad);
        r->st->format_refused++;
        return OUT_SKIP;
    }
    if (rc) {
        free(bad);
        return fail(r, "format", "cairn_format: %d %s", rc, t_errname(rc));
    }
    rc = do_mount(r);
    if (rc) {
        free(bad);
        return fail(r, "mount", "first mount: %d %s", rc, t_errname(rc));
    }
    r->mounted = 1;
    if (cairn_fs_stat(r->fs, &fi) != 0)
        t_fatal("fs_stat");
    r->capacity = fi.free_bytes;
    r->bad_at_format = fi.bad_blocks;
    /* the segment cairn chose (zero config may group erase blocks): what a
     * retired segment takes from the volume (the leak check). Before, one
     * erase block: random geometries of 4 KiB blocks in 32 KiB segments
     * failed the leak check by exactly one segment per block retired. */
    r->seg_bytes = fi.block_size;
    /* most full runs stay at 85-95% of what fs_stat offered; some write on
     * until NOSPC */
    r->fill_pct = chance(r, 55) ? (chance(r, 40) ? 150 : 85 + rnd(r, 11)) : 20 + rnd(r, 50);
    logf_(r, "fresh volume: %llu bytes free, %u bad; aim at %u%% full",
          (unsigned long long)r->capacity, (unsigned)fi.bad_blocks, (unsigned)r->fill_pct);
    r->wbuf = (uint8_t *)malloc((size_t)256 * (size_t)r->ps);
    if (!r->wbuf)
        t_fatal("out of memory");
    r->room = r->capacity;
    if (r->room < 64u * (uint64_t)r->ps && measure_room(r) != OUT_OK) {
        free(bad);
        return OUT_FAIL;
    }
    r->wmax = (r->room / 128 > 64u * (uint64_t)r->ps ? 256 : 64) * r->ps;
    if ((uint64_t)r->wmax > r->room / 8)
        r->wmax = (int32_t)(r->room / 8 > (uint64_t)r->ps ? r->room / 8 : (uint64_t)r->ps);
    to_init(&r->o, r->ps);
    /* anchors under fire: one of the first two good segments wears out */
    if (r->failures && chance(r, 30)) {
        uint32_t b = good_segment_block(r, rnd(r, 2), bad);
        i = rnd(r, 3);
        csim_wear_out_after(r->sim, b, i);
        r->st->injected++;
        logf_(r, "inject: anchor block %u wears out after %u more erases", (unsigned)b,
              (unsigned)i);
    }
    free(bad);
    return OUT_OK;
}

/* R7: remove everything, remount, and the space must be back. */
static int leak_check(struct run *r)
{
    struct cairn_fsinfo fi;
    uint64_t expect = r->capacity;
    int rc, k;
    uint32_t i;
    while (r->nh) {
        int out = op_close(r, r->nh - 1);
        if (out != OUT_OK)
            return out == OUT_DOWN && r->failures ? OUT_OK : out;
    }
    for (k = 3; k >= 0; k--) { /* deepest first */
        const struct to_snap *s = to_ns(&r->o);
        for (i = 0; i < s->n; i++) {
            char p[TO_PATH_MAX];
            int depth = 0;
            const char *c;
            strcpy(p, s->e[i].path);
            for (c = p; *c; c++)
                depth += *c == '/';
            if (depth != k + 1)
                continue;
            rc = cairn_remove(r->fs, p);
            if (rc == CAIRN_ERR_NOSPC) { /* idle GC, a remount, then once more */
                (void)cairn_gc(r->fs, 1u << 20);
                rc = cairn_unmount(r->fs);
                if (rc == 0)
                    rc = do_mount(r);
                if (rc == 0)
                    rc = cairn_remove(r->fs, p);
                logf_(r, "remove %s after NOSPC, idle GC and a remount -> %d %s", p, rc,
                      t_errname(rc));
                if (rc == CAIRN_ERR_NOSPC)
                    return fail(r, "nospc-remove", "removing %s from a full volume: NOSPC, "
                                                   "also after idle GC and a remount", p);
            }
            if (rc == CAIRN_ERR_IO && r->failures)
                return OUT_OK;
            if (rc)
                return fail(r, "cleanup", "remove %s: %d %s", p, rc, t_errname(rc));
            to_snap_del(to_ns_push(&r->o), p);
            s = to_ns(&r->o);
            i = (uint32_t)-1; /* the snapshot changed: start over */
        }
    }
    rc = cairn_unmount(r->fs);
    r->mounted = 0;
    if (rc == 0)
        rc = do_mount(r);
    if (rc == CAIRN_ERR_IO && r->failures)
        return OUT_OK;
    if (rc)
        return fail(r, "cleanup", "unmount/mount of the emptied volume: %d %s", rc,
                    t_errname(rc));
    r->mounted = 1;
    cairn_fs_stat(r->fs, &fi);
    if (fi.bad_blocks > r->bad_at_format) {
        uint64_t lost = (uint64_t)(fi.bad_blocks - r->bad_at_format) * r->seg_bytes;
        expect = expect > lost ? expect - lost : 0;
    }
    logf_(r, "emptied: free %llu (fresh %llu, expected %llu), used %llu",
          (unsigned long long)fi.free_bytes, (unsigned long long)r->capacity,
          (unsigned long long)expect, (unsigned long long)fi.used_bytes);
    if (fi.free_bytes + 2ull * r->seg_bytes < expect)
        return fail(r, "leak", "the emptied volume has %llu bytes free, the fresh one had %llu "
                               "(%u blocks retired since; %llu bytes still counted used)",
                    (unsigned long long)fi.free_bytes, (unsigned long long)r->capacity,
                    (unsigned)(fi.bad_blocks - r->bad_at_format),
                    (unsigned long long)fi.used_bytes);
    r->st->leak_checks++;
    return check_volume(r, "emptied volume");
}

static void free_run(struct run *r)
{
    to_free(&r->o);
    if (r->sim)
        csim_free(r->sim);
    free(r->mem);
    free(r->fs);
    free(r->wbuf);
}

static int do_run(const struct geo_def *g, uint64_t seed, uint32_t cuts, struct stats *st)
{
    struct run *r = (struct run *)calloc(1, sizeof *r);
    int out;
    if (!r)
        t_fatal("out of memory");
    r->geo = g;
    r->seed = seed;
    r->rng = seed * 0x9E3779B97F4A7C15ull + 7;
    r->st = st;
    r->cuts_planned = cuts;
    st->runs++;
    out = setup_run(r);
    if (out == OUT_SKIP) {
        free_run(r);
        free(r);
        return OUT_OK;
    }
    if (out == OUT_OK && r->fill_pct >= 85)
        out = fill_phase(r);
    for (r->episode = 0; out == OUT_OK && r->episode < cuts; r->episode++) {
        out = episode(r);
        if (out == OUT_DOWN) { /* a failure mid-verification: reboot */
            abandon(r);
            out = power_cycle(r, 0);
        }
    }
    if (out == OUT_OK && !r->failed) {
        int rc;
        r->episode = cuts;
        out = end_session(r);
        if (out == OUT_DOWN) {
            abandon(r);
            out = power_cycle(r, 0);
        }
        if (out == OUT_OK)
            out = leak_check(r);
        if (out == OUT_OK && r->mounted && (rc = cairn_unmount(r->fs)) != 0 && !r->failures)
            out = fail(r, "unmount", "final unmount: %d %s", rc, t_errname(rc));
    }
    out = r->failed ? OUT_FAIL : OUT_OK;
    if (out != OUT_OK)
        st->failed_runs++;
    free_run(r);
    free(r);
    return out;
}

/* ------------------------------------------------ reduced scenarios
 * Small deterministic sequences that reproduce the failure kinds the random
 * runs found (--scenario NAME; docs/TESTING.md lists them). */

struct mini {
    csim *sim;
    cairn *fs;
    struct cairn_config cfg;
    void *mem;
};

static void mini_open(struct mini *m, const struct geo_def *g)
{
    memset(m, 0, sizeof *m);
    m->sim = make_sim(g, 1);
    m->cfg.dev = csim_dev(m->sim);
    m->cfg.max_open = 8;
    m->mem = malloc(cairn_mem_size(&m->cfg));
    m->fs = (cairn *)malloc(cairn_context_size());
    if (!m->mem || !m->fs)
        t_fatal("out of memory");
    m->cfg.mem = m->mem;
    m->cfg.mem_size = cairn_mem_size(&m->cfg);
}

static void mini_close(struct mini *m)
{
    csim_free(m->sim);
    free(m->mem);
    free(m->fs);
}

/* Writes `len` bytes of pattern `seed` as the whole of path, closes. */
static int mini_put(struct mini *m, const char *path, int32_t len, uint64_t seed)
{
    uint8_t *b = (uint8_t *)malloc((size_t)len);
    int rc;
    if (!b)
        t_fatal("out of memory");
    t_pattern(b, (size_t)len, seed);
    rc = t_write_file(m->fs, path, b, len);
    free(b);
    return rc;
}

/* 1 if path holds pattern `seed` of len bytes. */
static int mini_is(struct mini *m, const char *path, int32_t len, uint64_t seed)
{
    uint8_t *b = NULL, *want = (uint8_t *)malloc((size_t)len);
    int32_t n = 0;
    int ok;
    if (!want)
        t_fatal("out of memory");
    t_pattern(want, (size_t)len, seed);
    ok = t_read_file(m->fs, path, &b, &n) == 0 && n == len && memcmp(b, want, (size_t)len) == 0;
    free(b);
    free(want);
    return ok;
}

/* Kind A: two torn checkpoint writes in a row. `sessions` clean sessions
 * (mount, rewrite /a, unmount) move the checkpoint slot on; then a cut at
 * op k1 of the next session's first write, a mount, a cut at op k2 of the
 * next first write, a mount. /a was rewritten and closed (durable) in the
 * last clean session and never touched after: the mount must succeed and
 * /a must hold its last content. Returns the failing combinations. */
static int scenario_double_tear(const struct geo_def *g, uint32_t max_sessions)
{
    uint32_t sessions, k1, k2, bad = 0, tried = 0;
    int t1, t2;
    for (sessions = 0; sessions <= max_sessions; sessions++)
        for (k1 = 0; k1 < 3; k1++)
            for (k2 = 0; k2 < 3; k2++)
                for (t1 = 0; t1 < 2; t1++)
                    for (t2 = 0; t2 < 2; t2++) {
                        struct mini m;
                        struct csim_counters c;
                        uint32_t i;
                        int rc, rc1, ok;
                        mini_open(&m, g);
                        rc = cairn_format(m.fs, &m.cfg);
                        for (i = 0; i <= sessions && rc == 0; i++) {
                            rc = cairn_mount(m.fs, &m.cfg);
                            if (rc == 0)
                                rc = mini_put(&m, "/a", 1000, 100 + i);
                            if (rc == 0)
                                rc = cairn_unmount(m.fs);
                        }
                        if (rc)
                            t_fatal("double-tear: set-up failed: %d", rc);
                        /* first cut */
                        rc = cairn_mount(m.fs, &m.cfg);
                        csim_counters(m.sim, &c);
                        csim_cut_at(m.sim, c.mutating_ops + k1, (enum csim_tear)t1);
                        (void)mini_put(&m, "/b", 300, 7);
                        csim_power_on(m.sim);
                        rc1 = cairn_mount(m.fs, &m.cfg);
                        /* second cut */
                        if (rc1 == 0) {
                            csim_counters(m.sim, &c);
                            csim_cut_at(m.sim, c.mutating_ops + k2, (enum csim_tear)t2);
                            (void)mini_put(&m, "/b", 300, 8);
                            csim_power_on(m.sim);
                            rc = cairn_mount(m.fs, &m.cfg);
                        }
                        ok = rc1 == 0 && rc == 0 && mini_is(&m, "/a", 1000, 100 + sessions);
                        tried++;
                        if (!ok) {
                            bad++;
                            if (bad <= 20)
                                printf("  double-tear %s: %u clean sessions, cut at op %u (%s) of "
                                       "the first write, mount -> %s, cut at op %u (%s), mount "
                                       "-> %s, /a %s\n",
                                       g->name, (unsigned)sessions, (unsigned)k1, tear_name(t1),
                                       t_errname(rc1), (unsigned)k2, tear_name(t2),
                                       rc1 ? "-" : t_errname(rc),
                                       rc1 || rc ? "unreadable"
                                                 : "holds an older content (rollback)");
                        }
                        mini_close(&m);
                    }
    printf("scenario double-tear on %s: %u of %u combinations failed\n", g->name, (unsigned)bad,
           (unsigned)tried);
    return bad != 0;
}

/* Kind B: an anchor block that fails. Block `block` (an anchor's first
 * block) wears out after `after` more erases; the volume then takes
 * sessions of writes. Every mount must succeed and /a keep its last
 * durable content, whatever writes then return. */
static int scenario_anchor_wear(const struct geo_def *g)
{
    uint32_t which, after, bad = 0, tried = 0;
    for (which = 0; which < 2; which++)
        for (after = 0; after < 3; after++) {
            struct mini m;
            uint32_t i, bpl;
            int rc, last_ok = -1, mount_rc = 0, lost = 0;
            mini_open(&m, g);
            bpl = csim_geometry(m.sim)->blocks_per_lblock;
            bpl = bpl ? bpl : 1;
            if (cairn_format(m.fs, &m.cfg) != 0)
                t_fatal("anchor-wear: format");
            csim_wear_out_after(m.sim, which * bpl, after);
            for (i = 0; i < 60; i++) {
                mount_rc = cairn_mount(m.fs, &m.cfg);
                if (mount_rc != 0)
                    break;
                if (last_ok >= 0 && !mini_is(&m, "/a", 700, 200 + (uint64_t)last_ok)) {
                    lost = 1;
                    break;
                }
                rc = mini_put(&m, "/a", 700, 200 + i);
                if (rc == 0)
                    last_ok = (int)i;
                rc = cairn_unmount(m.fs);
                if (rc != 0)
                    csim_power_on(m.sim); /* an error: reboot */
            }
            tried++;
            if (mount_rc != 0 || lost) {
                bad++;
                printf("  anchor-wear %s: anchor %u's block %u fails after %u more erases: in "
                       "session %u mount -> %s%s (last durable write in session %d)\n",
                       g->name, (unsigned)which, (unsigned)(which * bpl), (unsigned)after,
                       (unsigned)i, t_errname(mount_rc), lost ? ", /a lost its content" : "",
                       last_ok);
            }
            mini_close(&m);
        }
    printf("scenario anchor-wear on %s: %u of %u cases failed\n", g->name, (unsigned)bad,
           (unsigned)tried);
    return bad != 0;
}

/* Kind A in recovery: a cut in a write leaves the volume unclean; then the
 * recovery mount is cut at op k1 (and, with two, the next one at op k2),
 * then a mount runs through. /a and /b were closed before the first cut:
 * the mount must succeed and both must hold their content. */
static int mount_cuts_case(const struct geo_def *g, uint32_t k1, uint32_t k2, int t,
                           uint32_t *ops_out)
{
    struct mini m;
    struct csim_counters c;
    int rc, ok;
    mini_open(&m, g);
    rc = cairn_format(m.fs, &m.cfg);
    if (rc == 0)
        rc = cairn_mount(m.fs, &m.cfg);
    if (rc == 0)
        rc = mini_put(&m, "/a", 3000, 11);
    if (rc == 0)
        rc = mini_put(&m, "/b", 500, 12);
    if (rc)
        t_fatal("mount-cuts: set-up: %d", rc);
    csim_counters(m.sim, &c);
    csim_cut_at(m.sim, c.mutating_ops + 2, CSIM_TEAR_PREFIX);
    (void)mini_put(&m, "/c", 5000, 13);
    csim_power_on(m.sim);
    if (k1 != UINT32_MAX) {
        csim_cut_at(m.sim, k1, (enum csim_tear)t);
        (void)cairn_mount(m.fs, &m.cfg);
        csim_power_on(m.sim);
    }
    if (k2 != UINT32_MAX) {
        csim_cut_at(m.sim, k2, (enum csim_tear)t);
        (void)cairn_mount(m.fs, &m.cfg);
        csim_power_on(m.sim);
    }
    rc = cairn_mount(m.fs, &m.cfg);
    csim_counters(m.sim, &c);
    if (ops_out)
        *ops_out = (uint32_t)c.mutating_ops;
    ok = rc == 0 && mini_is(&m, "/a", 3000, 11) && mini_is(&m, "/b", 500, 12);
    if (!ok)
        printf("  mount-cuts %s: recovery mount cut at op %d%s%d (%s), then mount -> %s, %s\n",
               g->name, k1 == UINT32_MAX ? -1 : (int)k1, k2 == UINT32_MAX ? "" : " and op ",
               k2 == UINT32_MAX ? 0 : (int)k2, tear_name(t), t_errname(rc),
               rc ? "nothing readable" : "/a or /b lost their closed content");
    mini_close(&m);
    return !ok;
}

static int scenario_mount_cuts(const struct geo_def *g)
{
    uint32_t ops = 0, k1, k2, bad = 0, tried = 0;
    int t;
    if (mount_cuts_case(g, UINT32_MAX, UINT32_MAX, 0, &ops))
        return 1;
    for (t = 0; t < 2; t++)
        for (k1 = 0; k1 < ops; k1++) {
            bad += (uint32_t)mount_cuts_case(g, k1, UINT32_MAX, t, NULL);
            tried++;
            for (k2 = 0; k2 < ops; k2 += 1 + ops / 12) {
                bad += (uint32_t)mount_cuts_case(g, k1, k2, t, NULL);
                tried++;
            }
        }
    printf("scenario mount-cuts on %s (a recovery mount does %u mutating ops): %u of %u cases "
           "failed\n",
           g->name, (unsigned)ops, (unsigned)bad, (unsigned)tried);
    return bad != 0;
}

/* ----------------------------------------------------------------- main */

static int find_smallest(void)
{
    const char *const *m;
    for (m = csim_model_names(); *m; m++) {
        struct cairn_geometry g;
        uint32_t bpl, n;
        csim_model_info(*m, &g, NULL, NULL);
        for (bpl = 1; bpl <= 16; bpl *= 2) {
            for (n = bpl; n <= 64 * bpl; n += bpl) {
                struct csim_options opt;
                struct cairn_config cfg;
                csim *sim;
                cairn *fs;
                int rc;
                if (g.medium == CAIRN_MEDIUM_BLOCK && n < 11)
                    continue;
                fs = (cairn *)malloc(cairn_context_size());
                memset(&opt, 0, sizeof opt);
                opt.block_count = n;
                opt.blocks_per_lblock = bpl;
                sim = csim_new(*m, &opt);
                if (!sim) {
                    free(fs);
                    continue;
                }
                memset(&cfg, 0, sizeof cfg);
                cfg.dev = csim_dev(sim);
                rc = cairn_format(fs, &cfg);
                csim_free(sim);
                free(fs);
                if (rc == 0) {
                    printf("%s: blocks_per_lblock %u: smallest block_count %u (%llu KiB)\n", *m,
                           (unsigned)bpl, (unsigned)n,
                           (unsigned long long)n * g.page_size * g.pages_per_block / 1024);
                    break;
                }
            }
        }
    }
    return 0;
}

/* Runs of the torture test that failed once (with --long unless `short_run`,
 * with --idle `idle`), kept as regression runs (--regress, in make test): each
 * failed before its fix (docs/TESTING.md names the fix). */
static const struct regress_run {
    const char *geo;
    uint32_t seed, cuts;
    const char *what;
    int short_run;
    uint32_t idle;
    uint32_t overwrite; /* --overwrite P */
    uint32_t falloc, ring; /* --falloc P, --ring P */
    uint32_t aged;         /* --aged P */
    unsigned kinds;        /* --kinds as a mask (kind_names); 0: all */
    int vary;              /* --vary */
} regress_runs[] = {
    {"smallest", 11, 14, "failing anchor: mount resumes its replacement", 0, 0, 0, 0, 0, 0, 0, 0},
    {"smallest", 1028, 1, "format refuses bad blocks that leave too few segments", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 9, 18, "failing anchor in a brown-out loop: pre-erase, 16+ slots", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 4, 5, "claimed-erased anchor after a cut erase: read back", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 31, 342, "bounded step NOSPC no longer skips the hard path", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 32, 476, "an extent record may use GC's floor", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 17, 1000, "GC at its floor squeezes a cheap victim", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 19, 1000, "recovery squeezes into its last segment", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b16", 3, 970, "sync NOSPC at 37%", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b16", 9, 1000, "removes refused on a full volume", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nand-4k", 11, 15, "failing anchor on NAND", 0, 0, 0, 0, 0, 0, 0, 0},
    {"smallest", 2, 503, "weak cells in the current anchor: the other anchor is next", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 103, 1000, "dead = what a checkpoint frees (mount NOSPC); "
                                  "healthy anchor full: the checkpoint goes into R", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nand-dhara", 10, 25, "no claimed-erased anchors on NAND (NOP)", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 138, 499, "a recovery keeps the floors once its own checkpoint "
                                 "landed (mount NOSPC for good)", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 320, 1000, "a recovery's GC commits after a victim, not before: "
                                  "mount at 1 free, removes refused for good", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nand-dhara", 8011, 226, "a recovery's first checkpoint into the other anchor, erased: "
                              "a cut recovery left its slot torn (mount IO for good)", 0, 0, 0, 0, 0, 0, 0, 0},
    {"nor-m25p16", 508, 1, "an idle call's victim freed and refilled: the walk ends "
                           "(write CORRUPT)", 1, 5, 0, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 20000, 387, "a victim freed by a commit inside GC's walk: the step "
                                   "ends (its node flush took it: write CORRUPT)", 0, 0, 90, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 20011, 305, "a growing truncate collects and tries again, as a write "
                                   "(NOSPC at 34% full)", 0, 0, 90, 0, 0, 0, 0, 0},
    {"nor-w25q128-b4", 21006, 175, "a truncate's record refused for room collects and tries "
                                   "again; steps skip victims that do not fit (NOSPC at 31%)",
     0, 0, 90, 0, 0, 0, 0, 0},
    {"nor-w25q128-b16", 22003, 92, "a close's tail page load flushes the buffer: collect and "
                                   "try again (NOSPC at 36%, 1.5 MB free)", 0, 0, 90, 0, 0, 0, 0, 0},
    {"smallest", 3105, 14, "R6 counts the open files' promises (ring_create NOSPC at "
                           "\"20%\" with two thirds promised)", 1, 0, 30, 20, 40, 0, 0, 0},
    {"smallest", 61007, 1610, "the view tells rings from plain files (an empty plain file "
                              "matched a ring just created)", 0, 0, 30, 20, 30, 0, 0, 0},
    {"nor-w25q128-b4", 72001, 30, "a recovery's cold head leaves the last segment to the "
                                  "metadata head (a failed erase took one: mount NOSPC for good)",
     1, 0, 60, 0, 0, 0, 0, 0},
    {"smallest", 79009, 1673, "the view tells rings of other capacities apart (an empty ring "
                              "matched the state of one created after it)", 0, 0, 30, 20, 30, 0, 0, 0},
    {"nor-w25q128-b4", 241009, 4, "a partial run's recovery switches at the switch slot: a "
                                  "failing anchor 1 found at the run's end left no slot for "
                                  "its replacement (mount IO for good)", 1, 0, 0, 0, 0, 40, 0x1Eu, 0},
    {"nand-4k", 245031, 4, "a write past the end collects when the flush of its old tail page "
                           "meets the reserve (NOSPC at 30%)", 1, 0, 0, 0, 0, 40, 0x1Eu, 0},
    {"nand-dhara", 245197, 32, "a checkpoint retried in the other anchor with the same seq: the "
                               "mount walks that anchor (it loaded the failed copy and lost "
                               "data the replacement held)", 1, 0, 0, 0, 0, 40, 0x1Eu, 0},
    {"nand-4k", 244092, 1, "the other anchor worn at a session's first checkpoint: the NAND "
                           "standby takes it (the current anchor's next slot, cut empty, was "
                           "refused at every later mount: mount IO for good)", 1, 0, 0, 0, 0,
     40, 0x1Eu, 0},
    {"random", 334045, 10, "a recovery at 1 free after its commit collects into the head's "
                           "room; a squeeze may take the last segment (NAND 50 blocks, an "
                           "anchor retired: every remove NOSPC for good)", 1, 0, 0, 0, 0, 30, 0, 0},
    {"random", 383474, 25, "a promise inside the file's last page holds the margin (a write "
                           "inside it NOSPC; NOR 64 blocks of 4 KiB in 16 segments)", 1, 10, 30,
     20, 20, 50, 0, 1},
};

/* Every entry, or (part P of N: --regress P/N) entries P, P+N, ... */
static int run_regress(uint32_t part, uint32_t parts)
{
    size_t i, gi;
    int bad = 0;
    opt_long = 1;
    for (i = part; i < sizeof regress_runs / sizeof regress_runs[0]; i += parts) {
        const struct regress_run *rr = &regress_runs[i];
        struct stats st;
        int out = OUT_FAIL;
        memset(&st, 0, sizeof st);
        opt_long = !rr->short_run;
        opt_idle = rr->idle;
        opt_overwrite = rr->overwrite;
        opt_falloc = rr->falloc;
        opt_ring = rr->ring;
        opt_aged = rr->aged;
        opt_kinds = rr->kinds ? rr->kinds : 0x1Fu;
        opt_vary = rr->vary;
        for (gi = 0; gi < N_GEOS; gi++)
            if (strcmp(geos[gi].name, rr->geo) == 0)
                out = do_run(&geos[gi], rr->seed, rr->cuts, &st);
        printf("  regress %-16s seed %4u, %4u cuts (%s): %llu cut points, %s\n", rr->geo,
               (unsigned)rr->seed, (unsigned)rr->cuts, rr->what, (unsigned long long)st.cuts,
               out == OUT_OK ? "passed" : "FAILED");
        bad |= out != OUT_OK;
    }
    printf("torture regress: %s\n", bad ? "FAILED" : "all passed");
    return bad;
}

/* --geo: one name, a comma-separated list of names, "all" or nothing (all). */
static int geo_selected(const char *list, const char *name)
{
    size_t n = strlen(name);
    const char *p = list;
    if (!list || !*list || strcmp(list, "all") == 0)
        return strcmp(name, "random") != 0; /* only when named */
    while ((p = strstr(p, name)) != NULL) {
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
        p += n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *geo = getenv("CAIRN_TORTURE_GEO");
    uint64_t seed = t_env_u64("CAIRN_TORTURE_SEED", 1);
    uint32_t runs = (uint32_t)t_env_u64("CAIRN_TORTURE_RUNS", 0);
    uint32_t cuts = (uint32_t)t_env_u64("CAIRN_TORTURE_CUTS", 0);
    uint64_t min_cuts = t_env_u64("CAIRN_TORTURE_MIN_CUTS", 0);
    uint64_t passed = 0, failed = 0, total_cuts = 0;
    size_t gi;
    int a, any = 0;
    const char *scenario = NULL;
    int expect_failures = 0;
    t_begin("torture");
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--geo") == 0 && a + 1 < argc)
            geo = argv[++a];
        else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
            seed = strtoull(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc)
            runs = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--min-cuts") == 0 && a + 1 < argc)
            min_cuts = strtoull(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--cuts") == 0 && a + 1 < argc)
            cuts = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--kinds") == 0 && a + 1 < argc) {
            char list[128], *tok;
            size_t j;
            snprintf(list, sizeof list, "%s", argv[++a]);
            opt_kinds = 0;
            for (tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
                for (j = 0; j < 5; j++)
                    if (strcmp(tok, kind_names[j]) == 0)
                        opt_kinds |= 1u << j;
        } else if (strcmp(argv[a], "--expect-failures") == 0)
            expect_failures = 1;
        else if (strcmp(argv[a], "--long") == 0)
            opt_long = 1;
        else if (strcmp(argv[a], "--verbose") == 0)
            opt_verbose = 1;
        else if (strcmp(argv[a], "--idle") == 0 && a + 1 < argc)
            opt_idle = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--aged") == 0 && a + 1 < argc)
            opt_aged = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--overwrite") == 0 && a + 1 < argc)
            opt_overwrite = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--falloc") == 0 && a + 1 < argc)
            opt_falloc = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--ring") == 0 && a + 1 < argc)
            opt_ring = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--ro-look") == 0 && a + 1 < argc)
            opt_ro_look = (uint32_t)strtoul(argv[++a], NULL, 0);
        else if (strcmp(argv[a], "--vary") == 0)
            opt_vary = 1;
        else if (strcmp(argv[a], "--scenario") == 0 && a + 1 < argc)
            scenario = argv[++a];
        else if (strcmp(argv[a], "--find-smallest") == 0)
            return find_smallest();
        else if (strcmp(argv[a], "--regress") == 0) {
            unsigned part = 0, parts = 1;
            if (a + 1 < argc && sscanf(argv[a + 1], "%u/%u", &part, &parts) == 2 &&
                parts > 0 && part < parts)
                a++;
            else
                part = 0, parts = 1;
            return run_regress(part, parts);
        }
        else if (strcmp(argv[a], "--list") == 0) {
            for (gi = 0; gi < N_GEOS; gi++)
                printf("%s\n", geos[gi].name);
            return 0;
        } else {
            printf("usage: %s [--geo NAME|all] [--seed S] [--runs N] [--cuts N] [--min-cuts N] "
                   "[--long] [--idle PCT] [--aged PCT] [--ro-look PCT] [--kinds random,early,brownout,mount,unmount] [--expect-failures] "
                   "[--verbose] [--list] [--scenario double-tear|mount-cuts|anchor-wear] "
                   "[--find-smallest] [--regress [P/N]]\n",
                   argv[0]);
            return 2;
        }
    }
    if (scenario) {
        int bad = 0;
        for (gi = 0; gi < N_GEOS; gi++) {
            if (!geo_selected(geo, geos[gi].name))
                continue;
            if (strcmp(scenario, "double-tear") == 0)
                bad |= scenario_double_tear(&geos[gi], 3);
            else if (strcmp(scenario, "mount-cuts") == 0)
                bad |= scenario_mount_cuts(&geos[gi]);
            else if (strcmp(scenario, "anchor-wear") == 0)
                bad |= scenario_anchor_wear(&geos[gi]);
            else {
                printf("unknown scenario %s (double-tear, mount-cuts, anchor-wear)\n", scenario);
                return 2;
            }
        }
        return bad;
    }
    for (gi = 0; gi < N_GEOS; gi++) {
        const struct geo_def *g = &geos[gi];
        struct stats st;
        uint32_t nr = runs ? runs : opt_long ? g->runs_long : g->runs;
        uint32_t nc = cuts ? cuts : opt_long ? g->cuts_long : g->cuts, i;
        clock_t t0 = clock();
        if (!geo_selected(geo, g->name))
            continue;
        any = 1;
        memset(&st, 0, sizeof st);
        /* --min-cuts: more runs (seeds on) until the cut points reach it, so
         * that runs that stop at a failure do not shrink the total */
        for (i = 0; i < nr || (st.cuts < min_cuts && i < 50 * nr); i++) {
            if (do_run(g, seed + i, nc, &st) == OUT_OK)
                passed++;
            else
                failed++;
        }
        total_cuts += st.cuts;
        printf("%-16s runs %llu, cut points %llu (prefix %llu, random %llu, empty %llu, none %llu), "
               "plug pulls %llu, remounts %llu, cuts inside mount %llu, early-session cuts "
               "%llu, brown-out loops %llu, IO reboots %llu, NOSPC %llu, failures injected "
               "%llu, emptied-volume checks %llu, formats refused (bad blocks) %llu, failed runs %llu, "
               "%.1f s\n",
               g->name, (unsigned long long)st.runs, (unsigned long long)st.cuts,
               (unsigned long long)st.cuts_prefix, (unsigned long long)st.cuts_random,
               (unsigned long long)st.cuts_empty, (unsigned long long)st.cuts_none, (unsigned long long)st.pulls,
               (unsigned long long)st.remounts, (unsigned long long)st.mount_cuts,
               (unsigned long long)st.early_cuts, (unsigned long long)st.brownouts,
               (unsigned long long)st.io_reboots, (unsigned long long)st.nospc,
               (unsigned long long)st.injected, (unsigned long long)st.leak_checks,
               (unsigned long long)st.format_refused, (unsigned long long)st.failed_runs,
               (double)(clock() - t0) / CLOCKS_PER_SEC);
        if (opt_falloc)
            printf("%-16s fallocate promises %llu, writes inside one %llu\n", g->name,
                   (unsigned long long)st.promises, (unsigned long long)st.promised_writes);
        if (opt_ring)
            printf("%-16s rings created %llu, ring writes %llu (%llu past the capacity)\n",
                   g->name, (unsigned long long)st.rings, (unsigned long long)st.ring_writes,
                   (unsigned long long)st.ring_wraps);
        if (opt_ro_look)
            printf("%-16s read-only looks after a cut %llu (R10), most cache slots a replay "
                   "took %llu\n", g->name, (unsigned long long)st.ro_looks,
                   (unsigned long long)st.ro_slots_max);
        fflush(stdout);
    }
    if (!any) {
        printf("unknown geometry %s (--list shows them)\n", geo ? geo : "");
        return 2;
    }
    printf("total cut points %llu\n", (unsigned long long)total_cuts);
    printf("torture: %llu passed, %llu failed\n", (unsigned long long)passed,
           (unsigned long long)failed);
    if (expect_failures) { /* known-failures switch: see CMakeLists.txt */
        printf("torture: --expect-failures: %s\n",
               failed ? "runs failed as expected while the core is being fixed (exit 0)"
                      : "no run failed: drop --expect-failures (exit 1)");
        return failed ? 0 : 1;
    }
    return failed ? 1 : 0;
}
