/*
 * Simulator fault injection: power cuts with every tear mode for programs and
 * erases, weak blocks, factory bad blocks, wear-out, failed operations, bit
 * flips, and determinism.
 */
#include <stdio.h>
#include <string.h>

#include "simutil.h"

#define IO CAIRN_DEV_IO

/* While powered off, every call fails with CAIRN_DEV_IO (even a bad one). */
static int all_io(csim *s)
{
    struct cairn_dev *d = csim_dev(s);
    uint8_t b[64];
    memset(b, 0, sizeof(b));
    return !csim_powered(s) && d->read(d->ctx, 0, 0, b, 1) == IO &&
           d->read(d->ctx, 0xFFFFFFFFu, 0, b, 1) == IO &&
           d->prog(d->ctx, 0, 0, b, 1, NULL, 0) == IO &&
           d->erase(d->ctx, 0) == IO && d->is_bad(d->ctx, 0) == IO &&
           d->mark_bad(d->ctx, 0) == IO && d->sync(d->ctx) == IO &&
           (!d->read_spare || d->read_spare(d->ctx, 0, b, 1) == IO);
}

/* Length of the prefix of p equal to want; then checks the rest equals old. */
static size_t prefix_len(const uint8_t *p, const uint8_t *want,
                         const uint8_t *old, size_t n, int *ok)
{
    size_t k = 0;
    while (k < n && p[k] == want[k])
        k++;
    *ok = memcmp(p + k, old + k, n - k) == 0;
    return k;
}

static void test_cut_basics(void)
{
    csim *s = sim_open("nor-w25q128", 8, 1);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[256], p[256];
    int r;

    memset(a, 0, sizeof(a));
    CHECK(d->prog(d->ctx, 0, 0, a, 16, NULL, 0) == 0, "cut: op 0 programs");
    csim_cut_at(s, 3, CSIM_TEAR_NONE);
    r = d->prog(d->ctx, 0, 16, a, 16, NULL, 0) |
        d->prog(d->ctx, 0, 32, a, 16, NULL, 0);
    CHECK(r == 0 && csim_powered(s), "cut: ops 1 and 2 before the cut succeed");
    CHECK(d->prog(d->ctx, 0, 0, (uint8_t[]){0xFF}, 1, NULL, 0) == CAIRN_DEV_RULE &&
              csim_powered(s),
          "cut: a violating call neither takes the index nor cuts");
    CHECK(d->read(d->ctx, 0, 0, p, 256) == 0, "cut: reads before the cut work");
    CHECK(d->prog(d->ctx, 0, 48, a, 16, NULL, 0) == IO,
          "cut: op 3 is cut (IO)");
    CHECK(all_io(s), "cut: afterwards every call (read, read beyond the "
                     "device, prog, erase, is_bad, mark_bad, sync) gives IO");
    csim_peek(s, 0, p, NULL);
    CHECK(all_bytes(p, 48, 0) && all_bytes(p + 48, 208, 0xFF),
          "cut: NONE tear: op 3 did nothing, earlier ops kept");
    csim_power_on(s);
    CHECK(csim_powered(s) && sim_cnt(s).mutating_ops == 0,
          "cut: power_on restores power, mutating_ops restarts at 0");
    CHECK(d->read(d->ctx, 0, 0, p, 16) == 0 && all_bytes(p, 16, 0),
          "cut: reads work after power_on");
    csim_cut_at(s, 0, CSIM_TEAR_PREFIX);
    csim_cut_cancel(s);
    CHECK(d->erase(d->ctx, 0) == 0 && csim_powered(s), "cut: cut_cancel");
    csim_cut_at(s, 2, CSIM_TEAR_PREFIX); /* the erase above was op 0 */
    CHECK(d->erase(d->ctx, 1) == 0 && d->erase(d->ctx, 2) == IO &&
              !csim_powered(s),
          "cut: index counts erases too");
    csim_free(s);
}

