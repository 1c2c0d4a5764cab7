/* Semihosting for the Cortex-M firmware kits and tests (see startup.c). */
#ifndef KILN_KIT_SEMIHOST_H
#define KILN_KIT_SEMIHOST_H

#include <stdint.h>

/* One semihosting call: `operation` (SYS_*), `argument` its block. */
intptr_t kiln_semihost(int operation, const void *argument);
/* Ends the QEMU run: exit status 0 if `success`, else 1. */
void kiln_semihost_exit(int success);
/* Writes a NUL-terminated string to QEMU's standard output. */
void kiln_semihost_print(const char *text);

#endif
