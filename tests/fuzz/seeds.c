/*
 * Writes the seed corpus of the fuzz targets (tests/fuzz/corpus):
 *   image/: small volumes in the page-list format, built by formatting and
 *           writing files: cleanly unmounted, with a journal left to replay,
 *           with an orphan still being freed, on NOR and NAND;
 *   ops/:   a few call sequences, with and without a cut;
 * and the hand-made regression images of regress/image/ (crafted through the
 * core's internal calls, so their CRCs are valid and they fail on any build).
 *
 * Usage: fuzz_seeds CORPUS_DIR   (writes CORPUS_DIR/image and CORPUS_DIR/ops,
 * which must exist)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn.h"
#include "fuzz_util.h"

enum ending { CLEAN = 0, JOURNAL = 1, ORPHAN = 2 };

static void put_file(cairn *fs, const char *path, uint32_t len, uint8_t fill)
{
    static uint8_t buf[8192];
    int fd = cairn_open(fs, path, CAIRN_O_RDWR | CAIRN_O_CREAT);
    memset(buf, fill, sizeof buf);
    if (fd < 0 || cairn_write(fs, fd, buf, (int32_t)len) != (int32_t)len ||
        cairn_close(fs, fd) != 0)
        fz_fail("seed: writing %s", path);
}

static void save(const char *dir, const char *name, const uint8_t *data, size_t n)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0)
        fz_fail("seed: writing %s", path);
    printf("%s: %zu bytes\n", path, n);
}

/* Writes the volume as an image input (its first byte the medium) and
 * frees it. */
static void save_image(const char *dir, const char *name, struct fz_vol *v, int medium)
{
    static uint8_t out[1u << 20];
    size_t n;
    out[0] = (uint8_t)medium;
    n = fz_image_save(v, out + 1, sizeof out - 1);
    if (n == 0)
        fz_fail("seed: %s: image too big", name);
    save(dir, name, out, n + 1);
    fz_vol_free(v);
}

static void image_seed(const char *dir, int medium, int ending, const char *name)
{
    struct fz_vol v;
    cairn *fs;
    if (fz_vol_new(&v, medium, 1) != 0 || cairn_format(v.fs, &v.cfg) != 0 ||
        cairn_mount(v.fs, &v.cfg) != 0)
        fz_fail("seed: format");
    fs = v.fs;
    if (cairn_mkdir(fs, "/d") != 0 || cairn_mkdir(fs, "/d/e") != 0)
        fz_fail("seed: mkdir");
    put_file(fs, "/a", 2000, 'a');
    put_file(fs, "/d/b", 300, 'b');
    put_file(fs, "/d/e/c", 0, 'c');
    if (cairn_setattr(fs, "/a", 3, "attr", 4) != 0 ||
        cairn_ring_create(fs, "/ring", 1024) != 0)
        fz_fail("seed: attr/ring");
    if (ending != CLEAN) {
        if (cairn_sync(fs) != 0)
            fz_fail("seed: sync");
        put_file(fs, "/big", 6000, 'g');
        put_file(fs, "/j", 700, 'j');
    }
    if (ending == ORPHAN && (cairn_sync(fs) != 0 || cairn_remove(fs, "/big") != 0))
        fz_fail("seed: remove");
    if (ending == CLEAN) {
        if (cairn_unmount(fs) != 0)
            fz_fail("seed: unmount");
    } else if (cairn_sync(fs) != 0) {
        fz_fail("seed: sync");
    }
    save_image(dir, name, &v, medium);
}

/* A tree of more than one level (session 39: the other seeds' trees are one
 * leaf, so internal nodes reached the parsers only as mutations): files with
 * long names in two directories, and a file overwritten page by page in a
 * scattered order so that its map holds many one-page extents. Left with a
 * journal to replay when `journal`, else cleanly unmounted. Small enough for
 * make fuzz's -max_len (65,536 bytes): NAND's files are 10 bytes each. */