static void test_prog_prefix(void)
{
    uint8_t a[4 * 2048], p[4 * 2048], ff[4 * 2048], sp[32], spr[32];
    uint64_t seed;
    int ok = 1, ok2 = 1, ok3 = 1, nop_ok = 1, spare_ok = 1, okd;
    size_t kmin = (size_t)-1, kmax = 0, k;

    memset(ff, 0xFF, sizeof(ff));
    memset(a, 0, 256);
    /* NOR: a prefix of the bytes */
    for (seed = 1; seed <= 40; seed++) {
        csim *s = sim_open("nor-w25q128", 4, seed);
        struct cairn_dev *d = csim_dev(s);
        csim_cut_at(s, 0, CSIM_TEAR_PREFIX);
        ok &= d->prog(d->ctx, 5, 0, a, 256, NULL, 0) == IO && all_io(s);
        csim_power_on(s);
        csim_peek(s, 5, p, NULL);
        k = prefix_len(p, a, ff, 256, &okd);
        ok &= okd && k < 256;
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
        csim_free(s);
    }
    CHECK(ok, "prefix: NOR torn program wrote a strict prefix (40 seeds)");
    CHECK(kmax - kmin > 100, "prefix: prefix lengths spread (%lu..%lu)",
          (unsigned long)kmin, (unsigned long)kmax);

    /* NAND (NOP 1): multi-page program torn: whole pages + a prefix; the page
     * the cut fell in cannot be programmed again, the next one can */
    pattern(a, sizeof(a), 9);
    for (seed = 1; seed <= 40; seed++) {
        csim *s = sim_open("nand-dhara", 4, seed);
        struct cairn_dev *d = csim_dev(s);
        uint32_t pg;
        csim_cut_at(s, 0, CSIM_TEAR_PREFIX);
        ok2 &= d->prog(d->ctx, 0, 0, a, 4 * 2048, NULL, 0) == IO;
        csim_power_on(s);
        for (pg = 0; pg < 4; pg++)
            csim_peek(s, pg, p + pg * 2048, NULL);
        k = prefix_len(p, a, ff, 4 * 2048, &okd);
        ok2 &= okd && k < 4 * 2048;
        pg = (uint32_t)(k / 2048);
        nop_ok &= d->prog(d->ctx, pg, 0, a, 1, NULL, 0) == CAIRN_DEV_RULE;
        if (pg < 3)
            nop_ok &= d->prog(d->ctx, pg + 1, 0, a, 2048, NULL, 0) == 0;
        csim_free(s);
    }
    CHECK(ok2, "prefix: NAND 4-page torn program = whole pages + a prefix");
    CHECK(nop_ok, "prefix: the torn page counted toward NOP 1, the next page "
                  "is still programmable");

    /* NAND: spare programmed only once the data part completed */
    memset(sp, 0x00, sizeof(sp));
    for (seed = 1; seed <= 200; seed++) {
        csim *s = sim_open("nand-jffs2", 4, seed);
        struct cairn_dev *d = csim_dev(s);
        csim_cut_at(s, 0, CSIM_TEAR_PREFIX);
        ok3 &= d->prog(d->ctx, 0, 0, a, 2048, sp, 32) == IO;
        csim_power_on(s);
        csim_peek(s, 0, p, spr);
        if (!all_bytes(spr, 32, 0xFF))
            spare_ok &= memcmp(p, a, 2048) == 0;
        csim_free(s);
    }
    CHECK(ok3 && spare_ok,
          "prefix: spare of a torn NAND program only after the data (200 seeds)");

    /* BLOCK: a byte prefix of the sectors */
    {
        csim *s = sim_open("sd-tf", 2, 3);
        struct cairn_dev *d = csim_dev(s);
        uint8_t old[4096];
        pattern(old, sizeof(old), 1);
        pattern(a, sizeof(old), 2);
        d->prog(d->ctx, 8, 0, old, 4096, NULL, 0);
        csim_cut_at(s, 1, CSIM_TEAR_PREFIX);
        CHECK(d->prog(d->ctx, 8, 0, a, 4096, NULL, 0) == IO, "prefix: sd-tf cut");
        csim_power_on(s);
        for (k = 0; k < 8; k++)
            csim_peek(s, (uint32_t)(8 + k), p + k * 512, NULL);
        k = prefix_len(p, a, old, 4096, &okd);
        CHECK(okd && k < 4096,
              "prefix: sd-tf torn write: new prefix (%lu bytes), old rest",
              (unsigned long)k);
        csim_free(s);
    }
}

