//===- ModelsTest.cpp - The views' data layer, headless ------------------===//
//
// QAbstractItemModelTester over every item model with the real models'
// plans; the timeline estimate, the graph layout and the aliasing view
// checked against counts taken from the plan itself.
//
//===----------------------------------------------------------------------===//
#include "GuiTestSupport.h"

#include "GraphLayout.h"
#include "DiagnosticsView.h"
#include "MemoryView.h"
#include "PlanModels.h"
#include "Timeline.h"

#include "kiln/Artifact.h"
#include "kiln/Recipe.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QtTest>

#include <map>
#include <memory>
#include <set>

using namespace kiln::views;
using namespace kiln::guitest;

namespace {

std::shared_ptr<const kiln::CompilationPlan> planOf(const QString &name) {
  static std::map<QString, std::shared_ptr<const kiln::CompilationPlan>> cache;
  auto &p = cache[name];
  if (!p) {
    auto plan = kiln::planModel(modelPath(name).toStdString(), modelOptions(name));
    if (!plan) {
      qWarning("%s", llvm::toString(plan.takeError()).c_str());
      return nullptr;
    }
    p = *plan;
  }
  return p;
}

/// A plan by hand: one input, two dispatches, a transient buffer, a view
/// of it (aliasOf), an unused transient and an output.
std::shared_ptr<kiln::CompilationPlan> aliasPlan() {
  auto p = std::make_shared<kiln::CompilationPlan>();
  p->dispatches.resize(2);
  for (int i = 0; i < 2; ++i) {
    p->dispatches[i].id = i;
    p->dispatches[i].name = "main_dispatch_" + std::to_string(i);
    p->dispatches[i].ops = {{"ADD", 1 + i}};
  }
  auto buf = [&](int64_t id, kiln::BufferKind k, int64_t bytes, int64_t off, int64_t first, int64_t last, int64_t alias) {
    kiln::Buffer b;
    b.id = id, b.kind = k, b.bytes = bytes, b.offset = off, b.firstCommand = first, b.lastCommand = last, b.aliasOf = alias;
    b.type = "4xf32";
    p->memory.buffers.push_back(b);
  };
  buf(0, kiln::BufferKind::Input, 16, 0, 0, 0, -1);
  buf(1, kiln::BufferKind::Transient, 16, 0, 0, 1, -1);
  buf(2, kiln::BufferKind::Transient, 16, 0, 2, 2, 1); // view of 1
  buf(3, kiln::BufferKind::Transient, 64, 64, -1, -1, -1); // never used
  buf(4, kiln::BufferKind::Output, 16, 0, 2, 2, -1);
  p->memory.arenaBytes = 128;
  p->memory.lowerBoundBytes = 16;
  kiln::Command c0{0, kiln::CommandKind::Dispatch, 0, 0, {{0, 0, 16, false}, {1, 0, 16, true}}};
  kiln::Command c1{1, kiln::CommandKind::Barrier, -1, 0, {}};
  kiln::Command c2{2, kiln::CommandKind::Dispatch, 1, 1, {{2, 0, 16, false}, {4, 0, 16, true}}};
  p->schedule.commands = {c0, c1, c2};
  p->schedule.waves = 2;
  return p;
}

} // namespace

class ModelsTest : public QObject {
  Q_OBJECT
private slots:
  void itemModels_data() {
    QTest::addColumn<QString>("model");
    for (const QString &m : realModels())
      QTest::newRow(qPrintable(m)) << m;
  }

