/* A program around Kiln's runtime, for the cross-target tests (built for
 * aarch64 with gcc-aarch64-linux-gnu and run under qemu-aarch64): loads a
 * .kiln artifact, reads each input's raw bytes from a file, invokes once on
 * the local-sync device, writes each output's raw bytes to a file.
 *
 *   ./kiln-run-raw MODEL.kiln IN0.bin ... OUT0.bin ...
 *
 * Exit status 0 on success, 1 with the runtime's message otherwise. */
#include "kiln/runtime.h"

#include <stdio.h>
#include <stdlib.h>

static void *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = aligned_alloc(64, ((size_t)n + 63) / 64 * 64 + 64);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.kiln IN... OUT...\n", argv[0]);
    return 1;
  }
  size_t size = 0;
  void *artifact = readFile(argv[1], &size);
  if (!artifact) {
    fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_module_load(artifact, size, &module);
  if (status.code != KILN_OK) {
    fprintf(stderr, "%s\n", status.message);
    return 1;
  }
  size_t numInputs = kiln_module_input_count(module);
  size_t numOutputs = kiln_module_output_count(module);
  if ((size_t)argc != 2 + numInputs + numOutputs || numInputs > 16 || numOutputs > 16) {
    fprintf(stderr, "the model takes %zu inputs and %zu outputs\n", numInputs, numOutputs);
    return 1;
  }
  const void *inputs[16];
  void *outputs[16];
  size_t inputSizes[16], outputSizes[16];
  for (size_t i = 0; i < numInputs; ++i) {
    kiln_tensor_info_t info;
    kiln_module_input_info(module, i, &info);
    size_t got = 0;
    inputs[i] = readFile(argv[2 + i], &got);
    if (!inputs[i] || got != info.byte_size) {
      fprintf(stderr, "%s: expected %zu bytes\n", argv[2 + i], info.byte_size);
      return 1;
    }
    inputSizes[i] = got;
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    kiln_tensor_info_t info;
    kiln_module_output_info(module, i, &info);
    outputSizes[i] = info.byte_size;
    outputs[i] = aligned_alloc(64, (info.byte_size + 63) / 64 * 64 + 64);
  }
  size_t arenaBytes = kiln_module_arena_bytes(module);
  void *arena = aligned_alloc(64, (arenaBytes + 63) / 64 * 64 + 64);
  kiln_invocation_t invocation = {inputs, inputSizes, numInputs, outputs, outputSizes, numOutputs,
                                  arena,  arenaBytes, NULL,      NULL,    NULL,        NULL};
  status = kiln_module_invoke(module, &invocation);
  if (status.code != KILN_OK) {
    fprintf(stderr, "%s\n", status.message);
    return 1;
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    FILE *f = fopen(argv[2 + numInputs + i], "wb");
    if (!f || fwrite(outputs[i], 1, outputSizes[i], f) != outputSizes[i] || fclose(f) != 0) {
      fprintf(stderr, "%s: cannot write\n", argv[2 + numInputs + i]);
      return 1;
    }
  }
  kiln_module_release(module);
  return 0;
}
