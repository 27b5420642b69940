/*
 * A fast PNG encoder for Cairo ARGB32 surfaces (see png_shim.h).
 *
 * Everything that can longjmp stays in this file: libpng calls bk_error, which records the
 * message and jumps back to the setjmp in bk_encode; Swift only sees a return code.
 */
#include "png_shim.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- errors ---------------------------------------------------------------------------- */

typedef struct {
    char *buffer;
    size_t size;
} bk_error_sink;

static void bk_set_error(char *buffer, size_t size, const char *message) {
    if (buffer != NULL && size > 0) {
        snprintf(buffer, size, "%s", message != NULL ? message : "unknown error");
    }
}

static void bk_error(png_structp png, png_const_charp message) {
    bk_error_sink *sink = (bk_error_sink *)png_get_error_ptr(png);
    if (sink != NULL) {
        bk_set_error(sink->buffer, sink->size, message);
    }
    png_longjmp(png, 1);
}

static void bk_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message; /* libpng warnings are about metadata we never write */
}

/* ---- output ---------------------------------------------------------------------------- */

static void bk_file_write(png_structp png, png_bytep bytes, size_t length) {
    FILE *file = (FILE *)png_get_io_ptr(png);
    if (fwrite(bytes, 1, length, file) != length) {
        char message[160];
        snprintf(message, sizeof message, "write failed: %s", strerror(errno));
        png_error(png, message);
    }
}

static void bk_file_flush(png_structp png) {
    (void)png; /* the caller checks fflush/fclose once at the end */
}

typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
} bk_memory_sink;

static void bk_memory_write(png_structp png, png_bytep bytes, size_t length) {
    bk_memory_sink *sink = (bk_memory_sink *)png_get_io_ptr(png);
    if (length > SIZE_MAX - sink->size) {
        png_error(png, "encoded image too large");
    }
    size_t needed = sink->size + length;
    if (needed > sink->capacity) {
        size_t capacity = sink->capacity > 0 ? sink->capacity : 64 * 1024;
        while (capacity < needed) {
            capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
        }
        unsigned char *grown = (unsigned char *)realloc(sink->data, capacity);
        if (grown == NULL) {
            png_error(png, "out of memory");
        }
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->size, bytes, length);
    sink->size = needed;
}

static void bk_memory_flush(png_structp png) {
    (void)png;
}

/* ---- pixels ---------------------------------------------------------------------------- */

static const uint32_t *bk_row(const unsigned char *data, int stride, int y) {
    return (const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride);
}

/* 1 when every pixel has alpha 255. AND-ing whole rows lets the compiler vectorise. */
static int bk_is_opaque(const unsigned char *data, int width, int height, int stride) {
    for (int y = 0; y < height; y++) {
        const uint32_t *row = bk_row(data, stride, y);
        uint32_t all = 0xFFFFFFFFu;
        for (int x = 0; x < width; x++) {
            all &= row[x];
        }
        if ((all >> 24) != 0xFFu) {
            return 0;
        }
    }
    return 1;
}

/* Straight colour from premultiplied `c` at alpha `a` (1...254), rounded to nearest: the same
 * formula as Cairo's own PNG writer, so Cairo's reader (which premultiplies with rounding)
 * gives back exactly the original premultiplied value. */
static unsigned char bk_unpremultiply(uint32_t c, uint32_t a) {
    uint32_t v = (c * 255u + a / 2u) / a;
    return (unsigned char)(v > 255u ? 255u : v);
}

static void bk_convert_row_rgb(const uint32_t *src, unsigned char *dst, int width) {
    for (int x = 0; x < width; x++) {
        uint32_t p = src[x];
        dst[0] = (unsigned char)(p >> 16);
        dst[1] = (unsigned char)(p >> 8);
        dst[2] = (unsigned char)p;
        dst += 3;
    }
}

