/*
 * cairn: the command-line tool. Builds, reads, changes and checks cairn
 * volumes in raw images (exactly the bytes to program: docs/TOOL.md) and on
 * block devices (SD cards).
 *
 * Exit codes: 0 ok, 1 problems found (fsck), 2 error.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#define _DEFAULT_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cairn.h"
#include "dump.h"
#include "probe.h"
#include "vol.h"
#ifdef CAIRN_WITH_FUSE
#include "cairn_fuse.h"
#endif

#define EXIT_OK 0
#define EXIT_PROBLEMS 1
#define EXIT_ERROR 2
#define PUT_FULL 3 /* inside put_file: an EXIT_ERROR for want of room */

#define COPY_CHUNK (128u * 1024u)

/* ---- options ---- */

struct args {
    const char *cmd;
    struct vol_opts vo;
    const char *output; /* -o */
    int long_list;      /* -l */
    int recursive;      /* -R (ls), -r (rm) */
    int parents;        /* -p */
    int verbose;        /* -v */
    int quiet;          /* -q: no progress bar */
    int foreground;     /* -f (mount) */
    char mount_opts[1024]; /* -o (mount): every -o, comma-joined */
    int help;
    int dump_ckpt;      /* --all (dump; also when nothing else is asked) */
    int dump_journal;   /* --journal, --all (dump) */
    int dump_tree;      /* --tree, --all (dump) */
    int npos;
    char **pos;
};

static const char *g_cmd = "cairn";

static void errmsg(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "cairn %s: ", g_cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- progress bar (stderr, only on a terminal) ---- */

static struct {
    int on;
    const char *label;
    uint64_t total;
    double last;
    int drawn;
} prog;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_begin(const struct args *a, const char *label, uint64_t total)
{
    prog.on = !a->quiet && total > 0 && isatty(STDERR_FILENO);
    prog.label = label;
    prog.total = total;
    prog.last = 0;
    prog.drawn = 0;
}

static void progress_update(uint64_t done)
{
    double t, frac;
    int i, fill;
    char bar[41];
    if (!prog.on)
        return;
    t = now_s();
    if (t - prog.last < 0.1)
        return;
    prog.last = t;
    frac = done >= prog.total ? 1.0 : (double)done / (double)prog.total;
    fill = (int)(frac * 40.0);
    for (i = 0; i < 40; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[40] = '\0';
    fprintf(stderr, "\r%-8s [%s] %3d%% %.1f/%.1f MiB", prog.label, bar, (int)(frac * 100.0),
            (double)done / 1048576.0, (double)prog.total / 1048576.0);
    fflush(stderr);
    prog.drawn = 1;
}

static void progress_end(void)
{
    if (prog.on && prog.drawn)
        fprintf(stderr, "\r%79s\r", "");
    prog.on = 0;
}

/* progress by the bytes the device has read */
static void on_io_read(void *arg) { progress_update(vol_bytes_read((const struct vol *)arg)); }

/* ---- paths inside the volume ---- */

/* "/" + p with repeated and trailing slashes removed (malloc). */
static char *vpath(const char *p)
{
    size_t n = strlen(p), i, o = 0;
    char *s = (char *)malloc(n + 2);
    if (s == NULL)
        return NULL;
    s[o++] = '/';
    for (i = 0; i < n; i++)
        if (p[i] != '/' || (o > 0 && s[o - 1] != '/'))
            s[o++] = p[i];
    if (o > 1 && s[o - 1] == '/')
        o--;
    s[o] = '\0';
    return s;
}

/* vpath, keeping a trailing '/' the user typed: it says "a directory" (as
 * Linux reads it), and the core answers for it by the POSIX rules (NOTDIR
 * for a file, ISDIR for a file to create). Before session 39 the tool
 * dropped it: `put f /new/` made a file /new, `rm /file/` removed it. */
static char *vpath_typed(const char *p)
{
    char *s = vpath(p);
    size_t n = s ? strlen(s) : 0, t = strlen(p);
    if (s && n > 1 && t > 0 && p[t - 1] == '/') {
        s[n] = '/';
        s[n + 1] = '\0';
    }
    return s;
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *s = (char *)malloc(a + b + 2);
    if (s == NULL)
        return NULL;
    memcpy(s, dir, a);
    if (a == 0 || dir[a - 1] != '/')
        s[a++] = '/';
    memcpy(s + a, name, b + 1);
    return s;
}

/* The last component of a host or volume path, trailing slashes ignored
 * (malloc). */
static char *last_name(const char *p)
{
    size_t n = strlen(p), start;
    char *s;
    while (n > 1 && p[n - 1] == '/')
        n--;
    start = n;
    while (start > 0 && p[start - 1] != '/')
        start--;
    s = (char *)malloc(n - start + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, p + start, n - start);
    s[n - start] = '\0';
    return s;
}

/* ---- directory listing ---- */

struct entries {
    struct cairn_info *e;
    size_t n;
};

static int cmp_info(const void *a, const void *b)
{
    return strcmp(((const struct cairn_info *)a)->name, ((const struct cairn_info *)b)->name);
}

/* The entries of a directory, sorted by name (bytes). 0 or a cairn error. */
static int list_dir(cairn *fs, const char *path, struct entries *out)
{
    size_t cap = 16;
    int dd = cairn_opendir(fs, path), r;
    out->n = 0;
    out->e = NULL;
    if (dd < 0)
        return dd;
    out->e = (struct cairn_info *)malloc(cap * sizeof *out->e);
    if (out->e == NULL) {
        cairn_closedir(fs, dd);
        return CAIRN_ERR_NOSPC;
    }
    while ((r = cairn_readdir(fs, dd, &out->e[out->n])) == 1) {
        if (++out->n == cap) {
            struct cairn_info *m = (struct cairn_info *)realloc(out->e, 2 * cap * sizeof *m);
            if (m == NULL) {
                r = CAIRN_ERR_NOSPC;
                break;
            }
            out->e = m;
            cap *= 2;
        }
    }
    cairn_closedir(fs, dd);
    if (r < 0) {
        free(out->e);
        out->e = NULL;
        return r;
    }
    qsort(out->e, out->n, sizeof *out->e, cmp_info);
    return 0;
}

static int cerr(const char *what, const char *path, int err)
{
    errmsg("%s%s%s: %s", what, path ? " " : "", path ? path : "", cairn_strerror(err));
    return EXIT_ERROR;
}

/* ---- copying in and out ---- */

struct copy_stats {
    uint64_t files, dirs, bytes, skipped;
};

/* Writes the stream in into a new file at path, whole or not at all (a
 * failure removes what it wrote); errors name it shown. */
static int write_whole(cairn *fs, int in, const char *path, const char *shown,
                       struct copy_stats *st, uint8_t *buf)
{
    int fd = cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC), err = 0;
    uint64_t total = 0;
    if (fd < 0)
        return cerr("create", shown, fd);
    for (;;) {
        ssize_t n = read(in, buf, COPY_CHUNK);
        int32_t w;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            errmsg("read: %s", strerror(errno));
            break;
        }
        if (n == 0) {
            err = cairn_close(fs, fd);
            if (err == 0)
                return EXIT_OK;
            cerr("close", shown, err);
            break;
        }
        if (total + (uint64_t)n > 0x7FFFFFFFu) {
            errmsg("%s: larger than a cairn file can be (2 GiB - 1 bytes)", shown);
            break;
        }
        w = cairn_write(fs, fd, buf, (int32_t)n);
        if (w != (int32_t)n) {
            err = w < 0 ? w : CAIRN_ERR_NOSPC;
            cerr("write", shown, err);
            break;
        }
        total += (uint64_t)n;
        st->bytes += (uint64_t)n;
        progress_update(st->bytes);
    }
    cairn_remove(fs, path);
    cairn_close(fs, fd); /* (its file removed: 0) */
    return err == CAIRN_ERR_NOSPC ? PUT_FULL : EXIT_ERROR;
}

