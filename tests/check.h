/*
 * Tiny test helper for cairn's C tests (header only, C99).
 *
 *   CHECK(cond, "what %d", x);     prints "ok   what 3" or
 *                                   "FAIL file.c:12: what 3 [cond]"
 *   CHECK_EQ_U64(a, b, "what");    same, and prints both values
 *   return check_done("sim_rules"); prints "sim_rules: N passed, M failed"
 *                                   and gives the exit code (0 = all passed)
 *
 * The counters live in a function-local static, one set per test binary
 * translation unit (a test is one .c file). Put CHECKs on results, not inside
 * loops of millions: every CHECK prints a line.
 */
#ifndef CAIRN_CHECK_H
#define CAIRN_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define CHECK_PRINTF_(a, b) __attribute__((format(printf, a, b)))
#else
#define CHECK_PRINTF_(a, b)
#endif

struct check_state_ {
    unsigned long passed;
    unsigned long failed;
};

static inline struct check_state_ *check_state_(void)
{
    static struct check_state_ st;
    return &st;
}

static inline int check_vreport_(int ok, const char *file, int line,
                                  const char *expr, const char *fmt,
                                  va_list ap)
{
    struct check_state_ *st = check_state_();
    if (ok) {
        st->passed++;
        fputs("ok   ", stdout);
        vprintf(fmt, ap);
        fputc('\n', stdout);
    } else {
        st->failed++;
        printf("FAIL %s:%d: ", file, line);
        vprintf(fmt, ap);
        printf(" [%s]\n", expr);
    }
    fflush(stdout);
    return ok;
}

static inline CHECK_PRINTF_(5, 6) int check_report_(int ok, const char *file,
                                                    int line, const char *expr,
                                                    const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = check_vreport_(ok, file, line, expr, fmt, ap);
    va_end(ap);
    return r;
}

static inline CHECK_PRINTF_(8, 9) int check_eq_u64_(uint64_t a, uint64_t b,
                                                    const char *file, int line,
                                                    const char *expr,
                                                    const char *ea,
                                                    const char *eb,
                                                    const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = check_vreport_(a == b, file, line, expr, fmt, ap);
    va_end(ap);
    if (!r)
        printf("     %s = %llu, %s = %llu\n", ea, (unsigned long long)a, eb,
               (unsigned long long)b);
    return r;
}

/* Evaluates to 1 if cond holds, else 0 (and records a failure). */
#define CHECK(cond, ...)                                                       \
    check_report_((cond) ? 1 : 0, __FILE__, __LINE__, #cond, __VA_ARGS__)

#define CHECK_EQ_U64(a, b, ...)                                                \
    check_eq_u64_((uint64_t)(a), (uint64_t)(b), __FILE__, __LINE__,           \
                  #a " == " #b, #a, #b, __VA_ARGS__)

/* Prints the summary line; returns the process exit code. */
static inline int check_done(const char *name)
{
    struct check_state_ *st = check_state_();
    printf("%s: %lu passed, %lu failed\n", name, st->passed, st->failed);
    fflush(stdout);
    return st->failed ? 1 : 0;
}

static inline unsigned long check_failures(void)
{
    return check_state_()->failed;
}

#endif /* CAIRN_CHECK_H */
