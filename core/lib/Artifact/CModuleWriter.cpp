//===- CModuleWriter.cpp - Static C module output -------------------------===//
//
// Layout of the generated module (NAME = the module name):
//
//   NAME.h            sizes as macros (NAME_ARENA_BYTES, NAME_INPUTi_BYTES...),
//                     the I/O tables and `int NAME_run(inputs, outputs, arena)`
//   NAME.c            NAME_run: one block per command, in schedule order,
//                     binding pointers computed from fixed offsets; dispatches
//                     loop over their workgroup grid (x innermost); copies and
//                     fills are memcpy/memset-like loops; barriers are comments
//                     (a single thread runs the waves in order)
//   NAME_constants.c  const uint8_t NAME_constants[] (64-byte aligned slots)
//   NAME_kernels.o    the kernels, `void NAME_<entry>(void **bindings,
//                     const uint32_t *workgroup_id)` (same ABI as the .kiln
//                     executables)
//
//===----------------------------------------------------------------------===//
#include "Artifact/CModuleWriter.h"

#include "kiln/Plan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

namespace kiln {

bool isCIdentifier(const std::string &name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
      name.rfind("__", 0) == 0)
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

bool isReservedModuleName(const std::string &name) {
  // C keywords (C17 + C23) and C standard header names: NAME.h must not
  // shadow <stdint.h> and friends on the include path.
  static const char *const reserved[] = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
      "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
      "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
      "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true",
      "false", "nullptr", "alignas", "alignof", "constexpr", "static_assert",
      "thread_local", "typeof", "assert", "complex", "ctype", "errno", "fenv", "inttypes",
      "iso646", "limits", "locale", "math", "setjmp", "signal", "stdalign", "stdarg",
      "stdatomic", "stdbool", "stddef", "stdint", "stdio", "stdlib", "stdnoreturn",
      "string", "tgmath", "threads", "time", "uchar", "wchar", "wctype", "stdckdint",
      "stdbit", "main"};
  for (const char *r : reserved)
    if (name == r)
      return true;
  return false;
}

std::string moduleNameProblem(const std::string &name) {
  if (!isCIdentifier(name))
    return "is not a C identifier (letters, digits and _, not starting with a digit or __)";
  if (isReservedModuleName(name))
    return "is a C keyword or standard header name (" + name + ".h would clash); choose another";
  if (name.size() > kMaxModuleNameLength)
    return "is " + std::to_string(name.size()) + " characters; at most " +
           std::to_string(kMaxModuleNameLength);
  return "";
}

namespace {

/// Where the constants lie in NAME_constants: each one's byte offset
/// (declaration order, each 64-byte aligned) and the bytes of the array.
struct ConstantLayout {
  std::vector<uint64_t> offsets;
  uint64_t bytes = 0;
};

ConstantLayout layOutConstants(const ArtifactSpec &spec) {
  ConstantLayout layout;
  for (const ConstantSpec &c : spec.constants) {
    layout.bytes = (layout.bytes + 63) / 64 * 64;
    layout.offsets.push_back(layout.bytes);
    layout.bytes += c.data.size();
  }
  return layout;
}

} // namespace

uint64_t cModuleConstantBytes(const ArtifactSpec &spec) { return layOutConstants(spec).bytes; }

std::string moduleNameFromPath(const std::string &path) {
  std::string stem = llvm::sys::path::stem(path).str();
  std::string name;
  for (char c : stem)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "m_" + name;
  while (name.rfind("__", 0) == 0)
    name.erase(0, 1);
  if (isReservedModuleName(name))
    name += "_model";
  if (name.size() > kMaxModuleNameLength)
    name.resize(kMaxModuleNameLength);
  return name;
}

static const char *typeName(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32: return "f32";
  case ElementKind::F16: return "f16";
  case ElementKind::I32: return "i32";
  case ElementKind::I64: return "i64";
  case ElementKind::I8: return "i8";
  case ElementKind::U8: return "u8";
  case ElementKind::I1: return "i1";
  }
  return "?";
}