/* A name for a new file in dst's directory (malloc). */
static char *name_beside(cairn *fs, const char *dst)
{
    struct cairn_info info;
    const char *slash = strrchr(dst, '/');
    size_t dir = slash ? (size_t)(slash - dst) + 1 : 0;
    unsigned i;
    char *s = (char *)malloc(dir + 32);
    if (s == NULL)
        return NULL;
    memcpy(s, dst, dir);
    for (i = 0; i < 1000; i++) {
        snprintf(s + dir, 32, ".cairn-put-%u", i);
        if (cairn_stat(fs, s, &info) == CAIRN_ERR_NOENT)
            return s;
    }
    free(s);
    return NULL;
}

/* A put of one file. An existing file is replaced by a rename once the new
 * one is whole, so a put that fails leaves it as it was. Until session 40
 * the put wrote over it (O_TRUNC) and removed what it had written when the
 * volume filled: the file it was to replace was gone. */
static int put_file(cairn *fs, int in, const char *dst, struct copy_stats *st, uint8_t *buf)
{
    struct cairn_info info;
    char *tmp = NULL;
    int rc, err;
    if (cairn_stat(fs, dst, &info) == 0 && info.type == CAIRN_TYPE_FILE &&
        (tmp = name_beside(fs, dst)) == NULL) {
        errmsg("%s: no name free for its replacement", dst);
        return EXIT_ERROR;
    }
    rc = write_whole(fs, in, tmp ? tmp : dst, dst, st, buf);
    if (rc == EXIT_OK && tmp && (err = cairn_rename(fs, tmp, dst)) < 0) {
        cerr("rename", dst, err);
        cairn_remove(fs, tmp);
        rc = err == CAIRN_ERR_NOSPC ? PUT_FULL : EXIT_ERROR;
    }
    if (rc == PUT_FULL && tmp)
        errmsg("the volume is full: %s is as it was (its replacement must fit beside it: "
               "cairn rm it first to make room)", dst);
    else if (rc == PUT_FULL)
        errmsg("the volume is full (cairn info shows the space; a larger --size?)");
    free(tmp);
    if (rc == EXIT_OK)
        st->files++;
    return rc == PUT_FULL ? EXIT_ERROR : rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a host directory, sorted by bytes (deterministic builds). */
static int host_names(const char *dir, char ***out, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t n = 0, cap = 16;
    char **v;
    if (d == NULL)
        return -1;
    v = (char **)malloc(cap * sizeof *v);
    while (v != NULL && (errno = 0, de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap) {
            char **m = (char **)realloc(v, 2 * cap * sizeof *m);
            if (m == NULL)
                break;
            v = m;
            cap *= 2;
        }
        v[n] = strdup(de->d_name);
        if (v[n] == NULL)
            break;
        n++;
    }
    closedir(d);
    if (v == NULL)
        return -1;
    qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    *count = n;
    return 0;
}

static void free_names(char **v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Bytes of the regular files under a host path (for the progress bar). */
static uint64_t host_bytes(const char *path)
{
    struct stat st;
    uint64_t total = 0;
    char **names;
    size_t n, i;
    if (lstat(path, &st) < 0)
        return 0;
    if (S_ISREG(st.st_mode))
        return (uint64_t)st.st_size;
    if (!S_ISDIR(st.st_mode) || host_names(path, &names, &n) < 0)
        return 0;
    for (i = 0; i < n; i++) {
        char *p = join(path, names[i]);
        if (p)
            total += host_bytes(p);
        free(p);
    }
    free_names(names, n);
    return total;
}

/* The image being written, when it lies inside the tree copied in. */
static int g_skip_valid;
static dev_t g_skip_dev;
static ino_t g_skip_ino;

/* Copies the host file or directory `src` to `dst` in the volume (which must
 * not exist as a file when src is a directory; an existing directory is
 * merged into). */
static int copy_in(cairn *fs, const char *src, const char *dst, struct copy_stats *st,
                   uint8_t *buf)
{
    struct stat sb;
    if (lstat(src, &sb) < 0) {
        errmsg("%s: %s", src, strerror(errno));
        return EXIT_ERROR;
    }
    if (S_ISREG(sb.st_mode) && g_skip_valid && sb.st_dev == g_skip_dev &&
        sb.st_ino == g_skip_ino) {
        fprintf(stderr, "cairn %s: %s: skipped (the image being written)\n", g_cmd, src);
        st->skipped++;
        return EXIT_OK;
    }
    if (S_ISREG(sb.st_mode)) {
        int in = open(src, O_RDONLY | O_CLOEXEC), rc;
        if (in < 0) {
            errmsg("%s: %s", src, strerror(errno));
            return EXIT_ERROR;
        }
        rc = put_file(fs, in, dst, st, buf);
        close(in);
        return rc;
    }
    if (S_ISDIR(sb.st_mode)) {
        char **names;
        size_t n, i;
        int err = cairn_mkdir(fs, dst), rc = EXIT_OK;
        struct cairn_info info;
        if (err == CAIRN_ERR_EXIST && cairn_stat(fs, dst, &info) == 0 &&
            info.type == CAIRN_TYPE_DIR)
            err = 0;
        if (err && !(err == CAIRN_ERR_INVAL && strcmp(dst, "/") == 0))
            return cerr("mkdir", dst, err);
        st->dirs++;
        if (host_names(src, &names, &n) < 0) {
            errmsg("%s: %s", src, strerror(errno));
            return EXIT_ERROR;
        }
        for (i = 0; i < n && rc == EXIT_OK; i++) {
            char *s = join(src, names[i]), *d = join(dst, names[i]);
            if (s == NULL || d == NULL) {
                errmsg("out of memory");
                rc = EXIT_ERROR;
            } else if (strlen(names[i]) > CAIRN_NAME_MAX) {
                errmsg("%s: name longer than %d bytes", s, CAIRN_NAME_MAX);
                rc = EXIT_ERROR;
            } else {
                rc = copy_in(fs, s, d, st, buf);
            }
            free(s);
            free(d);
        }
        free_names(names, n);
        return rc;
    }
    fprintf(stderr, "cairn %s: %s: skipped (not a regular file or a directory)\n", g_cmd, src);
    st->skipped++;
    return EXIT_OK;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes the volume's file `src` to the host fd. */
static int get_file(cairn *fs, const char *src, int out, const char *outname, uint8_t *buf,
                    struct copy_stats *st)
{
    int fd = cairn_open(fs, src, CAIRN_O_RDONLY);
    int32_t n;
    if (fd < 0)
        return cerr("open", src, fd);
    while ((n = cairn_read(fs, fd, buf, (int32_t)COPY_CHUNK)) > 0) {
        if (write_all(out, buf, (size_t)n) < 0) {
            errmsg("%s: %s", outname, strerror(errno));
            cairn_close(fs, fd);
            return EXIT_ERROR;
        }
        st->bytes += (uint64_t)n;
    }
    cairn_close(fs, fd);
    if (n < 0)
        return cerr("read", src, n);
    st->files++;
    return EXIT_OK;
}

/* Copies the volume's `src` (file or directory) to the host path `dst`. */
static int copy_out(cairn *fs, const char *src, const char *dst, struct copy_stats *st,
                    uint8_t *buf)
{
    struct cairn_info info;
    int err = cairn_stat(fs, src, &info);
    if (err)
        return cerr("stat", src, err);
    if (info.type == CAIRN_TYPE_FILE) {
        int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666), rc;
        if (out < 0) {
            errmsg("%s: %s", dst, strerror(errno));
            return EXIT_ERROR;
        }
        rc = get_file(fs, src, out, dst, buf, st);
        if (close(out) < 0 && rc == EXIT_OK) {
            errmsg("%s: %s", dst, strerror(errno));
            rc = EXIT_ERROR;
        }
        return rc;
    } else {
        struct entries e;
        size_t i;
        int rc = EXIT_OK;
        if (mkdir(dst, 0777) < 0 && errno != EEXIST) {
            errmsg("%s: %s", dst, strerror(errno));
            return EXIT_ERROR;
        }
        st->dirs++;
        err = list_dir(fs, src, &e);
        if (err)
            return cerr("list", src, err);
        for (i = 0; i < e.n && rc == EXIT_OK; i++) {
            char *s, *d;
            if (strcmp(e.e[i].name, ".") == 0 || strcmp(e.e[i].name, "..") == 0 ||
                strchr(e.e[i].name, '/') != NULL) /* cairn never stores these */
                continue;
            s = join(src, e.e[i].name);
            d = join(dst, e.e[i].name);
            if (s == NULL || d == NULL) {
                errmsg("out of memory");
                rc = EXIT_ERROR;
            } else {
                rc = copy_out(fs, s, d, st, buf);
            }
            free(s);
            free(d);
        }
        free(e.e);
        return rc;
    }
}

/* ---- opening volumes ---- */

static int open_mounted(struct args *a, struct vol *v, const char *image, int read_only)
{
    a->vo.path = image;
    if (vol_open(v, &a->vo, read_only) < 0 || vol_mount(v, read_only) < 0) {
        errmsg("%s", v->err);
        vol_close(v);
        return -1;
    }
    return 0;
}

static int close_vol(struct vol *v, int rc)
{
    if (vol_close(v) < 0) {
        errmsg("%s", v->err);
        return EXIT_ERROR;
    }
    return rc;
}

static int need_pos(const struct args *a, int min, int max)
{
    if (a->npos < min || (max >= 0 && a->npos > max)) {
        errmsg("wrong number of arguments (cairn %s --help)", a->cmd);
        return -1;
    }
    return 0;
}

/* ---- subcommands ---- */

static void print_geometry_line(const struct vol *v, const char *path)
{
    const struct cairn_geometry *g = &v->dev->geo;
    uint32_t bpl = g->blocks_per_lblock ? g->blocks_per_lblock : 1;
    printf("%s: %s, %u-byte pages", path, vol_medium_name(g->medium), (unsigned)g->page_size);
    if (v->oob)
        printf(" + %u OOB", (unsigned)v->oob);
    printf(", %u segments of %llu bytes, %llu bytes of flash\n", (unsigned)(g->block_count / bpl),
           (unsigned long long)g->page_size * g->pages_per_block * bpl,
           (unsigned long long)g->block_count * g->pages_per_block * g->page_size);
}

static int cmd_mkfs(struct args *a)
{
    struct vol v;
    if (need_pos(a, 1, 1) < 0)
        return EXIT_ERROR;
    a->vo.path = a->pos[0];
    if (vol_create(&v, &a->vo) < 0 || vol_format(&v) < 0) {
        errmsg("%s", v.err);
        vol_close(&v);
        return EXIT_ERROR;
    }
    print_geometry_line(&v, a->pos[0]);
    return close_vol(&v, EXIT_OK);
}

static int cmd_build(struct args *a)
{
    struct vol v;
    struct copy_stats st;
    struct stat sb;
    struct cairn_fsinfo fi;
    uint8_t *buf;
    int rc;
    if (need_pos(a, 1, 1) < 0)
        return EXIT_ERROR;
    if (a->output == NULL) {
        errmsg("give the image with -o IMAGE");
        return EXIT_ERROR;
    }
    if (stat(a->pos[0], &sb) < 0 || !S_ISDIR(sb.st_mode)) {
        errmsg("%s: not a directory", a->pos[0]);
        return EXIT_ERROR;
    }
    a->vo.path = a->output;
    if (vol_create(&v, &a->vo) < 0 || vol_format(&v) < 0 || vol_mount(&v, 0) < 0) {
        errmsg("%s", v.err);
        vol_close(&v);
        return EXIT_ERROR;
    }
    buf = (uint8_t *)malloc(COPY_CHUNK);
    if (buf == NULL) {
        errmsg("out of memory");
        return close_vol(&v, EXIT_ERROR);
    }
    if (stat(a->output, &sb) == 0) {
        g_skip_valid = 1;
        g_skip_dev = sb.st_dev;
        g_skip_ino = sb.st_ino;
    }
    memset(&st, 0, sizeof st);
    progress_begin(a, "build", host_bytes(a->pos[0]));
    rc = copy_in(v.fs, a->pos[0], "/", &st, buf);
    progress_end();
    free(buf);
    if (rc == EXIT_OK && cairn_fs_stat(v.fs, &fi) == 0)
        printf("%s: %llu files, %llu directories, %llu bytes; %llu of %llu bytes used\n",
               a->output, (unsigned long long)st.files, (unsigned long long)(st.dirs - 1),
               (unsigned long long)st.bytes, (unsigned long long)fi.used_bytes,
               (unsigned long long)fi.total_bytes);
    return close_vol(&v, rc);
}

static void ls_print(const struct args *a, const struct cairn_info *e, const char *shown)
{
    int dir = e->type == CAIRN_TYPE_DIR;
    if (a->long_list)
        printf("%c %10ld  %s%s\n", dir ? 'd' : '-', (long)e->size, shown, dir ? "/" : "");
    else
        printf("%s%s\n", shown, dir ? "/" : "");
}

/* Lists dir; `prefix` is what is shown before each name (-R). */
static int ls_dir(cairn *fs, const struct args *a, const char *dir, const char *prefix)
{
    struct entries e;
    size_t i;
    int err = list_dir(fs, dir, &e), rc = EXIT_OK;
    if (err)
        return cerr("list", dir, err);
    for (i = 0; i < e.n && rc == EXIT_OK; i++) {
        char *shown = prefix ? join(prefix, e.e[i].name) : NULL;
        ls_print(a, &e.e[i], shown ? shown : e.e[i].name);
        if (a->recursive && e.e[i].type == CAIRN_TYPE_DIR) {
            char *sub = join(dir, e.e[i].name);
            char *pre = prefix ? join(prefix, e.e[i].name) : strdup(e.e[i].name);
            rc = sub && pre ? ls_dir(fs, a, sub, pre) : EXIT_ERROR;
            free(sub);
            free(pre);
        }
        free(shown);
    }
    free(e.e);
    return rc;
}

static int cmd_ls(struct args *a)
{
    struct vol v;
    struct cairn_info info;
    char *path;
    int err, rc;
    if (need_pos(a, 1, 2) < 0)
        return EXIT_ERROR;
    if (open_mounted(a, &v, a->pos[0], 1) < 0)
        return EXIT_ERROR;
    path = vpath_typed(a->npos > 1 ? a->pos[1] : "/");
    err = path ? cairn_stat(v.fs, path, &info) : CAIRN_ERR_NOSPC;
    if (err) {
        rc = cerr("ls", a->npos > 1 ? a->pos[1] : "/", err);
    } else if (info.type == CAIRN_TYPE_FILE) {
        ls_print(a, &info, a->pos[1]);
        rc = EXIT_OK;
    } else {
        rc = ls_dir(v.fs, a, path, NULL);
    }
    free(path);
    return close_vol(&v, rc);
}

static int cmd_cat(struct args *a)
{
    struct vol v;
    struct copy_stats st;
    uint8_t *buf;
    int i, rc = EXIT_OK;
    if (need_pos(a, 2, -1) < 0)
        return EXIT_ERROR;
    if (open_mounted(a, &v, a->pos[0], 1) < 0)
        return EXIT_ERROR;
    buf = (uint8_t *)malloc(COPY_CHUNK);
    memset(&st, 0, sizeof st);
    for (i = 1; i < a->npos && rc == EXIT_OK && buf; i++) {
        char *p = vpath_typed(a->pos[i]);
        rc = p ? get_file(v.fs, p, STDOUT_FILENO, "stdout", buf, &st) : EXIT_ERROR;
        free(p);
    }
    if (buf == NULL)
        rc = EXIT_ERROR;
    free(buf);
    return close_vol(&v, rc);
}

static int cmd_get(struct args *a)
{
    struct vol v;
    struct copy_stats st;
    struct cairn_info info;
    struct stat sb;
    uint8_t *buf;
    char *src, *dst = NULL;
    int rc, err;
    if (need_pos(a, 2, 3) < 0)
        return EXIT_ERROR;
    if (open_mounted(a, &v, a->pos[0], 1) < 0)
        return EXIT_ERROR;
    src = vpath_typed(a->pos[1]);
    buf = (uint8_t *)malloc(COPY_CHUNK);
    memset(&st, 0, sizeof st);
    if (src == NULL || buf == NULL) {
        errmsg("out of memory");
        rc = EXIT_ERROR;
    } else if ((err = cairn_stat(v.fs, src, &info)) != 0) {
        rc = cerr("get", a->pos[1], err);
    } else if (a->npos > 2 && strcmp(a->pos[2], "-") == 0) {
        rc = info.type == CAIRN_TYPE_FILE ? get_file(v.fs, src, STDOUT_FILENO, "stdout", buf, &st)
                                          : cerr("get", a->pos[1], CAIRN_ERR_ISDIR);
    } else {
        char *name = strcmp(src, "/") == 0 ? strdup(".") : last_name(src);
        if (name && a->npos > 2 && stat(a->pos[2], &sb) == 0 && S_ISDIR(sb.st_mode) &&
            info.type == CAIRN_TYPE_FILE)
            dst = join(a->pos[2], name);
        else if (name)
            dst = strdup(a->npos > 2 ? a->pos[2] : name);
        free(name);
        progress_begin(a, "get", info.type == CAIRN_TYPE_FILE ? (uint64_t)info.size : 0);
        rc = dst ? copy_out(v.fs, src, dst, &st, buf) : EXIT_ERROR;
        progress_end();
    }
    free(src);
    free(dst);
    free(buf);
    return close_vol(&v, rc);
}

static int cmd_put(struct args *a)
{
    struct vol v;
    struct copy_stats st;
    struct cairn_info info;
    uint8_t *buf;
    char *dst = NULL;
    const char *src;
    int rc;
    if (need_pos(a, 2, 3) < 0)
        return EXIT_ERROR;
    src = a->pos[1];
    if (strcmp(src, "-") == 0 && a->npos < 3) {
        errmsg("put from stdin needs the destination path");
        return EXIT_ERROR;
    }
    if (open_mounted(a, &v, a->pos[0], 0) < 0)
        return EXIT_ERROR;
    buf = (uint8_t *)malloc(COPY_CHUNK);
    memset(&st, 0, sizeof st);
    if (a->npos > 2) {
        dst = vpath_typed(a->pos[2]);
        /* into an existing directory: under the source's name */
        if (dst && cairn_stat(v.fs, dst, &info) == 0 && info.type == CAIRN_TYPE_DIR &&
            strcmp(src, "-") != 0) {
            char *name = last_name(src), *d = name ? join(dst, name) : NULL;
            free(name);
            free(dst);
            dst = d;
        }
    } else {
        char *name = last_name(src);
        dst = name ? vpath(name) : NULL;
        free(name);
    }
    if (dst == NULL || buf == NULL) {
        errmsg("out of memory");
        rc = EXIT_ERROR;
    } else if (strcmp(src, "-") == 0) {
        rc = put_file(v.fs, STDIN_FILENO, dst, &st, buf);
    } else {
        progress_begin(a, "put", host_bytes(src));
        rc = copy_in(v.fs, src, dst, &st, buf);
        progress_end();
    }
    free(dst);
    free(buf);
    return close_vol(&v, rc);
}

static int remove_tree(cairn *fs, const char *path)
{
    struct cairn_info info;
    int err = cairn_stat(fs, path, &info);
    if (err)
        return cerr("rm", path, err);
    if (info.type == CAIRN_TYPE_DIR) {
        struct entries e;
        size_t i;
        int rc = EXIT_OK;
        err = list_dir(fs, path, &e);
        if (err)
            return cerr("rm", path, err);
        for (i = 0; i < e.n && rc == EXIT_OK; i++) {
            char *p = join(path, e.e[i].name);
            rc = p ? remove_tree(fs, p) : EXIT_ERROR;
            free(p);
        }
        free(e.e);
        if (rc != EXIT_OK)
            return rc;
        if (strcmp(path, "/") == 0)
            return EXIT_OK; /* the root stays */
    }
    err = cairn_remove(fs, path);
    return err ? cerr("rm", path, err) : EXIT_OK;
}

static int cmd_rm(struct args *a)
{
    struct vol v;
    int i, rc = EXIT_OK;
    if (need_pos(a, 2, -1) < 0)
        return EXIT_ERROR;
    if (open_mounted(a, &v, a->pos[0], 0) < 0)
        return EXIT_ERROR;
    for (i = 1; i < a->npos && rc == EXIT_OK; i++) {
        char *p = vpath_typed(a->pos[i]);
        int err;
        if (p == NULL)
            rc = EXIT_ERROR;
        else if (a->recursive)
            rc = remove_tree(v.fs, p);
        else if ((err = cairn_remove(v.fs, p)) != 0)
            rc = cerr("rm", a->pos[i], err);
        free(p);
    }
    return close_vol(&v, rc);
}

static int mkdir_p(cairn *fs, const char *path)
{
    char *p = strdup(path), *s;
    int err = 0;
    struct cairn_info info;
    if (p == NULL)
        return CAIRN_ERR_NOSPC;
    for (s = p + 1; err == 0; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            err = cairn_mkdir(fs, p);
            if (err == CAIRN_ERR_EXIST && cairn_stat(fs, p, &info) == 0 &&
                info.type == CAIRN_TYPE_DIR)
                err = 0;
            *s = c;
            if (c == '\0')
                break;
        }
    }
    free(p);
    return err;
}

static int cmd_mkdir(struct args *a)
{
    struct vol v;
    int i, rc = EXIT_OK;
    if (need_pos(a, 2, -1) < 0)
        return EXIT_ERROR;
    if (open_mounted(a, &v, a->pos[0], 0) < 0)
        return EXIT_ERROR;
    for (i = 1; i < a->npos && rc == EXIT_OK; i++) {
        char *p = vpath(a->pos[i]);
        int err;
        if (p == NULL)
            rc = EXIT_ERROR;
        else if ((err = a->parents ? mkdir_p(v.fs, p) : cairn_mkdir(v.fs, p)) != 0)
            rc = cerr("mkdir", a->pos[i], err);
        free(p);
    }
    return close_vol(&v, rc);
}

static int cmd_mv(struct args *a)
{
    struct vol v;
    struct cairn_info info;
    char *from, *to;
    int err, rc = EXIT_OK;
    if (need_pos(a, 3, 3) < 0)
        return EXIT_ERROR;
    if (open_mounted(a, &v, a->pos[0], 0) < 0)
        return EXIT_ERROR;
    from = vpath_typed(a->pos[1]);
    to = vpath_typed(a->pos[2]);
    if (from && to && strcmp(from, to) != 0 && cairn_stat(v.fs, to, &info) == 0 &&
        info.type == CAIRN_TYPE_DIR) {
        char *name = last_name(from), *t = name ? join(to, name) : NULL;
        free(name);
        free(to);
        to = t;
    }
    if (from == NULL || to == NULL)
        rc = EXIT_ERROR;
    else if ((err = cairn_rename(v.fs, from, to)) != 0) {
        errmsg("%s -> %s: %s", a->pos[1], a->pos[2], cairn_strerror(err));
        rc = EXIT_ERROR;
    }
    free(from);
    free(to);
    return close_vol(&v, rc);
}

static int cmd_extract(struct args *a)
{
    struct vol v;
    struct copy_stats st;
    struct cairn_fsinfo fi;
    uint8_t *buf;
    int rc;
    if (need_pos(a, 2, 2) < 0)
        return EXIT_ERROR;
    if (open_mounted(a, &v, a->pos[0], 1) < 0)
        return EXIT_ERROR;
    buf = (uint8_t *)malloc(COPY_CHUNK);
    memset(&st, 0, sizeof st);
    if (buf == NULL) {
        errmsg("out of memory");
        return close_vol(&v, EXIT_ERROR);
    }
    progress_begin(a, "extract", cairn_fs_stat(v.fs, &fi) == 0 ? fi.used_bytes : 0);
    v.on_io = on_io_read;
    v.on_io_arg = &v;
    rc = copy_out(v.fs, "/", a->pos[1], &st, buf);
    progress_end();
    v.on_io = NULL;
    free(buf);
    if (rc == EXIT_OK && a->verbose)
        printf("%llu files, %llu directories, %llu bytes\n", (unsigned long long)st.files,
               (unsigned long long)(st.dirs - 1), (unsigned long long)st.bytes);
    return close_vol(&v, rc);
}

static void report_problem(void *arg, const char *problem)
{
    (void)arg;
    printf("problem: %s\n", problem);
}

/* After a clean unmount, the segments the checkpoint's table calls erased
 * must read erased: the next write there expects it (on NOR and NAND it
 * would fail). The core trusts the table, so the tool checks it. Returns
 * the problems found (one per segment), or -1 on a read error. */
static int check_erased(struct vol *v, const struct ckpt *ck)
{
    struct cairn_dev *d = v->dev;
    uint32_t ps = d->geo.page_size, sp = d->geo.spare_size, seg, p, i, problems = 0;
    uint8_t *buf = (uint8_t *)malloc(ps + (sp ? sp : 1));
    if (buf == NULL)
        return -1;
    for (seg = 0; seg < ck->h.seg_count; seg++) {
        if (ck->segs[seg].state != CN_SEG_ERASED)
            continue;
        for (p = 0; p < ck->h.seg_pages; p++) {
            uint32_t page = seg * ck->h.seg_pages + p;
            int r = d->read(d->ctx, page, 0, buf, ps);
            if (r >= 0 && sp && d->read_spare)
                r = d->read_spare(d->ctx, page, buf + ps, sp);
            if (r < 0) {
                printf("problem: segment %u (erased in the table): page %u cannot be read\n",
                       (unsigned)seg, (unsigned)page);
                problems++;
                break;
            }
            for (i = 0; i < ps + sp && buf[i] == 0xFF; i++)
                ;
            if (i < ps + sp) {
                printf("problem: segment %u is erased in the table but holds data (page %u, "
                       "byte %u): the next write there would fail\n",
                       (unsigned)seg, (unsigned)page, (unsigned)i);
                problems++;
                break;
            }
        }
        progress_update(vol_bytes_read(v));
    }
    free(buf);
    return (int)problems;
}

static int cmd_fsck(struct args *a)
{
    struct vol v;
    struct cairn_check_report r;
    struct cairn_fsinfo fi;
    struct ckpt ck;
    const struct cairn_geometry *g;
    char err_ck[256];
    uint32_t bpl;
    int err, have_ck, erased_problems = 0;
    if (need_pos(a, 1, 1) < 0)
        return EXIT_ERROR;
    a->vo.path = a->pos[0];
    if (vol_open(&v, &a->vo, 1) < 0) {
        errmsg("%s", v.err);
        vol_close(&v);
        return EXIT_ERROR;
    }
    g = &v.dev->geo;
    bpl = g->blocks_per_lblock ? g->blocks_per_lblock : 1;
    have_ck = ckpt_find_newest(v.dev, g->pages_per_block * bpl, g->block_count / bpl, &ck, err_ck,
                               sizeof err_ck) == 0;
    if (!have_ck)
        printf("problem: %s\n", err_ck);
    if (vol_mount(&v, 1) < 0) {
        int corrupt = strstr(v.err, "CAIRN_ERR_CORRUPT") != NULL;
        printf("problem: the volume does not mount: %s\n", v.err);
        if (have_ck)
            ckpt_free(&ck);
        vol_close(&v);
        return corrupt ? EXIT_PROBLEMS : EXIT_ERROR;
    }
    memset(&r, 0, sizeof r);
    progress_begin(a, "fsck", cairn_fs_stat(v.fs, &fi) == 0 ? fi.total_bytes : 0);
    v.on_io = on_io_read;
    v.on_io_arg = &v;
    err = cairn_check(v.fs, &r, report_problem, NULL);
    if ((err == 0 || err == CAIRN_ERR_CORRUPT) && have_ck && ckpt_clean(&ck.h)) {
        erased_problems = check_erased(&v, &ck);
        if (erased_problems < 0) {
            printf("problem: out of memory\n");
            erased_problems = 1;
        }
        r.errors += (uint32_t)erased_problems;
        if (erased_problems)
            err = CAIRN_ERR_CORRUPT;
    }
    if (have_ck)
        ckpt_free(&ck);
    v.on_io = NULL;
    progress_end();
    if (err == 0) {
        printf("%s: clean: %u files, %u directories, %u extents, %u index nodes, %llu data "
               "pages\n",
               a->pos[0], (unsigned)r.files, (unsigned)r.dirs, (unsigned)r.extents,
               (unsigned)r.nodes, (unsigned long long)r.data_pages);
        return close_vol(&v, EXIT_OK);
    }
    if (err == CAIRN_ERR_CORRUPT) {
        printf("%s: %u problem%s found\n", a->pos[0], (unsigned)r.errors,
               r.errors == 1 ? "" : "s");
        close_vol(&v, EXIT_PROBLEMS);
        return EXIT_PROBLEMS;
    }
    printf("problem: the check stopped: %s (%s)\n", cairn_errname(err), cairn_strerror(err));
    close_vol(&v, EXIT_ERROR);
    return EXIT_ERROR;
}

struct tree_count {
    uint64_t files, dirs, bytes;
};

static int count_tree(cairn *fs, const char *dir, struct tree_count *c)
{
    struct entries e;
    size_t i;
    int err = list_dir(fs, dir, &e);
    if (err)
        return err;
    for (i = 0; i < e.n && !err; i++) {
        if (e.e[i].type == CAIRN_TYPE_DIR) {
            char *p = join(dir, e.e[i].name);
            c->dirs++;
            err = p ? count_tree(fs, p, c) : CAIRN_ERR_NOSPC;
            free(p);
        } else {
            c->files++;
            c->bytes += (uint64_t)e.e[i].size;
        }
    }
    free(e.e);
    return err;
}

static void print_wear(const struct ckpt *ck)
{
    uint32_t i, lo = 0xFFFFFFFFu, hi = 0, buckets, width, counts[10] = {0}, most = 0, b;
    for (i = 0; i < ck->h.seg_count; i++) {
        uint32_t e = ck->segs[i].erase_count;
        if (ck->segs[i].state == CN_SEG_BAD)
            continue;
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    if (lo > hi)
        return;
    buckets = hi - lo + 1 < 10 ? hi - lo + 1 : 10;
    width = (hi - lo) / buckets + 1;
    for (i = 0; i < ck->h.seg_count; i++)
        if (ck->segs[i].state != CN_SEG_BAD) {
            b = (ck->segs[i].erase_count - lo) / width;
            counts[b]++;
        }
    for (b = 0; b < buckets; b++)
        most = counts[b] > most ? counts[b] : most;
    printf("wear histogram (erases: segments):\n");
    for (b = 0; b < buckets; b++) {
        uint32_t from = lo + b * width, to = from + width - 1, bar, j;
        if (from > hi)
            break;
        if (width == 1)
            printf("  %10u    : %5u ", (unsigned)from, (unsigned)counts[b]);
        else
            printf("  %6u-%-6u: %5u ", (unsigned)from, (unsigned)to, (unsigned)counts[b]);
        bar = most ? (counts[b] * 40 + most - 1) / most : 0;
        for (j = 0; j < bar; j++)
            putchar('#');
        putchar('\n');
    }
}

static int cmd_info(struct args *a)
{
    struct vol v;
    struct ckpt ck;
    struct cairn_fsinfo fi;
    struct tree_count tc;
    const struct cairn_geometry *g;
    uint32_t bpl, i, bad_segs = 0, marked = 0;
    int err, have_ck, rc = EXIT_OK;
    char err_ck[256];
    if (need_pos(a, 1, 1) < 0)
        return EXIT_ERROR;
    a->vo.path = a->pos[0];
    if (vol_open(&v, &a->vo, 1) < 0) {
        errmsg("%s", v.err);
        vol_close(&v);
        return EXIT_ERROR;
    }
    g = &v.dev->geo;
    bpl = g->blocks_per_lblock ? g->blocks_per_lblock : 1;
    have_ck = ckpt_find_newest(v.dev, g->pages_per_block * bpl, g->block_count / bpl, &ck, err_ck,
                               sizeof err_ck) == 0;
    printf("image:           %s", a->pos[0]);
    if (a->vo.offset)
        printf(" at offset %llu", (unsigned long long)a->vo.offset);
    printf(" (%s)\n", v.sim ? "simulator image file" : v.block_device ? "block device" : "raw image");
    printf("medium:          %s\n", vol_medium_name(g->medium));
    printf("page:            %u bytes", (unsigned)g->page_size);
    if (v.oob)
        printf(" + %u OOB bytes in the image (cairn's spare: %u)", (unsigned)v.oob,
               (unsigned)g->spare_size);
    else if (g->spare_size)
        printf(" + %u spare bytes", (unsigned)g->spare_size);
    printf("\nerase block:     %llu bytes (%u pages), %u blocks%s\n",
           (unsigned long long)g->page_size * g->pages_per_block, (unsigned)g->pages_per_block,
           (unsigned)g->block_count,
           v.detected && !a->vo.block ? " (taken as the segment: an image does not record it)"
                                      : "");
    printf("segment:         %llu bytes (%u erase block%s), %u segments\n",
           (unsigned long long)g->page_size * g->pages_per_block * bpl, (unsigned)bpl,
           bpl == 1 ? "" : "s", (unsigned)(g->block_count / bpl));
    printf("index node:      %u bytes\n", (unsigned)v.node_size);
    if (!v.sim)
        printf("image size:      %llu bytes\n", (unsigned long long)v.img.image_bytes);
    if (g->medium == CAIRN_MEDIUM_NAND && v.dev->is_bad)
        for (i = 0; i < g->block_count; i++)
            if (v.dev->is_bad(v.dev->ctx, i) == 1)
                marked++;
    if (vol_mount(&v, 1) < 0) {
        printf("mount:           fails: %s\n", v.err);
        rc = EXIT_PROBLEMS;
    } else {
        err = cairn_fs_stat(v.fs, &fi);
        if (err == 0) {
            printf("total:           %llu bytes\n", (unsigned long long)fi.total_bytes);
            printf("used:            %llu bytes\n", (unsigned long long)fi.used_bytes);
            printf("free:            %llu bytes\n", (unsigned long long)fi.free_bytes);
        }
        memset(&tc, 0, sizeof tc);
        err = count_tree(v.fs, "/", &tc);
        if (err == 0)
            printf("files:           %llu files (%llu bytes), %llu directories\n",
                   (unsigned long long)tc.files, (unsigned long long)tc.bytes,
                   (unsigned long long)tc.dirs);
        else
            printf("files:           cannot list them: %s (cairn fsck)\n", cairn_strerror(err));
        if (cairn_fs_stat(v.fs, &fi) == 0)
            printf("wear:            erases per segment min %u, mean %u, max %u\n",
                   (unsigned)fi.erase_min, (unsigned)fi.erase_mean, (unsigned)fi.erase_max);
    }
    if (have_ck) {
        for (i = 0; i < ck.h.seg_count; i++)
            bad_segs += ck.segs[i].state == CN_SEG_BAD;
        print_wear(&ck);
    }
    printf("bad blocks:      %u segment%s retired", (unsigned)bad_segs, bad_segs == 1 ? "" : "s");
    if (g->medium == CAIRN_MEDIUM_NAND && v.dev->is_bad)
        printf(", %u erase block%s marked bad in the OOB", (unsigned)marked, marked == 1 ? "" : "s");
    printf("\n");
    if (have_ck) {
        printf("last checkpoint: seq %u in segment %u slot %u%s, %s; ",
               (unsigned)ck.h.seq, (unsigned)ck.anchor[ck.anchor_index], (unsigned)ck.slot,
               ck.copy ? " (second copy)" : "",
               ckpt_clean(&ck.h) ? "clean" : "not clean (the journal is replayed)");
        if (ck.h.log_seg == 0xFFFFFFFFu)
            printf("no journal yet (never written)\n");
        else
            printf("journal at segment %u offset %u (seq %u)\n", (unsigned)ck.h.log_seg,
                   (unsigned)ck.h.log_off, (unsigned)ck.h.log_seq);
        printf("anchors:         segments %u and %u: %u and %u valid checkpoints of %u slots\n",
               (unsigned)ck.anchor[0], (unsigned)ck.anchor[1], (unsigned)ck.valid[0],
               (unsigned)ck.valid[1], (unsigned)ck.slots);
        ckpt_free(&ck);
    } else {
        printf("last checkpoint: none found: %s\n", err_ck);
        rc = EXIT_PROBLEMS;
    }
    return close_vol(&v, rc);
}

/* The decoded parts dump prints; problems found or -1 (out of memory). */
static int dump_parts(const struct args *a, struct vol *v, const struct ckpt *ck)
{
    int problems = 0, r;
    if (a->dump_ckpt || (!a->dump_journal && !a->dump_tree))
        dump_checkpoint(ck, v->dev->geo.medium);
    if (a->dump_journal) {
        r = dump_journal(v->dev, ck);
        problems = r < 0 ? r : problems + r;
    }
    if (a->dump_tree && problems >= 0) {
        r = dump_tree(v->dev, ck);
        problems = r < 0 ? r : problems + r;
    }
    return problems;
}

static int cmd_dump(struct args *a)
{
    struct vol v;
    struct ckpt ck;
    const struct cairn_geometry *g;
    uint32_t bpl;
    char err_ck[256];
    int problems;
    if (need_pos(a, 1, 1) < 0)
        return EXIT_ERROR;
    a->vo.path = a->pos[0];
    if (vol_open(&v, &a->vo, 1) < 0) {
        errmsg("%s", v.err);
        vol_close(&v);
        return EXIT_ERROR;
    }
    g = &v.dev->geo;
    bpl = g->blocks_per_lblock ? g->blocks_per_lblock : 1;
    if (ckpt_find_newest(v.dev, g->pages_per_block * bpl, g->block_count / bpl, &ck, err_ck,
                         sizeof err_ck) < 0) {
        errmsg("%s", err_ck);
        return close_vol(&v, EXIT_ERROR);
    }
    problems = dump_parts(a, &v, &ck);
    ckpt_free(&ck);
    if (problems < 0) {
        errmsg("out of memory");
        return close_vol(&v, EXIT_ERROR);
    }
    return close_vol(&v, problems ? EXIT_PROBLEMS : EXIT_OK);
}

static int cmd_mount(struct args *a)
{
#ifdef CAIRN_WITH_FUSE
    if (need_pos(a, 2, 2) < 0)
        return EXIT_ERROR;
    a->vo.path = a->pos[0];
    return cairn_fuse_mount(&a->vo, a->pos[1], a->mount_opts[0] ? a->mount_opts : NULL,
                            a->foreground);
#else
    (void)a;
    errmsg("built without FUSE (install libfuse3-dev)");
    return EXIT_ERROR;
#endif
}

/* ---- the command table and help ---- */

struct command {
    const char *name;
    int (*fn)(struct args *);
    const char *flags; /* short options it takes, besides -h and -q */
    const char *usage;
    const char *help;
};

#define GEOMETRY_HELP                                                                           \
    "Geometry (new images; when opening, the image tells, see docs/TOOL.md):\n"                 \
    "  --model NAME     nor-m25p16, nor-w25q128, nand-dhara, nand-jffs2, sd-tf\n"               \
    "  --medium M       nor, nand or block (SD/eMMC); without --model: that medium's model\n"  \
    "  --page N         page (sector) size in bytes\n"                                          \
    "  --block N        erase block in bytes (data only)\n"                                     \
    "  --lblock N       erase blocks per segment (default: the fewest cairn accepts)\n"        \
    "  --size N         bytes of flash (data only; default: the model's, or the device's)\n"   \
    "  --spare N        NAND: OOB bytes per page in the image (default page/32; 0 = none)\n"   \
    "Sizes take K, M, G (binary) suffixes.\n"

#define OPEN_HELP                                                                               \
    "Image options:\n"                                                                         \
    "  --offset N       the image starts N bytes into the file (a firmware dump)\n"            \
    "  --medium, --spare, --size, --page, --block, --model: only to settle what the image\n"   \
    "                   cannot tell (see docs/TOOL.md, \"How the geometry is found\")\n"      \
    "  -q               no progress bar\n"

static const struct command commands[] = {
    {"mkfs", cmd_mkfs, "", "mkfs IMAGE [geometry]",
     "Creates IMAGE (a file, or a block device) holding an empty cairn volume.\n"
     "A new file is written whole: the volume's bytes, 0xFF where erased; with --offset\n"
     "the volume goes at that offset of an existing file (the rest is left as it is).\n"
     "  --offset N       where the volume starts in the file\n"
     "  --no-sync        do not fdatasync the image while writing\n" GEOMETRY_HELP},
    {"build", cmd_build, "o", "build DIR -o IMAGE [geometry]",
     "Creates IMAGE holding a copy of the folder DIR: regular files and directories\n"
     "(others are skipped with a warning). Deterministic: the same folder and flags give\n"
     "the same bytes (names are copied in byte order).\n"
     "  -o IMAGE         the image to create (required)\n"
     "  --offset N, --no-sync, -q   as for mkfs; -q: no progress bar\n" GEOMETRY_HELP},
    {"ls", cmd_ls, "lR", "ls [-l] [-R] IMAGE [PATH]",
     "Lists a directory of the volume (default /), sorted by name; directories end in '/'.\n"
     "  -l               long: type (d or -), size in bytes, name\n"
     "  -R               recursive: every entry below, as a path relative to PATH\n" OPEN_HELP},
    {"cat", cmd_cat, "", "cat IMAGE PATH...",
     "Writes the files' contents to stdout.\n" OPEN_HELP},
    {"get", cmd_get, "", "get IMAGE PATH [DEST]",
     "Copies a file or a directory (recursively) out of the volume to DEST (default: its\n"
     "name in the current directory; '-': stdout; an existing directory: into it).\n" OPEN_HELP},
    {"put", cmd_put, "", "put IMAGE SRC [DEST]",
     "Copies a host file or directory (recursively) into the volume as DEST (default:\n"
     "/NAME; an existing directory: into it). SRC '-' reads stdin (DEST needed). An existing\n"
     "file is replaced.\n" OPEN_HELP},
    {"rm", cmd_rm, "r", "rm [-r] IMAGE PATH...",
     "Removes files and empty directories.\n"
     "  -r               directories with everything in them\n" OPEN_HELP},
    {"mkdir", cmd_mkdir, "p", "mkdir [-p] IMAGE PATH...",
     "Creates directories.\n"
     "  -p               with their parents; an existing directory is fine\n" OPEN_HELP},
    {"mv", cmd_mv, "", "mv IMAGE FROM TO",
     "Renames FROM to TO (replacing a file TO; into TO when it is a directory).\n" OPEN_HELP},
    {"extract", cmd_extract, "v", "extract IMAGE DIR",
     "Copies the whole volume into the host directory DIR (created if needed).\n"
     "  -v               print what was copied\n" OPEN_HELP},
    {"fsck", cmd_fsck, "", "fsck IMAGE",
     "Checks the volume (cairn_check: every index node, entry and extent, cross-checked;\n"
     "on NAND each page's tag and data CRC). Each problem is printed as 'problem: ...'.\n"
     "Exit 0 clean, 1 problems found (or the volume does not mount: corrupt), 2 error.\n"
     "The image is not changed (a read-only mount).\n" OPEN_HELP},
    {"mount", cmd_mount, "of", "mount [-f] [-o OPTS] IMAGE DIR",
     "Mounts the volume at DIR through FUSE 3 (read-write) until 'fusermount3 -u DIR' or\n"
     "SIGTERM, then unmounts it cleanly. fsync and close make a file durable\n"
     "(cairn_file_sync). No times, permissions or links; one request at a time.\n"
     "  -f               foreground (default: in the background once mounted)\n"
     "  -o OPTS          FUSE mount options, comma separated (repeatable); ro: read-only\n"
     OPEN_HELP},
    {"info", cmd_info, "", "info IMAGE",
     "Geometry, segment size, space used and free, files, wear (erase counts and their\n"
     "histogram), bad blocks, the last checkpoint. Exit 1 when the volume does not mount.\n"
     OPEN_HELP},
    {"dump", cmd_dump, "", "dump [--journal] [--tree] [--all] IMAGE",
     "The volume's on-flash structures decoded as docs/FORMAT.md describes them,\n"
     "without mounting (for images that do not mount too). Default: the newest\n"
     "checkpoint (header fields, heads, the segment table).\n"
     "  --journal        the journal records from the checkpoint's position to the end\n"
     "                   of the valid chain, and why it ends there\n"
     "  --tree           every tree node from the root, depth first, with its entries\n"
     "                   (on NAND each extent's page tags are checked)\n"
     "  --all            the checkpoint, the journal and the tree\n"
     "Damage is printed as 'problem: ...' lines. Exit 0, 1 problems found, 2 error.\n"
     OPEN_HELP},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    size_t i;
    fprintf(f, "usage: cairn COMMAND [options] ARGS   (cairn COMMAND --help)\n\ncommands:\n");
    for (i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  cairn %s\n", commands[i].usage);
    fprintf(f, "\nImages are raw: exactly the bytes to program (NOR, SD: the flash contents;\n"
               "NAND: each page's data then its OOB, as nanddump --oob writes). A block\n"
               "device (/dev/sdX, /dev/mmcblkN) is used directly. docs/TOOL.md has the rest.\n"
               "Exit codes: 0 ok, 1 problems found (fsck), 2 error.\n");
}

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    uint64_t mul = 1;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return -1;
    v = strtoull(s, &end, 0);
    if (errno || end == s)
        return -1;
    if (*end == 'k' || *end == 'K')
        mul = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1024ull * 1024 * 1024, end++;
    if (mul > 1 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
        end += strlen(end);
    if (*end != '\0' || (v && (uint64_t)v * mul / mul != v))
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

static int parse_u32(const char *opt, const char *s, uint32_t *out)
{
    uint64_t v;
    if (parse_size(s, &v) < 0 || v > 0xFFFFFFFFu) {
        errmsg("%s: bad number '%s'", opt, s);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

enum {
    OPT_OFFSET = 256,
    OPT_MODEL,
    OPT_MEDIUM,
    OPT_PAGE,
    OPT_BLOCK,
    OPT_LBLOCK,
    OPT_SIZE,
    OPT_SPARE,
    OPT_NOSYNC,
    OPT_JOURNAL,
    OPT_TREE,
    OPT_ALL
};

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},       {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},      {"verbose", no_argument, NULL, 'v'},
        {"offset", required_argument, NULL, OPT_OFFSET},
        {"model", required_argument, NULL, OPT_MODEL},
        {"medium", required_argument, NULL, OPT_MEDIUM},
        {"page", required_argument, NULL, OPT_PAGE},
        {"block", required_argument, NULL, OPT_BLOCK},
        {"lblock", required_argument, NULL, OPT_LBLOCK},
        {"size", required_argument, NULL, OPT_SIZE},
        {"spare", required_argument, NULL, OPT_SPARE},
        {"no-sync", no_argument, NULL, OPT_NOSYNC},
        {"journal", no_argument, NULL, OPT_JOURNAL},
        {"tree", no_argument, NULL, OPT_TREE},
        {"all", no_argument, NULL, OPT_ALL},
        {NULL, 0, NULL, 0}};
    const struct command *cmd = NULL;
    struct args a;
    size_t i;
    int c;
    if (argc < 2) {
        usage(stderr);
        return EXIT_ERROR;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        if (argc > 2 && strcmp(argv[1], "help") == 0)
            for (i = 0; i < N_COMMANDS; i++)
                if (strcmp(argv[2], commands[i].name) == 0) {
                    printf("usage: cairn %s\n\n%s", commands[i].usage, commands[i].help);
                    return EXIT_OK;
                }
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("cairn %d.%d (on-disk format %d)\n", CAIRN_VERSION_MAJOR, CAIRN_VERSION_MINOR,
               CAIRN_DISK_VERSION);
        return EXIT_OK;
    }
    for (i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            cmd = &commands[i];
    if (cmd == NULL) {
        fprintf(stderr, "cairn: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return EXIT_ERROR;
    }
    g_cmd = cmd->name;
    memset(&a, 0, sizeof a);
    a.cmd = cmd->name;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc - 1, argv + 1, ":ho:lRrpvqf", longopts, NULL)) != -1) {
        uint64_t v64;
        if (c != 'h' && c != 'q' && c < 256 && c != '?' && c != ':' &&
            strchr(cmd->flags, c) == NULL) {
            errmsg("option -%c is not for %s (cairn %s --help)", c, cmd->name, cmd->name);
            return EXIT_ERROR;
        }
        switch (c) {
        case 'h': a.help = 1; break;
        case 'o':
            a.output = optarg;
            if (strlen(a.mount_opts) + strlen(optarg) + 2 > sizeof a.mount_opts) {
                errmsg("-o: too long");
                return EXIT_ERROR;
            }
            if (a.mount_opts[0])
                strcat(a.mount_opts, ",");
            strcat(a.mount_opts, optarg);
            break;
        case 'f': a.foreground = 1; break;
        case 'l': a.long_list = 1; break;
        case 'R':
        case 'r': a.recursive = 1; break;
        case 'p': a.parents = 1; break;
        case 'v': a.verbose = 1; break;
        case 'q': a.quiet = 1; break;
        case OPT_OFFSET:
            if (parse_size(optarg, &a.vo.offset) < 0) {
                errmsg("--offset: bad number '%s'", optarg);
                return EXIT_ERROR;
            }
            break;
        case OPT_MODEL: a.vo.model = optarg; break;
        case OPT_MEDIUM:
            a.vo.medium = vol_medium_parse(optarg);
            if (a.vo.medium == 0) {
                errmsg("--medium: nor, nand or block, not '%s'", optarg);
                return EXIT_ERROR;
            }
            break;
        case OPT_PAGE:
            if (parse_u32("--page", optarg, &a.vo.page) < 0)
                return EXIT_ERROR;
            break;
        case OPT_BLOCK:
            if (parse_u32("--block", optarg, &a.vo.block) < 0)
                return EXIT_ERROR;
            break;
        case OPT_LBLOCK:
            if (parse_u32("--lblock", optarg, &a.vo.lblock) < 0)
                return EXIT_ERROR;
            break;
        case OPT_SIZE:
            if (parse_size(optarg, &v64) < 0 || v64 == 0) {
                errmsg("--size: bad number '%s'", optarg);
                return EXIT_ERROR;
            }
            a.vo.size = v64;
            break;
        case OPT_SPARE:
            if (parse_u32("--spare", optarg, &a.vo.spare) < 0)
                return EXIT_ERROR;
            a.vo.have_spare = 1;
            break;
        case OPT_NOSYNC: a.vo.no_sync = 1; break;
        case OPT_JOURNAL:
        case OPT_TREE:
        case OPT_ALL:
            if (strcmp(cmd->name, "dump") != 0) {
                errmsg("%s is for dump (cairn %s --help)", argv[optind], cmd->name);
                return EXIT_ERROR;
            }
            a.dump_ckpt |= c == OPT_ALL;
            a.dump_journal |= c != OPT_TREE;
            a.dump_tree |= c != OPT_JOURNAL;
            break;
        case ':':
            errmsg("option %s needs a value", argv[optind]); /* argv + 1: the option */
            return EXIT_ERROR;
        default:
            if (optopt)
                errmsg("unknown option '-%c' (cairn %s --help)", optopt, cmd->name);
            else
                errmsg("unknown option '%s' (cairn %s --help)", argv[optind], cmd->name);
            return EXIT_ERROR;
        }
    }
    if (a.help) {
        printf("usage: cairn %s\n\n%s", cmd->usage, cmd->help);
        return EXIT_OK;
    }
    a.pos = argv + 1 + optind;
    a.npos = argc - 1 - optind;
    return cmd->fn(&a);
}
