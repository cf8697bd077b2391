#include "tmodel.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- utils */

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        t_fatal("out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = (char *)xrealloc(NULL, n);
    memcpy(p, s, n);
    return p;
}

static uint8_t *dupbytes(const uint8_t *p, int32_t n)
{
    uint8_t *q = (uint8_t *)xrealloc(NULL, (size_t)n);
    if (n)
        memcpy(q, p, (size_t)n);
    return q;
}

/* 1 if p lies strictly below dir ("/a" is below "/", "/a/b" below "/a"). */
static int below(const char *dir, const char *p)
{
    size_t n = strlen(dir);
    if (strcmp(dir, "/") == 0)
        return p[0] == '/' && p[1] != 0;
    return strncmp(dir, p, n) == 0 && p[n] == '/';
}

static const char *lastname(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---------------------------------------------------------------- model */

void m_init(struct model *m) { memset(m, 0, sizeof *m); }

static void m_hist_free(struct mobj *o)
{
    int i;
    for (i = 0; i < o->nhist; i++)
        free(o->hist[i].data);
    free(o->hist);
    o->hist = NULL;
    o->nhist = o->chist = 0;
    o->dur = 0;
}

static void m_ns_free(struct model *m)
{
    int i, j;
    for (i = 0; i < m->nns; i++) {
        for (j = 0; j < m->ns[i].n; j++)
            free(m->ns[i].v[j].path);
        free(m->ns[i].v);
    }
    free(m->ns);
    m->ns = NULL;
    m->nns = m->cns = 0;
    m->ns_lo = 0;
}

void m_free(struct model *m)
{
    int i;
    for (i = 0; i < m->nnodes; i++)
        free(m->nodes[i].path);
    free(m->nodes);
    for (i = 0; i < m->nobjs; i++) {
        free(m->objs[i].data);
        m_hist_free(&m->objs[i]);
    }
    free(m->objs);
    m_ns_free(m);
    memset(m, 0, sizeof *m);
}

int m_find(const struct model *m, const char *path)
{
    int i;
    for (i = 0; i < m->nnodes; i++)
        if (strcmp(m->nodes[i].path, path) == 0)
            return i;
    return -1;
}

int m_children(const struct model *m, const char *dir)
{
    int i, n = 0;
    for (i = 0; i < m->nnodes; i++) {
        const char *p = m->nodes[i].path;
        if (below(dir, p) && !strchr(p + strlen(dir) + 1, '/'))
            n++;
    }
    return n;
}

int m_open_handles(const struct model *m, const char *path)
{
    int i, n = 0;
    for (i = 0; i < M_MAXFD; i++) {
        const struct mfd *f = &m->fds[i];
        if (f->used) {
            int k;
            for (k = 0; k < m->nnodes; k++)
                if (m->nodes[k].obj == f->obj &&
                    (strcmp(m->nodes[k].path, path) == 0 || below(path, m->nodes[k].path)))
                    n++;
        }
    }
    return n;
}

static int node_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mnode *)a)->path, ((const struct mnode *)b)->path);
}

static void m_ns_push(struct model *m)
{
    struct mns *s;
    int i;
    if (!m->record)
        return;
    if (m->nns == m->cns) {
        m->cns = m->cns ? m->cns * 2 : 16;
        m->ns = (struct mns *)xrealloc(m->ns, (size_t)m->cns * sizeof *m->ns);
    }
    s = &m->ns[m->nns++];
    s->n = m->nnodes;
    s->v = (struct mnode *)xrealloc(NULL, (size_t)s->n * sizeof *s->v);
    for (i = 0; i < s->n; i++) {
        s->v[i].path = xstrdup(m->nodes[i].path);
        s->v[i].obj = m->nodes[i].obj;
    }
    qsort(s->v, (size_t)s->n, sizeof *s->v, node_cmp);
}

static void m_hist_push(struct model *m, struct mobj *o, int32_t woff, int32_t wlen)
{
    struct mstate *s;
    if (!m->record)
        return;
    if (o->nhist == o->chist) {
        o->chist = o->chist ? o->chist * 2 : 8;
        o->hist = (struct mstate *)xrealloc(o->hist, (size_t)o->chist * sizeof *o->hist);
    }
    s = &o->hist[o->nhist++];
    s->data = dupbytes(o->data, o->size);
    s->size = o->size;
    s->woff = woff;
    s->wlen = wlen;
}

void m_rec_start(struct model *m)
{
    int i;
    m_ns_free(m);
    m->record = 1;
    m_ns_push(m);
    for (i = 0; i < m->nobjs; i++) {
        struct mobj *o = &m->objs[i];
        m_hist_free(o);
        o->created_ns = 0;
        if (o->alive && o->type == CAIRN_TYPE_FILE)
            m_hist_push(m, o, 0, 0);
    }
}

static int m_new_obj(struct model *m, uint8_t type)
{
    struct mobj *o;
    if (m->nobjs == m->cobjs) {
        m->cobjs = m->cobjs ? m->cobjs * 2 : 32;
        m->objs = (struct mobj *)xrealloc(m->objs, (size_t)m->cobjs * sizeof *m->objs);
    }
    o = &m->objs[m->nobjs];
    memset(o, 0, sizeof *o);
    o->type = type;
    o->alive = 1;
    return m->nobjs++;
}

static void m_add_node(struct model *m, const char *path, int obj)
{
    if (m->nnodes == m->cnodes) {
        m->cnodes = m->cnodes ? m->cnodes * 2 : 32;
        m->nodes = (struct mnode *)xrealloc(m->nodes, (size_t)m->cnodes * sizeof *m->nodes);
    }
    m->nodes[m->nnodes].path = xstrdup(path);
    m->nodes[m->nnodes].obj = obj;
    m->nnodes++;
}

static void m_del_node(struct model *m, int k)
{
    struct mobj *o = &m->objs[m->nodes[k].obj];
    o->alive = 0;
    if (o->type == CAIRN_TYPE_FILE)
        m->bytes -= o->size;
    free(m->nodes[k].path);
    m->nodes[k] = m->nodes[--m->nnodes];
}

static void m_set_size(struct model *m, struct mobj *o, int32_t size)
{
    if (size > o->cap) {
        int32_t c = o->cap ? o->cap : 64;
        while (c < size)
            c = c > 0x3FFFFFFF ? size : c * 2;
        o->data = (uint8_t *)xrealloc(o->data, (size_t)c);
        o->cap = c;
    }
    if (size > o->size)
        memset(o->data + o->size, 0, (size_t)(size - o->size));
    if (o->alive)
        m->bytes += (int64_t)size - o->size;
    o->size = size;
}

