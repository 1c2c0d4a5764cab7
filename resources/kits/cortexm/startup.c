/* Reset code and semihosting for Kiln's Cortex-M firmware kits (`kiln
 * export --kit`) and the Cortex-M tests, under QEMU (mps2-an386 for
 * thumbv7em, mps2-an385 for thumbv6m; -semihosting) or on a real part with
 * a debugger that serves semihosting. The vector table holds the initial
 * stack pointer and the reset handler; faults end the run with a failing
 * exit. The reset handler copies .data from its load address in flash
 * (firmware.ld: __data_load__) to RAM, clears .bss and calls main().
 * Semihosting calls follow ARM's "Semihosting for AArch32 and AArch64"
 * specification (operation in r0, argument block in r1, BKPT 0xAB on
 * M-profile). */
#include "semihost.h"

#include <stdint.h>
#include <string.h>

extern uint32_t __stack_top;
extern uint32_t __bss_start__, __bss_end__;
extern uint32_t __data_start__, __data_end__, __data_load__;
int main(void);

intptr_t kiln_semihost(int operation, const void *argument) {
  register intptr_t r0 __asm__("r0") = operation;
  register const void *r1 __asm__("r1") = argument;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void kiln_semihost_exit(int success) {
  /* SYS_EXIT (0x18) on AArch32 takes the reason code itself:
   * ADP_Stopped_ApplicationExit (0x20026) exits QEMU with status 0,
   * ADP_Stopped_RunTimeErrorUnknown (0x20023) with status 1. */
  kiln_semihost(0x18, (const void *)(uintptr_t)(success ? 0x20026 : 0x20023));
  for (;;) {
  }
}

void kiln_semihost_print(const char *text) { kiln_semihost(0x04, text); }

static void kiln_fault_handler(void) {
  kiln_semihost_print("fault\n");
  kiln_semihost_exit(0);
}

void kiln_reset_handler(void) {
#if defined(__ARM_FP)
  /* Give the FPU full access (CPACR CP10/CP11) before any float code. */
  volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
  *cpacr |= 0xFu << 20;
  __asm__ volatile("dsb\n isb" ::: "memory");
#endif
#if __ARM_ARCH == 6
  /* An ARMv6-M program (thumbv6m) runs on mps2-an385's Cortex-M3, which
   * would do unaligned word and halfword accesses that a Cortex-M0+ faults
   * on: CCR.UNALIGN_TRP (bit 3) makes the M3 fault on them too. (On an
   * ARMv6-M core the bit reads as one and ignores writes.) */
  volatile uint32_t *ccr = (volatile uint32_t *)0xE000ED14u;
  *ccr |= 1u << 3;
  __asm__ volatile("dsb\n isb" ::: "memory");
#endif
  if (&__data_load__ != &__data_start__)
    memcpy(&__data_start__, &__data_load__,
           (size_t)((char *)&__data_end__ - (char *)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((char *)&__bss_end__ - (char *)&__bss_start__));
  kiln_semihost_exit(main() == 0);
}

__attribute__((section(".vectors"), used)) static const void *const kiln_vectors[16] = {
    &__stack_top,
    kiln_reset_handler,
    kiln_fault_handler,
    kiln_fault_handler,
    kiln_fault_handler,
    kiln_fault_handler,
    kiln_fault_handler,
    0,
    0,
    0,
    0,
    kiln_fault_handler,
    kiln_fault_handler,
    0,
    kiln_fault_handler,
    kiln_fault_handler};
