#ifndef CGtk_SHIM_H
#define CGtk_SHIM_H
#include <gtk/gtk.h>
#endif