/* 0, CAIRN_ERR_NOENT or CAIRN_ERR_NOTDIR for the ancestors of path. */
static int m_parent_err(const struct model *m, const char *path)
{
    char buf[4096];
    size_t i, n = strlen(path);
    if (n >= sizeof buf)
        return CAIRN_ERR_NAMETOOLONG;
    for (i = 1; i < n; i++) {
        if (path[i] == '/') {
            int k;
            memcpy(buf, path, i);
            buf[i] = 0;
            k = m_find(m, buf);
            if (k < 0)
                return CAIRN_ERR_NOENT;
            if (m->objs[m->nodes[k].obj].type != CAIRN_TYPE_DIR)
                return CAIRN_ERR_NOTDIR;
        }
    }
    return 0;
}

static int m_open_exp(const struct model *m, const char *path, int flags)
{
    int acc = flags & 3, e, k;
    if (acc == 0)
        return CAIRN_ERR_INVAL;
    e = m_parent_err(m, path);
    if (e)
        return e;
    k = m_find(m, path);
    if (k >= 0) {
        if ((flags & CAIRN_O_CREAT) && (flags & CAIRN_O_EXCL))
            return CAIRN_ERR_EXIST; /* POSIX: EEXIST, even for a directory */
        if (m->objs[m->nodes[k].obj].type == CAIRN_TYPE_DIR)
            return CAIRN_ERR_ISDIR;
        return 0;
    }
    return (flags & CAIRN_O_CREAT) ? 0 : CAIRN_ERR_NOENT;
}

/* Namespace and content effect of a successful open: the object. */
static int m_open_apply(struct model *m, const char *path, int flags)
{
    int k = m_find(m, path), obj;
    if (k < 0) {
        obj = m_new_obj(m, CAIRN_TYPE_FILE);
        m_add_node(m, path, obj);
        m_ns_push(m);
        m->objs[obj].created_ns = m->nns - 1;
        m_hist_push(m, &m->objs[obj], 0, 0);
        return obj;
    }
    obj = m->nodes[k].obj;
    if ((flags & CAIRN_O_TRUNC) && (flags & CAIRN_O_WRONLY) &&
        m->objs[obj].size != 0) {
        m_set_size(m, &m->objs[obj], 0);
        m_hist_push(m, &m->objs[obj], 0, 0);
    }
    return obj;
}

/* An open handle whose file is still linked (a handle of a removed or
 * replaced file fails with BADF: include/cairn.h). */
static struct mfd *m_fd(struct model *m, int fd)
{
    if (fd < 0 || fd >= M_MAXFD || !m->fds[fd].used || !m->objs[m->fds[fd].obj].alive)
        return NULL;
    return &m->fds[fd];
}

static void m_durable(struct model *m, int obj)
{
    struct mobj *o = &m->objs[obj];
    if (!m->record)
        return;
    if (o->nhist)
        o->dur = o->nhist - 1;
    if (o->created_ns > m->ns_lo)
        m->ns_lo = o->created_ns;
}

static void m_durable_all(struct model *m)
{
    int i;
    if (!m->record)
        return;
    for (i = 0; i < m->nobjs; i++)
        if (m->objs[i].nhist)
            m->objs[i].dur = m->objs[i].nhist - 1;
    m->ns_lo = m->nns - 1;
}

static void m_write_apply(struct model *m, struct mfd *f, const void *buf, int32_t len)
{
    struct mobj *o = &m->objs[f->obj];
    int32_t pos = (f->flags & CAIRN_O_APPEND) ? o->size : f->pos;
    if (pos + len > o->size)
        m_set_size(m, o, pos + len);
    memcpy(o->data + pos, buf, (size_t)len);
    f->pos = pos + len;
    m_hist_push(m, o, pos, len);
}

static int m_mkdir_exp(const struct model *m, const char *path)
{
    int e = m_parent_err(m, path);
    if (e)
        return e;
    if (strcmp(path, "/") == 0 || m_find(m, path) >= 0)
        return CAIRN_ERR_EXIST;
    return 0;
}

static void m_mkdir_apply(struct model *m, const char *path)
{
    int obj = m_new_obj(m, CAIRN_TYPE_DIR);
    m_add_node(m, path, obj);
    m_ns_push(m);
    m->objs[obj].created_ns = m->nns - 1;
}

static int m_remove_exp(const struct model *m, const char *path)
{
    int e = m_parent_err(m, path), k;
    if (e)
        return e;
    k = m_find(m, path);
    if (k < 0)
        return CAIRN_ERR_NOENT;
    if (m->objs[m->nodes[k].obj].type == CAIRN_TYPE_DIR && m_children(m, path) > 0)
        return CAIRN_ERR_NOTEMPTY;
    return 0;
}

static void m_remove_apply(struct model *m, const char *path)
{
    m_del_node(m, m_find(m, path));
    m_ns_push(m);
}

static int m_rename_exp(const struct model *m, const char *from, const char *to)
{
    int e = m_parent_err(m, from), kf, kt;
    if (e)
        return e;
    kf = m_find(m, from);
    if (kf < 0)
        return CAIRN_ERR_NOENT;
    e = m_parent_err(m, to);
    if (e)
        return e;
    if (strcmp(from, to) == 0)
        return 0;
    if (below(from, to))
        return CAIRN_ERR_INVAL;
    kt = m_find(m, to);
    if (kt >= 0) {
        uint8_t tf = m->objs[m->nodes[kf].obj].type, tt = m->objs[m->nodes[kt].obj].type;
        if (tf == CAIRN_TYPE_FILE && tt == CAIRN_TYPE_DIR)
            return CAIRN_ERR_ISDIR;
        if (tf == CAIRN_TYPE_DIR && tt == CAIRN_TYPE_FILE)
            return CAIRN_ERR_NOTDIR;
        if (tt == CAIRN_TYPE_DIR && m_children(m, to) > 0)
            return CAIRN_ERR_NOTEMPTY;
    }
    return 0;
}

static void m_rename_apply(struct model *m, const char *from, const char *to)
{
    int kt, i;
    size_t fl = strlen(from);
    char *f;
    if (strcmp(from, to) == 0)
        return;
    f = xstrdup(from);
    kt = m_find(m, to);
    if (kt >= 0)
        m_del_node(m, kt);
    for (i = 0; i < m->nnodes; i++) {
        char *p = m->nodes[i].path;
        if (strcmp(p, f) == 0) {
            m->nodes[i].path = xstrdup(to);
            free(p);
        } else if (below(f, p)) {
            size_t tl = strlen(to), rl = strlen(p + fl);
            char *q = (char *)xrealloc(NULL, tl + rl + 1);
            memcpy(q, to, tl);
            memcpy(q + tl, p + fl, rl + 1);
            m->nodes[i].path = q;
            free(p);
        }
    }
    free(f);
    m_ns_push(m);
}

