#include "model/geometry.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"

namespace foveal::core {

static int scaled(int channels, double width) {
  return std::max(4, static_cast<int>(std::lround(channels * width / 2.0)) * 2);
}

std::vector<LayerSpec> vggLayers(double width) {
  using K = LayerSpec::Kind;
  auto conv = [&](int ch, bool bn = false) {
    return LayerSpec{K::Conv, 3, 3, 1, 1, 1, 1, scaled(ch, width), bn};
  };
  auto pool = [](int kh, int kw, int sh, int sw) {
    return LayerSpec{K::Pool, kh, kw, sh, sw, 0, 0, 0, false};
  };
  return {
      conv(64),
      pool(2, 2, 2, 2),  // 1/2
      conv(128),
      pool(2, 2, 2, 2),  // 1/4
      conv(256),
      conv(256),
      pool(2, 1, 2, 1),  // height only
      conv(512, true),
      conv(512, true),
      pool(2, 1, 2, 1),  // height only
      LayerSpec{K::Conv, 2, 2, 1, 1, 0, 0, scaled(512, width), false},
  };
}

std::vector<LayerSpec> vggGridLayers(double width) {
  auto layers = vggLayers(width);
  layers.resize(layers.size() - 2);  // up to the second conv 512 + BN
  return layers;
}

int vggOutChannels(double width) { return scaled(512, width); }

int scaledChannels(int channels, double width) { return scaled(channels, width); }

std::vector<LayerSpec> resnetLayers(double width) {
  using K = LayerSpec::Kind;
  // The longest path through DTRB's ResNet (FAN; BasicBlock, layers 1-2-5-3): every 3x3
  // convolution of every block's main branch. The shortcuts are shorter paths and see less.
  std::vector<LayerSpec> out;
  auto conv3 = [&](int ch) { out.push_back({K::Conv, 3, 3, 1, 1, 1, 1, scaled(ch, width), true}); };
  auto blocks = [&](int ch, int n) {
    for (int i = 0; i < 2 * n; ++i) conv3(ch);
  };
  conv3(32);
  conv3(64);
  out.push_back({K::Pool, 2, 2, 2, 2, 0, 0, 0, false});
  blocks(128, 1);
  conv3(128);
  out.push_back({K::Pool, 2, 2, 2, 2, 0, 0, 0, false});
  blocks(256, 2);
  conv3(256);
  out.push_back({K::Pool, 2, 2, 2, 1, 0, 1, 0, false});  // height halves, width keeps (+1)
  blocks(512, 5);
  conv3(512);
  blocks(512, 3);
  out.push_back({K::Conv, 2, 2, 2, 1, 0, 1, scaled(512, width), true});
  out.push_back({K::Conv, 2, 2, 1, 1, 0, 0, scaled(512, width), true});
  return out;
}

int resnetOutChannels(double width) { return scaled(512, width); }

namespace {
// A receptive field's rows clipped to the image (its columns are not: the paper's "height
// clipped to 32").
Box clipRows(Box b, int inputH) {
  const double y0 = std::max(0.0, b.y);
  const double y1 = std::min(static_cast<double>(inputH), b.y + b.h);
  b.y = y0;
  b.h = y1 - y0;
  return b;
}
}  // namespace

Box ReceptiveField::box(int column) const {
  const double cx = startX + column * jumpX;
  // A column averages its rows (when the input is taller than 32): its box spans all of them.
  const double h = sizeY + std::max(0, rows - 1) * jumpY;
  return Box{cx - (sizeX - 1) / 2.0, startY - (sizeY - 1) / 2.0, sizeX, h};
}

Box ReceptiveField::clippedBox(int column) const { return clipRows(box(column), inputH); }

std::vector<Box> ReceptiveField::clippedBoxes() const {
  std::vector<Box> out;
  for (int i = 0; i < columns; ++i) out.push_back(clippedBox(i));
  return out;
}

Box ReceptiveField::regionBox(int region) const {
  if (!grid) return box(region);
  const int r = region / columns, c = region % columns;
  const double cx = startX + c * jumpX, cy = startY + r * jumpY;
  return Box{cx - (sizeX - 1) / 2.0, cy - (sizeY - 1) / 2.0, sizeX, sizeY};
}

Box ReceptiveField::clippedRegionBox(int region) const {
  return clipRows(regionBox(region), inputH);
}

std::vector<Box> ReceptiveField::regionBoxes() const {
  std::vector<Box> out;
  for (int i = 0; i < regionCount(); ++i) out.push_back(clippedRegionBox(i));
  return out;
}

PointF ReceptiveField::regionCentre(int region) const {
  const Box b = regionBox(region);
  return {b.x + b.w / 2, b.y + b.h / 2};
}

std::vector<PointF> ReceptiveField::regionCentres() const {
  std::vector<PointF> out;
  for (int i = 0; i < regionCount(); ++i) out.push_back(regionCentre(i));
  return out;
}

double ReceptiveField::regionHeight() const {
  double h = 0;
  for (int i = 0; i < regionCount(); ++i) h = std::max(h, clippedRegionBox(i).h);
  return h;
}

ReceptiveField receptiveField(const std::vector<LayerSpec>& layers, int inputW, int inputH) {
  ReceptiveField rf;
  rf.inputW = inputW;
  rf.inputH = inputH;
  int w = inputW, h = inputH;
  double sizeX = 1, sizeY = 1, jumpX = 1, jumpY = 1, startX = 0, startY = 0;
  for (const auto& l : layers) {
    w = (w + 2 * l.pw - l.kw) / l.sw + 1;
    h = (h + 2 * l.ph - l.kh) / l.sh + 1;
    if (w < 1 || h < 1)
      throw Error("input " + std::to_string(inputW) + "x" + std::to_string(inputH) +
                  " is too small for the backbone");
    sizeX += (l.kw - 1) * jumpX;
    sizeY += (l.kh - 1) * jumpY;
    startX += ((l.kw - 1) / 2.0 - l.pw) * jumpX;
    startY += ((l.kh - 1) / 2.0 - l.ph) * jumpY;
    jumpX *= l.sw;
    jumpY *= l.sh;
  }
  rf.columns = w;
  rf.rows = h;
  rf.sizeX = sizeX;
  rf.sizeY = sizeY;
  rf.jumpX = jumpX;
  rf.jumpY = jumpY;
  rf.startX = startX;
  rf.startY = startY;
  return rf;
}

}  // namespace foveal::core
