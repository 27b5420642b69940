#include "clinebreak.h"
#include <pthread.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

static pthread_key_t line_key, char_key;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void close_iterator(void *it) { if (it) ubrk_close((UBreakIterator *)it); }
static void make_keys(void) {
    pthread_key_create(&line_key, close_iterator);
    pthread_key_create(&char_key, close_iterator);
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

static int32_t breaks(UBreakIteratorType type, const char *utf8, int32_t length,
                      int32_t *out, uint8_t *hard, int32_t capacity) {
    if (length <= 0) return 0;
    UBreakIterator *it = iterator(type);
    if (!it) return -1;
    UErrorCode status = U_ZERO_ERROR;
    UText text = UTEXT_INITIALIZER;
    utext_openUTF8(&text, utf8, length, &status);
    if (U_FAILURE(status)) return -1;
    ubrk_setUText(it, &text, &status);
    if (U_FAILURE(status)) { utext_close(&text); return -1; }
    int32_t count = 0;
    for (int32_t b = ubrk_next(it); b != UBRK_DONE; b = ubrk_next(it)) {
        if (count >= capacity) { count = -1; break; }
        out[count] = b;   // UTF-8 UText: native indexes are byte offsets
        if (hard) hard[count] = ubrk_getRuleStatus(it) >= UBRK_LINE_HARD ? 1 : 0;
        count++;
    }
    // The iterator keeps a shallow clone of `text`; it is reset by the next call before any use.
    utext_close(&text);
    return count;
}

int32_t clb_line_breaks(const char *utf8, int32_t length, int32_t *out, uint8_t *hard, int32_t capacity) {
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
