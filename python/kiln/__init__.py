"""Kiln from Python: compile models into deployment artifacts, inspect and run them.

    import numpy as np
    import kiln

    artifact = kiln.compile("alexa.tflite", cpu="x86-64-v3")
    module = kiln.load(artifact, device="local-task", threads=2)
    (scores,) = module(np.zeros((1, 16, 96), np.float32))

The package is a thin layer over the code the ``kiln`` command line runs:
``compile`` is ``kiln compile``, ``Module`` is ``kiln run``'s runtime,
``inspect``, ``diff``, ``validate`` and ``export`` are the commands of the
same name with ``--json``, and their results are those JSON documents as
Python objects. Build settings are keywords named after the CLI's flags
(``cpu=`` is ``--target-cpu``, ``tiles={3: [0, 8, 0, 0]}`` is
``--tile=3=0,8,0,0``); see ``help(kiln.compile)``.

Errors
  kiln.Error (a RuntimeError): whatever ``kiln`` reports as
      ``kiln: error: MESSAGE``; ``str(e)`` is MESSAGE, one line naming the
      file, operator or setting at fault (a bad model, a setting's value,
      an unreadable file, the runtime refusing an artifact).
  ValueError: a Module called with the wrong number of inputs, an unknown
      input name, or an array of the wrong shape or dtype (the message
      names the input and what it expects); a device or thread count that
      does not exist.
  TypeError: an unknown keyword, or a keyword value of the wrong Python type.
  kiln.BuildWarning (a UserWarning, through the warnings module): a setting
      that changed nothing (``kiln: warning:`` on the command line).

Thread safety
  Every function may be called from any thread; each releases the GIL
  while Kiln works. Compilations (compile, inspect of a model, export) in
  one process run one at a time. A Module runs one call at a time: calls
  from several threads on the same Module wait for each other (the runtime
  invokes a module from one thread at a time, and the module's arena is
  its own), so they are correct but not concurrent. For concurrent
  inference, load one Module per thread: separate Modules run in parallel.
"""

from __future__ import annotations

import collections
import contextlib
import json
import operator
import os
import tempfile
import warnings as _warnings
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _kiln

__all__ = [
    "Artifact",
    "BuildWarning",
    "Error",
    "Module",
    "TensorInfo",
    "compare",
    "compile",
    "diff",
    "export",
    "inspect",
    "load",
    "targets",
    "validate",
    "version",
]

Error = _kiln.Error
Error.__module__ = "kiln"
Error.__doc__ = (
    "A Kiln error (a RuntimeError): str(e) is the one-line message the kiln "
    "command line prints after 'kiln: error: '."
)


class BuildWarning(UserWarning):
    """A build setting that changed nothing (``kiln: warning:`` on the command
    line), e.g. ``fix_shapes=`` for an input whose shape is static."""


__version__ = _kiln.version()

PathLike = Union[str, "os.PathLike[str]"]

# Python keyword -> recipe key (core/include/kiln/Recipe.h, in its order).
_RECIPE_KEYS = {
    "target": "target",
    "cpu": "target-cpu",
    "features": "target-cpu-features",
    "profile": "profile",
    "debug_symbols": "debug-symbols",
    "reflection": "reflection",
    "output_format": "output-format",
    "module_name": "module-name",
    "tiles": "tile",
    "fusion": "fusion",
    "no_fusion": "no-fusion",
    "fix_shapes": "fix-shape",
    "fix_values": "fix-value",
    "check_bounds": "check-bounds",
    "signature": "signature",
}
_STRING_KEYS = {"target", "cpu", "features", "profile", "output_format", "module_name",
                "signature"}
_BOOL_KEYS = {"debug_symbols", "reflection", "fusion", "check_bounds"}

_RECIPE_DOC = """
    Build settings (keywords; each is the kiln command line's flag of the same
    meaning, and the same parser checks it; None or absent = the default):
      target: str         device target: a kiln.targets() name, "host" (default);
                          bare-metal ones write C modules only    --target
      cpu: str            LLVM CPU: "generic" (default, portable), "x86-64-v3"
                          (AVX2), "x86-64-v4" (AVX-512), "host"     --target-cpu
      features: str       LLVM features "+avx2,+fma" or "host"  --target-cpu-features
      profile: str        "default" (symbols and reflection kept) or "stripped"
      debug_symbols: bool, reflection: bool   override the profile
      output_format: str  "kiln" (default) or "c-module"
      module_name: str    C module symbol prefix (default: from the file name)
      tiles: {dispatch_id: [s0, s1, ...]}   workgroup tile sizes, one per loop
                          of the dispatch's tiled op, 0 = whole loop (ids and
                          loops from kiln.inspect)                  --tile=ID=S0,S1
      fusion: bool        fuse elementwise ops into their producers (True)
      no_fusion: [dispatch_id, ...]   dispatches not to fuse into  --no-fusion=ID
      fix_shapes: {input: (d0, d1, ...)}   the whole static shape of an input
                          with dynamic dimensions, by name or index
                          ({"input_1": (1, 76, 32, 1)} or {0: ...})  --fix-shape
      fix_values: {input: value}   an input (ONNX models) fixed to a value: a
                          constant of the build that leaves the signature; a
                          number, bool, sequence or numpy array with one
                          element per element of the input ({"sr": 16000})
                                                                    --fix-value
      check_bounds: bool  bounds-checked kernels: a refused access makes run()
                          raise KILN_OUT_OF_RANGE naming the dispatch (slow;
                          .kiln artifacts only)                     --check-bounds
      signature: str      the TFLite signature to compile (a signature_key, as
                          inspect()'s "signatures" lists them); its inputs
                          and outputs named and ordered as it lists them
                          (default: subgraph 0, its tensors' names) --signature
      project: path       a .kilnproj file (the workbench's saved settings and
                          model) instead of a model and settings   --project
"""


