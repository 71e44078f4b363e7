/* Writing 8-bit images to PNG files, and tiling a batch of images into a grid.
 *
 * For the examples only: these helpers never print, abort or exit; they
 * return IMAGE_OK (0) or a negative IMAGE_E* code, which image_strerror names.
 * (The prefix is image_ because libpng owns png_.)
 */
#ifndef EXAMPLES_COMMON_PNG_H
#define EXAMPLES_COMMON_PNG_H

#include <stddef.h>
#include <stdint.h>

enum image_status {
    IMAGE_OK = 0,
    IMAGE_EARG = -1,   /* a NULL pointer, a bad size or channel count */
    IMAGE_ENOMEM = -2, /* memory could not be allocated */
    IMAGE_EIO = -3,    /* the file could not be created, written or renamed (errno is kept) */
    IMAGE_EPNG = -4    /* libpng reported an error */
};

/** @return a static description of an image_status code. */
const char *image_strerror(int code);

/**
 * Write a width x height image of 8-bit pixels to path as a PNG, atomically:
 * the data goes to a temporary file beside path, which is flushed, synced and
 * renamed over path, so a reader sees either the old file or the whole new one.
 * @param channels 1 (grey) or 3 (RGB, interleaved)
 * @param stride   bytes from one row to the next, >= width * channels
 * @return IMAGE_OK, IMAGE_EARG, IMAGE_ENOMEM, IMAGE_EIO, IMAGE_EPNG
 */
int image_png_write(const char *path, int width, int height, int channels,
                    const uint8_t *pixels, size_t stride);

/**
 * Tile n grey images of h x w floats (image i is row i of x, stride ld >= h*w
 * floats, row-major inside) into a grid of `cols` columns separated and
 * framed by `pad` pixels of mid grey. A value v maps to 255 (v - lo)/(hi - lo),
 * clipped to [0, 255]: lo = 0, hi = 1 for probabilities, lo = -1, hi = 1 for
 * spins. Cells past n stay mid grey.
 * @param[out] out   a malloc'd grey image of *out_w x *out_h bytes (stride
 *                   *out_w), owned by the caller (free); NULL on failure
 * @return IMAGE_OK, IMAGE_EARG (n < 1, bad sizes, hi <= lo), IMAGE_ENOMEM
 */
int image_tile(uint8_t **out, int *out_w, int *out_h, const float *x, int64_t n, int64_t ld,
               int h, int w, int cols, int pad, float lo, float hi);

/** Pictures show every image at least this many pixels on its shorter side. */
#define IMAGE_MIN_SIDE 28

/**
 * The smallest integer factor >= at_least that makes an h x w image at least
 * min_side pixels on its shorter side: 7 for 4 x 4 bars-and-stripes and
 * min_side 28, 4 for 8 x 8 digits, 1 for 28 x 28 (at_least 1). Sizes < 1
 * give at_least.
 */
int image_scale_for(int h, int w, int min_side, int at_least);

/**
 * image_tile with each image pixel drawn as a scale x scale block (nearest
 * neighbour, integer upscaling): the images are h*scale x w*scale pixels in
 * the grid, the padding stays pad pixels. scale 1 is image_tile.
 * @return as image_tile (IMAGE_EARG also for scale < 1)
 */
int image_tile_scaled(uint8_t **out, int *out_w, int *out_h, const float *x, int64_t n,
                      int64_t ld, int h, int w, int cols, int pad, int scale, float lo, float hi);

#endif
