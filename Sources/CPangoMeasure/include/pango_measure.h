#ifndef BUBBLEKIT_PANGO_MEASURE_H
#define BUBBLEKIT_PANGO_MEASURE_H
#include <pango/pango.h>

/* The font map BubbleText measures with: Pango's Cairo font map, whose fonts the renderer then
   draws, so a text measured is the text drawn. Only this file touches Cairo's font options;
   nothing of Cairo appears in its interface. */
PangoFontMap *bk_measuring_font_map_new(void);

/* A context of `map` that measures without hinting (metric hinting off, hint style none, grey
   antialiasing), at 72 dpi (1 pt = 1 unit), with unrounded glyph positions. */
PangoContext *bk_measuring_context_new(PangoFontMap *map);
#endif
