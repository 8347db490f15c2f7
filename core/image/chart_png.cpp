#include "image/chart_png.h"

#include <cmath>

#include "base/atomic_file.h"
#include "base/error.h"

#if FOVEAL_WITH_OPENCV
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace foveal::core {

namespace {
#if FOVEAL_WITH_OPENCV
cv::Scalar scalar(Rgb c) { return cv::Scalar(c.r, c.g, c.b); }  // the buffer holds R, G, B
cv::Point pt(double x, double y) {
  return cv::Point(static_cast<int>(std::lround(x)), static_cast<int>(std::lround(y)));
}
constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
// FONT_HERSHEY_SIMPLEX's cap height at scale 1, in pixels.
constexpr double kCapHeight = 22.0;
#endif
}  // namespace

bool ChartCanvas::available() {
#if FOVEAL_WITH_OPENCV
  return true;
#else
  return false;
#endif
}

ChartCanvas::ChartCanvas(int width, int height) : m_w(width), m_h(height) {
  if (!available())
    throw Error("this build has no OpenCV to draw PNG charts: write the chart as .svg instead");
  if (width < 1 || height < 1 || width > 8192 || height > 8192)
    throw Error("chart size " + std::to_string(width) + " x " + std::to_string(height) +
                " is outside 1..8192");
  m_rgb.assign(static_cast<size_t>(width) * height * 3, 255);
}

#if FOVEAL_WITH_OPENCV
#define FOVEAL_CANVAS cv::Mat canvas(m_h, m_w, CV_8UC3, m_rgb.data())
void ChartCanvas::fillRect(double x, double y, double w, double h, Rgb colour) {
  FOVEAL_CANVAS;
  cv::rectangle(canvas, pt(x, y), pt(x + w - 1, y + h - 1), scalar(colour), cv::FILLED);
}
void ChartCanvas::strokeRect(double x, double y, double w, double h, Rgb colour, int thickness) {
  FOVEAL_CANVAS;
  cv::rectangle(canvas, pt(x, y), pt(x + w - 1, y + h - 1), scalar(colour), thickness, cv::LINE_AA);
}
void ChartCanvas::line(double x0, double y0, double x1, double y1, Rgb colour, int thickness) {
  FOVEAL_CANVAS;
  cv::line(canvas, pt(x0, y0), pt(x1, y1), scalar(colour), thickness, cv::LINE_AA);
}
void ChartCanvas::text(double x, double y, const std::string& text, double height, Rgb colour,
                       Align align) {
  FOVEAL_CANVAS;
  const double scale = height / kCapHeight;
  const int thickness = std::max(1, static_cast<int>(std::lround(scale * 1.6)));
  int baseline = 0;
  const cv::Size size = cv::getTextSize(text, kFont, scale, thickness, &baseline);
  double left = x;
  if (align == Align::Centre) left -= size.width / 2.0;
  if (align == Align::Right) left -= size.width;
  cv::putText(canvas, text, pt(left, y), kFont, scale, scalar(colour), thickness, cv::LINE_AA);
}
void ChartCanvas::verticalText(double x, double y, const std::string& text, double height,
                               Rgb colour) {
  const double scale = height / kCapHeight;
  const int thickness = std::max(1, static_cast<int>(std::lround(scale * 1.6)));
  int baseline = 0;
  const cv::Size size = cv::getTextSize(text, kFont, scale, thickness, &baseline);
  // Drawn level on a white strip, then turned and laid over the canvas where it is not white.
  cv::Mat strip(size.height + baseline + 4, size.width + 4, CV_8UC3, cv::Scalar(255, 255, 255));
  cv::putText(strip, text, cv::Point(2, size.height + 2), kFont, scale, scalar(colour), thickness,
              cv::LINE_AA);
  cv::Mat turned;
  cv::rotate(strip, turned, cv::ROTATE_90_COUNTERCLOCKWISE);
  FOVEAL_CANVAS;
  const int x0 = static_cast<int>(std::lround(x - turned.cols / 2.0));
  const int y0 = static_cast<int>(std::lround(y - turned.rows / 2.0));
  for (int r = 0; r < turned.rows; ++r)
    for (int c = 0; c < turned.cols; ++c) {
      const int cx = x0 + c, cy = y0 + r;
      if (cx < 0 || cy < 0 || cx >= m_w || cy >= m_h) continue;
      const auto& v = turned.at<cv::Vec3b>(r, c);
      if (v[0] != 255 || v[1] != 255 || v[2] != 255) canvas.at<cv::Vec3b>(cy, cx) = v;
    }
}
#undef FOVEAL_CANVAS
#else
void ChartCanvas::fillRect(double, double, double, double, Rgb) {}
void ChartCanvas::strokeRect(double, double, double, double, Rgb, int) {}
void ChartCanvas::line(double, double, double, double, Rgb, int) {}
void ChartCanvas::text(double, double, const std::string&, double, Rgb, Align) {}
void ChartCanvas::verticalText(double, double, const std::string&, double, Rgb) {}
#endif

void ChartCanvas::writePng(const std::string& path) const {
#if FOVEAL_WITH_OPENCV
  cv::Mat rgb(m_h, m_w, CV_8UC3, const_cast<uint8_t*>(m_rgb.data())), bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<uint8_t> bytes;
  if (!cv::imencode(".png", bgr, bytes, {cv::IMWRITE_PNG_COMPRESSION, 9}))
    throw Error(path + ": cannot encode the chart as PNG");
  writeFileAtomically(path,
                      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                      "PNG chart");
#else
  throw Error(path + ": this build has no OpenCV to write PNG charts");
#endif
}

GreyImage ChartCanvas::image() const {
  GreyImage out(m_w, m_h);
  out.rgb = m_rgb;
  out.pixels.resize(static_cast<size_t>(m_w) * m_h);
  for (size_t i = 0; i < out.pixels.size(); ++i)
    out.pixels[i] = static_cast<uint8_t>(
        (299 * m_rgb[3 * i] + 587 * m_rgb[3 * i + 1] + 114 * m_rgb[3 * i + 2]) / 1000);
  return out;
}

}  // namespace foveal::core
