/* Model files' byte format (docs/format.md; version 2 adds the offsets of
 * a centred model and the Potts and dReLU kinds): the image of a model in a
 * caller's buffer and its validating loader. Every multi-byte field is
 * little-endian and is read and written byte by byte, so the format does
 * not depend on the host's byte order, alignment or struct padding. Files
 * on disk (the atomic saver, the non-blocking reader): io_file.c. */
#include "error.h"
#include "model.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parameters are stored as IEEE-754 binary32 bit patterns copied from the
 * floats: refuse to build where float is anything else. */
typedef char io_float_is_binary32[(sizeof(float) == 4 && FLT_RADIX == 2 && FLT_MANT_DIG == 24 &&
                                   FLT_MAX_EXP == 128)
                                      ? 1
                                      : -1];

/* PNG-style: a high-bit byte, the name, then CR LF, ^Z and LF, so that a
 * text-mode transfer or a 7-bit channel visibly damages the first 8 bytes. */
static const unsigned char io_magic[8] = {0x89, 'E', 'B', 'M', '\r', '\n', 0x1a, '\n'};
/* A model without offsets is written as version 1, a centred one as 2. */
#define IO_VERSION_MAX 2u
/* magic, version, n_layers, visible units, hidden units */
#define IO_FIXED 24u
/* Version 2 only, after them: the visible layer's categories and the flags. */
#define IO_EXT 8u
#define IO_FLAG_CENTRED 1u /* the offsets follow the parameters */

/* ---- bytes ------------------------------------------------------------ */

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* CRC-32 of zlib, PNG and Ethernet: the reflected polynomial 0xEDB88320,
 * initial value and final xor 0xFFFFFFFF; "123456789" gives 0xCBF43926.
 * crc_table[b] is the CRC register after shifting the byte b through it. */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

static uint32_t crc32_ieee(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c = crc_table[(c ^ p[i]) & 0xffu] ^ (c >> 8);
    }
    return c ^ 0xffffffffu;
}

/* ---- layout ----------------------------------------------------------- */

/* Bytes before the parameters: the fixed header, the sizes, param_count. */
static uint64_t head_size(uint32_t version, uint64_t n_layers)
{
    return IO_FIXED + (version >= 2 ? IO_EXT : 0) + 8 * n_layers + 8;
}

/* The version a model is written as: 1 unless it needs version 2's fields
 * (offsets, categories) or kinds (Potts, dReLU). */
static uint32_t version_of(const ebm_model_t *m)
{
    return m->centred || ebm__is_potts(m, 0) || ebm__is_drelu(m, 1) ? 2u : 1u;
}

int64_t ebm_model_save_size(const ebm_model_t *m)
{
    if (m == NULL) {
        return -1;
    }
    return (int64_t)head_size(version_of(m), (uint64_t)m->n_layers) + 4 * m->n_params +
           (m->centred ? 4 * m->width : 0) + 4;
}

/* Write the whole file image of m into p[0 .. ebm_model_save_size(m)). */
static void serialise(const ebm_model_t *m, unsigned char *p)
{
    unsigned char *start = p;
    memcpy(p, io_magic, sizeof io_magic);
    const uint32_t version = version_of(m);
    put_u32(p + 8, version);
    put_u32(p + 12, (uint32_t)m->n_layers);
    put_u32(p + 16, (uint32_t)m->units[0]);
    put_u32(p + 20, (uint32_t)m->units[1]); /* every hidden layer has this kind */
    p += IO_FIXED;
    if (version >= 2) {
        put_u32(p, (uint32_t)m->categories[0]);
        put_u32(p + 4, m->centred ? IO_FLAG_CENTRED : 0u);
        p += IO_EXT;
    }
    for (int64_t l = 0; l < m->n_layers; l++, p += 8) {
        put_u64(p, (uint64_t)m->size[l]);
    }
    put_u64(p, (uint64_t)m->n_params);
    p += 8;
    for (int64_t i = 0; i < m->n_params; i++, p += 4) {
        uint32_t bits;
        memcpy(&bits, &m->params[i], sizeof bits);
        put_u32(p, bits);
    }
    for (int64_t j = 0; m->centred && j < m->width; j++, p += 4) {
        uint32_t bits;
        memcpy(&bits, &m->mu[j], sizeof bits);
        put_u32(p, bits);
    }
    put_u32(p, crc32_ieee(start, (size_t)(p - start)));
}

