// Internal helpers of the artifact gate (artifact.cc) that module.cc shares.
#ifndef KILN_RUNTIME_ARTIFACT_H
#define KILN_RUNTIME_ARTIFACT_H

#include "kiln/runtime.h"
#include "kiln_artifact_generated.h"

namespace kiln::runtime {

/// Bytes of the tensor `desc` describes: element size x every dimension,
/// overflow-checked. False for an unknown element type, a rank above
/// KILN_MAX_RANK, a negative dimension or more than kMaxObjectBytes.
bool tensorByteSize(const kiln::artifact::TensorDesc *desc, size_t *out);

} // namespace kiln::runtime

#endif