static void test_prog_random(void)
{
    uint8_t a[8 * 512], p[8 * 512], sp[32], spr[32];
    uint64_t seed;
    int i, ok = 1, ok_nor = 1, ok_blk = 1, partial = 1, seen_mid = 0;

    /* NAND: a random subset of the bits the program clears */
    pattern(a, 2048, 4);
    memset(sp, 0x00, sizeof(sp));
    for (seed = 1; seed <= 10; seed++) {
        csim *s = sim_open("nand-dhara", 4, seed);
        struct cairn_dev *d = csim_dev(s);
        csim_cut_at(s, 0, CSIM_TEAR_RANDOM);
        ok &= d->prog(d->ctx, 3, 0, a, 2048, sp, 32) == IO;
        csim_power_on(s);
        csim_peek(s, 3, p, spr);
        for (i = 0; i < 2048; i++)
            ok &= (p[i] & a[i]) == a[i]; /* only bits the program clears */
        partial &= memcmp(p, a, 2048) != 0 && !all_bytes(p, 2048, 0xFF) &&
                   !all_bytes(spr, 32, 0xFF) && !all_bytes(spr, 32, 0x00);
        ok &= d->prog(d->ctx, 3, 0, a, 2048, NULL, 0) == CAIRN_DEV_RULE;
        csim_free(s);
    }
    CHECK(ok, "random: NAND torn program cleared only bits it would clear, "
              "and counted toward NOP");
    CHECK(partial, "random: some but not all bits cleared, data and spare");

    /* NOR: same on a page holding older data */
    for (seed = 1; seed <= 10; seed++) {
        csim *s = sim_open("nor-m25p16", 2, seed);
        struct cairn_dev *d = csim_dev(s);
        uint8_t old[256], want[256];
        memset(old, 0xF0, 256);
        for (i = 0; i < 256; i++)
            want[i] = (uint8_t)(old[i] & a[i]);
        d->prog(d->ctx, 1, 0, old, 256, NULL, 0);
        csim_cut_at(s, 1, CSIM_TEAR_RANDOM);
        ok_nor &= d->prog(d->ctx, 1, 0, want, 256, NULL, 0) == IO;
        csim_power_on(s);
        csim_peek(s, 1, p, NULL);
        for (i = 0; i < 256; i++)
            ok_nor &= (p[i] & want[i]) == want[i] && (p[i] & ~old[i]) == 0;
        ok_nor &= memcmp(p, want, 256) != 0 && memcmp(p, old, 256) != 0;
        csim_free(s);
    }
    CHECK(ok_nor, "random: NOR torn program between old and new, bitwise");

    /* BLOCK: sectors before the tear new, the torn one mixed, later ones old */
    for (seed = 1; seed <= 10; seed++) {
        csim *s = sim_open("sd-tf", 2, seed);
        struct cairn_dev *d = csim_dev(s);
        uint8_t old[8 * 512];
        uint32_t k = 0, sec;
        pattern(old, sizeof(old), 11);
        pattern(a, sizeof(a), 12);
        d->prog(d->ctx, 0, 0, old, sizeof(old), NULL, 0);
        csim_cut_at(s, 1, CSIM_TEAR_RANDOM);
        ok_blk &= d->prog(d->ctx, 0, 0, a, sizeof(a), NULL, 0) == IO;
        csim_power_on(s);
        for (sec = 0; sec < 8; sec++)
            csim_peek(s, sec, p + sec * 512, NULL);
        while (k < 8 && memcmp(p + k * 512, a + k * 512, 512) == 0)
            k++;
        if (k < 8) {
            int nnew = 0, nold = 0;
            for (i = 0; i < 512; i++) {
                size_t j = (size_t)k * 512 + (size_t)i;
                ok_blk &= p[j] == a[j] || p[j] == old[j];
                nnew += p[j] == a[j];
                nold += p[j] == old[j];
            }
            seen_mid |= nnew > 100 && nold > 100;
            ok_blk &= k + 1 >= 8 ||
                      memcmp(p + (k + 1) * 512, old + (k + 1) * 512,
                             (7 - k) * 512) == 0;
        }
        csim_free(s);
    }
    CHECK(ok_blk && seen_mid,
          "random: sd-tf torn write: new sectors, one mixed sector, old rest");
}

static void test_prog_none(void)
{
    csim *s = sim_open("nand-jffs2", 2, 5);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[2048], p[2048];
    pattern(a, sizeof(a), 1);
    csim_cut_at(s, 0, CSIM_TEAR_NONE);
    CHECK(d->prog(d->ctx, 0, 0, a, 2048, NULL, 0) == IO && all_io(s),
          "none: NAND program cut");
    csim_power_on(s);
    csim_peek(s, 0, p, NULL);
    CHECK(all_bytes(p, 2048, 0xFF) && d->prog(d->ctx, 0, 0, a, 2048, NULL, 0) == 0,
          "none: nothing programmed, page still programmable");
    csim_free(s);
}

/* EMPTY: the cut program stores nothing, yet on NAND the page counts as
 * programmed (nand-dhara, NOP 1: a second program is a rule violation);
 * on NOR the bytes may be programmed again. A cut erase erases nothing. */
