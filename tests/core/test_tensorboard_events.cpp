// TensorBoard event files (core/run/tensorboard_events.h): CRC-32C on known vectors; the fixtures
// that PyTorch's own SummaryWriter and TensorBoard's own writer wrote (tests/data/trainer_runs/
// make_tensorboard_fixtures.py), every scalar, step and wall time read exactly as TensorBoard's
// own reader read them (expected.json); the files tailed record by record and half record by half
// record; damage named with its offset and skipped; restarts and torch's purge_step; the writer
// read back; Foveal's own trainer writing the same scalars as its metrics.jsonl, resume included.
#include <QtTest/QtTest>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "base/crc32.h"
#include "base/error.h"
#include "run/run_folder.h"
#include "run/tensorboard_events.h"
#include "train/train_config.h"
#include "train/trainer.h"

using namespace foveal::core;
namespace fs = std::filesystem;
using nlohmann::json;
using Update = RunLogReader::Update;

namespace {

const fs::path kFixtures = fs::path(FOVEAL_SOURCE_DIR) / "tests/data/trainer_runs/tensorboard";

json expected() {
  std::ifstream in(kFixtures / "expected.json");
  return json::parse(in);
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const fs::path& p, const std::string& bytes, bool append = false) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out << bytes;
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// What a monitor holds, kept up to date from the updates as the Update contract says.
struct Follower {
  std::vector<ScalarSeries> series;
  int resets = 0;
  std::vector<LogDamage> damage;

  void apply(const Update& u) {
    if (u.reset) {
      series.clear();
      damage.clear();
      ++resets;
    }
    for (const auto& [tag, step] : u.purged)
      for (auto& s : series)
        if (s.tag == tag)
          s.points.erase(std::remove_if(s.points.begin(), s.points.end(),
                                        [&](const ScalarPoint& p) { return p.step >= step; }),
                         s.points.end());
    for (const auto& n : u.series) {
      auto it = std::find_if(series.begin(), series.end(),
                             [&](const ScalarSeries& s) { return s.tag == n.tag; });
      if (it == series.end()) {
        series.push_back(n);
      } else {
        QVERIFY2(it->points.empty() || n.points.empty() ||
                     it->points.back().step < n.points.front().step,
                 qPrintable(QString::fromStdString(n.tag) + ": new points before old ones"));
        it->points.insert(it->points.end(), n.points.begin(), n.points.end());
      }
    }
    damage.insert(damage.end(), u.damage.begin(), u.damage.end());
  }
};

// "" when `got` holds exactly the series of `want` (expected.json's form), else the difference.
std::string difference(const std::vector<ScalarSeries>& got, const json& want) {
  std::vector<const ScalarSeries*> nonEmpty;
  for (const auto& s : got)
    if (!s.points.empty()) nonEmpty.push_back(&s);
  if (nonEmpty.size() != want.size())
    return std::to_string(nonEmpty.size()) + " series, expected " + std::to_string(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const ScalarSeries& s = *nonEmpty[i];
    const std::string tag = want[i].at("tag");
    if (s.tag != tag) return "series " + std::to_string(i) + " is " + s.tag + ", expected " + tag;
    const json& points = want[i].at("points");
    if (s.points.size() != points.size())
      return tag + ": " + std::to_string(s.points.size()) + " points, expected " +
             std::to_string(points.size());
    for (size_t k = 0; k < points.size(); ++k) {
      const auto& p = s.points[k];
      if (p.step != points[k][0].get<int64_t>() || !same(p.value, points[k][1].get<double>()) ||
          !same(p.wallTime, points[k][2].get<double>())) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s point %zu: (%lld, %.17g, %.17g), expected %s",
                      tag.c_str(), k, static_cast<long long>(p.step), p.value, p.wallTime,
                      points[k].dump().c_str());
        return buf;
      }
    }
  }
  return "";
}

// expected.json's form of a reader's series (the empty ones left out).
json asJson(const std::vector<ScalarSeries>& series) {
  json j = json::array();
  for (const auto& s : series) {
    json points = json::array();
    for (const auto& p : s.points) points.push_back({p.step, p.value, p.wallTime});
    if (!points.empty()) j.push_back({{"tag", s.tag}, {"points", points}});
  }
  return j;
}

