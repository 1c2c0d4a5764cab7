//===- Module.cpp - kiln._kiln: the Python extension module ---------------===//
//
// pybind11 bindings of the Python package `kiln` (python/kiln/__init__.py
// holds the public API and its documentation; this module is its private
// half). Two parts:
//  - the compiler's commands, through Bridge.h (core, no LLVM type here),
//    with the GIL released while they work;
//  - Module: a loaded artifact run through the runtime's C API
//    (kiln_module_load / kiln_module_invoke), inputs read in place when
//    they are C-contiguous, aligned NumPy arrays of the input's dtype and
//    shape, outputs written straight into new NumPy arrays, the GIL
//    released while the model runs.
//
//===----------------------------------------------------------------------===//
#include "Bridge.h"

#include "kiln/runtime.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace kiln::python;

namespace {

/// Bytes from aligned_alloc(64, ...), freed with free().
struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t, FreeDeleter>;

AlignedBytes allocateAligned(size_t bytes, const char *what) {
  size_t rounded = (bytes + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p)
    throw Failure("cannot allocate " + std::to_string(bytes) + " bytes for " + what);
  return AlignedBytes(static_cast<uint8_t *>(p));
}

/// str(h), as Python prints it.
std::string text(py::handle h) { return py::str(h).cast<std::string>(); }

std::string_view viewOf(const py::bytes &bytes) {
  char *data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(bytes.ptr(), &data, &size) != 0)
    throw py::error_already_set();
  return {data, static_cast<size_t>(size)};
}

/// Checks a device name and thread count as `kiln run` does; ValueError
/// otherwise.
Device deviceOf(const std::string &name, int64_t threads) {
  if (name != "local-sync" && name != "local-task")
    throw py::value_error("device='" + name + "' is not a device (local-sync, local-task)");
  if (threads < 1 || threads > 256)
    throw py::value_error("threads=" + std::to_string(threads) + " must be from 1 to 256");
  if (name == "local-sync" && threads != 1)
    throw py::value_error("threads=" + std::to_string(threads) +
                          " applies to device='local-task'; local-sync runs on the calling "
                          "thread");
  return {name, static_cast<unsigned>(threads)};
}

Settings settingsOf(const std::vector<std::pair<std::string, std::string>> &pairs) {
  return Settings(pairs.begin(), pairs.end());
}

Source sourceOf(const std::string &model, const std::string &project, const Settings &settings) {
  return Source{model, project, settings};
}

py::list stringList(const std::vector<std::string> &strings) {
  py::list out;
  for (const std::string &s : strings)
    out.append(s);
  return out;
}

/// One model input or output as the runtime describes it, with the NumPy
/// dtype it takes and the dtype's kind and item size (what a given
/// array's descriptor is checked against).
struct Tensor {
  std::string name;
  std::vector<py::ssize_t> shape;
  size_t bytes = 0;
  py::dtype dtype;
  char kind = 0;
  int itemSize = 0;
  py::tuple shapeTuple;
  /// kiln_tensor_info_t's quantization: empty for a float tensor.
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
  int32_t quantizedDimension = -1;
};

Tensor tensorOf(const kiln_tensor_info_t &info) {
  Tensor t;
  t.name = info.name;
  t.shape.assign(info.shape, info.shape + info.rank);
  t.bytes = info.byte_size;
  const char *numpyName = nullptr;
  switch (info.element_type) {
  case KILN_F32: numpyName = "float32"; t.kind = 'f'; t.itemSize = 4; break;
  case KILN_F16: numpyName = "float16"; t.kind = 'f'; t.itemSize = 2; break;
  case KILN_I32: numpyName = "int32"; t.kind = 'i'; t.itemSize = 4; break;
  case KILN_I64: numpyName = "int64"; t.kind = 'i'; t.itemSize = 8; break;
  case KILN_I8: numpyName = "int8"; t.kind = 'i'; t.itemSize = 1; break;
  case KILN_U8: numpyName = "uint8"; t.kind = 'u'; t.itemSize = 1; break;
  case KILN_I1: numpyName = "bool"; t.kind = 'b'; t.itemSize = 1; break;
  default:
    throw Failure("tensor '" + t.name + "' has element type " +
                  std::to_string(int(info.element_type)) + ", which NumPy cannot hold");
  }
  t.dtype = py::dtype(numpyName);
  py::tuple shape(t.shape.size());
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape[i] = py::int_(t.shape[i]);
  t.shapeTuple = shape;
  if (info.quantized) {
    t.scales.assign(info.scales, info.scales + info.quantization_count);
    t.zeroPoints.assign(info.zero_points, info.zero_points + info.quantization_count);
    t.quantizedDimension = info.quantized_dimension;
  }
  return t;
}

