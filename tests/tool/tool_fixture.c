/* Images the tool cannot make by itself, for test_tool.sh:
 *   tool_fixture unclean IMAGE  a raw NOR image left as by a power cut: a
 *                               file synced, another written and not, no
 *                               unmount (as a dump read off a board)
 *   tool_fixture sim IMAGE      a simulator image file (sim/csim_image.c)
 * Exits 0, or 1 with a message. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#define _DEFAULT_SOURCE

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cairn.h"
#include "csim.h"
#include "vol.h"

static int put(cairn *fs, const char *path, const char *text, int close_it)
{
    int fd = cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC);
    if (fd < 0 || cairn_write(fs, fd, text, (int32_t)strlen(text)) != (int32_t)strlen(text))
        return -1;
    return close_it ? cairn_close(fs, fd) : 0;
}

static int unclean(const char *path)
{
    static struct vol v;
    struct vol_opts o;
    memset(&o, 0, sizeof o);
    o.path = path;
    o.model = "nor-m25p16";
    o.size = 1u << 20;
    if (vol_create(&v, &o) < 0 || vol_format(&v) < 0 || vol_mount(&v, 0) < 0) {
        fprintf(stderr, "tool_fixture: %s\n", v.err);
        return 1;
    }
    if (put(v.fs, "/synced.txt", "synced before the cut\n", 1) < 0 ||
        put(v.fs, "/unsynced.txt", "never synced\n", 0) < 0) {
        fprintf(stderr, "tool_fixture: write failed\n");
        return 1;
    }
    /* the power cut: no unmount, nothing freed (no leak report either) */
    _exit(0);
}

static int sim(const char *path)
{
    struct csim_options so;
    struct cairn_config cfg;
    static uint64_t ctx[CAIRN_CONTEXT_SIZE / 8];
    cairn *fs = (cairn *)(void *)ctx;
    csim *s;
    int err;
    memset(&so, 0, sizeof so);
    so.image_path = path;
    so.create = 1;
    so.block_count = 16;
    s = csim_new("nor-m25p16", &so);
    if (s == NULL) {
        fprintf(stderr, "tool_fixture: %s\n", csim_error());
        return 1;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.dev = csim_dev(s);
    err = cairn_format(fs, &cfg);
    if (!err)
        err = cairn_mount(fs, &cfg);
    if (!err)
        err = put(fs, "/sim.txt", "in a simulator image\n", 1);
    if (!err)
        err = cairn_unmount(fs);
    csim_free(s);
    if (err) {
        fprintf(stderr, "tool_fixture: %s\n", cairn_strerror(err));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "unclean") == 0)
        return unclean(argv[2]);
    if (argc == 3 && strcmp(argv[1], "sim") == 0)
        return sim(argv[2]);
    fprintf(stderr, "usage: tool_fixture unclean|sim IMAGE\n");
    return 1;
}
