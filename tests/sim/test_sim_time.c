/*
 * Simulator: every operation counter, and the modelled time of a known
 * sequence of operations on each model, against values computed by hand from
 * the cost tables of BENCH-SCENARIOS.md (integer ns, rounded down per call).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "simutil.h"

#define NS 1000000000ull

static uint8_t buf[4 << 20];

/* Runs `call`, checks it returned `want_r`, and that it cost `want_ns`. */
#define STEP(s, call, want_ns, what)                                            \
    do {                                                                        \
        uint64_t t0_ = sim_time(s);                                             \
        int r_ = (call);                                                        \
        uint64_t dt_ = sim_time(s) - t0_;                                       \
        CHECK(r_ >= 0 && dt_ == (uint64_t)(want_ns),                            \
              "%s: %s costs %llu ns (got %llu, r %d)", name, what,              \
              (unsigned long long)(want_ns), (unsigned long long)dt_, r_);      \
    } while (0)

static void test_counters(void)
{
    csim *s = sim_open("nand-jffs2", 8, 1);
    struct cairn_dev *d = csim_dev(s);
    struct csim_counters c;
    uint8_t sp[32];

    memset(buf, 0x55, 4 * 2048);
    memset(sp, 0x11, sizeof(sp));
    d->prog(d->ctx, 0, 0, buf, 2048, sp, 16);  /* 1 page, 2064 bytes */
    d->prog(d->ctx, 1, 0, buf, 4 * 2048, NULL, 0); /* 4 pages */
    d->prog(d->ctx, 5, 0, NULL, 0, sp, 8);     /* spare only: 1 page */
    d->read(d->ctx, 0, 10, buf, 3000);         /* 2 pages touched */
    d->read_spare(d->ctx, 0, sp, 32);
    d->erase(d->ctx, 1);
    d->erase(d->ctx, 2);
    d->prog(d->ctx, 0, 0, buf, 1, NULL, 0);    /* violation (NOP ok, order) */
    csim_counters(s, &c);
    CHECK_EQ_U64(c.read_calls, 2, "read_calls counts read and read_spare calls");
    CHECK_EQ_U64(c.read_bytes, 3000 + 32, "read_bytes counts data + spare");
    CHECK_EQ_U64(c.spare_reads, 1, "spare_reads");
    CHECK_EQ_U64(c.prog_calls, 3, "prog_calls (violations not counted)");
    CHECK_EQ_U64(c.prog_bytes, 2048 + 16 + 4 * 2048 + 8,
                 "prog_bytes counts data + spare");
    CHECK_EQ_U64(c.prog_pages, 1 + 4 + 1, "prog_pages = pages touched");
    CHECK_EQ_U64(c.erases, 2, "erases");
    CHECK_EQ_U64(c.mutating_ops, 5, "mutating_ops = prog + erase calls");
    CHECK_EQ_U64(c.violations, 1, "violations");
    CHECK_EQ_U64(csim_erase_count(s, 1), 1, "erase count of block 1");
    CHECK_EQ_U64(csim_erase_count(s, 0), 0, "erase count of block 0");
    CHECK_EQ_U64(c.time_ns,
                 (341000ull + 4 * 341000ull + 341000ull) +
                     (2 * 25000ull + 3000 * NS / 18400000) +
                     (25000ull + 32 * NS / 18400000) + 2 * 2000000ull,
                 "time_ns of the sequence");
    CHECK(c.ftl_prog_pages == 0 && c.ftl_copy_pages == 0 && c.ftl_erases == 0 &&
              c.ftl_merges == 0 && c.corrected == 0 && c.uncorrectable == 0,
          "card and ECC counters stay 0 on a clean NAND");
    csim_reset_counters(s);
    csim_counters(s, &c);
    CHECK(c.read_calls == 0 && c.prog_calls == 0 && c.time_ns == 0 &&
              c.violations == 0 && c.erases == 0 && c.mutating_ops == 5,
          "reset_counters zeroes all but mutating_ops");
    csim_free(s);
}

