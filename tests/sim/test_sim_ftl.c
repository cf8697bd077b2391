/*
 * Simulator: the sd-tf card model (hybrid log-block FTL). Sequential aligned
 * writers get a card write amplification (WAF) of 1.0; interleaved writers
 * over more AUs than the card keeps open force merges and copies; discard
 * stops copies.
 */
#include <stdio.h>
#include <string.h>

#include "simutil.h"

#define SPA 8192u          /* sectors per AU */
#define AU (4u << 20)      /* bytes per AU */

static uint8_t buf[4 << 20];

static double waf(const csim *s)
{
    struct csim_counters c = sim_cnt(s);
    return c.prog_bytes ? (double)c.ftl_prog_pages * 16384.0 / (double)c.prog_bytes
                        : 0.0;
}

/* Writes `len` bytes at byte address `addr` (sector aligned, inside an AU). */
static int wr(csim *s, uint64_t addr, uint32_t len)
{
    struct cairn_dev *d = csim_dev(s);
    return d->prog(d->ctx, (uint32_t)(addr / 512), 0, buf, len, NULL, 0);
}

static void test_sequential(void)
{
    csim *s = sim_open("sd-tf", 8, 1);
    struct cairn_dev *d = csim_dev(s);
    struct csim_counters c;
    uint32_t i;
    int ok = 1;

    pattern(buf, sizeof(buf), 1);
    for (i = 0; i < 16; i++)
        ok &= wr(s, (uint64_t)i * (256u << 10), 256u << 10) == 0;
    c = sim_cnt(s);
    CHECK(ok && c.ftl_prog_pages == 256 && c.ftl_copy_pages == 0 &&
              c.ftl_merges == 0 && c.ftl_erases == 0,
          "seq: one AU in 256 KiB writes: 256 flash pages, no copy/merge/erase");
    CHECK(waf(s) == 1.0, "seq: card WAF %.3f == 1.0", waf(s));
    CHECK_EQ_U64(c.time_ns,
                 (uint64_t)AU * 1000000000ull / 20000000ull + 256ull * 1000000ull,
                 "seq: time = host transfer + 256 internal programs");

    /* rewrite it sequentially in single sectors: the old block is erased */
    csim_reset_counters(s);
    for (i = 0; i < SPA; i++)
        ok &= d->prog(d->ctx, i, 0, buf + (i % 64) * 512, 512, NULL, 0) == 0;
    d->sync(d->ctx);
    c = sim_cnt(s);
    CHECK(ok && c.ftl_prog_pages == 256 && c.ftl_copy_pages == 0 &&
              c.ftl_erases == 1 && c.ftl_merges == 1,
          "seq: AU rewritten in 512 B writes: 256 flash pages (buffered), old "
          "data block erased once");
    CHECK(waf(s) == 1.0, "seq: card WAF %.3f == 1.0 with 512 B writes", waf(s));

    /* two sequential writers on two AUs: fits the open slots */
    csim_reset_counters(s);
    for (i = 0; i < 32; i++)
        ok &= wr(s, (uint64_t)(1 + i % 2) * AU + (uint64_t)(i / 2) * (256u << 10),
                 256u << 10) == 0;
    c = sim_cnt(s);
    CHECK(ok && waf(s) == 1.0 && c.ftl_merges == 0 && c.ftl_copy_pages == 0,
          "seq: two interleaved writers on 2 AUs: WAF %.3f, no merges", waf(s));
    csim_free(s);
}

static void test_interleaved(void)
{
    csim *s = sim_open("sd-tf", 16, 1);
    struct csim_counters c;
    uint32_t i;
    int ok = 1;
    const uint32_t piece = 64u << 10, per_au = AU / piece;

    pattern(buf, sizeof(buf), 2);
    /* writers A and B alternate; their 64 KiB pieces rotate over 5 AUs,
     * more than the card's 4 open AUs */
    for (i = 0; i < 5 * per_au; i++) {
        uint32_t au = i % 5, slot = i / 5;
        ok &= wr(s, (uint64_t)au * AU + (uint64_t)slot * piece, piece) == 0;
    }
    c = sim_cnt(s);
    CHECK(ok, "interleaved: 320 writes of 64 KiB over AUs 0-4");
    CHECK(c.ftl_merges > 300 && c.ftl_copy_pages > 1000,
          "interleaved: %llu merges, %llu copied flash pages",
          (unsigned long long)c.ftl_merges, (unsigned long long)c.ftl_copy_pages);
    CHECK(waf(s) > 2.0, "interleaved: card WAF %.2f > 1 (punished)", waf(s));
    CHECK(c.ftl_erases > 300, "interleaved: %llu internal AU erases",
          (unsigned long long)c.ftl_erases);

    /* the same data written AU after AU costs nothing extra */
    csim_reset_counters(s);
    for (i = 0; i < 5 * per_au; i++)
        ok &= wr(s, (uint64_t)(8 + i / per_au) * AU + (uint64_t)(i % per_au) * piece,
                 piece) == 0;
    CHECK(ok && waf(s) == 1.0 && sim_cnt(s).ftl_merges == 0,
          "interleaved: same 20 MiB written AU by AU: WAF %.2f", waf(s));

    /* small random writes are punished too */
    csim_reset_counters(s);
    {
        uint32_t x = 1;
        for (i = 0; i < 2000; i++) {
            x = x * 1103515245u + 12345u;
            ok &= wr(s, (uint64_t)((x >> 8) % (8 * (AU / 4096))) * 4096, 4096) == 0;
        }
    }
    CHECK(ok && waf(s) > 10.0, "interleaved: 4 KiB random writes: WAF %.1f",
          waf(s));
    csim_free(s);
}

