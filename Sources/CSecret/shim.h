#ifndef CSecret_SHIM_H
#define CSecret_SHIM_H
#include <libsecret/secret.h>
#endif
