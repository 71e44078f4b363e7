/*
 * An LD_PRELOAD shim for tests/crash/soak.sh: it kills its own process with
 * SIGKILL at a chosen moment of a file write, so that the soak can land a
 * kill inside a checkpoint write every time it asks for one, not only when a
 * random delay happens to fall there.
 *
 * EBM_KILL_AT="CALL:N:PART" names the moment: the Nth call (counting from 1)
 * of CALL on a file whose path contains PART, where CALL is
 *   fwrite  half of the bytes are written and flushed, then the kill (a
 *           temporary file cut in the middle);
 *   fsync   the kill before the data is made durable (all bytes written);
 *   rename  the kill before the temporary file replaces the old one.
 * EBM_KILL_RANK, when set, limits the shim to the MPI process of that rank
 * (OMPI_COMM_WORLD_RANK or PMI_RANK); other processes run as without it.
 * Without EBM_KILL_AT the shim only passes the calls on.
 *
 * The path of an fwrite or fsync is read from /proc/self/fd (Linux).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CALL_NONE, CALL_FWRITE, CALL_FSYNC, CALL_RENAME };

static int target = CALL_NONE;
static long target_count;
static char target_part[256];
static long seen;

__attribute__((constructor)) static void kill_at_init(void)
{
    const char *spec = getenv("EBM_KILL_AT");
    const char *rank = getenv("EBM_KILL_RANK");
    if (spec == NULL || *spec == '\0') {
        return;
    }
    if (rank != NULL) {
        const char *mine = getenv("OMPI_COMM_WORLD_RANK");
        if (mine == NULL) {
            mine = getenv("PMI_RANK");
        }
        if (mine == NULL || strcmp(mine, rank) != 0) {
            return;
        }
    }
    char call[16];
    int used = 0;
    if (sscanf(spec, "%15[a-z]:%ld:%n", call, &target_count, &used) != 2 || used == 0 ||
        target_count < 1 || strlen(spec + used) >= sizeof target_part) {
        fprintf(stderr, "kill_at: EBM_KILL_AT=\"%s\" is not CALL:N:PART\n", spec);
        _exit(99);
    }
    strcpy(target_part, spec + used);
    target = strcmp(call, "fwrite") == 0   ? CALL_FWRITE
             : strcmp(call, "fsync") == 0  ? CALL_FSYNC
             : strcmp(call, "rename") == 0 ? CALL_RENAME
                                           : CALL_NONE;
    if (target == CALL_NONE) {
        fprintf(stderr, "kill_at: EBM_KILL_AT names \"%s\", not fwrite, fsync or rename\n", call);
        _exit(99);
    }
}

/* Whether this call of `call` on `path` is the one to die in. */
static int is_the_moment(int call, const char *path)
{
    return call == target && path != NULL && strstr(path, target_part) != NULL &&
           ++seen == target_count;
}

static int fd_is_the_moment(int call, int fd)
{
    if (call != target) {
        return 0;
    }
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 0) {
        return 0;
    }
    path[n] = '\0';
    return is_the_moment(call, path);
}

static void die(void)
{
    raise(SIGKILL);
    _exit(137); /* not reached */
}

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    static size_t (*real)(const void *, size_t, size_t, FILE *);
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "fwrite"); /* POSIX's form for a function */
    }
    if (size > 0 && n > 1 && fd_is_the_moment(CALL_FWRITE, fileno(f))) {
        real(p, size, n / 2, f);
        fflush(f);
        die();
    }
    return real(p, size, n, f);
}

int fsync(int fd)
{
    static int (*real)(int);
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "fsync");
    }
    if (fd_is_the_moment(CALL_FSYNC, fd)) {
        die();
    }
    return real(fd);
}

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "rename");
    }
    if (is_the_moment(CALL_RENAME, to)) {
        die();
    }
    return real(from, to);
}
