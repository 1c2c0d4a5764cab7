/* Loads a 32-bit word from an address that is not a multiple of 4. On a
 * Cortex-M0+ (ARMv6-M) that faults; startup.c makes mps2-an385's
 * Cortex-M3 fault on it too for ARMv6-M builds (CCR.UNALIGN_TRP). The
 * fault handler prints "fault" and exits with status 1; reaching the end
 * prints "unaligned load done" and exits with status 0. */
#include "semihost.h"

#include <stdint.h>

static uint8_t bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};

int main(void) {
  const uint8_t *p = bytes + 1;
  uint32_t word;
  /* An explicit LDR: C would let the compiler split the access. */
  __asm__ volatile("ldr %0, [%1]" : "=r"(word) : "r"(p) : "memory");
  kiln_semihost_print(word == 0x05040302u ? "unaligned load done\n"
                                          : "unaligned load read other bytes\n");
  return 0;
}
