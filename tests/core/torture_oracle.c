/* The torture test's oracle: see torture_oracle.h. */
#include "torture_oracle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__)
#include <malloc.h> /* malloc_usable_size */
#endif

/* Resizes p to hold at least n bytes. The oracle resizes a file's image on
 * every write and sync; under ASan every realloc is a fresh block and a full
 * copy, and every fresh block of more than 128 KiB a fresh mapping whose
 * pages fault in. That was half of make test's time (session 30), so with
 * glibc a block already big enough is kept and a new one is sized to the
 * next power of two. */
static void *xrealloc(void *p, size_t n)
{
    void *q;
#if defined(__GLIBC__)
    size_t want = 64;
    if (p && n <= malloc_usable_size(p))
        return p;
    while (want < n && want < ((size_t)-1 >> 1))
        want <<= 1;
    n = want > n ? want : n;
#endif
    q = realloc(p, n ? n : 1);
    if (!q) {
        printf("torture_oracle: out of memory\n");
        exit(2);
    }
    return q;
}

static void say(char *why, size_t len, const char *fmt, ...)
{
    size_t used = strlen(why);
    va_list ap;
    if (used + 1 >= len)
        return;
    va_start(ap, fmt);
    vsnprintf(why + used, len - used, fmt, ap);
    va_end(ap);
}

void to_init(struct to_oracle *o, int32_t page_size)
{
    memset(o, 0, sizeof *o);
    o->page_size = page_size;
    o->snaps = (struct to_snap *)xrealloc(NULL, sizeof *o->snaps);
    o->cap_snaps = 1;
    o->nsnaps = 1;
    o->snaps[0].n = 0;
}

/* Empties slot b (type 0). Its buffers stay with the slot for the next object
 * there: every power cut rebuilds all objects, and fresh buffers for each
 * were most of the oracle's time under ASan (see xrealloc). */
static void obj_clear(struct to_obj *b)
{
    struct to_obj kept;
    uint32_t i;
    for (i = 0; i < b->nsteps; i++)
        free(b->steps[i].data);
    memset(&kept, 0, sizeof kept);
    kept.base = b->base;
    kept.cur = b->cur;
    kept.work = b->work;
    kept.steps = b->steps;
    kept.cap_steps = b->cap_steps;
    *b = kept;
}

static void obj_free(struct to_obj *b)
{
    obj_clear(b);
    free(b->steps);
    free(b->base);
    free(b->cur);
    free(b->work);
    memset(b, 0, sizeof *b);
}

void to_free(struct to_oracle *o)
{
    uint32_t i;
    for (i = 1; i < o->cap_objs; i++) /* slots past nobjs keep buffers too */
        obj_free(&o->objs[i]);
    free(o->objs);
    free(o->snaps);
    memset(o, 0, sizeof *o);
}

/* ---- namespace ---- */

const struct to_snap *to_ns(const struct to_oracle *o) { return &o->snaps[o->nsnaps - 1]; }

static int snap_find(const struct to_snap *s, const char *path)
{
    uint32_t i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->e[i].path, path) == 0)
            return (int)i;
    return -1;
}

const struct to_entry *to_lookup(const struct to_oracle *o, const char *path)
{
    const struct to_snap *s = to_ns(o);
    int i = snap_find(s, path);
    return i < 0 ? NULL : &s->e[i];
}

struct to_snap *to_ns_push(struct to_oracle *o)
{
    if (o->nsnaps == o->cap_snaps) {
        o->cap_snaps *= 2;
        o->snaps = (struct to_snap *)xrealloc(o->snaps, o->cap_snaps * sizeof *o->snaps);
    }
    o->snaps[o->nsnaps] = o->snaps[o->nsnaps - 1];
    return &o->snaps[o->nsnaps++];
}

void to_ns_pop(struct to_oracle *o)
{
    if (o->nsnaps > 1)
        o->nsnaps--;
}