std::vector<ScalarSeries> readWhole(const fs::path& dir) {
  Follower f;
  f.apply(TensorBoardRunReader(dir.string()).readNew());
  return f.series;
}

std::vector<EventRecord> records(const std::string& bytes) {
  auto s = scanEventRecords(bytes, 0, "x");
  return s.records;
}

train::TrainConfig tinyRun() {
  auto c = train::presetConfig("digits-soft", 0.125);
  c.model.maxLength = 3;
  c.trainData = {"digits:len=3,split=train,seed=1,count=40"};
  c.evalData = {"digits:len=3,split=test,seed=1,count=16",
                "digits:len=3,split=test,seed=2,count=8"};
  c.batchSize = 8;
  c.iterations = 12;
  c.logInterval = 1;
  c.evalInterval = 3;
  c.evalLimit = 16;
  c.checkpointInterval = 4;
  c.threads = 2;
  c.loaderThreads = 1;
  return c;
}

// metrics.jsonl's scalars as the trainer puts them in its event files (trainer.cpp appendEvents).
std::map<std::string, std::vector<ScalarPoint>> metricsAsEvents(const fs::path& run) {
  std::map<std::string, std::vector<ScalarPoint>> out;
  std::ifstream in(run / run_folder::kMetrics);
  std::string line;
  const auto add = [&](const json& fields, const std::string& prefix, int64_t it, double t) {
    for (const auto& [key, value] : fields.items())
      if (value.is_number() && key != "iteration" && key != "elapsed_s" && key != "count" &&
          key != run_folder::kTimeKey)
        out[prefix + key].push_back({it, double(float(value.get<double>())), t});
  };
  while (std::getline(in, line)) {
    const json r = json::parse(line);
    const std::string kind = r.at("kind");
    if (kind != "train" && kind != "eval") continue;
    const int64_t it = r.at("iteration");
    const double t = r.at(run_folder::kTimeKey);
    add(r, kind + "/", it, t);
    if (kind == "eval")
      for (const auto& set : r.at("datasets"))
        add(set, "eval/" + set.at("name").get<std::string>() + "/", it, t);
  }
  return out;
}

std::string compareWithMetrics(const std::vector<ScalarSeries>& got,
                               const std::map<std::string, std::vector<ScalarPoint>>& want) {
  size_t nonEmpty = 0;
  for (const auto& s : got) {
    if (s.points.empty()) continue;
    ++nonEmpty;
    const auto it = want.find(s.tag);
    if (it == want.end()) return s.tag + ": not in metrics.jsonl";
    if (it->second.size() != s.points.size())
      return s.tag + ": " + std::to_string(s.points.size()) + " points, metrics.jsonl has " +
             std::to_string(it->second.size());
    for (size_t k = 0; k < s.points.size(); ++k)
      if (s.points[k].step != it->second[k].step || !same(s.points[k].value, it->second[k].value) ||
          s.points[k].wallTime != it->second[k].wallTime)
        return s.tag + ": point " + std::to_string(k) + " differs";
  }
  if (nonEmpty != want.size())
    return std::to_string(nonEmpty) + " tags, metrics.jsonl has " + std::to_string(want.size());
  return "";
}

}  // namespace