static void tree_seed(const char *dir, int medium, int journal, const char *name)
{
    struct fz_vol v;
    uint8_t page[256];
    char path[300];
    uint32_t i;
    int fd;
    if (fz_vol_new(&v, medium, 1) != 0 || cairn_format(v.fs, &v.cfg) != 0 ||
        cairn_mount(v.fs, &v.cfg) != 0 || cairn_mkdir(v.fs, "/p") != 0 ||
        cairn_mkdir(v.fs, "/q") != 0)
        fz_fail("seed: format");
    for (i = 0; i < (medium == FZ_NAND ? 30u : 40u); i++) {
        snprintf(path, sizeof path, "/%c/%03u-%s", i % 2 ? 'p' : 'q', (unsigned)i,
                 "a-name-long-enough-to-fill-a-leaf-with-few-entries-of-the-directory");
        put_file(v.fs, path, medium == FZ_NAND ? 10u : 10u + i * 7u, (uint8_t)i);
    }
    put_file(v.fs, "/frag", 24 * 256, 'f');
    fd = cairn_open(v.fs, "/frag", CAIRN_O_RDWR);
    for (i = 0; fd >= 0 && i < 24; i++) {
        memset(page, (int)i, sizeof page);
        if (cairn_seek(v.fs, fd, (int32_t)(((i * 7u) % 24u) * 256u), CAIRN_SEEK_SET) < 0 ||
            cairn_write(v.fs, fd, page, sizeof page) != (int32_t)sizeof page ||
            cairn_file_sync(v.fs, fd) != 0)
            fz_fail("seed: overwriting /frag");
    }
    if (fd < 0 || cairn_close(v.fs, fd) != 0)
        fz_fail("seed: /frag");
    if (v.fs->height < 2)
        fz_fail("seed: %s: the tree has one level", name);
    if (journal ? cairn_sync(v.fs) != 0 : cairn_unmount(v.fs) != 0)
        fz_fail("seed: ending %s", name);
    save_image(dir, name, &v, medium);
}

/* A file whose map holds an EXTENT of 0 pages past its end; with `orphan`
 * also an ORPHAN mark on it. With the mark, mount finishes the orphan's trim
 * with an unlimited budget, and before the extents were validated that trim
 * made no progress (mount never returned); without it, the walk's truncate
 * and remove looped the same way in cut_range (the fuzzer's first find,
 * 2026-11-23; remade here since session 39, when the image it found had long
 * stopped mounting: its checkpoint version was no longer read). */
static void extent_hang(const char *dir, int orphan, const char *name)
{
    struct fz_vol v;
    struct cairn_info info;
    uint8_t val[8];
    struct cn_ext e;
    if (fz_vol_new(&v, FZ_NOR, 1) != 0 || cairn_format(v.fs, &v.cfg) != 0 ||
        cairn_mount(v.fs, &v.cfg) != 0)
        fz_fail("seed: format");
    put_file(v.fs, "/h", 3000, 'h');
    if (cairn_stat(v.fs, "/h", &info) != 0 || cn_extent_find(v.fs, info.id, 0, 0, &e) != 0)
        fz_fail("seed: stat /h");
    cn_put32(val, e.phys);
    cn_put32(val + 4, 0); /* no pages */
    if (cn_tree_put(v.fs, cn_key(info.id, CN_K_EXTENT, 40), val, 8) != 0 ||
        (orphan && cn_tree_put(v.fs, cn_key(0, CN_K_ORPHAN, info.id), "", 0) != 0) ||
        cairn_unmount(v.fs) != 0)
        fz_fail("seed: crafting the 0-page extent");
    save_image(dir, name, &v, FZ_NOR);
}

/* A tree of 5 levels whose internal nodes have all their 84 children at one
 * node of the level below: 5 nodes on flash, ~84^4 paths. The checkpoint is
 * patched to make it the root (its CRC is then wrong: this image needs the
 * CAIRN_FUZZ_NO_CRC core of the replay). Before the walk was bounded by the
 * nodes the volume can hold, cairn_check spent minutes in it. */
