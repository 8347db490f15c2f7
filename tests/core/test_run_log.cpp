// Reading a run directory while it is written: complete lines only, corrupt lines reported with
// their numbers, non-finite values, a replaced file, a folder that disappears, and the status
// rules (running, finished, stopped, failed, stale, corrupt, missing).
#include <QtTest/QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "run/run_log.h"

using namespace foveal::core;
namespace fs = std::filesystem;

namespace {

void append(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out << text;
}

void write(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string trainLine(int it, double loss, double elapsed) {
  return "{\"kind\":\"train\",\"iteration\":" + std::to_string(it) +
         ",\"loss\":" + std::to_string(loss) + ",\"elapsed_s\":" + std::to_string(elapsed) + "}\n";
}

const char* kConfig =
    "{\"preset\":\"digits-soft\",\"model\":{\"attention\":\"soft\",\"width\":0.125},"
    "\"iterations\":100,\"batch_size\":8,\"max_non_finite\":3,\"device\":\"cpu\","
    "\"train_data\":[\"digits:len=5\"],\"eval_data\":[\"digits:len=5,split=test\"]}";

}  // namespace

class TestRunLog : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  int m_count = 0;

  fs::path newRun(bool withConfig = true) {
    const fs::path dir = fs::path(m_tmp.path().toStdString()) / ("run" + std::to_string(++m_count));
    fs::create_directories(dir);
    if (withConfig) write(dir / "config.json", kConfig);
    return dir;
  }

 private Q_SLOTS:
  void parsesFieldsAndNonFiniteValues() {
    const auto r = parseMetricLine(
        "{\"kind\":\"train\",\"iteration\":30,\"loss\":null,\"nll\":\"nan\",\"reward\":\"-inf\","
        "\"grad_norm\":\"Infinity\",\"lr\":1.0,\"reason\":\"end\",\"best\":true}",
        4);
    QCOMPARE(r.kind, std::string("train"));
    QCOMPARE(r.line, int64_t(4));
    QCOMPARE(r.iteration(), int64_t(30));
    QVERIFY(std::isnan(r.value("loss")));
    QVERIFY(std::isnan(r.value("nll")));
    QVERIFY(std::isinf(r.value("reward")) && r.value("reward") < 0);
    QVERIFY(std::isinf(r.value("grad_norm")) && r.value("grad_norm") > 0);
    QCOMPARE(r.value("lr"), 1.0);
    QCOMPARE(r.value("best"), 1.0);
    QCOMPARE(r.string("reason"), std::string("end"));
    QVERIFY(!r.has("missing"));
    QVERIFY(std::isnan(r.value("missing")));
    // Python's json writes bare NaN and Infinity.
    const auto py =
        parseMetricLine("{\"kind\": \"train\", \"loss\": NaN, \"reward\": -Infinity}", 1);
    QVERIFY(std::isnan(py.value("loss")));
    QVERIFY(std::isinf(py.value("reward")));
    // Eval records keep their per-dataset values.
    const auto ev = parseMetricLine(
        "{\"kind\":\"eval\",\"iteration\":50,\"accuracy\":0.5,\"datasets\":[{\"name\":\"a\","
        "\"accuracy\":0.25},"
        "{\"name\":\"b\",\"accuracy\":0.75}]}",
        2);
    QCOMPARE(int(ev.datasets.size()), 2);
    QCOMPARE(ev.datasets[1].name, std::string("b"));
    QCOMPARE(ev.datasets[1].values.at("accuracy"), 0.75);
  }

