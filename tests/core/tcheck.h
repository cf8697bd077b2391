/*
 * Minimal check helper for the core tests: CHECK counts passes and failures,
 * prints each failure (the first T_MAX_PRINTED of them) with file, line, the
 * condition and a printf-style message; t_summary prints the one summary line
 * "<name>: N passed, M failed" and returns the exit status.
 */
#ifndef TCHECK_H
#define TCHECK_H

#include <stdio.h>

#ifdef __GNUC__
#define TC_FMT(a, b) __attribute__((format(printf, a, b)))
#else
#define TC_FMT(a, b)
#endif

extern unsigned long tc_pass, tc_fail;
void tc_failed(const char *file, int line, const char *cond, const char *fmt,
               ...) TC_FMT(4, 5);
void tc_failed_eq(const char *file, int line, const char *cond, long long a,
                  long long b, const char *fmt, ...) TC_FMT(6, 7);

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond)                                                              \
            tc_pass++;                                                         \
        else                                                                   \
            tc_failed(__FILE__, __LINE__, #cond, __VA_ARGS__);                 \
    } while (0)

/* Compare two integers, printing both values on failure. */
#define CHECK_EQ(a, b, ...)                                                    \
    do {                                                                       \
        long long tc_a_ = (long long)(a), tc_b_ = (long long)(b);              \
        if (tc_a_ == tc_b_)                                                    \
            tc_pass++;                                                         \
        else                                                                   \
            tc_failed_eq(__FILE__, __LINE__, #a " == " #b, tc_a_, tc_b_,       \
                         __VA_ARGS__);                                         \
    } while (0)

/* Prints the summary line; returns the process exit status. */
int t_summary(const char *name);

#endif
