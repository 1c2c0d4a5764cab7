//===- GuiTestSupport.h - Real models and plan facts for the GUI tests -*- C++ -*-===//
//
// The real models (fetched by CTest's fetch_models fixture, as in
// tests/support/RealModels.h, without GoogleTest) and counts computed
// straight from the core's plan structs, independently of the views.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_GUI_GUITESTSUPPORT_H
#define KILN_TESTS_GUI_GUITESTSUPPORT_H

#include "kiln/Compiler.h"
#include "kiln/Plan.h"

#include <QByteArray>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QString>
#include <QStringList>

#include <cstdlib>
#include <map>
#include <vector>

namespace kiln::guitest {

/// $KILN_MODEL_CACHE, or ~/.cache/kiln/models.
inline QString modelCacheDir() {
  const char *env = std::getenv("KILN_MODEL_CACHE");
  if (env && *env)
    return QString::fromLocal8Bit(env);
  const char *home = std::getenv("HOME");
  return QString::fromLocal8Bit(home ? home : "/tmp") + "/.cache/kiln/models";
}

/// A GUI tests settings, first thing in initTestCase: QStandardPaths
/// test mode, organization "KilnTest", application `application`, and
/// nothing kept from an earlier run (QSettings cleared: its saved layout,
/// geometry and recent files), so the test sees a new user's window
/// whatever ran on this machine before.
inline void startTestSettings(const char *application) {
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName("KilnTest");
  QCoreApplication::setApplicationName(application);
  QSettings().clear();
}

/// Chooses the item of a target list (Tune, Export) whose data is the
/// target name `target` ("thumbv7em-none-eabihf"); false if it has none.
inline bool chooseTarget(QComboBox *box, const QString &target) {
  int i = box->findData(target);
  if (i < 0)
    return false;
  box->setCurrentIndex(i);
  return true;
}

/// The real models, in RealModelTest's order.
inline QStringList realModels() { return {"alexa", "embedding", "blazeface"}; }

inline QString modelPath(const QString &name) { return modelCacheDir() + "/" + name + ".tflite"; }

/// The shape fix the embedding model needs (its batch is dynamic), as the
/// compiler's error message suggests it.
inline QString embeddingFix() { return QStringLiteral("serving_default_input_1:0=1x76x32x1"); }

/// Compile options of `name` (the embedding model's batch fixed to 1).
inline kiln::CompileOptions modelOptions(const QString &name) {
  kiln::CompileOptions options;
  if (name == QLatin1String("embedding"))
    options.fixedShapes.push_back({"0", {1, 76, 32, 1}});
  return options;
}

/// tests/data/bad/*.tflite.
inline QStringList badModels() {
  return {"custom_op",         "dynamic_batch",           "garbled",
          "int16_activations", "per_channel_scale_count", "not_tflite",
          "truncated",         "unsupported_op"};
}
inline QString badModelPath(const QString &name) { return QStringLiteral(KILN_TEST_DATA_DIR "/bad/") + name + ".tflite"; }

/// The bytes of `path` (empty if it cannot be read).
/// Writes `bytes` (an artifact) to `path`; false if it cannot.
inline bool writeAll(const QString &path, const std::vector<uint8_t> &bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(reinterpret_cast<const char *>(bytes.data()),
                                                 qint64(bytes.size())) == qint64(bytes.size());
}

inline QByteArray readAll(const QString &path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/// Every file under `dir`, relative path -> bytes.
inline std::map<QString, QByteArray> folderFiles(const QString &dir) {
  std::map<QString, QByteArray> out;
  QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    QString f = it.next();
    out[QDir(dir).relativeFilePath(f)] = readAll(f);
  }
  return out;
}

/// Copies the model `from` to `dir`/`name` (replacing a file there);
/// returns the copy's path, empty if the copy failed.
inline QString copyModelTo(const QString &dir, const QString &from, const QString &name) {
  QString to = QDir(dir).filePath(name);
  QFile::remove(to);
  return QFile::copy(from, to) ? to : QString();
}

inline int64_t countCommands(const kiln::CompilationPlan &plan, bool barriers) {
  int64_t n = 0;
  for (const kiln::Command &c : plan.schedule.commands)
    n += (c.kind == kiln::CommandKind::Barrier) == barriers;
  return n;
}

/// Ids of the buffers the aliasing view must draw, by the definition in
/// docs: transient, used by a command, non-empty, and (following aliasOf)
/// living in the arena.
inline std::vector<int64_t> placedBufferIds(const kiln::CompilationPlan &plan) {
  std::vector<int64_t> ids;
  for (const kiln::Buffer &b : plan.memory.buffers) {
    if (b.kind != kiln::BufferKind::Transient || b.firstCommand < 0 || b.bytes <= 0)
      continue;
    int64_t root = b.id;
    for (int guard = 0; guard < 1000 && plan.memory.buffers[root].aliasOf >= 0; ++guard)
      root = plan.memory.buffers[root].aliasOf;
    if (plan.memory.buffers[root].kind == kiln::BufferKind::Transient)
      ids.push_back(b.id);
  }
  return ids;
}

} // namespace kiln::guitest

#endif
