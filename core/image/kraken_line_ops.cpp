#include "image/kraken_line_ops.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "base/error.h"

namespace foveal::core::kraken {

void emptyRecord(std::string reason) { throw EmptyRecord{std::move(reason)}; }

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();  // np.finfo(float).eps

double pairwise(const double* a, size_t n) {
  if (n < 8) {
    double r = 0.;
    for (size_t i = 0; i < n; ++i) r += a[i];
    return r;
  }
  if (n <= 128) {
    double r[8];
    for (int k = 0; k < 8; ++k) r[k] = a[k];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int k = 0; k < 8; ++k) r[k] += a[i + k];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

// The norm of a 2-vector as NumPy computes it (no fused multiply-add).
inline double norm2(double x, double y) { return std::sqrt(x * x + y * y); }

}  // namespace

double numpySum(const double* v, size_t n) { return 0.0 + pairwise(v, n); }

Raster crop(const Raster& im, int x0, int y0, int x1, int y1) {
  Raster out(std::max(0, x1 - x0), std::max(0, y1 - y0), im.c);
  for (int y = 0; y < out.h; ++y) {
    const int sy = y + y0;
    if (sy < 0 || sy >= im.h) continue;
    for (int x = 0; x < out.w; ++x) {
      const int sx = x + x0;
      if (sx < 0 || sx >= im.w) continue;
      for (int b = 0; b < im.c; ++b) out.row(y)[x * im.c + b] = im.row(sy)[sx * im.c + b];
    }
  }
  return out;
}

Raster rotate90(const Raster& im) {
  // ImagingRotate90: out[xsize - 1 - x][y] = in[y][x]
  Raster out(im.h, im.w, im.c);
  for (int y = 0; y < im.h; ++y)
    for (int x = 0; x < im.w; ++x)
      for (int b = 0; b < im.c; ++b) out.row(im.w - 1 - x)[y * im.c + b] = im.row(y)[x * im.c + b];
  return out;
}

bool getBBox(const Raster& im, int box[4]) {
  box[0] = im.w;
  box[1] = -1;
  box[2] = box[3] = 0;
  for (int y = 0; y < im.h; ++y) {
    bool has = false;
    for (int x = 0; x < im.w; ++x) {
      bool nz = false;
      for (int b = 0; b < im.c; ++b) nz = nz || im.row(y)[x * im.c + b] != 0;
      if (nz) {
        has = true;
        if (x < box[0]) box[0] = x;
        if (x >= box[2]) box[2] = x + 1;
      }
    }
    if (has) {
      if (box[1] < 0) box[1] = y;
      box[3] = y + 1;
    }
  }
  return box[1] >= 0;
}

// ---------------------------------------------------------------------------------------------
// Pillow 9.4 Draw.c: ImagingDrawPolygon (fill) -> polygon_generic (hasAlpha 0) with hline8

namespace {

struct Edge {
  int d = 0;
  int x0 = 0, y0 = 0;
  int xmin = 0, ymin = 0, xmax = 0, ymax = 0;
  float dx = 0;
};

void addEdge(Edge& e, int x0, int y0, int x1, int y1) {
  if (x0 <= x1) {
    e.xmin = x0, e.xmax = x1;
  } else {
    e.xmin = x1, e.xmax = x0;
  }
  if (y0 <= y1) {
    e.ymin = y0, e.ymax = y1;
  } else {
    e.ymin = y1, e.ymax = y0;
  }
  if (y0 == y1) {
    e.d = 0;
    e.dx = 0.0f;
  } else {
    e.dx = static_cast<float>(x1 - x0) / static_cast<float>(y1 - y0);
    e.d = y0 == e.ymin ? 1 : -1;
  }
  e.x0 = x0;
  e.y0 = y0;
}

inline int roundUp(float f) {
  return static_cast<int>(f >= 0.0 ? std::floor(f + 0.5f) : -std::floor(std::fabs(f) + 0.5f));
}
inline int roundDown(float f) {
  return static_cast<int>(f >= 0.0 ? std::ceil(f - 0.5f) : -std::ceil(std::fabs(f) - 0.5f));
}

void hline8(uint8_t* im, int w, int h, int x0, int y0, int x1, uint8_t ink) {
  if (y0 < 0 || y0 >= h) return;
  if (x0 > x1) std::swap(x0, x1);
  if (x0 < 0) {
    x0 = 0;
  } else if (x0 >= w) {
    return;
  }
  if (x1 < 0) {
    return;
  } else if (x1 >= w) {
    x1 = w - 1;
  }
  if (x0 <= x1)
    std::fill(im + static_cast<size_t>(y0) * w + x0, im + static_cast<size_t>(y0) * w + x1 + 1,
              ink);
}

inline float edgeX(const Edge& e, int y) {
  return static_cast<float>(y - e.y0) * e.dx + static_cast<float>(e.x0);
}

// The polygon's edges (xy: x0, y0, x1, y1, ...; closed) as Pillow's ImagingDrawPolygon builds
// them, a horizontal edge that goes on in the direction of the one before it extending that one:
// into e, their count returned.
int polygonEdges(const std::vector<int>& xy, std::vector<Edge>& e) {
  const int count = static_cast<int>(xy.size() / 2);
  int n = 0, i;
  for (i = 0; i < count - 1; ++i) {
    const int x0 = xy[i * 2], y0 = xy[i * 2 + 1], x1 = xy[i * 2 + 2], y1 = xy[i * 2 + 3];
    if (y0 == y1 && i != 0 && y0 == xy[i * 2 - 1]) {
      Edge& last = e[static_cast<size_t>(n - 1)];
      if (x1 > x0 && x0 > xy[i * 2 - 2]) {
        last.xmax = x1;
        continue;
      } else if (x1 < x0 && x0 < xy[i * 2 - 2]) {
        last.xmin = x1;
        continue;
      }
    }
    addEdge(e[static_cast<size_t>(n++)], x0, y0, x1, y1);
  }
  if (xy[i * 2] != xy[0] || xy[i * 2 + 1] != xy[1])
    addEdge(e[static_cast<size_t>(n++)], xy[i * 2], xy[i * 2 + 1], xy[0], xy[1]);
  return n;
}

}  // namespace

void fillPolygon(uint8_t* im, int w, int h, const std::vector<int>& xy, uint8_t ink) {
  const int count = static_cast<int>(xy.size() / 2);
  if (count <= 0) return;
  std::vector<Edge> e(static_cast<size_t>(count));
  const int n = polygonEdges(xy, e);

  // polygon_generic
  std::vector<Edge*> table;
  int ymin = h - 1, ymax = 0;
  for (int k = 0; k < n; ++k) {
    Edge& ed = e[static_cast<size_t>(k)];
    if (ymin > ed.ymin) ymin = ed.ymin;
    if (ymax < ed.ymax) ymax = ed.ymax;
    if (ed.ymin == ed.ymax) {
      hline8(im, w, h, ed.xmin, ed.ymin, ed.xmax, ink);
      continue;
    }
    table.push_back(&ed);
  }
  if (ymin < 0) ymin = 0;
  if (ymax > h) ymax = h;
  std::vector<float> xx(table.size() * 2 + 1);
  const int edgeCount = static_cast<int>(table.size());
  for (; ymin <= ymax; ++ymin) {
    int j = 0;
    for (int k = 0; k < edgeCount; ++k) {
      const Edge* cur = table[static_cast<size_t>(k)];
      if (ymin >= cur->ymin && ymin <= cur->ymax) {
        xx[static_cast<size_t>(j++)] = edgeX(*cur, ymin);
        if (ymin == cur->ymax && ymin < ymax) {
          xx[static_cast<size_t>(j)] = xx[static_cast<size_t>(j - 1)];
          j++;
        } else if (cur->dx != 0 &&
                   std::round(xx[static_cast<size_t>(j - 1)]) == xx[static_cast<size_t>(j - 1)]) {
          // Pillow's "connect discontiguous corners" (it writes xx[k], indexed by edge)
          for (int m = 0; m < k; ++m) {
            const Edge* other = table[static_cast<size_t>(m)];
            if ((cur->dx > 0 && other->dx <= 0) || (cur->dx < 0 && other->dx >= 0)) continue;
            if (((ymin == cur->ymin && ymin == other->ymin) ||
                 (ymin == cur->ymax && ymin == other->ymax)) &&
                xx[static_cast<size_t>(j - 1)] == edgeX(*other, ymin)) {
              const int offset = ymin == ymax ? -1 : 1;
              const float a = edgeX(*cur, ymin + offset), b = edgeX(*other, ymin + offset);
              float& target = xx[static_cast<size_t>(m)];
              if (ymin == cur->ymax) {
                target = cur->dx > 0 ? static_cast<float>(std::fmax(a, b) + 1)
                                     : static_cast<float>(std::fmin(a, b) - 1);
              } else {
                target = cur->dx > 0 ? static_cast<float>(std::fmin(a, b))
                                     : static_cast<float>(std::fmax(a, b) + 1);
              }
              break;
            }
          }
        }
      }
    }
    std::sort(xx.begin(), xx.begin() + j);
    for (int k = 1; k < j; k += 2)
      hline8(im, w, h, roundUp(xx[static_cast<size_t>(k - 1)]), ymin,
             roundDown(xx[static_cast<size_t>(k)]), ink);
  }
}

// ---------------------------------------------------------------------------------------------
// scikit-image polygon helpers

std::vector<Point2> subdividePolygon(const std::vector<Point2>& in) {
  std::vector<Point2> coords = in;
  if (coords.size() < 2) return coords;
  const bool circular = coords.front().x == coords.back().x && coords.front().y == coords.back().y;
  std::vector<Point2> out;
  auto mix = [](const Point2& a, double ka, const Point2& b, double kb) {
    return Point2{ka * a.x + kb * b.x, ka * a.y + kb * b.y};
  };
  if (circular) {
    coords.pop_back();
    const size_t n = coords.size();
    for (size_t i = 0; i < n; ++i) {
      const Point2& prev = coords[(i + n - 1) % n];
      out.push_back(mix(coords[i], 0.25, prev, 0.75));  // odd: [1, 3] / 4 ('same', wrap)
      out.push_back(mix(coords[i], 0.75, prev, 0.25));  // even: [3, 1] / 4
    }
    out.push_back(out.front());
  } else {
    out.push_back(coords.front());
    for (size_t i = 0; i + 1 < coords.size(); ++i) {
      out.push_back(mix(coords[i + 1], 0.25, coords[i], 0.75));
      out.push_back(mix(coords[i + 1], 0.75, coords[i], 0.25));
    }
    out.push_back(coords.back());
  }
  return out;
}

std::vector<Point2> approximatePolygon(const std::vector<Point2>& coords, double tolerance) {
  if (tolerance <= 0 || coords.size() < 2) return coords;
  // skimage names the columns (r, c); kraken passes (x, y)
  const size_t n = coords.size();
  std::vector<char> chain(n, 0);
  std::vector<double> dists(n, 0.0);
  chain[0] = chain[n - 1] = 1;
  std::vector<std::pair<size_t, size_t>> stack{{0, n - 1}};
  while (!stack.empty()) {
    const auto [start, end] = stack.back();
    stack.pop_back();
    const double r0 = coords[start].x, c0 = coords[start].y;
    const double r1 = coords[end].x, c1 = coords[end].y;
    const double dr = r1 - r0, dc = c1 - c0;
    const double angle = -std::atan2(dr, dc);
    const double sa = std::sin(angle), ca = std::cos(angle);
    const double segmentDist = c0 * sa + r0 * ca;
    bool any = false;
    size_t best = 0;
    double bestD = -std::numeric_limits<double>::infinity();
    for (size_t p = start + 1; p < end; ++p) {
      const double r = coords[p].x, c = coords[p].y;
      const double dr0 = r - r0, dc0 = c - c0, dr1 = r - r1, dc1 = c - c1;
      const double pl0 = dr0 * dr + dc0 * dc;
      const double pl1 = -dr1 * dr - dc1 * dc;
      double d;
      if (pl0 > 0 && pl1 > 0)
        d = std::fabs(r * ca + c * sa - segmentDist);
      else
        d = std::min(std::sqrt(dc0 * dc0 + dr0 * dr0), std::sqrt(dc1 * dc1 + dr1 * dr1));
      dists[p] = d;
      if (d > tolerance) any = true;
      if (d > bestD) {
        bestD = d;
        best = p;
      }
    }
    if (any) {
      const size_t newEnd = best;  // start + argmax + 1
      stack.push_back({newEnd, end});
      stack.push_back({start, newEnd});
      chain[newEnd] = 1;
    }
  }
  std::vector<Point2> out;
  for (size_t i = 0; i < n; ++i)
    if (chain[i]) out.push_back(coords[i]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Resampling: Pillow's transform filters and SciPy's order-0 affine_transform

namespace {

inline int coord(double v) { return v < 0.0 ? -1 : static_cast<int>(v); }  // COORD
inline int floorInt(double v) {
  return v < 0.0 ? static_cast<int>(std::floor(v)) : static_cast<int>(v);
}

// nearest_filter8/32: false when outside the image
inline bool nearest(const Raster& im, double xin, double yin, uint8_t* out) {
  const int x = coord(xin), y = coord(yin);
  if (x < 0 || x >= im.w || y < 0 || y >= im.h) return false;
  for (int b = 0; b < im.c; ++b) out[b] = im.row(y)[x * im.c + b];
  return true;
}

// bilinear_filter8 / bilinear_filter32RGB
inline bool bilinear(const Raster& im, double xin, double yin, uint8_t* out) {
  if (xin < 0.0 || xin >= im.w || yin < 0.0 || yin >= im.h) return false;
  xin -= 0.5;
  yin -= 0.5;
  const int x = floorInt(xin), y = floorInt(yin);
  const double dx = xin - x, dy = yin - y;
  auto xclip = [&](int v) { return v < 0 ? 0 : v < im.w ? v : im.w - 1; };
  auto yclip = [&](int v) { return v < 0 ? 0 : v < im.h ? v : im.h - 1; };
  const int x0 = xclip(x), x1 = xclip(x + 1);
  for (int b = 0; b < im.c; ++b) {
    const uint8_t* in = im.row(yclip(y));
    double v1 = in[x0 * im.c + b] + (in[x1 * im.c + b] - in[x0 * im.c + b]) * dx;
    double v2;
    if (y + 1 >= 0 && y + 1 < im.h) {
      in = im.row(y + 1);
      v2 = in[x0 * im.c + b] + (in[x1 * im.c + b] - in[x0 * im.c + b]) * dx;
    } else {
      v2 = v1;
    }
    v1 = v1 + (v2 - v1) * dy;
    out[b] = static_cast<uint8_t>(v1);
  }
  return true;
}

// ImagingGenericTransform over `box` of `out` with a map (x, y) -> (xin, yin).
template <typename Map>
void genericTransform(Raster& out, const Raster& in, int x0, int y0, int x1, int y1, Map map,
                      bool bilinearFilter, bool fill) {
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > out.w) x1 = out.w;
  if (y1 > out.h) y1 = out.h;
  for (int y = y0; y < y1; ++y) {
    uint8_t* o = out.row(y) + static_cast<size_t>(x0) * out.c;
    for (int x = x0; x < x1; ++x, o += out.c) {
      double xx, yy;
      map(x - x0, y - y0, xx, yy);
      const bool ok = bilinearFilter ? bilinear(in, xx, yy, o) : nearest(in, xx, yy, o);
      if (!ok && fill) std::fill(o, o + out.c, 0);
    }
  }
}

// ImagingScaleAffine: Image.transform's nearest filter for a map without rotation or shear.
void pilScaleAffine(const Raster& in, Raster& out, const double a[6]) {
  const int C = in.c, outW = out.w, outH = out.h;
  std::vector<int> xintab(static_cast<size_t>(outW), 0);
  double xo = a[2] + a[0] * 0.5, yo = a[5] + a[4] * 0.5;
  int xmin = outW, xmax = 0;
  for (int x = 0; x < outW; ++x) {
    const int xin = coord(xo);
    if (xin >= 0 && xin < in.w) {
      xmax = x + 1;
      if (x < xmin) xmin = x;
      xintab[static_cast<size_t>(x)] = xin;
    }
    xo += a[0];
  }
  for (int y = 0; y < outH; ++y) {
    const int yi = coord(yo);
    if (yi >= 0 && yi < in.h)
      for (int x = xmin; x < xmax; ++x)
        for (int b = 0; b < C; ++b)
          out.row(y)[x * C + b] = in.row(yi)[xintab[static_cast<size_t>(x)] * C + b];
    yo += a[4];
  }
}

// ImagingTransformAffine's nearest filter in 16.16 fixed point (where the map's values fit).
void pilFixedAffine(const Raster& in, Raster& out, const double a[6]) {
  const int C = in.c, outW = out.w, outH = out.h;
  auto fix = [](double v) { return floorInt(v * 65536.0 + 0.5); };
  const int a0 = fix(a[0]), a1 = fix(a[1]), a3 = fix(a[3]), a4 = fix(a[4]);
  int a2 = fix(a[2] + a[0] * 0.5 + a[1] * 0.5);
  int a5 = fix(a[5] + a[3] * 0.5 + a[4] * 0.5);
  for (int y = 0; y < outH; ++y) {
    int xx = a2, yy = a5;
    for (int x = 0; x < outW; ++x) {
      const int xin = xx >> 16;
      if (xin >= 0 && xin < in.w) {
        const int yin = yy >> 16;
        if (yin >= 0 && yin < in.h)
          for (int b = 0; b < C; ++b) out.row(y)[x * C + b] = in.row(yin)[xin * C + b];
      }
      xx += a0;
      yy += a3;
    }
    a2 += a1;
    a5 += a4;
  }
}

// Image.transform(size, AFFINE, a, resample, fillcolor=0): ImagingTransformAffine.
Raster pilAffine(const Raster& in, int outW, int outH, const double a[6], bool bilinearFilter) {
  Raster out(outW, outH, in.c);
  if (bilinearFilter) {
    genericTransform(
        out, in, 0, 0, outW, outH,
        [&](int x, int y, double& xo, double& yo) {
          const double xin = x + 0.5, yin = y + 0.5;
          xo = a[0] * xin + a[1] * yin + a[2];
          yo = a[3] * xin + a[4] * yin + a[5];
        },
        true, false);
    return out;
  }
  const int C = in.c;
  if (a[1] == 0 && a[3] == 0) {  // ImagingScaleAffine
    pilScaleAffine(in, out, a);
    return out;
  }
  auto checkFixed = [&](int x, int y) {
    return std::fabs(x * a[0] + y * a[1] + a[2]) < 32768.0 &&
           std::fabs(x * a[3] + y * a[4] + a[5]) < 32768.0;
  };
  if (checkFixed(0, 0) && checkFixed(outW, outH) && checkFixed(0, outH) && checkFixed(outW, 0)) {
    pilFixedAffine(in, out, a);
    return out;
  }
  double xo = a[2] + a[1] * 0.5 + a[0] * 0.5, yo = a[5] + a[4] * 0.5 + a[3] * 0.5;
  for (int y = 0; y < outH; ++y) {
    double xx = xo, yy = yo;
    for (int x = 0; x < outW; ++x) {
      const int xin = coord(xx);
      if (xin >= 0 && xin < in.w) {
        const int yin = coord(yy);
        if (yin >= 0 && yin < in.h)
          for (int b = 0; b < C; ++b) out.row(y)[x * C + b] = in.row(yin)[xin * C + b];
      }
      xx += a[0];
      yy += a[3];
    }
    xo += a[1];
    yo += a[4];
  }
  return out;
}

// scipy.ndimage.affine_transform(..., order=0, mode='constant', cval=0): output (row, col, band)
// -> input coordinates by a matrix (rank x rank) and a shift; nearest = floor(cc + 0.5).
Raster scipyAffineNearest(const Raster& in, int outRows, int outCols, const double m[2][2],
                          const double shift[2]) {
  Raster out(outCols, outRows, in.c);
  for (int r = 0; r < outRows; ++r)
    for (int col = 0; col < outCols; ++col) {
      double cc[2];
      for (int k = 0; k < 2; ++k) {
        double v = 0.0;
        v += r * m[k][0];
        v += col * m[k][1];
        v += shift[k];
        cc[k] = v;
      }
      const int lens[2] = {in.h, in.w};
      bool constant = false;
      long idx[2];
      for (int k = 0; k < 2; ++k) {
        double c = cc[k];
        if (c < 0 || c > lens[k] - 1) c = -1;  // map_coordinate, mode constant
        if (!(c > -1.0)) {
          constant = true;
          break;
        }
        idx[k] = static_cast<long>(std::floor(c + 0.5));
      }
      if (constant) continue;  // cval 0
      for (int b = 0; b < in.c; ++b)
        out.row(r)[col * in.c + b] = in.row(static_cast<int>(idx[0]))[idx[1] * in.c + b];
    }
  return out;
}

// kraken's _rotate: skimage's AffineTransform(rotation=angle), the output shape from the
// corners mapped by its inverse (numpy.linalg.inv, i.e. LAPACK's LU with reciprocal pivots),
// and the translation that puts the top-left corner at the origin.
struct Rotation {
  double c = 1, s = 0, tx = 0, ty = 0;
  int rows = 0, cols = 0;
};

Rotation rotation(double angle, int rows, int cols) {
  Rotation rot;
  const double c = std::cos(angle), s = std::sin(angle);
  rot.c = c;
  rot.s = s;
  // inverse of [[c, -s], [s, c]] (the third row and column are the identity's)
  double A[2][2] = {{c, -s}, {s, c}};
  int perm[2] = {0, 1};
  if (std::fabs(A[1][0]) > std::fabs(A[0][0])) {
    std::swap(A[0][0], A[1][0]);
    std::swap(A[0][1], A[1][1]);
    std::swap(perm[0], perm[1]);
  }
  const double p = A[0][0], rp = 1.0 / p;
  const double l = A[1][0] * rp;
  const double u11 = A[1][1] - l * A[0][1];
  const double ru = 1.0 / u11;
  double inv[2][2];
  for (int j = 0; j < 2; ++j) {
    const double e0 = perm[0] == j ? 1.0 : 0.0, e1 = perm[1] == j ? 1.0 : 0.0;
    const double y0 = e0, y1 = e1 - l * y0;
    const double x1 = y1 * ru;
    const double x0 = (y0 - A[0][1] * x1) * rp;
    inv[0][j] = x0;
    inv[1][j] = x1;
  }
  const double corners[4][2] = {
      {0, 0}, {0, double(rows - 1)}, {double(cols - 1), double(rows - 1)}, {double(cols - 1), 0}};
  double minc = std::numeric_limits<double>::infinity(), minr = minc, maxc = -minc, maxr = -minc;
  for (const auto& k : corners) {
    const double X = k[0] * inv[0][0] + k[1] * inv[0][1] + 1.0 * 0.0;
    const double Y = k[0] * inv[1][0] + k[1] * inv[1][1] + 1.0 * 0.0;
    minc = std::min(minc, X);
    maxc = std::max(maxc, X);
    minr = std::min(minr, Y);
    maxr = std::max(maxr, Y);
  }
  rot.rows = static_cast<int>(std::nearbyint(maxr - minr + 1));  // np.around: half to even
  rot.cols = static_cast<int>(std::nearbyint(maxc - minc + 1));
  rot.tx = minc * c + minr * -s + 1.0 * 0.0;
  rot.ty = minc * s + minr * c + 1.0 * 0.0;
  return rot;
}

// The angle of a two-point baseline, as extract_polygons computes it.
double baselineAngle(const std::vector<Point2>& bl) {
  const double dx = bl[1].x - bl[0].x, dy = bl[1].y - bl[0].y;
  const double length = norm2(dx, dy);
  const double sum = 0.0 + length;
  double px = dx * length / sum, py = dy * length / sum;  // np.mean over one element: (0 + v) / 1
  px = (0.0 + px) / 1.0;
  py = (0.0 + py) / 1.0;
  const double n = std::sqrt((0.0 + px * px) + py * py);
  px = px / n;
  py = py / n;
  return std::atan2(py, px);
}

std::vector<int> truncatedXY(const std::vector<Point2>& pts, double dx, double dy) {
  std::vector<int> xy;
  for (const Point2& p : pts) {
    xy.push_back(static_cast<int>(p.x - dx));
    xy.push_back(static_cast<int>(p.y - dy));
  }
  return xy;
}

// ---------------------------------------------------------------------------------------------
// The new extractor's bevelled mesh (_bevelled_warping_envelope) and PIL's MESH transform

struct Envelope {
  std::vector<Point2> source, target;
};

Envelope bevelledEnvelope(const std::vector<Point2>& baseline, Point2 start, double outRows,
                          double outCols) {
  auto intPoint = [](double x, double y) {
    return Point2{static_cast<double>(static_cast<int64_t>(x)),
                  static_cast<double>(static_cast<int64_t>(y))};
  };
  const double dy0 = -start.y, dy1 = outRows - start.y;
  const size_t L = baseline.size();
  std::vector<Point2> normed(L - 1), normals(L - 1);
  std::vector<double> cum(L, 0.0);
  for (size_t k = 0; k + 1 < L; ++k) {
    const double dx = baseline[k + 1].x - baseline[k].x, dy = baseline[k + 1].y - baseline[k].y;
    const double n = norm2(dx, dy);
    normed[k] = {dx / n, dy / n};
    normals[k] = {-normed[k].y, normed[k].x};
    cum[k + 1] = cum[k] + n;
  }
  Envelope env;
  const Point2 ini{baseline[0].x - normed[0].x * start.x, baseline[0].y - normed[0].y * start.x};
  env.source.push_back(intPoint(ini.x + dy0 * normals[0].x, ini.y + dy0 * normals[0].y));
  env.source.push_back(intPoint(ini.x + dy1 * normals[0].x, ini.y + dy1 * normals[0].y));
  env.target.push_back({0, 0});
  env.target.push_back({0, outRows});
  const double maxBevel = outRows / 3, bevelStep = maxBevel / 2;
  for (size_t k = 0; k + 2 < L; ++k) {
    const Point2 pt = baseline[k + 1];
    const Point2 prev{baseline[k].x - pt.x, baseline[k].y - pt.y};
    const Point2 next{baseline[k + 2].x - pt.x, baseline[k + 2].y - pt.y};
    const double fp = std::max(2., norm2(prev.x, prev.y) / maxBevel);
    const double fn = std::max(2., norm2(next.x, next.y) / maxBevel);
    const Point2 bp{prev.x / fp, prev.y / fp}, bn{next.x / fn, next.y / fn};
    const double lp = norm2(bp.x, bp.y), ln = norm2(bn.x, bn.y);
    const double steps = std::max(1.0, std::nearbyint((lp + ln) / bevelStep));
    for (int i = 0; i < static_cast<int>(steps) + 1; ++i) {
      const double t = i / steps;
      const double a = (1 - t) * (1 - t), b = t * t;
      const Point2 tpt{(pt.x + a * bp.x) + b * bn.x, (pt.y + a * bp.y) + b * bn.y};
      const double tx = ((start.x + cum[k + 1]) - a * lp) + b * ln;
      Point2 tn{(1 - t) * normals[k].x + t * normals[k + 1].x,
                (1 - t) * normals[k].y + t * normals[k + 1].y};
      const double nn = norm2(tn.x, tn.y);
      tn = {tn.x / nn, tn.y / nn};
      const Point2 s0 = intPoint(tpt.x + dy0 * tn.x, tpt.y + dy0 * tn.y);
      const Point2 s1 = intPoint(tpt.x + dy1 * tn.x, tpt.y + dy1 * tn.y);
      const Point2 t0{static_cast<double>(static_cast<int64_t>(tx)), 0};
      auto same = [](const Point2& u, const Point2& v) { return u.x == v.x && u.y == v.y; };
      const size_t ns = env.source.size(), nt = env.target.size();
      if (same(s0, env.source[ns - 2]) || same(s1, env.source[ns - 1]) ||
          same(t0, env.target[nt - 2]))
        continue;
      env.source.push_back(s0);
      env.source.push_back(s1);
      env.target.push_back(t0);
      env.target.push_back({t0.x, outRows});
    }
  }
  const double along = (outCols - cum[L - 1]) - start.x;
  const Point2 end{baseline[L - 1].x + normed[L - 2].x * along,
                   baseline[L - 1].y + normed[L - 2].y * along};
  env.source.push_back({end.x + dy0 * normals[L - 2].x, end.y + dy0 * normals[L - 2].y});
  env.source.push_back({end.x + dy1 * normals[L - 2].x, end.y + dy1 * normals[L - 2].y});
  env.target.push_back({outCols, 0});
  env.target.push_back({outCols, outRows});
  return env;
}

// Image.transform(size, MESH, [(box, quad), ...], resample): each quad (NW, SW, SE, NE) mapped
// onto its box with QUAD, in order, out-of-source pixels 0.
Raster pilMesh(const Raster& in, int outW, int outH, const Envelope& env, bool bilinearFilter) {
  Raster out(outW, outH, in.c);
  const auto& s = env.source;
  const auto& t = env.target;
  for (size_t i = 0; i + 3 < s.size(); i += 2) {
    const double bx0 = t[i].x, by0 = t[i].y, bx1 = t[i + 3].x, by1 = t[i + 3].y;
    const double w = bx1 - bx0, h = by1 - by0;
    if (w == 0 || h == 0) emptyRecord("float division by zero (a mesh cell of width 0)");
    const Point2 nw = s[i], sw = s[i + 1], se = s[i + 3], ne = s[i + 2];
    const double As = 1.0 / w, At = 1.0 / h;
    const double a[8] = {
        nw.x, (ne.x - nw.x) * As, (sw.x - nw.x) * At, (((se.x - sw.x) - ne.x) + nw.x) * As * At,
        nw.y, (ne.y - nw.y) * As, (sw.y - nw.y) * At, (((se.y - sw.y) - ne.y) + nw.y) * As * At};
    genericTransform(
        out, in, static_cast<int>(bx0), static_cast<int>(by0), static_cast<int>(bx1),
        static_cast<int>(by1),
        [&](int x, int y, double& xo, double& yo) {
          const double xin = x + 0.5, yin = y + 0.5;
          xo = a[0] + a[1] * xin + a[2] * yin + a[3] * xin * yin;
          yo = a[4] + a[5] * xin + a[6] * yin + a[7] * xin * yin;
        },
        bilinearFilter, true);
  }
  return out;
}

Raster legacyPiecewise(const Raster& page, const std::vector<Point2>& baseline,
                       std::vector<Point2> pl, int cMin, int rMin, int cMax, int rMax, int order);

// The page's crop [cMin, cMax] x [rMin, rMax] with the pixels outside `polygon` (page
// coordinates) set to 0; `ink` is the mask's value inside (kraken's masks hold 1 or 255).
Raster maskedCrop(const Raster& page, const std::vector<Point2>& polygon, int cMin, int rMin,
                  int cMax, int rMax, uint8_t ink) {
  Raster patch = crop(page, cMin, rMin, cMax + 1, rMax + 1);
  std::vector<uint8_t> mask(static_cast<size_t>(patch.w) * patch.h, 0);
  fillPolygon(mask.data(), patch.w, patch.h, truncatedXY(polygon, cMin, rMin), ink);
  for (size_t i = 0; i < mask.size(); ++i)
    if (!mask[i])
      for (int b = 0; b < patch.c; ++b) patch.px[i * patch.c + b] = 0;
  return patch;
}

bool outsideImage(const Raster& page, const std::vector<Point2>& pts) {
  double mx = -std::numeric_limits<double>::infinity(), my = mx;
  for (const Point2& p : pts) {
    if (p.x < 0 || p.y < 0) return true;
    mx = std::max(mx, p.x), my = std::max(my, p.y);
  }
  return my >= page.h || mx >= page.w;
}

// A straight baseline (two points): the polygon's patch rotated level.
Raster straightLine(const Raster& page, const std::vector<Point2>& bl,
                    const std::vector<Point2>& pl, int cMin, int rMin, int cMax, int rMax,
                    bool legacy, int order) {
  const double angle = baselineAngle(bl);
  Raster patch = maskedCrop(page, pl, cMin, rMin, cMax, rMax, legacy ? 1 : 255);
  const Rotation rot = rotation(angle, patch.h, patch.w);
  if (legacy) {
    // numpy patch through scipy's affine_transform with the homogeneous matrix
    // [[c, s, ty], [-s, c, tx], [0, 0, 1]] whose translation kraken zeroed: a 2-D (grey) patch
    // takes the matrix as homogeneous and so loses the offset; a 3-D (colour) one keeps it.
    const double m[2][2] = {{rot.c, rot.s}, {-rot.s, rot.c}};
    const double shift[2] = {patch.c == 3 ? rot.ty : 0.0, patch.c == 3 ? rot.tx : 0.0};
    return scipyAffineNearest(patch, rot.rows, rot.cols, m, shift);
  }
  const double a[6] = {rot.c, -rot.s, rot.tx, rot.s, rot.c, rot.ty};
  return pilAffine(patch, rot.cols, rot.rows, a, order == 1);
}

// A curved baseline, the new extractor: the polygon's points measured along the baseline give
// the straightened line's size, and bevelledEnvelope's mesh maps the patch onto it.
Raster curvedLine(const Raster& page, const std::vector<Point2>& bl, std::vector<Point2> pl,
                  int cMin, int rMin, int cMax, int rMax, int order) {
  if (pl.size() > 50) pl = approximatePolygon(pl, 2);
  const std::vector<Point2> full = subdividePolygon(pl);
  const size_t K = bl.size();
  std::vector<Point2> normed(K - 1);
  std::vector<double> norms(K - 1), cum(K, 0.0);
  for (size_t k = 0; k + 1 < K; ++k) {
    const double dx = bl[k + 1].x - bl[k].x, dy = bl[k + 1].y - bl[k].y;
    norms[k] = norm2(dx, dy);
    normed[k] = {dx / norms[k], dy / norms[k]};
    cum[k + 1] = cum[k] + norms[k];
  }
  double dMinX = std::numeric_limits<double>::infinity(), dMaxX = -dMinX, dMinY = dMinX,
         dMaxY = -dMinX;
  for (const Point2& p : full) {
    size_t best = 0;
    double bestDist = std::numeric_limits<double>::infinity(), bx = 0;
    Point2 bd;
    for (size_t k = 0; k + 1 < K; ++k) {
      const Point2 d{p.x - bl[k].x, p.y - bl[k].y};
      const double x = (0.0 + d.x * normed[k].x) + d.y * normed[k].y;
      const double segDist = std::max(-x, x - norms[k]);
      if (segDist < bestDist) {
        bestDist = segDist;
        best = k;
        bx = x;
        bd = d;
      }
    }
    const double y = normed[best].x * bd.y - normed[best].y * bd.x;  // np.cross
    const double X = (cum[best] + bx) + bl[0].x, Y = y + bl[0].y;
    dMinX = std::min(dMinX, X), dMaxX = std::max(dMaxX, X);
    dMinY = std::min(dMinY, Y), dMaxY = std::max(dMaxY, Y);
  }
  const int cDstMin = static_cast<int>(dMinX), cDstMax = static_cast<int>(dMaxX);
  const int rDstMin = static_cast<int>(dMinY), rDstMax = static_cast<int>(dMaxY);
  const double outRows = rDstMax - rDstMin + 1, outCols = cDstMax - cDstMin + 1;
  Raster patch = maskedCrop(page, full, cMin, rMin, cMax, rMax, 255);
  std::vector<Point2> offsetBl(K);
  for (size_t k = 0; k < K; ++k) offsetBl[k] = {bl[k].x - cMin, bl[k].y - rMin};
  const Point2 start{(bl[0].x + cum[0]) - cDstMin, (bl[0].y + 0.0) - rDstMin};
  const Envelope env = bevelledEnvelope(offsetBl, start, outRows, outCols);
  return pilMesh(patch, static_cast<int>(outCols), static_cast<int>(outRows), env, order == 1);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Raster extractBaselineLine(const Raster& page, const KrakenLineSpec& line, bool legacy,
                           bool bilevel) {
  const int order = bilevel ? 0 : 1;
  if (line.boundary.empty()) emptyRecord("No boundary given for line");
  const std::vector<Point2>& bl = line.baselinePoints;
  double blLength = 0;
  for (size_t i = 0; i + 1 < bl.size(); ++i)
    blLength += norm2(bl[i + 1].x - bl[i].x, bl[i + 1].y - bl[i].y);
  if (bl.size() < 2 || blLength < 5) emptyRecord("Baseline length below minimum 5px");
  std::vector<Point2> pl = line.boundary;
  double minX = pl[0].x, maxX = pl[0].x, minY = pl[0].y, maxY = pl[0].y;
  for (const Point2& p : pl) {
    minX = std::min(minX, p.x), maxX = std::max(maxX, p.x);
    minY = std::min(minY, p.y), maxY = std::max(maxY, p.y);
  }
  const int cMin = static_cast<int>(minX), cMax = static_cast<int>(maxX);
  const int rMin = static_cast<int>(minY), rMax = static_cast<int>(maxY);
  if (outsideImage(page, pl)) emptyRecord("Line polygon outside of image bounds");
  if (outsideImage(page, bl)) emptyRecord("Baseline outside of image bounds");

  Raster result;
  if (bl.size() == 2)
    result = straightLine(page, bl, pl, cMin, rMin, cMax, rMax, legacy, order);
  else if (legacy)
    result = legacyPiecewise(page, bl, pl, cMin, rMin, cMax, rMax, order);
  else
    result = curvedLine(page, bl, pl, cMin, rMin, cMax, rMax, order);
  int box[4];
  if (getBBox(result, box)) result = crop(result, box[0], box[1], box[2], box[3]);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The legacy extractor for curved baselines: skimage's PiecewiseAffineTransform + warp

namespace {

// GEOS's LineString.project / interpolate on one segment (shapely 1.8), as kraken's legacy
// extractor uses them: the distance along the segment of the point's projection (clamped) and
// the point at that distance.
struct Projection {
  double dist = 0;
  Point2 at;
};

Projection projectOnSegment(Point2 p0, Point2 p1, Point2 p) {
  const double len = std::sqrt((p0.x - p1.x) * (p0.x - p1.x) + (p0.y - p1.y) * (p0.y - p1.y));
  double frac;
  if (p.x == p0.x && p.y == p0.y) {
    frac = 0.0;
  } else if (p.x == p1.x && p.y == p1.y) {
    frac = 1.0;
  } else {
    const double dx = p1.x - p0.x, dy = p1.y - p0.y;
    frac = ((p.x - p0.x) * dx + (p.y - p0.y) * dy) / (dx * dx + dy * dy);
  }
  Projection pr;
  pr.dist = frac <= 0.0 ? 0.0 : frac <= 1.0 ? frac * len : len;
  // interpolate(dist): LengthLocationMap::getLocationForward, LinearLocation::getCoordinate
  if (pr.dist <= 0.0) {
    pr.at = p0;
  } else if (0.0 + len > pr.dist) {
    const double f = (pr.dist - 0.0) / len;
    pr.at = f <= 0.0   ? p0
            : f >= 1.0 ? p1
                       : Point2{p0.x + f * (p1.x - p0.x), p0.y + f * (p1.y - p0.y)};
  } else {
    pr.at = p1;
  }
  return pr;
}

// A Delaunay triangulation of `pts` (Bowyer-Watson with a vertex at infinity, so that thin
// triangles along the hull are kept as Qhull keeps them), duplicates dropped. Co-circular
// points may be split along the other diagonal than Qhull's.
std::vector<std::array<int, 3>> delaunay(const std::vector<Point2>& P) {
  using LD = long double;
  const int n = static_cast<int>(P.size());
  constexpr int G = -1;  // the vertex at infinity
  auto orient = [&](int a, int b, int c) -> LD {
    return static_cast<LD>(P[b].x - P[a].x) * (P[c].y - P[a].y) -
           static_cast<LD>(P[b].y - P[a].y) * (P[c].x - P[a].x);
  };
  // triangles are counter-clockwise; a ghost (a, b, G) sits outside the hull edge a -> b
  std::vector<std::array<int, 3>> tris;
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    bool dup = false;
    for (int j : order) dup = dup || (P[j].x == P[i].x && P[j].y == P[i].y);
    if (!dup) order.push_back(i);
  }
  // a first non-degenerate triangle
  size_t k = 2;
  while (k < order.size() && orient(order[0], order[1], order[k]) == 0) ++k;
  if (k >= order.size()) return {};
  int a = order[0], b = order[1], c = order[k];
  if (orient(a, b, c) < 0) std::swap(b, c);
  tris = {{a, b, c}, {b, a, G}, {c, b, G}, {a, c, G}};
  auto conflicts = [&](const std::array<int, 3>& t, int p) {
    if (t[2] == G) {
      const LD o = orient(t[0], t[1], p);
      if (o > 0) return true;  // beyond the hull edge t[0] -> t[1] (the hull is on its right)
      if (o < 0) return false;
      // on the hull line: in conflict when strictly between the edge's ends
      const Point2 u = P[t[0]], v = P[t[1]], q = P[p];
      const LD dot =
          static_cast<LD>(q.x - u.x) * (v.x - u.x) + static_cast<LD>(q.y - u.y) * (v.y - u.y);
      const LD len =
          static_cast<LD>(v.x - u.x) * (v.x - u.x) + static_cast<LD>(v.y - u.y) * (v.y - u.y);
      return dot > 0 && dot < len;
    }
    const LD ax = P[t[0]].x - P[p].x, ay = P[t[0]].y - P[p].y;
    const LD bx = P[t[1]].x - P[p].x, by = P[t[1]].y - P[p].y;
    const LD cx = P[t[2]].x - P[p].x, cy = P[t[2]].y - P[p].y;
    const LD det = (ax * ax + ay * ay) * (bx * cy - cx * by) -
                   (bx * bx + by * by) * (ax * cy - cx * ay) +
                   (cx * cx + cy * cy) * (ax * by - bx * ay);
    return det > 0;
  };
  for (size_t oi = 0; oi < order.size(); ++oi) {
    const int p = order[oi];
    if (p == a || p == b || p == c) continue;
    std::vector<std::array<int, 3>> keep, gone;
    for (const auto& t : tris) (conflicts(t, p) ? gone : keep).push_back(t);
    std::vector<std::pair<int, int>> edges;
    for (const auto& t : gone)
      for (int e = 0; e < 3; ++e) edges.push_back({t[e], t[(e + 1) % 3]});
    for (const auto& e : edges) {
      bool inner = false;
      for (const auto& f : edges) inner = inner || (f.first == e.second && f.second == e.first);
      if (inner) continue;
      if (e.first == G)
        keep.push_back({e.second, p, G});
      else if (e.second == G)
        keep.push_back({p, e.first, G});
      else
        keep.push_back({e.first, e.second, p});
    }
    tris.swap(keep);
  }
  std::vector<std::array<int, 3>> out;
  for (const auto& t : tris)
    if (t[2] != G && orient(t[0], t[1], t[2]) != 0) out.push_back(t);
  return out;
}

// The affine map of a triangle's vertices `from` onto `to` (skimage estimates it with an SVD;
// here it is solved exactly and rounded once).
std::array<double, 6> triangleAffine(const Point2 from[3], const Point2 to[3]) {
  using LD = long double;
  const LD x0 = from[0].x, y0 = from[0].y, x1 = from[1].x, y1 = from[1].y, x2 = from[2].x,
           y2 = from[2].y;
  const LD det = x0 * (y1 - y2) - y0 * (x1 - x2) + (x1 * y2 - x2 * y1);
  std::array<double, 6> m{};
  for (int k = 0; k < 2; ++k) {
    const LD v0 = k ? to[0].y : to[0].x, v1 = k ? to[1].y : to[1].x, v2 = k ? to[2].y : to[2].x;
    const LD a = (v0 * (y1 - y2) - y0 * (v1 - v2) + (v1 * y2 - v2 * y1)) / det;
    const LD b = (x0 * (v1 - v2) - v0 * (x1 - x2) + (x1 * v2 - x2 * v1)) / det;
    const LD c =
        (x0 * (y1 * v2 - y2 * v1) - y0 * (x1 * v2 - x2 * v1) + v0 * (x1 * y2 - x2 * y1)) / det;
    m[static_cast<size_t>(3 * k)] = static_cast<double>(a);
    m[static_cast<size_t>(3 * k + 1)] = static_cast<double>(b);
    m[static_cast<size_t>(3 * k + 2)] = static_cast<double>(c);
  }
  return m;
}

// The baseline's length up to each of its points (GEOS's segment lengths, summed in order).
std::vector<double> legacyCumulativeLengths(const std::vector<Point2>& baseline) {
  const size_t K = baseline.size();
  std::vector<double> cum(K, 0.0);
  for (size_t k = 0; k + 1 < K; ++k) {
    const Point2 a = baseline[k], b = baseline[k + 1];
    cum[k + 1] = cum[k] + (0.0 + std::sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)));
  }
  return cum;
}

// The control points' destinations: (distance along the baseline, signed distance from it),
// offset by the baseline's first point.
std::vector<Point2> legacyDestinations(const std::vector<Point2>& full,
                                       const std::vector<Point2>& baseline,
                                       const std::vector<double>& cum) {
  const size_t K = baseline.size();
  std::vector<Point2> polDst(full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    const Point2 p = full[i];
    size_t best = 0;
    Projection bestPr;
    double bestD = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k + 1 < K; ++k) {
      const Projection pr = projectOnSegment(baseline[k], baseline[k + 1], p);
      const double d = norm2(p.x - pr.at.x, p.y - pr.at.y);
      if (d < bestD) {
        bestD = d;
        best = k;
        bestPr = pr;
      }
    }
    const Point2 a = baseline[best], b = baseline[best + 1];
    const double det = (b.x - a.x) * (p.y - a.y) - (p.x - a.x) * (b.y - a.y);
    const double side = det > 0 ? 1.0 : det < 0 ? -1.0 : 0.0;
    const double perDist = side * norm2(p.x - bestPr.at.x, p.y - bestPr.at.y);
    const double lineDist = cum[best] + bestPr.dist;
    polDst[i] = {baseline[0].x + lineDist, baseline[0].y + perDist};
  }
  return polDst;
}

// tform.inverse's triangle for each output pixel: the first triangle of `tris` (over `dst`)
// holding it, -1 out of the mesh.
std::vector<int> triangleOwners(const std::vector<std::array<int, 3>>& tris,
                                const std::vector<Point2>& dst, int outRows, int outCols) {
  std::vector<int> owner(static_cast<size_t>(outRows) * outCols, -1);
  constexpr double eps = 100 * DBL_EPSILON;
  for (size_t t = 0; t < tris.size(); ++t) {
    const Point2 a = dst[static_cast<size_t>(tris[t][0])], b = dst[static_cast<size_t>(tris[t][1])],
                 c = dst[static_cast<size_t>(tris[t][2])];
    const double m00 = a.x - c.x, m01 = b.x - c.x, m10 = a.y - c.y, m11 = b.y - c.y;
    const double det = m00 * m11 - m01 * m10;
    if (det == 0) continue;
    const double i00 = m11 / det, i01 = -m01 / det, i10 = -m10 / det, i11 = m00 / det;
    const int x0 = std::max(0, static_cast<int>(std::floor(std::min({a.x, b.x, c.x}))) - 1);
    const int x1 =
        std::min(outCols - 1, static_cast<int>(std::ceil(std::max({a.x, b.x, c.x}))) + 1);
    const int y0 = std::max(0, static_cast<int>(std::floor(std::min({a.y, b.y, c.y}))) - 1);
    const int y1 =
        std::min(outRows - 1, static_cast<int>(std::ceil(std::max({a.y, b.y, c.y}))) + 1);
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        int& o = owner[static_cast<size_t>(y) * outCols + x];
        if (o >= 0) continue;
        const double px = x - c.x, py = y - c.y;
        const double l0 = i00 * px + i01 * py, l1 = i10 * px + i11 * py, l2 = 1.0 - l0 - l1;
        if (l0 >= -eps && l0 <= 1 + eps && l1 >= -eps && l1 <= 1 + eps && l2 >= -eps &&
            l2 <= 1 + eps)
          o = static_cast<int>(t);
      }
  }
  return owner;
}

// Each triangle's affine map from `dst` onto `src`.
std::vector<std::array<double, 6>> triangleAffines(const std::vector<std::array<int, 3>>& tris,
                                                   const std::vector<Point2>& src,
                                                   const std::vector<Point2>& dst) {
  std::vector<std::array<double, 6>> affines(tris.size());
  for (size_t t = 0; t < tris.size(); ++t) {
    const Point2 from[3] = {dst[static_cast<size_t>(tris[t][0])],
                            dst[static_cast<size_t>(tris[t][1])],
                            dst[static_cast<size_t>(tris[t][2])]};
    const Point2 to[3] = {src[static_cast<size_t>(tris[t][0])],
                          src[static_cast<size_t>(tris[t][1])],
                          src[static_cast<size_t>(tris[t][2])]};
    affines[t] = triangleAffine(from, to);
  }
  return affines;
}

// map_coordinates(order, mode='grid-constant', cval=0) of every band of `patch` at (sy, sx),
// into values[0..patch.c).
void mapCoordinates(const Raster& patch, double sy, double sx, int order, double* values) {
  const double cc[2] = {sy, sx};
  const int lens[2] = {patch.h, patch.w};
  long start[2];
  double w[2][2];
  for (int k = 0; k < 2; ++k) {
    if (order == 1) {
      start[k] = static_cast<long>(std::floor(cc[k]));
      const double f = cc[k] - std::floor(cc[k]);
      w[k][0] = 1.0 - f;
      w[k][1] = 1.0 - w[k][0];
    } else {
      start[k] = static_cast<long>(std::floor(cc[k] + 0.5));
    }
  }
  for (int b = 0; b < patch.c; ++b) {
    double t = 0.0;
    if (order == 1) {
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          const long r = start[0] + i, cidx = start[1] + j;
          double coeff = r < 0 || r >= lens[0] || cidx < 0 || cidx >= lens[1]
                             ? 0.0
                             : patch.row(static_cast<int>(r))[cidx * patch.c + b];
          coeff *= w[0][i];
          coeff *= w[1][j];
          t += coeff;
        }
    } else {
      const long r = start[0], cidx = start[1];
      t = r < 0 || r >= lens[0] || cidx < 0 || cidx >= lens[1]
              ? 0.0
              : patch.row(static_cast<int>(r))[cidx * patch.c + b];
    }
    values[b] = t;
  }
}