def _format_doc(doc: str) -> str:
    return doc.replace("{recipe}", _RECIPE_DOC)


class TensorInfo(collections.namedtuple("TensorInfo", ["name", "shape", "dtype"])):
    """One model input or output: name (str), shape (tuple of int, elements per
    dimension, row-major) and dtype (numpy.dtype: float32, float16, int32, int64,
    int8, uint8 or bool); a 3-tuple.

    Its quantization (artifacts of format 1.2; real = scale * (q - zero_point)),
    as TensorFlow Lite's Interpreter.get_input_details() gives it:
      quantization: (scale: float, zero_point: int), (0.0, 0) for a float
          tensor and for a per-channel one;
      quantization_parameters: {"scales": numpy float32 array,
          "zero_points": numpy int32 array, "quantized_dimension": int}, the
          arrays empty for a float tensor, one entry per tensor or one per
          index of dimension quantized_dimension (0 unless per channel).
    """

    def __new__(cls, name: str, shape: Tuple[int, ...], dtype: Any, scales: Sequence[float] = (),
                zero_points: Sequence[int] = (), quantized_dimension: int = -1) -> "TensorInfo":
        self = super().__new__(cls, name, shape, dtype)
        scales_array = np.array(scales, dtype=np.float32)
        zero_points_array = np.array(zero_points, dtype=np.int32)
        per_tensor = quantized_dimension < 0 and len(scales_array) == 1
        self.quantization = ((float(scales_array[0]), int(zero_points_array[0])) if per_tensor
                             else (0.0, 0))
        self.quantization_parameters = {
            "scales": scales_array,
            "zero_points": zero_points_array,
            "quantized_dimension": max(quantized_dimension, 0),
        }
        return self


def _fail(message: str) -> "Error":
    return Error(message)


def _ints(value: Any, what: str) -> List[int]:
    try:
        return [operator.index(v) for v in value]
    except TypeError:
        raise TypeError(f"{what} takes a sequence of int, got {value!r}") from None


def _value_text(value: Any, what: str) -> str:
    """A fixed value as --fix-value's VALUE: its elements row-major, each a
    whole number, a real (repr: the shortest text of the same double), true
    or false, separated by ','."""
    try:
        elements = np.asarray(value)
    except ValueError:  # a ragged sequence
        elements = np.asarray(None)
    if elements.dtype == object or elements.dtype.kind not in "biuf":
        raise TypeError(f"{what} takes a number, bool, sequence of them or numpy array, "
                        f"got {value!r}")
    texts = []
    for v in elements.reshape(-1).tolist():
        if isinstance(v, bool):
            texts.append("true" if v else "false")
        elif isinstance(v, int):
            texts.append(str(v))
        else:
            texts.append(repr(float(v)))
    return ",".join(texts)


def _settings(recipe: Mapping[str, Any], function: str) -> List[Tuple[str, str]]:
    """(recipe key, value text) pairs for kiln::setRecipeOption, in the
    recipe's key order."""
    for name in recipe:
        if name not in _RECIPE_KEYS:
            raise TypeError(
                f"{function}() got an unexpected keyword argument '{name}'; the build "
                f"settings are {', '.join(_RECIPE_KEYS)} and project")
    pairs: List[Tuple[str, str]] = []
    for name, key in _RECIPE_KEYS.items():
        value = recipe.get(name)
        if value is None:
            continue
        if name in _STRING_KEYS:
            if not isinstance(value, str):
                raise TypeError(f"{name}= takes a str, got {type(value).__name__}")
            pairs.append((key, value))
        elif name in _BOOL_KEYS:
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name}= takes True or False, got {value!r}")
            pairs.append((key, "true" if value else "false"))
        elif name == "tiles":
            if not isinstance(value, Mapping):
                raise TypeError(f"tiles= takes {{dispatch_id: [sizes]}}, got {value!r}")
            for dispatch, sizes in value.items():
                pairs.append((key, f"{dispatch}=" +
                              ",".join(str(s) for s in _ints(sizes, f"tiles[{dispatch!r}]"))))
        elif name == "no_fusion":
            ids = [value] if isinstance(value, int) else _ints(value, "no_fusion=")
            pairs.extend((key, str(operator.index(i))) for i in ids)
        elif name == "fix_shapes":
            if not isinstance(value, Mapping):
                raise TypeError(f"fix_shapes= takes {{input: shape}}, got {value!r}")
            for input_name, shape in value.items():
                pairs.append((key, f"{input_name}=" +
                              "x".join(str(d) for d in _ints(shape, f"fix_shapes[{input_name!r}]"))))
        elif name == "fix_values":
            if not isinstance(value, Mapping):
                raise TypeError(f"fix_values= takes {{input: value}}, got {value!r}")
            for input_name, v in value.items():
                pairs.append((key, f"{input_name}=" +
                              _value_text(v, f"fix_values[{input_name!r}]")))
    return pairs