/// "input 0 'x'".
std::string label(size_t index, const Tensor &t) {
  return "input " + std::to_string(index) + " '" + t.name + "'";
}

/// "'x' (1, 16, 96) float32, 'y' (2,) int32".
std::string describeInputs(const std::vector<Tensor> &tensors) {
  std::string out;
  for (const Tensor &t : tensors)
    out += (out.empty() ? "'" : ", '") + t.name + "' " + text(t.shapeTuple) + " " +
           text(t.dtype);
  return out;
}

constexpr int kContiguousAligned =
    py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_ALIGNED_;

/// A loaded artifact, its device and arena (see python/kiln/__init__.py,
/// class Module, for the contract).
class Module {
public:
  Module(const py::bytes &artifact, const std::string &what, const std::string &device,
         int64_t threads)
      : device_(deviceOf(device, threads)) {
    std::string_view bytes = viewOf(artifact);
    artifact_ = allocateAligned(bytes.size(), "the artifact");
    std::memcpy(artifact_.get(), bytes.data(), bytes.size());
    kiln_status_t status;
    {
      py::gil_scoped_release release;
      status = kiln_module_load(artifact_.get(), bytes.size(), &module_);
    }
    if (status.code != KILN_OK)
      throw Failure(what + ": " + status.message);
    status = device_.name == "local-task"
                 ? kiln_device_create_local_task(device_.threads, &hal_)
                 : kiln_device_create_local_sync(&hal_);
    if (status.code != KILN_OK)
      throw Failure(status.message);
    halCreated_ = true;
    for (size_t i = 0; i < kiln_module_input_count(module_); ++i) {
      kiln_tensor_info_t info;
      status = kiln_module_input_info(module_, i, &info);
      if (status.code != KILN_OK)
        throw Failure(status.message);
      inputs_.push_back(tensorOf(info));
    }
    for (size_t i = 0; i < kiln_module_output_count(module_); ++i) {
      kiln_tensor_info_t info;
      status = kiln_module_output_info(module_, i, &info);
      if (status.code != KILN_OK)
        throw Failure(status.message);
      outputs_.push_back(tensorOf(info));
    }
    arenaBytes_ = kiln_module_arena_bytes(module_);
    if (arenaBytes_)
      arena_ = allocateAligned(arenaBytes_, "the arena");
  }

  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  ~Module() {
    if (halCreated_)
      kiln_device_release(&hal_);
    kiln_module_release(module_);
  }

