//===- PlanDumpTest.cpp - Trace, dispatch graph and schedule dumps --------===//
//
// BlazeFace through the `kiln` command line:
//  - `kiln run --device=local-task --threads=2 --trace=F.json` writes a
//    Chrome trace-event document: every event well formed, a dispatch
//    event per dispatch command of the plan, workgroup events inside their
//    dispatch's span;
//  - `kiln inspect --dump-dispatch-graph=F.dot` is valid Graphviz (`dot`
//    renders it) with one node per dispatch;
//  - `kiln inspect --dump-schedule=F.csv` has a header and one row per
//    command.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace kiln::test;

namespace {

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// Compiles BlazeFace to `artifact` with `kiln compile` and reads its plan
/// back from the artifact's reflection data.
void compileBlazeFace(const std::string &artifact,
                      std::shared_ptr<const kiln::CompilationPlan> &plan) {
  std::string model = realModelPath("blazeface");
  ASSERT_TRUE(std::filesystem::exists(model)) << missingModelHint(model);
  CommandResult compiled = runCommand(kilnBinary() + " compile " + shellQuote(model) + " -o " +
                                      shellQuote(artifact));
  ASSERT_EQ(compiled.exitCode, 0) << compiled.output;
  auto inspected = kiln::inspectFile(artifact, kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(inspected)) << llvm::toString(inspected.takeError());
  plan = *inspected;
}

std::optional<int64_t> intField(const llvm::json::Object &o, llvm::StringRef key) {
  if (const llvm::json::Value *v = o.get(key))
    return v->getAsInteger();
  return std::nullopt;
}

TEST(PlanDump, TraceIsChromeTraceEvents) {
  TempDir tmp;
  std::string artifact = tmp.file("blazeface.kiln");
  std::shared_ptr<const kiln::CompilationPlan> plan;
  ASSERT_NO_FATAL_FAILURE(compileBlazeFace(artifact, plan));
  std::string tracePath = tmp.file("trace.json");
  std::string command = kilnBinary() + " run " + shellQuote(artifact);
  for (const std::string &in : numberedFiles(realModelDataDir("blazeface"), "input"))
    command += " --input=@" + shellQuote(in);
  command += " --device=local-task --threads=2 --trace=" + shellQuote(tracePath);
  CommandResult ran = runCommand(command);
  ASSERT_EQ(ran.exitCode, 0) << ran.output;

  std::string text = readText(tracePath);
  ASSERT_FALSE(text.empty()) << tracePath << " is empty";
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Object *root = parsed->getAsObject();
  ASSERT_TRUE(root) << "top level is not an object";
  const llvm::json::Array *events = root->getArray("traceEvents");
  ASSERT_TRUE(events) << "no traceEvents array";
  ASSERT_FALSE(events->empty());

  std::map<int64_t, std::string> dispatchNames;
  std::map<int64_t, std::array<int64_t, 3>> grids;
  for (const kiln::Dispatch &d : plan->dispatches) {
    // Events name the dispatch, its source operators and its kernel
    // strategy: "main_dispatch_2 CONV_2D #9 ADD #10 RELU #11 [gemm 6x2x4]".
    std::string name = d.name;
    for (const kiln::SourceOp &op : d.ops)
      name += " " + op.name + " #" + std::to_string(op.sourceIndex);
    name += " [" + d.kernel.kind;
    if (d.kernel.kind != "loops")
      name += " " + std::to_string(d.kernel.tileRows) + "x" + std::to_string(d.kernel.tileVectors) +
              "x" + std::to_string(d.kernel.lanes);
    dispatchNames[d.id] = name + "]";
    grids[d.id] = d.workgroupCount;
  }
  EXPECT_TRUE(std::any_of(plan->dispatches.begin(), plan->dispatches.end(),
                          [](const kiln::Dispatch &d) { return d.kernel.kind != "loops"; }))
      << "no dispatch got a register-tiled kernel";
  struct Span {
    double ts, dur;
  };
  std::map<int64_t, std::vector<Span>> dispatchSpans;
  struct Workgroup {
    int64_t command, workgroup, tid;
    double ts, dur;
  };
  std::vector<Workgroup> workgroups;
  size_t metadata = 0;
  for (size_t i = 0; i < events->size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    const llvm::json::Object *e = (*events)[i].getAsObject();
    ASSERT_TRUE(e) << "not an object";
    ASSERT_TRUE(e->getString("name")) << "name is not a string";
    std::optional<llvm::StringRef> ph = e->getString("ph");
    ASSERT_TRUE(ph && (*ph == "X" || *ph == "M")) << "ph is not \"X\" or \"M\"";
    ASSERT_TRUE(intField(*e, "pid")) << "pid missing or not an integer";
    std::optional<int64_t> tid = intField(*e, "tid");
    ASSERT_TRUE(tid) << "tid missing or not an integer";
    if (*ph == "M") {
      ++metadata;
      continue;
    }
    std::optional<double> ts = e->getNumber("ts"), dur = e->getNumber("dur");
    ASSERT_TRUE(ts && dur) << "X event without numeric ts and dur";
    EXPECT_GE(*ts, 0.0);
    EXPECT_GE(*dur, 0.0);
    std::optional<llvm::StringRef> cat = e->getString("cat");
    ASSERT_TRUE(cat) << "X event without cat";
    const llvm::json::Object *args = e->getObject("args");
    ASSERT_TRUE(args) << "X event without args";
    std::optional<int64_t> command = intField(*args, "command");
    ASSERT_TRUE(command) << "X event without args.command";
    ASSERT_TRUE(*command >= 0 && size_t(*command) < plan->schedule.commands.size())
        << "args.command " << *command << " is not a command of the plan";
    const kiln::Command &cmd = plan->schedule.commands[*command];
    if (*cat == "dispatch") {
      ASSERT_EQ(cmd.kind, kiln::CommandKind::Dispatch) << "command " << *command;
      EXPECT_EQ(e->getString("name")->str(), dispatchNames[cmd.dispatch]);
      dispatchSpans[*command].push_back({*ts, *dur});
    } else if (*cat == "workgroup") {
      ASSERT_EQ(cmd.kind, kiln::CommandKind::Dispatch) << "command " << *command;
      std::optional<int64_t> wg = intField(*args, "workgroup");
      ASSERT_TRUE(wg) << "workgroup event without args.workgroup";
      workgroups.push_back({*command, *wg, *tid, *ts, *dur});
    } else {
      ADD_FAILURE() << "unknown cat '" << cat->str() << "'";
    }
  }
  EXPECT_GT(metadata, 0u) << "no thread_name metadata events";

  // One dispatch event per dispatch command.
  size_t dispatchCommands = 0;
  for (const kiln::Command &cmd : plan->schedule.commands)
    if (cmd.kind == kiln::CommandKind::Dispatch) {
      ++dispatchCommands;
      EXPECT_GE(dispatchSpans[cmd.index].size(), 1u)
          << "no dispatch event for command " << cmd.index << " ("
          << dispatchNames[cmd.dispatch] << ")";
    }
  EXPECT_GT(dispatchCommands, 0u);

  // Workgroups: inside their dispatch's span, on one of the two threads,
  // with ids in the dispatch's grid.
  ASSERT_FALSE(workgroups.empty()) << "no workgroup events";
  const double slack = 0.002; // us: rounding of ns -> us doubles
  std::map<int64_t, std::set<int64_t>> seen;
  for (const Workgroup &w : workgroups) {
    const kiln::Command &cmd = plan->schedule.commands[w.command];
    const std::array<int64_t, 3> &grid = grids[cmd.dispatch];
    int64_t total = grid[0] * grid[1] * grid[2];
    EXPECT_TRUE(w.workgroup >= 0 && w.workgroup < total)
        << "command " << w.command << ": workgroup " << w.workgroup << " of " << total;
    EXPECT_TRUE(w.tid == 0 || w.tid == 1) << "workgroup on thread " << w.tid << " with 2 threads";
    seen[w.command].insert(w.workgroup);
    auto spans = dispatchSpans.find(w.command);
    ASSERT_TRUE(spans != dispatchSpans.end())
        << "workgroup event of command " << w.command << " without a dispatch event";
    bool inside = false;
    for (const Span &s : spans->second)
      inside |= w.ts >= s.ts - slack && w.ts + w.dur <= s.ts + s.dur + slack;
    EXPECT_TRUE(inside) << "command " << w.command << " workgroup " << w.workgroup << " ["
                        << w.ts << ", +" << w.dur << "] lies outside its dispatch ["
                        << spans->second.front().ts << ", +" << spans->second.front().dur
                        << "]";
  }
  // The runtime's trace buffer holds 65536 events; below that nothing was
  // dropped and every workgroup of every dispatch ran exactly once.
  if (events->size() < 60000) {
    for (const kiln::Command &cmd : plan->schedule.commands) {
      if (cmd.kind != kiln::CommandKind::Dispatch)
        continue;
      const std::array<int64_t, 3> &grid = grids[cmd.dispatch];
      size_t total = size_t(grid[0] * grid[1] * grid[2]);
      size_t events = 0;
      for (const Workgroup &w : workgroups)
        events += w.command == cmd.index;
      EXPECT_EQ(seen[cmd.index].size(), total) << "command " << cmd.index << " "
                                               << dispatchNames[cmd.dispatch];
      EXPECT_EQ(events, total) << "command " << cmd.index << ": workgroup events";
    }
  }
}

/// `kiln inspect blazeface.tflite` with `flags`; returns its plan (from
/// --json) or fails.
void inspectBlazeFace(const std::string &flags, kiln::CompilationPlan &plan,
                      const TempDir &tmp) {
  std::string model = realModelPath("blazeface");
  ASSERT_TRUE(std::filesystem::exists(model)) << missingModelHint(model);
  std::string json = tmp.file("plan.json");
  // stdout to the file, stderr to the captured output.
  CommandResult r = runCommand("( " + kilnBinary() + " inspect " + shellQuote(model) +
                               " --json " + flags + " > " + shellQuote(json) + " )");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::string error;
  ASSERT_TRUE(kiln::planFromJson(readText(json), plan, error)) << error;
}

TEST(PlanDump, DispatchGraphRendersWithDot) {
  CommandResult which = runCommand("command -v dot");
  ASSERT_EQ(which.exitCode, 0)
      << "Graphviz `dot` is missing: install the Debian package graphviz "
         "(scripts/install-deps.sh)";
  TempDir tmp;
  std::string dotPath = tmp.file("blazeface.dot"), svgPath = tmp.file("blazeface.svg");
  kiln::CompilationPlan plan;
  ASSERT_NO_FATAL_FAILURE(
      inspectBlazeFace("--dump-dispatch-graph=" + shellQuote(dotPath), plan, tmp));
  std::string dot = readText(dotPath);
  ASSERT_FALSE(dot.empty()) << dotPath << " is empty";
  EXPECT_EQ(dot.rfind("digraph", 0), 0u) << "not a DOT digraph";

  CommandResult rendered =
      runCommand("dot -Tsvg " + shellQuote(dotPath) + " -o " + shellQuote(svgPath));
  ASSERT_EQ(rendered.exitCode, 0) << rendered.output;
  std::string svg = readText(svgPath);
  EXPECT_NE(svg.find("<svg"), std::string::npos) << "no <svg in " << svgPath;

  // One node per dispatch: node statements whose label starts with the
  // dispatch's entry point name, each dispatch exactly once.
  std::regex nodeLine(R"re(^\s*(\w+)\s*\[label="(main_dispatch_\d+))re");
  std::map<std::string, std::string> nodes; // node id -> entry point
  std::map<std::string, int> labels;        // entry point -> node statements
  std::istringstream lines(dot);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, nodeLine)) {
      nodes[m[1]] = m[2];
      ++labels[m[2]];
    }
  }
  EXPECT_EQ(nodes.size(), plan.dispatches.size()) << "dispatch nodes vs plan dispatches";
  std::set<std::string> entryPoints;
  for (const auto &[node, name] : nodes)
    entryPoints.insert(name);
  EXPECT_EQ(entryPoints.size(), nodes.size()) << "a dispatch drawn as two nodes";
  for (const kiln::Dispatch &d : plan.dispatches)
    EXPECT_TRUE(entryPoints.count(d.name)) << d.name << " has no node";
  // Graphviz drew every node statement: dispatches, inputs, outputs, copies.
  std::regex anyNode(R"re(^\s*(\w+)\s*\[label=)re");
  std::set<std::string> allNodes;
  std::istringstream again(dot);
  for (std::string line; std::getline(again, line);) {
    std::smatch m;
    if (std::regex_search(line, m, anyNode))
      allNodes.insert(m[1]);
  }
  size_t svgNodes = 0;
  for (size_t at = svg.find("class=\"node\""); at != std::string::npos;
       at = svg.find("class=\"node\"", at + 1))
    ++svgNodes;
  EXPECT_EQ(svgNodes, allNodes.size()) << "nodes in the SVG vs node statements in the DOT";

  // Edges between dispatches are exactly the producer -> consumer pairs of
  // the plan, recomputed here from the commands' bindings: the writer of a
  // buffer runs in an earlier wave than each of its readers.
  std::map<int64_t, int64_t> writerOf, waveOf;
  std::set<std::pair<int64_t, int64_t>> expected;
  for (const kiln::Command &c : plan.schedule.commands)
    if (c.kind == kiln::CommandKind::Dispatch) {
      waveOf[c.dispatch] = c.wave;
      for (const kiln::BindingRef &b : c.bindings)
        if (b.write)
          writerOf[b.buffer] = c.dispatch;
    }
  for (const kiln::Command &c : plan.schedule.commands)
    if (c.kind == kiln::CommandKind::Dispatch)
      for (const kiln::BindingRef &b : c.bindings)
        if (!b.write && writerOf.count(b.buffer) && writerOf[b.buffer] != c.dispatch)
          expected.insert({writerOf[b.buffer], c.dispatch});
  std::regex edgeLine(R"re(^\s*d(\d+)\s*->\s*d(\d+))re");
  std::set<std::pair<int64_t, int64_t>> drawn;
  std::istringstream edges(dot);
  for (std::string line; std::getline(edges, line);) {
    std::smatch m;
    if (std::regex_search(line, m, edgeLine)) {
      int64_t from = std::stoll(m[1]), to = std::stoll(m[2]);
      drawn.insert({from, to});
      EXPECT_LT(waveOf[from], waveOf[to]) << "edge d" << from << " -> d" << to
                                          << " goes against the waves";
    }
  }
  EXPECT_EQ(drawn, expected) << "dispatch edges differ from the plan's data flow";
}

