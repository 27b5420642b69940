#ifndef BUBBLEKIT_CPANGO_SHIM_H
#define BUBBLEKIT_CPANGO_SHIM_H
/* Pango, HarfBuzz and fontconfig for measuring text: no Cairo here (BubbleText's boundary). */
#include <pango/pango.h>
#include <hb-ot.h>
#include <fontconfig/fontconfig.h>
#endif
