/*
 * CPU cost of cairn's hot calls, for callgrind (bench/scenarios/cpu_cost.py).
 *
 *   valgrind --tool=callgrind --collect-atstart=no cpu_cost <what> <n>
 *
 * Sets up a small volume on the simulator (not measured), then calls the
 * wrapper cc_<what> n times; each wrapper makes exactly one cairn call with
 * callgrind's collection switched on around it (client requests), and the
 * device callbacks (fwd_*, which forward to the simulator) switch it off while
 * the simulator works: the count is cairn's own instructions, without the
 * simulated flash, the setup or anything else. Prints "calls <n>". Without
 * valgrind's header (package valgrind) the requests compile to nothing.
 *
 * what: read1 (1-byte read of a cached page), read4k, write4k, open_cached,
 * open_uncached (first open after a mount), stat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "csim.h"

#ifdef CAIRN_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define CG_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#else
#define CG_TOGGLE() ((void)0)
#endif

#define NOINL __attribute__((noinline))

static struct cairn_dev *real;
static int measuring; /* 1 inside a cc_ wrapper: collection is on */

static void on(void)
{
    measuring = 1;
    CG_TOGGLE();
}
static void off(void)
{
    CG_TOGGLE();
    measuring = 0;
}
/* In a device callback during a measured call: collection off meanwhile. */
static void pause_(void)
{
    if (measuring)
        CG_TOGGLE();
}

/* ---- device callbacks: forward to the simulator (not counted) ---- */
NOINL static int fwd_read(void *ctx, uint32_t page, uint32_t off_, void *buf, uint32_t len)
{
    pause_();
    int r = real->read(ctx, page, off_, buf, len);
    pause_();
    return r;
}
NOINL static int fwd_read_spare(void *ctx, uint32_t page, void *buf, uint32_t len)
{
    pause_();
    int r = real->read_spare(ctx, page, buf, len);
    pause_();
    return r;
}
NOINL static int fwd_prog(void *ctx, uint32_t page, uint32_t off_, const void *data, uint32_t len,
                          const void *spare, uint32_t spare_len)
{
    pause_();
    int r = real->prog(ctx, page, off_, data, len, spare, spare_len);
    pause_();
    return r;
}
NOINL static int fwd_erase(void *ctx, uint32_t block)
{
    pause_();
    int r = real->erase(ctx, block);
    pause_();
    return r;
}
NOINL static int fwd_is_bad(void *ctx, uint32_t block)
{
    pause_();
    int r = real->is_bad(ctx, block);
    pause_();
    return r;
}
NOINL static int fwd_mark_bad(void *ctx, uint32_t block)
{
    pause_();
    int r = real->mark_bad(ctx, block);
    pause_();
    return r;
}
NOINL static int fwd_sync(void *ctx)
{
    pause_();
    int r = real->sync(ctx);
    pause_();
    return r;
}

/* ---- the measured calls ---- */
NOINL int32_t cc_read1(cairn *fs, int fd, void *buf)
{
    on();
    int32_t r = cairn_read(fs, fd, buf, 1);
    off();
    return r;
}
NOINL int32_t cc_read4k(cairn *fs, int fd, void *buf)
{
    on();
    int32_t r = cairn_read(fs, fd, buf, 4096);
    off();
    return r;
}
NOINL int32_t cc_write4k(cairn *fs, int fd, const void *buf)
{
    on();
    int32_t r = cairn_write(fs, fd, buf, 4096);
    off();
    return r;
}
NOINL int cc_open(cairn *fs, const char *path)
{
    on();
    int r = cairn_open(fs, path, CAIRN_O_RDONLY);
    off();
    return r;
}
NOINL int cc_stat(cairn *fs, const char *path, struct cairn_info *info)
{
    on();
    int r = cairn_stat(fs, path, info);
    off();
    return r;
}

static uint64_t ctxmem[CAIRN_CONTEXT_SIZE / 8];
static uint8_t buf[65536];

static void die(const char *what, int rc)
{
    fprintf(stderr, "cpu_cost: %s: %d (%s)\n", what, rc, rc < 0 ? cairn_strerror(rc) : "");
    exit(1);
}