struct m_load_arg {
    struct model *m;
    cairn *fs;
    int rc;
};

static int m_load_fn(void *arg, const char *path, const struct cairn_info *info)
{
    struct m_load_arg *a = (struct m_load_arg *)arg;
    int obj = m_new_obj(a->m, info->type == CAIRN_TYPE_DIR ? CAIRN_TYPE_DIR
                                                           : CAIRN_TYPE_FILE);
    m_add_node(a->m, path, obj);
    if (info->type != CAIRN_TYPE_DIR) {
        uint8_t *buf;
        int32_t len;
        int rc = t_read_file(a->fs, path, &buf, &len);
        struct mobj *o = &a->m->objs[obj];
        if (rc != 0)
            return rc;
        m_set_size(a->m, o, len);
        if (len)
            memcpy(o->data, buf, (size_t)len);
        free(buf);
    }
    return 0;
}

int m_load(struct model *m, cairn *fs)
{
    struct m_load_arg a;
    m_free(m);
    a.m = m;
    a.fs = fs;
    a.rc = 0;
    return t_walk(fs, "/", m_load_fn, &a);
}

/* --------------------------------------------------------------- driver */

static void d_failf(struct mdrv *d, const char *file, int line, const char *cond,
                    const char *fmt, ...) TC_FMT(5, 6);
static void d_failf(struct mdrv *d, const char *file, int line, const char *cond,
                    const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tc_failed(file, line, cond, "[%s seed %llu step %ld] %s", d->label,
              (unsigned long long)d->seed, d->step, msg);
    d->failed = 1;
    d->stop = 1;
}

#define DCHECK(d, cond, ...)                                                   \
    do {                                                                       \
        if (cond)                                                              \
            tc_pass++;                                                         \
        else                                                                   \
            d_failf(d, __FILE__, __LINE__, #cond, __VA_ARGS__);                \
    } while (0)

#define DCHECK_RC(d, got, exp, what)                                           \
    do {                                                                       \
        d_trace(d, what, (long)(got));                                         \
        DCHECK(d, (long)(got) == (long)(exp), "%s: got %ld %s, expected %ld %s", \
               what, (long)(got), t_errname((long)(got)), (long)(exp),         \
               t_errname((long)(exp)));                                        \
    } while (0)

/* CAIRN_TEST_VERBOSE=1: print every call and its result. */
static void d_trace(struct mdrv *d, const char *what, long got)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = (int)t_env_u64("CAIRN_TEST_VERBOSE", 0);
    if (verbose)
        printf("    [%s %ld] %s = %ld\n", d->label, d->step, what, got);
}

/* Record mode: 1 (and stop) if the power went off during the last call. */
static int d_cut(struct mdrv *d, const char *what)
{
    if (!d->record || csim_powered(d->sim))
        return 0;
    d->stop = 1;
    d->cut_in = what;
    return 1;
}

int d_open(struct mdrv *d, const char *path, int flags)
{
    struct model *m = d->m;
    int exp = m_open_exp(m, path, flags), fd, obj = -1, i;
    uint32_t open_now = 0;
    char what[300];
    snprintf(what, sizeof what, "open(%.200s, 0x%x)", path, (unsigned)flags);
    for (i = 0; i < M_MAXFD; i++)
        open_now += m->fds[i].used != 0;
    if (exp >= 0 && d->max_open && open_now >= d->max_open)
        exp = CAIRN_ERR_MFILE;
    if (d->record) {
        if (exp < 0)
            return exp;
        obj = m_open_apply(m, path, flags);
    }
    fd = cairn_open(d->fs, path, flags);
    if (d_cut(d, "open"))
        return fd;
    if (d->nospc_ok && fd == CAIRN_ERR_NOSPC && exp >= 0) {
        d->nospc++;
        return fd;
    }
    if (exp < 0) {
        DCHECK_RC(d, fd, exp, what);
        if (fd >= 0)
            cairn_close(d->fs, fd);
        return fd;
    }
    d_trace(d, what, fd);
    DCHECK(d, fd >= 0 && fd < M_MAXFD && !m->fds[fd].used,
           "%s: got %d %s (expected a new handle)", what, fd, t_errname(fd));
    if (fd < 0 || fd >= M_MAXFD || m->fds[fd].used)
        return fd < 0 ? fd : CAIRN_ERR_BADF;
    if (!d->record)
        obj = m_open_apply(m, path, flags);
    m->fds[fd].used = 1;
    m->fds[fd].obj = obj;
    m->fds[fd].flags = flags;
    m->fds[fd].pos = 0;
    m->objs[obj].nopen++;
    return fd;
}

int32_t d_write(struct mdrv *d, int fd, const void *buf, int32_t len)
{
    struct model *m = d->m;
    struct mfd *f = m_fd(m, fd);
    int32_t exp, act;
    char what[100];
    snprintf(what, sizeof what, "write(fd %d, %ld bytes) at %ld of %ld", fd, (long)len,
             f ? (long)f->pos : -1L, f ? (long)m->objs[f->obj].size : -1L);
    if (!f || !(f->flags & CAIRN_O_WRONLY))
        exp = CAIRN_ERR_BADF;
    else
        exp = len;
    if (d->record) {
        if (exp < 0)
            return exp;
        m_write_apply(m, f, buf, len);
    }
    act = cairn_write(d->fs, fd, buf, len);
    if (d_cut(d, "write"))
        return act;
    if (d->nospc_ok && exp > 0 && (act == CAIRN_ERR_NOSPC || (act >= 0 && act < exp))) {
        d->nospc++;
        if (act > 0)
            m_write_apply(m, f, buf, act);
        return act;
    }
    DCHECK_RC(d, act, exp, what);
    if (!d->record && act == exp && exp >= 0)
        m_write_apply(m, f, buf, len);
    return act;
}