def _project_settings(project: Optional[PathLike], settings: List[Tuple[str, str]],
                      recipe: Mapping[str, Any]) -> str:
    if project is None:
        return ""
    project = os.fspath(project)
    if settings:
        given = ", ".join(f"{k}=" for k in recipe if recipe[k] is not None)
        raise _fail(f"project={project} sets the target, profile, format and tuning; edit "
                    f"the project instead of adding {given}")
    return project


def _warn(messages: Sequence[str]) -> None:
    for message in messages:
        _warnings.warn(message, BuildWarning, stacklevel=3)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _fail(f"{path}: cannot read: {e.strerror or e}") from e


def _is_onnx(data: bytes) -> bool:
    """Whether model bytes look like an ONNX ModelProto: protobuf whose first
    field is ir_version (field 1, varint: tag byte 0x08), as every ONNX
    writer emits it; the importer checks the rest."""
    return data[4:8] != b"TFL3" and data[:1] == b"\x08"


def _is_mlir_text(data: bytes) -> bool:
    """Whether model bytes are TOSA MLIR text (a module or func.func); any
    other bytes are read as a TFLite model, so that they fail as a file
    does ("not a TFLite model: ...")."""
    if data[4:8] == b"TFL3":
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    lines = [line.strip() for line in text.splitlines()]
    code = [line for line in lines if line and not line.startswith("//")]
    if not code:
        return False
    first = code[0]
    return first.startswith(("module", "builtin.module", "func.func", "#")) or \
        "func.func" in text


_DEVICES = ("local-sync", "local-task")
_MAX_RUNS = 2**31 - 1


def _device(device: Any) -> str:
    """device= checked before the extension sees it (None: local-sync)."""
    if device is None:
        return "local-sync"
    if not isinstance(device, str):
        raise TypeError(f"device= takes 'local-sync' or 'local-task', got "
                        f"{type(device).__name__}")
    if device not in _DEVICES:
        raise ValueError(f"device={device!r} is not a device (local-sync, local-task)")
    return device


def _count(value: Any, what: str, low: int, high: int) -> int:
    """An int argument in low..high, with a short message naming it."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{what} takes an int, got {type(value).__name__}")
    n = operator.index(value)
    if not low <= n <= high:
        raise ValueError(f"{what}{n} must be from {low} to {high}" if n <= 10**12 else
                         f"{what} must be from {low} to {high}")
    return n


@contextlib.contextmanager
def _model_file(model: Union[PathLike, bytes, bytearray, memoryview]) -> Iterator[str]:
    """The model as a file path: a path as given, bytes written to a
    temporary model.tflite (model.mlir for TOSA MLIR text, model.onnx for an
    ONNX ModelProto)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        suffix = ".mlir" if _is_mlir_text(data) else ".onnx" if _is_onnx(data) else ".tflite"
        with tempfile.TemporaryDirectory(prefix="kiln-") as tmp:
            path = os.path.join(tmp, "model" + suffix)
            with open(path, "wb") as f:
                f.write(data)
            yield path
    elif isinstance(model, (str, os.PathLike)):
        yield os.fspath(model)
    else:
        raise TypeError(f"expected a model path or bytes, got {type(model).__name__}")


def _artifact_or_model(value: Any) -> Tuple[Optional[bytes], str]:
    """(artifact bytes, name) for an artifact; (None, "") for a model."""
    if isinstance(value, Artifact):
        if value.format != "kiln":
            raise _fail("a C module is not a .kiln artifact; compile with output_format='kiln'")
        return value.bytes, "artifact"
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return (data, "artifact") if _kiln.is_artifact(data) else (None, "")
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if _kiln.is_artifact_file(path):
            return _read(path), path
        return None, ""
    raise TypeError(f"expected a path, bytes or kiln.Artifact, got {type(value).__name__}")


def _artifact_bytes(value: Any) -> Tuple[bytes, str]:
    """(bytes, name) of an artifact given as a path, bytes or Artifact."""
    if isinstance(value, Artifact):
        return _artifact_or_model(value)  # type: ignore[return-value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value), "artifact"
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        return _read(path), path
    raise TypeError(f"expected an artifact path, bytes or kiln.Artifact, got "
                    f"{type(value).__name__}")


