/* Program of a Kiln firmware kit for a Linux target (`kiln export --kit`):
 * loads the .kiln artifact named on the command line (KILN_KIT_ARTIFACT
 * without one) with Kiln's runtime (libkiln_runtime.a, runtime.h), runs it
 * once on the local-sync device on the inputs of kit_buffers.c and prints
 * every output as kit.h describes. Build and run with the kit's Makefile.
 * Exit status 0 when the model ran, 1 with a "kiln-error" line otherwise. */
#include "kit.h"
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>

#define KILN_KIT_MAX_IO 64

static void *alignedBuffer(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

static void *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = n >= 0 ? alignedBuffer((size_t)n) : NULL;
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(data);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void printOutput(size_t k, const uint8_t *bytes, size_t count) {
  char line[129];
  kiln_kit_output_header(line, k, count);
  fputs(line, stdout);
  for (size_t at = 0; at < count; at += 64) {
    kiln_kit_hex(line, bytes + at, count - at < 64 ? count - at : 64);
    fputs(line, stdout);
  }
  fputc('\n', stdout);
}

static int fail(const char *what, const char *detail) {
  printf("kiln-error %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : KILN_KIT_ARTIFACT;
  size_t size = 0;
  void *artifact = readFile(path, &size);
  if (!artifact)
    return fail(path, "cannot read");
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_module_load(artifact, size, &module);
  if (status.code != KILN_OK)
    return fail(path, status.message);
  size_t numInputs = kiln_module_input_count(module);
  size_t numOutputs = kiln_module_output_count(module);
  if (numInputs != kiln_kit_num_inputs || numInputs > KILN_KIT_MAX_IO ||
      numOutputs > KILN_KIT_MAX_IO)
    return fail(path, "its inputs are not the ones kit_buffers.c holds");
  size_t inputSizes[KILN_KIT_MAX_IO], outputSizes[KILN_KIT_MAX_IO];
  void *outputs[KILN_KIT_MAX_IO];
  for (size_t i = 0; i < numInputs; ++i) {
    kiln_tensor_info_t info;
    kiln_module_input_info(module, i, &info);
    if (info.byte_size != kiln_kit_input_bytes[i])
      return fail(path, "an input's size differs from kit_buffers.c's");
    inputSizes[i] = info.byte_size;
  }
  for (size_t k = 0; k < numOutputs; ++k) {
    kiln_tensor_info_t info;
    kiln_module_output_info(module, k, &info);
    outputSizes[k] = info.byte_size;
    outputs[k] = alignedBuffer(info.byte_size);
  }
  size_t arenaBytes = kiln_module_arena_bytes(module);
  void *arena = alignedBuffer(arenaBytes);
  kiln_invocation_t invocation = {
      kiln_kit_inputs, inputSizes, numInputs, outputs, outputSizes, numOutputs,
      arena,           arenaBytes, NULL,      NULL,    NULL,        NULL};
  status = kiln_module_invoke(module, &invocation);
  if (status.code != KILN_OK)
    return fail(path, status.message);
  for (size_t k = 0; k < numOutputs; ++k)
    printOutput(k, (const uint8_t *)outputs[k], outputSizes[k]);
  puts("kiln-done");
  kiln_module_release(module);
  return 0;
}
