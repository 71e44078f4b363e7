/*
 * What the fuzz targets of the trainers' readers (fuzz_checkpoint.c,
 * fuzz_data.c) share:
 *  - REQUIRE(cond, detail): a promise; broken, it is printed (file, line,
 *    the condition, the detail, e.g. the reader's message) and abort()s, so
 *    that libFuzzer saves the input;
 *  - files, for readers that take paths: one directory per process,
 *    ebm-fuzz-<pid>, made at the first call under /dev/shm (memory: an input
 *    costs no disk write), else $TMPDIR, else /tmp, and removed with its
 *    files when the process exits normally. A crash (or -minimize_crash's
 *    children) leaves it, a few KB; the next process removes every
 *    ebm-fuzz-<pid> there whose process is gone. A failure of these is the
 *    machine's, not the reader's: it is printed and abort()s too.
 */
#ifndef TESTS_FUZZ_FUZZ_READERS_H
#define TESTS_FUZZ_FUZZ_READERS_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static inline void fuzz_violation(const char *file, int line, const char *what,
                                  const char *detail)
{
    fprintf(stderr, "%s:%d: broken promise: %s%s%s\n", file, line, what,
            detail != NULL && detail[0] != '\0' ? ": " : "", detail != NULL ? detail : "");
    abort();
}

#define REQUIRE(cond, detail)                                   \
    do {                                                        \
        if (!(cond)) {                                          \
            fuzz_violation(__FILE__, __LINE__, #cond, detail);  \
        }                                                       \
    } while (0)

static char fuzz_files_dir[512];

static inline void fuzz_files_fail(const char *what, const char *path)
{
    fprintf(stderr, "fuzz_files: %s: %s\n", what, path);
    abort();
}

/* Remove dir's files (no subdirectories are made), then dir. */
static inline void fuzz_files_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    const struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

static inline void fuzz_files_remove(void)
{
    fuzz_files_remove_dir(fuzz_files_dir);
}

/* The directories of processes that are gone (crashed) under base. */
static inline void fuzz_files_remove_stale(const char *base)
{
    DIR *d = opendir(base);
    if (d == NULL) {
        return;
    }
    const struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        char *end;
        if (strncmp(e->d_name, "ebm-fuzz-", 9) != 0 || e->d_name[9] < '1' ||
            e->d_name[9] > '9') {
            continue;
        }
        const long pid = strtol(e->d_name + 9, &end, 10);
        if (*end == '\0' && pid > 0 && (pid_t)pid != getpid() && kill((pid_t)pid, 0) != 0 &&
            errno == ESRCH) {
            snprintf(path, sizeof path, "%s/%s", base, e->d_name);
            fuzz_files_remove_dir(path);
        }
    }
    closedir(d);
}

/* The path of name in the directory (made at the first call). */
static inline void fuzz_files_path(char *out, size_t size, const char *name)
{
    if (fuzz_files_dir[0] == '\0') {
        struct stat st;
        const char *tmp = getenv("TMPDIR");
        const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
                                   access("/dev/shm", W_OK) == 0
                               ? "/dev/shm"
                           : tmp != NULL && tmp[0] != '\0' ? tmp
                                                           : "/tmp";
        fuzz_files_remove_stale(base);
        snprintf(fuzz_files_dir, sizeof fuzz_files_dir, "%s/ebm-fuzz-%ld", base, (long)getpid());
        fuzz_files_remove_dir(fuzz_files_dir); /* a dead process's, of the same pid */
        if (mkdir(fuzz_files_dir, 0700) != 0) {
            fuzz_files_fail("cannot make a directory", fuzz_files_dir);
        }
        atexit(fuzz_files_remove);
    }
    if (snprintf(out, size, "%s/%s", fuzz_files_dir, name) >= (int)size) {
        fuzz_files_fail("path too long", name);
    }
}

/* Replace the file at path by the n bytes at p. */
static inline void fuzz_files_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        fuzz_files_fail("cannot write", path);
    }
}

#endif
