//===- PlanJson.cpp - CompilationPlan <-> JSON (llvm::json) ---------------===//
#include "kiln/Plan.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

namespace json = llvm::json;

static json::Array ints(const std::vector<int64_t> &v) {
  json::Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

std::string planToJson(const CompilationPlan &plan, bool pretty) {
  json::Array dispatches;
  for (const Dispatch &d : plan.dispatches) {
    json::Array ops;
    for (const SourceOp &op : d.ops)
      ops.push_back(json::Object{{"name", op.name}, {"source_index", op.sourceIndex}});
    json::Array kinds;
    for (const std::string &k : d.loopKinds)
      kinds.push_back(k);
    dispatches.push_back(json::Object{
        {"id", d.id},
        {"name", d.name},
        {"entry_point", entryPointOf(d)},
        {"ops", std::move(ops)},
        {"workgroup_count", json::Array{d.workgroupCount[0], d.workgroupCount[1],
                                        d.workgroupCount[2]}},
        {"tile_sizes", ints(d.tileSizes)},
        {"loop_ranges", ints(d.loopRanges)},
        {"loop_kinds", std::move(kinds)},
        {"flops", d.flops},
        {"bytes_read", d.bytesRead},
        {"bytes_written", d.bytesWritten},
        {"aliased_bindings", ints(d.aliasedBindings)},
        {"output_tensor", d.outputTensor},
        {"kernel", json::Object{{"strategy", d.kernel.kind},
                                {"register_tile", json::Array{d.kernel.tileRows,
                                                              d.kernel.tileVectors,
                                                              d.kernel.lanes}},
                                {"weight_layout", d.kernel.weightLayout},
                                {"flops_per_cycle", d.kernel.flopsPerCycle}}}});
  }
  json::Array commands;
  for (const Command &c : plan.schedule.commands) {
    json::Array bindings;
    for (const BindingRef &b : c.bindings)
      bindings.push_back(json::Object{{"buffer", b.buffer},
                                      {"offset", b.offset},
                                      {"length", b.length},
                                      {"access", b.write ? "write" : "read"}});
    json::Object cmd{{"index", c.index},
                     {"kind", toString(c.kind)},
                     {"wave", c.wave},
                     {"bindings", std::move(bindings)}};
    cmd["dispatch"] = c.dispatch >= 0 ? json::Value(c.dispatch) : json::Value(nullptr);
    if (c.kind == CommandKind::Fill)
      cmd["fill_pattern"] = static_cast<int64_t>(c.fillPattern);
    commands.push_back(std::move(cmd));
  }
  json::Array buffers;
  for (const Buffer &b : plan.memory.buffers) {
    json::Object o{{"id", b.id},
                   {"kind", toString(b.kind)},
                   {"index", b.index},
                   {"bytes", b.bytes},
                   {"offset", b.offset},
                   {"first_command", b.firstCommand},
                   {"last_command", b.lastCommand},
                   {"type", b.type}};
    o["alias_of"] = b.aliasOf >= 0 ? json::Value(b.aliasOf) : json::Value(nullptr);
    buffers.push_back(std::move(o));
  }
  json::Array outputs;
  for (const OutputBinding &o : plan.outputs)
    outputs.push_back(json::Object{{"slot", o.slot},
                                   {"name", o.name},
                                   {"buffer", o.buffer},
                                   {"bytes", o.bytes},
                                   {"writers", ints(o.writers)}});
  json::Array state;
  for (const StateVariable &v : plan.state)
    state.push_back(json::Object{{"name", v.name},
                                 {"buffer", v.buffer},
                                 {"offset", v.offset},
                                 {"bytes", v.bytes},
                                 {"type", v.type}});
  json::Array quantization;
  for (const TensorQuantization &q : plan.quantization) {
    json::Array scales;
    for (float s : q.scales)
      scales.push_back(static_cast<double>(s)); // exact: float -> double
    json::Object entry{{"tensor", q.tensor},
                       {"scales", std::move(scales)},
                       {"zero_points", ints(q.zeroPoints)},
                       {"dimension", q.dimension},
                       {"storage", q.storage}};
    // Weights only, to keep activations' entries (and old readers) as they were.
    if (q.isWeights())
      entry["readers"] = ints(q.readers);
    if (q.channels > 0)
      entry["channels"] = q.channels;
    quantization.push_back(std::move(entry));
  }
  json::Object root{
      {"source", plan.source},
      {"quantization", std::move(quantization)},
      {"outputs", std::move(outputs)},
      {"dispatches", std::move(dispatches)},
      {"schedule", json::Object{{"waves", plan.schedule.waves},
                                {"commands", std::move(commands)}}},
      {"memory", json::Object{{"arena_bytes", plan.memory.arenaBytes},
                              {"lower_bound_bytes", plan.memory.lowerBoundBytes},
                              {"planner", plan.memory.planner},
                              {"buffers", std::move(buffers)}}}};
  // Stateless plans keep their JSON (and artifacts their bytes) as before.
  if (!plan.state.empty()) {
    root["state"] = std::move(state);
    if (json::Object *memory = root.getObject("memory"))
      (*memory)["persistent_bytes"] = plan.memory.persistentBytes;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (pretty)
    os << llvm::formatv("{0:2}", json::Value(std::move(root)));
  else
    os << json::Value(std::move(root));
  return os.str();
}

namespace {

int64_t getInt(const json::Object &o, llvm::StringRef key, int64_t fallback = -1) {
  if (auto v = o.getInteger(key))
    return *v;
  return fallback;
}

std::vector<int64_t> getInts(const json::Object &o, llvm::StringRef key) {
  std::vector<int64_t> out;
  if (const json::Array *a = o.getArray(key))
    for (const json::Value &v : *a)
      if (auto i = v.getAsInteger())
        out.push_back(*i);
  return out;
}

std::string getString(const json::Object &o, llvm::StringRef key) {
  if (auto s = o.getString(key))
    return s->str();
  return "";
}

} // namespace

bool planFromJson(const std::string &text, CompilationPlan &plan, std::string &error) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = llvm::toString(parsed.takeError());
    return false;
  }
  const json::Object *root = parsed->getAsObject();
  if (!root) {
    error = "plan is not a JSON object";
    return false;
  }
  plan = CompilationPlan();
  plan.source = getString(*root, "source");
  if (const json::Array *ds = root->getArray("dispatches"))
    for (const json::Value &v : *ds) {
      const json::Object *o = v.getAsObject();
      if (!o)
        continue;
      Dispatch d;
      d.id = getInt(*o, "id");
      d.name = getString(*o, "name");
      // Empty (entryPointOf: the name) in artifacts from before deduplication.
      d.entryPoint = getString(*o, "entry_point");
      if (const json::Array *ops = o->getArray("ops"))
        for (const json::Value &op : *ops)
          if (const json::Object *oo = op.getAsObject())
            d.ops.push_back({getString(*oo, "name"), getInt(*oo, "source_index")});
      std::vector<int64_t> wg = getInts(*o, "workgroup_count");
      for (size_t i = 0; i < 3 && i < wg.size(); ++i)
        d.workgroupCount[i] = wg[i];
      d.tileSizes = getInts(*o, "tile_sizes");
      d.loopRanges = getInts(*o, "loop_ranges");
      if (const json::Array *ks = o->getArray("loop_kinds"))
        for (const json::Value &k : *ks)
          if (auto s = k.getAsString())
            d.loopKinds.push_back(s->str());
      d.flops = getInt(*o, "flops", 0);
      d.bytesRead = getInt(*o, "bytes_read", 0);
      d.bytesWritten = getInt(*o, "bytes_written", 0);
      d.aliasedBindings = getInts(*o, "aliased_bindings");
      d.outputTensor = getString(*o, "output_tensor");
      // Artifacts written before kernels had strategies read as "loops".
      if (const json::Object *k = o->getObject("kernel")) {
        d.kernel.kind = getString(*k, "strategy");
        if (d.kernel.kind.empty())
          d.kernel.kind = "loops";
        std::vector<int64_t> tile = getInts(*k, "register_tile");
        if (tile.size() == 3) {
          d.kernel.tileRows = tile[0];
          d.kernel.tileVectors = tile[1];
          d.kernel.lanes = tile[2];
        }
        d.kernel.weightLayout = getString(*k, "weight_layout");
        d.kernel.flopsPerCycle = k->getNumber("flops_per_cycle").value_or(0.0);
      }
      plan.dispatches.push_back(std::move(d));
    }
  if (const json::Array *os = root->getArray("outputs"))
    for (const json::Value &v : *os)
      if (const json::Object *o = v.getAsObject())
        plan.outputs.push_back({getInt(*o, "slot", 0), getString(*o, "name"),
                                getInt(*o, "buffer"), getInt(*o, "bytes", 0),
                                getInts(*o, "writers")});
  // Absent in artifacts from before state: a stateless plan.
  if (const json::Array *vs = root->getArray("state"))
    for (const json::Value &v : *vs)
      if (const json::Object *o = v.getAsObject())
        plan.state.push_back({getString(*o, "name"), getInt(*o, "buffer"), getInt(*o, "offset", 0),
                              getInt(*o, "bytes", 0), getString(*o, "type")});
  // Absent in artifacts from before integer models: a float plan.
  if (const json::Array *qs = root->getArray("quantization"))
    for (const json::Value &v : *qs)
      if (const json::Object *o = v.getAsObject()) {
        TensorQuantization q;
        q.tensor = getString(*o, "tensor");
        if (const json::Array *scales = o->getArray("scales"))
          for (const json::Value &s : *scales)
            if (auto f = s.getAsNumber())
              q.scales.push_back(static_cast<float>(*f));
        q.zeroPoints = getInts(*o, "zero_points");
        q.dimension = getInt(*o, "dimension");
        q.storage = getString(*o, "storage");
        q.readers = getInts(*o, "readers");
        q.channels = getInt(*o, "channels", 0);
        plan.quantization.push_back(std::move(q));
      }
  if (const json::Object *s = root->getObject("schedule")) {
    plan.schedule.waves = getInt(*s, "waves", 0);
    if (const json::Array *cs = s->getArray("commands"))
      for (const json::Value &v : *cs) {
        const json::Object *o = v.getAsObject();
        if (!o)
          continue;
        Command c;
        c.index = getInt(*o, "index");
        std::string kind = getString(*o, "kind");
        c.kind = kind == "barrier" ? CommandKind::Barrier
                 : kind == "copy"  ? CommandKind::Copy
                 : kind == "fill"  ? CommandKind::Fill
                                   : CommandKind::Dispatch;
        c.dispatch = getInt(*o, "dispatch");
        c.wave = getInt(*o, "wave", 0);
        c.fillPattern = static_cast<uint32_t>(getInt(*o, "fill_pattern", 0));
        if (const json::Array *bs = o->getArray("bindings"))
          for (const json::Value &b : *bs)
            if (const json::Object *bo = b.getAsObject())
              c.bindings.push_back({getInt(*bo, "buffer"), getInt(*bo, "offset", 0),
                                    getInt(*bo, "length", 0),
                                    getString(*bo, "access") == "write"});
        plan.schedule.commands.push_back(std::move(c));
      }
  }
  if (const json::Object *m = root->getObject("memory")) {
    plan.memory.arenaBytes = getInt(*m, "arena_bytes", 0);
    plan.memory.lowerBoundBytes = getInt(*m, "lower_bound_bytes", 0);
    plan.memory.persistentBytes = getInt(*m, "persistent_bytes", 0);
    plan.memory.planner = getString(*m, "planner");
    if (const json::Array *bs = m->getArray("buffers"))
      for (const json::Value &v : *bs) {
        const json::Object *o = v.getAsObject();
        if (!o)
          continue;
        Buffer b;
        b.id = getInt(*o, "id");
        std::string kind = getString(*o, "kind");
        b.kind = kind == "input"      ? BufferKind::Input
                 : kind == "output"   ? BufferKind::Output
                 : kind == "constant" ? BufferKind::Constant
                 : kind == "state"    ? BufferKind::State
                                      : BufferKind::Transient;
        b.index = getInt(*o, "index", 0);
        b.bytes = getInt(*o, "bytes", 0);
        b.offset = getInt(*o, "offset", 0);
        b.firstCommand = getInt(*o, "first_command");
        b.lastCommand = getInt(*o, "last_command");
        b.aliasOf = getInt(*o, "alias_of");
        b.type = getString(*o, "type");
        plan.memory.buffers.push_back(std::move(b));
      }
  }
  return true;
}

} // namespace kiln