static void shared_children(const char *dir)
{
    struct fz_vol v;
    uint8_t page[1024], node[1024];
    uint32_t np, seg, lv, i, ck, base, ps;
    if (fz_vol_new(&v, FZ_NOR, 1) != 0 || cairn_format(v.fs, &v.cfg) != 0 ||
        cairn_mount(v.fs, &v.cfg) != 0)
        fz_fail("seed: format");
    /* a written volume: one never written has no tree (and no journal) for
     * the checkpoint to name, and a root patched into it is refused whole
     * (since disk version 5, when format stopped writing them) */
    put_file(v.fs, "/s", 100, 's');
    if (cairn_unmount(v.fs) != 0)
        fz_fail("seed: unmount");
    v.cfg.read_only = 1; /* where the newest checkpoint is, without writing */
    if (cairn_mount(v.fs, &v.cfg) != 0)
        fz_fail("seed: mount");
    ps = v.fs->page_size;
    np = v.fs->node_pages;
    seg = v.fs->seg_count - 1;
    ck = v.fs->seg_base * v.fs->seg_pages - 2 * v.fs->seg_pages; /* the anchors */
    if (cairn_unmount(v.fs) != 0 || np * ps != sizeof node)
        fz_fail("seed: geometry");
    base = seg * v.fs->seg_pages;
    for (lv = 0; lv < 5; lv++) { /* the node of level lv at base + (4 - lv) * np */
        uint32_t count = lv ? (uint32_t)(sizeof node - CN_NODE_HDR) / CN_NODE_IENT : 0;
        memset(node, 0xFF, sizeof node);
        memset(node, 0, CN_NODE_HDR);
        cn_put16(node + CN_NODE_O_MAGIC, CN_NODE_MAGIC);
        node[CN_NODE_O_VERSION] = CN_NODE_VERSION;
        node[CN_NODE_O_LEVEL] = (uint8_t)lv;
        cn_put16(node + CN_NODE_O_COUNT, (uint16_t)count);
        cn_put16(node + CN_NODE_O_USED, (uint16_t)(count * CN_NODE_IENT));
        for (i = 0; i < count; i++) {
            cn_put64(node + CN_NODE_HDR + i * CN_NODE_IENT, (uint64_t)i << 32);
            cn_put32(node + CN_NODE_HDR + i * CN_NODE_IENT + 8, base + (5 - lv) * np);
        }
        for (i = 0; i < np; i++)
            csim_poke(v.sim, base + (4 - lv) * np + i, node + i * ps, NULL);
    }
    for (i = 0; i < 2 * v.fs->seg_pages; i++) { /* every checkpoint of the anchors */
        csim_peek(v.sim, ck + i, page, NULL);
        if (cn_get32(page + CN_CK_O_MAGIC) != CN_CK_MAGIC)
            continue;
        cn_put32(page + CN_CK_O_ROOT, base);
        cn_put32(page + CN_CK_O_HEIGHT, 5);
        csim_poke(v.sim, ck + i, page, NULL);
    }
    save_image(dir, "hang-check-shared-children", &v, FZ_NOR);
}

int main(int argc, char **argv)
{
    char dir[512];
    /* ops: medium/tear, cut (u16, 0xFFFF none), then {op, a, b} triples */
    static const uint8_t ops_plain[] = {0, 0xFF, 0xFF, 0, 0, 0, 1, 0, 200, 9, 0, 0,
                                        8, 0, 0, 0, 2, 0, 1, 2, 90, 7, 0, 3, 12, 0, 0};
    static const uint8_t ops_cut[] = {2, 40, 0, 0, 1, 0, 1, 5, 255, 4, 1, 20, 6, 0, 0,
                                      14, 3, 4, 11, 1, 2, 10, 0, 50, 12, 0, 0};
    static const uint8_t ops_nand[] = {3, 25, 0, 8, 0, 0, 0, 2, 1, 1, 2, 180, 9, 2, 1,
                                       13, 2, 4, 15, 2, 30, 5, 2, 0, 6, 2, 0};
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds CORPUS_DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/image", argv[1]);
    image_seed(dir, FZ_NOR, CLEAN, "nor-clean");
    image_seed(dir, FZ_NOR, JOURNAL, "nor-journal");
    image_seed(dir, FZ_NOR, ORPHAN, "nor-orphan");
    image_seed(dir, FZ_NAND, CLEAN, "nand-clean");
    image_seed(dir, FZ_NAND, JOURNAL, "nand-journal");
    tree_seed(dir, FZ_NOR, 0, "nor-tree");
    tree_seed(dir, FZ_NAND, 1, "nand-tree-journal");
    snprintf(dir, sizeof dir, "%s/ops", argv[1]);
    save(dir, "plain", ops_plain, sizeof ops_plain);
    save(dir, "cut", ops_cut, sizeof ops_cut);
    save(dir, "nand-cut", ops_nand, sizeof ops_nand);
    snprintf(dir, sizeof dir, "%s/../regress/image", argv[1]);
    extent_hang(dir, 1, "hang-mount-orphan-extent-count0");
    extent_hang(dir, 0, "hang-trim-extent-count0");
    shared_children(dir);
    return 0;
}
