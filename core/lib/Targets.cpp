//===- Targets.cpp - The device target table's look-ups -------------------===//
//
// kiln/Targets.h holds the table; these functions read it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Targets.h"

#include "Support/Message.h"

#include "llvm/TargetParser/Triple.h"

namespace kiln {

const DeviceTarget *findDeviceTarget(llvm::StringRef name) {
  for (const DeviceTarget &t : kDeviceTargets)
    if (name == t.name)
      return &t;
  return nullptr;
}

const DeviceTarget *deviceTargetOfTriple(llvm::StringRef triple) {
  const std::string normalized = llvm::Triple::normalize(triple);
  for (const DeviceTarget &t : kDeviceTargets)
    if (*t.triple && normalized == llvm::Triple::normalize(t.triple))
      return &t;
  return nullptr;
}

std::vector<std::string> knownTargets() {
  std::vector<std::string> names;
  for (const DeviceTarget &t : kDeviceTargets)
    names.push_back(t.name);
  return names;
}

std::string targetDisplayName(const std::string &name) {
  const DeviceTarget *t = findDeviceTarget(name);
  return t ? t->displayName : "";
}

llvm::Error applyTarget(const std::string &name, TargetOptions &target) {
  const DeviceTarget *row = findDeviceTarget(name);
  if (!row) {
    std::string known;
    for (const std::string &k : knownTargets())
      known += (known.empty() ? "" : ", ") + k;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--target='" + quoteInput(name) +
                                       "' is not a supported target (" + known + ")");
  }
  const bool keepCpu = !target.cpu.empty() && target.cpu != "generic";
  target.triple = row->triple;
  if (!keepCpu)
    target.cpu = row->cpu;
  if (target.features.empty())
    target.features = row->features;
  target.abi = row->abi;
  return llvm::Error::success();
}

bool isBareMetalTriple(const std::string &triple) {
  llvm::Triple t(llvm::Triple::normalize(triple));
  return !triple.empty() && t.getOS() == llvm::Triple::UnknownOS;
}

} // namespace kiln