  void itemModels() {
    QFETCH(QString, model);
    auto plan = planOf(model);
    QVERIFY2(plan, "the model must plan (is fetch_models done?)");
    DispatchListModel dispatches;
    QAbstractItemModelTester t1(&dispatches, QAbstractItemModelTester::FailureReportingMode::QtTest);
    dispatches.setPlan(plan);
    QCOMPARE(dispatches.rowCount(), int(plan->dispatches.size()));
    for (int r = 0; r < dispatches.rowCount(); ++r) {
      const kiln::Dispatch &d = plan->dispatches[r];
      QCOMPARE(dispatches.index(r, DispatchListModel::Name).data().toString(), QString::fromStdString(d.name));
      QCOMPARE(dispatches.index(r, DispatchListModel::Flops).data().toLongLong(), d.flops);
      QCOMPARE(dispatches.rowOfDispatch(d.id), r);
      for (const kiln::SourceOp &op : d.ops) {
        QCOMPARE(dispatches.rowOfSourceOp(op.sourceIndex), r);
        QVERIFY(dispatches.index(r, DispatchListModel::Ops).data().toString().contains(
            QStringLiteral("%1 #%2").arg(QString::fromStdString(op.name)).arg(op.sourceIndex)));
      }
    }
    CommandListModel commands;
    QAbstractItemModelTester t2(&commands, QAbstractItemModelTester::FailureReportingMode::QtTest);
    commands.setPlan(plan);
    QCOMPARE(commands.rowCount(), int(plan->schedule.commands.size()));
    BufferListModel buffers;
    QAbstractItemModelTester t3(&buffers, QAbstractItemModelTester::FailureReportingMode::QtTest);
    buffers.setPlan(plan);
    QCOMPARE(buffers.rowCount(), int(plan->memory.buffers.size()));
    for (int r = 0; r < buffers.rowCount(); ++r)
      QCOMPARE(buffers.index(r, BufferListModel::Bytes).data().toLongLong(), plan->memory.buffers[r].bytes);
    // Replacing and clearing the plan keeps the models consistent.
    dispatches.setPlan(nullptr);
    QCOMPARE(dispatches.rowCount(), 0);
    dispatches.setPlan(plan);
  }