static void test_prog_empty(void)
{
    csim *s = sim_open("nand-dhara", 2, 5);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[2048], p[2048];
    pattern(a, sizeof(a), 2);
    csim_cut_at(s, 0, CSIM_TEAR_EMPTY);
    CHECK(d->prog(d->ctx, 1, 0, a, 2048, NULL, 0) == IO && all_io(s), "empty: NAND program cut");
    csim_power_on(s);
    csim_peek(s, 1, p, NULL);
    CHECK(all_bytes(p, 2048, 0xFF), "empty: the page reads erased");
    CHECK(d->prog(d->ctx, 1, 0, a, 2048, NULL, 0) == CAIRN_DEV_RULE,
          "empty: a second program of that NAND page breaks NOP 1");
    CHECK(d->erase(d->ctx, 0) == 0 && d->prog(d->ctx, 1, 0, a, 2048, NULL, 0) == 0,
          "empty: programmable again after an erase");
    csim_cut_at(s, sim_cnt(s).mutating_ops, CSIM_TEAR_EMPTY);
    CHECK(d->erase(d->ctx, 0) == IO, "empty: NAND erase cut");
    csim_power_on(s);
    csim_peek(s, 1, p, NULL);
    CHECK(memcmp(p, a, sizeof(a)) == 0, "empty: a cut erase erased nothing");
    csim_free(s);
    s = sim_open("nor-w25q128", 2, 5);
    d = csim_dev(s);
    csim_cut_at(s, 0, CSIM_TEAR_EMPTY);
    CHECK(d->prog(d->ctx, 0, 0, a, 256, NULL, 0) == IO, "empty: NOR program cut");
    csim_power_on(s);
    csim_peek(s, 0, p, NULL);
    CHECK(all_bytes(p, 256, 0xFF) && d->prog(d->ctx, 0, 0, a, 256, NULL, 0) == 0,
          "empty: NOR bytes still programmable");
    csim_free(s);
}

static void fill_block(csim *s, uint32_t block, uint8_t v)
{
    struct cairn_dev *d = csim_dev(s);
    const struct cairn_geometry *g = csim_geometry(s);
    uint8_t *b = xmalloc(g->page_size), sp[32];
    uint32_t i;
    memset(b, v, g->page_size);
    memset(sp, v, sizeof(sp));
    for (i = 0; i < g->pages_per_block; i++)
        d->prog(d->ctx, block * g->pages_per_block + i, 0, b, g->page_size,
                g->spare_size ? sp : NULL, g->spare_size);
    free(b);
}

