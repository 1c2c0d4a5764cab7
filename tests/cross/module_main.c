/* A program around one Kiln static C module, for the tests: reads each
 * input's raw bytes from a file, runs the model once, writes each output's
 * raw bytes to a file.
 *
 *   cc -DKILN_MODULE=NAME -I DIR module_main.c DIR/NAME.c DIR/NAME_constants.c
 *      DIR/NAME_kernels.o -lm
 *   ./a.out IN0.bin ... OUT0.bin ...
 *
 * Exit status 0 on success, 1 with a message on stderr otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KILN_CAT2(a, b) a##b
#define KILN_CAT(a, b) KILN_CAT2(a, b)
#define KILN_STR2(a) #a
#define KILN_STR(a) KILN_STR2(a)
#define M(suffix) KILN_CAT(KILN_MODULE, suffix)
#include KILN_STR(KILN_MODULE.h)

static void *alignedBuffer(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  return aligned_alloc(64, rounded ? rounded : 64);
}

int main(int argc, char **argv) {
  const size_t numInputs = M(_num_inputs), numOutputs = M(_num_outputs);
  if ((size_t)argc != 1 + numInputs + numOutputs) {
    fprintf(stderr, "usage: %s %zu input files, %zu output files\n", argv[0], numInputs,
            numOutputs);
    return 1;
  }
  const void *inputs[16];
  void *outputs[16];
  if (numInputs > 16 || numOutputs > 16)
    return 1;
  for (size_t i = 0; i < numInputs; ++i) {
    void *buffer = alignedBuffer(M(_input_bytes)[i]);
    FILE *f = fopen(argv[1 + i], "rb");
    if (!f || fread(buffer, 1, M(_input_bytes)[i], f) != M(_input_bytes)[i]) {
      fprintf(stderr, "%s: cannot read %zu bytes\n", argv[1 + i], M(_input_bytes)[i]);
      return 1;
    }
    fclose(f);
    inputs[i] = buffer;
  }
  for (size_t i = 0; i < numOutputs; ++i)
    outputs[i] = alignedBuffer(M(_output_bytes)[i]);
  void *arena = alignedBuffer(M(_arena_bytes));
  if (M(_run)(inputs, outputs, arena) != 0) {
    fprintf(stderr, "run failed\n");
    return 1;
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    FILE *f = fopen(argv[1 + numInputs + i], "wb");
    if (!f || fwrite(outputs[i], 1, M(_output_bytes)[i], f) != M(_output_bytes)[i] ||
        fclose(f) != 0) {
      fprintf(stderr, "%s: cannot write\n", argv[1 + numInputs + i]);
      return 1;
    }
  }
  return 0;
}