int32_t d_read(struct mdrv *d, int fd, int32_t len)
{
    struct model *m = d->m;
    struct mfd *f = m_fd(m, fd);
    int32_t exp, act;
    uint8_t *buf = (uint8_t *)xrealloc(NULL, (size_t)len + 1);
    char what[100];
    snprintf(what, sizeof what, "read(fd %d, %ld bytes) at %ld of %ld", fd, (long)len,
             f ? (long)f->pos : -1L, f ? (long)m->objs[f->obj].size : -1L);
    if (!f || !(f->flags & CAIRN_O_RDONLY)) {
        exp = CAIRN_ERR_BADF;
    } else {
        int32_t size = m->objs[f->obj].size;
        exp = f->pos >= size ? 0 : (size - f->pos < len ? size - f->pos : len);
    }
    act = cairn_read(d->fs, fd, buf, len);
    if (d_cut(d, "read")) {
        free(buf);
        return act;
    }
    DCHECK_RC(d, act, exp, what);
    if (act == exp && exp > 0) {
        const uint8_t *want = m->objs[f->obj].data + f->pos;
        int same = memcmp(buf, want, (size_t)exp) == 0;
        DCHECK(d, same, "%s at %ld: data differs", what, (long)f->pos);
        if (!same)
            t_print_diff(buf, act, want, exp);
        f->pos += exp;
    }
    free(buf);
    return act;
}

int32_t d_seek(struct mdrv *d, int fd, int32_t off, int whence)
{
    struct model *m = d->m;
    struct mfd *f = m_fd(m, fd);
    int64_t base = 0, np;
    int32_t exp, act;
    char what[100];
    snprintf(what, sizeof what, "seek(fd %d, %ld, %d)", fd, (long)off, whence);
    if (!f) {
        exp = CAIRN_ERR_BADF;
    } else {
        if (whence == CAIRN_SEEK_CUR)
            base = f->pos;
        else if (whence == CAIRN_SEEK_END)
            base = m->objs[f->obj].size;
        np = base + off;
        exp = (np < 0 || np > INT32_MAX || whence < 0 || whence > 2)
                  ? CAIRN_ERR_INVAL
                  : (int32_t)np;
    }
    act = cairn_seek(d->fs, fd, off, whence);
    if (d_cut(d, "seek"))
        return act;
    DCHECK_RC(d, act, exp, what);
    if (act == exp && exp >= 0)
        f->pos = exp;
    return act;
}

int d_truncate(struct mdrv *d, int fd, int32_t size)
{
    struct model *m = d->m;
    struct mfd *f = m_fd(m, fd);
    int exp, act;
    char what[100];
    snprintf(what, sizeof what, "truncate(fd %d, %ld) of %ld", fd, (long)size,
             f ? (long)m->objs[f->obj].size : -1L);
    if (!f || !(f->flags & CAIRN_O_WRONLY))
        exp = CAIRN_ERR_BADF;
    else
        exp = size < 0 ? CAIRN_ERR_INVAL : 0;
    if (d->record) {
        if (exp < 0)
            return exp;
        m_set_size(m, &m->objs[f->obj], size);
        m_hist_push(m, &m->objs[f->obj], 0, 0);
    }
    act = cairn_truncate(d->fs, fd, size);
    if (d_cut(d, "truncate"))
        return act;
    if (d->nospc_ok && exp == 0 && act == CAIRN_ERR_NOSPC) {
        d->nospc++;
        return act;
    }
    DCHECK_RC(d, act, exp, what);
    if (!d->record && act == 0 && exp == 0)
        m_set_size(m, &m->objs[f->obj], size);
    return act;
}

int d_fsync(struct mdrv *d, int fd)
{
    struct model *m = d->m;
    struct mfd *f = m_fd(m, fd);
    int exp = f ? 0 : CAIRN_ERR_BADF, act;
    char what[100];
    snprintf(what, sizeof what, "file_sync(fd %d)", fd);
    if (d->record && exp < 0)
        return exp;
    act = cairn_file_sync(d->fs, fd);
    if (act == 0 && f && (f->flags & CAIRN_O_WRONLY))
        m_durable(m, f->obj);
    if (d_cut(d, "file_sync"))
        return act;
    if (d->nospc_ok && exp == 0 && act == CAIRN_ERR_NOSPC) {
        d->nospc++;
        return act;
    }
    DCHECK_RC(d, act, exp, what);
    return act;
}

int d_close(struct mdrv *d, int fd)
{
    struct model *m = d->m;
    struct mfd *f = fd >= 0 && fd < M_MAXFD && m->fds[fd].used ? &m->fds[fd] : NULL;
    int exp = f ? 0 : CAIRN_ERR_BADF, act; /* an unlinked file's handle closes too */
    char what[100];
    snprintf(what, sizeof what, "close(fd %d)", fd);
    if (d->record && exp < 0)
        return exp;
    act = cairn_close(d->fs, fd);
    if (act == 0 && f && (f->flags & CAIRN_O_WRONLY))
        m_durable(m, f->obj);
    if (f && !(act == CAIRN_ERR_NOSPC && d->nospc_ok)) {
        /* The handle is gone whatever close returned, but for NOSPC: then
         * nothing was released (include/cairn.h), the caller may retry. */
        m->objs[f->obj].nopen--;
        f->used = 0;
    }
    if (d_cut(d, "close"))
        return act;
    if (d->nospc_ok && exp == 0 && act == CAIRN_ERR_NOSPC) {
        d->nospc++;
        return act;
    }
    DCHECK_RC(d, act, exp, what);
    return act;
}

int d_sync(struct mdrv *d)
{
    int act = cairn_sync(d->fs);
    if (act == 0)
        m_durable_all(d->m);
    if (d_cut(d, "sync"))
        return act;
    DCHECK_RC(d, act, 0, "sync");
    return act;
}

int d_mkdir(struct mdrv *d, const char *path)
{
    int exp = m_mkdir_exp(d->m, path), act;
    char what[300];
    snprintf(what, sizeof what, "mkdir(%.200s)", path);
    if (d->record) {
        if (exp < 0)
            return exp;
        m_mkdir_apply(d->m, path);
    }
    act = cairn_mkdir(d->fs, path);
    if (d_cut(d, "mkdir"))
        return act;
    DCHECK_RC(d, act, exp, what);
    if (!d->record && act == 0 && exp == 0)
        m_mkdir_apply(d->m, path);
    return act;
}

int d_remove(struct mdrv *d, const char *path)
{
    int exp = m_remove_exp(d->m, path), act;
    char what[300];
    snprintf(what, sizeof what, "remove(%.200s)", path);
    if (d->record) {
        if (exp < 0)
            return exp;
        m_remove_apply(d->m, path);
    }
    act = cairn_remove(d->fs, path);
    if (d_cut(d, "remove"))
        return act;
    if (d->nospc_ok && exp == 0 && act == CAIRN_ERR_NOSPC) {
        d->nospc++;
        return act;
    }
    DCHECK_RC(d, act, exp, what);
    if (!d->record && act == 0 && exp == 0)
        m_remove_apply(d->m, path);
    return act;
}

