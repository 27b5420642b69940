#ifndef BUBBLEKIT_CGDKPIXBUF_SHIM_H
#define BUBBLEKIT_CGDKPIXBUF_SHIM_H
#include <gdk-pixbuf/gdk-pixbuf.h>
#endif
