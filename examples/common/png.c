/* PNG writing with libpng, atomically; tiling image batches into a grid. */
#include "png.h" /* ours, beside this file; <png.h> below is libpng's, so
                    examples/common must never be on the -I path */

#include <png.h>

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *image_strerror(int code)
{
    switch (code) {
    case IMAGE_OK: return "success";
    case IMAGE_EARG: return "invalid argument";
    case IMAGE_ENOMEM: return "out of memory";
    case IMAGE_EIO: return "file could not be written";
    case IMAGE_EPNG: return "libpng error";
    default: return "unknown image error";
    }
}

/* libpng's default handlers print to stderr; ours stay silent. */
static void on_error(png_structp png, png_const_charp msg)
{
    (void)msg;
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* Encode the image into an open file. libpng reports errors by longjmp, so
 * nothing that changes after setjmp is read after it. */
static int encode(FILE *f, int width, int height, int channels, const uint8_t *pixels,
                  size_t stride)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, on_error, on_warning);
    if (png == NULL) {
        return IMAGE_ENOMEM;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        return IMAGE_ENOMEM;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return IMAGE_EPNG;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int row = 0; row < height; row++) {
        png_write_row(png, pixels + (size_t)row * stride);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return IMAGE_OK;
}

int image_png_write(const char *path, int width, int height, int channels,
                    const uint8_t *pixels, size_t stride)
{
    if (path == NULL || pixels == NULL || width < 1 || height < 1 ||
        (channels != 1 && channels != 3) || stride < (size_t)width * (size_t)channels) {
        return IMAGE_EARG;
    }
    size_t len = strlen(path);
    char *tmp = malloc(len + 8);
    if (tmp == NULL) {
        return IMAGE_ENOMEM;
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".XXXXXX", 8);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return IMAGE_EIO;
    }
    FILE *f = fdopen(fd, "wb");
    if (f == NULL) {
        int saved = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        errno = saved;
        return IMAGE_EIO;
    }
    int rc = encode(f, width, height, channels, pixels, stride);
    if (rc == IMAGE_EPNG && ferror(f)) {
        rc = IMAGE_EIO; /* libpng's write callback failed: the disk, not the image */
    }
    /* mkstemp makes the file 0600; a picture is for everyone to read. */
    if (rc == IMAGE_OK && (fchmod(fd, 0644) != 0 || fflush(f) != 0 || fsync(fd) != 0)) {
        rc = IMAGE_EIO;
    }
    int saved = errno;
    if (fclose(f) != 0 && rc == IMAGE_OK) {
        rc = IMAGE_EIO;
        saved = errno;
    }
    if (rc == IMAGE_OK && rename(tmp, path) != 0) {
        rc = IMAGE_EIO;
        saved = errno;
    }
    if (rc != IMAGE_OK) {
        unlink(tmp);
    }
    free(tmp);
    errno = saved;
    return rc;
}

int image_tile(uint8_t **out, int *out_w, int *out_h, const float *x, int64_t n, int64_t ld,
               int h, int w, int cols, int pad, float lo, float hi)
{
    return image_tile_scaled(out, out_w, out_h, x, n, ld, h, w, cols, pad, 1, lo, hi);
}

int image_scale_for(int h, int w, int min_side, int at_least)
{
    const int side = h < w ? h : w;
    if (side < 1 || min_side < 1) {
        return at_least;
    }
    const int need = (min_side + side - 1) / side;
    return need > at_least ? need : at_least;
}

int image_tile_scaled(uint8_t **out, int *out_w, int *out_h, const float *x, int64_t n,
                      int64_t ld, int h, int w, int cols, int pad, int scale, float lo, float hi)
{
    if (out == NULL) {
        return IMAGE_EARG;
    }
    *out = NULL;
    if (out_w == NULL || out_h == NULL || x == NULL || n < 1 || h < 1 || w < 1 || cols < 1 ||
        pad < 0 || scale < 1 || scale > 4096 || ld < (int64_t)h * w || !(hi > lo)) {
        return IMAGE_EARG;
    }
    const int64_t rows = (n + cols - 1) / cols, sh = (int64_t)h * scale, sw = (int64_t)w * scale;
    const int64_t W = (int64_t)cols * (sw + pad) + pad, H = rows * (sh + pad) + pad;
    if (W > 65535 || H > 65535) {
        return IMAGE_EARG; /* keep well inside what viewers (and int) handle */
    }
    uint8_t *img = malloc((size_t)(W * H));
    if (img == NULL) {
        return IMAGE_ENOMEM;
    }
    memset(img, 128, (size_t)(W * H));
    const float k = 255.0f / (hi - lo);
    for (int64_t i = 0; i < n; i++) {
        const float *src = x + i * ld;
        uint8_t *dst = img + (pad + (i / cols) * (sh + pad)) * W + pad + (i % cols) * (sw + pad);
        for (int64_t r = 0; r < sh; r++) {
            for (int64_t c = 0; c < sw; c++) {
                float v = (src[(r / scale) * w + c / scale] - lo) * k;
                v = v > 255.0f ? 255.0f : v >= 0.0f ? v : 0.0f; /* NaN goes to black */
                dst[r * W + c] = (uint8_t)(v + 0.5f);
            }
        }
    }
    *out = img;
    *out_w = (int)W;
    *out_h = (int)H;
    return IMAGE_OK;
}