int d_rename(struct mdrv *d, const char *from, const char *to)
{
    int exp = m_rename_exp(d->m, from, to), act;
    char what[400];
    snprintf(what, sizeof what, "rename(%.150s, %.150s)", from, to);
    if (d->record) {
        if (exp < 0)
            return exp;
        m_rename_apply(d->m, from, to);
    }
    act = cairn_rename(d->fs, from, to);
    if (d_cut(d, "rename"))
        return act;
    DCHECK_RC(d, act, exp, what);
    if (!d->record && act == 0 && exp == 0)
        m_rename_apply(d->m, from, to);
    return act;
}

/* Closes the handles whose file was removed (a close that failed with NOSPC
 * keeps its handle; the caller may drop the file and then close it). */
void d_close_unlinked(struct mdrv *d)
{
    int i;
    for (i = 0; i < M_MAXFD && !d->stop; i++)
        if (d->m->fds[i].used && !d->m->objs[d->m->fds[i].obj].alive)
            d_close(d, i);
}

void d_close_all(struct mdrv *d)
{
    int i;
    for (i = 0; i < M_MAXFD && !d->stop; i++)
        if (d->m->fds[i].used)
            d_close(d, i);
}

/* Compares one directory's listing with the model. */
static void d_verify_dir(struct mdrv *d, const char *dir)
{
    struct model *m = d->m;
    struct cairn_info info;
    int dd = cairn_opendir(d->fs, dir), r, nseen = 0, i;
    int exp = m_children(m, dir);
    char *seen = (char *)xrealloc(NULL, (size_t)m->nnodes + 1);
    memset(seen, 0, (size_t)m->nnodes + 1);
    DCHECK(d, dd >= 0, "opendir(%s): %d %s", dir, dd, t_errname(dd));
    if (dd < 0) {
        free(seen);
        return;
    }
    while ((r = cairn_readdir(d->fs, dd, &info)) == 1) {
        char full[4096];
        int k;
        if (strcmp(info.name, ".") == 0 || strcmp(info.name, "..") == 0)
            continue;
        snprintf(full, sizeof full, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir,
                 info.name);
        k = m_find(m, full);
        DCHECK(d, k >= 0, "readdir(%s) returned %s, which the model lacks", dir,
               info.name);
        if (k < 0)
            continue;
        DCHECK(d, !seen[k], "readdir(%s) returned %s twice", dir, info.name);
        if (seen[k])
            continue;
        seen[k] = 1;
        nseen++;
        DCHECK(d, info.type == m->objs[m->nodes[k].obj].type, "readdir type of %s: %u",
               full, (unsigned)info.type);
        if (info.type == CAIRN_TYPE_FILE)
            DCHECK(d, info.size == m->objs[m->nodes[k].obj].size,
                   "readdir size of %s: %ld, model %ld", full, (long)info.size,
                   (long)m->objs[m->nodes[k].obj].size);
        if (nseen > m->nnodes + 2)
            break;
    }
    DCHECK(d, r == 0 || r == 1, "readdir(%s): %d %s", dir, r, t_errname(r));
    DCHECK(d, nseen == exp, "readdir(%s) returned %d entries, model has %d", dir, nseen,
           exp);
    if (nseen != exp)
        for (i = 0; i < m->nnodes; i++) {
            const char *p = m->nodes[i].path;
            if (!seen[i] && below(dir, p) && !strchr(p + strlen(dir) + 1, '/'))
                printf("    missing from readdir(%s): %s\n", dir, p);
        }
    r = cairn_closedir(d->fs, dd);
    DCHECK_RC(d, r, 0, "closedir");
    free(seen);
}

int d_verify(struct mdrv *d)
{
    struct model *m = d->m;
    struct cairn_info info;
    int i, rc, before = d->failed;
    memset(&info, 0, sizeof info); /* printed below even when the stat fails */
    rc = cairn_stat(d->fs, "/", &info);
    DCHECK(d, rc == 0 && info.type == CAIRN_TYPE_DIR, "stat(/): %d type %u", rc,
           (unsigned)info.type);
    d_verify_dir(d, "/");
    for (i = 0; i < m->nnodes && !d->failed; i++) {
        const char *p = m->nodes[i].path;
        struct mobj *o = &m->objs[m->nodes[i].obj];
        memset(&info, 0, sizeof info);
        rc = cairn_stat(d->fs, p, &info);
        DCHECK_RC(d, rc, 0, p);
        if (rc != 0)
            continue;
        DCHECK(d, info.type == o->type, "stat(%s) type %u, model %u", p,
               (unsigned)info.type, (unsigned)o->type);
        DCHECK(d, strcmp(info.name, lastname(p)) == 0, "stat(%s) name '%s'", p,
               info.name);
        if (o->type == CAIRN_TYPE_DIR) {
            d_verify_dir(d, p);
        } else {
            uint8_t *data;
            int32_t len;
            DCHECK(d, info.size == o->size, "stat(%s) size %ld, model %ld", p,
                   (long)info.size, (long)o->size);
            rc = t_read_file(d->fs, p, &data, &len);
            DCHECK_RC(d, rc, 0, p);
            if (rc == 0) {
                int same = len == o->size && (len == 0 || !memcmp(data, o->data, (size_t)len));
                DCHECK(d, same, "content of %s differs from the model", p);
                if (!same)
                    t_print_diff(data, len, o->data, o->size);
                free(data);
            }
        }
    }
    for (i = 0; i < M_MAXFD; i++) {
        if (m->fds[i].used && !m->objs[m->fds[i].obj].alive) {
            int32_t s = cairn_size(d->fs, i);
            DCHECK(d, s == CAIRN_ERR_BADF, "size(fd %d) of a removed file = %ld", i, (long)s);
        } else if (m->fds[i].used) {
            int32_t s = cairn_size(d->fs, i), t = cairn_tell(d->fs, i);
            DCHECK(d, s == m->objs[m->fds[i].obj].size, "size(fd %d) = %ld, model %ld", i,
                   (long)s, (long)m->objs[m->fds[i].obj].size);
            DCHECK(d, t == m->fds[i].pos, "tell(fd %d) = %ld, model %ld", i, (long)t,
                   (long)m->fds[i].pos);
        }
    }
    return d->failed != before;
}

/* ------------------------------------------------------ power-cut oracle */

static long m_mid_write_matches; /* informational */
int m_verify_quiet;