def _refuse_settings(name: str, recipe: Mapping[str, Any], project: Any) -> None:
    given = [f"{k}=" for k, v in recipe.items() if v is not None]
    if project is not None:
        given.append("project=")
    if given:
        raise _fail(f"{name} is already compiled; build settings ({', '.join(given)}) apply "
                    f"to a model")


def _threads(device: str, threads: Optional[int]) -> int:
    if threads is not None:
        return _count(threads, "threads=", 1, 256)
    if device == "local-task":
        try:
            return max(1, min(256, len(os.sched_getaffinity(0))))
        except AttributeError:
            return max(1, min(256, os.cpu_count() or 1))
    return 1


class Artifact:
    """A compiled model: a ``.kiln`` artifact (or a C module's files).

    Made by kiln.compile, or from existing bytes: ``kiln.Artifact(data)``,
    ``kiln.Artifact.read("model.kiln")``.

    Attributes
      bytes: bytes        the .kiln file (format runtime/schema/kiln_artifact.fbs);
                          a C module has none (kiln.Error)
      sections: {str: int}   bytes per section, in file order from the end
                          (constants, executables, commands, memory_plan,
                          device, reflection, io); with overhead_bytes they
                          add up to len(bytes) (``kiln inspect --sizes``)
      overhead_bytes: int    root table, vtables, size table, padding, checksum
      plan: dict          ``kiln inspect ARTIFACT --json`` as Python objects:
                          the plan's keys (dispatches, schedule, memory, ...)
                          and "artifact" (format, target, signature, sections,
                          counts); for a stripped artifact "plan" is None and
                          "plan_missing" says why. A C module's plan is
                          ``kiln inspect MODEL --json`` of its build.
      format: str         "kiln" or "c-module"
      files: {str: bytes}    a C module's files (NAME.h, NAME.c,
                          NAME_constants.c, NAME_kernels.o); {} for .kiln
      warnings: [str]     settings that changed nothing
    """

    def __init__(self, data: Union[bytes, bytearray, memoryview], *, format: str = "kiln",
                 files: Optional[Mapping[str, bytes]] = None, warnings: Sequence[str] = (),
                 model_json: Optional[str] = None) -> None:
        self._bytes = bytes(data)
        self.format = format
        self.files: Dict[str, bytes] = dict(files or {})
        self.warnings: List[str] = list(warnings)
        self._model_json = model_json
        self._plan: Optional[dict] = None
        self._sections: Optional[Tuple[List[Tuple[str, int]], int, int]] = None

    @classmethod
    def read(cls, path: PathLike) -> "Artifact":
        """Reads a .kiln file. Raises kiln.Error if it cannot be read (the
        artifact is checked when used)."""
        return cls(_read(os.fspath(path)))

    @property
    def bytes(self) -> bytes:
        if self.format != "kiln":
            raise _fail("a C module has no .kiln bytes; its files are in .files")
        return self._bytes

    def _section_sizes(self) -> Tuple[List[Tuple[str, int]], int, int]:
        if self._sections is None:
            self._sections = _kiln.section_sizes(self.bytes, "artifact")
        return self._sections

    @property
    def sections(self) -> Dict[str, int]:
        return dict(self._section_sizes()[0])

    @property
    def overhead_bytes(self) -> int:
        return self._section_sizes()[1]

    @property
    def plan(self) -> dict:
        if self._plan is None:
            text = self._model_json if self.format != "kiln" else \
                _kiln.inspect_artifact(self._bytes, "artifact")
            self._plan = json.loads(text)
        return self._plan

    def save(self, path: PathLike) -> None:
        """Writes the .kiln file to ``path`` as ``kiln compile -o`` does (whole
        or not at all: a temporary file renamed over it), or a C module's
        files into the folder ``path`` (created if missing; all files or
        none). Raises kiln.Error naming the path ("PATH: cannot write: ...").
        """
        path = os.fspath(path)
        if self.format != "kiln":
            _kiln.write_files(list(self.files.items()), path)
            return
        _kiln.write_file(path, self._bytes)

    def __len__(self) -> int:
        return len(self._bytes)

    def __repr__(self) -> str:
        if self.format != "kiln":
            return f"<kiln.Artifact c-module: {', '.join(self.files)}>"
        return f"<kiln.Artifact {len(self._bytes)} bytes>"


