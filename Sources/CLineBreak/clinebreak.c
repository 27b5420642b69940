#include "clinebreak.h"
#include <pthread.h>
#include <stdlib.h>
#include <unicode/utf16.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

static pthread_key_t line_key, char_key, buffer_key;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

/// This thread's UTF-16 copy of the text being broken and, per UTF-16 unit, its UTF-8 offset.
typedef struct {
    UChar *units;
    int32_t *offsets;
    int32_t capacity;
} utf16_buffer;

static void close_iterator(void *it) { if (it) ubrk_close((UBreakIterator *)it); }
static void free_buffer(void *p) {
    utf16_buffer *b = p;
    if (!b) return;
    free(b->units); free(b->offsets); free(b);
}
static void make_keys(void) {
    pthread_key_create(&line_key, close_iterator);
    pthread_key_create(&char_key, close_iterator);
    pthread_key_create(&buffer_key, free_buffer);
}

/// This thread's iterator of `type`, opened on first use.
static UBreakIterator *iterator(UBreakIteratorType type) {
    pthread_once(&keys_once, make_keys);
    pthread_key_t key = type == UBRK_LINE ? line_key : char_key;
    UBreakIterator *it = pthread_getspecific(key);
    if (!it) {
        UErrorCode status = U_ZERO_ERROR;
        it = ubrk_open(type, "", NULL, 0, &status);
        if (U_FAILURE(status)) return NULL;
        pthread_setspecific(key, it);
    }
    return it;
}

/// This thread's buffer with room for `units` UTF-16 units (plus one offset past the end).
static utf16_buffer *buffer(int32_t units) {
    utf16_buffer *b = pthread_getspecific(buffer_key);
    if (!b) {
        b = calloc(1, sizeof(utf16_buffer));
        if (!b) return NULL;
        pthread_setspecific(buffer_key, b);
    }
    if (b->capacity < units + 1) {
        int32_t capacity = units + 1 > 2 * b->capacity ? units + 1 : 2 * b->capacity;
        UChar *u = malloc(sizeof(UChar) * (size_t)capacity);
        int32_t *o = malloc(sizeof(int32_t) * (size_t)capacity);
        if (!u || !o) { free(u); free(o); return NULL; }
        free(b->units); free(b->offsets);
        b->units = u; b->offsets = o; b->capacity = capacity;
    }
    return b;
}

/// Breaks of `utf8` as UTF-8 byte offsets. ICU runs over a UTF-16 copy (its native form:
/// faster than a UTF-8 UText) and each break is mapped back through the offsets table.
static int32_t breaks(UBreakIteratorType type, const char *utf8, int32_t length,
                      int32_t *out, uint8_t *hard, int32_t capacity) {
    if (length <= 0) return 0;
    UBreakIterator *it = iterator(type);
    if (!it) return -1;
    // UTF-8 never has fewer bytes than UTF-16 has units.
    utf16_buffer *buf = buffer(length);
    if (!buf) return -1;
    UChar *units = buf->units;
    int32_t *offsets = buf->offsets;
    int32_t n = 0, i = 0;
    const uint8_t *bytes = (const uint8_t *)utf8;
    while (i < length) {
        if (bytes[i] < 0x80) { units[n] = bytes[i]; offsets[n++] = i++; continue; }
        int32_t start = i;
        UChar32 c;
        U8_NEXT(bytes, i, length, c);
        if (c < 0) c = 0xFFFD;   // as ICU's UTF-8 UText reads ill-formed bytes
        if (c <= 0xFFFF) { units[n] = (UChar)c; offsets[n++] = start; }
        else { units[n] = U16_LEAD(c); offsets[n++] = start; units[n] = U16_TRAIL(c); offsets[n++] = start; }
    }
    offsets[n] = length;
    UErrorCode status = U_ZERO_ERROR;
    ubrk_setText(it, units, n, &status);
    if (U_FAILURE(status)) return -1;
    int32_t count = 0;
    for (int32_t b = ubrk_next(it); b != UBRK_DONE; b = ubrk_next(it)) {
        if (count >= capacity) { count = -1; break; }
        out[count] = offsets[b];
        if (hard) hard[count] = ubrk_getRuleStatus(it) >= UBRK_LINE_HARD ? 1 : 0;
        count++;
    }
    // A very long text's copy is not kept for the thread's life (the iterator is given new
    // text before it reads again).
    if (buf->capacity > (1 << 20)) {
        free(buf->units); free(buf->offsets);
        buf->units = NULL; buf->offsets = NULL; buf->capacity = 0;
    }
    return count;
}