/*
 * The parameter count of the flat layout [W_1 .. W_L | b_0 .. b_L |
 * logvar_0 | shape_1]. Only called for a state width <= EBM__BLAS_MAX, so that the
 * weights number at most (width / 2)^2 < 2^60 and nothing overflows.
 */
static int64_t layout_param_count(int64_t n_layers, const int64_t *sizes, int visible_units,
                                  int hidden_units)
{
    int64_t count = 0;
    for (int64_t l = 0; l < n_layers; l++) {
        count += sizes[l] + (l > 0 ? sizes[l - 1] * sizes[l] : 0);
    }
    return count + (visible_units == EBM_UNITS_GAUSSIAN ? sizes[0] : 0) +
           (hidden_units == EBM_UNITS_DRELU ? 3 * sizes[1] : 0);
}

/* ---- saving ----------------------------------------------------------- */

int ebm_model_save_buffer(const ebm_model_t *m, void *buf, size_t cap, size_t *size)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    if (buf == NULL) {
        return ebm__model_error(m, EBM_ENULL, "buf is NULL");
    }
    if (size == NULL) {
        return ebm__model_error(m, EBM_ENULL, "size is NULL");
    }
    int64_t need = ebm_model_save_size(m);
    if ((uint64_t)cap < (uint64_t)need) {
        return ebm__model_error(m, EBM_ESHAPE,
                                "cap is %zu bytes; the model needs %lld (ebm_model_save_size)", cap,
                                (long long)need);
    }
    serialise(m, buf);
    *size = (size_t)need;
    return EBM_OK;
}

/* ---- loading ---------------------------------------------------------- */

static int bad_magic(ebm__msg *msg, const unsigned char *p)
{
    /* The name survived but CR, LF or ^Z did not (or the high bit was
     * stripped): a model file damaged in transit, not another format. */
    int damaged = (p[0] & 0x7f) == 0x09 && memcmp(p + 1, "EBM", 3) == 0;
    return ebm__fail(msg, EBM_EFORMAT,
                     "bad magic %02x %02x %02x %02x %02x %02x %02x %02x: %s (a model file "
                     "starts with 89 45 42 4d 0d 0a 1a 0a)",
                     p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7],
                     damaged ? "a model file damaged by a text-mode or 7-bit transfer"
                             : "not a libebm model file");
}

/* The unit kinds are judged by ebm__model_new itself (same rules, same
 * messages as ebm_model_create) on a 1 x 1 probe: nothing here is sized by
 * the file. */
static int check_units(ebm__msg *msg, uint32_t version, uint32_t visible, uint32_t hidden)
{
    if (visible > INT_MAX || hidden > INT_MAX) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "invalid units: the unit kinds are %lu (visible) and %lu (hidden); "
                         "enum ebm_units has 0 to 4",
                         (unsigned long)visible, (unsigned long)hidden);
    }
    if (visible == EBM_UNITS_POTTS && version < 2) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "invalid units: Potts visible units (3) need format version 2, which "
                         "holds their categories");
    }
    if (hidden == EBM_UNITS_DRELU && version < 2) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "invalid units: dReLU hidden units (4) need format version 2");
    }
    /* (a Potts probe of 2 categories: the file's are checked with the shape) */
    const int64_t probe_sizes[2] = {visible == EBM_UNITS_POTTS ? 2 : 1, 1};
    ebm_model_t *probe = NULL;
    ebm__msg inner;
    const int64_t probe_categories = 2;
    int rc = ebm__model_new(&probe, &inner, 2, probe_sizes, (int)visible, (int)hidden,
                            &probe_categories);
    ebm_model_destroy(probe);
    if (rc == EBM_OK) {
        return EBM_OK;
    }
    if (rc == EBM_ENOMEM) {
        return ebm__fail(msg, rc, "%s", inner.text);
    }
    return ebm__fail(msg, EBM_EFORMAT, "invalid units: %s", inner.text);
}