  py::tuple call(const py::args &args, const py::kwargs &kwargs) {
    const size_t n = inputs_.size();
    std::vector<py::object> given(n);
    if (kwargs.size()) {
      if (args.size())
        throw py::value_error("give the inputs either in order or by name, not both (" +
                              std::to_string(args.size()) + " in order, " +
                              std::to_string(kwargs.size()) + " by name)");
      for (auto item : kwargs) {
        std::string key = text(item.first);
        size_t i = 0;
        while (i < n && inputs_[i].name != key)
          ++i;
        if (i == n)
          throw py::value_error("the model has no input named '" + key +
                                "'; its inputs are " + describeInputs(inputs_));
        given[i] = py::reinterpret_borrow<py::object>(item.second);
      }
      for (size_t i = 0; i < n; ++i)
        if (!given[i])
          throw py::value_error(label(i, inputs_[i]) + " is not given; expected " +
                                text(inputs_[i].shapeTuple) + " " +
                                text(inputs_[i].dtype));
    } else {
      if (args.size() != n)
        throw py::value_error("the model takes " + std::to_string(n) + " input(s), " +
                              std::to_string(args.size()) + " given; expected, in order: " +
                              describeInputs(inputs_));
      for (size_t i = 0; i < n; ++i)
        given[i] = args[i];
    }

    std::vector<const void *> inPtrs(n);
    std::vector<size_t> inSizes(n);
    for (size_t i = 0; i < n; ++i) {
      const Tensor &want = inputs_[i];
      py::object array = std::move(given[i]);
      if (!py::isinstance<py::array>(array)) {
        array = py::array::ensure(array);
        if (!array)
          throw py::value_error(label(i, want) + " is not an array; expected " +
                                text(want.shapeTuple) + " " +
                                text(want.dtype));
      }
      auto *a = py::detail::array_proxy(array.ptr());
      auto *d = py::detail::array_descriptor_proxy(a->descr);
      if (d->kind != want.kind || d->elsize != want.itemSize || d->byteorder == '>')
        throw py::value_error(label(i, want) + " expects dtype " +
                              text(want.dtype) + ", got " +
                              text(array.attr("dtype")) +
                              " (convert it with .astype(numpy." +
                              text(want.dtype) + "))");
      bool sameShape = a->nd == static_cast<int>(want.shape.size());
      for (int k = 0; sameShape && k < a->nd; ++k)
        sameShape = a->dimensions[k] == want.shape[k];
      if (!sameShape)
        throw py::value_error(label(i, want) + " expects shape " +
                              text(want.shapeTuple) + ", got " +
                              text(array.attr("shape")));
      if ((a->flags & kContiguousAligned) != kContiguousAligned) {
        // Strided or misaligned: one C-contiguous, aligned copy.
        array = py::array::ensure(array, kContiguousAligned);
        if (!array)
          throw py::error_already_set();
        a = py::detail::array_proxy(array.ptr());
      }
      inPtrs[i] = a->data;
      inSizes[i] = want.bytes;
      given[i] = std::move(array); // kept alive until the call returns
    }

    py::tuple result(outputs_.size());
    std::vector<void *> outPtrs(outputs_.size());
    std::vector<size_t> outSizes(outputs_.size());
    for (size_t i = 0; i < outputs_.size(); ++i) {
      py::array out(outputs_[i].dtype, outputs_[i].shape);
      outPtrs[i] = out.mutable_data();
      outSizes[i] = outputs_[i].bytes;
      result[i] = std::move(out);
    }

    kiln_invocation_t invocation{};
    invocation.inputs = inPtrs.data();
    invocation.input_sizes = inSizes.data();
    invocation.input_count = n;
    invocation.outputs = outPtrs.data();
    invocation.output_sizes = outSizes.data();
    invocation.output_count = outPtrs.size();
    invocation.arena = arena_.get();
    invocation.arena_size = arenaBytes_;
    invocation.device = &hal_;
    kiln_status_t status;
    {
      // The lock is taken without the GIL and released before the GIL is
      // taken back, so a thread waiting for it never holds the GIL.
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = kiln_module_invoke(module_, &invocation);
    }
    if (status.code != KILN_OK)
      throw Failure(status.message);
    return result;
  }

  /// [(name, shape, dtype, scales, zero_points, quantized_dimension)] of
  /// the inputs or outputs (kiln.TensorInfo's fields; scales and zero points
  /// lists, empty for a float tensor, quantized_dimension -1 per tensor).
  static py::list infoOf(const std::vector<Tensor> &tensors) {
    py::list out;
    for (const Tensor &t : tensors)
      out.append(py::make_tuple(t.name, t.shapeTuple, t.dtype, py::cast(t.scales),
                                py::cast(t.zeroPoints), t.quantizedDimension));
    return out;
  }

  py::list inputInfo() const { return infoOf(inputs_); }
  py::list outputInfo() const { return infoOf(outputs_); }
  size_t arenaBytes() const { return arenaBytes_; }
  size_t stateCount() const { return kiln_module_state_count(module_); }
  /// kiln_module_reset_state: the next call starts from the initial values.
  void resetState() {
    std::lock_guard<std::mutex> lock(mutex_);
    kiln_module_reset_state(module_);
  }
  const std::string &device() const { return device_.name; }
  unsigned threads() const { return device_.threads; }

private:
  Device device_;
  AlignedBytes artifact_;
  kiln_module_t *module_ = nullptr;
  kiln_device_t hal_{};
  bool halCreated_ = false;
  std::vector<Tensor> inputs_, outputs_;
  size_t arenaBytes_ = 0;
  AlignedBytes arena_;
  /// A module runs one invocation at a time (runtime.h, "Thread safety";
  /// the arena and the local-task pool belong to it).
  std::mutex mutex_;
};

py::dict compiledToDict(Compiled &&c) {
  py::dict out;
  out["format"] = c.format;
  out["artifact"] = py::bytes(c.artifact);
  py::list files;
  for (const auto &[name, bytes] : c.files)
    files.append(py::make_tuple(name, py::bytes(bytes)));
  out["files"] = files;
  out["model_json"] = c.modelJson;
  out["warnings"] = stringList(c.warnings);
  return out;
}

/// Build settings as (recipe key, value text) pairs (Bridge.h's Settings).
using Pairs = std::vector<std::pair<std::string, std::string>>;

