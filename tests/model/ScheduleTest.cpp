//===- ScheduleTest.cpp - Static schedule and arena plan of real models ---===//
//
// Compiles each real model in-process with default options and checks the
// plan's invariants, recomputed here from the commands' bindings rather than
// taken from the compiler:
//  - kiln::checkPlan finds nothing;
//  - the arena is within 5% of the lower bound (printed for the record);
//  - the artifact's commands are the plan's (kind, wave, entry point,
//    workgroup grid, resolved bindings), and every dispatch's grid follows
//    from its tile sizes and loop ranges;
//  - no two commands of one wave conflict on a buffer (or on arena bytes);
//  - barriers sit exactly between consecutive waves;
//  - transient buffers live in the same wave never share arena bytes.
// Plus BlazeFace's dispatch structure (fusion, folded operators).
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln_artifact_generated.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

using namespace kiln::test;
namespace fb = kiln::artifact;

namespace {

void compileReal(const std::string &name, const kiln::CompileOptions &options,
                 kiln::CompileResult &out) {
  std::string path = realModelPath(name);
  ASSERT_TRUE(std::filesystem::exists(path)) << missingModelHint(path);
  auto result = kiln::compile(path, options);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_TRUE(result->plan != nullptr);
  out = std::move(*result);
}

std::string joinLines(const std::vector<std::string> &lines, size_t max = 20) {
  std::string s;
  for (size_t i = 0; i < lines.size() && i < max; ++i)
    s += "\n  " + lines[i];
  if (lines.size() > max)
    s += "\n  ... " + std::to_string(lines.size() - max) + " more";
  return s;
}

/// First and last command (and their waves) binding each buffer, from the
/// commands' bindings.
struct Lifetime {
  int64_t firstCommand = -1, lastCommand = -1;
  int64_t firstWave = -1, lastWave = -1;
};

std::vector<Lifetime> lifetimesFromBindings(const kiln::CompilationPlan &plan) {
  std::vector<Lifetime> life(plan.memory.buffers.size());
  for (const kiln::Command &cmd : plan.schedule.commands)
    for (const kiln::BindingRef &b : cmd.bindings) {
      if (b.buffer < 0 || size_t(b.buffer) >= life.size())
        continue;
      Lifetime &l = life[b.buffer];
      if (l.firstCommand < 0 || cmd.index < l.firstCommand) {
        l.firstCommand = cmd.index;
      }
      l.lastCommand = std::max(l.lastCommand, cmd.index);
      l.firstWave = l.firstWave < 0 ? cmd.wave : std::min(l.firstWave, cmd.wave);
      l.lastWave = std::max(l.lastWave, cmd.wave);
    }
  return life;
}

int64_t aliasRoot(const kiln::CompilationPlan &plan, int64_t id) {
  for (size_t guard = 0; guard <= plan.memory.buffers.size(); ++guard) {
    int64_t next = plan.memory.buffers[id].aliasOf;
    if (next < 0)
      return id;
    id = next;
  }
  return id;
}

class Schedule : public ::testing::TestWithParam<std::string> {};

TEST_P(Schedule, PlanInvariants) {
  const std::string name = GetParam();
  kiln::CompileResult compiled;
  ASSERT_NO_FATAL_FAILURE(compileReal(name, realModelOptions(name), compiled));
  const kiln::CompilationPlan &plan = *compiled.plan;
  const auto &buffers = plan.memory.buffers;
  const auto &commands = plan.schedule.commands;
  ASSERT_FALSE(plan.dispatches.empty());
  ASSERT_FALSE(commands.empty());

  // Ids are positions (bindings refer to buffers by id).
  for (size_t i = 0; i < buffers.size(); ++i)
    ASSERT_EQ(buffers[i].id, int64_t(i));
  for (size_t i = 0; i < commands.size(); ++i) {
    ASSERT_EQ(commands[i].index, int64_t(i));
    for (const kiln::BindingRef &b : commands[i].bindings)
      ASSERT_TRUE(b.buffer >= 0 && size_t(b.buffer) < buffers.size())
          << "command " << i << " binds buffer " << b.buffer;
  }
  std::map<int64_t, const kiln::Dispatch *> byId;
  for (const kiln::Dispatch &d : plan.dispatches)
    ASSERT_TRUE(byId.emplace(d.id, &d).second) << "dispatch id " << d.id << " twice";

  {
    SCOPED_TRACE("checkPlan");
    std::vector<std::string> errors = kiln::checkPlan(plan);
    EXPECT_TRUE(errors.empty()) << errors.size() << " violation(s):" << joinLines(errors);
  }

  // Arena vs lower bound.
  {
    SCOPED_TRACE("arena");
    int64_t arena = plan.memory.arenaBytes, bound = plan.memory.lowerBoundBytes;
    RecordProperty("arena_bytes", std::to_string(arena));
    RecordProperty("lower_bound_bytes", std::to_string(bound));
    RecordProperty("planner", plan.memory.planner);
    std::cout << name << ": arena " << arena << ", lower bound " << bound << " ("
              << plan.memory.planner << ", " << plan.dispatches.size() << " dispatches, "
              << plan.schedule.waves << " waves)" << std::endl;
    EXPECT_GE(arena, bound);
    EXPECT_LE(double(arena), 1.05 * double(bound))
        << "arena " << arena << " is more than 5% above the lower bound " << bound;
    // The lower bound is the most bytes live in one wave: recomputed from
    // the bindings, between the raw sum and the sum rounded up to 64 bytes.
    std::vector<Lifetime> life = lifetimesFromBindings(plan);
    std::map<int64_t, std::pair<int64_t, int64_t>> liveAt; // wave -> raw, aligned
    for (const kiln::Buffer &b : buffers)
      if (b.kind == kiln::BufferKind::Transient && life[b.id].firstCommand >= 0)
        for (int64_t w = life[b.id].firstWave; w <= life[b.id].lastWave; ++w) {
          liveAt[w].first += b.bytes;
          liveAt[w].second += (b.bytes + 63) / 64 * 64;
        }
    int64_t rawMax = 0, alignedMax = 0;
    for (auto &[w, sums] : liveAt) {
      rawMax = std::max(rawMax, sums.first);
      alignedMax = std::max(alignedMax, sums.second);
    }
    EXPECT_GT(rawMax, 0) << "no transient buffer at all";
    EXPECT_LE(rawMax, bound);
    EXPECT_GE(alignedMax, bound);
  }

  // The artifact's command list is the plan's: same kinds and waves, each
  // dispatch runs its own entry point over the plan's workgroup grid with
  // the plan's bindings resolved to arena offsets. (A lambda: its fatal
  // failures end only this part.)
  [&] {
    SCOPED_TRACE("artifact commands");
    const std::vector<uint8_t> &bytes = compiled.artifact;
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    ASSERT_TRUE(fb::VerifyArtifactBuffer(verifier));
    const fb::Artifact *artifact = fb::GetArtifact(bytes.data());
    ASSERT_TRUE(artifact->commands());
    ASSERT_EQ(artifact->commands()->size(), commands.size());
    EXPECT_EQ(artifact->arena_bytes(), uint64_t(plan.memory.arenaBytes));
    for (size_t i = 0; i < commands.size(); ++i) {
      const kiln::Command &cmd = commands[i];
      const fb::Command *fc = artifact->commands()->Get(i);
      SCOPED_TRACE("command " + std::to_string(i));
      EXPECT_EQ(int(fc->kind()), int(cmd.kind));
      EXPECT_EQ(int64_t(fc->wave()), cmd.wave);
      if (cmd.kind != kiln::CommandKind::Dispatch)
        continue;
      ASSERT_TRUE(byId.count(cmd.dispatch)) << "unknown dispatch " << cmd.dispatch;
      const kiln::Dispatch &d = *byId[cmd.dispatch];
      ASSERT_TRUE(fc->workgroup_count());
      ASSERT_EQ(fc->workgroup_count()->size(), 3u);
      for (unsigned k = 0; k < 3; ++k)
        EXPECT_EQ(int64_t(fc->workgroup_count()->Get(k)), d.workgroupCount[k])
            << d.name << " grid dimension " << k;
      ASSERT_TRUE(artifact->executables() && fc->executable() < artifact->executables()->size());
      const fb::Executable *exe = artifact->executables()->Get(fc->executable());
      ASSERT_TRUE(exe->entry_points() && fc->entry_point() < exe->entry_points()->size());
      // The dispatch's own entry point, or that of an identical kernel.
      EXPECT_EQ(exe->entry_points()->Get(fc->entry_point())->str(), kiln::entryPointOf(d));
      ASSERT_TRUE(fc->bindings());
      ASSERT_EQ(fc->bindings()->size(), cmd.bindings.size());
      for (size_t k = 0; k < cmd.bindings.size(); ++k) {
        const kiln::BindingRef &b = cmd.bindings[k];
        const kiln::Buffer &buf = buffers[b.buffer];
        const fb::Binding *fbb = fc->bindings()->Get(k);
        EXPECT_EQ(fbb->length(), uint64_t(b.length)) << "binding " << k;
        switch (buf.kind) {
        case kiln::BufferKind::Transient:
          EXPECT_EQ(fbb->kind(), fb::BindingKind::arena) << "binding " << k;
          EXPECT_EQ(fbb->offset(), uint64_t(buf.offset + b.offset)) << "binding " << k;
          break;
        case kiln::BufferKind::Input:
          EXPECT_EQ(fbb->kind(), fb::BindingKind::input) << "binding " << k;
          EXPECT_EQ(int64_t(fbb->index()), buf.index) << "binding " << k;
          EXPECT_EQ(fbb->offset(), uint64_t(b.offset)) << "binding " << k;
          break;
        case kiln::BufferKind::Output:
          EXPECT_EQ(fbb->kind(), fb::BindingKind::output) << "binding " << k;
          EXPECT_EQ(int64_t(fbb->index()), buf.index) << "binding " << k;
          EXPECT_EQ(fbb->offset(), uint64_t(b.offset)) << "binding " << k;
          break;
        case kiln::BufferKind::Constant:
          EXPECT_EQ(fbb->kind(), fb::BindingKind::constant) << "binding " << k;
          EXPECT_EQ(int64_t(fbb->index()), buf.index) << "binding " << k;
          EXPECT_EQ(fbb->offset(), uint64_t(b.offset)) << "binding " << k;
          break;
        }
      }
    }
  }();

  // Dispatches that share an entry point do the same computation on other
  // buffers: the same loops, strategy and bindings, and the one they share
  // with is an earlier dispatch that runs its own code.
  {
    SCOPED_TRACE("shared entry points");
    for (const kiln::Dispatch &d : plan.dispatches) {
      if (kiln::entryPointOf(d) == d.name)
        continue;
      const kiln::Dispatch *owner = nullptr;
      for (const kiln::Dispatch &e : plan.dispatches)
        if (e.name == d.entryPoint)
          owner = &e;
      ASSERT_TRUE(owner) << d.name << " runs the code of unknown " << d.entryPoint;
      EXPECT_LT(owner->id, d.id) << d.name;
      EXPECT_EQ(owner->entryPoint, owner->name) << d.name << " shares a shared entry point";
      EXPECT_EQ(owner->loopRanges, d.loopRanges) << d.name;
      EXPECT_EQ(owner->loopKinds, d.loopKinds) << d.name;
      EXPECT_EQ(owner->tileSizes, d.tileSizes) << d.name;
      EXPECT_EQ(owner->kernel.kind, d.kernel.kind) << d.name;
      EXPECT_EQ(owner->aliasedBindings, d.aliasedBindings) << d.name;
      EXPECT_EQ(owner->flops, d.flops) << d.name;
    }
    // BlazeFace ends in four identical BlazeBlocks on 8x8x96 (3x3
    // depthwise, then 1x1 convolution + ADD + RELU): at least three of the
    // pointwise and two of the depthwise kernels are repeats.
    if (name == "blazeface") {
      size_t shared = 0;
      for (const kiln::Dispatch &d : plan.dispatches)
        shared += kiln::entryPointOf(d) != d.name;
      EXPECT_GE(shared, 5u);
    }
  }

  // Every dispatch is launched, and its grid follows from its tiles.
  {
    SCOPED_TRACE("workgroup grids");
    std::set<int64_t> launched;
    for (const kiln::Command &cmd : commands)
      if (cmd.kind == kiln::CommandKind::Dispatch)
        launched.insert(cmd.dispatch);
    for (const kiln::Dispatch &d : plan.dispatches) {
      EXPECT_TRUE(launched.count(d.id)) << d.name << " is never launched";
      EXPECT_EQ(d.tileSizes.size(), d.loopRanges.size()) << d.name;
      EXPECT_EQ(d.loopKinds.size(), d.loopRanges.size()) << d.name;
      auto want = expectedWorkgroupCount(d);
      EXPECT_EQ(d.workgroupCount, want)
          << d.name << ": grid " << d.workgroupCount[0] << "x" << d.workgroupCount[1] << "x"
          << d.workgroupCount[2] << ", tiles/ranges give " << want[0] << "x" << want[1] << "x"
          << want[2];
      for (int64_t c : d.workgroupCount)
        EXPECT_GE(c, 1) << d.name;
    }
  }

  // Commands of one wave are independent: none reads or writes a buffer
  // another command of the wave writes, and, resolved to memory (arena
  // offsets for transients), no written byte is touched by another command
  // of the wave.
  {
    SCOPED_TRACE("wave independence");
    std::map<int64_t, std::vector<const kiln::Command *>> byWave;
    for (const kiln::Command &cmd : commands)
      if (cmd.kind != kiln::CommandKind::Barrier)
        byWave[cmd.wave].push_back(&cmd);
    std::vector<std::string> conflicts;
    struct Access {
      int64_t command;
      int64_t space; // -1 arena, else 1 + buffer id
      int64_t begin, end;
      bool write;
      int64_t buffer;
    };
    for (auto &[wave, cmds] : byWave) {
      // Buffer level.
      std::map<int64_t, std::set<int64_t>> writers, users;
      for (const kiln::Command *c : cmds)
        for (const kiln::BindingRef &b : c->bindings) {
          users[b.buffer].insert(c->index);
          if (b.write)
            writers[b.buffer].insert(c->index);
        }
      for (auto &[buffer, w] : writers)
        for (int64_t writer : w)
          for (int64_t user : users[buffer])
            if (user != writer)
              conflicts.push_back("wave " + std::to_string(wave) + ": command " +
                                  std::to_string(user) + " uses buffer " +
                                  std::to_string(buffer) + " that command " +
                                  std::to_string(writer) + " writes");
      // Memory level.
      std::vector<Access> accesses;
      for (const kiln::Command *c : cmds)
        for (const kiln::BindingRef &b : c->bindings) {
          const kiln::Buffer &buf = buffers[b.buffer];
          Access a{c->index, 1 + b.buffer, b.offset, b.offset + b.length, b.write, b.buffer};
          if (buf.kind == kiln::BufferKind::Transient) {
            a.space = -1;
            a.begin += buf.offset;
            a.end += buf.offset;
          }
          accesses.push_back(a);
        }
      for (size_t i = 0; i < accesses.size(); ++i)
        for (size_t j = i + 1; j < accesses.size(); ++j) {
          const Access &a = accesses[i], &b = accesses[j];
          if (a.command == b.command || a.space != b.space || !(a.write || b.write))
            continue;
          if (a.begin < b.end && b.begin < a.end && a.buffer != b.buffer)
            conflicts.push_back("wave " + std::to_string(wave) + ": commands " +
                                std::to_string(a.command) + " and " +
                                std::to_string(b.command) + " touch the same arena bytes [" +
                                std::to_string(std::max(a.begin, b.begin)) + ", " +
                                std::to_string(std::min(a.end, b.end)) + ") (buffers " +
                                std::to_string(a.buffer) + ", " + std::to_string(b.buffer) +
                                "), one writing");
        }
    }
    EXPECT_TRUE(conflicts.empty()) << conflicts.size() << " conflict(s):"
                                   << joinLines(conflicts);

    // And every read of a buffer the model does not provide sees a write
    // from an earlier wave.
    std::map<int64_t, int64_t> firstWrite;
    for (const kiln::Command &cmd : commands)
      for (const kiln::BindingRef &b : cmd.bindings)
        if (b.write && !firstWrite.count(b.buffer))
          firstWrite[b.buffer] = cmd.wave;
    for (const kiln::Command &cmd : commands)
      for (const kiln::BindingRef &b : cmd.bindings) {
        kiln::BufferKind kind = buffers[b.buffer].kind;
        if (b.write || kind == kiln::BufferKind::Input || kind == kiln::BufferKind::Constant)
          continue;
        EXPECT_TRUE(firstWrite.count(b.buffer) && firstWrite[b.buffer] < cmd.wave)
            << "command " << cmd.index << " (wave " << cmd.wave << ") reads buffer "
            << b.buffer << " not written by an earlier wave";
      }
  }

  // Barriers sit exactly between consecutive waves: waves ascend by at most
  // one from command to command, a barrier separates every change of wave
  // and nothing else, and there are waves - 1 of them.
  {
    SCOPED_TRACE("barriers");
    EXPECT_NE(commands.front().kind, kiln::CommandKind::Barrier) << "leading barrier";
    EXPECT_NE(commands.back().kind, kiln::CommandKind::Barrier) << "trailing barrier";
    EXPECT_EQ(commands.front().wave, 0);
    int64_t barriers = 0, previousWave = -1;
    bool barrierPending = false;
    for (const kiln::Command &cmd : commands) {
      if (cmd.kind == kiln::CommandKind::Barrier) {
        EXPECT_FALSE(barrierPending) << "two barriers in a row at command " << cmd.index;
        barrierPending = true;
        ++barriers;
        continue;
      }
      if (previousWave >= 0) {
        if (cmd.wave == previousWave)
          EXPECT_FALSE(barrierPending)
              << "barrier inside wave " << cmd.wave << " before command " << cmd.index;
        else if (cmd.wave == previousWave + 1)
          EXPECT_TRUE(barrierPending) << "no barrier between waves " << previousWave
                                      << " and " << cmd.wave << " (command " << cmd.index
                                      << ")";
        else
          ADD_FAILURE() << "command " << cmd.index << " goes from wave " << previousWave
                        << " to wave " << cmd.wave;
      }
      previousWave = cmd.wave;
      barrierPending = false;
    }
    EXPECT_EQ(previousWave + 1, plan.schedule.waves);
    EXPECT_EQ(barriers, plan.schedule.waves - 1);
  }

  // Transient buffers: the recorded first/last commands match the bindings,
  // and two buffers whose wave spans (first/last command -> wave) overlap
  // never share arena bytes (unless one aliases the other).
  {
    SCOPED_TRACE("arena overlap");
    std::vector<Lifetime> life = lifetimesFromBindings(plan);
    struct Placed {
      int64_t id, begin, end, firstWave, lastWave;
    };
    std::vector<Placed> placed;
    for (const kiln::Buffer &b : buffers) {
      EXPECT_EQ(b.firstCommand, life[b.id].firstCommand) << "buffer " << b.id;
      EXPECT_EQ(b.lastCommand, life[b.id].lastCommand) << "buffer " << b.id;
      if (b.kind != kiln::BufferKind::Transient || b.firstCommand < 0 ||
          b.lastCommand >= int64_t(commands.size()))
        continue;
      EXPECT_GE(b.offset, 0) << "buffer " << b.id;
      EXPECT_LE(b.offset + b.bytes, plan.memory.arenaBytes) << "buffer " << b.id;
      placed.push_back({b.id, b.offset, b.offset + b.bytes, commands[b.firstCommand].wave,
                        commands[b.lastCommand].wave});
    }
    EXPECT_FALSE(placed.empty());
    std::vector<std::string> overlaps;
    for (size_t i = 0; i < placed.size(); ++i)
      for (size_t j = i + 1; j < placed.size(); ++j) {
        const Placed &a = placed[i], &b = placed[j];
        bool together = a.firstWave <= b.lastWave && b.firstWave <= a.lastWave;
        bool overlap = a.begin < b.end && b.begin < a.end;
        if (together && overlap && aliasRoot(plan, a.id) != aliasRoot(plan, b.id))
          overlaps.push_back("buffers " + std::to_string(a.id) + " [" +
                             std::to_string(a.begin) + ", " + std::to_string(a.end) +
                             ") waves " + std::to_string(a.firstWave) + "-" +
                             std::to_string(a.lastWave) + " and " + std::to_string(b.id) +
                             " [" + std::to_string(b.begin) + ", " + std::to_string(b.end) +
                             ") waves " + std::to_string(b.firstWave) + "-" +
                             std::to_string(b.lastWave));
      }
    EXPECT_TRUE(overlaps.empty()) << overlaps.size() << " overlap(s):" << joinLines(overlaps);
  }
}

INSTANTIATE_TEST_SUITE_P(RealModel, Schedule, ::testing::ValuesIn(realModelNames()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

// BlazeFace has 164 TFLite operators: 74 DEQUANTIZE (fp16 weights, folded
// into constants at import, so they launch nothing), ADD 16, CONCATENATION
// 2, CONV_2D 21, DEPTHWISE_CONV_2D 16, MAX_POOL_2D 3, RELU 17, RESHAPE 4 and
// PAD 11 (counted from the flatbuffer's operator list). Without the
// DEQUANTIZEs that leaves 90 operators; fusion must give fewer dispatches.
TEST(BlazeFaceStructure, FusesOperatorsIntoFewerDispatches) {
  kiln::CompileResult compiled;
  ASSERT_NO_FATAL_FAILURE(
      compileReal("blazeface", realModelOptions("blazeface"), compiled));
  const kiln::CompilationPlan &plan = *compiled.plan;
  const size_t operatorsWithoutDequantize = 164 - 74;
  std::cout << "blazeface: " << plan.dispatches.size() << " dispatches for "
            << operatorsWithoutDequantize << " operators (164 with DEQUANTIZE)" << std::endl;
  RecordProperty("dispatches", std::to_string(plan.dispatches.size()));
  EXPECT_LT(plan.dispatches.size(), operatorsWithoutDequantize);

  bool convWithRelu = false;
  std::map<std::string, std::set<int64_t>> sourcesByType;
  for (const kiln::Dispatch &d : plan.dispatches) {
    bool conv = false, relu = false, onlyReshape = !d.ops.empty();
    for (const kiln::SourceOp &op : d.ops) {
      conv |= op.name == "CONV_2D";
      relu |= op.name == "RELU";
      onlyReshape &= op.name == "RESHAPE";
      sourcesByType[op.name].insert(op.sourceIndex);
      EXPECT_NE(op.name, "DEQUANTIZE") << d.name << ": DEQUANTIZE should fold at import";
      EXPECT_TRUE(op.sourceIndex >= 0 && op.sourceIndex < 164)
          << d.name << ": " << op.name << " has source index " << op.sourceIndex;
    }
    convWithRelu |= conv && relu;
    EXPECT_FALSE(onlyReshape) << d.name << " consists only of RESHAPE ops; reshapes "
                              << "should launch nothing";
  }
  EXPECT_TRUE(convWithRelu) << "no dispatch fuses a CONV_2D with its RELU";
  // Every convolution of the model is computed by some dispatch.
  EXPECT_EQ(sourcesByType["CONV_2D"].size(), 21u);
  EXPECT_EQ(sourcesByType["DEPTHWISE_CONV_2D"].size(), 16u);
}

} // namespace