static void test_nor(const char *name, uint64_t setup, uint64_t rate,
                     uint64_t page_ns, uint64_t erase_ns, uint32_t ppb)
{
    csim *s = sim_open(name, 4, 1);
    struct cairn_dev *d = csim_dev(s);
    uint64_t t0;

    memset(buf, 0xFF, 64 << 10);
    STEP(s, d->read(d->ctx, 0, 0, buf, 1), setup + 1 * NS / rate, "1-byte read");
    STEP(s, d->read(d->ctx, 0, 0, buf, 1024), setup + 1024 * NS / rate,
         "1 KiB read (4 pages, one call)");
    STEP(s, d->read(d->ctx, 3, 17, buf, 3000), setup + 3000 * NS / rate,
         "unaligned 3000-byte read");
    memset(buf, 0x00, 4096);
    STEP(s, d->prog(d->ctx, 0, 0, buf, 256, NULL, 0),
         setup + 256 * NS / rate + page_ns, "page program");
    STEP(s, d->prog(d->ctx, 1, 100, buf, 4, NULL, 0),
         setup + 4 * NS / rate + page_ns, "4-byte partial program");
    STEP(s, d->prog(d->ctx, 4, 0, buf, 1024, NULL, 0),
         4 * setup + 1024 * NS / rate + 4 * page_ns,
         "4-page program (one command, so one setup, per page)");
    STEP(s, d->erase(d->ctx, 1), erase_ns, "erase");
    /* the sum: same numbers through the total */
    t0 = sim_time(s);
    CHECK_EQ_U64(t0,
                 (setup + 1 * NS / rate) + (setup + 1024 * NS / rate) +
                     (setup + 3000 * NS / rate) +
                     (setup + 256 * NS / rate + page_ns) +
                     (setup + 4 * NS / rate + page_ns) +
                     (4 * setup + 1024 * NS / rate + 4 * page_ns) + erase_ns,
                 "%s: total modelled time", name);
    (void)ppb;
    csim_free(s);
}

static void test_nand(const char *name, uint64_t load_ns, uint64_t rate,
                      uint64_t page_ns, uint64_t erase_ns)
{
    csim *s = sim_open(name, 4, 1);
    struct cairn_dev *d = csim_dev(s);
    uint8_t sp[32];

    memset(sp, 0, sizeof(sp));
    pattern(buf, 8 * 2048, 1);
    STEP(s, d->read(d->ctx, 0, 0, buf, 2048), load_ns + 2048 * NS / rate,
         "whole-page read");
    STEP(s, d->read(d->ctx, 0, 0, buf, 132), load_ns + 132 * NS / rate,
         "132-byte read");
    STEP(s, d->read(d->ctx, 0, 2000, buf, 100), 2 * load_ns + 100 * NS / rate,
         "100-byte read across two pages");
    STEP(s, d->read(d->ctx, 0, 0, buf, 4 * 2048), 4 * load_ns + 8192 * NS / rate,
         "4-page read");
    STEP(s, d->read_spare(d->ctx, 0, sp, 32), load_ns + 32 * NS / rate,
         "spare read");
    STEP(s, d->prog(d->ctx, 0, 0, buf, 2048, sp, 32), page_ns,
         "page + spare program");
    STEP(s, d->prog(d->ctx, 1, 0, buf, 4 * 2048, NULL, 0), 4 * page_ns,
         "4-page program");
    STEP(s, d->prog(d->ctx, 5, 0, buf, 100, NULL, 0), page_ns,
         "100-byte partial program");
    STEP(s, d->erase(d->ctx, 0), erase_ns, "erase");
    CHECK_EQ_U64(sim_time(s),
                 (load_ns + 2048 * NS / rate) + (load_ns + 132 * NS / rate) +
                     (2 * load_ns + 100 * NS / rate) +
                     (4 * load_ns + 8192 * NS / rate) +
                     (load_ns + 32 * NS / rate) + 6 * page_ns + erase_ns,
                 "%s: total modelled time", name);
    csim_free(s);
}

