#include "data/dataset_tools.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "data/size_range.h"

namespace foveal::core::data {

DatasetReport inspectDataset(const Dataset& ds, const Charset* charset, size_t limit, int threads) {
  if (ds.endless() && limit == 0) throw Error(ds.describe() + ": an endless stream needs a limit");
  const size_t n = limit ? std::min(limit, ds.endless() ? limit : ds.size()) : ds.size();
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  DatasetReport total;
  total.entries = n;
  std::mutex mutex;
  std::atomic<size_t> next{0};
  auto work = [&] {
    DatasetReport r;
    bool first = true;
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      Sample s;
      try {
        s = ds.get(i);
      } catch (const Error& e) {
        ++r.unreadable;
        r.problems.emplace_back(i, e.what());
        continue;
      }
      const auto cps = splitUtf8(s.label);
      ++r.lengthHistogram[cps.size()];
      for (const auto& c : cps) ++r.characters[c];
      if (first) {
        r.minW = r.maxW = s.image.width;
        r.minH = r.maxH = s.image.height;
        first = false;
      }
      r.minW = std::min(r.minW, s.image.width);
      r.maxW = std::max(r.maxW, s.image.width);
      r.minH = std::min(r.minH, s.image.height);
      r.maxH = std::max(r.maxH, s.image.height);
      if (s.label.empty()) {
        ++r.emptyLabels;
        r.problems.emplace_back(i, ds.entryName(i) + ": empty label");
        continue;
      }
      if (charset) {
        try {
          charset->encode(s.label);
        } catch (const Error& e) {
          ++r.outsideCharset;
          r.problems.emplace_back(i, ds.entryName(i) + ": " + e.what());
          continue;
        }
      }
      ++r.readable;
    }
    std::lock_guard<std::mutex> lock(mutex);
    mergeImageSizes(total, r);
    total.readable += r.readable;
    total.unreadable += r.unreadable;
    total.emptyLabels += r.emptyLabels;
    total.outsideCharset += r.outsideCharset;
    total.problems.insert(total.problems.end(), r.problems.begin(), r.problems.end());
    for (auto& [k, v] : r.lengthHistogram) total.lengthHistogram[k] += v;
    for (auto& [k, v] : r.characters) total.characters[k] += v;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::sort(total.problems.begin(), total.problems.end());
  return total;
}

GreyImage resizeForDisplay(const GreyImage& src, int dw, int dh) {
  GreyImage out{dw, dh, std::vector<uint8_t>(static_cast<size_t>(dw) * dh)};
  if (src.empty()) return out;
  for (int y = 0; y < dh; ++y) {
    const double fy = std::clamp((y + 0.5) * src.height / dh - 0.5, 0.0, double(src.height - 1));
    const int y0 = static_cast<int>(fy), y1 = std::min(y0 + 1, src.height - 1);
    const double wy = fy - y0;
    for (int x = 0; x < dw; ++x) {
      const double fx = std::clamp((x + 0.5) * src.width / dw - 0.5, 0.0, double(src.width - 1));
      const int x0 = static_cast<int>(fx), x1 = std::min(x0 + 1, src.width - 1);
      const double wx = fx - x0;
      const double v = (src.at(x0, y0) * (1 - wx) + src.at(x1, y0) * wx) * (1 - wy) +
                       (src.at(x0, y1) * (1 - wx) + src.at(x1, y1) * wx) * wy;
      out.pixels[static_cast<size_t>(y) * dw + x] = static_cast<uint8_t>(v + 0.5);
    }
  }
  return out;
}

GreyImage contactSheet(const std::vector<GreyImage>& images, int columns, int cellHeight,
                       int maxCellWidth) {
  if (images.empty()) throw Error("contact sheet: no images");
  columns = std::max(1, std::min<int>(columns, static_cast<int>(images.size())));
  constexpr int kGap = 4;
  std::vector<GreyImage> cells;
  int cellW = 1;
  for (const auto& im : images) {
    const int w =
        im.empty()
            ? cellHeight
            : std::clamp(static_cast<int>(std::lround(double(im.width) * cellHeight / im.height)),
                         1, maxCellWidth);
    cells.push_back(resizeForDisplay(im, w, cellHeight));
    cellW = std::max(cellW, w);
  }
  const int rows = (static_cast<int>(cells.size()) + columns - 1) / columns;
  GreyImage sheet;
  sheet.width = kGap + columns * (cellW + kGap);
  sheet.height = kGap + rows * (cellHeight + kGap);
  sheet.pixels.assign(static_cast<size_t>(sheet.width) * sheet.height, 128);
  for (size_t i = 0; i < cells.size(); ++i) {
    const int ox = kGap + static_cast<int>(i % columns) * (cellW + kGap);
    const int oy = kGap + static_cast<int>(i / columns) * (cellHeight + kGap);
    for (int y = 0; y < cellHeight; ++y)
      std::copy_n(cells[i].pixels.begin() + static_cast<long>(y) * cells[i].width, cells[i].width,
                  sheet.pixels.begin() + static_cast<long>(oy + y) * sheet.width + ox);
  }
  return sheet;
}

}  // namespace foveal::core::data
