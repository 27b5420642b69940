// libxml2's push parser and SAX2 callbacks, for the SMS Backup & Restore importer.
#include <libxml/xmlversion.h>
// libxml2's headers would pull in the system ICU, which clashes with Foundation's own copy.
// Only struct xmlCharEncodingHandler changes without it, which BubbleKit never touches.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