static int is_word_byte(uint8_t c) {
    uint8_t lower = c | 0x20;
    return (lower >= 'a' && lower <= 'z') || (c >= '0' && c <= '9') || c == '\'';
}
static int is_end_mark(uint8_t c) { return c == '.' || c == ',' || c == '!' || c == '?'; }

/// 2 when `b[i]` starts a two-byte letter of line-break class AL like an ASCII letter's
/// (`clb_is_plain_letter`); else 0.
static int two_byte_letter(const uint8_t *b, int32_t i, int32_t length) {
    if (i + 1 >= length || (b[i + 1] & 0xC0) != 0x80) return 0;
    uint32_t c = ((uint32_t)(b[i] & 0x1F) << 6) | (b[i + 1] & 0x3F);
    return clb_is_plain_letter(c) ? 2 : 0;
}

/// Line breaks of plain prose, without ICU: words of letters (ASCII, accented Latin, Cyrillic),
/// digits and apostrophes (AL, NU, QU: no break between them, LB19/LB23/LB28) separated by
/// spaces, with . , ! ? only at a word's end — after a word or another mark, before a space,
/// the end or another mark (IS, EX: no break before them, LB13). UAX #14 then breaks only after
/// each run of spaces (LB7: none before a space; LB18: one after) and at the end. -1 for any
/// other text (ICU decides), -2 when `capacity` is too small.
static int32_t prose_line_breaks(const uint8_t *b, int32_t length, int32_t *out, uint8_t *hard, int32_t capacity) {
    int32_t count = 0;
    for (int32_t i = 0; i < length; i++) {
        uint8_t c = b[i];
        if (is_word_byte(c)) continue;
        if (c >= 0xC3 && c <= 0xD1) {
            int n = two_byte_letter(b, i, length);
            if (n == 0) return -1;
            i += n - 1;
            continue;
        }
        if (c == ' ') {
            if (i + 1 < length && b[i + 1] != ' ') {
                if (count >= capacity) return -2;
                out[count] = i + 1;
                if (hard) hard[count] = 0;
                count++;
            }
            continue;
        }
        if (!is_end_mark(c) || i == 0 || b[i - 1] == ' ') return -1;
        if (i + 1 < length && b[i + 1] != ' ' && !is_end_mark(b[i + 1])) return -1;
    }
    if (count >= capacity) return -2;
    out[count] = length;
    if (hard) hard[count] = 0;
    return count + 1;
}

int32_t clb_line_breaks(const char *utf8, int32_t length, int32_t *out, uint8_t *hard, int32_t capacity) {
    if (length > 0) {
        int32_t n = prose_line_breaks((const uint8_t *)utf8, length, out, hard, capacity);
        if (n >= 0) return n;
        if (n == -2) return -1;
    }
    return breaks(UBRK_LINE, utf8, length, out, hard, capacity);
}

int32_t clb_line_breaks_icu(const char *utf8, int32_t length, int32_t *out, uint8_t *hard, int32_t capacity) {
    return breaks(UBRK_LINE, utf8, length, out, hard, capacity);
}

int32_t clb_grapheme_breaks(const char *utf8, int32_t length, int32_t *out, int32_t capacity) {
    return breaks(UBRK_CHARACTER, utf8, length, out, NULL, capacity);
}

int32_t clb_first_strong_direction(const char *utf8, int32_t length) {
    int32_t i = 0;
    while (i < length) {
        UChar32 c;
        U8_NEXT(utf8, i, length, c);
        if (c < 0) continue;
        switch (u_charDirection(c)) {
        case U_LEFT_TO_RIGHT: return 0;
        case U_RIGHT_TO_LEFT: case U_RIGHT_TO_LEFT_ARABIC: return 1;
        default: break;
        }
    }
    return -1;
}

int32_t clb_has_rtl(const char *utf8, int32_t length) {
    int32_t i = 0;
    while (i < length) {
        if ((unsigned char)utf8[i] < 0x80) { i++; continue; }
        UChar32 c;
        U8_NEXT(utf8, i, length, c);
        if (c < 0) continue;
        UCharDirection d = u_charDirection(c);
        if (d == U_RIGHT_TO_LEFT || d == U_RIGHT_TO_LEFT_ARABIC || d == U_ARABIC_NUMBER) return 1;
    }
    return 0;
}