/* What the head of a model image declares, up to param_count. */
typedef struct io_head {
    uint32_t version, n_layers, visible, hidden;
    uint32_t categories, flags; /* version 2's fields; 1 and 0 in version 1 */
    uint64_t head;              /* bytes before the parameters */
    int64_t sizes[EBM_MAX_LAYERS];
    int64_t width;
    uint64_t declared; /* param_count */
} io_head;

/* Version 2's categories and flags against the unit kinds: categories 1
 * unless the visible units are Potts units (then 2 to
 * EBM__MAX_CATEGORIES), no flag but IO_FLAG_CENTRED, and something that
 * version 1 cannot hold. EBM_OK or EBM_EFORMAT with its message. */
static int check_ext(ebm__msg *msg, const io_head *h)
{
    if (h->visible != EBM_UNITS_POTTS && h->categories != 1) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "categories is %lu; visible units that are not Potts units have 1",
                         (unsigned long)h->categories);
    }
    if (h->visible == EBM_UNITS_POTTS &&
        (h->categories < 2 || h->categories > EBM__MAX_CATEGORIES)) {
        return ebm__fail(msg, EBM_EFORMAT, "categories is %lu; Potts units have from 2 to %d",
                         (unsigned long)h->categories, EBM__MAX_CATEGORIES);
    }
    if (h->flags & ~IO_FLAG_CENTRED) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "flags is 0x%lx; only bit 0 (the offsets follow) is defined",
                         (unsigned long)h->flags);
    }
    if (h->flags == 0 && h->visible != EBM_UNITS_POTTS && h->hidden != EBM_UNITS_DRELU) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "version 2 with flags 0 and no Potts or dReLU units: such a model "
                         "is saved as version 1");
    }
    return EBM_OK;
}

/* Validate the head of the image p[0 .. size) in the order of
 * docs/format.md (length, magic, version, n_layers, units, version 2's
 * fields, sizes) and fill *h. Nothing is allocated but check_units's 1 x 1
 * probe. EBM_OK, EBM_EFORMAT or EBM_ENOMEM with its message. */
static int parse_head(ebm__msg *msg, const unsigned char *p, size_t size, io_head *h)
{
    if (size < IO_FIXED) {
        return ebm__fail(msg, EBM_EFORMAT, "file is %zu bytes; a model file has at least %u",
                         size, IO_FIXED);
    }
    if (memcmp(p, io_magic, sizeof io_magic) != 0) {
        return bad_magic(msg, p);
    }
    h->version = get_u32(p + 8);
    if (h->version < 1 || h->version > IO_VERSION_MAX) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "format version %lu is not supported; this libebm reads versions 1 "
                         "to %u",
                         (unsigned long)h->version, IO_VERSION_MAX);
    }
    h->n_layers = get_u32(p + 12);
    if (h->n_layers < 2 || h->n_layers > EBM_MAX_LAYERS) {
        return ebm__fail(msg, EBM_EFORMAT, "n_layers is %lu; it must be from 2 to %d",
                         (unsigned long)h->n_layers, EBM_MAX_LAYERS);
    }
    h->visible = get_u32(p + 16);
    h->hidden = get_u32(p + 20);
    int rc = check_units(msg, h->version, h->visible, h->hidden);
    if (rc != EBM_OK) {
        return rc;
    }
    h->head = head_size(h->version, h->n_layers);
    if (size < h->head) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "file is %zu bytes; with %lu layers the sizes and param_count end at "
                         "byte %llu",
                         size, (unsigned long)h->n_layers, (unsigned long long)h->head);
    }
    h->flags = 0;
    h->categories = 1;
    if (h->version >= 2) {
        h->categories = get_u32(p + IO_FIXED);
        h->flags = get_u32(p + IO_FIXED + 4);
        rc = check_ext(msg, h);
        if (rc != EBM_OK) {
            return rc;
        }
    }
    const unsigned char *size_at = p + h->head - 8 - 8 * (uint64_t)h->n_layers;
    h->width = 0;
    for (uint32_t l = 0; l < h->n_layers; l++) {
        uint64_t s = get_u64(size_at + 8 * l);
        if (s < 1 || s > (uint64_t)EBM__BLAS_MAX) {
            return ebm__fail(msg, EBM_EFORMAT, "sizes[%lu] is %llu; it must be from 1 to %lld",
                             (unsigned long)l, (unsigned long long)s, (long long)EBM__BLAS_MAX);
        }
        h->sizes[l] = (int64_t)s;
        h->width += h->sizes[l]; /* < 32 * 2^31: no overflow */
    }
    h->declared = get_u64(p + h->head - 8);
    return EBM_OK;
}