  void sectionSizesModel() {
    // Sizes from a real artifact (alexa: fast), default and stripped.
    auto a = kiln::compileArtifact(modelPath("alexa").toStdString(), {});
    QVERIFY(bool(a));
    kiln::CompileOptions so;
    QVERIFY(!kiln::applyProfile("stripped", so));
    auto b = kiln::compileArtifact(modelPath("alexa").toStdString(), so);
    QVERIFY(bool(b));
    auto sa = kiln::readSectionSizes(*a, "a"), sb = kiln::readSectionSizes(*b, "b");
    QVERIFY(bool(sa) && bool(sb));
    SectionSizesModel m;
    QAbstractItemModelTester t(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setSizes(*sa, *sb);
    QCOMPARE(m.rowCount(), int(sa->sections.size()) + 2);
    int64_t sum = 0;
    for (size_t i = 0; i < sa->sections.size(); ++i) {
      QCOMPARE(m.index(int(i), SectionSizesModel::Section).data().toString(), QString::fromStdString(sa->sections[i].first));
      QCOMPARE(m.index(int(i), SectionSizesModel::Default).data().toLongLong(), sa->sections[i].second);
      int64_t bi = 0;
      for (auto &s : sb->sections)
        if (s.first == sa->sections[i].first)
          bi = s.second;
      QCOMPARE(m.index(int(i), SectionSizesModel::Stripped).data().toLongLong(), bi);
      QCOMPARE(m.index(int(i), SectionSizesModel::Delta).data(Qt::EditRole).toLongLong(), bi - sa->sections[i].second);
      sum += sa->sections[i].second;
    }
    int total = m.rowCount() - 1;
    QCOMPARE(m.index(total, SectionSizesModel::Default).data().toLongLong(), sa->fileBytes);
    QCOMPARE(sum + sa->overhead, sa->fileBytes);
    QCOMPARE(m.index(total, SectionSizesModel::Stripped).data().toLongLong(), sb->fileBytes);
    // Without a stripped build the comparison columns are empty.
    m.setSizes(*sa, std::nullopt);
    QVERIFY(!m.index(0, SectionSizesModel::Stripped).data().isValid());
  }

  void estimatedTimeline_data() { itemModels_data(); }
  void estimatedTimeline() {
    QFETCH(QString, model);
    auto plan = planOf(model);
    QVERIFY(plan);
    TimelineData t = estimateTimeline(*plan);
    QVERIFY(!t.measured);
    QCOMPARE(int64_t(t.commands.size()), countCommands(*plan, false));
    QCOMPARE(int64_t(t.barriers.size()), countCommands(*plan, true));
    QCOMPARE(int64_t(t.lanes.size()), plan->schedule.waves);
    // Waves run in order: every command of wave w+1 starts after the
    // barrier closing wave w, which comes after every command of wave w.
    std::map<int64_t, double> waveEnd, waveStart;
    for (const TimelineBar &b : t.commands) {
      QCOMPARE(int64_t(b.lane), b.wave);
      QVERIFY(b.endUs > b.startUs);
      waveEnd[b.wave] = std::max(waveEnd[b.wave], b.endUs);
      waveStart[b.wave] = waveStart.count(b.wave) ? std::min(waveStart[b.wave], b.startUs) : b.startUs;
    }
    for (const TimelineBarrier &b : t.barriers) {
      QVERIFY(b.atUs >= waveEnd[b.wave] - 1e-9);
      if (waveStart.count(b.wave + 1))
        QVERIFY(waveStart[b.wave + 1] >= b.atUs);
    }
    // The estimate follows the cost model: a dispatch with more FLOPs and
    // bytes never gets less time.
    CostModel cm;
    for (const TimelineBar &b : t.commands)
      QCOMPARE(b.endUs - b.startUs, cm.durationUs(*plan, plan->schedule.commands[b.command]));
  }

  void measuredTimeline() {
    auto plan = aliasPlan();
    std::vector<kiln::TraceEvent> ev = {
        {0, -1, 0, 1000, 5000}, {0, 0, 1, 1100, 3000}, {0, 1, 0, 1200, 4900}, {2, -1, 0, 6000, 7000}, {2, 0, 0, 6100, 6900}};
    TimelineData t = kiln::views::measuredTimeline(*plan, ev);
    QVERIFY(t.measured);
    QCOMPARE(t.lanes.size(), 2); // threads 0 and 1
    QCOMPARE(t.commands.size(), size_t(2));
    QCOMPARE(t.workgroups.size(), size_t(3));
    QCOMPARE(t.commands[0].startUs, 0.0);
    QCOMPARE(t.commands[0].endUs, 4.0);
    QCOMPARE(t.commands[1].startUs, 5.0);
    QCOMPARE(t.workgroups[0].lane, 1);
    QCOMPARE(t.barriers.size(), size_t(1));
    QCOMPARE(t.barriers[0].atUs, 4.0);
    QVERIFY(!t.commands[0].estimated && !t.commands[1].estimated);

    // A workgroup that ends after its dispatch's own event (the threads'
    // clocks are read apart) stretches the dispatch's bar and the barrier;
    // a command without events is drawn from the cost model and says so.
    std::vector<kiln::TraceEvent> late = {{0, -1, 0, 1000, 5000}, {0, 0, 1, 1100, 5600}};
    TimelineData u = kiln::views::measuredTimeline(*plan, late);
    QCOMPARE(u.commands.size(), size_t(2));
    QCOMPARE(u.commands[0].endUs, 4.6);
    QVERIFY(!u.commands[0].estimated);
    QCOMPARE(u.barriers[0].atUs, 4.6);
    QVERIFY(u.commands[1].estimated);
    QCOMPARE(u.commands[1].endUs - u.commands[1].startUs,
             CostModel().durationUs(*plan, plan->schedule.commands[u.commands[1].command]));
  }

  void graphLayout_data() { itemModels_data(); }
  void graphLayout() {
    QFETCH(QString, model);
    auto plan = planOf(model);
    QVERIFY(plan);
    for (bool collapsed : {false, true}) {
      GraphLayout g = layoutPlan(*plan, collapsed, QApplication::font());
      QVERIFY2(g.error.isEmpty(), qPrintable(g.error));
      int dispatchNodes = 0, io = 0;
      std::set<int64_t> ids;
      for (const GraphNode &n : g.nodes) {
        if (n.kind == GraphNode::Dispatch) {
          ++dispatchNodes;
          ids.insert(n.id);
        } else {
          ++io;
        }
        QVERIFY(g.bounds.adjusted(-1, -1, 1, 1).contains(n.rect));
      }
      QCOMPARE(dispatchNodes, int(plan->dispatches.size()));
      QCOMPARE(int(ids.size()), int(plan->dispatches.size()));
      int ioBuffers = 0;
      for (const kiln::Buffer &b : plan->memory.buffers)
        ioBuffers += (b.kind == kiln::BufferKind::Input || b.kind == kiln::BufferKind::Output) && b.aliasOf < 0;
      QCOMPARE(io, ioBuffers);
      // Boxes never overlap.
      for (size_t i = 0; i < g.nodes.size(); ++i)
        for (size_t j = i + 1; j < g.nodes.size(); ++j)
          QVERIFY2(!g.nodes[i].rect.intersects(g.nodes[j].rect),
                   qPrintable(QStringLiteral("%1 overlaps %2").arg(g.nodes[i].title, g.nodes[j].title)));
      // Every dispatch but a source reads something: each has an in-edge.
      std::set<int> heads;
      for (const GraphEdge &e : g.edges) {
        QVERIFY(e.from >= 0 && e.from < (int)g.nodes.size() && e.to >= 0 && e.to < (int)g.nodes.size());
        QVERIFY(!e.path.isEmpty());
        QCOMPARE(e.label.isEmpty(), collapsed);
        heads.insert(e.to);
      }
      for (size_t i = 0; i < g.nodes.size(); ++i)
        if (g.nodes[i].kind == GraphNode::Dispatch)
          QVERIFY2(heads.count(int(i)), qPrintable(g.nodes[i].title + " has no input edge"));
    }
  }

  void collapsedReadableAt150Dispatches() {
    // 150 dispatches: a chain with a side branch every third one (the
    // shape of the real models, three times BlazeFace's size).
    kiln::CompilationPlan plan;
    kiln::Buffer in;
    in.id = 0, in.kind = kiln::BufferKind::Input, in.bytes = 64, in.firstCommand = 0, in.lastCommand = 0;
    plan.memory.buffers.push_back(in);
    int64_t prev = 0;
    for (int i = 0; i < 150; ++i) {
      kiln::Dispatch d;
      d.id = i;
      d.name = "main_dispatch_" + std::to_string(i);
      d.ops = {{i % 3 ? "DEPTHWISE_CONV_2D" : "CONV_2D", 2 * i}, {"RELU", 2 * i + 1}};
      plan.dispatches.push_back(d);
      kiln::Buffer out;
      out.id = int64_t(plan.memory.buffers.size());
      out.kind = kiln::BufferKind::Transient, out.bytes = 4096, out.firstCommand = i;
      plan.memory.buffers.push_back(out);
      kiln::Command c;
      c.index = i, c.dispatch = i, c.wave = i;
      c.bindings = {{prev, 0, 64, false}, {out.id, 0, 4096, true}};
      if (i % 3 == 2 && i >= 2) // also reads the output of two dispatches back
        c.bindings.push_back({out.id - 2, 0, 4096, false});
      plan.schedule.commands.push_back(c);
      prev = out.id;
    }
    plan.schedule.waves = 150;
    GraphLayout full = layoutPlan(plan, false, QApplication::font());
    GraphLayout small = layoutPlan(plan, true, QApplication::font());
    QCOMPARE(int(small.nodes.size()), 151);
    for (size_t i = 0; i < small.nodes.size(); ++i)
      for (size_t j = i + 1; j < small.nodes.size(); ++j)
        QVERIFY(!small.nodes[i].rect.intersects(small.nodes[j].rect));
    // Collapsed: much less area, and at the readable scale GraphView opens
    // with (>= 60 %) a 1000-pixel-wide view holds the whole width.
    double areaFull = full.bounds.width() * full.bounds.height();
    double areaSmall = small.bounds.width() * small.bounds.height();
    QVERIFY2(areaSmall < 0.5 * areaFull, qPrintable(QStringLiteral("%1 vs %2").arg(areaSmall).arg(areaFull)));
    QVERIFY2(small.bounds.width() * 0.6 <= 1000, qPrintable(QString::number(small.bounds.width())));
  }

  void placedBuffersAndAliases() {
    auto plan = aliasPlan();
    QVERIFY(isPlacedBuffer(*plan, plan->memory.buffers[1]));
    QVERIFY(isPlacedBuffer(*plan, plan->memory.buffers[2]));  // a view of a transient
    QVERIFY(!isPlacedBuffer(*plan, plan->memory.buffers[3])); // never used
    QVERIFY(!isPlacedBuffer(*plan, plan->memory.buffers[0]));
    MemoryView view;
    view.setPlan(plan);
    QCOMPARE(view.drawnBuffers(), (std::vector<int64_t>{1, 2}));
    QCOMPARE(view.aliasLinkCount(), 1);
    QCOMPARE(view.rectAt(1), QRectF(2, 0, 1, 16));
    QCOMPARE(view.arenaLineY(), 128.0);
    QCOMPARE(view.lowerBoundLineY(), 16.0);
    QVERIFY(view.tooltipFor(2).contains("alias of buffer 1"));
    QVERIFY(view.tooltipFor(1).contains("producer: dispatch 0 (command 0)"));
    // The graph follows the view to its producer: dispatch 0 -> dispatch 1.
    GraphLayout g = layoutPlan(*plan, false, QApplication::font());
    bool linked = false;
    for (const GraphEdge &e : g.edges)
      linked |= g.nodes[e.from].kind == GraphNode::Dispatch && g.nodes[e.from].id == 0 &&
                g.nodes[e.to].kind == GraphNode::Dispatch && g.nodes[e.to].id == 1 && e.buffer == 1;
    QVERIFY(linked);
  }

  void placedBuffersReal_data() { itemModels_data(); }
  void placedBuffersReal() {
    QFETCH(QString, model);
    auto plan = planOf(model);
    QVERIFY(plan);
    MemoryView view;
    view.setPlan(plan);
    QCOMPARE(view.drawnBuffers(), placedBufferIds(*plan));
    for (size_t i = 0; i < view.drawnBuffers().size(); ++i) {
      const kiln::Buffer &b = plan->memory.buffers[view.drawnBuffers()[i]];
      QCOMPARE(view.rectAt(int(i)), QRectF(b.firstCommand, b.offset, b.lastCommand + 1 - b.firstCommand, b.bytes));
      QVERIFY(b.offset + b.bytes <= plan->memory.arenaBytes);
    }
    QCOMPARE(view.arenaLineY(), double(plan->memory.arenaBytes));
    QCOMPARE(view.lowerBoundLineY(), double(plan->memory.lowerBoundBytes));
  }

  void operatorReferences() {
    QCOMPARE(kiln::views::DiagnosticsView::operatorIndexIn("m.tflite: operator CUSTOM #3 is not supported"), 3);
    QCOMPARE(kiln::views::DiagnosticsView::operatorIndexIn("m.tflite: OP#12 bad"), 12);
    QCOMPARE(kiln::views::DiagnosticsView::operatorIndexIn("m.tflite: operator #1 is CUMSUM (builtin code 128)"), 1);
    QCOMPARE(kiln::views::DiagnosticsView::operatorIndexIn("m.tflite: garbled"), -1);
    QCOMPARE(kiln::views::DiagnosticsView::shapeFixIn("... fix it with --fix-shape=in:0=1x76x32x1"), QString("in:0=1x76x32x1"));
  }
};

QTEST_MAIN(ModelsTest)
#include "ModelsTest.moc"