uint32_t to_new_obj(struct to_oracle *o, uint8_t type)
{
    uint32_t i;
    for (i = 1; i < o->nobjs; i++) /* 0 is never used: it reads as "none" */
        if (o->objs[i].type == 0)
            break;
    if (i >= o->nobjs) {
        if (o->nobjs == 0)
            o->nobjs = 1;
        if (o->nobjs >= o->cap_objs) {
            o->cap_objs = o->cap_objs ? o->cap_objs * 2 : 16;
            o->objs = (struct to_obj *)xrealloc(o->objs, o->cap_objs * sizeof *o->objs);
            memset(o->objs + o->nobjs, 0, (o->cap_objs - o->nobjs) * sizeof *o->objs);
        }
        i = o->nobjs++;
    }
    obj_clear(&o->objs[i]);
    o->objs[i].type = type;
    return i;
}

int to_snap_add(struct to_snap *s, const char *path, uint32_t obj, uint8_t type)
{
    struct to_entry *e;
    if (s->n >= TO_MAX_ENTRIES || strlen(path) >= TO_PATH_MAX)
        return -1;
    e = &s->e[s->n++];
    memset(e, 0, sizeof *e);
    strcpy(e->path, path);
    e->obj = obj;
    e->type = type;
    return 0;
}

void to_snap_del(struct to_snap *s, const char *path)
{
    int i = snap_find(s, path);
    if (i >= 0)
        s->e[i] = s->e[--s->n];
}

/* 1 if path is `dir` itself or lies below it. */
static int below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

void to_snap_rename(struct to_snap *s, const char *from, const char *to)
{
    uint32_t i;
    char buf[2 * TO_PATH_MAX];
    to_snap_del(s, to);
    for (i = 0; i < s->n; i++) {
        if (!below(s->e[i].path, from))
            continue;
        snprintf(buf, sizeof buf, "%s%s", to, s->e[i].path + strlen(from));
        if (strlen(buf) < TO_PATH_MAX)
            strcpy(s->e[i].path, buf);
    }
}

/* ---- file content ---- */

static void apply_write(uint8_t **buf, int32_t *size, int32_t off, const uint8_t *data,
                        int32_t len)
{
    int32_t end = off + len;
    if (end > *size) {
        *buf = (uint8_t *)xrealloc(*buf, (size_t)end);
        if (off > *size)
            memset(*buf + *size, 0, (size_t)(off - *size)); /* a hole reads as zeros */
        *size = end;
    }
    if (len)
        memcpy(*buf + off, data, (size_t)len);
}

static void apply_size(uint8_t **buf, int32_t *size, int32_t nsize)
{
    if (nsize > *size) {
        *buf = (uint8_t *)xrealloc(*buf, (size_t)nsize);
        memset(*buf + *size, 0, (size_t)(nsize - *size));
    }
    *size = nsize;
}

/* Ring windows (ring.c): n bytes appended at the tail, n not past the next
 * page boundary of the ring; the head gives up every slot the new bytes
 * reach into. Returns 1 when the tail is now on a page boundary. */
static int ring_chunk(uint8_t **buf, int32_t *size, int32_t *head, int32_t cap, int32_t ps,
                      const uint8_t *data, int32_t n)
{
    int64_t end = (int64_t)*head + *size + n, h = *head;
    int64_t pages = (end + ps - 1) / ps, slots = cap / ps;
    int32_t drop;
    if (pages > slots && (pages - slots) * ps > h)
        h = (pages - slots) * ps;
    drop = (int32_t)(h - *head);
    if (drop > 0) /* drop <= size: a chunk never passes a whole ring */
        memmove(*buf, *buf + drop, (size_t)(*size - drop));
    *buf = (uint8_t *)xrealloc(*buf, (size_t)(end - h));
    memcpy(*buf + *size - drop, data, (size_t)n);
    *size = (int32_t)(end - h);
    *head = (int32_t)(h >= cap ? h - cap : h);
    return end % ps == 0;
}

/* The chunk of a ring write that goes next: up to the next page boundary
 * of the tail. */
static int32_t ring_step_len(int32_t size, int32_t head, int32_t ps, int32_t left)
{
    int32_t to_edge = ps - (int32_t)(((int64_t)head + size) % ps);
    return left < to_edge ? left : to_edge;
}

static void apply_ring(uint8_t **buf, int32_t *size, int32_t *head, int32_t cap, int32_t ps,
                       const uint8_t *data, int32_t len)
{
    int32_t done = 0;
    while (done < len) {
        int32_t n = ring_step_len(*size, *head, ps, len - done);
        ring_chunk(buf, size, head, cap, ps, data + done, n);
        done += n;
    }
}

