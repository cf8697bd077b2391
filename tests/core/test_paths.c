/*
 * test_paths: path resolution against the answers POSIX (and Linux, where
 * POSIX leaves a choice) gives. Each case runs on a fresh NOR volume holding
 *     /d (dir) with /d/x (file), /e (empty dir), /f (file)
 * and checks the call's result and, where the call must or must not change
 * the namespace, a stat afterwards. The Linux answers were taken from the
 * kernel (ext4) and are cross-checked at random by python/tests/test_paths.py.
 * cairn's own choices: "." and ".." are INVAL anywhere in a path (Linux
 * resolves them), removing "/" is INVAL (Linux: EBUSY), opening a directory
 * is ISDIR (Linux opens it read-only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsupport.h"

enum op { STAT, OPEN, MKDIR, REMOVE, RENAME, OPENDIR, SETATTR, RING };

struct pcase {
    enum op op;
    const char *a, *b; /* path (and rename's target) */
    int flags;         /* OPEN */
    int exp;           /* expected result: 0, or a cairn_err */
    const char *after; /* then stat this path (NULL: no check) ... */
    int after_exp;     /* ... expecting 0 or this error */
};

#define RW CAIRN_O_RDWR
#define CR (CAIRN_O_RDWR | CAIRN_O_CREAT)
#define CX (CAIRN_O_RDWR | CAIRN_O_CREAT | CAIRN_O_EXCL)
#define NOENT CAIRN_ERR_NOENT
#define NOTDIR CAIRN_ERR_NOTDIR
#define ISDIR CAIRN_ERR_ISDIR
#define EXIST CAIRN_ERR_EXIST
#define INVAL CAIRN_ERR_INVAL
#define NOTEMPTY CAIRN_ERR_NOTEMPTY

