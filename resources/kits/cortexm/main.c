/* Firmware of a Kiln Cortex-M firmware kit (`kiln export --kit`): runs the
 * static C module KILN_MODULE once on the inputs of kit_buffers.c and
 * prints every output over semihosting as kit.h describes. Build and run
 * with the kit's Makefile (`make run`: QEMU's board for the core). Exit
 * status (semihosting SYS_EXIT): 0 when the model ran, 1 otherwise, with a
 * "kiln-error" line saying why. */
#include "kit.h"
#include "semihost.h"

#define KILN_CAT2(a, b) a##b
#define KILN_CAT(a, b) KILN_CAT2(a, b)
#define KILN_STR2(a) #a
#define KILN_STR(a) KILN_STR2(a)
#define M(suffix) KILN_CAT(KILN_MODULE, suffix)
#include KILN_STR(KILN_MODULE.h)

/* Bytes printed per semihosting call. */
#define KILN_KIT_CHUNK 64u

static void printOutput(size_t k, const uint8_t *bytes, size_t count) {
  char line[2 * KILN_KIT_CHUNK + 1];
  kiln_kit_output_header(line, k, count);
  kiln_semihost_print(line);
  for (size_t at = 0; at < count; at += KILN_KIT_CHUNK) {
    size_t n = count - at < KILN_KIT_CHUNK ? count - at : KILN_KIT_CHUNK;
    kiln_kit_hex(line, bytes + at, n);
    kiln_semihost_print(line);
  }
  kiln_semihost_print("\n");
}

int main(void) {
  if (M(_num_inputs) != kiln_kit_num_inputs) {
    kiln_semihost_print("kiln-error kit_buffers.c does not match the module's inputs\n");
    return 1;
  }
  for (size_t i = 0; i < kiln_kit_num_inputs; ++i)
    if (M(_input_bytes)[i] != kiln_kit_input_bytes[i]) {
      kiln_semihost_print("kiln-error kit_buffers.c does not match the module's input sizes\n");
      return 1;
    }
  if (M(_run)(kiln_kit_inputs, kiln_kit_outputs, kiln_kit_arena) != 0) {
    kiln_semihost_print("kiln-error " KILN_STR(KILN_MODULE) "_run failed\n");
    return 1;
  }
  for (size_t k = 0; k < M(_num_outputs); ++k)
    printOutput(k, (const uint8_t *)kiln_kit_outputs[k], M(_output_bytes)[k]);
  kiln_semihost_print("kiln-done\n");
  return 0;
}
