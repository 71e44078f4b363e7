/*
 * Files for the fuzz targets whose readers take paths (fuzz_checkpoint.c,
 * fuzz_data.c): one private directory per process, made at the first call
 * under /dev/shm (memory: an input costs no disk write), else $TMPDIR, else
 * /tmp, and removed with its files when the process exits normally (a
 * crash leaves it, a few KB, for the inputs to be looked at). Any failure
 * here is the machine's, not the reader's: it is printed and abort()s.
 */
#ifndef TESTS_FUZZ_FUZZ_FILES_H
#define TESTS_FUZZ_FUZZ_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_files_dir[512];

static inline void fuzz_files_fail(const char *what, const char *path)
{
    fprintf(stderr, "fuzz_files: %s: %s\n", what, path);
    abort();
}

/* atexit: the directory's files (no subdirectories are made), then it. */
static inline void fuzz_files_remove(void)
{
    DIR *d = opendir(fuzz_files_dir);
    if (d == NULL) {
        return;
    }
    const struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", fuzz_files_dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
    rmdir(fuzz_files_dir);
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
        snprintf(fuzz_files_dir, sizeof fuzz_files_dir, "%s/ebm-fuzz-XXXXXX", base);
        if (mkdtemp(fuzz_files_dir) == NULL) {
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
