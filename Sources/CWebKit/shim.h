#ifndef CWebKit_SHIM_H
#define CWebKit_SHIM_H
#include <webkit2/webkit2.h>
#endif