/// The compiler: compile, inspect a model, export a bundle (Bridge.h's compile,
/// inspectModelJson, exportBundle), the GIL released while they run.
void defineBuildFunctions(py::module_ &m) {
  m.def(
      "compile",
      [](const std::string &model, const std::string &project, const Pairs &settings) {
        Source source = sourceOf(model, project, settingsOf(settings));
        Compiled compiled;
        {
          py::gil_scoped_release release;
          compiled = compile(source);
        }
        return compiledToDict(std::move(compiled));
      },
      py::arg("model"), py::arg("project"), py::arg("settings"));
  m.def(
      "inspect_model",
      [](const std::string &model, const std::string &project, const Pairs &settings) {
        Source source = sourceOf(model, project, settingsOf(settings));
        std::vector<std::string> warnings;
        std::string json;
        {
          py::gil_scoped_release release;
          json = inspectModelJson(source, warnings);
        }
        return py::make_tuple(json, stringList(warnings));
      },
      py::arg("model"), py::arg("project"), py::arg("settings"));
  m.def(
      "export",
      [](const std::string &model, const std::string &project, const Pairs &settings,
         const std::string &outDir, const std::string &ramBudget, const std::string &flashBudget,
         bool kit) {
        Source source = sourceOf(model, project, settingsOf(settings));
        py::gil_scoped_release release;
        return exportBundle(source, outDir, ramBudget, flashBudget, kit);
      },
      py::arg("model"), py::arg("project"), py::arg("settings"), py::arg("out_dir"),
      py::arg("ram_budget"), py::arg("flash_budget"), py::arg("kit"));
}

/// Reading artifacts: inspect, section sizes, diff, recognition.
void defineArtifactFunctions(py::module_ &m) {
  m.def(
      "inspect_artifact",
      [](const py::bytes &bytes, const std::string &what) {
        std::string_view view = viewOf(bytes);
        py::gil_scoped_release release;
        return inspectArtifactJson(view, what);
      },
      py::arg("artifact"), py::arg("what"));
  m.def(
      "section_sizes",
      [](const py::bytes &bytes, const std::string &what) {
        std::string_view view = viewOf(bytes);
        Sections sections;
        {
          py::gil_scoped_release release;
          sections = sectionSizes(view, what);
        }
        return py::make_tuple(sections.sections, sections.overhead, sections.fileBytes);
      },
      py::arg("artifact"), py::arg("what"));
  m.def(
      "diff",
      [](const py::bytes &a, const py::bytes &b, const std::string &nameA, const std::string &nameB,
         unsigned runs) {
        std::string_view viewA = viewOf(a), viewB = viewOf(b);
        std::vector<std::string> warnings;
        std::string json;
        {
          py::gil_scoped_release release;
          json = diffJson(viewA, viewB, nameA, nameB, runs, warnings);
        }
        return py::make_tuple(json, stringList(warnings));
      },
      py::arg("a"), py::arg("b"), py::arg("name_a"), py::arg("name_b"), py::arg("runs"));
  m.def("is_artifact_file", &isArtifactFile, py::arg("path"));
  m.def("is_artifact", [](const py::bytes &bytes) {
    std::string_view view = viewOf(bytes);
    return kiln_artifact_recognize(view.data(), view.size()) != 0;
  });
}

/// Running artifacts on this machine: validate, benchmark (kiln_host).
void defineRunFunctions(py::module_ &m) {
  m.def(
      "validate",
      [](const py::bytes &artifact, const std::string &what, const std::string &dir,
         int64_t samples, double atol, double rtol, int64_t lsb, const std::string &device,
         int64_t threads) {
        Device d = deviceOf(device, threads);
        std::string_view view = viewOf(artifact);
        py::gil_scoped_release release;
        return validateJson(view, what, dir, samples, atol, rtol, lsb, d);
      },
      py::arg("artifact"), py::arg("what"), py::arg("dir"), py::arg("samples"), py::arg("atol"),
      py::arg("rtol"), py::arg("lsb"), py::arg("device"), py::arg("threads"));
  m.def(
      "compare",
      [](const py::bytes &a, const py::bytes &b, const std::string &nameA, const std::string &nameB,
         int64_t samples, uint64_t seed, const std::string &inputDir, const std::string &device,
         int64_t threads) {
        Device d = deviceOf(device, threads);
        std::string_view va = viewOf(a), vb = viewOf(b);
        py::gil_scoped_release release;
        return compareJson(va, vb, nameA, nameB, samples, seed, inputDir, d);
      },
      py::arg("a"), py::arg("b"), py::arg("name_a"), py::arg("name_b"), py::arg("samples"),
      py::arg("seed"), py::arg("input_dir"), py::arg("device"), py::arg("threads"));
  m.def(
      "benchmark",
      [](const py::bytes &artifact, unsigned runs, const std::string &device, int64_t threads) {
        Device d = deviceOf(device, threads);
        std::string_view view = viewOf(artifact);
        Latency latency;
        {
          py::gil_scoped_release release;
          latency = benchmark(view, runs, d);
        }
        py::dict out;
        out["median_ms"] = latency.medianMs;
        out["min_ms"] = latency.minMs;
        out["max_ms"] = latency.maxMs;
        out["runs"] = latency.runs;
        out["device"] = latency.device;
        out["threads"] = latency.threads;
        return out;
      },
      py::arg("artifact"), py::arg("runs"), py::arg("device"), py::arg("threads"));
}