def compile(model: Union[PathLike, bytes, None] = None, *, project: Optional[PathLike] = None,
            **recipe: Any) -> Artifact:
    """Compiles a model into a kiln.Artifact, as ``kiln compile`` does.

    compile(model, **settings) -> Artifact
    compile(project="model.kilnproj") -> Artifact

    model: path of a .tflite (float32), .onnx or TOSA .mlir file, or its bytes
        (written to a temporary model.tflite, model.onnx or model.mlir, which
        then names the source in the artifact and in errors). Give a model or project=, not both.
{recipe}
    Returns an Artifact whose bytes equal ``kiln compile`` with the same
    flags, byte for byte. Compiling takes ~0.1-2 s; the GIL is released and
    compilations in one process run one at a time.

    Raises kiln.Error with the CLI's message: an unreadable or unsupported
    model (naming the operator or tensor), a setting's bad value (naming the
    flag, e.g. "--tile=3=0,-8: ..."), an input with dynamic dimensions not
    fixed (suggesting fix_shapes=), project= together with settings.
    TypeError: an unknown keyword, a value of the wrong type, neither or
    both of model and project. Settings that change nothing warn
    (kiln.BuildWarning).

    Example:
        kiln.compile("embedding.tflite", fix_shapes={0: (1, 76, 32, 1)},
                     tiles={4: [0, 8, 0, 0]}, cpu="x86-64-v3")
    """
    settings = _settings(recipe, "compile")
    if (model is None) == (project is None):
        raise TypeError("compile() takes a model or project=, one of them")
    project_path = _project_settings(project, settings, recipe)
    if project_path:
        result = _kiln.compile("", project_path, [])
    else:
        with _model_file(model) as path:
            result = _kiln.compile(path, "", settings)
    _warn(result["warnings"])
    return Artifact(result["artifact"], format=result["format"],
                    files=dict(result["files"]), warnings=result["warnings"],
                    model_json=result["model_json"])


compile.__doc__ = _format_doc(compile.__doc__ or "")


def inspect(model_or_artifact: Union[PathLike, bytes, Artifact, None] = None, *,
            project: Optional[PathLike] = None, **recipe: Any) -> dict:
    """What ``kiln inspect ... --json`` prints, as Python objects.

    inspect(artifact) -> dict   a .kiln path, its bytes or an Artifact: the
        plan's keys (source, dispatches, schedule, memory, outputs) and
        "artifact" (format version, producer, target, profile, signature,
        sections, counts); a stripped artifact gives "plan": None and
        "plan_missing" instead of the plan.
    inspect(model, **settings) -> dict   a model path or bytes, planned with
        the settings (no code generation unless the target is bare metal):
        the plan's keys and "signature" ({"inputs": [...], "outputs": [...]},
        each {name, element_type, shape, bytes, alignment}).
    inspect(project="m.kilnproj") -> dict   the project's model and settings.

    Dispatch ids, loops ("loop_ranges", "loop_kinds") and tile sizes in the
    plan are what tiles= and no_fusion= refer to.
{recipe}
    Raises kiln.Error with the CLI's message (an unreadable or unsupported
    file, build settings given with an artifact); TypeError as compile.
    """
    settings = _settings(recipe, "inspect")
    if (model_or_artifact is None) == (project is None):
        raise TypeError("inspect() takes a model or artifact, or project=, one of them")
    project_path = _project_settings(project, settings, recipe)
    if project_path:
        text, warned = _kiln.inspect_model("", project_path, [])
        _warn(warned)
        return json.loads(text)
    if isinstance(model_or_artifact, Artifact) and model_or_artifact.format != "kiln":
        _refuse_settings("the artifact", recipe, None)
        return model_or_artifact.plan
    data, name = _artifact_or_model(model_or_artifact)
    if data is not None:
        _refuse_settings(name, recipe, None)
        return json.loads(_kiln.inspect_artifact(data, name))
    with _model_file(model_or_artifact) as path:  # type: ignore[arg-type]
        text, warned = _kiln.inspect_model(path, "", settings)
    _warn(warned)
    return json.loads(text)


inspect.__doc__ = _format_doc(inspect.__doc__ or "")


def diff(a: Union[PathLike, bytes, Artifact], b: Union[PathLike, bytes, Artifact], *,
         benchmark: int = 0) -> dict:
    """B - A of two artifacts, as ``kiln diff A B --json`` prints it.

    a, b: .kiln paths, their bytes or Artifacts (named by their path, else
        "A" and "B", in "a_file" and "b_file").
    benchmark: N > 0 also measures each on this host, N runs in 5 rounds
        alternating A and B (seeded random inputs), adding "median_ms",
        "min_ms", "max_ms" rows and "timing"; if this host cannot run them
        (another target's code) the sizes still compare and a
        kiln.BuildWarning says why.

    Returns one {"a", "b", "delta"} row per section ("constants",
    "executables", ..., "(overhead)", "total": bytes) and per plan figure
    ("arena_bytes", "lower_bound_bytes": bytes; "dispatch_count",
    "command_count", "wave_count"), plus "a_file" and "b_file".

    Raises kiln.Error with the CLI's message (an unreadable file, not an
    artifact, a corrupted one).
    """
    benchmark = _count(benchmark, "benchmark=", 0, _MAX_RUNS)
    data_a, name_a = _artifact_bytes(a)
    data_b, name_b = _artifact_bytes(b)
    name_a = name_a if name_a != "artifact" else "A"
    name_b = name_b if name_b != "artifact" else "B"
    text, warned = _kiln.diff(data_a, data_b, name_a, name_b, benchmark)
    _warn(warned)
    return json.loads(text)