static uint64_t rewrite_then_close(int discard)
{
    csim *s = sim_open("sd-tf", 8, 1);
    struct cairn_dev *d = csim_dev(s);
    uint32_t i;
    uint64_t copies;

    pattern(buf, sizeof(buf), 3);
    wr(s, 0, AU); /* AU 0 full; it closes (full) */
    if (discard)
        d->erase(d->ctx, 0);
    csim_reset_counters(s);
    wr(s, 0, 1u << 20); /* new first MiB */
    for (i = 1; i <= 4; i++) /* 4 other AUs: AU 0 (LRU) is closed */
        wr(s, (uint64_t)i * AU, 512);
    copies = sim_cnt(s).ftl_copy_pages;
    CHECK(sim_cnt(s).ftl_erases == (discard ? 0u : 1u),
          "discard=%d: %llu internal erase(s) when AU 0 closes", discard,
          (unsigned long long)sim_cnt(s).ftl_erases);
    csim_free(s);
    return copies;
}

static void test_discard(void)
{
    uint64_t kept = rewrite_then_close(0), dropped = rewrite_then_close(1);
    CHECK(kept == 192, "discard: without discard the other 3 MiB of AU 0 are "
                       "copied (%llu flash pages)",
          (unsigned long long)kept);
    CHECK(dropped == 0, "discard: after discard nothing is copied (%llu)",
          (unsigned long long)dropped);
}

static void test_details(void)
{
    csim *s = sim_open("sd-tf", 8, 1);
    struct cairn_dev *d = csim_dev(s);
    struct csim_counters c;

    pattern(buf, sizeof(buf), 4);
    /* sync programs the buffered page; each sync costs a flash page */
    wr(s, 0, 512);
    CHECK(sim_cnt(s).ftl_prog_pages == 0, "buffer: one sector stays buffered");
    d->sync(d->ctx);
    CHECK(sim_cnt(s).ftl_prog_pages == 1, "buffer: sync programs it");
    wr(s, 512, 512);
    d->sync(d->ctx);
    CHECK(sim_cnt(s).ftl_prog_pages == 2,
          "buffer: next sector + sync programs the flash page again");

    /* a write beyond the write pointer copies the live gap */
    s = (csim_free(s), sim_open("sd-tf", 8, 1));
    d = csim_dev(s);
    wr(s, 0, AU);
    csim_reset_counters(s);
    wr(s, 0, 512);              /* reopen AU 0 at sector 0: wp 1 */
    wr(s, 5000u * 512, 512);    /* gap 1..4999 is live: copied */
    c = sim_cnt(s);
    CHECK(c.ftl_prog_pages == 156 && c.ftl_copy_pages == 155 && c.ftl_merges == 0,
          "gap: write at sector 5000 with wp 1 copies the gap (%llu pages, %llu "
          "copies)",
          (unsigned long long)c.ftl_prog_pages,
          (unsigned long long)c.ftl_copy_pages);
    /* a write behind the pointer merges the AU itself */
    wr(s, 10u * 512, 512);
    c = sim_cnt(s);
    CHECK(c.ftl_merges == 1 && c.ftl_erases == 1,
          "behind: a write behind the write pointer merges the AU");
    csim_free(s);

    /* a custom card whose AU spans two erase blocks */
    {
        struct cairn_geometry g = {512, 0, 64, 8, CAIRN_MEDIUM_BLOCK, 0, 0, 1};
        struct csim_cost cost;
        struct csim_ftl f = {65536, 4096, 2};
        int ok = 1;
        uint32_t i;
        memset(&cost, 0, sizeof(cost));
        s = csim_new_custom(&g, &cost, &f, NULL);
        CHECK(s != NULL, "custom card: 32 KiB erase blocks, 64 KiB AUs");
        if (!s)
            return;
        d = csim_dev(s);
        for (i = 0; i < 4; i++)
            ok &= d->prog(d->ctx, i * 32, 0, buf, 16384, NULL, 0) == 0;
        c = sim_cnt(s);
        CHECK(ok && c.ftl_prog_pages == 16 && c.ftl_copy_pages == 0,
              "custom card: one AU through two erase blocks, WAF 1");
        ok = d->erase(d->ctx, 1) == 0; /* second half of AU 0 dead */
        ok &= d->prog(d->ctx, 0, 0, buf, 512, NULL, 0) == 0; /* reopen AU 0 */
        ok &= d->prog(d->ctx, 128, 0, buf, 512, NULL, 0) == 0; /* AU 1 */
        ok &= d->prog(d->ctx, 256, 0, buf, 512, NULL, 0) == 0; /* AU 2: close 0 */
        c = sim_cnt(s);
        CHECK(ok && c.ftl_copy_pages == 7,
              "custom card: half-AU discard: only the live 28 KiB copied (%llu "
              "pages)",
              (unsigned long long)c.ftl_copy_pages);
        csim_free(s);
    }
}

int main(void)
{
    test_sequential();
    test_interleaved();
    test_discard();
    test_details();
    return check_done("sim_ftl");
}
