/* Peak stack of one Kiln C module run on a Cortex-M board under QEMU, by
 * stack painting: scripts/bench_int8.py builds it with the cross tests'
 * startup code and linker script (tests/cross/cortexm, mps2-an386):
 *
 *   arm-none-eabi-gcc -O2 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard
 *     -mfpu=fpv4-sp-d16 -nostartfiles -T mps2_an386.ld -DKILN_MODULE=NAME
 *     -I DIR -I tests/cross/cortexm tests/cross/cortexm/startup.c
 *     cortexm_stack_main.c DIR/NAME.c DIR/NAME_constants.c DIR/NAME_kernels.o
 *     -lm -lc -lgcc
 *   qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none
 *     -semihosting-config enable=on,target=native -kernel prog.elf
 *
 * main fills the free RAM between the end of .bss and its own stack pointer
 * (less a 64-byte guard) with a pattern, calls NAME_run once on zeroed
 * inputs and a zeroed arena, then finds the lowest byte that no longer
 * holds the pattern. It prints "stack_bytes N": the bytes between main's
 * stack pointer at the call and that byte, i.e. everything NAME_run used
 * (the glue's and the kernels' frames, their run-time allocations, and any
 * C-library calls such as memcpy), in one line on semihosting's console.
 * The kernels' stack use does not depend on the input values (no
 * data-dependent recursion or allocation), so zeros measure the same peak.
 * A run that would write the pattern's own value would read as unused
 * (under-counting by at most that run of bytes); the pattern 0xA5 is not a
 * common value of the kernels' temporaries. Exit status 0 on success. */
#include "semihost.h"

#include <stddef.h>
#include <stdint.h>

#define KILN_CAT2(a, b) a##b
#define KILN_CAT(a, b) KILN_CAT2(a, b)
#define KILN_STR2(a) #a
#define KILN_STR(a) KILN_STR2(a)
#define M(suffix) KILN_CAT(KILN_MODULE, suffix)
#include KILN_STR(KILN_MODULE.h)

#ifndef KILN_POOL_BYTES
#define KILN_POOL_BYTES (1u << 20)
#endif
#define PATTERN 0xA5u
#define GUARD 64u

extern uint8_t end[]; /* first byte after .bss (mps2_an386.ld) */

static uint8_t pool[KILN_POOL_BYTES] __attribute__((aligned(64)));
static size_t poolUsed;

/* The pool is zeroed by the startup code's .bss clear. */
static void *take(size_t bytes) {
  size_t rounded = (bytes + 63u) / 64u * 64u;
  if (rounded > KILN_POOL_BYTES - poolUsed) {
    kiln_semihost_print("the static pool is too small\n");
    kiln_semihost_exit(0);
  }
  void *p = pool + poolUsed;
  poolUsed += rounded;
  return p;
}

static uintptr_t stackPointer(void) {
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

static void printNumber(const char *label, uint32_t value) {
  char text[48], digits[12];
  unsigned n = 0, k = 0;
  while (label[n])
    text[n] = label[n], ++n;
  do
    digits[k++] = (char)('0' + value % 10u);
  while ((value /= 10u) != 0);
  while (k)
    text[n++] = digits[--k];
  text[n++] = '\n';
  text[n] = 0;
  kiln_semihost_print(text);
}

int main(void) {
  const void *inputs[16];
  void *outputs[16];
  if (M(_num_inputs) > 16 || M(_num_outputs) > 16)
    return 1;
  for (unsigned i = 0; i < M(_num_inputs); ++i)
    inputs[i] = take(M(_input_bytes)[i]);
  for (unsigned i = 0; i < M(_num_outputs); ++i)
    outputs[i] = take(M(_output_bytes)[i]);
  void *arena = take(M(_arena_bytes));

  volatile uint8_t *low = end;
  uintptr_t top = stackPointer() - GUARD;
  for (volatile uint8_t *p = low; (uintptr_t)p < top; ++p)
    *p = PATTERN;
  uintptr_t callSp = stackPointer();
  if (M(_run)(inputs, outputs, arena) != 0)
    return 1;
  volatile uint8_t *p = low;
  while ((uintptr_t)p < top && *p == PATTERN)
    ++p;
  if (p == low) {
    kiln_semihost_print("the stack reached the end of .bss\n");
    return 1;
  }
  printNumber("stack_bytes ", (uint32_t)(callSp - (uintptr_t)p));
  return 0;
}