def validate(model_or_artifact: Union[PathLike, bytes, Artifact], reference_dir: PathLike, *,
             atol: float = 1e-4, rtol: float = 1e-4, tolerance_lsb: int = 0,
             samples: Optional[int] = None,
             device: str = "local-sync", threads: Optional[int] = None,
             **recipe: Any) -> dict:
    """Runs reference samples and compares the outputs, as ``kiln validate
    --json``.

    model_or_artifact: a .kiln path, bytes or Artifact; or a model path or
        bytes, compiled first with the build settings (as kiln.compile; an
        artifact takes none).
    reference_dir: a folder of sample_0/, sample_1/, ... each holding
        input_K.npy and output_K.npy (K in signature order), or one sample in
        the folder itself; with samples=N each file stacks N samples on a
        leading axis.
    atol, rtol: an element of an f32 output passes when |got - ref| <= atol
        + rtol * |ref|.
    tolerance_lsb: an element of an integer output (int8, uint8, int32)
        passes when |got - ref| <= tolerance_lsb integer units (LSB); 0, the
        default, asks for equality (kiln validate --tolerance-lsb=).
    device, threads: as kiln.load.
{recipe}
    Returns {"outputs": [{name, elements, integer, max_abs_error, rmse,
    cosine, outside_tolerance, differing}] over all samples, "samples":
    [{"sample", "outputs"}], "tolerance": {"atol", "rtol", "lsb"}, "pass":
    bool}. Errors are absolute differences in the outputs' units (LSB for
    an integer output, "integer": True); differing counts the elements not
    equal to the reference; cosine is in [-1, 1]. A failed comparison is
    "pass": False, not an exception.

    Raises kiln.Error with the CLI's message (a missing file named with its
    path, a shape or dtype that differs from the signature, a model that
    does not compile, build settings given with an artifact); ValueError for
    a bad device, threads, atol, rtol, tolerance_lsb or samples; TypeError
    as compile.
    """
    if not (atol >= 0 and rtol >= 0):
        raise ValueError(f"atol={atol} and rtol={rtol} must be numbers >= 0")
    if isinstance(tolerance_lsb, bool) or not isinstance(tolerance_lsb, int) \
            or not 0 <= tolerance_lsb < 2**63:
        raise ValueError(f"tolerance_lsb={tolerance_lsb!r} must be an integer >= 0")
    if samples is not None:
        samples = _count(samples, "samples=", 1, _MAX_RUNS)
    device = _device(device)
    threads = _threads(device, threads)
    _settings(recipe, "validate")  # unknown keywords fail before anything runs
    data, name = _artifact_or_model(model_or_artifact)
    if data is not None:
        _refuse_settings(name, recipe, None)
    else:
        data = compile(model_or_artifact, **recipe).bytes  # type: ignore[arg-type]
        name = os.fspath(model_or_artifact) \
            if isinstance(model_or_artifact, (str, os.PathLike)) else "model"
    text = _kiln.validate(data, name, os.fspath(reference_dir), samples or 0, float(atol),
                          float(rtol), tolerance_lsb, device, threads)
    return json.loads(text)


validate.__doc__ = _format_doc(validate.__doc__ or "")


def compare(a: Union[PathLike, bytes, Artifact], b: Union[PathLike, bytes, Artifact], *,
            samples: int = 8, seed: int = 1, inputs: Optional[PathLike] = None,
            device: str = "local-sync", threads: Optional[int] = None) -> dict:
    """What quantization costs: runs two models on the same inputs and
    compares every output, as ``kiln validate A --compare-with=B --json``.

    a, b: .kiln paths, bytes or Artifacts, or model paths (compiled for this
        host with the default settings): a float model and its int8 twin, two
        exports. Their inputs and outputs must have the same shapes.
    samples, seed: random inputs in real units (uniform over a quantized
        input's range, else [-1, 1)), quantized for each model that takes
        integers; or inputs: a folder of input_K.npy (float32 real values or
        the input's own integers; N x the shape for N samples).
    device, threads: as kiln.load.

    Returns {"samples", "inputs": where they came from, "outputs": [{name,
    elements, max_abs_error, rmse, cosine, top1_agreement (None unless a
    classifier output, [N] or [1, N]), dequantized_a, dequantized_b}]},
    integer outputs dequantized (real = scale * (q - zero_point)).

    Raises kiln.Error with the CLI's message (signatures that differ, a
    missing input file, a model that does not compile); ValueError for a
    bad samples, seed, device or threads.
    """
    samples = _count(samples, "samples=", 1, _MAX_RUNS)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed={seed!r} must be an integer in [0, 2**64)")
    device = _device(device)
    threads = _threads(device, threads)
    built = []
    for model in (a, b):
        data, name = _artifact_or_model(model)
        if data is None:
            data = compile(model).bytes  # type: ignore[arg-type]
            name = os.fspath(model) if isinstance(model, (str, os.PathLike)) else "model"
        built.append((data, name))
    text = _kiln.compare(built[0][0], built[1][0], built[0][1], built[1][1], samples, seed,
                         os.fspath(inputs) if inputs is not None else "", device, threads)
    return json.loads(text)


