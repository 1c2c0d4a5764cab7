/* Minimal program embedding the Kiln runtime with the local-sync device:
 * load an artifact from memory, bind caller-owned buffers, invoke. Used by
 * scripts/runtime_size.sh to measure the runtime's code size. */
#include "kiln/runtime.h"

#include <stdio.h>

int main(int argc, char **argv) {
  static unsigned char artifact[1 << 20] __attribute__((aligned(64)));
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  size_t size = f ? fread(artifact, 1, sizeof(artifact), f) : 0;
  if (f)
    fclose(f);
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_module_load(artifact, size, &module);
  if (status.code != KILN_OK) {
    puts(status.message);
    return 1;
  }
  static float in[1 << 16], out[1 << 16];
  static unsigned char arena[1 << 20] __attribute__((aligned(64)));
  kiln_tensor_info_t info;
  kiln_module_input_info(module, 0, &info);
  size_t in_size = info.byte_size;
  kiln_module_output_info(module, 0, &info);
  size_t out_size = info.byte_size;
  const void *inputs[1] = {in};
  void *outputs[1] = {out};
  kiln_invocation_t invocation = {inputs, &in_size,      1,    outputs, &out_size, 1,
                                  arena,  sizeof(arena), NULL, NULL,    NULL,      NULL};
  status = kiln_module_invoke(module, &invocation);
  kiln_module_release(module);
  puts(status.message);
  return status.code;
}