static void must(const char *what, int rc)
{
    if (rc < 0)
        die(what, rc);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cpu_cost read1|read4k|write4k|open_cached|open_uncached|stat N\n");
        return 2;
    }
    const char *what = argv[1];
    long n = strtol(argv[2], NULL, 10);
    if (n <= 0 || n > 100000)
        die("bad N", -1);

    /* nor-w25q128, 4 MiB, 32 KiB logical blocks: a small board's volume (with
     * 16 KiB ones the 256-segment checkpoint leaves an anchor 4 slots, fewer
     * than format accepts) */
    struct csim_options opt;
    memset(&opt, 0, sizeof opt);
    opt.seed = 1;
    opt.block_count = 1024;
    opt.blocks_per_lblock = 8;
    csim *sim = csim_new("nor-w25q128", &opt);
    if (!sim) {
        fprintf(stderr, "cpu_cost: csim_new: %s\n", csim_error());
        return 1;
    }
    real = csim_dev(sim);
    struct cairn_dev dev = *real;
    dev.read = fwd_read;
    dev.read_spare = real->read_spare ? fwd_read_spare : NULL;
    dev.prog = fwd_prog;
    dev.erase = fwd_erase;
    dev.is_bad = real->is_bad ? fwd_is_bad : NULL;
    dev.mark_bad = real->mark_bad ? fwd_mark_bad : NULL;
    dev.sync = real->sync ? fwd_sync : NULL;

    struct cairn_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dev = &dev;
    cairn *fs = (cairn *)ctxmem;
    must("format", cairn_format(fs, &cfg));
    must("mount", cairn_mount(fs, &cfg));

    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7 + 1);
    must("mkdir", cairn_mkdir(fs, "/www"));
    must("mkdir", cairn_mkdir(fs, "/www/static"));
    char path[64];
    for (int i = 0; i < 64; i++) {
        snprintf(path, sizeof path, "/www/static/file%02d.bin", i);
        int fd = cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT);
        must("open for writing", fd);
        if (cairn_write(fs, fd, buf, i == 0 ? 65536 : 2048) < 0)
            die("write", -1);
        must("close", cairn_close(fs, fd));
    }
    must("unmount", cairn_unmount(fs));
    must("mount", cairn_mount(fs, &cfg));

    long calls = 0;
    if (!strcmp(what, "read1")) {
        int fd = cairn_open(fs, "/www/static/file00.bin", CAIRN_O_RDONLY);
        must("open", fd);
        must("warm read", cairn_read(fs, fd, buf, 1));
        for (long i = 0; i < n; i++) {
            cairn_seek(fs, fd, (int32_t)(i % 200), CAIRN_SEEK_SET); /* same page */
            if (cc_read1(fs, fd, buf) != 1)
                die("read1", -1);
            calls++;
        }
    } else if (!strcmp(what, "read4k")) {
        int fd = cairn_open(fs, "/www/static/file00.bin", CAIRN_O_RDONLY);
        must("open", fd);
        for (long i = 0; i < n; i++) {
            cairn_seek(fs, fd, (int32_t)((i % 16) * 4096), CAIRN_SEEK_SET);
            if (cc_read4k(fs, fd, buf) != 4096)
                die("read4k", -1);
            calls++;
        }
    } else if (!strcmp(what, "write4k")) {
        int fd = cairn_open(fs, "/www/log.bin", CAIRN_O_WRONLY | CAIRN_O_CREAT);
        must("open", fd);
        for (long i = 0; i < n; i++) {
            if (cc_write4k(fs, fd, buf + (i % 8) * 4096) != 4096)
                die("write4k", -1);
            calls++;
        }
        must("close", cairn_close(fs, fd));
    } else if (!strcmp(what, "open_cached")) {
        int fd = cairn_open(fs, "/www/static/file07.bin", CAIRN_O_RDONLY);
        must("open", fd);
        must("close", cairn_close(fs, fd));
        for (long i = 0; i < n; i++) {
            fd = cc_open(fs, "/www/static/file07.bin");
            must("open_cached", fd);
            must("close", cairn_close(fs, fd));
            calls++;
        }
    } else if (!strcmp(what, "open_uncached")) {
        for (long i = 0; i < n; i++) {
            must("unmount", cairn_unmount(fs));
            must("mount", cairn_mount(fs, &cfg));
            snprintf(path, sizeof path, "/www/static/file%02ld.bin", 1 + i % 63);
            int fd = cc_open(fs, path);
            must("open_uncached", fd);
            must("close", cairn_close(fs, fd));
            calls++;
        }
    } else if (!strcmp(what, "stat")) {
        struct cairn_info info;
        must("warm stat", cairn_stat(fs, "/www/static/file07.bin", &info));
        for (long i = 0; i < n; i++) {
            must("stat", cc_stat(fs, "/www/static/file07.bin", &info));
            calls++;
        }
    } else {
        die("unknown measure", -1);
    }
    must("unmount", cairn_unmount(fs));
    csim_free(sim);
#ifdef CAIRN_HAVE_CALLGRIND
    printf("callgrind 1\n");
#else
    printf("callgrind 0\n");
#endif
    printf("calls %ld\n", calls);
    return 0;
}