def export(model: Union[PathLike, bytes, None] = None, *, target: Optional[str] = None,
           profile: Optional[str] = None, output_format: Optional[str] = None,
           out_dir: Optional[PathLike] = None, ram_budget: Union[int, str, None] = None,
           flash_budget: Union[int, str, None] = None, project: Optional[PathLike] = None,
           kit: bool = False, **recipe: Any) -> dict:
    """Compiles for a device and writes a deployment bundle, as ``kiln export``.

    model: the model's path (the bundle and its manifest name it), or its
        bytes (as kiln.compile; written to a temporary model.tflite, which
        the manifest and command then name; out_dir= is required).
    target: a device target ("host" default; see below); profile: "default"
        or "stripped"; output_format: "kiln" or "c-module".
    out_dir: the bundle folder (created; files not in the bundle are left
        alone); None: MODEL-TARGET-PROFILE (-c for a C module) beside the
        model, or the project's export folder.
    ram_budget, flash_budget: bytes (int) or text with K/KiB/M/MiB ("256K");
        the verdict is recorded in manifest.json and a budget exceeded warns.
    kit: add a firmware kit, as ``kiln export --kit`` with the pattern
        inputs (a Cortex-M project with a Makefile, or for a Linux target the
        runtime archive, found in ../lib/kiln/TARGET beside the Python
        interpreter as the .deb installs it; README, "Firmware kits").
    The other build settings (cpu=, tiles=, fix_shapes=, ...) as kiln.compile:
{recipe}
    Returns {"dir": folder, "files": [file names], "command": the kiln export
    command that repeats the build, "warnings": [...], "budgets": [{"memory":
    "RAM" or "flash", "bytes", "budget_bytes", "exceeded", "message"}],
    "manifest": the
    manifest.json written (target, options, files with SHA-256, sections,
    flash and RAM in bytes, one row per dispatch, budgets)}. Two exports
    with the same settings write the same bytes.

    Raises kiln.Error with the CLI's message (bad model or setting, a folder
    that cannot be written: nothing is left half-written); TypeError as
    compile.
    """
    recipe = dict(recipe, target=target, profile=profile, output_format=output_format)
    settings = _settings(recipe, "export")
    if (model is None) == (project is None):
        raise TypeError("export() takes a model or project=, one of them")
    project_path = _project_settings(project, settings, recipe)
    budgets = ["" if b is None else str(b) for b in (ram_budget, flash_budget)]
    for what, b in (("ram_budget", ram_budget), ("flash_budget", flash_budget)):
        if b is not None and (isinstance(b, bool) or not isinstance(b, (int, str))):
            raise TypeError(f"{what}= takes bytes as an int or text like '256K', got "
                            f"{type(b).__name__}")
    out = "" if out_dir is None else os.fspath(out_dir)
    if not isinstance(kit, bool):
        raise TypeError(f"kit= takes True or False, got {type(kit).__name__}")
    if project_path:
        text = _kiln.export("", project_path, settings, out, budgets[0], budgets[1], kit)
    else:
        if isinstance(model, (bytes, bytearray, memoryview)) and not out:
            raise TypeError("export() of model bytes needs out_dir= (the default folder "
                            "is beside the model's file)")
        with _model_file(model) as path:  # type: ignore[arg-type]
            text = _kiln.export(path, "", settings, out, budgets[0], budgets[1], kit)
    result = json.loads(text)
    _warn(result["warnings"])
    for check in result["budgets"]:
        if check["exceeded"]:
            _warnings.warn(check["message"], BuildWarning, stacklevel=2)
    return result


export.__doc__ = _format_doc(export.__doc__ or "")