// warp: each output pixel's source through its triangle's map, map_coordinates there, clipped
// to the patch's range and cast as astype('uint8').
Raster legacyWarp(const Raster& patch, const std::vector<int>& owner,
                  const std::vector<std::array<double, 6>>& affines,
                  const std::vector<size_t>& counts, int outRows, int outCols, int order) {
  double lo = 255, hi = 0;
  for (uint8_t v : patch.px) lo = std::min<double>(lo, v), hi = std::max<double>(hi, v);
  Raster out(outCols, outRows, patch.c);
  std::vector<double> values(out.px.size());
  double outLo = std::numeric_limits<double>::infinity(), outHi = -outLo;
  for (int y = 0; y < outRows; ++y)
    for (int x = 0; x < outCols; ++x) {
      const int o = owner[static_cast<size_t>(y) * outCols + x];
      double sx = -1, sy = -1;
      if (o >= 0) {
        const std::array<double, 6>& m = affines[static_cast<size_t>(o)];
        if (counts[static_cast<size_t>(o)] == 1) {  // NumPy's one-row matrix product
          sx = (x * m[0] + m[2]) + y * m[1];
          sy = (x * m[3] + m[5]) + y * m[4];
        } else {
          sx = (x * m[0] + y * m[1]) + m[2];
          sy = (x * m[3] + y * m[4]) + m[5];
        }
      }
      double* t = values.data() + (static_cast<size_t>(y) * outCols + x) * patch.c;
      mapCoordinates(patch, sy, sx, order, t);
      for (int b = 0; b < patch.c; ++b)
        outLo = std::min(outLo, t[b]), outHi = std::max(outHi, t[b]);
    }
  if (!(lo <= 0 && 0 <= hi) && outLo <= 0 && 0 <= outHi) lo = std::min(lo, 0.0);
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = std::min(std::max(values[i], lo), hi);
    out.px[i] = static_cast<uint8_t>(order == 1 ? v : v + 0.5);  // astype('uint8')
  }
  return out;
}

