// The MNIST digit pools and the paper's digit-sequence generator: geometry, the perspective turn,
// determinism and disjoint pools.
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>
#include <set>

#include "base/error.h"
#include "data/digit_sequences.h"
#include "data/mnist_digits.h"
#include "data/random.h"

using namespace foveal::core;
using namespace foveal::core::data;

namespace {

std::shared_ptr<const MnistDigits> digits() {
  static auto d = MnistDigits::load(FOVEAL_SAMPLES_DIR "/mnist/digits.bin");
  return d;
}

DigitSequenceSpec spec(int len, bool rotated, DigitSplit split, uint64_t seed) {
  DigitSequenceSpec s;
  s.length = len;
  s.rotated = rotated;
  s.split = split;
  s.seed = seed;
  return s;
}

// Rows holding ink (> 127) in column x of an n x n cell.
int inkRows(const std::vector<uint8_t>& cell, int n, int x) {
  int rows = 0;
  for (int y = 0; y < n; ++y) rows += cell[y * n + x] > 127;
  return rows;
}

// The warp written the plain way (clamped blur taps, bounds-checked bilinear taps): the data
// loader's warpGlyph is a faster arrangement of the same arithmetic and must give the same bytes.
std::vector<float> plainField(int n, uint64_t key, double alpha, double sigma) {
  SampleRng rng(key);
  std::vector<float> raw(static_cast<size_t>(n) * n);
  for (float& v : raw) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  const int r = static_cast<int>(std::ceil(3.0 * sigma));
  std::vector<float> k(static_cast<size_t>(2 * r + 1));
  for (int i = -r; i <= r; ++i)
    k[i + r] = static_cast<float>(std::exp(-0.5 * i * i / (sigma * sigma)));
  float sum = 0.0f;
  for (float v : k) sum += v;
  for (float& v : k) v /= sum;
  const auto cl = [n](int v) { return std::clamp(v, 0, n - 1); };
  std::vector<float> tmp(raw.size());
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      float acc = 0.0f;
      for (int i = -r; i <= r; ++i) acc += k[i + r] * raw[y * n + cl(x + i)];
      tmp[y * n + x] = acc;
    }
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      float acc = 0.0f;
      for (int i = -r; i <= r; ++i) acc += k[i + r] * tmp[cl(y + i) * n + x];
      raw[y * n + x] = static_cast<float>(alpha) * acc;
    }
  return raw;
}

std::vector<uint8_t> plainWarp(const uint8_t* cell, int n, const GlyphWarp& w) {
  std::vector<uint8_t> img(static_cast<size_t>(n) * n);
  const double c = n / 2.0, th = w.rotationDeg * M_PI / 180.0, cs = std::cos(th), sn = std::sin(th);
  std::vector<float> fx, fy;
  if (w.elastic > 0) {
    fx = plainField(n, w.elasticKey, w.elastic, w.sigma);
    fy = plainField(n, mix64(w.elasticKey ^ 0x5851F42D4C957F2Dull), w.elastic, w.sigma);
  }
  const auto at = [&](int x, int y) -> double {
    return x < 0 || y < 0 || x >= n || y >= n ? 0.0 : cell[y * n + x];
  };
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      double px = x + 0.5, py = y + 0.5;
      if (!fx.empty()) px += fx[y * n + x], py += fy[y * n + x];
      const double rx = px - c - w.dx, ry = py - c - w.dy;
      const double hx = cs * rx + sn * ry, hy = -sn * rx + cs * ry;
      const double sx = (hx - w.shear * hy) / w.scale + c - 0.5, sy = hy / w.scale + c - 0.5;
      const int x0 = static_cast<int>(std::floor(sx)), y0 = static_cast<int>(std::floor(sy));
      const double ax = sx - x0, ay = sy - y0;
      const double top = at(x0, y0) + (at(x0 + 1, y0) - at(x0, y0)) * ax;
      const double bottom = at(x0, y0 + 1) + (at(x0 + 1, y0 + 1) - at(x0, y0 + 1)) * ax;
      img[y * n + x] =
          static_cast<uint8_t>(std::clamp(top + (bottom - top) * ay + 0.5, 0.0, 255.0));
    }
  if (w.thickness != 0) {
    const std::vector<uint8_t> src = img;
    const auto px = [&](int x, int y) -> int {
      return x < 0 || y < 0 || x >= n || y >= n ? 0 : src[y * n + x];
    };
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int v[5] = {px(x, y), px(x - 1, y), px(x + 1, y), px(x, y - 1), px(x, y + 1)};
        img[y * n + x] = static_cast<uint8_t>(w.thickness > 0 ? *std::max_element(v, v + 5)
                                                              : *std::min_element(v, v + 5));
      }
  }
  return img;
}

}  // namespace