static const struct pcase cases[] = {
    /* the empty path names nothing (it was the root before) */
    {STAT, "", 0, 0, NOENT, 0, 0},
    {OPEN, "", 0, CR, NOENT, 0, 0},
    {MKDIR, "", 0, 0, NOENT, 0, 0},
    {REMOVE, "", 0, 0, NOENT, 0, 0},
    {RENAME, "", "z", 0, NOENT, 0, 0},
    {RENAME, "f", "", 0, NOENT, "f", 0},
    {OPENDIR, "", 0, 0, NOENT, 0, 0},
    {SETATTR, "", 0, 0, NOENT, 0, 0},
    {RING, "", 0, 0, NOENT, 0, 0},
    /* the root, repeated and leading slashes, "a//b" */
    {STAT, "/", 0, 0, 0, 0, 0},
    {STAT, "//", 0, 0, 0, 0, 0},
    {STAT, "///", 0, 0, 0, 0, 0},
    {MKDIR, "/", 0, 0, EXIST, 0, 0},
    {MKDIR, "//", 0, 0, EXIST, 0, 0},
    {REMOVE, "/", 0, 0, INVAL, 0, 0},
    {OPEN, "/", 0, RW, ISDIR, 0, 0},
    {STAT, "f", 0, 0, 0, 0, 0},
    {STAT, "//f", 0, 0, 0, 0, 0},
    {STAT, "d//x", 0, 0, 0, 0, 0},
    {STAT, "/d///x", 0, 0, 0, 0, 0},
    {OPEN, "d//x", 0, RW, 0, 0, 0},
    /* a trailing slash requires a directory */
    {STAT, "f/", 0, 0, NOTDIR, 0, 0},
    {STAT, "f//", 0, 0, NOTDIR, 0, 0},
    {STAT, "d/x/", 0, 0, NOTDIR, 0, 0},
    {STAT, "d/", 0, 0, 0, 0, 0},
    {STAT, "d//", 0, 0, 0, 0, 0},
    {STAT, "nope/", 0, 0, NOENT, 0, 0},
    {OPEN, "f/", 0, RW, NOTDIR, 0, 0},
    {OPEN, "f/", 0, CAIRN_O_RDONLY, NOTDIR, 0, 0},
    {OPEN, "f/", 0, CR, ISDIR, "f", 0},
    {OPEN, "g/", 0, CR, ISDIR, "g", NOENT},
    {OPEN, "g/", 0, CX, ISDIR, "g", NOENT},
    {OPEN, "g//", 0, CR, ISDIR, "g", NOENT},
    {OPEN, "d/", 0, CR, ISDIR, 0, 0},
    {OPEN, "d/", 0, RW, ISDIR, 0, 0},
    {OPEN, "nope/g/", 0, CR, NOENT, 0, 0},
    {OPEN, "f/g/", 0, CR, NOTDIR, 0, 0},
    {OPEN, "f/g", 0, CR, NOTDIR, 0, 0},
    {OPEN, "g", 0, CR, 0, "g", 0},
    {OPEN, "f", 0, CX, EXIST, 0, 0},
    {MKDIR, "m/", 0, 0, 0, "m/", 0},
    {MKDIR, "m//", 0, 0, 0, "m", 0},
    {MKDIR, "d/m/", 0, 0, 0, "d/m", 0},
    {MKDIR, "f/", 0, 0, EXIST, "f", 0},
    {MKDIR, "d/", 0, 0, EXIST, 0, 0},
    {MKDIR, "f/m", 0, 0, NOTDIR, 0, 0},
    {MKDIR, "nope/m/", 0, 0, NOENT, 0, 0},
    {REMOVE, "f/", 0, 0, NOTDIR, "f", 0},
    {REMOVE, "d/x/", 0, 0, NOTDIR, "d/x", 0},
    {REMOVE, "e/", 0, 0, 0, "e", NOENT},
    {REMOVE, "e//", 0, 0, 0, "e", NOENT},
    {REMOVE, "d/", 0, 0, NOTEMPTY, 0, 0},
    {REMOVE, "f", 0, 0, 0, "f", NOENT},
    {RENAME, "f/", "h", 0, NOTDIR, "f", 0},
    {RENAME, "f", "h/", 0, NOTDIR, "h", NOENT},
    {RENAME, "f", "f/", 0, NOTDIR, "f", 0},
    {RENAME, "f/", "f", 0, NOTDIR, "f", 0},
    {RENAME, "f", "e/", 0, NOTDIR, "f", 0},
    {RENAME, "f", "e", 0, ISDIR, "f", 0},
    {RENAME, "e", "f/", 0, NOTDIR, "e", 0},
    {RENAME, "e", "f", 0, NOTDIR, "e", 0},
    {RENAME, "e/", "e2/", 0, 0, "e2", 0},
    {RENAME, "e", "e2/", 0, 0, "e2/", 0},
    {RENAME, "e/", "e2", 0, 0, "e", NOENT},
    {RENAME, "e", "e/", 0, 0, "e", 0},
    {RENAME, "f", "nope/h/", 0, NOENT, "f", 0},
    {RENAME, "nope/", "h", 0, NOENT, 0, 0},
    {RENAME, "e", "e/sub", 0, INVAL, "e", 0},
    /* as Linux: both directories before either last name */
    {RENAME, "nope", "f/x", 0, NOTDIR, 0, 0},
    {RENAME, "nope", "nope2/x", 0, NOENT, 0, 0},
    {RENAME, "f", "f/x", 0, NOTDIR, "f", 0},
    {OPENDIR, "f/", 0, 0, NOTDIR, 0, 0},
    {OPENDIR, "d/", 0, 0, 0, 0, 0},
    {SETATTR, "f/", 0, 0, NOTDIR, 0, 0},
    {SETATTR, "d/", 0, 0, 0, 0, 0},
    {RING, "r/", 0, 0, ISDIR, "r", NOENT},
    {RING, "f/", 0, 0, ISDIR, 0, 0},
    {RING, "r", 0, 0, 0, "r", 0},
    /* a component below a file, missing or too long: in Linux's order */
    {STAT, "f/x", 0, 0, NOTDIR, 0, 0},
    {STAT, "f/x/y", 0, 0, NOTDIR, 0, 0},
    {STAT, "nope", 0, 0, NOENT, 0, 0},
    {STAT, "nope/x", 0, 0, NOENT, 0, 0},
    /* "." and ".." are refused wherever they stand; other dot names are names */
    {STAT, ".", 0, 0, INVAL, 0, 0},
    {STAT, "..", 0, 0, INVAL, 0, 0},
    {STAT, "/.", 0, 0, INVAL, 0, 0},
    {STAT, "d/.", 0, 0, INVAL, 0, 0},
    {STAT, "d/..", 0, 0, INVAL, 0, 0},
    {STAT, "./f", 0, 0, INVAL, 0, 0},
    {STAT, "d/../f", 0, 0, INVAL, 0, 0},
    {STAT, "nope/..", 0, 0, INVAL, 0, 0},
    {STAT, "d/./", 0, 0, INVAL, 0, 0},
    {MKDIR, "d/.", 0, 0, INVAL, 0, 0},
    {REMOVE, "d/..", 0, 0, INVAL, "d", 0},
    {RENAME, "e/.", "h", 0, INVAL, "e", 0},
    {OPEN, ".", 0, CR, INVAL, 0, 0},
    {STAT, "...", 0, 0, NOENT, 0, 0},
    {STAT, ".f", 0, 0, NOENT, 0, 0},
    {STAT, "d/..x", 0, 0, NOENT, 0, 0},
    {MKDIR, "...", 0, 0, 0, "...", 0},
    {MKDIR, ".h", 0, 0, 0, ".h/", 0},
};