static void bk_convert_row_rgba(const uint32_t *src, unsigned char *dst, int width) {
    for (int x = 0; x < width; x++) {
        uint32_t p = src[x];
        uint32_t a = p >> 24;
        if (a == 255u) {
            dst[0] = (unsigned char)(p >> 16);
            dst[1] = (unsigned char)(p >> 8);
            dst[2] = (unsigned char)p;
            dst[3] = 255;
        } else if (a == 0u) {
            dst[0] = dst[1] = dst[2] = dst[3] = 0;
        } else {
            dst[0] = bk_unpremultiply((p >> 16) & 0xFFu, a);
            dst[1] = bk_unpremultiply((p >> 8) & 0xFFu, a);
            dst[2] = bk_unpremultiply(p & 0xFFu, a);
            dst[3] = (unsigned char)a;
        }
        dst += 4;
    }
}

/* ---- encoder --------------------------------------------------------------------------- */

static int bk_check_arguments(const unsigned char *data, int width, int height, int stride,
                              const bk_png_options *options, char *error_buffer, size_t error_size) {
    char message[160];
    if (data == NULL || options == NULL) {
        bk_set_error(error_buffer, error_size, "no pixel data or options");
        return 1;
    }
    if (width <= 0 || height <= 0 || width > 1000000 || height > 1000000) {
        snprintf(message, sizeof message, "image size %d×%d is not usable for PNG", width, height);
        bk_set_error(error_buffer, error_size, message);
        return 1;
    }
    if (stride / 4 < width || stride % 4 != 0) {
        snprintf(message, sizeof message, "stride %d is too small or unaligned for width %d", stride, width);
        bk_set_error(error_buffer, error_size, message);
        return 1;
    }
    return 0;
}

static int bk_libpng_filters(int filters) {
    int result = 0;
    if (filters & BK_PNG_FILTER_NONE) result |= PNG_FILTER_NONE;
    if (filters & BK_PNG_FILTER_SUB) result |= PNG_FILTER_SUB;
    if (filters & BK_PNG_FILTER_UP) result |= PNG_FILTER_UP;
    if (filters & BK_PNG_FILTER_AVERAGE) result |= PNG_FILTER_AVG;
    if (filters & BK_PNG_FILTER_PAETH) result |= PNG_FILTER_PAETH;
    return result != 0 ? result : PNG_FILTER_NONE;
}

static int bk_zlib_strategy(int strategy) {
    switch (strategy) {
    case BK_PNG_STRATEGY_FILTERED: return Z_FILTERED;
    case BK_PNG_STRATEGY_HUFFMAN_ONLY: return Z_HUFFMAN_ONLY;
    case BK_PNG_STRATEGY_RLE: return Z_RLE;
    case BK_PNG_STRATEGY_FIXED: return Z_FIXED;
    default: return Z_DEFAULT_STRATEGY;
    }
}

/* One encoding: the pixels, the settings and where the bytes go. */
typedef struct {
    const unsigned char *data;
    int width, height, stride;
    int opaque;               /* write RGB, ignore the alpha byte */
    const bk_png_options *options;
    FILE *file;               /* output file, or NULL for memory */
    bk_memory_sink *memory;
} bk_job;

/* Encodes `job`; arguments are already checked. Only `png`, `info` and `row` live across the
 * setjmp, and none of them is assigned after it, so they keep their values after a longjmp. */
