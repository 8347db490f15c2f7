// Synthetic words and reference glyphs with OpenCV's FreeType module (built with OpenCV only).
#include <opencv2/freetype.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <unordered_set>

#include "base/error.h"
#include "base/safe_read.h"
#include "data/random.h"
#include "data/synthetic_words.h"

namespace fs = std::filesystem;

namespace foveal::core::data {

namespace {

constexpr int kRenderHeight = 48;  ///< font pixel size of the clean rendering
constexpr int kOutputHeight = 32;  ///< words are stored at the model's input height

// FreeType2 objects are not thread-safe: one per (thread, font file).
cv::Ptr<cv::freetype::FreeType2> fontFor(const std::string& path) {
  thread_local std::map<std::string, cv::Ptr<cv::freetype::FreeType2>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto ft = cv::freetype::createFreeType2();
  try {
    ft->loadFontData(path, 0);
  } catch (const cv::Exception& e) {
    throw Error(path + ": cannot load font (" + e.what() + ")");
  }
  return cache[path] = ft;
}

// White-on-black rendering of `text`, cropped to its ink with `pad` pixels around. FreeType2's
// putText puts the top of the em box at the origin's y (not the baseline), and getTextSize is only
// approximate, so render on a generous canvas and crop to what was drawn.
cv::Mat renderMask(const std::string& text, const std::string& font, int pixelSize, int pad,
                   std::vector<cv::Mat>* glyphs = nullptr) {
  auto ft = fontFor(font);
  int baseline = 0;
  const cv::Size size = ft->getTextSize(text, pixelSize, -1, &baseline);
  auto draw = [&](const std::string& t) {
    cv::Mat canvas(2 * pixelSize + 2 * pad, size.width + pixelSize + 2 * pad, CV_8UC3,
                   cv::Scalar::all(0));
    if (!t.empty())
      ft->putText(canvas, t, cv::Point(pad, pad), pixelSize, cv::Scalar::all(255), -1, cv::LINE_AA,
                  false);
    cv::Mat grey;
    cv::extractChannel(canvas, grey, 0);
    return grey;
  };
  const cv::Mat grey = draw(text);
  cv::Rect ink = cv::boundingRect(grey > 0);
  const bool empty = ink.area() == 0;
  cv::Mat out = empty ? cv::Mat(pixelSize + 2 * pad, pixelSize + 2 * pad, CV_8U, cv::Scalar(0))
                      : cv::Mat(ink.height + 2 * pad, ink.width + 2 * pad, CV_8U, cv::Scalar(0));
  if (!empty) grey(ink).copyTo(out(cv::Rect(pad, pad, ink.width, ink.height)));
  if (glyphs) {
    // Character k's ink: what drawing the first k + 1 characters adds to drawing the first k.
    // The pen advances alike in both (kerning moves the characters after a pair, not the pair's
    // first), so this is character k where the whole word puts it; the masks' sum covers the word.
    glyphs->clear();
    const auto chars = splitUtf8(text);
    std::string prefix;
    cv::Mat before = draw(prefix);
    for (const auto& c : chars) {
      prefix += c;
      cv::Mat after = draw(prefix);
      cv::Mat g;
      cv::subtract(after, before, g);  // saturates at 0
      cv::Mat m = cv::Mat::zeros(out.size(), CV_8U);
      if (!empty) g(ink).copyTo(m(cv::Rect(pad, pad, ink.width, ink.height)));
      glyphs->push_back(m);
      before = after;
    }
  }
  return out;
}

GreyImage toGrey(const cv::Mat& m) {
  GreyImage g{m.cols, m.rows, std::vector<uint8_t>(static_cast<size_t>(m.cols) * m.rows)};
  for (int y = 0; y < m.rows; ++y)
    std::copy_n(m.ptr<uint8_t>(y), m.cols, g.pixels.begin() + static_cast<long>(y) * m.cols);
  return g;
}

// Curved baseline: a vertical sine displacement along x, of the mask and the glyphs alike.
void curveBaseline(SampleRng& rng, cv::Mat& mask, std::vector<cv::Mat>& glyphs) {
  const int W = mask.cols, H = mask.rows;
  const double amp = rng.uniform(0.04, 0.12) * kRenderHeight;
  const double periods = rng.uniform(0.3, 1.0), phase = rng.uniform(0, 6.283185307179586);
  cv::Mat mx(H, W, CV_32F), my(H, W, CV_32F);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      mx.at<float>(y, x) = static_cast<float>(x);
      my.at<float>(y, x) =
          static_cast<float>(y + amp * std::sin(6.283185307179586 * periods * x / W + phase));
    }
  cv::remap(mask, mask, mx, my, cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
  for (auto& g : glyphs)
    cv::remap(g, g, mx, my, cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
}

// Perspective: each corner of the text box moved independently, plus a small rotation.
void tiltPerspective(SampleRng& rng, cv::Mat& mask, std::vector<cv::Mat>& glyphs) {
  const int W = mask.cols, H = mask.rows;
  const double j = 0.12 * kRenderHeight, rot = rng.uniform(-4, 4) * M_PI / 180;
  std::vector<cv::Point2f> src = {{0, 0}, {float(W), 0}, {float(W), float(H)}, {0, float(H)}};
  std::vector<cv::Point2f> dst;
  const double cx = W / 2.0, cy = H / 2.0;
  for (const auto& p : src) {
    const double x = p.x - cx + rng.uniform(-j, j), y = p.y - cy + rng.uniform(-j, j);
    dst.emplace_back(static_cast<float>(cx + x * std::cos(rot) - y * std::sin(rot)),
                     static_cast<float>(cy + x * std::sin(rot) + y * std::cos(rot)));
  }
  const cv::Mat P = cv::getPerspectiveTransform(src, dst);
  cv::warpPerspective(mask, mask, P, mask.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                      cv::Scalar(0));
  for (auto& g : glyphs)
    cv::warpPerspective(g, g, P, g.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
}

// The mask's ink with a random margin, within the mask.
cv::Rect inkCrop(SampleRng& rng, const cv::Mat& mask) {
  const int W = mask.cols, H = mask.rows;
  cv::Rect box = cv::boundingRect(mask > 24);
  if (box.area() == 0) box = cv::Rect(0, 0, W, H);
  const int mx0 = static_cast<int>(rng.uniform(0.05, 0.3) * box.height);
  const int my0 = static_cast<int>(rng.uniform(0.05, 0.2) * box.height);
  box.x -= mx0;
  box.width += mx0 + static_cast<int>(rng.uniform(0.05, 0.3) * box.height);
  box.y -= my0;
  box.height += my0 + static_cast<int>(rng.uniform(0.05, 0.2) * box.height);
  box &= cv::Rect(0, 0, W, H);
  return box;
}

// Each glyph's box in the output: its ink through the same crop and scaling as the word.
std::vector<Box> glyphBoxes(const std::vector<cv::Mat>& glyphs, const cv::Rect& box, int outW) {
  std::vector<Box> boxes;
  for (const auto& g : glyphs) {
    cv::Mat small;
    cv::resize(g(box), small, cv::Size(outW, kOutputHeight), 0, 0, cv::INTER_AREA);
    const cv::Rect r = cv::boundingRect(small > 0);
    if (r.area() > 0) {
      boxes.push_back({double(r.x), double(r.y), double(r.width), double(r.height)});
    } else {  // no ink of its own: an empty box where the previous character ends
      const double x = boxes.empty() ? 0.0 : boxes.back().x + boxes.back().w;
      boxes.push_back({x, 0, 0, double(kOutputHeight)});
    }
  }
  return boxes;
}

// Colours: background and ink greys at a random contrast, either polarity, over the ink
// `text` (0..1).
cv::Mat colourise(SampleRng& rng, const cv::Mat& text) {
  const double contrast = rng.uniform(0.25, 0.9);
  const double bg = rng.uniform(0, 1 - contrast);
  double lo = bg, hi = bg + contrast;
  if (rng.uniform() < 0.5) std::swap(lo, hi);  // lo: background, hi: ink
  // Background: a gradient plus a low-frequency texture.
  cv::Mat coarse(2 + static_cast<int>(rng.below(3)), 3 + static_cast<int>(rng.below(6)), CV_32F);
  for (int y = 0; y < coarse.rows; ++y)
    for (int x = 0; x < coarse.cols; ++x)
      coarse.at<float>(y, x) = static_cast<float>(rng.uniform(-0.12, 0.12));
  cv::Mat texture;
  cv::resize(coarse, texture, text.size(), 0, 0, cv::INTER_CUBIC);
  const double gx = rng.uniform(-0.15, 0.15), gy = rng.uniform(-0.1, 0.1);
  cv::Mat out(text.size(), CV_32F);
  for (int y = 0; y < out.rows; ++y)
    for (int x = 0; x < out.cols; ++x) {
      const double b = lo + texture.at<float>(y, x) + gx * (x / double(out.cols) - 0.5) +
                       gy * (y / double(out.rows) - 0.5);
      const double m = text.at<float>(y, x);
      out.at<float>(y, x) = static_cast<float>(b * (1 - m) + hi * m);
    }
  return out;
}

// Blur (most words) and sensor noise.
void blurAndNoise(SampleRng& rng, cv::Mat& out) {
  if (rng.uniform() < 0.7) {
    const double sigma = rng.uniform(0.3, 1.3);
    cv::GaussianBlur(out, out, cv::Size(0, 0), sigma);
  }
  const double noise = rng.uniform(0, 0.06);
  for (int y = 0; y < out.rows; ++y)
    for (int x = 0; x < out.cols; ++x)
      out.at<float>(y, x) += static_cast<float>(noise * rng.normal());
}

class SyntheticWordsDataset : public Dataset {
 public:
  SyntheticWordsDataset(const WordSpec& spec, std::vector<std::string> words,
                        std::vector<std::string> fonts)
      : m_spec(spec), m_words(std::move(words)), m_fonts(std::move(fonts)) {}

  size_t size() const override { return m_spec.count; }
  bool endless() const override { return m_spec.stream; }
  std::string entryName(size_t i) const override {
    return m_spec.toString() + ": entry " + std::to_string(i);
  }
  std::string describe() const override {
    return "synthetic words " + m_spec.toString() + " (" +
           (m_spec.stream ? std::string("endless") : std::to_string(m_spec.count) + " images") +
           ", " + std::to_string(m_words.size()) + " words, " + std::to_string(m_fonts.size()) +
           " fonts)";
  }

  std::string label(size_t i) const override {
    SampleRng rng(mixKey(m_spec.seed, i));
    return chooseText(rng);
  }

  Sample get(size_t i) const override { return render(i, nullptr); }

  std::vector<Box> charBoxes(size_t i) const override {
    std::vector<Box> boxes;
    render(i, &boxes);
    return boxes;
  }

  /// The entry's ink before colours, blur and noise (values 0..255), for checks.
  GreyImage ink(size_t i) const {
    GreyImage out;
    render(i, nullptr, &out);
    return out;
  }

 private:
  // Entry i. With `boxes`: each character's box in the output, from its own ink taken through the
  // same curve, perspective, crop and scaling as the word (the pixels where it has any ink). With
  // `inkOut`: the word's ink at that point, before colours, blur and noise.
  Sample render(size_t i, std::vector<Box>* boxes, GreyImage* inkOut = nullptr) const {
    if (!m_spec.stream && i >= m_spec.count)
      throw Error(entryName(i) + " is out of range (" + std::to_string(m_spec.count) + " entries)");
    SampleRng rng(mixKey(m_spec.seed, i));
    Sample s;
    s.label = chooseText(rng);
    const std::string& font = m_fonts[rng.below(m_fonts.size())];
    const int pad = kRenderHeight / 2;
    cv::Mat mask;
    std::vector<cv::Mat> glyphs;
    try {
      mask = renderMask(s.label, font, kRenderHeight, pad, boxes ? &glyphs : nullptr);
    } catch (const cv::Exception& e) {
      throw Error(entryName(i) + ": cannot render \"" + s.label + "\" with " + font + " (" +
                  e.what() + ")");
    }

    // Curved baseline: a vertical sine displacement along x (half the words).
    if (rng.uniform() < 0.5) curveBaseline(rng, mask, glyphs);
    // Perspective: move each corner of the text box independently, plus a small rotation.
    tiltPerspective(rng, mask, glyphs);

    // Crop to the ink with a random margin, then scale to the output height.
    const cv::Rect box = inkCrop(rng, mask);
    cv::Mat text;
    const int outW =
        std::max(8, static_cast<int>(std::lround(double(box.width) * kOutputHeight / box.height)));
    cv::resize(mask(box), text, cv::Size(outW, kOutputHeight), 0, 0, cv::INTER_AREA);
    if (inkOut) *inkOut = toGrey(text);
    if (boxes) *boxes = glyphBoxes(glyphs, box, outW);
    text.convertTo(text, CV_32F, 1.0 / 255);

    cv::Mat out = colourise(rng, text);
    blurAndNoise(rng, out);
    cv::Mat bytes;
    out.convertTo(bytes, CV_8U, 255.0);  // saturates to [0, 255]
    s.image = toGrey(bytes);
    return s;
  }

  std::string chooseText(SampleRng& rng) const {
    std::string w = m_words[rng.below(m_words.size())];
    const double c = rng.uniform();
    if (c < 0.25) {
      for (auto& ch : w) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    } else if (c < 0.5) {
      w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
    }
    return w;
  }

  WordSpec m_spec;
  std::vector<std::string> m_words;
  std::vector<std::string> m_fonts;
};

}  // namespace

bool canRenderText() { return true; }

GreyImage syntheticWordInk(const Dataset& words, size_t index) {
  const auto* w = dynamic_cast<const SyntheticWordsDataset*>(&words);
  if (!w) throw Error(words.describe() + ": not synthetic words");
  return w->ink(index);
}

std::vector<std::string> defaultFonts() {
  std::vector<std::string> out;
  const std::vector<std::string> dirs = {"/usr/share/fonts/truetype/dejavu",
                                         "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF"};
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string name = e.path().filename().string();
      // Hairline weights vanish at 32 px: leave them out.
      if (e.path().extension() == ".ttf" && name.find("Thin") == std::string::npos &&
          name.find("ExtraLight") == std::string::npos)
        out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());  // directory order varies; sample i must not
  return out;
}

DatasetPtr makeSyntheticWords(const WordSpec& spec) {
  if (spec.minLength < 1 || spec.maxLength < spec.minLength)
    throw Error(spec.toString() + ": need 1 <= minlen <= maxlen");
  if (fs::exists(spec.wordList)) checkRegularFile(spec.wordList, "word list", kMaxTextFileBytes);
  std::ifstream in(spec.wordList);
  if (!in) throw Error(spec.wordList + ": cannot open word list (install wamerican)");
  std::vector<std::string> words;
  std::unordered_set<std::string> seen;
  for (std::string w; std::getline(in, w);) {
    if (!w.empty() && w.back() == '\r') w.pop_back();
    const bool alpha = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    });
    const int n = static_cast<int>(w.size());
    if (alpha && n >= spec.minLength && n <= spec.maxLength && seen.insert(w).second)
      words.push_back(w);
  }
  if (words.empty())
    throw Error(spec.wordList + ": no words of " + std::to_string(spec.minLength) + ".." +
                std::to_string(spec.maxLength) + " letters");
  auto fonts = spec.fonts.empty() ? defaultFonts() : spec.fonts;
  if (fonts.empty())
    throw Error("no fonts found under /usr/share/fonts (install fonts-dejavu-core, fonts-roboto)");
  for (const auto& f : fonts)
    if (!fs::exists(f)) throw Error(f + ": font file missing");
  return std::make_shared<SyntheticWordsDataset>(spec, std::move(words), std::move(fonts));
}