static void test_erase_tears(void)
{
    uint8_t p[64 << 10], zero[64 << 10], ff[64 << 10], sp[32];
    uint64_t seed;
    int ok = 1, rule_ok = 1;
    size_t k, kmin = (size_t)-1, kmax = 0;
    int okd;

    memset(zero, 0, sizeof(zero));
    memset(ff, 0xFF, sizeof(ff));
    /* PREFIX on NOR: bytes [0, n) erased */
    for (seed = 1; seed <= 20; seed++) {
        csim *s = sim_open("nor-w25q128", 4, seed);
        struct cairn_dev *d = csim_dev(s);
        uint32_t i;
        fill_block(s, 1, 0x00);
        csim_cut_at(s, 16, CSIM_TEAR_PREFIX);
        ok &= d->erase(d->ctx, 1) == IO && all_io(s);
        csim_power_on(s);
        for (i = 0; i < 16; i++)
            csim_peek(s, 16 + i, p + i * 256, NULL);
        k = prefix_len(p, ff, zero, 4096, &okd);
        ok &= okd && k < 4096 && csim_erase_count(s, 1) == 1;
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
        csim_free(s);
    }
    CHECK(ok && kmax > kmin, "erase prefix: NOR block erased up to a byte "
                             "(%lu..%lu of 4096), rest kept",
          (unsigned long)kmin, (unsigned long)kmax);

    /* PREFIX on NAND: fully erased pages lose their spare, later pages keep
     * data, spare and program counts: page 0 cannot be programmed before a
     * new erase */
    ok = 1;
    for (seed = 1; seed <= 10; seed++) {
        csim *s = sim_open("nand-jffs2", 4, seed);
        struct cairn_dev *d = csim_dev(s);
        uint32_t pg, full;
        fill_block(s, 0, 0x00);
        csim_cut_at(s, 64, CSIM_TEAR_PREFIX);
        ok &= d->erase(d->ctx, 0) == IO;
        csim_power_on(s);
        full = 0;
        for (pg = 0; pg < 64; pg++) {
            csim_peek(s, pg, p, sp);
            if (all_bytes(p, 2048, 0xFF) && all_bytes(sp, 32, 0xFF) && full == pg)
                full++;
        }
        for (pg = full + 1; pg < 64; pg++) {
            csim_peek(s, pg, p, sp);
            ok &= all_bytes(p, 2048, 0) && all_bytes(sp, 32, 0);
        }
        if (full < 63)
            rule_ok &= d->prog(d->ctx, 0, 0, zero, 2048, NULL, 0) ==
                       CAIRN_DEV_RULE;
        ok &= d->erase(d->ctx, 0) == 0 &&
              d->prog(d->ctx, 0, 0, zero, 2048, NULL, 0) == 0;
        csim_free(s);
    }
    CHECK(ok, "erase prefix: NAND pages erased in order, later pages intact, "
              "a full erase recovers");
    CHECK(rule_ok, "erase prefix: programming page 0 of a half-erased NAND "
                   "block is a violation");

    /* BLOCK: PREFIX discards a prefix of whole sectors, RANDOM all of them */
    {
        static uint8_t old[4 << 20];
        int t;
        pattern(old, sizeof(old), 21);
        for (t = 0; t < 2; t++) {
            csim *s = sim_open("sd-tf", 2, 8);
            struct cairn_dev *d = csim_dev(s);
            uint32_t sec, i;
            d->prog(d->ctx, 8192, 0, old, sizeof(old), NULL, 0);
            csim_cut_at(s, 1, t ? CSIM_TEAR_RANDOM : CSIM_TEAR_PREFIX);
            CHECK(d->erase(d->ctx, 1) == IO, "erase %s: sd-tf discard cut",
                  t ? "random" : "prefix");
            csim_power_on(s);
            for (sec = 0; sec < 8192 && (csim_peek(s, 8192 + sec, p, NULL),
                                         all_bytes(p, 512, 0xFF));
                 sec++)
                ;
            ok = 1;
            for (i = sec; i < 8192; i++) {
                csim_peek(s, 8192 + i, p, NULL);
                ok &= memcmp(p, old + (size_t)i * 512, 512) == 0;
            }
            if (t)
                CHECK(sec == 8192, "erase random: sd-tf discard completes");
            else
                CHECK(ok && sec < 8192,
                      "erase prefix: sd-tf first %lu sectors discarded, the "
                      "rest intact",
                      (unsigned long)sec);
            csim_free(s);
        }
    }

    /* NONE: nothing erased */
    {
        csim *s = sim_open("nand-dhara", 2, 1);
        struct cairn_dev *d = csim_dev(s);
        fill_block(s, 1, 0x3C);
        csim_cut_at(s, 64, CSIM_TEAR_NONE);
        CHECK(d->erase(d->ctx, 1) == IO, "erase none: cut");
        csim_power_on(s);
        csim_peek(s, 64 + 17, p, sp);
        CHECK(all_bytes(p, 2048, 0x3C) && all_bytes(sp, 32, 0x3C) &&
                  csim_erase_count(s, 1) == 0,
              "erase none: block untouched");
        csim_free(s);
    }
}

