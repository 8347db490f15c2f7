#pragma once
// A small RGB drawing surface for the charts foveal-cli writes as PNG (core has no Qt): filled
// rectangles, lines and text, drawn with OpenCV's imgproc (Hershey text). A build without
// OpenCV throws Error when one is made: such a build writes its charts as SVG instead.
// Torch-free.
#include <cstdint>
#include <string>
#include <vector>

#include "image/grey_image.h"

namespace foveal::core {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

class ChartCanvas {
 public:
  enum class Align { Left, Centre, Right };
  /// A white `width` x `height` canvas. Throws Error without OpenCV or for a size outside
  /// 1..8192.
  ChartCanvas(int width, int height);
  static bool available();

  void fillRect(double x, double y, double w, double h, Rgb colour);
  void strokeRect(double x, double y, double w, double h, Rgb colour, int thickness = 1);
  void line(double x0, double y0, double x1, double y1, Rgb colour, int thickness = 1);
  /// `y` is the text's baseline; `height` its cap height in pixels.
  void text(double x, double y, const std::string& text, double height, Rgb colour,
            Align align = Align::Left);
  /// Text turned 90 degrees counter-clockwise (a vertical axis title), centred on (x, y).
  void verticalText(double x, double y, const std::string& text, double height, Rgb colour);
  /// The drawing as a colour image (rgb set, pixels its luma).
  GreyImage image() const;
  /// Writes the drawing as a compressed PNG (through the atomic writer). Throws Error naming the
  /// file when it cannot be written.
  void writePng(const std::string& path) const;

 private:
  int m_w, m_h;
  std::vector<uint8_t> m_rgb;
};

}  // namespace foveal::core