std::string referenceFontPath() {
  const std::string p = "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Bold.ttf";
  return p;
}

GreyImage referenceGlyph(const std::string& token, const std::string& fontPath) {
  constexpr int kW = 24, kH = 32, kSize = 36;
  const std::string font = fontPath.empty() ? referenceFontPath() : fontPath;
  if (!fs::exists(font)) throw Error(font + ": reference font missing (install fonts-roboto)");
  GreyImage out{kW, kH, std::vector<uint8_t>(kW * kH, 0)};
  if (token.empty() || token == " ") return out;
  const cv::Mat mask = renderMask(token, font, kSize, 4);
  const cv::Rect ink = cv::boundingRect(mask > 0);
  if (ink.area() == 0) return out;
  // Centre the ink in 24x32; glyphs wider or taller than that (W, M, @) are scaled down to fit.
  cv::Mat glyph = mask(ink);
  const double scale = std::min({1.0, double(kW) / ink.width, double(kH) / ink.height});
  if (scale < 1.0)
    cv::resize(glyph, glyph,
               cv::Size(std::max(1, int(std::lround(ink.width * scale))),
                        std::max(1, int(std::lround(ink.height * scale)))),
               0, 0, cv::INTER_AREA);
  const int ox = (kW - glyph.cols) / 2, oy = (kH - glyph.rows) / 2;
  for (int y = 0; y < glyph.rows; ++y)
    std::copy_n(glyph.ptr<uint8_t>(y), glyph.cols,
                out.pixels.begin() + static_cast<long>(oy + y) * kW + ox);
  return out;
}

std::vector<GreyImage> referenceGlyphs(const Charset& charset, const std::string& fontPath) {
  std::vector<GreyImage> out;
  out.push_back(GreyImage{24, 32, std::vector<uint8_t>(24 * 32, 0)});  // the end token
  for (int i = 1; i < charset.size(); ++i)
    out.push_back(referenceGlyph(charset.token(i), fontPath));
  return out;
}

}  // namespace foveal::core::data