Raster legacyPiecewise(const Raster& page, const std::vector<Point2>& baseline,
                       std::vector<Point2> pl, int cMin, int rMin, int cMax, int rMax, int order) {
  if (pl.size() > 50) pl = approximatePolygon(pl, 2);
  const std::vector<Point2> full = subdividePolygon(pl);
  const size_t K = baseline.size();
  const std::vector<double> cum = legacyCumulativeLengths(baseline);
  // control points: (distance along the baseline, signed distance from it)
  const std::vector<Point2> polDst = legacyDestinations(full, baseline, cum);
  double dMinX = std::numeric_limits<double>::infinity(), dMaxX = -dMinX, dMinY = dMinX,
         dMaxY = -dMinX;
  for (const Point2& q : polDst) {
    dMinX = std::min(dMinX, q.x), dMaxX = std::max(dMaxX, q.x);
    dMinY = std::min(dMinY, q.y), dMaxY = std::max(dMaxY, q.y);
  }
  const int cDstMin = static_cast<int>(dMinX), cDstMax = static_cast<int>(dMaxX);
  const int rDstMin = static_cast<int>(dMinY), rDstMax = static_cast<int>(dMaxY);
  const int outRows = static_cast<int>(std::nearbyint(double(rDstMax - rDstMin + 1)));
  const int outCols = static_cast<int>(std::nearbyint(double(cDstMax - cDstMin + 1)));
  Raster patch = maskedCrop(page, full, cMin, rMin, cMax, rMax, 1);
  std::vector<Point2> src, dst;
  for (size_t k = 0; k < K; ++k) {
    src.push_back({baseline[k].x - cMin, baseline[k].y - rMin});
    dst.push_back({(baseline[0].x + cum[k]) - cDstMin, (baseline[0].y + 0.0) - rDstMin});
  }
  for (size_t i = 0; i < full.size(); ++i) {
    src.push_back({full[i].x - cMin, full[i].y - rMin});
    dst.push_back({polDst[i].x - cDstMin, polDst[i].y - rDstMin});
  }
  if (outRows <= 0 || outCols <= 0) emptyRecord("the straightened line has no pixels");
  // tform.inverse: the triangle of Delaunay(dst) holding each output pixel, its affine map
  // onto src (out of the mesh: -1, -1)
  const std::vector<std::array<int, 3>> tris = delaunay(dst);
  const std::vector<int> owner = triangleOwners(tris, dst, outRows, outCols);
  std::vector<size_t> counts(tris.size(), 0);
  for (int o : owner)
    if (o >= 0) ++counts[static_cast<size_t>(o)];
  const std::vector<std::array<double, 6>> affines = triangleAffines(tris, src, dst);
  // warp: map_coordinates(order, mode='grid-constant', cval=0), clipped to the patch's range
  return legacyWarp(patch, owner, affines, counts, outRows, outCols, order);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// BaselineOCRRecord's cuts: precompute_polygon_sections

namespace {

bool pointInPolygon(Point2 pt, const std::vector<Point2>& poly) {
  const double x = pt.x, y = pt.y;
  const size_t n = poly.size();
  bool inside = false;
  size_t j = n - 1;
  for (size_t i = 0; i < n; ++i) {
    const double xi = poly[i].x, yi = poly[i].y, xj = poly[j].x, yj = poly[j].y;
    if (std::min(yi, yj) <= y && y <= std::max(yi, yj) && std::min(xi, xj) <= x &&
        x <= std::max(xi, xj)) {
      if (std::fabs((xj - xi) * (y - yi) - (yj - yi) * (x - xi)) < 1e-10) return false;
    }
    if (((yi > y) != (yj > y)) && (x < (xj - xi) * (y - yi) / (yj - yi) + xi)) inside = !inside;
    j = i;
  }
  return inside;
}

bool rayBoundaryIntersection(Point2 origin, Point2 dir, const std::vector<Point2>& poly,
                             Point2& hit) {
  const size_t n = poly.size();
  double bestT = std::numeric_limits<double>::infinity();
  bool found = false;
  for (size_t i = 0; i < n; ++i) {
    const Point2 p1 = poly[i], p2 = poly[(i + 1) % n];
    const Point2 edge{p2.x - p1.x, p2.y - p1.y};
    const double denom = dir.x * edge.y - dir.y * edge.x;
    if (std::fabs(denom) < kEps) continue;
    const Point2 diff{p1.x - origin.x, p1.y - origin.y};
    const double t = (diff.x * edge.y - diff.y * edge.x) / denom;
    const double u = (diff.x * dir.y - diff.y * dir.x) / denom;
    if (t >= 0 && 0 <= u && u <= 1 && t < bestT) {
      bestT = t;
      hit = {origin.x + t * dir.x, origin.y + t * dir.y};
      found = true;
    }
  }
  return found;
}

// _test_intersect(bp, uv, bs).round(): the first boundary crossing (in polygon order) of the
// ray from bp along uv * (1, -1) and along uv * (-1, 1).
bool testIntersect(Point2 bp, Point2 uv, const std::vector<Point2>& bs, Point2 out[2]) {
  const size_t n = bs.size();
  const int dirs[2][2] = {{1, -1}, {-1, 1}};
  for (int di = 0; di < 2; ++di) {
    const double d0 = dirs[di][0], d1 = dirs[di][1];
    const double ux = uv.x * d0, uy = uv.y * d1;  // uv * dir
    const double w0 = uy * -1, w1 = ux * 1;       // (uv * dir * (1, -1))[::-1]
    bool found = false;
    double t = 0;
    for (size_t i = 0; i < n && !found; ++i) {
      const Point2 prev = bs[(i + n - 1) % n];
      const Point2 u{bp.x - prev.x, bp.y - prev.y};
      const Point2 v{bs[i].x - prev.x, bs[i].y - prev.y};
      const double z = v.x * w0 + v.y * w1;
      const double t1 = (v.x * u.y - v.y * u.x) / (z + kEps);
      const double t2 = (u.x * w0 + u.y * w1) / (z + kEps);
      if (t2 >= 0.0 && t2 <= 1.0 && t1 >= 0) {
        t = t1;
        found = true;
      }
    }
    if (!found) return false;
    out[di] = {std::nearbyint(bp.x + t * ux), std::nearbyint(bp.y + t * uy)};
  }
  return true;
}

}  // namespace

std::vector<Point2> polygonSection(const std::vector<Point2>& baseline,
                                   const std::vector<Point2>& boundary, double d1, double d2) {
  if (baseline.size() < 2 || boundary.size() < 3) return {};
  std::vector<Point2> bl = baseline;
  auto trunc = [](Point2 p) {
    return Point2{static_cast<double>(static_cast<int64_t>(p.x)),
                  static_cast<double>(static_cast<int64_t>(p.y))};
  };
  Point2 hit;
  if (pointInPolygon(bl.front(), boundary) &&
      rayBoundaryIntersection(bl[0], {bl[0].x - bl[1].x, bl[0].y - bl[1].y}, boundary, hit))
    bl.front() = trunc(hit);  // (when no ray hits, shapely's nearest point is the point itself)
  const size_t L = bl.size();
  if (pointInPolygon(bl.back(), boundary) &&
      rayBoundaryIntersection(bl[L - 1], {bl[L - 1].x - bl[L - 2].x, bl[L - 1].y - bl[L - 2].y},
                              boundary, hit))
    bl.back() = trunc(hit);
  std::vector<double> dists(L, 0.0);
  for (size_t i = 1; i < L; ++i)
    dists[i] = dists[i - 1] + norm2(bl[i].x - bl[i - 1].x, bl[i].y - bl[i - 1].y);
  const double blLength = dists[L - 1];
  auto clamp = [&](double d) {
    if (d == 0) d = kEps;
    return std::min(blLength - kEps, d);
  };
  auto segPoint = [&](double d, Point2& unit) {
    const size_t idx =
        static_cast<size_t>(std::lower_bound(dists.begin(), dists.end(), d) - dists.begin());
    const size_t a = idx == 0 ? L - 1 : idx - 1;  // NumPy's index -1
    const size_t b = idx >= L ? L - 1 : idx;
    const Point2 s = bl[a], e = bl[b];
    const Point2 dir{e.x - s.x, e.y - s.y};
    const double len = norm2(dir.x, dir.y);
    unit = len < kEps ? dir : Point2{dir.x / len, dir.y / len};
    const double along = d - dists[a];
    return Point2{s.x + along * unit.x, s.y + along * unit.y};
  };
  Point2 u1, u2;
  const Point2 p1 = segPoint(clamp(d1), u1), p2 = segPoint(clamp(d2), u2);
  Point2 a[2], b[2];
  if (testIntersect(p1, {u1.y, u1.x}, boundary, a) && testIntersect(p2, {u2.y, u2.x}, boundary, b))
    return {a[0], a[1], b[1], b[0]};
  // compute_polygon_section's fallback: the two baseline points, truncated
  return {trunc(p1), trunc(p2)};
}

}  // namespace foveal::core::kraken