  void badLinesNameTheProblem_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("message");
    QTest::newRow("truncated") << "{\"kind\":\"train\",\"loss\":0."
                               << "line 7: not JSON";
    QTest::newRow("garbage") << "\x01\x02 binary"
                             << "line 7: not JSON";
    QTest::newRow("array") << "[1,2,3]"
                           << "line 7: not a JSON object";
    QTest::newRow("no kind") << "{\"iteration\":3}"
                             << "line 7: no \"kind\"";
    QTest::newRow("kind not text") << "{\"kind\":3}"
                                   << "line 7: no \"kind\"";
  }
  void badLinesNameTheProblem() {
    QFETCH(QString, line);
    QFETCH(QString, message);
    try {
      parseMetricLine(line.toStdString(), 7);
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).startsWith(message), e.what());
    }
  }

  void readsOnlyCompleteLinesAndResumesAtTheOffset() {
    const fs::path dir = newRun();
    const fs::path file = dir / "metrics.jsonl";
    MetricsReader reader(file.string());
    auto c = reader.readNew();
    QVERIFY(c.missing);
    append(file, trainLine(10, 2.5, 1.0) + trainLine(20, 2.0, 2.0));
    append(file, "{\"kind\":\"train\",\"iteration\":30,\"lo");  // half-written
    c = reader.readNew();
    QVERIFY(!c.missing && !c.reset);
    QCOMPARE(int(c.records.size()), 2);
    QCOMPARE(c.records[1].iteration(), int64_t(20));
    QVERIFY(reader.partialLine());
    QCOMPARE(reader.lines(), int64_t(2));
    c = reader.readNew();  // nothing new: the partial line still waits
    QCOMPARE(int(c.records.size()), 0);
    QVERIFY(c.corrupt.empty());
    append(file, "ss\":1.5,\"elapsed_s\":3}\n");
    c = reader.readNew();
    QCOMPARE(int(c.records.size()), 1);
    QCOMPARE(c.records[0].iteration(), int64_t(30));
    QCOMPARE(c.records[0].value("loss"), 1.5);
    QCOMPARE(c.records[0].line, int64_t(3));
    QVERIFY(!reader.partialLine());
    QCOMPARE(reader.offset(), uint64_t(fs::file_size(file)));
  }

  void corruptLinesAreCountedAndSkipped() {
    const fs::path dir = newRun();
    const fs::path file = dir / "metrics.jsonl";
    write(file, trainLine(10, 2.5, 1) + "{\"kind\":\"train\",\"loss\":\n" + "\n" +
                    "not json at all\r\n" + trainLine(20, 2.0, 2));
    RunLog log(dir.string());
    QVERIFY(log.refresh());
    QCOMPARE(int(log.records().size()), 2);
    QCOMPARE(int(log.corruptLines().size()), 2);
    QCOMPARE(log.corruptLines()[0].line, int64_t(2));
    QCOMPARE(log.corruptLines()[1].line, int64_t(4));  // the empty line 3 is no error
    QCOMPARE(log.records()[1].line, int64_t(5));
    const auto st = log.status();
    QCOMPARE(st.status, RunStatus::Running);
    QVERIFY(QString::fromStdString(st.detail).contains("2 corrupt lines"));
    QVERIFY(!log.refresh());  // nothing new
  }

  void replacedFileStartsOver() {
    const fs::path dir = newRun();
    const fs::path file = dir / "metrics.jsonl";
    write(file, trainLine(10, 2.5, 1) + trainLine(20, 2.0, 2) + trainLine(30, 1.5, 3));
    RunLog log(dir.string());
    log.refresh();
    QCOMPARE(int(log.records().size()), 3);
    const int generation = log.generation();
    // A resumed run keeps the lines up to its checkpoint and appends a resume record: shorter.
    write(file, trainLine(10, 2.5, 1) + "{\"kind\":\"resume\",\"iteration\":10}\n");
    QVERIFY(log.refresh());
    QCOMPARE(log.generation(), generation + 1);
    QCOMPARE(int(log.records().size()), 2);
    QCOMPARE(log.records()[1].kind, std::string("resume"));
    // Replaced by a different file of greater length: noticed by its bytes, not its size.
    write(file, trainLine(11, 9.0, 1) + trainLine(21, 8.0, 2) + trainLine(31, 7.0, 3) +
                    trainLine(41, 6.0, 4));
    QVERIFY(log.refresh());
    QCOMPARE(log.generation(), generation + 2);
    QCOMPARE(int(log.records().size()), 4);
    QCOMPARE(log.records()[0].iteration(), int64_t(11));
  }

  void folderThatDisappears() {
    const fs::path dir = newRun();
    append(dir / "metrics.jsonl", trainLine(10, 2.5, 1));
    RunLog log(dir.string());
    QVERIFY(log.refresh());
    QCOMPARE(log.status().status, RunStatus::Running);
    fs::remove_all(dir);
    QVERIFY(log.refresh());  // the change is reported once
    QVERIFY(!log.refresh());
    QVERIFY(!log.folderExists());
    QCOMPARE(log.status().status, RunStatus::Missing);
    QCOMPARE(int(log.records().size()), 1);  // what was read stays for the curves
    // It comes back (a sync finished): the same bytes continue, new ones are read.
    fs::create_directories(dir);
    write(dir / "config.json", kConfig);
    write(dir / "metrics.jsonl", trainLine(10, 2.5, 1) + trainLine(20, 2.0, 2));
    QVERIFY(log.refresh());
    QCOMPARE(int(log.records().size()), 2);
    QCOMPARE(log.status().status, RunStatus::Running);
  }

  void progressEtaAndBest() {
    const fs::path dir = newRun();
    write(dir / "metrics.jsonl",
          trainLine(10, 2.5, 10) + trainLine(20, 2.0, 20) +
              "{\"kind\":\"eval\",\"iteration\":20,\"accuracy\":0.4,\"best\":true}"
              "\n" +
              trainLine(30, 1.5, 30) +
              "{\"kind\":\"eval\",\"iteration\":30,\"accuracy\":0.3,\"best\":false}"
              "\n" +
              "{\"kind\":\"eval\",\"iteration\":30,\"accuracy\":null}"
              "\n");
    RunLog log(dir.string());
    log.refresh();
    QCOMPARE(log.iteration(), int64_t(30));
    QCOMPARE(log.totalIterations(), int64_t(100));
    QCOMPARE(log.bestAccuracy(), 0.4);
    // 1 s per iteration, 70 to go.
    QVERIFY(qAbs(log.etaSeconds() - 70.0) < 1e-9);
    QCOMPARE(log.config().preset, std::string("digits-soft"));
    QCOMPARE(log.config().attention, std::string("soft"));
  }

  void statusRules_data() {
    QTest::addColumn<QString>("lines");
    QTest::addColumn<int>("process");  // 0 unknown, 1 running, 2 exited
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<double>("age");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("detail");
    const QString train = "{\"kind\":\"train\",\"iteration\":10}";
    const QString end = "{\"kind\":\"checkpoint\",\"iteration\":100,\"reason\":\"end\"}";
    const QString interval = "{\"kind\":\"checkpoint\",\"iteration\":50,\"reason\":\"interval\"}";
    const QString stop = "{\"kind\":\"stop\",\"iteration\":40}";
    const QString skip = "{\"kind\":\"skip\",\"iteration\":41,\"consecutive\":3}";
    QTest::newRow("running") << train << 0 << 0 << 5.0 << int(RunStatus::Running) << "training";
    QTest::newRow("stale") << train << 0 << 0 << 4000.0 << int(RunStatus::Stale)
                           << "no update for 66 min";
    QTest::newRow("live process, old files")
        << train << 1 << 0 << 4000.0 << int(RunStatus::Running) << "training";
    QTest::newRow("finished") << train + "\n" + end << 0 << 0 << 4000.0 << int(RunStatus::Finished)
                              << "finished";
    QTest::newRow("interval checkpoint is not the end")
        << train + "\n" + interval << 0 << 0 << 9.0 << int(RunStatus::Running) << "training";
    QTest::newRow("stopped") << train + "\n" + stop << 0 << 0 << 4000.0 << int(RunStatus::Stopped)
                             << "stopped";
    QTest::newRow("failed process")
        << train << 2 << 1 << 1.0 << int(RunStatus::Failed) << "exited with code 1: boom";
    QTest::newRow("interrupted process")
        << train << 2 << 130 << 1.0 << int(RunStatus::Stopped) << "stopped";
    QTest::newRow("too many skips")
        << train + "\n" + skip << 0 << 0 << 1.0 << int(RunStatus::Failed) << "3 non-finite steps";
    QTest::newRow("no records yet")
        << QString() << 0 << 0 << 1.0 << int(RunStatus::Starting) << "no metrics yet";
    QTest::newRow("only garbage") << "garbage\n{" << 0 << 0 << 1.0 << int(RunStatus::Corrupt)
                                  << "no readable record";
  }
  void statusRules() {
    QFETCH(QString, lines);
    QFETCH(int, process);
    QFETCH(int, exitCode);
    QFETCH(double, age);
    QFETCH(int, status);
    QFETCH(QString, detail);
    const fs::path dir = newRun();
    if (!lines.isEmpty()) write(dir / "metrics.jsonl", lines.toStdString() + "\n");
    RunLog log(dir.string());
    log.refresh();
    ProcessFacts p;
    p.state = static_cast<ProcessFacts::State>(process);
    p.exitCode = exitCode;
    p.message = "boom";
    RunFacts f = log.facts(p);
    f.secondsSinceUpdate = age;
    const auto st = inferRunStatus(f, 600);
    QCOMPARE(runStatusName(st.status), runStatusName(RunStatus(status)));
    QVERIFY2(QString::fromStdString(st.detail).contains(detail), st.detail.c_str());
  }

  void foldersThatAreNotRuns() {
    // No config.json, nothing else: an old empty folder is corrupt, a fresh one is starting.
    const fs::path empty = newRun(false);
    RunLog log(empty.string());
    log.refresh();
    RunFacts f = log.facts();
    QCOMPARE(log.status().status, RunStatus::Starting);
    f.secondsSinceUpdate = 1e6;
    QCOMPARE(inferRunStatus(f, 600).status, RunStatus::Corrupt);
    // A config.json that is not JSON.
    const fs::path bad = newRun(false);
    write(bad / "config.json", "{\"iterations\": ");
    RunLog badLog(bad.string());
    badLog.refresh();
    QVERIFY(!badLog.config().ok);
    QVERIFY(badLog.config().error.find("config.json") != std::string::npos);
    const auto st = badLog.status();
    QCOMPARE(st.status, RunStatus::Corrupt);
    QVERIFY(QString::fromStdString(st.detail).contains("not a run folder"));
    // A folder that never existed.
    RunLog none((fs::path(m_tmp.path().toStdString()) / "nope").string());
    QVERIFY(!none.refresh());
    QCOMPARE(none.status().status, RunStatus::Missing);
  }
};

QTEST_APPLESS_MAIN(TestRunLog)
#include "test_run_log.moc"