static void test_weak(void)
{
    uint8_t a[2048], p[2048], sp[32];
    int r, n_ok = 0, n_corr = 0, n_unc = 0, data_ok = 1, pg;
    struct csim_counters c;

    /* NAND: RANDOM torn erase -> reads erased, later pages report ECC */
    {
        csim *s = sim_open("nand-jffs2", 4, 77);
        struct cairn_dev *d = csim_dev(s);
        fill_block(s, 1, 0x00);
        csim_cut_at(s, 64, CSIM_TEAR_RANDOM);
        CHECK(d->erase(d->ctx, 1) == IO, "weak: NAND erase cut (RANDOM)");
        csim_power_on(s);
        r = d->read(d->ctx, 64, 0, p, 2048);
        CHECK(r == 0 && all_bytes(p, 2048, 0xFF) &&
                  d->read_spare(d->ctx, 64 + 63, sp, 32) == 0 &&
                  all_bytes(sp, 32, 0xFF),
              "weak: the block reads erased");
        csim_reset_counters(s);
        for (pg = 0; pg < 64; pg++) {
            pattern(a, 2048, (uint32_t)pg);
            d->prog(d->ctx, (uint32_t)(64 + pg), 0, a, 2048, NULL, 0);
            r = d->read(d->ctx, (uint32_t)(64 + pg), 0, p, 2048);
            if (r == CAIRN_DEV_OK)
                n_ok++;
            else if (r == CAIRN_DEV_CORRECTED)
                n_corr++, data_ok &= memcmp(p, a, 2048) == 0;
            else if (r == CAIRN_DEV_UNCORRECTABLE)
                n_unc++, data_ok &= memcmp(p, a, 2048) != 0;
        }
        csim_counters(s, &c);
        CHECK(n_ok == 0 && n_corr > 0 && n_unc > 0 && data_ok,
              "weak: 64 pages programmed later: %d corrected (data right), %d "
              "uncorrectable (data wrong), %d clean",
              n_corr, n_unc, n_ok);
        CHECK(c.corrected == (uint64_t)n_corr && c.uncorrectable == (uint64_t)n_unc,
              "weak: counters.corrected / uncorrectable");
        CHECK(d->read(d->ctx, 128, 0, p, 2048) == 0,
              "weak: other blocks read clean");
        CHECK(d->erase(d->ctx, 1) == 0 &&
                  d->prog(d->ctx, 64, 0, a, 2048, NULL, 0) == 0 &&
                  d->read(d->ctx, 64, 0, p, 2048) == 0 && memcmp(p, a, 2048) == 0,
              "weak: a complete erase makes the block healthy again");
        csim_free(s);
    }
    /* NOR: silently wrong bits (1 -> 0) */
    {
        csim *s = sim_open("nor-w25q128", 4, 5);
        struct cairn_dev *d = csim_dev(s);
        int wrong = 0, only_cleared = 1, status_ok = 1, i;
        fill_block(s, 2, 0x00);
        csim_cut_at(s, 16, CSIM_TEAR_RANDOM);
        CHECK(d->erase(d->ctx, 2) == IO, "weak: NOR erase cut (RANDOM)");
        csim_power_on(s);
        CHECK(d->read(d->ctx, 32, 0, p, 2048) == 0 && all_bytes(p, 2048, 0xFF),
              "weak: NOR block reads erased");
        for (pg = 0; pg < 16; pg++) {
            pattern(a, 256, (uint32_t)pg + 100);
            d->prog(d->ctx, (uint32_t)(32 + pg), 0, a, 256, NULL, 0);
            status_ok &= d->read(d->ctx, (uint32_t)(32 + pg), 0, p, 256) == 0;
            if (memcmp(p, a, 256) != 0)
                wrong++;
            for (i = 0; i < 256; i++)
                only_cleared &= (p[i] & ~a[i]) == 0;
        }
        CHECK(status_ok && wrong >= 12 && only_cleared,
              "weak: NOR pages read OK but %d of 16 hold bits cleared 1->0",
              wrong);
        CHECK(d->erase(d->ctx, 2) == 0 &&
                  d->prog(d->ctx, 32, 0, a, 256, NULL, 0) == 0 &&
                  d->read(d->ctx, 32, 0, p, 256) == 0 && memcmp(p, a, 256) == 0,
              "weak: NOR block healthy after a complete erase");
        csim_free(s);
    }
}