static struct to_step *new_step(struct to_obj *b)
{
    if (b->nsteps == b->cap_steps) {
        b->cap_steps = b->cap_steps ? b->cap_steps * 2 : 8;
        b->steps = (struct to_step *)xrealloc(b->steps, b->cap_steps * sizeof *b->steps);
    }
    memset(&b->steps[b->nsteps], 0, sizeof b->steps[0]);
    return &b->steps[b->nsteps++];
}

void to_write_begin(struct to_oracle *o, uint32_t obj, int32_t off, const uint8_t *data,
                    int32_t len)
{
    struct to_step *st = new_step(&o->objs[obj]);
    st->kind = TO_STEP_WRITE;
    st->off = off;
    st->len = len;
    st->data = (uint8_t *)xrealloc(NULL, (size_t)len);
    memcpy(st->data, data, (size_t)len);
}

uint32_t to_new_ring(struct to_oracle *o, int32_t cap)
{
    uint32_t id = to_new_obj(o, TO_FILE);
    o->objs[id].ring_cap = cap;
    return id;
}

void to_ring_begin(struct to_oracle *o, uint32_t obj, const uint8_t *data, int32_t len)
{
    to_write_begin(o, obj, 0, data, len);
    o->objs[obj].steps[o->objs[obj].nsteps - 1].kind = TO_STEP_RING;
}

void to_size_begin(struct to_oracle *o, uint32_t obj, int32_t size)
{
    struct to_step *st = new_step(&o->objs[obj]);
    st->kind = TO_STEP_SIZE;
    st->off = size;
}

void to_step_done(struct to_oracle *o, uint32_t obj, int32_t applied)
{
    struct to_obj *b = &o->objs[obj];
    struct to_step *st;
    if (b->nsteps == 0)
        return;
    st = &b->steps[b->nsteps - 1];
    if (applied <= 0) {
        free(st->data);
        b->nsteps--;
        return;
    }
    if (st->kind == TO_STEP_RING) {
        if (applied < st->len)
            st->len = applied;
        apply_ring(&b->cur, &b->cur_size, &b->cur_head, b->ring_cap, o->page_size, st->data,
                   st->len);
    } else if (st->kind == TO_STEP_WRITE) {
        if (applied < st->len)
            st->len = applied;
        apply_write(&b->cur, &b->cur_size, st->off, st->data, st->len);
    } else {
        apply_size(&b->cur, &b->cur_size, st->off);
    }
}

/* ---- durability ---- */

static void obj_durable(struct to_obj *b)
{
    uint32_t i;
    for (i = 0; i < b->nsteps; i++)
        free(b->steps[i].data);
    b->nsteps = 0;
    b->base = (uint8_t *)xrealloc(b->base, (size_t)b->cur_size);
    if (b->cur_size)
        memcpy(b->base, b->cur, (size_t)b->cur_size);
    b->base_size = b->cur_size;
    b->base_head = b->cur_head;
}

/* Objects no snapshot names any more are forgotten. */
static void drop_unnamed(struct to_oracle *o)
{
    uint32_t i, s, k;
    for (i = 1; i < o->nobjs; i++) {
        int named = 0;
        if (o->objs[i].type == 0)
            continue;
        for (s = 0; s < o->nsnaps && !named; s++)
            for (k = 0; k < o->snaps[s].n && !named; k++)
                named = o->snaps[s].e[k].obj == i;
        if (!named)
            obj_clear(&o->objs[i]);
    }
}

void to_ns_durable(struct to_oracle *o)
{
    o->snaps[0] = o->snaps[o->nsnaps - 1];
    o->nsnaps = 1;
    drop_unnamed(o);
}

void to_file_durable(struct to_oracle *o, uint32_t obj) { obj_durable(&o->objs[obj]); }

void to_all_durable(struct to_oracle *o)
{
    uint32_t i;
    to_ns_durable(o);
    for (i = 1; i < o->nobjs; i++)
        if (o->objs[i].type == TO_FILE)
            obj_durable(&o->objs[i]);
}

/* ---- checking ---- */