class TestTensorBoardEvents : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  fs::path dir(const std::string& name) { return fs::path(m_tmp.path().toStdString()) / name; }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(fs::exists(kFixtures / "expected.json"));
    if (!tensorboardEventsAvailable()) {
      // A build without protobuf finds the files and says, once a file, what it lacks.
      TensorBoardRunReader reader((kFixtures / "purge").string());
      const Update u = reader.readNew();
      QCOMPARE(u.damage.size(), size_t(2));
      QVERIFY(u.damage[0].message.find("libprotobuf-dev") != std::string::npos);
      QVERIFY(u.series.empty() && reader.readNew().damage.empty());
      QVERIFY(tensorboardFormat().sniff((kFixtures / "purge").string()) > 0);
      QVERIFY_THROWS_EXCEPTION(Error, (void)TensorBoardWriter(dir("no-protobuf").string()));
      QSKIP("built without protobuf: event files are found, not read");
    }
  }

  // RFC 3720 (iSCSI) section B.4's vectors, the usual check value, and a masked CRC from a real
  // TensorFlow event file (TensorBoard's data/server/masked_crc.rs).
  void crc32cKnownVectors() {
    QCOMPARE(crc32c("123456789", 9), 0xE3069283u);
    std::string zeros(32, '\0'), ones(32, '\xff'), up(32, 0), down(32, 0);
    for (int i = 0; i < 32; ++i) up[i] = char(i), down[i] = char(31 - i);
    QCOMPARE(crc32c(zeros.data(), 32), 0x8A9136AAu);
    QCOMPARE(crc32c(ones.data(), 32), 0x62A8AB43u);
    QCOMPARE(crc32c(up.data(), 32), 0x46DD794Eu);
    QCOMPARE(crc32c(down.data(), 32), 0x113FDB5Cu);
    QCOMPARE(crc32c("", 0), 0u);
    // Chainable, and across the eight-byte slices.
    const std::string text = "The quick brown fox jumps over the lazy dog, twice over.";
    for (size_t cut = 0; cut <= text.size(); ++cut)
      QCOMPARE(crc32c(text.data() + cut, text.size() - cut, crc32c(text.data(), cut)),
               crc32c(text.data(), text.size()));
    QCOMPARE(maskedCrc32c("\x1a\x11"
                          "CRC test, one two",
                          19),
             0x5794d08au);
    QCOMPARE(crc32("123456789", 9), 0xCBF43926u);  // CRC-32 unchanged beside it
  }

  void framing() {
    const std::string rec = frameEventRecord("hello");
    QCOMPARE(rec.size(), size_t(12 + 5 + 4));
    const auto s = scanEventRecords(rec + rec.substr(0, 7), 100, "f");
    QCOMPARE(s.records.size(), size_t(1));
    QCOMPARE(s.records[0].offset, uint64_t(100));
    QCOMPARE(s.records[0].data, std::string("hello"));
    QCOMPARE(s.next, uint64_t(100 + rec.size()));  // the partial second record waits
    QVERIFY(s.damage.empty() && !s.stopped);
  }

  // Every fixture read whole: exactly what TensorBoard's own reader read, in the same order.
  void fixtures_data() {
    QTest::addColumn<QString>("run");
    for (const char* r : {"lightning", "purge", "keras", "styles"}) QTest::newRow(r) << r;
  }
  void fixtures() {
    QFETCH(QString, run);
    const json want = expected().at(run.toStdString());
    const fs::path d = kFixtures / run.toStdString();
    const RunLogFormat& f = tensorboardFormat();
    QCOMPARE(f.name(), std::string("tensorboard"));
    QVERIFY(f.sniff(d.string()) > 0);
    QCOMPARE(f.trainer(d.string()), want.at("trainer").get<std::string>());
    auto reader = f.open(d.string());
    Follower follow;
    follow.apply(reader->readNew());
    QVERIFY2(follow.damage.empty(), follow.damage.empty() ? "" : follow.damage[0].message.c_str());
    const std::string diff = difference(follow.series, want.at("series"));
    QVERIFY2(diff.empty(), diff.c_str());
    auto* tb = dynamic_cast<TensorBoardRunReader*>(reader.get());
    QVERIFY(tb);
    QCOMPARE(json(tb->files()), want.at("files"));
    // Nothing new the second time.
    const Update again = reader->readNew();
    QVERIFY(!again.reset && again.series.empty() && again.purged.empty() && again.damage.empty());
  }

  // The files written record by record (the runs' files in the order they were written), each
  // record first in two halves: a half record is "not yet", never damage; after every record the
  // follower, kept up to date from the updates alone, holds what a fresh reader reads whole.
  void tailing_data() { fixtures_data(); }
  void tailing() {
    QFETCH(QString, run);
    const json want = expected().at(run.toStdString());
    const fs::path from = kFixtures / run.toStdString(), to = dir("tail-" + run.toStdString());
    TensorBoardRunReader reader(to.string());
    Follower follow;
    int steps = 0;
    for (const auto& rel : want.at("files")) {
      const std::string bytes = readFile(from / rel.get<std::string>());
      const fs::path target = to / rel.get<std::string>();
      writeFile(target, "");
      uint64_t at = 0;
      for (const auto& r : records(bytes)) {
        const uint64_t end = r.offset + 16 + r.data.size();
        const uint64_t half = r.offset + (end - r.offset) / 2;
        writeFile(target, bytes.substr(at, half - at), true);
        const Update u = reader.readNew();
        QVERIFY2(u.damage.empty(), "a half record is not damage");
        // Nothing new from it, but a new folder may change the prefixes (a reset).
        QVERIFY(u.reset || (u.series.empty() && u.purged.empty()));
        follow.apply(u);
        writeFile(target, bytes.substr(half, end - half), true);
        at = end;
        follow.apply(reader.readNew());
        QVERIFY(follow.damage.empty());
        const std::string diff = difference(follow.series, asJson(readWhole(to)));
        QVERIFY2(diff.empty(), diff.c_str());
        ++steps;
      }
      QCOMPARE(at, uint64_t(bytes.size()));
    }
    const std::string diff = difference(follow.series, want.at("series"));
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(steps > 20);
    // Keras's validation/ folder appearing beside train/ prefixes the tags: one reset, then.
    QCOMPARE(follow.resets, run == "keras" ? 1 : 0);
  }

  // A byte flipped in a record's data: that record is named with its offset and skipped, the
  // others read. A byte flipped in a length: the file stops there, reported once.
  void damage() {
    const auto want = expected().at("purge");
    const std::string rel = want.at("files")[0];
    const std::string clean = readFile(kFixtures / "purge" / rel);
    const auto recs = records(clean);
    QVERIFY(recs.size() > 20);
    const fs::path d = dir("flip"), file = d / rel;

    const EventRecord& hit = recs[7];
    std::string bytes = clean;
    bytes[hit.offset + 12 + hit.data.size() / 2] ^= 0x20;
    writeFile(file, bytes);
    TensorBoardRunReader reader(d.string());
    Follower follow;
    follow.apply(reader.readNew());
    QCOMPARE(follow.damage.size(), size_t(1));
    QCOMPARE(follow.damage[0].offset, hit.offset);
    QCOMPARE(follow.damage[0].file, file.string());
    QVERIFY2(follow.damage[0].message.find("data") != std::string::npos &&
                 follow.damage[0].message.find("CRC-32C") != std::string::npos,
             follow.damage[0].message.c_str());
    // Everything else is there: the clean file's points but the damaged record's.
    const TensorBoardEvent lost = decodeTensorBoardEvent(hit.data);
    QCOMPARE(lost.values.size(), size_t(1));
    size_t cleanPoints = 0, readPoints = 0;
    {
      const fs::path only = dir("clean");
      writeFile(only / rel, clean);
      for (const auto& s : readWhole(only)) cleanPoints += s.points.size();
    }
    for (const auto& s : follow.series) {
      readPoints += s.points.size();
      if (s.tag == lost.values[0].tag)
        for (const auto& p : s.points) QVERIFY(p.step != lost.step);
    }
    QCOMPARE(readPoints, cleanPoints - 1);

    // A flipped length: nothing from there on, said once.
    const EventRecord& cut = recs[12];
    bytes = clean;
    bytes[cut.offset + 1] ^= 0x01;
    const fs::path d2 = dir("flip-length");
    writeFile(d2 / rel, bytes);
    TensorBoardRunReader r2(d2.string());
    Update u = r2.readNew();
    QCOMPARE(u.damage.size(), size_t(1));
    QCOMPARE(u.damage[0].offset, cut.offset);
    QVERIFY(u.damage[0].message.find("length") != std::string::npos);
    {
      const fs::path prefix = dir("prefix");
      writeFile(prefix / rel, clean.substr(0, cut.offset));
      Follower a, b;
      a.apply(u);
      b.apply(TensorBoardRunReader(prefix.string()).readNew());
      QVERIFY2(difference(a.series, asJson(b.series)).empty(),
               "the records before the bad length are read");
    }
    writeFile(d2 / rel, frameEventRecord(recs[3].data), true);
    u = r2.readNew();
    QVERIFY(u.damage.empty() && u.series.empty());

    // A record that frames but is no Event, one whose tag is not UTF-8, and one too large to
    // read whose length is good: each named, the records after them read.
    const fs::path d3 = dir("odd");
    std::string odd = clean.substr(0, recs[2].offset);
    const uint64_t garbageAt = odd.size();
    odd += frameEventRecord("\xff\xff\xff\xff");
    const uint64_t badTagAt = odd.size();
    {
      const fs::path w = dir("badtag");
      TensorBoardWriter writer(w.string(), 1.7e9);
      writer.addScalar("bad\xff tag", 1.0, 3, 1.7e9);
      odd += frameEventRecord(records(readFile(writer.path())).at(1).data);
    }
    const uint64_t hugeAt = odd.size();
    std::string huge;
    for (int i = 0; i < 8; ++i) huge.push_back(i == 3 ? '\x40' : '\0');  // 1 GiB
    const uint32_t crc = maskedCrc32c(huge.data(), 8);
    for (int i = 0; i < 4; ++i) huge.push_back(char((crc >> (8 * i)) & 0xFF));
    std::string rest = clean.substr(recs[2].offset);
    writeFile(d3 / rel, odd + huge + rest);
    TensorBoardRunReader r3(d3.string());
    u = r3.readNew();
    QCOMPARE(u.damage.size(), size_t(3));
    QCOMPARE(u.damage[0].offset, garbageAt);
    QVERIFY2(u.damage[0].message.find("does not parse") != std::string::npos,
             u.damage[0].message.c_str());
    QCOMPARE(u.damage[1].offset, badTagAt);
    QVERIFY2(u.damage[1].message.find("UTF-8") != std::string::npos, u.damage[1].message.c_str());
    QCOMPARE(u.damage[2].offset, hugeAt);
    QVERIFY2(u.damage[2].message.find("skipped") != std::string::npos, u.damage[2].message.c_str());
    QVERIFY(r3.readNew().damage.empty());  // reported once; the bytes after lie in the skipped one
  }

  // Restarts as TensorBoard shows them: steps going back replace the tag's points from there (a
  // second file, or version_1/); torch's SessionLog START drops every tag's points from its step.
  void restartAndPurge() {
    const fs::path d = dir("restart");
    const double t0 = 1.7e9;
    TensorBoardWriter first((d / "tb").string(), t0);
    for (int s = 0; s <= 100; s += 10) first.addScalar("loss", 1.0 / (s + 1), s, t0 + s);
    first.addScalar("acc", 0.5, 50, t0 + 50);
    first.addScalar("acc", 0.7, 100, t0 + 100);
    TensorBoardRunReader reader(d.string());
    Follower follow;
    Update u = reader.readNew();
    QVERIFY(u.purged.empty());
    follow.apply(u);

    TensorBoardWriter second((d / "tb").string(), t0 + 200);  // a later name: read after
    second.addScalar("loss", 9.0, 60, t0 + 200);
    u = reader.readNew();
    follow.apply(u);
    QCOMPARE(u.purged.size(), size_t(1));
    QCOMPARE(u.purged[0].first, std::string("loss"));
    QCOMPARE(u.purged[0].second, int64_t(60));
    QCOMPARE(u.series.size(), size_t(1));
    QCOMPARE(u.series[0].points.size(), size_t(1));
    QCOMPARE(follow.series[0].points.size(), size_t(7));  // 0..50 and the new 60
    QCOMPARE(follow.series[0].points.back().value, 9.0);
    QCOMPARE(follow.series[1].points.size(), size_t(2));  // acc untouched

    // The same step again replaces the point.
    second.addScalar("loss", 8.0, 60, t0 + 201);
    u = reader.readNew();
    follow.apply(u);
    QCOMPARE(u.purged.size(), size_t(1));
    QCOMPARE(follow.series[0].points.size(), size_t(7));
    QCOMPARE(follow.series[0].points.back().value, 8.0);

    // purge_step 40: both tags lose their points from 40 on, without a new point.
    second.addSessionStart(40, t0 + 202);
    u = reader.readNew();
    follow.apply(u);
    QCOMPARE(u.purged.size(), size_t(2));
    QVERIFY(u.series.empty());
    QCOMPARE(follow.series[0].points.size(), size_t(4));  // 0..30
    QCOMPARE(follow.series[1].points.size(), size_t(0));

    // Points purged before they were ever returned are not reported as purged.
    second.addScalar("acc", 0.1, 45, t0 + 203);
    second.addScalar("acc", 0.2, 41, t0 + 204);
    u = reader.readNew();
    QVERIFY(u.purged.empty());
    QCOMPARE(u.series.size(), size_t(1));
    QCOMPARE(u.series[0].points.size(), size_t(1));
    QCOMPARE(u.series[0].points[0].step, int64_t(41));
    follow.apply(u);
    const std::string diff = difference(follow.series, asJson(reader.series()));
    QVERIFY2(diff.empty(), diff.c_str());
  }

  // A file appearing with an earlier name than one read, a file replaced by a shorter one, a
  // file that is gone: every point read before is void (reset) and all is read again in order.
  void resets() {
    const fs::path d = dir("resets");
    const double t0 = 1.7e9;
    {
      TensorBoardWriter late((d / "tb").string(), t0 + 100);
      late.addScalar("x", 2.0, 20, t0 + 100);
    }
    TensorBoardRunReader reader(d.string());
    Update u = reader.readNew();
    QVERIFY(!u.reset);
    QCOMPARE(u.series.size(), size_t(1));
    std::string earlyPath;
    {  // written elsewhere and copied in late, as a mirror may
      TensorBoardWriter early(dir("resets-elsewhere").string(), t0);
      early.addScalar("x", 1.0, 10, t0);
      earlyPath = (d / "tb" / fs::path(early.path()).filename()).string();
      fs::rename(early.path(), earlyPath);
    }
    u = reader.readNew();
    QVERIFY(u.reset);
    QCOMPARE(u.series.size(), size_t(1));
    QCOMPARE(u.series[0].points.size(), size_t(2));
    QCOMPARE(u.series[0].points[0].value, 1.0);
    QCOMPARE(reader.files().size(), size_t(2));
    // Replaced by a shorter file of the same name.
    const std::string bytes = readFile(earlyPath);
    writeFile(earlyPath, bytes.substr(0, records(bytes).at(1).offset));
    u = reader.readNew();
    QVERIFY(u.reset);
    QCOMPARE(u.series.size(), size_t(1));
    QCOMPARE(u.series[0].points.size(), size_t(1));
    // Gone.
    fs::remove(earlyPath);
    u = reader.readNew();
    QVERIFY(u.reset);
    QCOMPARE(reader.files().size(), size_t(1));
    QVERIFY(!reader.readNew().reset);
  }

  // The format finds event files up to three folders down, not deeper, and names the trainer.
  void sniffing() {
    const fs::path d = dir("sniff");
    fs::create_directories(d);
    const RunLogFormat& f = tensorboardFormat();
    QCOMPARE(f.sniff(d.string()), 0);
    QCOMPARE(f.sniff(dir("no-such-folder").string()), 0);
    { TensorBoardWriter w((d / "a/b/c/d").string()); }
    QCOMPARE(f.sniff(d.string()), 0);
    { TensorBoardWriter w((d / "a/b/c").string()); }
    QVERIFY(f.sniff(d.string()) > 0);
    QCOMPARE(f.trainer(d.string()), std::string("TensorBoard"));
    writeFile(d / "hparams.yaml", "lr: 0.1\n");
    QCOMPARE(f.trainer(d.string()), std::string("strhub (Lightning)"));
    QCOMPARE(TensorBoardRunReader(d.string()).files(), std::vector<std::string>());
    TensorBoardRunReader r(d.string());
    r.readNew();
    QCOMPARE(r.files().size(), size_t(1));
    QVERIFY(r.files()[0].rfind("a/b/c/events.out.tfevents.", 0) == 0);
  }

  // The writer, read back: its file name, file_version first, each scalar as a float32 with its
  // step and wall time, written through at once.
  void writerRoundTrip() {
    const fs::path d = dir("writer");
    const double t0 = 1712345678.25;
    TensorBoardWriter w(d.string(), t0);
    const std::string name = fs::path(w.path()).filename().string();
    QVERIFY2(
        std::regex_match(name, std::regex(R"(events\.out\.tfevents\.1712345678\.[^/]+\.\d+\.\d+)")),
        name.c_str());
    const std::vector<double> values = {0.1,      -2.5,   1e30, std::nan(""),
                                        HUGE_VAL, 3.4e39, 0.0,  1.0 / 3};
    for (size_t i = 0; i < values.size(); ++i)
      w.addScalar(i % 2 ? "b/odd" : "a/even", values[i], int64_t(i) * 1000000007LL, t0 + 0.125 * i);
    // Written through: readable before the writer is closed.
    const std::string bytes = readFile(w.path());
    const auto recs = records(bytes);
    QCOMPARE(recs.size(), values.size() + 1);
    const TensorBoardEvent first = decodeTensorBoardEvent(recs[0].data);
    QVERIFY(first.hasFileVersion);
    QCOMPARE(first.fileVersion, std::string("brain.Event:2"));
    QCOMPARE(first.wallTime, t0);
    Follower follow;
    follow.apply(TensorBoardRunReader(d.string()).readNew());
    QVERIFY(follow.damage.empty());
    QCOMPARE(follow.series.size(), size_t(2));
    for (size_t i = 0; i < values.size(); ++i) {
      const auto& p = follow.series[i % 2].points[i / 2];
      QCOMPARE(follow.series[i % 2].tag, std::string(i % 2 ? "b/odd" : "a/even"));
      QCOMPARE(p.step, int64_t(i) * 1000000007LL);
      QVERIFY2(same(p.value, double(float(values[i]))), qPrintable(QString::number(i)));
      QCOMPARE(p.wallTime, t0 + 0.125 * i);
    }
    QVERIFY_THROWS_EXCEPTION(Error, (void)TensorBoardWriter(writeFileAndReturn(d / "a-file")));
    // A second session opened within the same second is named after the first, and read after.
    TensorBoardWriter again(d.string(), t0);
    QVERIFY2(
        fs::path(again.path()).filename().string().rfind("events.out.tfevents.1712345679.", 0) == 0,
        again.path().c_str());
    again.addScalar("a/even", 42.0, 1, t0 + 9);
    TensorBoardRunReader later(d.string());
    later.readNew();
    QCOMPARE(later.files().back(), fs::path(again.path()).filename().string());
    QCOMPARE(later.series()[0].points.back().value, 42.0);
    QCOMPARE(later.series()[0].points.size(), size_t(2));  // step 1 replaced the steps >= 1
  }

  // Foveal's own trainer writes metrics.jsonl's scalars as events too; a run interrupted after
  // its checkpoint at 8 and resumed shows in TensorBoard what metrics.jsonl holds after the
  // resume (the interrupted tail dropped from both).
  void trainerWritesEvents() {
    const fs::path run = dir("trained");
    auto c = tinyRun();
    train::RunOptions ro;
    ro.runDir = run.string();
    {
      train::TrainHooks hooks;
      hooks.progress = [](const std::string& line) {
        if (line.rfind("iter 10/", 0) == 0) throw Error("simulated crash at iteration 10");
      };
      train::Trainer t(c, ro, hooks);
      QVERIFY_THROWS_EXCEPTION(Error, t.run());
    }
    {
      const auto tb = readWhole(run);
      const auto it = std::find_if(tb.begin(), tb.end(),
                                   [](const ScalarSeries& s) { return s.tag == "train/loss"; });
      QVERIFY(it != tb.end());
      QCOMPARE(it->points.back().step, int64_t(10));  // the tail, before the resume drops it
    }
    ro.resume = true;
    train::Trainer(train::Trainer::loadRunConfig(run.string()), ro).run();
    const auto want = metricsAsEvents(run);
    QVERIFY(want.count("train/loss") && want.count("eval/accuracy") && want.count("train/lr"));
    QVERIFY(want.count("eval/digits:len=3,split=test,seed=2,count=8/ned"));
    QCOMPARE(want.at("train/loss").size(), size_t(12));
    int files = 0;
    for (const auto& e : fs::directory_iterator(run / run_folder::kTensorBoardDir))
      files += e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
    QCOMPARE(files, 2);  // one a session
    const auto got = readWhole(run);
    const std::string diff = compareWithMetrics(got, want);
    QVERIFY2(diff.empty(), diff.c_str());
  }

 private:
  static std::string writeFileAndReturn(const fs::path& p) {
    writeFile(p, "not a folder");
    return p.string();
  }
};

QTEST_APPLESS_MAIN(TestTensorBoardEvents)
#include "test_tensorboard_events.moc"