static void test_bad_blocks(void)
{
    csim *s = sim_open("nand-jffs2", 8, 1);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[2048], p[2048];
    uint64_t i0;
    int ok, k;

    pattern(a, sizeof(a), 1);
    csim_set_factory_bad(s, 3);
    CHECK(d->is_bad(d->ctx, 3) == 1 && d->is_bad(d->ctx, 2) == 0,
          "bad: factory bad block reported by is_bad");
    CHECK(d->prog(d->ctx, 3 * 64, 0, a, 2048, NULL, 0) == CAIRN_DEV_PROG_FAIL,
          "bad: program into a factory bad block fails");
    CHECK(d->erase(d->ctx, 3) == CAIRN_DEV_ERASE_FAIL,
          "bad: erase of a factory bad block fails");
    CHECK(d->read(d->ctx, 3 * 64, 0, p, 2048) >= 0,
          "bad: a factory bad block can be read (content meaningless)");

    /* wear-out after 3 more erases */
    csim_wear_out_after(s, 2, 3);
    ok = 1;
    for (k = 0; k < 3; k++)
        ok &= d->erase(d->ctx, 2) == 0;
    CHECK(ok, "wear: 3 erases succeed");
    CHECK(d->erase(d->ctx, 2) == CAIRN_DEV_ERASE_FAIL, "wear: 4th erase fails");
    CHECK(d->prog(d->ctx, 2 * 64, 0, a, 2048, NULL, 0) == CAIRN_DEV_PROG_FAIL,
          "wear: programs into the worn block fail");
    CHECK(d->is_bad(d->ctx, 2) == 0 && d->mark_bad(d->ctx, 2) == 0 &&
              d->is_bad(d->ctx, 2) == 1,
          "wear: is_bad only after mark_bad");
    CHECK(csim_erase_count(s, 2) == 3, "wear: erase count 3");
    /* worn out now: programs fail without an erase first, the data stays */
    CHECK(d->prog(d->ctx, 1 * 64, 0, a, 2048, NULL, 0) == 0, "wear now: a program before");
    csim_wear_out_now(s, 1);
    CHECK(d->prog(d->ctx, 1 * 64 + 1, 0, a, 2048, NULL, 0) == CAIRN_DEV_PROG_FAIL &&
              d->erase(d->ctx, 1) == CAIRN_DEV_ERASE_FAIL,
          "wear now: the next program and erase fail");
    CHECK(d->read(d->ctx, 1 * 64, 0, p, 2048) >= 0 && memcmp(p, a, 2048) == 0,
          "wear now: the data written before reads back");

    /* fail_op: program */
    i0 = sim_cnt(s).mutating_ops;
    csim_fail_op(s, i0 + 1);
    CHECK(d->prog(d->ctx, 4 * 64, 0, a, 2048, NULL, 0) == 0,
          "fail_op: op before the chosen index succeeds");
    CHECK(d->prog(d->ctx, 4 * 64 + 1, 0, a, 2048, NULL, 0) == CAIRN_DEV_PROG_FAIL,
          "fail_op: chosen program fails");
    csim_peek(s, 4 * 64 + 1, p, NULL);
    CHECK(all_bytes(p, 2048, 0xFF), "fail_op: failed program changed nothing");
    CHECK(d->prog(d->ctx, 4 * 64 + 2, 0, a, 2048, NULL, 0) == CAIRN_DEV_PROG_FAIL &&
              d->erase(d->ctx, 4) == CAIRN_DEV_ERASE_FAIL,
          "fail_op: the block went bad (programs and erases fail)");
    CHECK(d->prog(d->ctx, 5 * 64, 0, a, 2048, NULL, 0) == 0,
          "fail_op: other blocks unaffected");
    /* fail_op: erase */
    csim_fail_op(s, sim_cnt(s).mutating_ops);
    CHECK(d->erase(d->ctx, 5) == CAIRN_DEV_ERASE_FAIL &&
              (csim_peek(s, 5 * 64, p, NULL), memcmp(p, a, 2048) == 0),
          "fail_op: chosen erase fails and leaves the data");
    /* fail_op: cancelled, and forgotten at power-on (indexes restart) */
    csim_fail_op(s, sim_cnt(s).mutating_ops);
    csim_fail_cancel(s);
    CHECK(d->erase(d->ctx, 6) == 0, "fail_op: a cancelled failure does not fire");
    csim_fail_op(s, sim_cnt(s).mutating_ops + 5);
    csim_cut_at(s, sim_cnt(s).mutating_ops, CSIM_TEAR_NONE);
    (void)d->erase(d->ctx, 7);
    csim_power_on(s);
    for (i0 = 0; i0 < 8; i0++)
        if (d->erase(d->ctx, 7) != 0)
            break;
    CHECK(i0 == 8, "fail_op: a failure pending at a cut does not fire after power-on");
    csim_free(s);
}

