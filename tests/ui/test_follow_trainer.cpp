// Following another trainer's run from the Training page (issue 72, items 2-4): a
// deep-text-recognition-benchmark run replayed into a folder while the page follows it (its
// log_train.txt lines appended at intervals, best_accuracy.pth rewritten as train.py rewrites
// it): the curves grow beside a Foveal run's, each complete checkpoint adds a column to the probe
// filmstrip within seconds, a half-written checkpoint is never opened; the readings are kept in
// the run's side folder, so a page opened again reads nothing; a cell opens that checkpoint's
// reading in the Inspector; Foveal's own runs get the same filmstrip from history/*.fvm. The
// same over SSH against a real sshd (followsOverSsh; tests/e2e/cluster_suite.sh starts it, the
// plain suite skips it). With FOVEAL_SCREENSHOT_DIR: follow-dtrb.png and follow-strhub.png at
// 1366x768.
//
// The run replayed is tests/data/trainer_runs/dtrb: DTRB's own train.py on a tiny digit LMDB,
// its log_train.txt, the versions of best_accuracy.pth it kept (replay/, with the log's size at
// each save: replay/timeline.txt) and DTRB's own readings of the probe images at each of them
// (replay/probes.txt), which the filmstrip's must equal.
#include <QAction>
#include <QElapsedTimer>
#include <QMenu>
#include <QSignalSpy>
#include <QTabWidget>
#include <QToolButton>
#include <QtTest/QtTest>
#include <chrono>
#include <cmath>
#include <functional>

#include "import_question.h"
#include "main_window.h"
#include "metrics_plot.h"
#include "probe_filmstrip.h"
#include "probe_reader.h"
#include "remote_mirrors.h"
#include "run/run_folder.h"
#include "run/trainer_logs.h"
#include "run_list_model.h"
#include "test_models.h"
#include "trace/model_session.h"
#include "trainer_curves.h"
#include "training_page.h"

using namespace foveal;
using ui::ProbeColumn;
using ui::ProbeImage;
using ui::ProbeReading;
using ui::ProbeVerdict;

namespace {

const QString kSource = QStringLiteral(FOVEAL_SOURCE_DIR);
const QString kDtrb = kSource + "/tests/data/dtrb/";

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeFile(const QString& path, const QByteArray& bytes, bool append = false) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  QVERIFY2(f.open(append ? QIODevice::Append : QIODevice::WriteOnly | QIODevice::Truncate),
           qPrintable(path));
  QCOMPARE(f.write(bytes), bytes.size());
}

const QString kFixture = kSource + "/tests/data/trainer_runs/dtrb/";

/// The DTRB run to replay: the log up to each checkpoint's save, the checkpoint, the log lines
/// that announce it; then the rest of the log.
struct Replay {
  QByteArray opt;
  QByteArray datasetLog;
  struct Step {
    QByteArray before;  ///< the log's bytes up to the save
    QString file;       ///< the checkpoint's name in the run folder
    QString source;     ///< the version it holds
    qint64 step = -1;
    QByteArray after;  ///< the validation block that says so
  };
  std::vector<Step> steps;
  QByteArray tail;
  std::vector<ProbeImage> probes;
  /// "STEP FILE PROBE" -> DTRB's reading and confidence (replay/probes.txt).
  std::map<QString, std::pair<QString, double>> expected;
};

Replay dtrbReplay() {
  Replay r;
  const QString run = kFixture + "tiny-None-VGG-BiLSTM-Attn/";
  r.opt = readFile(run + "opt.txt");
  r.datasetLog = readFile(run + "log_dataset.txt");
  const QByteArray log = readFile(run + "log_train.txt");
  // "LOG_START LOG_END STEP FILE KEPT": the log's size when train.py saved FILE at STEP and
  // after it wrote the block; KEPT the copy of that version (or "-": not kept, except the last
  // version of a file, which is the run folder's own).
  QList<QStringList> lines;
  for (const QByteArray& l : readFile(kFixture + "replay/timeline.txt").split('\n'))
    if (!l.trimmed().isEmpty()) lines << QString::fromUtf8(l).split(QLatin1Char(' '));
  qint64 cursor = 0;
  for (int i = 0; i < lines.size(); ++i) {
    const QStringList& f = lines[i];
    if (f.size() != 5) continue;
    QString source;
    if (f[4] != QLatin1String("-")) {
      source = QDir::cleanPath(kFixture + "replay/" + f[4]);
    } else {
      bool last = true;
      for (int j = i + 1; j < lines.size(); ++j) last = last && lines[j].value(3) != f[3];
      if (last) source = run + f[3];
    }
    if (source.isEmpty()) continue;
    Replay::Step s;
    s.before = log.mid(cursor, f[0].toLongLong() - cursor);
    s.file = f[3];
    s.source = source;
    s.step = f[2].toLongLong();
    s.after = log.mid(f[0].toLongLong(), f[1].toLongLong() - f[0].toLongLong());
    cursor = f[1].toLongLong();
    r.steps.push_back(s);
  }
  r.tail = log.mid(cursor);
  for (const QString& name : {"probe-307.png", "probe-4182.png", "probe-65.png"})
    r.probes.push_back(
        {kFixture + "probes/" + name, QString(name).section('-', 1).section('.', 0, 0)});
  for (const QByteArray& l : readFile(kFixture + "replay/probes.txt").split('\n')) {
    const QStringList f = QString::fromUtf8(l).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (f.size() == 5) r.expected[f[0] + " " + f[1] + " " + f[2]] = {f[3], f[4].toDouble()};
  }
  return r;
}

