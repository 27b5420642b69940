#ifndef BUBBLEKIT_PNG_SHIM_H
#define BUBBLEKIT_PNG_SHIM_H
/*
 * A fast PNG encoder for Cairo image surfaces, written with libpng.
 *
 * libpng reports errors with setjmp/longjmp, which Swift cannot use; these functions keep that
 * inside C and report failures as a non-zero return value with a message.
 *
 * Input: Cairo's CAIRO_FORMAT_ARGB32 pixels: one native-endian uint32 per pixel,
 * (a << 24 | r << 16 | g << 8 | b), colour premultiplied by alpha; rows `stride` bytes apart.
 * With `ignore_alpha` non-zero (CAIRO_FORMAT_RGB24, whose top byte is unused) every pixel is
 * taken as opaque.
 * Output: 8-bit straight-alpha RGBA, or 8-bit RGB when every pixel is opaque.
 */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Row filters (a bit set). With more than one bit set libpng tries each listed filter on every
 * row and keeps the one that looks smallest, which costs time per extra filter. */
enum {
    BK_PNG_FILTER_NONE = 1,
    BK_PNG_FILTER_SUB = 2,
    BK_PNG_FILTER_UP = 4,
    BK_PNG_FILTER_AVERAGE = 8,
    BK_PNG_FILTER_PAETH = 16,
    BK_PNG_FILTER_ALL = 31
};

/* zlib strategies (same values as zlib's Z_* constants). */
enum {
    BK_PNG_STRATEGY_DEFAULT = 0,
    BK_PNG_STRATEGY_FILTERED = 1,
    BK_PNG_STRATEGY_HUFFMAN_ONLY = 2,
    BK_PNG_STRATEGY_RLE = 3,
    BK_PNG_STRATEGY_FIXED = 4
};

typedef struct bk_png_options {
    /* zlib level 0 (store) ... 9 (smallest); out-of-range values are clamped. */
    int compression_level;
    /* BK_PNG_FILTER_* bits; 0 means BK_PNG_FILTER_NONE. */
    int filters;
    /* BK_PNG_STRATEGY_*; unknown values mean BK_PNG_STRATEGY_DEFAULT. */
    int strategy;
} bk_png_options;

/*
 * Writes the pixels as a PNG file at `path` (created or truncated).
 * Returns 0 on success. On failure returns non-zero and copies a message (NUL-terminated,
 * truncated to fit) into `error_buffer` when it is not NULL; the file is closed but may be left
 * partly written, so the caller deletes it.
 */
int bk_png_write_argb32(const char *path,
                        const unsigned char *data, int width, int height, int stride,
                        int ignore_alpha, const bk_png_options *options,
                        char *error_buffer, size_t error_buffer_size);

/*
 * Encodes the pixels as PNG into memory. Returns 0 on success and sets `*out_data` to a buffer
 * of `*out_size` bytes that the caller releases with bk_png_free. On failure returns non-zero,
 * sets `*out_data` to NULL and `*out_size` to 0, and fills `error_buffer` as above.
 */
int bk_png_encode_argb32_to_memory(const unsigned char *data, int width, int height, int stride,
                                   int ignore_alpha, const bk_png_options *options,
                                   unsigned char **out_data, size_t *out_size,
                                   char *error_buffer, size_t error_buffer_size);

/* Releases a buffer returned by bk_png_encode_argb32_to_memory (NULL is allowed). */
void bk_png_free(void *buffer);

/* The libpng version the shim runs with, e.g. "1.6.39". */
const char *bk_png_libpng_version(void);

#ifdef __cplusplus
}
#endif

#endif