/* 1 if c equals b with data[0..j) of write a applied at a->woff, some j. */
static int prefix_match(const struct mstate *b, const struct mstate *a,
                        const uint8_t *c, int32_t csize)
{
    int32_t off = a->woff, len = a->wlen, j, p;
    const uint8_t *data = a->data + off;
    if (csize > b->size) {
        j = csize - off;
        if (j <= 0 || j > len)
            return 0;
    } else if (csize == b->size) {
        int32_t lim = b->size - off;
        if (lim < 0)
            lim = 0;
        if (lim > len)
            lim = len;
        for (j = 0; j < lim && c[off + j] == data[j]; j++)
            ;
    } else {
        return 0;
    }
    for (p = 0; p < csize; p++) {
        uint8_t want;
        if (p >= off && p < off + j)
            want = data[p - off];
        else if (p < b->size)
            want = b->data[p];
        else
            want = 0;
        if (c[p] != want)
            return 0;
    }
    return 1;
}

/* 0: not allowed; 1: a state after a completed call; 2: inside a write. */
static int m_content_ok(const struct mobj *o, const uint8_t *c, int32_t csize)
{
    int h;
    for (h = o->dur; h < o->nhist; h++) {
        const struct mstate *s = &o->hist[h];
        if (s->size == csize && (csize == 0 || memcmp(s->data, c, (size_t)csize) == 0))
            return 1;
    }
    for (h = o->dur + 1; h < o->nhist; h++)
        if (o->hist[h].wlen > 0 && prefix_match(&o->hist[h - 1], &o->hist[h], c, csize))
            return 2;
    return 0;
}

struct actual {
    char *path;
    uint8_t type;
    uint8_t *data;
    int32_t size;
    int rc;
};

struct actual_list {
    struct actual *v;
    int n, cap;
    cairn *fs;
};

static int actual_fn(void *arg, const char *path, const struct cairn_info *info)
{
    struct actual_list *l = (struct actual_list *)arg;
    struct actual *a;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = (struct actual *)xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    a = &l->v[l->n++];
    a->path = xstrdup(path);
    a->type = info->type;
    a->data = NULL;
    a->size = 0;
    a->rc = 0;
    if (info->type != CAIRN_TYPE_DIR)
        a->rc = t_read_file(l->fs, path, &a->data, &a->size);
    return 0;
}

static int actual_cmp(const void *x, const void *y)
{
    return strcmp(((const struct actual *)x)->path, ((const struct actual *)y)->path);
}

static void print_ns(const struct model *m, int j)
{
    int i;
    printf("    namespace #%d:", j);
    for (i = 0; i < m->ns[j].n; i++) {
        const struct mobj *o = &m->objs[m->ns[j].v[i].obj];
        printf(" %s%s", m->ns[j].v[i].path, o->type == CAIRN_TYPE_DIR ? "/" : "");
    }
    printf("\n");
}

static void print_states(const struct mobj *o)
{
    int h;
    printf("      allowed states (dur %d of %d):", o->dur, o->nhist);
    for (h = o->dur; h < o->nhist && h < o->dur + 40; h++) {
        printf(" [%d] size %ld", h, (long)o->hist[h].size);
        if (o->hist[h].wlen)
            printf(" (write %ld@%ld)", (long)o->hist[h].wlen, (long)o->hist[h].woff);
    }
    printf("\n");
}

int m_verify_cut(struct model *m, cairn *fs, const char *label)
{
    struct actual_list l;
    int rc, j, i, ok = 0, ns_match = 0, result;
    memset(&l, 0, sizeof l);
    l.fs = fs;
    rc = t_walk(fs, "/", actual_fn, &l);
    CHECK(rc == 0, "[%s] listing the volume after the cut: %d %s", label, rc,
          t_errname(rc));
    for (i = 0; i < l.n; i++)
        CHECK(l.v[i].rc == 0, "[%s] reading %s after the cut: %d %s", label, l.v[i].path,
              l.v[i].rc, t_errname(l.v[i].rc));
    if (l.n)
        qsort(l.v, (size_t)l.n, sizeof *l.v, actual_cmp);
    for (j = m->nns - 1; j >= m->ns_lo && rc == 0 && !ok; j--) {
        const struct mns *s = &m->ns[j];
        int same = s->n == l.n;
        for (i = 0; same && i < l.n; i++)
            same = strcmp(s->v[i].path, l.v[i].path) == 0 &&
                   m->objs[s->v[i].obj].type == l.v[i].type;
        if (!same)
            continue;
        ns_match++;
        ok = 1;
        for (i = 0; ok && i < l.n; i++) {
            const struct mobj *o = &m->objs[s->v[i].obj];
            if (o->type == CAIRN_TYPE_DIR)
                continue;
            if (l.v[i].rc != 0) {
                ok = 0;
                break;
            }
            result = m_content_ok(o, l.v[i].data, l.v[i].size);
            if (result == 2)
                m_mid_write_matches++;
            ok = result != 0;
        }
    }
    if (!m_verify_quiet)
        CHECK(ok, "[%s] volume after the cut matches no allowed state (namespace "
                  "candidates %d..%d, %d matched by names)",
              label, m->ns_lo, m->nns - 1, ns_match);
    if (!ok && !m_verify_quiet) {
        printf("    actual:");
        for (i = 0; i < l.n; i++) {
            if (l.v[i].type == CAIRN_TYPE_DIR)
                printf(" %s/", l.v[i].path);
            else
                printf(" %s(%ld)", l.v[i].path, (long)l.v[i].size);
        }
        printf("\n");
        for (j = m->ns_lo; j < m->nns && j < m->ns_lo + 6; j++)
            print_ns(m, j);
        if (m->nns - 1 >= m->ns_lo + 6)
            print_ns(m, m->nns - 1);
        /* For each file of the newest namespace, its allowed states. */
        for (j = m->nns - 1; j >= m->ns_lo; j--) {
            const struct mns *s = &m->ns[j];
            for (i = 0; i < s->n; i++) {
                const struct mobj *o = &m->objs[s->v[i].obj];
                int k;
                if (o->type == CAIRN_TYPE_DIR)
                    continue;
                for (k = 0; k < l.n; k++)
                    if (strcmp(l.v[k].path, s->v[i].path) == 0)
                        break;
                if (k < l.n && !m_content_ok(o, l.v[k].data, l.v[k].size)) {
                    printf("    %s: size %ld is none of its allowed states\n",
                           l.v[k].path, (long)l.v[k].size);
                    print_states(o);
                    if (o->nhist)
                        t_print_diff(l.v[k].data, l.v[k].size,
                                     o->hist[o->nhist - 1].data,
                                     o->hist[o->nhist - 1].size);
                }
            }
            break;
        }
    }
    for (i = 0; i < l.n; i++) {
        free(l.v[i].path);
        free(l.v[i].data);
    }
    free(l.v);
    return ok ? 0 : 1;
}