static const char *op_name[] = {"stat",    "open",    "mkdir", "remove",
                                "rename", "opendir", "setattr", "ring_create"};

static struct tfs T;

static void fixture(void)
{
    t_fs_init(&T, t_sim_new(T_NOR, 3), 0);
    t_fs_format_mount(&T);
    if (cairn_mkdir(T.fs, "/d") || cairn_mkdir(T.fs, "/e") ||
        t_write_file(T.fs, "/d/x", "x", 1) || t_write_file(T.fs, "/f", "f", 1))
        t_fatal("test_paths: fixture");
}

static int run_op(enum op op, const char *a, const char *b, int flags)
{
    int rc;
    switch (op) {
    case STAT: {
        struct cairn_info info;
        return cairn_stat(T.fs, a, &info);
    }
    case OPEN:
        rc = cairn_open(T.fs, a, flags);
        return rc >= 0 ? cairn_close(T.fs, rc) : rc;
    case MKDIR:
        return cairn_mkdir(T.fs, a);
    case REMOVE:
        return cairn_remove(T.fs, a);
    case RENAME:
        return cairn_rename(T.fs, a, b);
    case OPENDIR:
        rc = cairn_opendir(T.fs, a);
        return rc >= 0 ? cairn_closedir(T.fs, rc) : rc;
    case SETATTR:
        return cairn_setattr(T.fs, a, 7, "v", 1);
    case RING:
        return cairn_ring_create(T.fs, a, (int32_t)(4 * T.cfg.dev->geo.page_size));
    }
    return INVAL;
}

static void run_case(const struct pcase *c)
{
    struct cairn_info info;
    int rc;
    fixture();
    rc = run_op(c->op, c->a, c->b, c->flags);
    CHECK(rc == c->exp, "%s(\"%s\"%s%s%s, %#x): got %d %s, expected %d %s", op_name[c->op],
          c->a, c->b ? ", \"" : "", c->b ? c->b : "", c->b ? "\"" : "", (unsigned)c->flags,
          rc, t_errname(rc), c->exp, t_errname(c->exp));
    if (c->after) {
        rc = cairn_stat(T.fs, c->after, &info);
        CHECK(rc == c->after_exp, "after %s(\"%s\"): stat(\"%s\") got %d %s, expected %d %s",
              op_name[c->op], c->a, c->after, rc, t_errname(rc), c->after_exp,
              t_errname(c->after_exp));
    }
    t_fs_check(&T, op_name[c->op]);
    t_fs_free(&T);
}

