#include "pango_measure.h"
#include <pango/pangocairo.h>

PangoFontMap *bk_measuring_font_map_new(void) {
    return pango_cairo_font_map_new();
}

PangoContext *bk_measuring_context_new(PangoFontMap *map) {
    PangoContext *context = pango_font_map_create_context(map);
    cairo_font_options_t *options = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
    pango_cairo_context_set_font_options(context, options); /* copies */
    cairo_font_options_destroy(options);
    pango_cairo_context_set_resolution(context, 72);
    pango_context_set_round_glyph_positions(context, 0);
    return context;
}
