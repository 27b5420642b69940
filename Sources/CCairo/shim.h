#ifndef BUBBLEKIT_CCAIRO_SHIM_H
#define BUBBLEKIT_CCAIRO_SHIM_H
#include <cairo.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo-ft.h>
#include <pango/pangocairo.h>
#include <fontconfig/fontconfig.h>
#endif
