/* Images the tool cannot make by itself, for test_tool.sh:
 *   tool_fixture unclean IMAGE  a raw NOR image left as by a power cut: a
 *                               file synced, another written and not, no
 *                               unmount (as a dump read off a board)
 *   tool_fixture sim IMAGE      a simulator image file (sim/csim_image.c)
 *   tool_fixture journal MODEL IMAGE
 *                               a raw image (nor-m25p16 or nand-dhara, 1 or
 *                               2 MiB) whose journal holds a record of every
 *                               kind the API writes (create, extent, size,
 *                               trim, rename, remove, attributes, a ring
 *                               file; on NAND a page written as a journal
 *                               entry), synced, no unmount: cairn dump
 *                               --journal decodes them (test_tool.sh)
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

static char g_page[2048];

/* Every kind of record, synced, left in the journal (no commit between: a
 * journal of commit_pages pages holds them all). */
static int journal_ops(cairn *fs)
{
    int fd, err = cairn_mkdir(fs, "/dir");
    memset(g_page, 'p', sizeof g_page);
    if (!err)
        err = put(fs, "/dir/a.txt", "first file\n", 1);
    if (!err)
        err = put(fs, "/b.bin", "", 0) < 0 ? -1 : 0;
    fd = cairn_open(fs, "/b.bin", CAIRN_O_WRONLY);
    if (!err && (fd < 0 || cairn_write(fs, fd, g_page, sizeof g_page) != sizeof g_page ||
                 cairn_write(fs, fd, "tail", 4) != 4 || cairn_file_sync(fs, fd) != 0 ||
                 cairn_truncate(fs, fd, 100) != 0 || cairn_close(fs, fd) != 0))
        err = -1;
    if (!err)
        err = cairn_rename(fs, "/dir/a.txt", "/dir/renamed \"q\".txt");
    if (!err)
        err = cairn_setattr(fs, "/b.bin", 7, "\x01\x02\xff", 3);
    if (!err)
        err = cairn_setattr(fs, "/b.bin", 8, "x", 1);
    if (!err)
        err = cairn_removeattr(fs, "/b.bin", 8);
    if (!err)
        err = put(fs, "/gone", "to be removed", 1);
    if (!err)
        err = cairn_remove(fs, "/gone");
    if (!err)
        err = cairn_ring_create(fs, "/ring", 4096);
    fd = err ? -1 : cairn_open(fs, "/ring", CAIRN_O_WRONLY);
    if (!err && (fd < 0 || cairn_write(fs, fd, "ring bytes", 10) != 10 || cairn_close(fs, fd) != 0))
        err = -1;
    if (!err)
        err = put(fs, "/last.txt", "synced alone\n", 1);
    if (!err)
        err = cairn_sync(fs);
    /* nothing pending: on NAND this page goes as the journal's next page */
    fd = err ? -1 : cairn_open(fs, "/last.txt", CAIRN_O_WRONLY | CAIRN_O_APPEND);
    if (!err && (fd < 0 || cairn_write(fs, fd, "more\n", 5) != 5 || cairn_file_sync(fs, fd) != 0))
        err = -1;
    return err ? -1 : cairn_sync(fs);
}

static int journal(const char *model, const char *path)
{
    static struct vol v;
    struct vol_opts o;
    memset(&o, 0, sizeof o);
    o.path = path;
    o.model = model;
    o.size = strcmp(model, "nand-dhara") == 0 ? 2u << 20 : 1u << 20;
    if (vol_create(&v, &o) < 0 || vol_format(&v) < 0 || vol_mount(&v, 0) < 0) {
        fprintf(stderr, "tool_fixture: %s\n", v.err);
        return 1;
    }
    if (journal_ops(v.fs) < 0) {
        fprintf(stderr, "tool_fixture: an operation failed\n");
        return 1;
    }
    _exit(0); /* the power cut: the journal stays */
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "unclean") == 0)
        return unclean(argv[2]);
    if (argc == 3 && strcmp(argv[1], "sim") == 0)
        return sim(argv[2]);
    if (argc == 4 && strcmp(argv[1], "journal") == 0)
        return journal(argv[2], argv[3]);
    fprintf(stderr, "usage: tool_fixture unclean|sim IMAGE | journal MODEL IMAGE\n");
    return 1;
}
