/*
 * Replay driver: runs a fuzz target's entry point once on every file named on
 * the command line or found in the directories named there (not recursive),
 * without libFuzzer, so the regression inputs and the seed corpus run under
 * any compiler in CTest. An input that crashes aborts the run; one that takes
 * longer than REPLAY_SECONDS (a loop that does no device I/O) is stopped by
 * an alarm and reported as a hang.
 *
 * Usage: fuzz_replay_<target> PATH...
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_SECONDS 20
#define MAX_INPUT (4u << 20)

static const char *current = "";

static void on_alarm(int sig)
{
    static const char msg[] = "replay: FAIL: hang (time limit) on ";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, current, strlen(current)) < 0 ||
        write(2, "\n", 1) < 0)
        _exit(3);
    abort();
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    size_t n;
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    buf = (uint8_t *)malloc(MAX_INPUT);
    if (!buf) {
        fclose(f);
        return -1;
    }
    n = fread(buf, 1, MAX_INPUT, f);
    fclose(f);
    current = path;
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    alarm(REPLAY_SECONDS);
    LLVMFuzzerTestOneInput(buf, n);
    alarm(0);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every regular file of dir, in name order (a stable order for logs). */
static int run_dir(const char *dir, unsigned *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    int err = 0;
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = (char **)realloc(names, cap * sizeof *names);
            if (!names)
                return -1;
        }
        names[n] = (char *)malloc(strlen(dir) + strlen(e->d_name) + 2);
        sprintf(names[n], "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (i = 0; i < n; i++) {
        struct stat st;
        if (!err && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            err = run_file(names[i]);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return err;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int i, err = 0;
    signal(SIGALRM, on_alarm);
    for (i = 1; i < argc && !err; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such path %s\n", argv[i]);
            err = -1;
        } else if (S_ISDIR(st.st_mode)) {
            err = run_dir(argv[i], &count);
        } else {
            err = run_file(argv[i]);
            count++;
        }
    }
    if (count == 0 && !err) {
        fprintf(stderr, "replay: no inputs\n");
        err = -1;
    }
    printf("replay: %u inputs ran without a crash or hang\n", count);
    printf("%u passed, %u failed\n", err ? 0 : count, err ? 1u : 0u);
    return err ? 1 : 0;
}