static int64_t tensorBytes(const TensorSpec &t) {
  int64_t n = static_cast<int64_t>(elementSize(t.type));
  for (int64_t d : t.shape)
    n *= d;
  return n;
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

/// Text safe inside a C block comment.
static std::string commentSafe(std::string text) {
  for (size_t p; (p = text.find("*/")) != std::string::npos;)
    text.replace(p, 2, "* /");
  return text;
}

static std::vector<uint8_t> bytesOf(const std::string &text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

namespace {

/// What the phases of writeCModule share: the inputs, the upper-case
/// macro prefix, the banner every file starts with and the constant slots.
struct CModule {
  const ArtifactSpec &spec;
  const CompilationPlan *plan;
  const std::string &name;
  /// `name` upper-cased, the prefix of the macros and the include guard.
  std::string NAME;
  /// "/* Generated by ... Do not edit. */\n".
  std::string banner;
  ConstantLayout constants;
};

/// The comment heading every file: producer, source model, target triple
/// and CPU of the first executable ("?" without one).
std::string bannerOf(const ArtifactSpec &spec) {
  return "/* Generated by " + commentSafe(spec.producer) + " from " + commentSafe(spec.source) +
         " for " +
         commentSafe(spec.executables.empty()
                         ? std::string("?")
                         : spec.executables[0].triple + " (" + spec.executables[0].cpu + ")") +
         ". Do not edit. */\n";
}

/// `v` as a C float literal that reads back as the same float ("%.9g"
/// gives every float32 exactly).
static std::string floatLiteral(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
  std::string s = text;
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s + "f";
}

/// The quantization macros of tensor `prefix` ("NAME_INPUT0"): none for a
/// float tensor; per tensor PREFIX_SCALE and PREFIX_ZERO_POINT; per channel
/// PREFIX_QUANTIZED_DIMENSION, PREFIX_QUANTIZATION_COUNT and the lists
/// PREFIX_SCALES and PREFIX_ZERO_POINTS as brace initializers (TFLite's
/// QuantizationParameters; real = scale * (q - zero_point)).
static void writeQuantizationMacros(llvm::raw_ostream &os, const std::string &prefix,
                                    const IOQuantization &q) {
  if (!q.quantized())
    return;
  if (q.dimension < 0) {
    os << "#define " << prefix << "_SCALE " << floatLiteral(q.scales[0]) << "\n"
       << "#define " << prefix << "_ZERO_POINT (" << q.zeroPoints[0] << ")\n";
    return;
  }
  os << "#define " << prefix << "_QUANTIZED_DIMENSION " << q.dimension << "\n"
     << "#define " << prefix << "_QUANTIZATION_COUNT " << q.scales.size() << "u\n"
     << "#define " << prefix << "_SCALES {";
  for (size_t c = 0; c < q.scales.size(); ++c)
    os << (c ? ", " : "") << floatLiteral(q.scales[c]);
  os << "}\n#define " << prefix << "_ZERO_POINTS {";
  for (size_t c = 0; c < q.zeroPoints.size(); ++c)
    os << (c ? ", " : "") << q.zeroPoints[c];
  os << "}\n";
}

/// NAME.h: the size macros (arena, alignment, constants, I/O counts, each
/// input's and output's bytes and quantization), their constant twins, the
/// constants array and NAME_run's declaration.
std::string writeHeader(const CModule &m) {
  const ArtifactSpec &spec = m.spec;
  const std::string &name = m.name, &NAME = m.NAME;
  std::string header;
  llvm::raw_string_ostream os(header);
  os << m.banner << "#ifndef " << NAME << "_H_\n#define " << NAME << "_H_\n\n"
     << "#include <stddef.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* Scratch memory " << name << "_run needs, bytes; the caller owns it. */\n"
     << "#define " << NAME << "_ARENA_BYTES " << spec.arenaBytes << "u\n"
     << "/* Required alignment of the arena and of every I/O buffer. */\n"
     << "#define " << NAME << "_ALIGNMENT 64u\n"
     << "/* Bytes of the weights (" << name << "_constants.c). */\n"
     << "#define " << NAME << "_CONSTANTS_BYTES " << m.constants.bytes << "u\n"
     << "#define " << NAME << "_NUM_INPUTS " << spec.inputs.size() << "u\n"
     << "#define " << NAME << "_NUM_OUTPUTS " << spec.outputs.size() << "u\n\n";
  bool quantized = false;
  auto tensorMacros = [&](const char *kind, const char *KIND, const std::vector<TensorSpec> &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      std::string prefix = NAME + "_" + KIND + std::to_string(i);
      os << "/* " << kind << " " << i << ": \"" << commentSafe(list[i].name) << "\", "
         << typeName(list[i].type) << ", " << shapeText(list[i].shape) << ". */\n#define " << prefix
         << "_BYTES " << tensorBytes(list[i]) << "u\n";
      writeQuantizationMacros(os, prefix, list[i].quantization);
      quantized = quantized || list[i].quantization.quantized();
    }
  };
  tensorMacros("Input", "INPUT", spec.inputs);
  tensorMacros("Output", "OUTPUT", spec.outputs);
  if (quantized)
    os << "/* Quantized tensors (_SCALE, _ZERO_POINT; per channel _SCALES,\n"
       << " * _ZERO_POINTS along _QUANTIZED_DIMENSION), as TFLite's input\n"
       << " * details give them: real = scale * (q - zero_point). */\n";
  os << "\n/* The macros above as constants, for code generic over modules. */\n"
     << "extern const size_t " << name << "_arena_bytes;\n"
     << "extern const size_t " << name << "_num_inputs;\n"
     << "extern const size_t " << name << "_num_outputs;\n"
     << "/* Bytes of each input and output, in signature order. */\n"
     << "extern const size_t " << name << "_input_bytes[];\n"
     << "extern const size_t " << name << "_output_bytes[];\n\n"
     << "/* The weights, read in place (defined in " << name << "_constants.c). */\n"
     << "extern const uint8_t " << name << "_constants[];\n\n"
     << "/* Runs the model once on the calling thread.\n"
     << " *   inputs[i]:  " << NAME << "_INPUTi_BYTES bytes, read only\n"
     << " *   outputs[i]: " << NAME << "_OUTPUTi_BYTES bytes, written\n"
     << " *   arena:      " << NAME << "_ARENA_BYTES bytes of scratch\n"
     << " * all aligned to " << NAME << "_ALIGNMENT. No allocation, no global\n";
  if (spec.state.empty())
    os << " * state; the arena may be reused between calls. Returns 0. */\n";
  else
    os << " * state: the model's " << spec.state.size()
       << " state variable(s) live in arena bytes\n"
       << " * [0, " << NAME << "_PERSISTENT_BYTES), which must hold " << name
       << "_reset_state's values\n"
       << " * before the first call and are carried from each call to the next\n"
       << " * (the rest of the arena is scratch). Returns 0. */\n";
  os << "int " << name << "_run(const void *const *inputs, void *const *outputs,\n"
     << "    void *arena);\n\n";
  if (!spec.state.empty())
    os << "/* Bytes [0, " << NAME << "_PERSISTENT_BYTES) of the arena: the state variables. */\n"
       << "#define " << NAME << "_PERSISTENT_BYTES " << spec.persistentBytes << "u\n"
       << "/* Writes every state variable's initial value into `arena`: call it\n"
       << " * once before the first " << name << "_run and again to start over. */\n"
       << "void " << name << "_reset_state(void *arena);\n\n";
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << NAME << "_H_ */\n";
  return os.str();
}

/// NAME.c up to NAME_run's body: the kernels' entry declarations, the size
/// tables, the workgroup-grid launcher (only when a command dispatches)
/// and NAME_run's opening lines (the arena `A` and constants `C` pointers).
void writeSourcePrologue(llvm::raw_ostream &os, const CModule &m) {
  const ArtifactSpec &spec = m.spec;
  const std::string &name = m.name, &NAME = m.NAME;
  os << m.banner << "#include \"" << name << ".h\"\n\n"
     << "typedef void (*" << name
     << "_entry_fn)(void **bindings, const uint32_t *workgroup_id);\n\n"
     << "/* Entry points of " << name << "_kernels.o. */\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n";
  if (!spec.executables.empty())
    for (const std::string &entry : spec.executables[0].entryPoints)
      os << "extern void " << name << "_" << entry
         << "(void **bindings, const uint32_t *workgroup_id);\n";
  os << "#ifdef __cplusplus\n}\n#endif\n";
  os << "\nconst size_t " << name << "_arena_bytes = " << NAME << "_ARENA_BYTES;\n"
     << "const size_t " << name << "_num_inputs = " << NAME << "_NUM_INPUTS;\n"
     << "const size_t " << name << "_num_outputs = " << NAME << "_NUM_OUTPUTS;\n"
     << "const size_t " << name << "_input_bytes[] = {";
  for (size_t i = 0; i < spec.inputs.size(); ++i)
    os << (i ? ", " : "") << tensorBytes(spec.inputs[i]) << "u";
  if (spec.inputs.empty())
    os << "0u";
  os << "};\nconst size_t " << name << "_output_bytes[] = {";
  for (size_t i = 0; i < spec.outputs.size(); ++i)
    os << (i ? ", " : "") << tensorBytes(spec.outputs[i]) << "u";
  if (spec.outputs.empty())
    os << "0u";
  os << "};\n\n";
  // A model whose outputs are only copies or fills (an identity graph, a
  // constant output) launches nothing: no launcher, no unused function.
  bool launches = std::any_of(spec.commands.begin(), spec.commands.end(), [](const CommandSpec &c) {
    return c.kind == CommandSpecKind::Dispatch;
  });
  if (launches)
    os << "/* Runs `fn` over an nx x ny x nz workgroup grid, x innermost. */\n"
       << "static void " << name << "_launch(" << name
       << "_entry_fn fn, void **bindings, uint32_t nx,\n    uint32_t ny, uint32_t nz) {\n"
       << "  uint32_t id[3];\n"
       << "  for (id[2] = 0; id[2] < nz; ++id[2])\n"
       << "    for (id[1] = 0; id[1] < ny; ++id[1])\n"
       << "      for (id[0] = 0; id[0] < nx; ++id[0])\n"
       << "        fn(bindings, id);\n}\n\n";
  os << "int " << name << "_run(const void *const *inputs, void *const *outputs,\n"
     << "    void *arena) {\n"
     << "  uint8_t *A = (uint8_t *)arena;\n"
     << "  const uint8_t *C = " << name << "_constants;\n"
     << "  (void)A;\n  (void)C;\n  (void)inputs;\n  (void)outputs;\n";
}

/// The C expression (a `void *`) of binding `b` inside NAME_run: its
/// input, output, constant slot (`layout`) or arena base plus its byte
/// offset.
std::string bindingPointer(const BindingSpec &b, const ConstantLayout &layout) {
  std::string s;
  switch (b.source) {
  case BindingSource::Input:
    s = "(void *)((uintptr_t)inputs[" + std::to_string(b.index) + "] + " +
        std::to_string(b.offset) + "u)";
    break;
  case BindingSource::Output:
    s = "(void *)((uint8_t *)outputs[" + std::to_string(b.index) + "] + " +
        std::to_string(b.offset) + "u)";
    break;
  case BindingSource::Constant:
    s = "(void *)((uintptr_t)C + " + std::to_string(layout.offsets.at(b.index) + b.offset) + "u)";
    break;
  case BindingSource::Arena:
    s = "(void *)(A + " + std::to_string(b.offset) + "u)";
    break;
  }
  return s;
}

/// The block of dispatch command `i`: a comment naming its entry point and
/// (with `d`, its planned Dispatch) the source operators, the bindings
/// array and the launch over its workgroup grid.
void writeDispatch(llvm::raw_ostream &os, const CModule &m, size_t i, const CommandSpec &cmd,
                   const Dispatch *d) {
  const std::string &name = m.name;
  const std::string &entry = m.spec.executables[0].entryPoints.at(cmd.entryPoint);
  os << "  { /* command " << i << ", wave " << cmd.wave << ": " << entry;
  if (d) {
    for (size_t k = 0; k < d->ops.size(); ++k)
      os << (k ? ", " : " (") << commentSafe(d->ops[k].name) << " #" << d->ops[k].sourceIndex;
    if (!d->ops.empty())
      os << ")";
  }
  os << " */\n    void *b[" << std::max<size_t>(cmd.bindings.size(), 1) << "] = {";
  for (size_t k = 0; k < cmd.bindings.size(); ++k)
    os << (k ? ",\n        " : "") << bindingPointer(cmd.bindings[k], m.constants);
  if (cmd.bindings.empty())
    os << "0";
  os << "};\n    " << name << "_launch(" << name << "_" << entry << ", b, " << cmd.workgroupCount[0]
     << "u, " << cmd.workgroupCount[1] << "u, " << cmd.workgroupCount[2] << "u);\n  }\n";
}

/// The block of copy or fill command `i`: a byte loop (a fill repeats its
/// 4-byte pattern, least significant byte first).
void writeCopyOrFill(llvm::raw_ostream &os, const CModule &m, size_t i, const CommandSpec &cmd) {
  auto pointer = [&](const BindingSpec &b) { return bindingPointer(b, m.constants); };
  if (cmd.kind == CommandSpecKind::Copy)
    os << "  { /* command " << i << ", wave " << cmd.wave << ": copy " << cmd.bindings[0].length
       << " bytes */\n"
       << "    const uint8_t *s = " << pointer(cmd.bindings[0]) << ";\n"
       << "    uint8_t *d = " << pointer(cmd.bindings[1]) << ";\n"
       << "    for (size_t k = 0; k < " << cmd.bindings[0].length
       << "u; ++k)\n      d[k] = s[k];\n  }\n";
  else
    os << "  { /* command " << i << ", wave " << cmd.wave << ": fill " << cmd.bindings[0].length
       << " bytes */\n"
       << "    uint8_t *d = " << pointer(cmd.bindings[0]) << ";\n"
       << "    for (size_t k = 0; k < " << cmd.bindings[0].length << "u; ++k)\n"
       << "      d[k] = (uint8_t)(" << cmd.fillPattern << "u >> (8u * (k % 4u)));\n"
       << "  }\n";
}

/// NAME.c: the prologue, then NAME_run's body, one block per command in
/// schedule order (barriers as comments), then `return 0`.
/// NAME_reset_state (models with state only): each variable's initial
/// bytes, or its fill pattern repeated, written at its arena offset.
void writeStateReset(llvm::raw_ostream &os, const CModule &m) {
  const ArtifactSpec &spec = m.spec;
  if (spec.state.empty())
    return;
  os << "\nvoid " << m.name << "_reset_state(void *arena) {\n"
     << "  uint8_t *A = (uint8_t *)arena;\n  uint32_t i;\n";
  for (size_t k = 0; k < spec.state.size(); ++k) {
    const StateSpec &v = spec.state[k];
    os << "  /* state " << k << ": \"" << commentSafe(v.name) << "\" " << commentSafe(v.type)
       << ", arena [" << v.arenaOffset << ", +" << v.bytes << ") */\n";
    if (v.initial.empty()) {
      os << "  for (i = 0; i < " << v.bytes << "u; ++i)\n    A[" << v.arenaOffset
         << "u + i] = (uint8_t)(" << v.fillPattern << "u >> (8u * (i % 4u)));\n";
      continue;
    }
    os << "  {\n    static const uint8_t init[" << v.bytes << "] = {";
    for (size_t b = 0; b < v.initial.size(); ++b)
      os << (b % 16 ? " " : "\n      ") << static_cast<unsigned>(v.initial[b]) << "u,";
    os << "\n    };\n    for (i = 0; i < " << v.bytes << "u; ++i)\n      A[" << v.arenaOffset
       << "u + i] = init[i];\n  }\n";
  }
  os << "}\n";
}

std::string writeSource(const CModule &m) {
  std::string source;
  llvm::raw_string_ostream os(source);
  writeSourcePrologue(os, m);
  const CompilationPlan *plan = m.plan;
  std::map<int64_t, const Dispatch *> dispatchById;
  if (plan)
    for (const Dispatch &d : plan->dispatches)
      dispatchById[d.id] = &d;
  for (size_t i = 0; i < m.spec.commands.size(); ++i) {
    const CommandSpec &cmd = m.spec.commands[i];
    const Command *planned =
        plan && i < plan->schedule.commands.size() ? &plan->schedule.commands[i] : nullptr;
    switch (cmd.kind) {
    case CommandSpecKind::Barrier:
      os << "  /* barrier: wave " << cmd.wave << " done */\n";
      break;
    case CommandSpecKind::Dispatch: {
      auto it = planned ? dispatchById.find(planned->dispatch) : dispatchById.end();
      writeDispatch(os, m, i, cmd, it == dispatchById.end() ? nullptr : it->second);
      break;
    }
    case CommandSpecKind::Copy:
    case CommandSpecKind::Fill:
      writeCopyOrFill(os, m, i, cmd);
      break;
    }
  }
  os << "  return 0;\n}\n";
  writeStateReset(os, m);
  return os.str();
}

/// NAME_constants.c: a comment per constant slot ([offset, +bytes) name
/// type shape), then every slot's bytes, zero padding between them, as
/// one 64-byte aligned array (at least 1 byte).
std::string writeConstants(const CModule &m) {
  const ArtifactSpec &spec = m.spec;
  const std::string &name = m.name, &NAME = m.NAME;
  const ConstantLayout &layout = m.constants;
  std::string constants;
  llvm::raw_string_ostream os(constants);
  os << m.banner << "#include \"" << name << ".h\"\n\n"
     << "/* Define " << NAME << "_CONSTANTS_SECTION to place the weights, e.g.\n"
     << " * __attribute__((section(\".rodata.weights\"))). */\n"
     << "#ifndef " << NAME << "_CONSTANTS_SECTION\n#define " << NAME
     << "_CONSTANTS_SECTION\n#endif\n\n";
  for (size_t i = 0; i < spec.constants.size(); ++i)
    os << "/* [" << layout.offsets[i] << ", +" << spec.constants[i].data.size() << ") "
       << commentSafe(spec.constants[i].name) << " " << typeName(spec.constants[i].type) << " "
       << shapeText(spec.constants[i].shape) << " */\n";
  os << "const uint8_t " << name << "_constants[" << std::max<uint64_t>(layout.bytes, 1)
     << "] __attribute__((aligned(64))) " << NAME << "_CONSTANTS_SECTION = {";
  std::vector<uint8_t> flat(std::max<uint64_t>(layout.bytes, 1), 0);
  for (size_t i = 0; i < spec.constants.size(); ++i)
    std::copy(spec.constants[i].data.begin(), spec.constants[i].data.end(),
              flat.begin() + layout.offsets[i]);
  for (size_t k = 0; k < flat.size(); ++k) {
    if (k % 16 == 0)
      os << "\n ";
    os << " 0x" << llvm::format_hex_no_prefix(flat[k], 2) << ",";
  }
  os << "\n};\n";
  return os.str();
}

} // namespace

std::vector<GeneratedFile> writeCModule(const ArtifactSpec &spec, const CompilationPlan *plan,
                                        const std::string &name,
                                        const std::vector<uint8_t> &kernelObject) {
  CModule m{spec, plan, name, llvm::StringRef(name).upper(), bannerOf(spec), layOutConstants(spec)};
  return {{name + ".h", bytesOf(writeHeader(m))},
          {name + ".c", bytesOf(writeSource(m))},
          {name + "_constants.c", bytesOf(writeConstants(m))},
          {name + "_kernels.o", kernelObject}};
}

} // namespace kiln