static void test_bitflips(void)
{
    csim *s = sim_open("nand-jffs2", 4, 42);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[4 * 2048], p[4 * 2048];
    uint32_t i, n = 200000;
    uint32_t n_ok = 0, n_corr = 0, n_unc = 0;
    int data_ok = 1, r;
    struct csim_counters c;

    pattern(a, sizeof(a), 3);
    d->prog(d->ctx, 0, 0, a, sizeof(a), NULL, 0);
    csim_set_bitflips(s, 20000, 5000); /* 2% corrected, 0.5% uncorrectable */
    csim_reset_counters(s);
    for (i = 0; i < n; i++) {
        uint32_t pg = i % 4, off = (i * 37) % 1900;
        r = d->read(d->ctx, pg, off, p, 64);
        if (r == CAIRN_DEV_OK)
            n_ok++, data_ok &= memcmp(p, a + pg * 2048 + off, 64) == 0;
        else if (r == CAIRN_DEV_CORRECTED)
            n_corr++, data_ok &= memcmp(p, a + pg * 2048 + off, 64) == 0;
        else
            n_unc++, data_ok &= memcmp(p, a + pg * 2048 + off, 64) != 0;
    }
    csim_counters(s, &c);
    /* expected 4000 +- 63 and 1000 +- 32 (1 sigma) */
    CHECK(n_corr > 3700 && n_corr < 4300,
          "flips: %lu corrected of %lu page reads at 20000 ppm",
          (unsigned long)n_corr, (unsigned long)n);
    CHECK(n_unc > 850 && n_unc < 1150,
          "flips: %lu uncorrectable of %lu page reads at 5000 ppm",
          (unsigned long)n_unc, (unsigned long)n);
    CHECK(data_ok, "flips: buffer intact for OK and CORRECTED, flipped for "
                   "UNCORRECTABLE");
    CHECK(c.corrected == n_corr && c.uncorrectable == n_unc,
          "flips: counters match");
    csim_peek(s, 1, p, NULL);
    CHECK(memcmp(p, a + 2048, 2048) == 0, "flips: stored data never changed");
    /* a 4-page read reports the worst page */
    csim_set_bitflips(s, 0, 1000000);
    CHECK(d->read(d->ctx, 0, 0, p, 4 * 2048) == CAIRN_DEV_UNCORRECTABLE,
          "flips: multi-page read reports uncorrectable");
    csim_set_bitflips(s, 1000000, 0);
    CHECK(d->read(d->ctx, 0, 0, p, 4 * 2048) == CAIRN_DEV_CORRECTED &&
              memcmp(p, a, sizeof(a)) == 0,
          "flips: corrected multi-page read returns correct data");
    CHECK(d->read_spare(d->ctx, 0, p, 32) == CAIRN_DEV_CORRECTED,
          "flips: spare reads draw too");
    csim_set_bitflips(s, 0, 0);
    CHECK(d->read(d->ctx, 0, 0, p, 2048) == 0, "flips: rates 0 -> clean");
    csim_free(s);

    /* NOR and BLOCK ignore bit flip rates */
    s = sim_open("nor-m25p16", 2, 1);
    d = csim_dev(s);
    csim_set_bitflips(s, 1000000, 1000000);
    r = d->read(d->ctx, 0, 0, p, 256);
    CHECK(r == 0 && all_bytes(p, 256, 0xFF), "flips: ignored on NOR");
    csim_free(s);
    s = sim_open("sd-tf", 2, 1);
    d = csim_dev(s);
    csim_set_bitflips(s, 1000000, 1000000);
    r = d->read(d->ctx, 0, 0, p, 512);
    CHECK(r == 0 && all_bytes(p, 512, 0xFF), "flips: ignored on BLOCK");
    csim_free(s);
}

static void mix(uint64_t *h, int64_t v)
{
    *h = (*h ^ (uint64_t)v) * 1099511628211u;
}

/* A run mixing every random choice; returns a hash of all it observed. */
static uint64_t run(uint64_t seed)
{
    csim *s = sim_open("nand-jffs2", 4, seed);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[2048], p[2048], sp[32];
    uint64_t h = 1469598103934665603ull;
    uint32_t i, k;

#define MIX(v) mix(&h, (int64_t)(v))
    pattern(a, sizeof(a), 1);
    memset(sp, 0, sizeof(sp));
    fill_block(s, 0, 0x00);
    csim_cut_at(s, 64, CSIM_TEAR_RANDOM); /* weak erase of block 0 */
    MIX(d->erase(d->ctx, 0));
    csim_power_on(s);
    csim_set_bitflips(s, 50000, 20000);
    for (i = 0; i < 32; i++)
        MIX(d->prog(d->ctx, i, 0, a, 2048, sp, 32));
    csim_cut_at(s, 40, CSIM_TEAR_PREFIX);
    for (i = 64; i < 128 && csim_powered(s); i++)
        MIX(d->prog(d->ctx, i, 0, a, 2048, sp, 32));
    csim_power_on(s);
    for (i = 0; i < 1000; i++) {
        MIX(d->read(d->ctx, i % 128, 0, p, 2048));
        for (k = 0; k < 2048; k += 64)
            MIX((uint32_t)p[k] | (uint32_t)p[k + 1] << 8);
    }
    for (i = 0; i < 128; i++) {
        csim_peek(s, i, p, sp);
        for (k = 0; k < 2048; k++)
            MIX(p[k]);
        for (k = 0; k < 32; k++)
            MIX(sp[k]);
    }
    MIX(sim_cnt(s).corrected);
    MIX(sim_cnt(s).uncorrectable);
#undef MIX
    csim_free(s);
    return h;
}

static void test_determinism(void)
{
    uint64_t a = run(1234), b = run(1234), c = run(1235);
    CHECK(a == b, "determinism: same seed, same observations (%016llx)",
          (unsigned long long)a);
    CHECK(a != c, "determinism: another seed, other observations");
}

int main(void)
{
    test_cut_basics();
    test_prog_prefix();
    test_prog_random();
    test_prog_none();
    test_prog_empty();
    test_erase_tears();
    test_weak();
    test_bad_blocks();
    test_bitflips();
    test_determinism();
    return check_done("sim_faults");
}
