/* Model files on disk, over the buffer calls of io.c: the saver writes a
 * temporary file beside the path, flushes it and renames it over the path
 * (readers see the old file or the new one); the loader refuses anything
 * but a regular file without blocking, reads it whole and parses it as a
 * buffer. */
#include "error.h"
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An EBM_EIO message: what failed, on which path, and the system's reason. */
static int io_fail(ebm__msg *msg, const char *what, const char *path, int err)
{
    char reason[128];
    if (strerror_r(err, reason, sizeof reason) != 0) {
        snprintf(reason, sizeof reason, "error %d", err);
    }
    return ebm__fail(msg, EBM_EIO, "%s '%s': %s", what, path, reason);
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n < (size_t)SSIZE_MAX ? n : (size_t)SSIZE_MAX);
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Make the rename itself durable. The file at path is already replaced, so
 * a failure here is not reported: the call has done what it promised. */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t len = slash == NULL ? 0 : (slash == path ? 1 : (size_t)(slash - path));
    char *dir = malloc(len + 2);
    if (dir == NULL) {
        return;
    }
    if (len == 0) {
        strcpy(dir, ".");
    } else {
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/*
 * Write data to a fresh temporary file beside path, flush it to the disk,
 * then rename it over path: readers see the old file or the new one, never
 * a part. On any failure the temporary file is removed and path untouched.
 */
static int write_atomic(ebm__msg *msg, const char *path, const unsigned char *data, size_t n)
{
    static const char suffix[] = ".tmp.XXXXXX";
    /* Only a regular file (or nothing) is replaced: never a directory, a
     * FIFO or a device that the path names, even through a link. */
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT) {
            return io_fail(msg, "cannot save to", path, errno);
        }
    } else if (!S_ISREG(st.st_mode)) {
        return ebm__fail(msg, EBM_EIO,
                         "cannot save to '%s': it exists and is not a regular file (a directory, "
                         "FIFO or device is never replaced)",
                         path);
    }
    size_t len = strlen(path);
    char *tmp = malloc(len + sizeof suffix);
    if (tmp == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the name of a temporary file");
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, suffix, sizeof suffix);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = io_fail(msg, "cannot create a temporary file beside", path, errno);
        free(tmp);
        return rc;
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    const char *what = NULL;
    int err = 0;
    if (write_all(fd, data, n) != 0) {
        what = "cannot write";
    } else if (fchmod(fd, 0644) != 0) { /* mkstemp made it 0600 */
        what = "cannot set the mode of";
    } else if (fsync(fd) != 0) {
        what = "cannot flush";
    }
    if (what != NULL) {
        err = errno;
    }
    if (close(fd) != 0 && what == NULL) {
        what = "cannot close";
        err = errno;
    }
    int rc = EBM_OK;
    if (what != NULL) {
        rc = io_fail(msg, what, tmp, err);
        (void)unlink(tmp);
    } else if (rename(tmp, path) != 0) {
        err = errno;
        (void)unlink(tmp);
        rc = io_fail(msg, "cannot rename the temporary file over", path, err);
    } else {
        sync_parent_dir(path);
    }
    free(tmp);
    return rc;
}

int ebm_model_save(const ebm_model_t *m, const char *path)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (path == NULL) {
        return ebm__model_error(m, EBM_ENULL, "path is NULL");
    }
    int64_t n = ebm_model_save_size(m);
    unsigned char *data = (uint64_t)n <= SIZE_MAX ? malloc((size_t)n) : NULL;
    if (data == NULL) {
        return ebm__model_error(m, EBM_ENOMEM, "out of memory for the %lld-byte image of '%s'",
                                (long long)n, path);
    }
    /* The image (data holds the n bytes it needs; a failure would set its
     * own message), then the file. */
    size_t size = 0;
    int rc = ebm_model_save_buffer(m, data, (size_t)n, &size);
    if (rc == EBM_OK) {
        rc = write_atomic(&msg, path, data, size);
        if (rc != EBM_OK) {
            ebm__model_set_error(m, rc, &msg);
        }
    }
    free(data);
    return rc;
}

/* Read n bytes from fd, retrying short reads and interrupts; the count
 * read (less than n at the end of the file or on an error, in errno). */
static size_t read_all(int fd, unsigned char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, p + got, n - got);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            break;
        }
        got += (size_t)k;
    }
    return got;
}

/*
 * Read the whole regular file at path into a new buffer of its size. The
 * path is opened without blocking and checked by fstat before any read, so
 * a FIFO, a device or a directory is refused without waiting for a writer.
 */
static int read_file(ebm__msg *msg, const char *path, unsigned char **data, size_t *size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        return io_fail(msg, "cannot open", path, errno);
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    struct stat st;
    int rc = EBM_OK;
    if (fstat(fd, &st) != 0) {
        rc = io_fail(msg, "cannot stat", path, errno);
    } else if (S_ISDIR(st.st_mode)) {
        rc = io_fail(msg, "cannot read", path, EISDIR);
    } else if (!S_ISREG(st.st_mode)) {
        rc = ebm__fail(msg, EBM_EIO, "cannot read '%s': not a regular file", path);
    } else if (st.st_size < 0 || (uintmax_t)st.st_size >= SIZE_MAX) {
        rc = ebm__fail(msg, EBM_ENOMEM, "cannot read '%s': %jd bytes do not fit in memory", path,
                       (intmax_t)st.st_size);
    }
    if (rc != EBM_OK) {
        close(fd);
        return rc;
    }
    size_t n = (size_t)st.st_size;
    unsigned char *buf = malloc(n > 0 ? n : 1);
    if (buf == NULL) {
        close(fd);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the %zu bytes of '%s'", n, path);
    }
    errno = 0;
    size_t got = read_all(fd, buf, n);
    int err = got < n ? errno : 0;
    close(fd);
    if (got != n) {
        free(buf);
        return err != 0 ? io_fail(msg, "cannot read", path, err)
                        : ebm__fail(msg, EBM_EIO, "cannot read '%s': it ended after %zu of %zu bytes",
                                    path, got, n);
    }
    *data = buf;
    *size = n;
    return EBM_OK;
}

int ebm_model_load(ebm_model_t **out, const char *path, char *errbuf, size_t errbuf_size)
{
    ebm__msg msg;
    int rc;
    unsigned char *data = NULL;
    size_t size = 0;
    if (out != NULL) {
        *out = NULL;
    }
    if (out == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "out is NULL");
    } else if (path == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "path is NULL");
    } else {
        rc = read_file(&msg, path, &data, &size);
    }
    if (rc != EBM_OK) {
        ebm__copy_text(errbuf, errbuf_size, msg.text);
        return rc;
    }
    rc = ebm_model_load_buffer(out, data, size, errbuf, errbuf_size);
    free(data);
    return rc;
}
