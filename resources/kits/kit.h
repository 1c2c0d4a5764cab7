/* What a Kiln firmware kit's main.c and its generated kit_buffers.c share
 * (`kiln export --kit`; resources/kits/kit.h in Kiln's sources).
 *
 * kit_buffers.c holds the model's inputs as C arrays: the bytes of the
 * .npy files given with --kit-input, else a deterministic pattern (element
 * i of every input is v = (37 i + 11) mod 256 - 128 for signed integer
 * types, v + 128 for unsigned ones, i mod 2 for bool and v / 128 for f32
 * and f64; kiln::kitPatternInputs), and, on
 * Cortex-M, the output buffers and the arena. All are aligned to 64 bytes,
 * as the C module and the runtime ask.
 *
 * main.c prints every output as one line on standard output (over
 * semihosting on Cortex-M), then a last line "kiln-done":
 *   kiln-output K BYTES HEX
 * K is the output's index in signature order, BYTES its size and HEX its
 * bytes in memory order (little-endian), two lowercase hex digits each, so
 * a comparison with the host is bit-exact. `kiln validate --on-target`
 * reads these lines. */
#ifndef KILN_KIT_H
#define KILN_KIT_H

#include <stddef.h>
#include <stdint.h>

/* The inputs, in signature order, and their bytes. */
extern const size_t kiln_kit_num_inputs;
extern const void *const kiln_kit_inputs[];
extern const size_t kiln_kit_input_bytes[];

/* Cortex-M kits only: one buffer per output, and the arena. */
extern void *const kiln_kit_outputs[];
extern uint8_t kiln_kit_arena[];

/* Writes "kiln-output K BYTES " into `out` (room for 64 characters, NUL
 * included); returns its length. */
static inline size_t kiln_kit_output_header(char *out, size_t k, size_t bytes) {
  static const char prefix[] = "kiln-output ";
  size_t n = 0;
  for (const char *p = prefix; *p; ++p)
    out[n++] = *p;
  size_t numbers[2] = {k, bytes};
  for (int j = 0; j < 2; ++j) {
    char digits[24];
    size_t d = 0, v = numbers[j];
    do {
      digits[d++] = (char)('0' + v % 10);
      v /= 10;
    } while (v);
    while (d)
      out[n++] = digits[--d];
    out[n++] = ' ';
  }
  out[n] = 0;
  return n;
}

/* Writes the `count` bytes at `bytes` as 2 x count hex digits and a NUL
 * into `out`. */
static inline void kiln_kit_hex(char *out, const uint8_t *bytes, size_t count) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < count; ++i) {
    out[2 * i] = hex[bytes[i] >> 4];
    out[2 * i + 1] = hex[bytes[i] & 15];
  }
  out[2 * count] = 0;
}

#endif