static void test_sd(void)
{
    const char *name = "sd-tf";
    csim *s = sim_open(name, 8, 1);
    struct cairn_dev *d = csim_dev(s);
    struct csim_counters c;
    const uint64_t host = 20000000ull, fp = 1000000ull, fe = 3000000ull;

    pattern(buf, 256 << 10, 2);
    STEP(s, d->read(d->ctx, 0, 0, buf, 512), 512 * NS / host, "sector read");
    STEP(s, d->read(d->ctx, 0, 100, buf, 1000), 1000 * NS / host,
         "unaligned 1000-byte read");
    /* 256 KiB at the start of AU 0: 16 flash pages programmed at once */
    STEP(s, d->prog(d->ctx, 0, 0, buf, 256 << 10, NULL, 0),
         (256ull << 10) * NS / host + 16 * fp, "256 KiB aligned write");
    /* one sector at the write pointer: buffered, no internal program */
    STEP(s, d->prog(d->ctx, 512, 0, buf, 512, NULL, 0), 512 * NS / host,
         "sector appended at the write pointer (buffered)");
    STEP(s, d->sync(d->ctx), fp, "sync programs the buffered flash page");
    STEP(s, d->sync(d->ctx), 0, "second sync: nothing buffered");
    /* behind the write pointer: AU 0 closes (nothing live beyond its wp, no
     * old data block: free) and reopens at sector 0 */
    STEP(s, d->prog(d->ctx, 0, 0, buf, 512, NULL, 0), 512 * NS / host,
         "rewrite of sector 0 (close + reopen of AU 0, no copies)");
    STEP(s, d->sync(d->ctx), fp, "sync");
    /* AUs 1, 2, 3 open the other three slots */
    STEP(s, d->prog(d->ctx, 1 * 8192, 0, buf, 512, NULL, 0), 512 * NS / host,
         "first sector of AU 1");
    STEP(s, d->prog(d->ctx, 2 * 8192, 0, buf, 512, NULL, 0), 512 * NS / host,
         "first sector of AU 2");
    STEP(s, d->prog(d->ctx, 3 * 8192, 0, buf, 512, NULL, 0), 512 * NS / host,
         "first sector of AU 3");
    /* AU 4: no free slot, AU 0 (least recently used) is merged: sectors
     * 1..512 are live beyond its wp (1): 17 flash pages copied (sectors 1-31,
     * 32-63, ..., 480-511, 512), then its old data block is erased */
    STEP(s, d->prog(d->ctx, 4 * 8192, 0, buf, 512, NULL, 0),
         512 * NS / host + 17 * fp + fe, "AU 4 forces a merge of AU 0");
    /* discard is bookkeeping only */
    STEP(s, d->erase(d->ctx, 0), 0, "discard of AU 0");
    csim_counters(s, &c);
    CHECK_EQ_U64(c.ftl_prog_pages, 16 + 1 + 1 + 17, "sd-tf: internal programs");
    CHECK_EQ_U64(c.ftl_copy_pages, 17, "sd-tf: of which copies");
    CHECK_EQ_U64(c.ftl_erases, 1, "sd-tf: internal erases");
    CHECK_EQ_U64(c.ftl_merges, 1, "sd-tf: merges");
    CHECK_EQ_U64(c.time_ns,
                 512 * NS / host + 1000 * NS / host + (256ull << 10) * NS / host +
                     6 * (512 * NS / host) + (16 + 1 + 1 + 17) * fp + fe,
                 "sd-tf: total modelled time");
    csim_free(s);
}

/* Many small operations, as a file system does, to keep the sim fast. */
static void test_speed(void)
{
    csim *s = sim_open("nor-w25q128", 256, 1);
    struct cairn_dev *d = csim_dev(s);
    clock_t t0 = clock();
    uint32_t i, b;
    int bad = 0;
    double secs;
    uint8_t w[16];

    memset(w, 0, sizeof(w));
    for (b = 0; b < 256; b++) {
        for (i = 0; i < 256; i++) /* 16 programs of 16 bytes per page */
            bad |= d->prog(d->ctx, b * 16 + i / 16, (i % 16) * 16, w, 16, NULL, 0);
        for (i = 0; i < 2048; i++)
            bad |= d->read(d->ctx, b * 16 + i % 16, (i * 7) % 240, buf, 16);
        bad |= d->erase(d->ctx, b);
    }
    secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(bad == 0, "speed: 65536 programs + 524288 reads + 256 erases ok");
    CHECK(secs < 10.0, "speed: ~590k operations in %.2f s (sanitized build)",
          secs);
    csim_free(s);
}

int main(void)
{
    test_counters();
    test_nor("nor-m25p16", 20000, 4500000, 640000, 600000000, 256);
    test_nor("nor-w25q128", 10000, 13000000, 400000, 45000000, 16);
    test_nand("nand-dhara", 950000, 27000000, 2075000, 3000000);
    test_nand("nand-jffs2", 25000, 18400000, 341000, 2000000);
    test_sd();
    test_speed();
    return check_done("sim_time");
}