/// Writes `bytes` as train.py's torch.save does: in place, in two halves with a pause between
/// (`halfway` runs then: the file is half there).
template <typename F>
void writeSlowly(const QString& path, const QByteArray& bytes, F halfway) {
  {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes.left(bytes.size() / 2)), bytes.size() / 2);
  }
  halfway();
  QFile f(path);
  QVERIFY(f.open(QIODevice::Append));
  QCOMPARE(f.write(bytes.mid(bytes.size() / 2)), bytes.size() - bytes.size() / 2);
}

int rowOf(ui::TrainingPage& page, const QString& dir) { return page.runs()->rowOf(dir); }

/// Its index among the runs the plot shows (the ticked ones, in list order).
int plotIndex(ui::TrainingPage& page, int row) {
  int shown = 0;
  for (int r = 0; r < row; ++r) shown += page.runs()->isShown(r);
  return shown;
}

int columnsRead(const ui::ProbeFilmstrip& strip, int probes) {
  int n = 0;
  for (const auto& c : strip.columns()) n += int(c.readings.size()) == probes;
  return n;
}

}  // namespace

class TestFollowTrainer : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;

  /// A Foveal run beside the foreign one: config.json, metrics.jsonl.
  QString fovealRun(const QString& name) {
    const QString dir = m_tmp.filePath(name);
    writeFile(dir + "/config.json",
              "{\"preset\":\"digits-soft\",\"model\":{\"attention\":\"soft\",\"width\":0.125},"
              "\"iterations\":300,\"batch_size\":8,\"device\":\"cpu\",\"eval_data\":[]}");
    QByteArray lines;
    for (int it = 10; it <= 300; it += 10)
      lines +=
          QStringLiteral("{\"kind\":\"train\",\"iteration\":%1,\"loss\":%2,\"elapsed_s\":%3}\n")
              .arg(it)
              .arg(2.5 * std::exp(-it / 100.0) + 0.2)
              .arg(it * 0.2)
              .toUtf8();
    writeFile(dir + "/metrics.jsonl", lines);
    return dir;
  }

  /// Replays `replay` into the folder the trainer writes (`there`: the followed folder, or the
  /// one on the SSH host), checking after each step that the curves of the page's run `localDir`
  /// grew and that each new checkpoint got a read column in seconds. While a checkpoint is half
  /// written (the trainer pausing midway), nothing may open it; `halfway` checks more.
  void replayInto(ui::TrainingPage& page, const QString& localDir, const QString& there,
                  const Replay& replay, const std::function<void(const QString&)>& halfway,
                  double* slowestColumn) {
    const int row = rowOf(page, localDir);
    QVERIFY(row >= 0);
    const int probes = int(page.filmstrip()->probes().size());
    int points = 0, expectedColumns = 0;
    // Appends log bytes; when they hold a loss line, the curve grows by it.
    const auto log = [&](const QByteArray& bytes) {
      if (bytes.isEmpty()) return;
      writeFile(there + "/log_train.txt", bytes, /*append=*/true);
      const int lines = int(bytes.count("] Train loss:"));
      if (!lines) return;
      QTRY_VERIFY_WITH_TIMEOUT(
          (page.plot()->replotNow(),
           page.plot()->pointCount(QStringLiteral("loss"), plotIndex(page, row)) >= points + lines),
          20000);
      points = page.plot()->pointCount(QStringLiteral("loss"), plotIndex(page, row));
    };
    for (const auto& step : replay.steps) {
      log(step.before);
      const QByteArray bytes = readFile(step.source);
      QVERIFY2(bytes.startsWith("PK"), qPrintable(step.source));  // torch.save's zip
      const QString path = there + "/" + step.file;
      writeSlowly(path, bytes, [&] {
        // Half there, and still for longer than the settle time: its missing zip end record
        // says it is not whole.
        const QStringList before = page.filmstrip()->opened();
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 2500) QTest::qWait(50);
        QVERIFY2(page.filmstrip()->opened() == before,
                 qPrintable("opened while half-written (" + QString::number(bytes.size() / 2) +
                            " bytes): " + page.filmstrip()->opened().join(", ")));
        for (const auto& c : page.filmstrip()->columns())
          QVERIFY2(c.size != bytes.size() / 2, "a half-written checkpoint became a column");
        if (halfway) halfway(step.file);
      });
      ++expectedColumns;
      QElapsedTimer since;
      since.start();
      log(step.after);
      QTRY_VERIFY_WITH_TIMEOUT(columnsRead(*page.filmstrip(), probes) >= expectedColumns, 30000);
      *slowestColumn = std::max(*slowestColumn, since.elapsed() / 1000.0);
    }
    log(replay.tail);
    QCOMPARE(
        points,
        int(readFile(kFixture + "tiny-None-VGG-BiLSTM-Attn/log_train.txt").count("] Train loss:")));
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_tmp.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealFollowTrainerTest"));
    QSettings().clear();
  }
  void init() { QSettings().clear(); }

  void verdicts_data() {
    QTest::addColumn<QString>("marks");  // per column: R right, W wrong, - not read
    QTest::addColumn<bool>("truth");
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("step");
    QTest::newRow("never read") << "---" << true << int(ProbeVerdict::NotRead) << -1;
    QTest::newRow("still wrong") << "WWW" << true << int(ProbeVerdict::StillWrong) << -1;
    QTest::newRow("learnt") << "WWRR" << true << int(ProbeVerdict::FirstCorrect) << 300;
    QTest::newRow("right at once") << "RRR" << true << int(ProbeVerdict::FirstCorrect) << 100;
    QTest::newRow("regressed") << "WRRW" << true << int(ProbeVerdict::Regressed) << 400;
    QTest::newRow("regressed twice") << "RWRWW" << true << int(ProbeVerdict::Regressed) << 400;
    QTest::newRow("relearnt") << "WRWR" << true << int(ProbeVerdict::FirstCorrect) << 200;
    QTest::newRow("gaps") << "W-R-" << true << int(ProbeVerdict::FirstCorrect) << 300;
    QTest::newRow("no truth") << "RRR" << false << int(ProbeVerdict::NoTruth) << -1;
  }
  void verdicts() {
    QFETCH(QString, marks);
    QFETCH(bool, truth);
    QFETCH(int, kind);
    QFETCH(int, step);
    const ProbeImage probe{QStringLiteral("/p.png"), truth ? QStringLiteral("ab") : QString()};
    std::vector<ProbeColumn> columns;
    for (int i = 0; i < marks.size(); ++i) {
      ProbeColumn c;
      c.file = QStringLiteral("c%1.pth").arg(i);
      c.step = 100 * (i + 1);
      if (marks[i] != QLatin1Char('-')) {
        ProbeReading r;
        r.reading = marks[i] == QLatin1Char('R') ? QStringLiteral("ab") : QStringLiteral("xy");
        if (truth) r.correct = marks[i] == QLatin1Char('R');
        c.readings[probe.path] = r;
      }
      columns.push_back(c);
    }
    const ProbeVerdict v = ui::probeVerdict(columns, probe);
    QCOMPARE(int(v.kind), kind);
    QCOMPARE(v.step, qint64(step));
    if (kind == ProbeVerdict::FirstCorrect)
      QCOMPARE(v.text(), QStringLiteral("first read correctly at step %1").arg(step));
    if (kind == ProbeVerdict::Regressed)
      QCOMPARE(v.text(), QStringLiteral("regressed at step %1").arg(step));
    // The probe set's accuracy per column: this probe alone.
    const auto acc = ui::probeAccuracy(columns, {probe});
    for (int i = 0; i < marks.size(); ++i) {
      if (!truth || marks[i] == QLatin1Char('-'))
        QVERIFY(std::isnan(acc[size_t(i)]));
      else
        QCOMPARE(acc[size_t(i)], marks[i] == QLatin1Char('R') ? 1.0 : 0.0);
    }
  }

  void readingsRoundTripThroughTheCache() {
    const QString side = m_tmp.filePath("cache-side");
    QVERIFY(QDir().mkpath(side));
    ProbeColumn c;
    c.file = QStringLiteral("checkpoints/epoch=1-step=40.ckpt");
    c.step = 40;
    c.size = 123456;
    c.mtimeNs = 1796174597123456789LL;  // past 2^53: kept exactly
    ProbeReading r;
    r.reading = QStringLiteral("hel lo");
    r.confidence = 0.625;
    r.correct = false;
    r.decoder = QStringLiteral("attention");
    r.imageW = 120;
    r.imageH = 32;
    r.regions = {QRectF(0, 0, 10, 32), QRectF(8, 0, 10.5, 32)};
    r.tokens = {QStringLiteral("h"), QStringLiteral("end")};
    r.attention = {{0.9f, 0.1f}, {0.25f, 0.75f}};
    c.readings[QStringLiteral("/probes/a.png")] = r;
    ProbeColumn broken;
    broken.file = QStringLiteral("best_accuracy.pth");
    broken.step = 10;
    broken.error = QStringLiteral("best_accuracy.pth: no charset");
    QVERIFY(ui::saveProbeColumns(side, {c, broken}));
    QString error;
    const auto back = ui::loadProbeColumns(side, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(back.size(), size_t(2));
    QCOMPARE(back[0].step, qint64(10));  // step order
    QCOMPARE(back[0].error, broken.error);
    const ProbeColumn& b = back[1];
    QCOMPARE(b.key(), c.key());
    const ProbeReading& br = b.readings.at(QStringLiteral("/probes/a.png"));
    QCOMPARE(br.reading, r.reading);
    QCOMPARE(br.confidence, r.confidence);
    QVERIFY(br.correct && !*br.correct);
    QCOMPARE(br.regions.size(), size_t(2));
    QCOMPARE(br.regions[1], QRectF(8, 0, 10.5, 32));
    QCOMPARE(br.tokens, r.tokens);
    QCOMPARE(br.attention.size(), size_t(2));
    QCOMPARE(br.attention[1][1], 0.75f);
    // A damaged cache is named and read again (not a crash, not a silent loss of the file).
    writeFile(side + "/filmstrip.json", "{\"version\": 1, \"columns\": [");
    QVERIFY(ui::loadProbeColumns(side, &error).empty());
    QVERIFY2(error.contains("filmstrip.json") && error.contains("byte"), qPrintable(error));
    // The probe set and the truths its files state (gt.txt beside them, as DTRB's data has).
    const auto probes = ui::probesFromFiles(
        {kDtrb + "img00_100x32.png", kDtrb + "img04_150x30.png", kDtrb + "img07_128x32_rgb.png"});
    QCOMPARE(probes.size(), size_t(3));
    QCOMPARE(probes[0].truth, QStringLiteral("42"));
    QCOMPARE(probes[1].truth, QStringLiteral("2026-11"));
    QVERIFY(ui::saveProbeSet(side, probes));
    const auto again = ui::loadProbeSet(side);
    QCOMPARE(again.size(), size_t(3));
    QCOMPARE(again[2].path, probes[2].path);
    QCOMPARE(again[2].truth, QStringLiteral("AbC123"));
  }

  void sideFolderOfAReadOnlyRun() {
    // A folder the user may not write (another user's run): the probes go to the application's
    // data folder, keyed by the path, and are found there again.
    const QString run = m_tmp.filePath("read-only-run");
    QVERIFY(QDir().mkpath(run));
    QFile::setPermissions(run, QFileDevice::ReadOwner | QFileDevice::ExeOwner);
    const bool root = QFileInfo(run).isWritable();  // root writes anyway: then the run's own
    const QString side = ui::probeSideFolder(run);
    QVERIFY(!side.isEmpty());
    if (root)
      QCOMPARE(side, run + "/.foveal/probes");
    else
      QVERIFY2(!side.startsWith(run) && side.contains("run-probes/read-only-run-"),
               qPrintable(side));
    QCOMPARE(ui::probeSideFolder(run, nullptr, false), side);
    QFile::setPermissions(run,
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  }

  // The replay, locally: curves, columns, a half-written checkpoint, the cache, the Inspector.
  void followsADtrbRunAsItTrains() {
    const QString dir = m_tmp.filePath("saved_models/tiny-None-VGG-BiLSTM-Attn");
    QVERIFY(QDir().mkpath(dir));
    const Replay replay = dtrbReplay();
    QVERIFY2(replay.steps.size() >= 3, "tests/data/trainer_runs/dtrb/replay: too few checkpoints");
    writeFile(dir + "/opt.txt", replay.opt);
    writeFile(dir + "/log_dataset.txt", replay.datasetLog);
    const QString foveal = fovealRun("foveal-soft");
    ui::TrainingPage page;
    page.setPollInterval(100);
    page.runs()->setTrainerSettleSeconds(0.5);
    page.resize(1366, 768);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.addRunFolder(foveal);
    const int row = page.addRunFolder(dir);
    QCOMPARE(page.currentRun(), row);
    QVERIFY(page.runs()->trainer(row) != nullptr);
    QCOMPARE(page.filmstrip()->runDir(), dir);
    QCOMPARE(page.bottomTabs()->currentWidget(), static_cast<QWidget*>(page.filmstrip()));
    page.filmstrip()->setProbes(replay.probes);
    QVERIFY(QFileInfo::exists(dir + "/.foveal/probes/probes.json"));
    double slowest = 0;
    replayInto(page, dir, dir, replay, nullptr, &slowest);
    qInfo("a new checkpoint's column was read %.1f s after its log block at most", slowest);
    QVERIFY2(slowest < 15, "a checkpoint took too long to reach the filmstrip");
    QVERIFY(page.runs()->isForeign(row));
    QCOMPARE(page.runs()->status(row).status, core::RunStatus::Running);
    // The foreign run's loss shares Foveal's loss panel: both runs have points there.
    page.plot()->replotNow();
    QCOMPARE(page.plot()->pointCount(QStringLiteral("loss"), plotIndex(page, rowOf(page, foveal))),
             30);
    // Every checkpoint version was opened once, and only complete ones, at the step the log
    // says it was saved at.
    const auto& strip = *page.filmstrip();
    const int saved = int(replay.steps.size());
    QCOMPARE(int(strip.columns().size()), saved);
    QCOMPARE(strip.opened().size(), saved);
    for (size_t i = 0; i < strip.columns().size(); ++i) {
      const auto& c = strip.columns()[i];
      QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
      QCOMPARE(c.step, replay.steps[i].step);
      QCOMPARE(c.file, replay.steps[i].file);
      for (const auto& p : strip.probes()) {
        const auto& r = c.readings.at(p.path);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.correct.has_value());
        QVERIFY(!r.attention.empty());
        QCOMPARE(r.attention.front().size(), r.regions.size());
        // What DTRB's own demo read in it (replay/probes.txt).
        const QString key =
            QStringLiteral("%1 %2 %3").arg(c.step).arg(c.file, QFileInfo(p.path).fileName());
        QVERIFY2(replay.expected.count(key), qPrintable(key));
        QCOMPARE(r.reading, replay.expected.at(key).first);
        QVERIFY2(std::abs(r.confidence - replay.expected.at(key).second) < 2e-4,
                 qPrintable(key + ": " + QString::number(r.confidence)));
        QCOMPARE(*r.correct, r.reading == p.truth);
      }
    }
    // Wrong at the first checkpoint, right from step 800 on (DTRB's readings above).
    for (int p = 0; p < 3; ++p) {
      const ProbeVerdict v = strip.verdict(p);
      QCOMPARE(int(v.kind), int(ProbeVerdict::FirstCorrect));
      QCOMPARE(v.step, qint64(800));
      QCOMPARE(v.text(), QStringLiteral("first read correctly at step 800"));
    }
    QCOMPARE(strip.accuracy().front(), 0.0);
    QCOMPARE(strip.accuracy().back(), 1.0);
    // The probe accuracy is a curve on the plot, at the checkpoints' steps.
    // ... chosen under More, which offers the DTRB run's tags beyond the catalogue too.
    auto* more = page.findChild<QToolButton*>(QStringLiteral("moreCurves"));
    QVERIFY(more && more->menu());
    QStringList offered;
    QAction* probeAction = nullptr;
    for (QAction* a : more->menu()->actions()) {
      offered << a->data().toString();
      if (a->data().toString() == ui::kProbeAccuracyKey) probeAction = a;
    }
    QVERIFY2(offered.contains(ui::trainerTagKey("val_loss")), qPrintable(offered.join(", ")));
    QVERIFY(offered.contains(ui::trainerTagKey("Best_accuracy")));
    QVERIFY(probeAction && !probeAction->isChecked());
    QVERIFY(!page.plot()->metrics().contains(ui::kProbeAccuracyKey));
    probeAction->setChecked(true);
    QVERIFY(page.plot()->metrics().contains(ui::kProbeAccuracyKey));
    page.plot()->replotNow();
    QTRY_COMPARE(page.plot()->pointCount(ui::kProbeAccuracyKey, plotIndex(page, row)), saved);
    // Scrubbing: the last column's reading of probe 1 goes to the Inspector, with opt.txt's
    // options remembered for the file.
    QSignalSpy chosen(&page, &ui::TrainingPage::failureChosen);
    page.filmstrip()->chooseCell(1, int(strip.columns().size()) - 1);
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(chosen[0][3].toString(), dir + "/" + strip.columns().back().file);
    QCOMPARE(chosen[0][2].toString(), QStringLiteral("4182"));
    QCOMPARE(chosen[0][1].toString(), strip.probes()[1].path);
    const auto remembered = ui::rememberedImportOptions(dir + "/" + strip.columns().back().file);
    QVERIFY(remembered.has_value());
    QCOMPARE(QString::fromStdString(remembered->at("character")), QStringLiteral("0123456789"));
    QCOMPARE(page.plot()->markedStep(), double(strip.columns().back().step));
    // An earlier version was replaced by the trainer: said, not opened.
    QSignalSpy failed(&page, &ui::TrainingPage::failed);
    page.filmstrip()->chooseCell(0, 0);
    QCOMPARE(chosen.size(), 1);
    QVERIFY(!failed.isEmpty() && failed.last()[0].toString().contains("replaced by the trainer"));
    // Hovering the curves picks the checkpoint nearest that step.
    page.plot()->hover(QStringLiteral("loss"), double(strip.columns()[1].step) + 3);
    QCOMPARE(page.filmstrip()->currentColumn(), 1);
  }

  void reopeningReadsNothing() {
    const QString dir = m_tmp.filePath("saved_models/tiny-None-VGG-BiLSTM-Attn");
    if (!QFileInfo::exists(dir + "/.foveal/probes/filmstrip.json"))
      QSKIP("needs followsADtrbRunAsItTrains");
    ui::TrainingPage page;
    page.setPollInterval(100);
    page.addRunFolder(dir);
    const auto& strip = *page.filmstrip();
    QCOMPARE(strip.probes().size(), size_t(3));
    QVERIFY(strip.columns().size() >= 1);
    QCOMPARE(columnsRead(strip, 3), int(strip.columns().size()));
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 1500) QTest::qWait(50);  // refreshes come and go: nothing to read
    QVERIFY2(strip.opened().isEmpty(), qPrintable(strip.opened().join(", ")));
    QCOMPARE(int(strip.verdict(0).kind), int(ProbeVerdict::FirstCorrect));
  }

  // Foveal's own run: the filmstrip reads its history/*.fvm.
  void fovealRunsGetTheFilmstripFromTheirHistory() {
    const QString dir = fovealRun("foveal-history");
    QVERIFY(QDir().mkpath(dir + "/history"));
    for (int i = 1; i <= 3; ++i) {
      auto session = core::ModelSession::create(test::tinyConfig("soft"), uint64_t(i));
      session->save(
          (dir + "/history/" + QString::fromStdString(core::run_folder::historyFileName(100 * i)))
              .toStdString());
    }
    writeFile(dir + "/history/iter-7.fvm", "not the trainer's name");
    writeFile(dir + "/history/iter-000000400.fvm", "damaged: not a model");
    ui::TrainingPage page;
    page.setPollInterval(100);
    page.addRunFolder(dir);
    QVERIFY(!page.runs()->trainer(page.currentRun()));
    const QString samples = QStringLiteral(FOVEAL_SAMPLES_DIR) + "/images";
    QStringList images;
    for (const QFileInfo& f : QDir(samples).entryInfoList({"digits-*.png"}, QDir::Files))
      if (images.size() < 2) images << f.filePath();
    QCOMPARE(images.size(), 2);
    QSignalSpy failed(&page, &ui::TrainingPage::failed);
    images << m_tmp.filePath("gone.png");  // a probe that is not there
    page.filmstrip()->setProbes(ui::probesFromFiles(images));
    QVERIFY(!page.filmstrip()->probes()[0].truth.isEmpty());  // digits-NNN.png states it
    QTRY_COMPARE_WITH_TIMEOUT(columnsRead(*page.filmstrip(), 3), 3, 30000);
    const auto& columns = page.filmstrip()->columns();
    QCOMPARE(columns.size(), size_t(4));  // iter-7.fvm is not the trainer's name
    QCOMPARE(columns[0].step, qint64(100));
    QCOMPARE(columns[2].step, qint64(300));
    QCOMPARE(columns[1].file, QStringLiteral("history/iter-000000200.fvm"));
    // The damaged file: its column says why, once, naming it; the missing image, its cells.
    QTRY_VERIFY_WITH_TIMEOUT(!columns[3].error.isEmpty(), 30000);
    QVERIFY2(columns[3].error.contains("iter-000000400.fvm"), qPrintable(columns[3].error));
    QVERIFY(columns[3].readings.empty());
    bool named = false;
    for (const auto& f : failed) named = named || f[0].toString().contains("iter-000000400.fvm");
    QVERIFY(named);
    const auto& missing = columns[0].readings.at(page.filmstrip()->probes()[2].path);
    QVERIFY2(missing.error.contains("gone.png"), qPrintable(missing.error));
    QVERIFY(columns[0].readings.at(page.filmstrip()->probes()[0].path).error.isEmpty());
  }

  // An event file appended record by record while the page follows it (as a SummaryWriter
  // flushes), some records in two writes: the loss curve grows by each loss record, a short last
  // record waits for its rest (no damage), and the end equals a reading of the whole file.
  void followsAnEventFileRecordByRecord() {
    const QString source =
        kSource + "/tests/data/trainer_runs/tensorboard/lightning/lightning_logs/version_0";
    const QFileInfoList files = QDir(source).entryInfoList({"events.out.tfevents.*"}, QDir::Files);
    if (files.isEmpty()) QSKIP("no Lightning event files (tests/data/trainer_runs)");
    const QByteArray bytes = readFile(files.front().filePath());
    // TFRecord framing: 8-byte length, its masked CRC (4), the data, its masked CRC (4).
    std::vector<QByteArray> records;
    for (qint64 at = 0; at + 12 <= bytes.size();) {
      quint64 n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | quint8(bytes[int(at + i)]);
      records.push_back(bytes.mid(at, qint64(12 + n + 4)));
      at += qint64(12 + n + 4);
    }
    QVERIFY(records.size() > 5);
    const QString run = m_tmp.filePath("lightning-live");
    const QString file = run + "/lightning_logs/version_0/" + files.front().fileName();
    writeFile(file, records.front());  // the file_version event: the run is recognised
    ui::TrainingPage page;
    page.setPollInterval(100);
    const int row = page.addRunFolder(run);
    QTRY_VERIFY_WITH_TIMEOUT(page.runs()->isForeign(row), 10000);
    int losses = 0;
    for (size_t i = 1; i < records.size(); ++i) {
      const QByteArray& r = records[i];
      if (i % 3 == 0) {  // in two writes, the page looking in between
        writeFile(file, r.left(r.size() / 2), true);
        QTest::qWait(300);
        writeFile(file, r.mid(r.size() / 2), true);
      } else {
        writeFile(file, r, true);
      }
      if (!r.contains("loss") || r.contains("val_loss")) continue;  // a loss scalar record
      ++losses;
      QTRY_VERIFY_WITH_TIMEOUT((page.plot()->replotNow(),
                                page.plot()->pointCount("loss", plotIndex(page, row)) >= losses),
                               10000);
    }
    QVERIFY(page.runs()->trainer(row)->damage().empty());
    core::TrainerRun reference((QFileInfo(file).absolutePath() + "/../..").toStdString());
    reference.refresh();
    QVERIFY(reference.find("loss"));
    page.plot()->replotNow();
    QCOMPARE(page.plot()->pointCount("loss", plotIndex(page, row)),
             int(reference.find("loss")->points.size()));
    QCOMPARE(losses, int(reference.find("loss")->points.size()));
    qInfo("%d records appended one by one (%d in two writes), %d loss points followed",
          int(records.size()), int(records.size() / 3), losses);
  }

  // A strhub run (Lightning's event files): its tags on Foveal's panels in Foveal's units (its
  // val_accuracy is 100 x accuracy, its val_NED 100 x (1 - NED)), the others by name.
  void strhubCurvesShareFovealsPanels() {
    const QString lightning = kSource + "/tests/data/trainer_runs/tensorboard/lightning";
    if (!QFileInfo::exists(lightning)) QSKIP("no Lightning event files (tests/data/trainer_runs)");
    core::TrainerRun run(lightning.toStdString());
    run.refresh();
    QVERIFY(run.format());
    const auto points = ui::plotPointsOf(run);
    QVERIFY(points.count(QStringLiteral("loss")));
    QVERIFY(points.count(QStringLiteral("accuracy")));
    QVERIFY(points.count(QStringLiteral("ned")));
    QVERIFY(points.count(ui::trainerTagKey(QStringLiteral("val_loss"))));
    QVERIFY(points.count(ui::trainerTagKey(QStringLiteral("hp_metric"))));
    const core::ScalarSeries* acc = run.find("val_accuracy");
    QVERIFY(acc && !acc->points.empty());
    const auto& a = points.at(QStringLiteral("accuracy")).series;
    QCOMPARE(a.values.size(), acc->points.size());
    double best = 0;
    for (size_t i = 0; i < a.values.size(); ++i) {
      QVERIFY(a.values[i] >= 0 && a.values[i] <= 1);
      QCOMPARE(a.values[i], acc->points[i].value / 100);
      best = std::max(best, a.values[i]);
    }
    QCOMPARE(ui::RunListModel::bestAccuracy(run), best);
    const core::ScalarSeries* ned = run.find("val_NED");
    QVERIFY(ned);
    const auto& n = points.at(QStringLiteral("ned")).series;
    QCOMPARE(n.values.front(), 1 - ned->points.front().value / 100);
    // Each point keeps its wall time for the time axes.
    QCOMPARE(points.at(QStringLiteral("loss")).wallTimes.size(),
             points.at(QStringLiteral("loss")).series.keys.size());
    QVERIFY(std::isfinite(points.at(QStringLiteral("loss")).wallTimes.front()));
    const auto defs = ui::extraMetricDefsOf({std::make_shared<core::TrainerRun>(std::move(run))});
    QCOMPARE(defs.front().key, ui::kProbeAccuracyKey);
    bool valLoss = false;
    for (const auto& d : defs) valLoss = valLoss || d.key == ui::trainerTagKey("val_loss");
    QVERIFY(valLoss);
  }

  // The same replay over SSH: the folder there, mirrored here by the page.
  void followsOverSsh() {
    const QString host = qEnvironmentVariable("FOVEAL_TEST_SSH_HOST");
    if (host.isEmpty()) QSKIP("no sshd (FOVEAL_TEST_SSH_HOST): tests/e2e/cluster_suite.sh");
    const QString remote = m_tmp.filePath("cluster/saved_models/TPS ResNet run");
    QVERIFY(QDir().mkpath(remote));
    const Replay replay = dtrbReplay();
    writeFile(remote + "/opt.txt", replay.opt);
    writeFile(remote + "/log_dataset.txt", replay.datasetLog);
    const QString local = m_tmp.filePath("mirrors/dtrb-on-the-cluster");
    ui::TrainingPage page;
    page.setPollInterval(100);
    page.runs()->setTrainerSettleSeconds(0.5);
    page.mirrors()->setInterval(300);
    page.mirrors()->setSettleSeconds(0.6);
    QString error;
    const int row =
        page.addRemoteFolder("ssh://" + host + "/" + remote,
                             qEnvironmentVariable("FOVEAL_TEST_SSH_CONFIG"), {}, local, &error);
    QVERIFY2(row >= 0, qPrintable(error));
    connect(page.mirrors(), &ui::RemoteMirrors::mirrored, this, [](const ui::MirrorPass& p) {
      if (!p.ok || !p.skipped.isEmpty() || !p.files.isEmpty())
        qInfo("mirror pass: %s%s %s", p.ok ? "" : qPrintable("failed: " + p.error + " "),
              qPrintable(p.files.join(", ")), qPrintable(p.skipped.join("; ")));
    });
    QTRY_VERIFY_WITH_TIMEOUT(page.mirrors()->passes() > 0, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(page.runs()->isForeign(row), 20000);
    page.filmstrip()->setProbes(replay.probes);
    double slowest = 0;
    replayInto(
        page, local, remote, replay,
        [&](const QString& name) {
          // The half file was not copied here: what is here is a whole earlier version.
          const QFileInfo here(local + "/" + name);
          QVERIFY(!here.exists() || here.size() != QFileInfo(remote + "/" + name).size());
        },
        &slowest);
    qInfo("over SSH, a new checkpoint's column was read %.1f s after its log block at most",
          slowest);
    QCOMPARE(readFile(local + "/log_train.txt"), readFile(remote + "/log_train.txt"));
    for (const auto& step : replay.steps)
      QCOMPARE(readFile(local + "/" + step.file), readFile(remote + "/" + step.file));
    QCOMPARE(int(page.filmstrip()->columns().size()), int(replay.steps.size()));
    QVERIFY(page.runs()
                ->data(page.runs()->index(row, ui::RunListModel::Where))
                .toString()
                .contains("mirrored"));
  }

  // The README's screenshots at 1366x768: a DTRB run (the replay above, read from its side
  // folder) beside a Foveal run, and a strhub-style run (Lightning's event files from
  // tests/data/trainer_runs/tensorboard/lightning, checkpoints named as strhub's ModelCheckpoint
  // names them; the import fixtures stand in for the weights).
  void screenshots() {
    const QString shots = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
    if (shots.isEmpty()) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    const QString dtrb = m_tmp.filePath("saved_models/tiny-None-VGG-BiLSTM-Attn");
    if (!QFileInfo::exists(dtrb + "/.foveal/probes/filmstrip.json"))
      QSKIP("needs followsADtrbRunAsItTrains");
    // The curves both trainers log: loss, validation accuracy and edit distance (Foveal's
    // panels), validation loss (a tag), and the probe set's accuracy.
    const auto panels = [] {
      QSettings().setValue("training/metrics", QStringList{"loss", "accuracy", "ned"});
      QSettings().setValue("training/extraMetrics", QStringList{"tag:val_loss", "probe_accuracy"});
    };
    auto shoot = [&](ui::MainWindow& w, const QString& run, const QString& name, int probes) {
      auto* page = w.trainingPage();
      page->runs()->setTrainerSettleSeconds(0.2);
      const int row = page->addRunFolder(run);
      QTRY_VERIFY_WITH_TIMEOUT(!page->runs()->trainer(row)->checkpoints().empty(), 20000);
      w.tabs()->setCurrentWidget(page);
      w.resize(1366, 768);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QTRY_VERIFY_WITH_TIMEOUT(
          !page->filmstrip()->isBusy() &&
              columnsRead(*page->filmstrip(), probes) == int(page->filmstrip()->columns().size()) &&
              !page->filmstrip()->columns().empty(),
          120000);
      // The last checkpoint's reading of the first probe chosen: the Inspector reads it, the
      // curves mark its step; then back to the Training page.
      page->filmstrip()->chooseCell(0, int(page->filmstrip()->columns().size()) - 1);
      QTRY_VERIFY_WITH_TIMEOUT(!w.isTracing() && w.trace() != nullptr, 60000);
      w.tabs()->setCurrentWidget(page);
      page->plot()->replotNow();
      page->plot()->hover(QStringLiteral("loss"), double(page->filmstrip()->columns().back().step));
      QTest::qWait(400);
      QVERIFY(w.grab().save(shots + "/" + name));
    };
    {
      panels();
      ui::MainWindow w;
      w.setConfirmClose(false);
      w.trainingPage()->addRunFolder(fovealRun("soft-digits"));
      shoot(w, dtrb, QStringLiteral("follow-dtrb.png"), 3);
    }
    QSettings().clear();
    const QString lightning = kSource + "/tests/data/trainer_runs/tensorboard/lightning";
    if (!QFileInfo::exists(lightning)) QSKIP("no Lightning event files (tests/data/trainer_runs)");
    const QString run = m_tmp.filePath("outputs/parseq/2026-11-23_08-15-02");
    for (const char* v : {"version_0", "version_1"})
      for (const QFileInfo& f : QDir(lightning + "/lightning_logs/" + v).entryInfoList(QDir::Files))
        writeFile(run + "/lightning_logs/" + v + "/" + f.fileName(), readFile(f.filePath()));
    const QString parseq = kSource + "/tests/data/parseq/";
    writeFile(run + "/checkpoints/epoch=0-step=40-val_accuracy=31.2500-val_NED=55.0000.ckpt",
              readFile(parseq + "parseq_dec2.ckpt"));
    writeFile(run + "/checkpoints/epoch=2-step=120-val_accuracy=79.9908-val_NED=91.0000.ckpt",
              readFile(parseq + "vitstr_small.ckpt"));
    writeFile(run + "/checkpoints/epoch=3-step=160-val_accuracy=87.8299-val_NED=95.0000.ckpt",
              readFile(parseq + "parseq_small.ckpt"));
    writeFile(run + "/checkpoints/last.ckpt", readFile(parseq + "parseq_small.ckpt"));
    panels();
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.trainingPage()->runs()->setTrainerSettleSeconds(0.2);
    w.trainingPage()->addRunFolder(fovealRun("soft-words"));
    auto* page = w.trainingPage();
    page->addRunFolder(run);
    page->filmstrip()->setProbes(
        ui::probesFromFiles({parseq + "img00_120x32.png", parseq + "img02_160x48.png",
                             parseq + "img07_64x24_rgb.png"}));
    shoot(w, run, QStringLiteral("follow-strhub.png"), 3);
  }
};

QTEST_MAIN(TestFollowTrainer)
#include "test_follow_trainer.moc"
