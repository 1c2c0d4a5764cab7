/* An entry point that does nothing, for measuring the runtime's per-command
 * overhead (tests/bench/RuntimeOverheadBench.cpp). */
#include <stdint.h>

void empty_dispatch(void **bindings, const uint32_t *workgroup_id) {
  (void)bindings;
  (void)workgroup_id;
}
