// Status helpers. Internal to the runtime.
#ifndef KILN_RUNTIME_STATUS_H
#define KILN_RUNTIME_STATUS_H

#include "kiln/runtime.h"

namespace kiln::runtime {

/// Builds a status with a printf-formatted message (truncated to fit).
kiln_status_t makeStatus(kiln_status_code_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

} // namespace kiln::runtime

#endif