/* Paths near CAIRN_PATH_MAX and names near CAIRN_NAME_MAX. */
static void long_paths(void)
{
    char *p = (char *)malloc(CAIRN_PATH_MAX + 8);
    char name[CAIRN_NAME_MAX + 8];
    struct cairn_info info;
    int i, rc;
    if (!p)
        t_fatal("out of memory");
    fixture();
    memset(name, 'n', sizeof name);
    name[CAIRN_NAME_MAX] = '\0';
    CHECK_EQ(cairn_stat(T.fs, name, &info), NOENT, "stat of a missing 255-byte name");
    CHECK_EQ(cairn_mkdir(T.fs, name), 0, "mkdir of a 255-byte name");
    CHECK_EQ(cairn_stat(T.fs, name, &info), 0, "stat of a 255-byte name");
    name[CAIRN_NAME_MAX] = 'n';
    name[CAIRN_NAME_MAX + 1] = '\0';
    CHECK_EQ(cairn_stat(T.fs, name, &info), CAIRN_ERR_NAMETOOLONG, "stat of a 256-byte name");
    CHECK_EQ(cairn_mkdir(T.fs, name), CAIRN_ERR_NAMETOOLONG, "mkdir of a 256-byte name");
    snprintf(p, CAIRN_PATH_MAX, "nope/%s", name);
    CHECK_EQ(cairn_stat(T.fs, p, &info), NOENT, "nope/<256 bytes>: NOENT first (Linux)");
    snprintf(p, CAIRN_PATH_MAX, "f/%s", name);
    CHECK_EQ(cairn_stat(T.fs, p, &info), NOTDIR, "f/<256 bytes>: NOTDIR first (Linux)");
    snprintf(p, CAIRN_PATH_MAX, "%s/x", name);
    CHECK_EQ(cairn_stat(T.fs, p, &info), CAIRN_ERR_NAMETOOLONG, "<256 bytes>/x");
    CHECK_EQ(cairn_rename(T.fs, name, "nope/x"), NOENT,
             "rename(<256 bytes>, nope/x): the target's directory first (Linux)");
    CHECK_EQ(cairn_rename(T.fs, name, "f"), CAIRN_ERR_NAMETOOLONG, "rename(<256 bytes>, f)");
    CHECK_EQ(cairn_rename(T.fs, "f", name), CAIRN_ERR_NAMETOOLONG, "rename(f, <256 bytes>)");
    snprintf(p, CAIRN_PATH_MAX, "%s/", name);
    rc = cairn_open(T.fs, p, CAIRN_O_RDWR | CAIRN_O_CREAT);
    CHECK_EQ(rc, ISDIR, "open(<256 bytes>/, O_CREAT): ISDIR before the name's length (Linux)");
    /* "d/d/d/...": 4095 bytes resolve (to a missing name), 4096 do not */
    for (i = 0; i < CAIRN_PATH_MAX - 1; i++)
        p[i] = (i % 2) ? '/' : 'd';
    p[CAIRN_PATH_MAX - 1] = '\0';
    rc = cairn_stat(T.fs, p, &info);
    CHECK_EQ(rc, NOENT, "a 4095-byte path (d/d/...): looked up");
    p[CAIRN_PATH_MAX - 1] = 'd';
    p[CAIRN_PATH_MAX] = '\0';
    CHECK_EQ(cairn_stat(T.fs, p, &info), CAIRN_ERR_NAMETOOLONG, "a 4096-byte path");
    CHECK_EQ(cairn_mkdir(T.fs, p), CAIRN_ERR_NAMETOOLONG, "mkdir of a 4096-byte path");
    memset(p, '/', CAIRN_PATH_MAX - 1);
    p[CAIRN_PATH_MAX - 1] = '\0';
    CHECK_EQ(cairn_stat(T.fs, p, &info), 0, "4095 slashes: the root");
    p[CAIRN_PATH_MAX - 1] = '/';
    p[CAIRN_PATH_MAX] = '\0';
    CHECK_EQ(cairn_stat(T.fs, p, &info), CAIRN_ERR_NAMETOOLONG, "4096 slashes");
    t_fs_check(&T, "long paths");
    t_fs_free(&T);
    free(p);
    printf("  long paths and names: done\n");
}