class TestDataDigits : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void poolsAreDisjointAndCoverEveryDigit() {
    const auto d = digits();
    QCOMPARE(d->count(), 10000);
    const auto& train = d->pool(DigitSplit::Train);
    const auto& test = d->pool(DigitSplit::Test);
    std::set<int> all(train.begin(), train.end());
    for (int i : test) QVERIFY2(all.insert(i).second, "a digit is in both pools");
    QCOMPARE(static_cast<int>(all.size()), d->count());
    // 80% of each class: between 7,990 and 8,000 training digits in all.
    QVERIFY(train.size() >= 7990 && train.size() <= 8000);
    std::vector<int> perClass(10, 0);
    for (int i : test) ++perClass[d->label(i)];
    for (int c = 0; c < 10; ++c)
      QVERIFY2(perClass[c] >= 170, "a class is missing from the test pool");
  }

  void cellsAreResizedOriginals() {
    const auto d = digits();
    // The 32x32 cell keeps the ink where the 28x28 original has it (scaled by 32/28).
    int agree = 0, ink = 0;
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x) {
        if (d->original(5)[y * 28 + x] < 200) continue;
        ++ink;
        const int cx = static_cast<int>((x + 0.5) * 32 / 28),
                  cy = static_cast<int>((y + 0.5) * 32 / 28);
        agree += d->cell(5)[cy * 32 + cx] > 100;
      }
    QVERIFY(ink > 20);
    QVERIFY(agree >= ink * 9 / 10);
  }

  void geometry_data() {
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("rotated");
    for (int len : {5, 7, 9, 11, 13})
      for (bool rot : {false, true})
        QTest::addRow("len%d-%s", len, rot ? "rotated" : "normal") << len << rot;
  }
  void geometry() {
    QFETCH(int, length);
    QFETCH(bool, rotated);
    DigitSequenceDataset ds(digits(), spec(length, rotated, DigitSplit::Test, 1));
    QCOMPARE(ds.size(), size_t(10000));
    for (size_t i : {size_t(0), size_t(1), size_t(9999)}) {
      const Sample s = ds.get(i);
      QCOMPARE(s.image.width, 32 * length);
      QCOMPARE(s.image.height, 32);
      QCOMPARE(s.image.pixels.size(), size_t(32 * length * 32));
      QCOMPARE(static_cast<int>(s.label.size()), length);
      for (char c : s.label) QVERIFY(c >= '0' && c <= '9');
      QCOMPARE(ds.label(i), s.label);
      // Every cell holds ink: no digit was turned out of view.
      for (int k = 0; k < length; ++k) {
        int inkPixels = 0;
        for (int y = 0; y < 32; ++y)
          for (int x = 0; x < 32; ++x) inkPixels += s.image.at(32 * k + x, y) > 127;
        QVERIFY(inkPixels > 10);
      }
    }
    DigitSequenceDataset train(digits(), spec(length, rotated, DigitSplit::Train, 1));
    QCOMPARE(train.size(), size_t(20000));
  }

  void normalCellsAreTheChosenDigits() {
    DigitSequenceDataset ds(digits(), spec(5, false, DigitSplit::Train, 4));
    const auto plan = ds.plan(17);
    const Sample s = ds.get(17);
    for (int k = 0; k < 5; ++k) {
      const uint8_t* cell = digits()->cell(plan.digits[k]);
      for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) QCOMPARE(s.image.at(32 * k + x, y), cell[y * 32 + x]);
      QCOMPARE(s.label[k], char('0' + digits()->label(plan.digits[k])));
      QCOMPARE(plan.angles[k], 0.0);
    }
  }

  void turnAtZeroIsIdentity() {
    std::vector<uint8_t> out(1024);
    turnAboutVerticalAxis(digits()->cell(3), 32, 0.0, out.data());
    QVERIFY(std::equal(out.begin(), out.end(), digits()->cell(3)));
  }

  void turnIsPerspectiveForeshortening() {
    // A white band across the full width, rows 8..23.
    const int n = 32;
    std::vector<uint8_t> band(n * n, 0), out(n * n);
    for (int y = 8; y < 24; ++y)
      for (int x = 0; x < n; ++x) band[y * n + x] = 255;
    turnAboutVerticalAxis(band.data(), n, 30.0, out.data());
    // The side turned towards the camera (left for +30) grows, the far side shrinks...
    const int nearRows = inkRows(out, n, 6), farRows = inkRows(out, n, 25);
    QVERIFY2(nearRows > 16 && farRows < 16,
             qPrintable(QString("near %1 far %2 rows").arg(nearRows).arg(farRows)));
    // ...the band gets narrower (foreshortening)...
    int inkCols = 0;
    for (int x = 0; x < n; ++x) inkCols += out[15 * n + x] > 127;
    QVERIFY2(inkCols < 31 && inkCols > 24, qPrintable(QString::number(inkCols)));
    // ...and the horizon row stays level: no in-plane rotation.
    for (int x = 6; x < 26; ++x) QVERIFY(out[15 * n + x] > 200 && out[16 * n + x] > 200);
    QCOMPARE(inkRows(out, n, 16), 16);
    // The opposite angle mirrors it.
    std::vector<uint8_t> mirror(n * n);
    turnAboutVerticalAxis(band.data(), n, -30.0, mirror.data());
    QCOMPARE(inkRows(mirror, n, 25), nearRows);
    QCOMPARE(inkRows(mirror, n, 6), farRows);
  }

  // Localisation's true boxes: the turned slot's box is where the turn puts a full cell: its ink
  // fills the box to within a pixel (bilinear taps at the edges) and never leaves it.
  void turnedSlotBoxIsWhereTheTurnPutsTheCell_data() {
    QTest::addColumn<double>("degrees");
    for (double d : {-30.0, -17.5, -4.0, 0.0, 9.0, 22.0, 30.0})
      QTest::newRow(qPrintable(QString::number(d))) << d;
  }
  void turnedSlotBoxIsWhereTheTurnPutsTheCell() {
    QFETCH(double, degrees);
    constexpr int n = MnistDigits::kCell;
    const std::vector<uint8_t> full(n * n, 255);
    std::vector<uint8_t> out(n * n);
    turnAboutVerticalAxis(full.data(), n, degrees, out.data());
    int x0 = n, x1 = -1, y0 = n, y1 = -1;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        if (out[y * n + x] > 127) {
          x0 = std::min(x0, x);
          x1 = std::max(x1, x);
          y0 = std::min(y0, y);
          y1 = std::max(y1, y);
        }
    const Box b = turnedSlotBox(n, degrees);
    // Pixel x covers [x, x + 1): the ink's edges are the box's, to within one pixel.
    QVERIFY2(std::abs(x0 - b.x) <= 1.0 && std::abs(x1 + 1 - (b.x + b.w)) <= 1.0,
             qPrintable(
                 QString("ink x %1..%2, box %3..%4").arg(x0).arg(x1 + 1).arg(b.x).arg(b.x + b.w)));
    QVERIFY2(std::abs(y0 - b.y) <= 1.0 && std::abs(y1 + 1 - (b.y + b.h)) <= 1.0,
             qPrintable(
                 QString("ink y %1..%2, box %3..%4").arg(y0).arg(y1 + 1).arg(b.y).arg(b.y + b.h)));
    // Foreshortened: the far edge comes in (about 2 px at 17.5 degrees, 4 at 30), the near one
    // goes out past the cell and is clipped.
    if (std::abs(degrees) >= 17.5) QVERIFY2(b.w < n - 1.5, qPrintable(QString::number(b.w)));
  }

  // Every digit's ink lies in its own box, normal and rotated, and the boxes tile the image in
  // reading order.
  void digitBoxesHoldTheirInk_data() {
    QTest::addColumn<bool>("rotated");
    QTest::newRow("normal") << false;
    QTest::newRow("rotated") << true;
  }
  void digitBoxesHoldTheirInk() {
    QFETCH(bool, rotated);
    DigitSequenceDataset ds(digits(), spec(7, rotated, DigitSplit::Test, 3));
    constexpr int n = MnistDigits::kCell;
    int narrower = 0;
    for (size_t i = 0; i < 20; ++i) {
      const Sample s = ds.get(i);
      const auto boxes = ds.charBoxes(i);
      QCOMPARE(boxes.size(), size_t(7));
      for (int k = 0; k < 7; ++k) {
        const Box& b = boxes[size_t(k)];
        QVERIFY(b.x >= k * n && b.x + b.w <= (k + 1) * n);
        if (b.w < n - 0.25) ++narrower;
        int ink = 0;
        for (int y = 0; y < n; ++y)
          for (int x = k * n; x < (k + 1) * n; ++x)
            if (s.image.pixels[size_t(y) * s.image.width + x] > 0) {
              ++ink;
              QVERIFY2(x + 0.5 >= b.x - 1 && x + 0.5 <= b.x + b.w + 1 && y + 0.5 >= b.y - 1 &&
                           y + 0.5 <= b.y + b.h + 1,
                       qPrintable(QString("entry %1 digit %2: ink at (%3, %4) outside %5,%6 %7x%8")
                                      .arg(i)
                                      .arg(k)
                                      .arg(x)
                                      .arg(y)
                                      .arg(b.x)
                                      .arg(b.y)
                                      .arg(b.w)
                                      .arg(b.h)));
            }
        QVERIFY(ink > 0);
      }
    }
    // Turned slots are foreshortened (narrower than 32 px); unturned ones are the slot.
    if (rotated)
      QVERIFY2(narrower > 100, qPrintable(QString::number(narrower)));  // of 140
    else
      QCOMPARE(narrower, 0);
  }

  void rotatedAnglesAreWithinThirtyDegrees() {
    DigitSequenceDataset ds(digits(), spec(13, true, DigitSplit::Train, 2));
    double lo = 0, hi = 0;
    for (size_t i = 0; i < 200; ++i)
      for (double a : ds.plan(i).angles) {
        lo = std::min(lo, a);
        hi = std::max(hi, a);
      }
    QVERIFY(lo >= -30 && hi <= 30);
    QVERIFY(lo < -28 && hi > 28);  // and they use the whole range
  }

  void sameSeedSameBytes() {
    for (bool rotated : {false, true}) {
      DigitSequenceDataset a(digits(), spec(9, rotated, DigitSplit::Test, 11));
      DigitSequenceDataset b(digits(), spec(9, rotated, DigitSplit::Test, 11));
      DigitSequenceDataset c(digits(), spec(9, rotated, DigitSplit::Test, 12));
      int differ = 0;
      for (size_t i : {size_t(0), size_t(5), size_t(9998)}) {
        QCOMPARE(a.get(i).image.pixels, b.get(i).image.pixels);
        QCOMPARE(a.get(i).label, b.get(i).label);
        differ += a.get(i).image.pixels != c.get(i).image.pixels;
      }
      QCOMPARE(differ, 3);
    }
  }

  void streamContinuesTheTrainingSet() {
    auto s = spec(7, true, DigitSplit::Train, 3);
    DigitSequenceDataset fixed(digits(), s);
    s.stream = true;
    DigitSequenceDataset stream(digits(), s);
    QVERIFY(stream.endless() && !fixed.endless());
    QCOMPARE(stream.get(123).image.pixels, fixed.get(123).image.pixels);
    QCOMPARE(stream.get(5000000).image.width, 7 * 32);
    try {
      fixed.get(20000);
      QFAIL("no error past the end of the training set");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("entry 20000"));
      QVERIFY(QString(e.what()).contains("digits:len=7,rotated,split=train,seed=3"));
    }
  }

  void splitsDrawFromTheirPools() {
    for (auto split : {DigitSplit::Train, DigitSplit::Test}) {
      DigitSequenceDataset ds(digits(), spec(13, false, split, 5));
      const auto& pool = digits()->pool(split);
      const std::set<int> allowed(pool.begin(), pool.end());
      for (size_t i = 0; i < 300; ++i)
        for (int d : ds.plan(i).digits) QVERIFY(allowed.count(d));
    }
  }

  // Per-glyph augmentation (issue 34): the same digits and angles as without it, a pure function
  // of (seed, setting, index), the test pool refused, every parameter in the spec's text.
  void augmentationKeepsTheDigitsAndIsDeterministic() {
    for (bool rotated : {false, true}) {
      auto plain = spec(7, rotated, DigitSplit::Train, 4);
      auto aug = plain;
      aug.augment = GlyphAugmentSpec::defaults();
      DigitSequenceDataset a(digits(), plain), b(digits(), aug), c(digits(), aug);
      int differ = 0;
      for (size_t i : {size_t(0), size_t(17), size_t(19999)}) {
        QCOMPARE(b.label(i), a.label(i));
        QCOMPARE(b.plan(i).digits, a.plan(i).digits);
        QCOMPARE(b.plan(i).angles, a.plan(i).angles);
        QCOMPARE(b.get(i).image.pixels, c.get(i).image.pixels);
        differ += b.get(i).image.pixels != a.get(i).image.pixels;
      }
      QCOMPARE(differ, 3);
    }
    auto test = spec(5, false, DigitSplit::Test, 1);
    test.augment = GlyphAugmentSpec::defaults();
    try {
      DigitSequenceDataset ds(digits(), test);
      QFAIL("the test pool was augmented");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("never augmented"), e.what());
    }
    auto s = spec(5, false, DigitSplit::Train, 1);
    s.augment = GlyphAugmentSpec::defaults();
    QCOMPARE(QString::fromStdString(s.toString()),
             QString("digits:len=5,split=train,seed=1,aug-scale=0.12,aug-shear=0.25,aug-rot=10,"
                     "aug-shift=2,aug-elastic=10,aug-sigma=4,aug-thick=0.3"));
    QCOMPARE(spec(5, false, DigitSplit::Train, 1).toString(),
             std::string("digits:len=5,split=train,seed=1"));
  }

  // warpGlyph against the plain-loop warp above, byte for byte, over many drawn warps: the
  // shipped defaults, strong elastic fields (small and large sigma, so the blur's edge padding is
  // exercised on both sides), and cells other than MNIST's 28.
  void warpIsThePlainComputation() {
    GlyphAugmentSpec strong = GlyphAugmentSpec::defaults();
    strong.elastic = 40;
    strong.sigma = 2.5;
    GlyphAugmentSpec wide = strong;
    wide.sigma = 9;
    wide.shift = 6;
    wide.thickness = 1;
    SampleRng rng(77);
    int compared = 0;
    for (const GlyphAugmentSpec& sp : {GlyphAugmentSpec::defaults(), strong, wide})
      for (int n : {28, 13}) {
        for (int k = 0; k < 60; ++k) {
          const GlyphWarp w = GlyphWarp::draw(sp, rng);
          std::vector<uint8_t> cell(static_cast<size_t>(n) * n), out(cell.size());
          if (n == MnistDigits::kCell) {
            const auto& pool = digits()->pool(DigitSplit::Train);
            std::copy_n(digits()->cell(pool[rng.below(pool.size())]), cell.size(), cell.begin());
          } else {
            for (auto& v : cell) v = static_cast<uint8_t>(rng.below(256));
          }
          warpGlyph(cell.data(), n, w, out.data());
          QVERIFY2(out == plainWarp(cell.data(), n, w),
                   qPrintable(QString("n %1, warp %2 of spec %3")
                                  .arg(n)
                                  .arg(k)
                                  .arg(QString::fromStdString(sp.toSpecItems()))));
          ++compared;
        }
      }
    QCOMPARE(compared, 360);
  }

  // A warp with every range zero is the identity, bit for bit; a pure shift moves the ink and the
  // box by the shift; a scale-down shrinks the ink about the centre; dilation only adds ink.
  void warpGeometry() {
    constexpr int n = MnistDigits::kCell;
    const uint8_t* cell = digits()->cell(digits()->pool(DigitSplit::Train)[3]);
    std::vector<uint8_t> out(n * n);
    GlyphWarp id;
    warpGlyph(cell, n, id, out.data());
    QVERIFY(std::equal(out.begin(), out.end(), cell));
    const auto centroid = [&](const uint8_t* img, double& cx, double& cy) {
      double m = 0;
      cx = cy = 0;
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          m += img[y * n + x];
          cx += img[y * n + x] * (x + 0.5);
          cy += img[y * n + x] * (y + 0.5);
        }
      cx /= m;
      cy /= m;
      return m;
    };
    double cx0, cy0, cx1, cy1;
    const double mass0 = centroid(cell, cx0, cy0);
    GlyphWarp shift;
    shift.dx = 2;
    shift.dy = -1;
    warpGlyph(cell, n, shift, out.data());
    centroid(out.data(), cx1, cy1);
    QVERIFY2(std::abs(cx1 - cx0 - 2) < 0.1 && std::abs(cy1 - cy0 + 1) < 0.1,
             qPrintable(QString("%1,%2 -> %3,%4").arg(cx0).arg(cy0).arg(cx1).arg(cy1)));
    const Box b = warpedSlotBox(n, shift);
    QCOMPARE(b.x, 2.0);
    QCOMPARE(b.y, 0.0);
    QCOMPARE(b.w, 30.0);  // clipped to the cell
    QCOMPARE(b.h, 31.0);
    GlyphWarp small;
    small.scale = 0.5;
    warpGlyph(cell, n, small, out.data());
    const double mass1 = centroid(out.data(), cx1, cy1);
    QVERIFY2(mass1 < 0.4 * mass0 && mass1 > 0.15 * mass0,
             qPrintable(QString::number(mass1 / mass0)));
    const Box sb = warpedSlotBox(n, small);
    QCOMPARE(sb.x, 8.0);
    QCOMPARE(sb.w, 16.0);
    GlyphWarp thick;
    thick.thickness = 1;
    warpGlyph(cell, n, thick, out.data());
    for (int i = 0; i < n * n; ++i) QVERIFY(out[i] >= cell[i]);
    QVERIFY(centroid(out.data(), cx1, cy1) > 1.3 * mass0);
  }

  // The boxes follow the glyphs: every augmented digit's ink lies in its (warped, turned) box.
  void augmentedBoxesHoldTheirInk() {
    for (bool rotated : {false, true}) {
      auto sp = spec(7, rotated, DigitSplit::Train, 8);
      sp.augment = GlyphAugmentSpec::defaults();
      sp.augment.elastic = 0;  // the box follows the affine part; elastic moves ink ~1 px
      DigitSequenceDataset ds(digits(), sp);
      constexpr int n = MnistDigits::kCell;
      for (size_t i = 0; i < 20; ++i) {
        const Sample s = ds.get(i);
        const auto boxes = ds.charBoxes(i);
        for (int k = 0; k < 7; ++k) {
          const Box& b = boxes[size_t(k)];
          QVERIFY(b.x >= k * n - 1e-9 && b.x + b.w <= (k + 1) * n + 1e-9);
          for (int y = 0; y < n; ++y)
            for (int x = k * n; x < (k + 1) * n; ++x)
              if (s.image.pixels[size_t(y) * s.image.width + x] > 0)
                QVERIFY2(x + 0.5 >= b.x - 1.5 && x + 0.5 <= b.x + b.w + 1.5 &&
                             y + 0.5 >= b.y - 1.5 && y + 0.5 <= b.y + b.h + 1.5,
                         qPrintable(QString("rotated %1 entry %2 digit %3: ink at (%4, %5)")
                                        .arg(rotated)
                                        .arg(i)
                                        .arg(k)
                                        .arg(x)
                                        .arg(y)));
        }
      }
    }
    // turnedBox of the whole slot is turnedSlotBox.
    for (double a : {-30.0, -7.0, 0.0, 12.0, 30.0}) {
      const Box t = turnedBox(32, a, Box{0, 0, 32, 32}), u = turnedSlotBox(32, a);
      QVERIFY(std::abs(t.x - u.x) < 1e-9 && std::abs(t.w - u.w) < 1e-9 &&
              std::abs(t.y - u.y) < 1e-9 && std::abs(t.h - u.h) < 1e-9);
    }
  }

  void corruptDigitFileIsReported() {
    QTemporaryDir dir;
    const QString path = dir.filePath("digits.bin");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("FVMNIST1\x10\x27\0\0\x1c\0\0\0\x1c\0\0\0\x50\0\0\0", 24);
    f.write(QByteArray(500, 1));
    f.close();
    try {
      MnistDigits::load(path.toStdString());
      QFAIL("no error for a truncated digit file");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains(path));
      QVERIFY(QString(e.what()).contains("truncated"));
    }
    QVERIFY_THROWS_EXCEPTION(Error, MnistDigits::load(dir.filePath("nope.bin").toStdString()));
  }
};

QTEST_APPLESS_MAIN(TestDataDigits)
#include "test_data_digits.moc"