long m_mid_write_count(void) { return m_mid_write_matches; }

/* ------------------------------------------------------ random operations */

static const char *const dir_pool[] = {"/d0", "/d1", "/d2", "/d0/e0",
                                       "/d0/e1", "/d1/e0", "/d0/e0/g0"};
#define N_DIR_POOL ((uint32_t)(sizeof dir_pool / sizeof dir_pool[0]))

static void pick_dir(uint64_t *rng, char *out, size_t n)
{
    if (t_randn(rng, 100) < 35)
        snprintf(out, n, "/");
    else
        snprintf(out, n, "%s", dir_pool[t_randn(rng, N_DIR_POOL)]);
}

static void pick_file(uint64_t *rng, char *out, size_t n)
{
    char dir[64];
    pick_dir(rng, dir, sizeof dir);
    snprintf(out, n, "%s/f%u", strcmp(dir, "/") == 0 ? "" : dir,
             (unsigned)t_randn(rng, 6));
}

/* A random existing node of the given type (0 = any); -1 if none. */
static int pick_node(const struct model *m, uint64_t *rng, uint8_t type)
{
    int i, n = 0, k;
    for (i = 0; i < m->nnodes; i++)
        if (!type || m->objs[m->nodes[i].obj].type == type)
            n++;
    if (!n)
        return -1;
    k = (int)t_randn(rng, (uint32_t)n);
    for (i = 0; i < m->nnodes; i++)
        if (!type || m->objs[m->nodes[i].obj].type == type)
            if (k-- == 0)
                return i;
    return -1;
}

/* A random open handle (writable only if want_w); -1 if none. */
static int pick_fd(const struct model *m, uint64_t *rng, int want_w)
{
    int i, n = 0, k;
    for (i = 0; i < M_MAXFD; i++)
        if (m->fds[i].used && m->objs[m->fds[i].obj].alive && (!want_w || (m->fds[i].flags & CAIRN_O_WRONLY)))
            n++;
    if (!n)
        return -1;
    k = (int)t_randn(rng, (uint32_t)n);
    for (i = 0; i < M_MAXFD; i++)
        if (m->fds[i].used && m->objs[m->fds[i].obj].alive && (!want_w || (m->fds[i].flags & CAIRN_O_WRONLY)))
            if (k-- == 0)
                return i;
    return -1;
}

static int count_fds(const struct model *m)
{
    int i, n = 0;
    for (i = 0; i < M_MAXFD; i++)
        n += m->fds[i].used;
    return n;
}

static int parent_exists(const struct model *m, const char *path)
{
    return m_parent_err(m, path) == 0;
}

/* A write length: small, page-crossing or large. */
static int32_t pick_len(uint64_t *rng, const struct rop *r)
{
    uint32_t c = t_randn(rng, 100);
    if (c < 55)
        return 1 + (int32_t)t_randn(rng, 64);
    if (c < 85)
        return 1 + (int32_t)t_randn(rng, (uint32_t)(2 * r->page + 100));
    return 1 + (int32_t)t_randn(rng, (uint32_t)r->big);
}

/* CAIRN_TEST_SKIP_OPS="truncate,rename": a debugging aid that leaves those
 * operations out (to look for failures hidden behind a known one). */
