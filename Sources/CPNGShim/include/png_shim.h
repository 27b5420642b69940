#ifndef BUBBLEKIT_PNG_SHIM_H
#define BUBBLEKIT_PNG_SHIM_H
/* Placeholder; the PNG encoder helper fills this in. */
#endif
