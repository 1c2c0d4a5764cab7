/* The Cortex-M twin of ../module_main.c: runs one Kiln static C module under
 * QEMU (mps2-an386) and moves I/O through semihosting files in QEMU's
 * working directory: input_K.bin are read, output_K.bin written.
 *
 *   arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard
 *     -mfpu=fpv4-sp-d16 -nostartfiles -T mps2_an386.ld -DKILN_MODULE=NAME
 *     -I DIR startup.c module_main.c DIR/NAME.c DIR/NAME_constants.c
 *     DIR/NAME_kernels.o -lm -lc -lgcc */
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
#define KILN_POOL_BYTES (3u << 20)
#endif

/* Arena and I/O buffers come from one static pool (no heap on the board). */
static uint8_t pool[KILN_POOL_BYTES] __attribute__((aligned(64)));
static size_t poolUsed;

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

static void fileName(char *out, const char *prefix, unsigned index) {
  while (*prefix)
    *out++ = *prefix++;
  if (index >= 10)
    *out++ = (char)('0' + index / 10);
  *out++ = (char)('0' + index % 10);
  const char *suffix = ".bin";
  while (*suffix)
    *out++ = *suffix++;
  *out = 0;
}

static size_t length(const char *s) {
  size_t n = 0;
  while (s[n])
    ++n;
  return n;
}

/* SYS_OPEN (0x01) modes: 1 = "rb", 5 = "wb". */
static intptr_t openFile(const char *name, int mode) {
  intptr_t block[3] = {(intptr_t)name, mode, (intptr_t)length(name)};
  return kiln_semihost(0x01, block);
}

int main(void) {
  const void *inputs[16];
  void *outputs[16];
  char name[32];
  if (M(_num_inputs) > 16 || M(_num_outputs) > 16)
    return 1;
  for (unsigned i = 0; i < M(_num_inputs); ++i) {
    void *buffer = take(M(_input_bytes)[i]);
    fileName(name, "input_", i);
    intptr_t fd = openFile(name, 1);
    intptr_t block[3] = {fd, (intptr_t)buffer, (intptr_t)M(_input_bytes)[i]};
    /* SYS_READ (0x06) returns the bytes NOT read. */
    if (fd < 0 || kiln_semihost(0x06, block) != 0) {
      kiln_semihost_print("cannot read an input file\n");
      return 1;
    }
    kiln_semihost(0x02, &fd);
    inputs[i] = buffer;
  }
  for (unsigned i = 0; i < M(_num_outputs); ++i)
    outputs[i] = take(M(_output_bytes)[i]);
  void *arena = take(M(_arena_bytes));
  if (M(_run)(inputs, outputs, arena) != 0)
    return 1;
  for (unsigned i = 0; i < M(_num_outputs); ++i) {
    fileName(name, "output_", i);
    intptr_t fd = openFile(name, 5);
    intptr_t block[3] = {fd, (intptr_t)outputs[i], (intptr_t)M(_output_bytes)[i]};
    /* SYS_WRITE (0x05) returns the bytes NOT written. */
    if (fd < 0 || kiln_semihost(0x05, block) != 0) {
      kiln_semihost_print("cannot write an output file\n");
      return 1;
    }
    kiln_semihost(0x02, &fd);
  }
  return 0;
}