static int op_skipped(const char *name)
{
    const char *s = getenv("CAIRN_TEST_SKIP_OPS"), *p;
    size_t n = strlen(name);
    if (!s)
        return 0;
    for (p = strstr(s, name); p; p = strstr(p + 1, name))
        if ((p == s || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
            return 1;
    return 0;
}

static const char *d_random_op1(struct mdrv *d, uint64_t *rng, const struct rop *r);

const char *d_random_op(struct mdrv *d, uint64_t *rng, const struct rop *r)
{
    int tries;
    for (tries = 0; tries < 20; tries++) {
        const char *op = d_random_op1(d, rng, r);
        if (strcmp(op, "skipped-by-env") != 0)
            return op;
    }
    return "skip";
}

static const char *d_random_op1(struct mdrv *d, uint64_t *rng, const struct rop *r)
{
    struct model *m = d->m;
    uint32_t x = t_randn(rng, 100);
    char p1[256], p2[256];
    int fd, k;

    /* operations on handles need one: open a file first */
    if (x >= 14 && x < 75 && count_fds(m) == 0)
        x = 0;
    if (x < 14) { /* open */
        int flags, acc;
        if (op_skipped("open"))
            return "skipped-by-env";
        uint32_t c = t_randn(rng, 100);
        if (count_fds(m) >= r->max_fds) {
            d_close(d, pick_fd(m, rng, 0));
            return "close";
        }
        k = pick_node(m, rng, CAIRN_TYPE_FILE);
        if (c < 60 && k >= 0) {
            snprintf(p1, sizeof p1, "%s", m->nodes[k].path);
        } else if (c < 64 && k >= 0 && !d->record) {
            snprintf(p1, sizeof p1, "%s/x", m->nodes[k].path); /* NOTDIR */
        } else if (c < 68 && !d->record && (k = pick_node(m, rng, CAIRN_TYPE_DIR)) >= 0) {
            snprintf(p1, sizeof p1, "%s", m->nodes[k].path); /* ISDIR */
        } else {
            pick_file(rng, p1, sizeof p1);
        }
        c = t_randn(rng, 4);
        acc = c < 2 ? CAIRN_O_RDWR : c == 2 ? CAIRN_O_WRONLY : CAIRN_O_RDONLY;
        k = m_find(m, p1);
        if (k >= 0 && m->objs[m->nodes[k].obj].type == CAIRN_TYPE_DIR)
            acc = CAIRN_O_RDWR; /* writing a directory: ISDIR */
        flags = acc;
        if (t_randn(rng, 100) < 60)
            flags |= CAIRN_O_CREAT;
        if ((flags & CAIRN_O_CREAT) && t_randn(rng, 100) < 10)
            flags |= CAIRN_O_EXCL;
        if ((acc & CAIRN_O_WRONLY) && t_randn(rng, 100) < 10)
            flags |= CAIRN_O_TRUNC;
        if ((acc & CAIRN_O_WRONLY) && t_randn(rng, 100) < 12)
            flags |= CAIRN_O_APPEND;
        if (k >= 0 && r->one_handle && m->objs[m->nodes[k].obj].nopen > 0)
            return "skip";
        if ((flags & CAIRN_O_TRUNC) && k >= 0 && m->objs[m->nodes[k].obj].nopen > 0)
            flags &= ~CAIRN_O_TRUNC; /* keep other handles' positions simple */
        d_open(d, p1, flags);
        return "open";
    }
    if (x < 40) { /* write */
        int32_t len, pos, size, grow;
        struct mfd *f;
        uint8_t *buf;
        if (op_skipped("write"))
            return "skipped-by-env";
        fd = pick_fd(m, rng, d->record || t_randn(rng, 100) < 92);
        if (fd < 0)
            return "skip";
        f = &m->fds[fd];
        size = m->objs[f->obj].size;
        if (t_randn(rng, 100) < 30 && !(f->flags & CAIRN_O_APPEND)) {
            /* start just before a page boundary, sometimes past the end */
            int32_t pg = (int32_t)t_randn(rng, (uint32_t)(size / r->page + 2));
            int32_t at = pg * r->page - (int32_t)t_randn(rng, 40);
            if (at < 0)
                at = 0;
            d_seek(d, fd, at, CAIRN_SEEK_SET);
            if (d->stop)
                return "seek";
        }
        len = pick_len(rng, r);
        pos = (f->flags & CAIRN_O_APPEND) ? size : f->pos;
        grow = pos + len > size ? pos + len - size : 0;
        if (m->bytes + grow > r->max_bytes) {
            if (pos > size || m->bytes >= r->max_bytes)
                return "skip";
            len = (int32_t)(r->max_bytes - m->bytes) + (size - pos);
            if (len <= 0)
                return "skip";
        }
        buf = (uint8_t *)xrealloc(NULL, (size_t)len);
        t_pattern(buf, (size_t)len, t_rand(rng));
        d_write(d, fd, buf, len);
        free(buf);
        return "write";
    }
    if (x < 50) { /* read */
        int32_t len = t_randn(rng, 4) ? 1 + (int32_t)t_randn(rng, (uint32_t)(2 * r->page + 64))
                                      : 1 + (int32_t)t_randn(rng, (uint32_t)r->big);
        fd = pick_fd(m, rng, 0);
        if (fd < 0)
            return "skip";
        if (d->record && !(m->fds[fd].flags & CAIRN_O_RDONLY))
            return "skip";
        d_read(d, fd, len);
        return "read";
    }
    if (x < 57) { /* seek */
        int w = (int)t_randn(rng, 3);
        int32_t size, off;
        fd = pick_fd(m, rng, 0);
        if (fd < 0)
            return "skip";
        size = m->objs[m->fds[fd].obj].size;
        off = (int32_t)t_randn(rng, (uint32_t)(size + 2 * r->page + 1));
        if (w == CAIRN_SEEK_CUR)
            off -= m->fds[fd].pos;
        else if (w == CAIRN_SEEK_END)
            off -= size;
        if (!d->record && t_randn(rng, 100) < 5)
            off = -1 - (int32_t)t_randn(rng, 100) - (w == CAIRN_SEEK_SET ? 0
                                                     : w == CAIRN_SEEK_CUR ? m->fds[fd].pos
                                                                           : size);
        d_seek(d, fd, off, w);
        return "seek";
    }
    if (x < 62) { /* truncate */
        int32_t size, ns;
        if (op_skipped("truncate"))
            return "skipped-by-env";
        fd = pick_fd(m, rng, d->record || t_randn(rng, 100) < 92);
        if (fd < 0)
            return "skip";
        size = m->objs[m->fds[fd].obj].size;
        ns = (int32_t)t_randn(rng, (uint32_t)(size + 2 * r->page + 1));
        if (ns > size && m->bytes + (ns - size) > r->max_bytes)
            ns = size / 2;
        d_truncate(d, fd, ns);
        return "truncate";
    }
    if (x < 67) { /* file sync */
        fd = pick_fd(m, rng, 1);
        if (fd < 0)
            return "skip";
        d_fsync(d, fd);
        return "file_sync";
    }
    if (x < 75) { /* close */
        fd = pick_fd(m, rng, 0);
        if (fd < 0)
            return "skip";
        d_close(d, fd);
        return "close";
    }
    if (x < 81) { /* mkdir */
        if (op_skipped("mkdir"))
            return "skipped-by-env";
        snprintf(p1, sizeof p1, "%s", dir_pool[t_randn(rng, N_DIR_POOL)]);
        d_mkdir(d, p1);
        return "mkdir";
    }
    if (x < 88) { /* remove */
        if (op_skipped("remove"))
            return "skipped-by-env";
        k = t_randn(rng, 100) < 65 ? pick_node(m, rng, 0) : -1;
        if (k >= 0)
            snprintf(p1, sizeof p1, "%s", m->nodes[k].path);
        else if (t_randn(rng, 2))
            pick_file(rng, p1, sizeof p1);
        else
            snprintf(p1, sizeof p1, "%s", dir_pool[t_randn(rng, N_DIR_POOL)]);
        if (m_open_handles(m, p1) > 0)
            return "skip";
        d_remove(d, p1);
        return "remove";
    }
    if (x < 96) { /* rename */
        int kt;
        if (op_skipped("rename"))
            return "skipped-by-env";
        k = t_randn(rng, 100) < 90 ? pick_node(m, rng, 0) : -1;
        if (k < 0) {
            pick_file(rng, p1, sizeof p1); /* probably missing: NOENT */
            pick_file(rng, p2, sizeof p2);
        } else {
            snprintf(p1, sizeof p1, "%s", m->nodes[k].path);
            if (m->objs[m->nodes[k].obj].type == CAIRN_TYPE_FILE)
                pick_file(rng, p2, sizeof p2);
            else
                snprintf(p2, sizeof p2, "%s", dir_pool[t_randn(rng, N_DIR_POOL)]);
        }
        if (strcmp(p1, p2) == 0)
            return "skip";
        kt = m_find(m, p2);
        if (kt >= 0 && (k < 0 || m->objs[m->nodes[kt].obj].type == CAIRN_TYPE_DIR ||
                        m->objs[m->nodes[k].obj].type == CAIRN_TYPE_DIR))
            return "skip"; /* replacing directories: not specified */
        if (kt >= 0 && m_open_handles(m, p2) > 0)
            return "skip";
        if (below(p1, p2) && !parent_exists(m, p2))
            return "skip"; /* INVAL or NOENT: not specified which */
        d_rename(d, p1, p2);
        return "rename";
    }
    if (op_skipped("sync"))
        return "skipped-by-env";
    d_sync(d);
    return "sync";
}