/* The bytes of the offsets: with IO_FLAG_CENTRED, one float per unit
 * follows the parameters. */
static uint64_t offset_bytes(const io_head *h)
{
    return (h->flags & IO_FLAG_CENTRED) ? 4 * (uint64_t)h->width : 0;
}

/*
 * *m = the model of the shape h declares, or NULL when an image of size
 * bytes cannot hold its parameters; *n_params = the shape's parameter
 * count (-1: the width breaks ebm__model_new's limit). ebm__model_new
 * validates the shape and allocates it, so it runs only when the buffer
 * holds the parameters the shape implies, or when the width already breaks
 * its limit (it then fails before allocating). A larger shape in a smaller
 * buffer is reported as a count or length error after this: a 60-byte file
 * never makes a 19 GB allocation. EBM_OK, or EBM_EFORMAT, EBM_ENOMEM,
 * EBM_EINTERNAL with *m NULL.
 */
static int new_model(ebm__msg *msg, const io_head *h, size_t size, ebm_model_t **m,
                     int64_t *n_params)
{
    int64_t count = h->width <= EBM__BLAS_MAX ? layout_param_count(h->n_layers, h->sizes,
                                                                   (int)h->visible, (int)h->hidden)
                                              : -1;
    const uint64_t extra = offset_bytes(h);
    uint64_t room = size >= h->head + extra + 4 ? (size - h->head - extra - 4) / 4 : 0;
    *m = NULL;
    if (count < 0 || (uint64_t)count <= room) {
        ebm__msg inner;
        const int64_t q = h->categories;
        int rc = ebm__model_new(m, &inner, h->n_layers, h->sizes, (int)h->visible,
                                (int)h->hidden, &q);
        if (rc == EBM_ENOMEM) {
            return ebm__fail(msg, rc, "%s", inner.text);
        }
        if (rc != EBM_OK) {
            return ebm__fail(msg, EBM_EFORMAT, "invalid shape: %s", inner.text);
        }
        if (count >= 0 && (*m)->n_params != count) {
            rc = ebm__fail(msg, EBM_EINTERNAL,
                           "the format counts %lld parameters, the model %lld: please report",
                           (long long)count, (long long)(*m)->n_params);
            ebm_model_destroy(*m);
            *m = NULL;
            return rc;
        }
        count = (*m)->n_params;
    }
    *n_params = count;
    return EBM_OK;
}

/* param_count equal to the shape's n_params, and the image exactly size =
 * *expected bytes: the head, the parameters, the offsets, the CRC.
 * EBM_OK or EBM_EFORMAT with its message. */
static int check_length(ebm__msg *msg, const io_head *h, size_t size, int64_t n_params,
                        uint64_t *expected)
{
    if (h->declared != (uint64_t)n_params) {
        return ebm__fail(msg, EBM_EFORMAT, "param_count is %llu; the shape has %lld parameters",
                         (unsigned long long)h->declared, (long long)n_params);
    }
    /* n_params < 2^61 */
    *expected = h->head + 4 * (uint64_t)n_params + offset_bytes(h) + 4;
    if (size < *expected) {
        return ebm__fail(msg, EBM_EFORMAT, "file is %zu bytes; the header declares %llu", size,
                         (unsigned long long)*expected);
    }
    if (size > *expected) {
        return ebm__fail(msg, EBM_EFORMAT, "%llu trailing bytes after the CRC",
                         (unsigned long long)(size - *expected));
    }
    return EBM_OK;
}

/* The CRC-32 stored in the last 4 of the n bytes of p is that of the
 * others. EBM_OK or EBM_EFORMAT with its message. */