/// Writing files whole or not at all (kiln/AtomicWrite.h).
void defineFileFunctions(py::module_ &m) {
  m.def(
      "write_files",
      [](const Pairs &files, const std::string &dir) {
        py::gil_scoped_release release;
        writeFiles(files, dir);
      },
      py::arg("files"), py::arg("dir"));
  m.def(
      "write_file",
      [](const std::string &path, const py::bytes &bytes) {
        std::string_view view = viewOf(bytes);
        py::gil_scoped_release release;
        writeFile(path, view);
      },
      py::arg("path"), py::arg("bytes"));
}

/// What this build of Kiln is: the device targets and the versions.
void defineInfoFunctions(py::module_ &m) {
  m.def("targets", [] {
    py::list rows;
    for (const DeviceTargetInfo &t : deviceTargets()) {
      py::dict row;
      row["name"] = t.name;
      row["display_name"] = t.displayName;
      row["triple"] = t.triple;
      row["cpu"] = t.cpu;
      row["features"] = t.features;
      row["abi"] = t.abi;
      row["bare_metal"] = t.bareMetal;
      row["integer_only"] = t.integerOnly;
      row["workgroup_bytes"] = t.workgroupBytes;
      rows.append(row);
    }
    return rows;
  });
  m.def("version", &version);
  m.def("llvm_version", &llvmVersion);
  m.def("runtime_version", [] { return std::string(kiln_runtime_version()); });
}

/// kiln.Module: a loaded artifact, called on NumPy arrays.
void defineModuleClass(py::module_ &m) {
  py::class_<Module>(m, "Module")
      .def(py::init<const py::bytes &, const std::string &, const std::string &, int64_t>(),
           py::arg("artifact"), py::arg("what"), py::arg("device"), py::arg("threads"))
      .def("__call__", &Module::call,
           "module(*arrays) or module(name=array, ...) -> tuple of numpy.ndarray\n\n"
           "Runs the model once. Inputs in signature order, or all by name (not both);\n"
           "each a numpy.ndarray (or anything numpy.asarray takes) of exactly the\n"
           "input's shape and dtype (no conversion: a float64 array for a float32\n"
           "input is an error). C-contiguous, aligned arrays are read in place;\n"
           "others are copied once. Returns one new array per output, in signature\n"
           "order (always a tuple). The GIL is released while the model runs; calls\n"
           "on one Module from several threads run one at a time (see Module).\n\n"
           "Raises ValueError (wrong input count, name, shape or dtype: names the\n"
           "input and what it expects) or kiln.Error (the runtime's message).")
      .def("_input_info", &Module::inputInfo)
      .def("_output_info", &Module::outputInfo)
      .def_property_readonly("arena_bytes", &Module::arenaBytes,
                             "Bytes of the transient arena this module owns (one per Module).")
      .def_property_readonly("state_count", &Module::stateCount,
                             "Variables the model carries from one call to the next (TFLite "
                             "resource variables, LSTM/RNN/SVDF state); 0 for a stateless "
                             "model.")
      .def("reset_state", &Module::resetState,
           "reset_state() -> None\n\n"
           "Sets the model's state variables back to their initial values (as after\n"
           "loading): the next call starts over. Nothing happens for a stateless model.")
      .def_property_readonly("device", &Module::device,
                             "The HAL device: 'local-sync' or 'local-task'.")
      .def_property_readonly("threads", &Module::threads,
                             "Threads of the device (1 for local-sync).");
}

} // namespace

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "Private extension module of the kiln package: use `import kiln`.";
  py::register_exception<Failure>(m, "Error", PyExc_RuntimeError);
  defineBuildFunctions(m);
  defineArtifactFunctions(m);
  defineRunFunctions(m);
  defineFileFunctions(m);
  defineInfoFunctions(m);
  defineModuleClass(m);
}