/* Names are bytes: anything but '/' and NUL, compared exactly. */
static void weird_bytes(void)
{
    static const char *const names[] = {"\xff", "\x01", " ", "-", "a b", "\xc3\xa9", "\n",
                                        "A", "a", "\x7f\x80", "*?", "\\"};
    char all[256], path[260], got[CAIRN_NAME_MAX + 1];
    struct cairn_info info;
    uint32_t i, n = 0, seen = 0, count = (uint32_t)(sizeof names / sizeof names[0]);
    int dd, rc;
    fixture();
    for (i = 1; i < 256; i++) /* every byte but NUL and '/': 254 bytes */
        if (i != '/')
            all[n++] = (char)i;
    all[n] = '\0';
    CHECK_EQ(cairn_mkdir(T.fs, "/w"), 0, "mkdir /w");
    snprintf(path, sizeof path, "w/%s", all);
    CHECK_EQ(t_write_file(T.fs, path, "a", 1), 0, "a file named with every byte 1..255 but '/'");
    for (i = 0; i < count; i++) {
        snprintf(path, sizeof path, "w/%s", names[i]);
        CHECK_EQ(cairn_mkdir(T.fs, path), 0, "mkdir w/<name %u>", (unsigned)i);
    }
    CHECK_EQ(cairn_stat(T.fs, "w/\xff/", &info), 0, "stat w/\\xff/");
    CHECK_EQ(cairn_stat(T.fs, "w/\xfe", &info), NOENT, "stat w/\\xfe (absent)");
    t_fs_remount(&T, "weird bytes");
    dd = cairn_opendir(T.fs, "w");
    CHECK(dd >= 0, "opendir w: %d", dd);
    while (dd >= 0 && (rc = cairn_readdir(T.fs, dd, &info)) == 1) {
        memcpy(got, info.name, sizeof got);
        if (strcmp(got, all) == 0)
            seen |= 1u << count;
        for (i = 0; i < count; i++)
            if (strcmp(got, names[i]) == 0)
                seen |= 1u << i;
    }
    if (dd >= 0)
        cairn_closedir(T.fs, dd);
    CHECK_EQ(seen, (1u << (count + 1)) - 1, "readdir returned every byte name exactly");
    snprintf(path, sizeof path, "/w/%s", all);
    CHECK_EQ(cairn_remove(T.fs, path), 0, "remove the every-byte file");
    t_fs_check(&T, "weird bytes");
    t_fs_free(&T);
    printf("  names of any byte but '/' and NUL: done\n");
}

int main(void)
{
    size_t i, n = sizeof cases / sizeof cases[0];
    unsigned long before;
    t_begin("test_paths");
    for (i = 0; i < n; i++) {
        before = tc_fail;
        run_case(&cases[i]);
        if (tc_fail == before && getenv("CAIRN_TEST_VERBOSE"))
            printf("  ok %s(\"%s\")\n", op_name[cases[i].op], cases[i].a);
    }
    printf("  %u path cases against their POSIX/Linux answers: done\n", (unsigned)n);
    long_paths();
    weird_bytes();
    return t_summary("test_paths");
}