static int check_crc(ebm__msg *msg, const unsigned char *p, uint64_t n)
{
    uint32_t stored = get_u32(p + n - 4);
    uint32_t computed = crc32_ieee(p, (size_t)n - 4);
    if (stored != computed) {
        return ebm__fail(msg, EBM_EFORMAT,
                         "CRC-32 mismatch: the file stores 0x%08lx, its contents give 0x%08lx",
                         (unsigned long)stored, (unsigned long)computed);
    }
    return EBM_OK;
}

/* m's parameters, and with IO_FLAG_CENTRED its offsets (then centred),
 * from the bytes q after the head, each checked: parameters as
 * ebm_model_set_params does, offsets in their units' ranges, +0 rather
 * than -0, not all 0. EBM_OK or EBM_EFORMAT with its message (m is then
 * the caller's to destroy). */
static int read_values(ebm__msg *msg, ebm_model_t *m, const io_head *h, const unsigned char *q)
{
    for (int64_t i = 0; i < m->n_params; i++, q += 4) {
        uint32_t bits = get_u32(q);
        memcpy(&m->params[i], &bits, sizeof bits);
    }
    int rc = ebm__check_params(m, msg, "invalid parameter", m->params);
    if (rc != EBM_OK) {
        return EBM_EFORMAT;
    }
    if (!(h->flags & IO_FLAG_CENTRED)) {
        return EBM_OK;
    }
    int any = 0;
    for (int64_t j = 0; j < h->width; j++, q += 4) {
        uint32_t bits = get_u32(q);
        memcpy(&m->mu[j], &bits, sizeof bits);
        any |= m->mu[j] != 0.0f;
        if (bits == 0x80000000u && rc == EBM_OK) {
            rc = ebm__fail(msg, EBM_EFORMAT,
                           "invalid offset: offsets[%lld] is -0; a model stores +0", (long long)j);
        }
    }
    if (rc == EBM_OK) {
        rc = ebm__check_centring(m, msg, "invalid offset: offsets", m->mu);
    }
    if (rc == EBM_OK && !any) {
        rc = ebm__fail(msg, EBM_EFORMAT,
                       "flags say the offsets follow, but every offset is 0: a model "
                       "without offsets is saved with flag bit 0 clear");
    }
    if (rc != EBM_OK) {
        return EBM_EFORMAT;
    }
    m->centred = 1;
    return EBM_OK;
}

/* Validate the image p[0 .. size) in the order of docs/format.md and build
 * the model into *out. Nothing is allocated for the declared shape before
 * the buffer is known to hold that many parameters. */
static int parse(ebm_model_t **out, ebm__msg *msg, const unsigned char *p, size_t size)
{
    io_head h;
    int rc = parse_head(msg, p, size, &h);
    if (rc != EBM_OK) {
        return rc;
    }
    ebm_model_t *m = NULL;
    int64_t n_params = 0;
    rc = new_model(msg, &h, size, &m, &n_params);
    if (rc != EBM_OK) {
        return rc;
    }
    uint64_t expected = 0;
    rc = check_length(msg, &h, size, n_params, &expected);
    if (rc == EBM_OK && m == NULL) { /* size == expected means the buffer held the parameters */
        return ebm__fail(msg, EBM_EINTERNAL, "no model after the length check: please report");
    }
    if (rc == EBM_OK) {
        rc = check_crc(msg, p, expected);
    }
    if (rc == EBM_OK) {
        rc = read_values(msg, m, &h, p + h.head);
    }
    if (rc != EBM_OK) {
        ebm_model_destroy(m);
        return rc;
    }
    ebm__model_refresh(m);
    *out = m;
    return EBM_OK;
}

int ebm_model_load_buffer(ebm_model_t **out, const void *buf, size_t size, char *errbuf,
                          size_t errbuf_size)
{
    ebm__msg msg;
    int rc;
    if (out != NULL) {
        *out = NULL;
    }
    if (out == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "out is NULL");
    } else if (buf == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "buf is NULL");
    } else {
        rc = parse(out, &msg, buf, size);
    }
    if (rc != EBM_OK) {
        ebm__copy_text(errbuf, errbuf_size, msg.text);
    }
    return rc;
}
