// ICU's UAX #14 line breaker and bidi character classes behind a tiny C API for BubbleKit's
// FastTextEngine. Text is UTF-8; every offset is a UTF-8 byte offset. Break iterators are
// opened once per thread and reused (ubrk_setUText), so a call costs no allocation.
#ifndef CLINEBREAK_H
#define CLINEBREAK_H
#include <stdint.h>

/// Line-break opportunities of `utf8[0..<length]` (UAX #14, ICU's root-locale rules): writes
/// the byte offset after each segment (the last one is `length`) to `breaks`, and 1 to `hard`
/// where the break is mandatory (after \n, U+2028, U+2029…), else 0. Returns how many were
/// written, at most `capacity`; -1 when ICU fails or `capacity` is too small.
/// Plain prose (words of ASCII, accented Latin or Cyrillic letters, spaces, . , ! ? at words'
/// ends) is broken without ICU, by the same rules.
int32_t clb_line_breaks(const char *utf8, int32_t length, int32_t *breaks, uint8_t *hard, int32_t capacity);

/// `clb_line_breaks` always through ICU (what the prose shortcut is tested against).
int32_t clb_line_breaks_icu(const char *utf8, int32_t length, int32_t *breaks, uint8_t *hard, int32_t capacity);

/// Grapheme-cluster boundaries (UAX #29) after offset 0, like `clb_line_breaks`.
int32_t clb_grapheme_breaks(const char *utf8, int32_t length, int32_t *breaks, int32_t capacity);

/// Direction of the first strong character (UAX #9 P2–P3, ICU's bidi classes): 0 left to
/// right, 1 right to left, -1 none.
int32_t clb_first_strong_direction(const char *utf8, int32_t length);

/// 1 when `utf8` holds a character of bidi class R, AL or AN (text that may need reordering).
int32_t clb_has_rtl(const char *utf8, int32_t length);

/// 1 for the letters both the line-break shortcut and the text engine's letter check answer
/// without ICU or a property look-up: accented Latin (U+00C0–U+024F but × and ÷) and basic
/// Cyrillic (U+0400–U+045F) — alphabetic, and of line-break class AL like an ASCII letter.
static inline int clb_is_plain_letter(uint32_t c) {
    return (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) || (c >= 0x400 && c <= 0x45F);
}

/// A hint that the 192 bytes at `p` will be read soon (a prepared text's header and first
/// segments): the cache lines are requested now, without waiting for them.
static inline void clb_prefetch(const void *p) {
    __builtin_prefetch(p);
    __builtin_prefetch((const char *)p + 64);
    __builtin_prefetch((const char *)p + 128);
}

/// A hint that the 128 bytes at `p` (two cache lines) will be read soon.
static inline void clb_prefetch_pair(const void *p) {
    __builtin_prefetch(p);
    __builtin_prefetch((const char *)p + 64);
}

#endif