class Module(_kiln.Module):
    """A loaded artifact, ready to run: ``kiln run``'s runtime in-process.

    Module(artifact, device="local-sync", threads=None); kiln.load is the
    same. artifact: a .kiln path, its bytes or a kiln.Artifact (copied into
    a 64-byte aligned buffer the Module owns, with its arena).

    device: "local-sync" runs on the calling thread; "local-task" on a pool
        of `threads` threads (the caller counts as one; None: every CPU this
        process may use). Outputs are bit-identical on both.

    Attributes
      inputs, outputs: tuple of TensorInfo(name, shape, dtype), in signature
          order.
      arena_bytes: int    transient memory the module owns (its persistent
          region included)
      state_count: int    variables carried from one call to the next
          (TFLite resource variables, LSTM/RNN/SVDF state; 0: stateless)
      device: str, threads: int

    State: a stateful model's calls each start from the state the previous
    call left, in the Module's own arena, as TFLite's interpreter does;
    reset_state() starts over from the initial values.

    Calling: module(x) or module(x0, x1, ...) in signature order, or
    module(name=x, ...) by input name (module(**{"input:0": x}) for names
    that are not identifiers); returns a tuple of new numpy arrays, one per
    output. Each input must have exactly its input's shape and dtype
    (float32 models take float32 arrays: no conversion); C-contiguous,
    aligned arrays are read in place, others copied once. The GIL is
    released while the model runs.

    Thread safety: a Module runs one call at a time; calls from several
    threads wait for each other and each returns its own correct outputs.
    Load one Module per thread to run in parallel. An input read in place
    must not be written by another thread until the call returns.

    Raises ValueError for a wrong input count, name, shape or dtype (naming
    the input and what it expects), or a bad device or thread count;
    kiln.Error when the runtime refuses the artifact (corrupted, another
    target's code, a CPU feature this CPU lacks: the runtime's message).
    """

    def __init__(self, artifact: Union[PathLike, bytes, Artifact], device: str = "local-sync",
                 threads: Optional[int] = None) -> None:
        device = _device(device)
        threads = _threads(device, threads)
        data, name = _artifact_bytes(artifact)
        if not _kiln.is_artifact(data) and data[4:8] == b"TFL3":
            raise _fail(f"{name}: a TFLite model, not a Kiln artifact: load "
                        f"kiln.compile({name!r}) (as kiln run compiles a model in memory)")
        super().__init__(data, name, device, threads)
        self._artifact = data
        self.inputs: Tuple[TensorInfo, ...] = tuple(TensorInfo(*t) for t in self._input_info())
        self.outputs: Tuple[TensorInfo, ...] = tuple(TensorInfo(*t)
                                                     for t in self._output_info())

    def benchmark(self, n: int = 100) -> dict:
        """Latency of n runs on this host, as ``kiln run --benchmark=n``
        measures it: one warm-up run, then n timed invocations (wall time of
        kiln_module_invoke alone) on seeded random inputs, on this Module's
        device and threads, in a second instance of the artifact.

        Returns {"median_ms", "min_ms", "max_ms" (float, milliseconds),
        "runs" (int), "device" (str), "threads" (int)}. Raises kiln.Error
        with the runtime's message.
        """
        if isinstance(n, bool) or not hasattr(n, "__index__"):
            raise TypeError(f"benchmark(n=) takes an int, got {type(n).__name__}")
        n = operator.index(n)
        if n < 1:
            raise ValueError(f"benchmark(n={n}): n must be at least 1")
        if n > _MAX_RUNS:
            raise ValueError(f"benchmark(n=...): n must be at most {_MAX_RUNS}")
        return _kiln.benchmark(self._artifact, n, self.device, self.threads)

    def __repr__(self) -> str:
        def sig(ts: Sequence[TensorInfo]) -> str:
            return ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in ts)
        return (f"<kiln.Module ({sig(self.inputs)}) -> ({sig(self.outputs)}) on "
                f"{self.device}, {self.threads} thread{'s' if self.threads != 1 else ''}>")


def load(artifact: Union[PathLike, bytes, Artifact], device: str = "local-sync",
         threads: Optional[int] = None) -> Module:
    """Loads an artifact to run it: kiln.Module(artifact, device, threads).

    artifact: a .kiln path, its bytes or a kiln.Artifact.
    device: "local-sync" (the calling thread) or "local-task" (a thread pool
        of `threads`, None = every CPU this process may use).

    Returns a kiln.Module: module.inputs / module.outputs (TensorInfo: name,
    shape, numpy dtype); module(*arrays) or module(name=array, ...) returns a
    tuple of numpy arrays; module.benchmark(n) measures latency.

    Raises kiln.Error when the file cannot be read or the runtime refuses
    the artifact (not an artifact, corrupted, another target's code, a CPU
    feature this CPU lacks); ValueError for an unknown device or a thread
    count outside 1..256 (or other than 1 for local-sync).
    """
    return Module(artifact, device, threads)


def targets() -> List[dict]:
    """The device targets target= names (kiln/Targets.h, the table the kiln
    command line, the workbench and code generation read), in order: one
    dict per target with "name" (what target= takes), "display_name",
    "triple" ("" for host: the machine compiling), the default "cpu",
    "features" and "abi", "bare_metal" (C modules only), "integer_only"
    (integer models only) and "workgroup_bytes" (the tile budget; 0 = the
    hosted default)."""
    return _kiln.targets()


def version() -> str:
    """Kiln's version, e.g. "0.1.0" (``kiln --version``). The LLVM/MLIR it
    was built with: kiln._kiln.llvm_version(); the runtime and the artifact
    format it reads: kiln._kiln.runtime_version()."""
    return _kiln.version()