static int same(const uint8_t *a, int32_t an, const uint8_t *b, int32_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, (size_t)an) == 0);
}

static int zeros(const uint8_t *p, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Is r the state `pre` with the first x - off bytes of the write applied? */
static int is_partial(const uint8_t *r, int32_t rn, const uint8_t *pre, int32_t pn, int32_t off,
                      const uint8_t *data, int32_t x)
{
    int32_t e = pn > x ? pn : x, keep = off < pn ? off : pn;
    if (rn != e)
        return 0;
    if (keep > 0 && memcmp(r, pre, (size_t)keep) != 0)
        return 0;
    if (off > pn && !zeros(r + pn, off - pn))
        return 0;
    if (x > off && memcmp(r + off, data, (size_t)(x - off)) != 0)
        return 0;
    return e <= x || memcmp(r + x, pre + x, (size_t)(e - x)) == 0;
}

/* Does a ring's history allow window r (rn bytes)? Every state from the
 * base on, and inside each write every one whose tail is on a page boundary;
 * on a match b->match_head is that state's head. Random data never repeats,
 * so only one state can match, but for an empty window (a stream never
 * written: rings are not truncated here), whose head is 0 in every state. */
static int ring_allows(const struct to_oracle *o, struct to_obj *b, const uint8_t *r,
                       int32_t rn)
{
    uint8_t *w = (uint8_t *)xrealloc(b->work, (size_t)b->base_size);
    int32_t wn = b->base_size, wh = b->base_head, ps = o->page_size;
    uint32_t i;
    int ok;
    if (wn)
        memcpy(w, b->base, (size_t)wn);
    ok = same(r, rn, w, wn);
    for (i = 0; i < b->nsteps && !ok; i++) {
        const struct to_step *st = &b->steps[i];
        int32_t done = 0;
        while (done < st->len && !ok) {
            int32_t n = ring_step_len(wn, wh, ps, st->len - done);
            int edge = ring_chunk(&w, &wn, &wh, b->ring_cap, ps, st->data + done, n);
            done += n;
            ok = (edge || done == st->len) && same(r, rn, w, wn);
        }
    }
    b->match_head = wh;
    b->work = w;
    return ok;
}

/* Does the object's history allow content r (rn bytes)? */
static int file_allows(const struct to_oracle *o, struct to_obj *b, const uint8_t *r,
                       int32_t rn)
{
    uint8_t *w = NULL;
    int32_t wn = b->base_size, ps = o->page_size;
    uint32_t i;
    int ok = 0;
    if (b->ring_cap)
        return ring_allows(o, b, r, rn);
    w = (uint8_t *)xrealloc(b->work, (size_t)wn);
    if (wn)
        memcpy(w, b->base, (size_t)wn);
    ok = same(r, rn, w, wn);
    for (i = 0; i < b->nsteps && !ok; i++) {
        const struct to_step *st = &b->steps[i];
        if (st->kind == TO_STEP_WRITE) {
            int32_t x = (st->off / ps + 1) * ps;
            for (; x < st->off + st->len && !ok; x += ps)
                ok = is_partial(r, rn, w, wn, st->off, st->data, x);
            apply_write(&w, &wn, st->off, st->data, st->len);
        } else {
            apply_size(&w, &wn, st->off);
        }
        ok = ok || same(r, rn, w, wn);
    }
    b->work = w;
    return ok;
}

static const struct to_seen *seen_find(const struct to_view *v, const char *path)
{
    uint32_t i;
    for (i = 0; i < v->n; i++)
        if (strcmp(v->e[i].path, path) == 0)
            return &v->e[i];
    return NULL;
}

/* Same paths and types? */
static int names_match(const struct to_snap *s, const struct to_view *v)
{
    uint32_t i;
    if (v->overflow || s->n != v->n)
        return 0;
    for (i = 0; i < s->n; i++) {
        const struct to_seen *x = seen_find(v, s->e[i].path);
        if (!x || x->type != s->e[i].type)
            return 0;
    }
    return 1;
}

static int32_t first_diff(const uint8_t *a, int32_t an, const uint8_t *b, int32_t bn)
{
    int32_t i, n = an < bn ? an : bn;
    for (i = 0; i < n && a[i] == b[i]; i++)
        ;
    return i;
}

static void describe_file(const struct to_obj *b, const struct to_seen *x, char *why,
                          size_t len)
{
    uint32_t i, writes = 0;
    for (i = 0; i < b->nsteps; i++)
        writes += b->steps[i].kind != TO_STEP_SIZE;
    say(why, len,
        "  %s: read %ld bytes; durable state %ld bytes (first difference at %ld), current "
        "%ld bytes (first difference at %ld), %u steps since the durable state (%u writes)\n",
        x->path, (long)x->size, (long)b->base_size,
        (long)first_diff(x->data, x->size, b->base, b->base_size), (long)b->cur_size,
        (long)first_diff(x->data, x->size, b->cur, b->cur_size), (unsigned)b->nsteps,
        (unsigned)writes);
    for (i = 0; i < b->nsteps && i < 12; i++) {
        const struct to_step *st = &b->steps[b->nsteps - 1 - i];
        if (st->kind == TO_STEP_RING)
            say(why, len, "    step -%u: ring append len %ld\n", i + 1, (long)st->len);
        else if (st->kind == TO_STEP_WRITE)
            say(why, len, "    step -%u: write off %ld len %ld\n", i + 1, (long)st->off,
                (long)st->len);
        else
            say(why, len, "    step -%u: size %ld\n", i + 1, (long)st->off);
    }
}

static void describe_names(const struct to_oracle *o, const struct to_view *v, char *why,
                           size_t len)
{
    uint32_t i, s;
    say(why, len, "  namespace matches none of the %u allowed states (seen %u entries%s)\n",
        (unsigned)o->nsnaps, (unsigned)v->n, v->overflow ? ", too many" : "");
    for (i = 0; i < v->n; i++) {
        int anywhere = 0;
        for (s = 0; s < o->nsnaps && !anywhere; s++) {
            int k = snap_find(&o->snaps[s], v->e[i].path);
            anywhere = k >= 0 && o->snaps[s].e[k].type == v->e[i].type;
        }
        if (!anywhere)
            say(why, len, "    %s (%s) exists but no allowed state has it\n", v->e[i].path,
                v->e[i].type == TO_DIR ? "dir" : "file");
    }
    for (i = 0; i < o->snaps[0].n; i++) {
        const char *p = o->snaps[0].e[i].path;
        int always = 1;
        for (s = 1; s < o->nsnaps && always; s++)
            always = snap_find(&o->snaps[s], p) >= 0;
        if (always && !seen_find(v, p))
            say(why, len, "    %s is missing (every allowed state has it)\n", p);
    }
    say(why, len, "    durable state: %u entries, newest: %u entries\n",
        (unsigned)o->snaps[0].n, (unsigned)to_ns(o)->n);
}

/* First snapshot (newest first) whose names and contents the view matches,
 * or -1; with why != NULL, describes the first content mismatch. */
static int matching_snapshot(const struct to_oracle *o, const struct to_view *v, char *why,
                             size_t len)
{
    uint32_t k, i;
    int named = 0;
    for (k = o->nsnaps; k-- > 0;) {
        const struct to_snap *s = &o->snaps[k];
        int ok = 1, kind_ok;
        if (!names_match(s, v))
            continue;
        for (i = 0; i < s->n && ok; i++) {
            const struct to_seen *x;
            if (s->e[i].type != TO_FILE)
                continue;
            x = seen_find(v, s->e[i].path);
            /* a ring and a plain file of the same bytes are not the same
             * state: an empty /f2 matched the state where /f2 was a ring
             * just created, and the plain file was taken for a ring (torture
             * --long --ring 30 --falloc 20, smallest seed 61007); nor are
             * two rings of other capacities: an empty ring of 4,352 bytes
             * matched the state where the name held one of 7,936 created
             * after it (smallest seed 79009) */
            kind_ok = o->objs[s->e[i].obj].ring_cap == x->ring_cap;
            ok = kind_ok && file_allows(o, &o->objs[s->e[i].obj], x->data, x->size);
            if (!ok && why && !named && !kind_ok)
                say(why, len, "    %s: capacity %ld on the volume (0: a plain file), %ld in "
                    "the state\n", x->path, (long)x->ring_cap,
                    (long)o->objs[s->e[i].obj].ring_cap);
            else if (!ok && why && !named)
                describe_file(&o->objs[s->e[i].obj], x, why, len);
        }
        named = 1;
        if (ok)
            return (int)k;
    }
    if (why && !named)
        describe_names(o, v, why, len);
    return -1;
}

int to_check_recovered(struct to_oracle *o, const struct to_view *v, char *why, size_t why_len)
{
    int k;
    uint32_t i;
    struct to_snap s;
    int32_t ring_cap[TO_MAX_ENTRIES + 8], ring_head[TO_MAX_ENTRIES + 8];
    why[0] = '\0';
    k = matching_snapshot(o, v, NULL, 0);
    if (k < 0) {
        matching_snapshot(o, v, why, why_len);
        return -1;
    }
    for (i = 0; i < v->n; i++) { /* rings stay rings, at the head that matched */
        int e = snap_find(&o->snaps[k], v->e[i].path);
        const struct to_obj *b = e >= 0 ? &o->objs[o->snaps[k].e[e].obj] : NULL;
        ring_cap[i] = b && v->e[i].type == TO_FILE ? b->ring_cap : 0;
        ring_head[i] = b && b->ring_cap ? b->match_head : 0;
    }
    /* the view is the new durable state */
    s.n = 0;
    for (i = 1; i < o->nobjs; i++)
        obj_clear(&o->objs[i]);
    o->nobjs = 1;
    for (i = 0; i < v->n; i++) {
        uint32_t id = to_new_obj(o, v->e[i].type);
        struct to_obj *b = &o->objs[id];
        to_snap_add(&s, v->e[i].path, id, v->e[i].type);
        if (v->e[i].type == TO_FILE) {
            b->ring_cap = ring_cap[i];
            b->cur_head = ring_head[i];
            b->cur_size = v->e[i].size;
            b->cur = (uint8_t *)xrealloc(b->cur, (size_t)b->cur_size);
            if (b->cur_size)
                memcpy(b->cur, v->e[i].data, (size_t)b->cur_size);
            obj_durable(b);
        }
    }
    o->snaps[0] = s;
    o->nsnaps = 1;
    return 0;
}

int to_check_live(const struct to_oracle *o, const struct to_view *v, char *why, size_t why_len)
{
    const struct to_snap *s = to_ns(o);
    uint32_t i;
    int bad = 0;
    why[0] = '\0';
    if (!names_match(s, v)) {
        say(why, why_len, "  namespace differs from the newest state (%u entries, seen %u)\n",
            (unsigned)s->n, (unsigned)v->n);
        for (i = 0; i < v->n; i++)
            if (snap_find(s, v->e[i].path) < 0)
                say(why, why_len, "    %s exists, should not\n", v->e[i].path);
        for (i = 0; i < s->n; i++)
            if (!seen_find(v, s->e[i].path))
                say(why, why_len, "    %s missing\n", s->e[i].path);
        return -1;
    }
    for (i = 0; i < s->n; i++) {
        const struct to_obj *b = &o->objs[s->e[i].obj];
        const struct to_seen *x = seen_find(v, s->e[i].path);
        if (s->e[i].type != TO_FILE || same(x->data, x->size, b->cur, b->cur_size))
            continue;
        say(why, why_len, "  %s: read %ld bytes, expected %ld (first difference at %ld)\n",
            x->path, (long)x->size, (long)b->cur_size,
            (long)first_diff(x->data, x->size, b->cur, b->cur_size));
        bad = 1;
    }
    return bad ? -1 : 0;
}

void to_view_free(struct to_view *v)
{
    uint32_t i;
    for (i = 0; i < v->n; i++)
        free(v->e[i].data);
    v->n = 0;
    v->overflow = 0;
}

uint64_t to_data_bytes(const struct to_oracle *o, int round_pages)
{
    const struct to_snap *s = to_ns(o);
    uint64_t sum = 0, ps = (uint64_t)o->page_size;
    uint32_t i;
    for (i = 0; i < s->n; i++) {
        uint64_t n;
        if (s->e[i].type != TO_FILE)
            continue;
        n = (uint64_t)o->objs[s->e[i].obj].cur_size;
        sum += round_pages ? (n + ps - 1) / ps * ps : n;
    }
    return sum;
}