TEST(PlanDump, ScheduleCsvHasOneRowPerCommand) {
  TempDir tmp;
  std::string csvPath = tmp.file("blazeface.csv");
  kiln::CompilationPlan plan;
  ASSERT_NO_FATAL_FAILURE(inspectBlazeFace("--dump-schedule=" + shellQuote(csvPath), plan, tmp));
  std::string csv = readText(csvPath);
  std::vector<std::string> rows;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty())
      rows.push_back(line);
  ASSERT_FALSE(rows.empty()) << csvPath << " is empty";
  EXPECT_EQ(rows.front(), "index,kind,wave,dispatch,name,workgroups,bindings");
  ASSERT_EQ(rows.size(), plan.schedule.commands.size() + 1)
      << "expected a header and one row per command";
  std::map<int64_t, const kiln::Dispatch *> byId;
  for (const kiln::Dispatch &d : plan.dispatches)
    byId[d.id] = &d;
  for (size_t i = 0; i < plan.schedule.commands.size(); ++i) {
    const kiln::Command &cmd = plan.schedule.commands[i];
    std::vector<std::string> fields;
    std::string field;
    std::istringstream row(rows[i + 1]);
    while (std::getline(row, field, ','))
      fields.push_back(field);
    if (!rows[i + 1].empty() && rows[i + 1].back() == ',')
      fields.push_back("");
    ASSERT_EQ(fields.size(), 7u) << "row " << i + 1 << ": " << rows[i + 1];
    EXPECT_EQ(fields[0], std::to_string(cmd.index)) << rows[i + 1];
    EXPECT_EQ(fields[1], kiln::toString(cmd.kind)) << rows[i + 1];
    EXPECT_EQ(fields[2], std::to_string(cmd.wave)) << rows[i + 1];
    if (cmd.kind == kiln::CommandKind::Dispatch) {
      const kiln::Dispatch &d = *byId.at(cmd.dispatch);
      EXPECT_EQ(fields[3], std::to_string(d.id)) << rows[i + 1];
      EXPECT_EQ(fields[4], d.name) << rows[i + 1];
      EXPECT_EQ(fields[5], std::to_string(d.workgroupCount[0]) + "x" +
                               std::to_string(d.workgroupCount[1]) + "x" +
                               std::to_string(d.workgroupCount[2]))
          << rows[i + 1];
    }
    size_t bindings = 0;
    std::istringstream list(fields[6]);
    for (std::string b; list >> b;)
      ++bindings;
    EXPECT_EQ(bindings, cmd.bindings.size()) << rows[i + 1];
  }
}

} // namespace