static int bk_encode(const bk_job *job, char *error_buffer, size_t error_size) {
    bk_error_sink sink = { error_buffer, error_size };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, bk_error, bk_warning);
    if (png == NULL) {
        bk_set_error(error_buffer, error_size, "cannot start libpng (out of memory or version mismatch)");
        return 1;
    }
    png_infop info = png_create_info_struct(png);
    unsigned char *row = (unsigned char *)malloc((size_t)job->width * (job->opaque ? 3u : 4u));
    if (info == NULL || row == NULL) {
        png_destroy_write_struct(&png, &info);
        free(row);
        bk_set_error(error_buffer, error_size, "out of memory");
        return 1;
    }

    /* libpng errors land here, with the message already in error_buffer. */
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return 1;
    }

    if (job->file != NULL) {
        png_set_write_fn(png, job->file, bk_file_write, bk_file_flush);
    } else {
        png_set_write_fn(png, job->memory, bk_memory_write, bk_memory_flush);
    }
    png_set_IHDR(png, info, (png_uint_32)job->width, (png_uint_32)job->height, 8,
                 job->opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGB_ALPHA,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    int level = job->options->compression_level;
    level = level < 0 ? 0 : level > 9 ? 9 : level;
    png_set_compression_level(png, level);
    png_set_compression_strategy(png, bk_zlib_strategy(job->options->strategy));
    png_set_filter(png, PNG_FILTER_TYPE_BASE, bk_libpng_filters(job->options->filters));
    /* Larger IDAT chunks: fewer write calls and chunk CRCs (libpng's default is 8 KiB). */
    png_set_compression_buffer_size(png, 64 * 1024);
    png_write_info(png, info);

    for (int y = 0; y < job->height; y++) {
        const uint32_t *pixels = bk_row(job->data, job->stride, y);
        if (job->opaque) {
            bk_convert_row_rgb(pixels, row, job->width);
        } else {
            bk_convert_row_rgba(pixels, row, job->width);
        }
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(row);
    return 0;
}

int bk_png_write_argb32(const char *path,
                        const unsigned char *data, int width, int height, int stride,
                        int ignore_alpha, const bk_png_options *options,
                        char *error_buffer, size_t error_buffer_size) {
    if (bk_check_arguments(data, width, height, stride, options, error_buffer, error_buffer_size)) {
        return 1;
    }
    if (path == NULL) {
        bk_set_error(error_buffer, error_buffer_size, "no path");
        return 1;
    }
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        bk_set_error(error_buffer, error_buffer_size, strerror(errno));
        return 1;
    }
    const bk_job job = {
        data, width, height, stride,
        ignore_alpha || bk_is_opaque(data, width, height, stride),
        options, file, NULL
    };
    int failed = bk_encode(&job, error_buffer, error_buffer_size);
    /* A full disk may only show when the last buffered bytes go out. */
    if (!failed && (fflush(file) != 0 || ferror(file))) {
        char message[160];
        snprintf(message, sizeof message, "write failed: %s", strerror(errno));
        bk_set_error(error_buffer, error_buffer_size, message);
        failed = 1;
    }
    if (fclose(file) != 0 && !failed) {
        char message[160];
        snprintf(message, sizeof message, "closing the file failed: %s", strerror(errno));
        bk_set_error(error_buffer, error_buffer_size, message);
        failed = 1;
    }
    return failed;
}

int bk_png_encode_argb32_to_memory(const unsigned char *data, int width, int height, int stride,
                                   int ignore_alpha, const bk_png_options *options,
                                   unsigned char **out_data, size_t *out_size,
                                   char *error_buffer, size_t error_buffer_size) {
    if (out_data == NULL || out_size == NULL) {
        bk_set_error(error_buffer, error_buffer_size, "no output pointers");
        return 1;
    }
    *out_data = NULL;
    *out_size = 0;
    if (bk_check_arguments(data, width, height, stride, options, error_buffer, error_buffer_size)) {
        return 1;
    }
    bk_memory_sink memory = { NULL, 0, 0 };
    const bk_job job = {
        data, width, height, stride,
        ignore_alpha || bk_is_opaque(data, width, height, stride),
        options, NULL, &memory
    };
    if (bk_encode(&job, error_buffer, error_buffer_size)) {
        free(memory.data);
        return 1;
    }
    *out_data = memory.data;
    *out_size = memory.size;
    return 0;
}

void bk_png_free(void *buffer) {
    free(buffer);
}

const char *bk_png_libpng_version(void) {
    return png_get_libpng_ver(NULL);
}
