#include "model/vgsl_spec.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <regex>
#include <sstream>

#include "base/error.h"

namespace foveal::core {

namespace {

// kraken's dim_map from VGSL's dimension numbers (0 batch, 1 height, 2 width, 3 depth) to NCHW.
int nchw(int vgslDim) {
  static const int map[4] = {0, 2, 3, 1};
  return map[vgslDim];
}

int toInt(const std::string& s) { return s.empty() ? 0 : std::stoi(s); }

// kraken's shape arithmetic keeps 0 for a variable size.
int convOut(int in, int k, int s, int d, int pad) {
  if (in == 0) return 0;
  const int o = static_cast<int>(std::floor((in + 2.0 * pad - d * (k - 1) - 1) / s + 1));
  return std::max(o, 1);
}

int poolOut(int in, int k, int s) {
  if (in == 0) return 0;
  return static_cast<int>(std::floor((in - (k - 1) - 1.0) / s + 1));
}

class Parser {
 public:
  Parser(std::string origin, std::string text)
      : m_origin(std::move(origin)), m_text(std::move(text)) {}

  VgslSpec parse() {
    VgslSpec spec;
    spec.text = m_text;
    std::string s = m_text;
    const auto first = s.find_first_not_of(" \t\r\n");
    const auto last = s.find_last_not_of(" \t\r\n");
    if (first == std::string::npos) fail("the VGSL spec is empty");
    s = s.substr(first, last - first + 1);
    if (s.front() != '[' || s.back() != ']')
      fail("the VGSL spec '" + s + "' is not a sequential model ([...]); kraken reads no other");
    s = s.substr(1, s.size() - 2);
    std::vector<std::string> blocks;
    std::string cur;
    for (char c : s) {
      if (c == ' ') {
        blocks.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    blocks.push_back(cur);
    static const std::regex inputRe(R"((\d+),(\d+),(\d+),(\d+))");
    std::smatch m;
    if (!std::regex_match(blocks.front(), m, inputRe))
      fail("the VGSL input block '" + blocks.front() + "' is not batch,height,width,channels");
    std::array<int, 4> shape{toInt(m[1]), toInt(m[4]), toInt(m[2]), toInt(m[3])};  // NCHW
    spec.input = shape;
    if (shape[2] == 0)
      fail("the VGSL input has a variable height (" + blocks.front() +
           "): kraken's recognition models scale lines to a fixed height, and Foveal reads only "
           "those");
    if (shape[2] > 4096 || shape[1] < 1 || shape[1] > 4)
      fail("the VGSL input block '" + blocks.front() + "' has an unusable height or channel count");
    for (size_t i = 1; i < blocks.size(); ++i) {
      VgslLayer layer = parseLayer(blocks[i], static_cast<int>(i - 1));
      layer.inShape = shape;
      shapeOf(layer);
      shape = layer.outShape;
      spec.layers.push_back(std::move(layer));
    }
    if (spec.layers.empty() || spec.layers.back().kind != VgslLayer::Kind::Output)
      fail(
          "the VGSL spec does not end with an output layer (O1c...): it is not a recognition "
          "model");
    for (size_t i = 0; i + 1 < spec.layers.size(); ++i)
      if (spec.layers[i].name == spec.layers.back().name)
        fail("two VGSL layers are both named " + spec.layers[i].name);
    spec.output = shape;
    return spec;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(m_origin + ": " + what); }
  [[noreturn]] void failLayer(const std::string& block, const std::string& what) const {
    fail("VGSL layer '" + block + "': " + what);
  }

  static std::string defaultName(const std::string& type, int index) {
    return std::regex_replace(type, std::regex(R"(\W+)"), "_") + "_" + std::to_string(index);
  }

  static std::string nameOf(const std::ssub_match& given, const std::string& type, int index) {
    const std::string g = given.str();
    return g.empty() ? defaultName(type, index) : g.substr(1, g.size() - 2);
  }

  void readConv(VgslLayer& l, const std::smatch& m, int index) const {
    const std::string& block = l.block;
    if (m[1].matched)
      failLayer(block, "transposed convolutions (CT) are not layers of recognition models");
    l.kind = VgslLayer::Kind::Conv;
    l.activation = m[2];
    l.name = nameOf(m[3], "C", index);
    l.kernel = {toInt(m[4]), toInt(m[5])};
    l.outChannels = toInt(m[6]);
    if (m[8].matched) l.stride = {toInt(m[7]), toInt(m[8])};
    if (m[10].matched) l.dilation = {toInt(m[9]), toInt(m[10])};
    if (l.kernel[0] < 1 || l.kernel[1] < 1 || l.outChannels < 1 || l.stride[0] < 1 ||
        l.stride[1] < 1 || l.dilation[0] < 1 || l.dilation[1] < 1 || l.outChannels > 65536 ||
        l.kernel[0] > 1024 || l.kernel[1] > 1024)
      failLayer(block, "kernel, stride, dilation and filters must be positive (and sane)");
  }

  void readPool(VgslLayer& l, const std::smatch& m, int index) const {
    l.kind = VgslLayer::Kind::MaxPool;
    l.name = nameOf(m[1], "Mp", index);
    l.kernel = {toInt(m[2]), toInt(m[3])};
    l.stride = l.kernel;
    if (m[4].matched) l.stride = {toInt(m[4]), toInt(m[5])};
    if (l.kernel[0] < 1 || l.kernel[1] < 1 || l.stride[0] < 1 || l.stride[1] < 1)
      failLayer(l.block, "pool kernel and stride must be positive");
  }

  void readReshape(VgslLayer& l, const std::smatch& m, int index) const {
    const std::string& block = l.block;
    l.kind = VgslLayer::Kind::Reshape;
    l.name = nameOf(m[1], "S", index);
    const int src = toInt(m[2]), high = toInt(m[5]), low = toInt(m[6]);
    l.partA = toInt(m[3]);
    l.partB = toInt(m[4]);
    if (src > 3 || high > 3 || low > 3) failLayer(block, "dimensions are 0 to 3");
    if (l.partA == 0)
      l.partA = -1;
    else if (l.partB == 0)
      l.partB = -1;
    if (src != high && src != low)
      failLayer(block, "either the high or the low dimension must be the source dimension");
    if (l.partA == -1 && l.partB == -1) failLayer(block, "only one size may be 0");
    l.srcDim = nchw(src);
    l.high = nchw(high);
    l.low = nchw(low);
  }

  void readLstm(VgslLayer& l, const std::smatch& m, int index) const {
    if (m[5].matched)
      failLayer(l.block, std::string("the legacy ") + (m[5] == "c" ? "clstm" : "ocropy") +
                             " LSTMs of kraken 0.x models are not supported");
    l.kind = VgslLayer::Kind::Lstm;
    // kraken builds G (GRU) blocks as LSTMs as well, and runs r (reverse) forward: its
    // TransposedSummarizingRNN only knows bidirectional or not. Foveal does the same.
    l.name = nameOf(m[6], m[1], index);
    l.bidirectional = m[2] == "b";
    l.alongY = m[3] == "y";
    l.summarize = m[4].matched;
    l.hidden = toInt(m[7]);
    if (l.hidden < 1 || l.hidden > 8192) failLayer(l.block, "LSTM units must be in [1, 8192]");
  }

  void readDropout(VgslLayer& l, const std::smatch& m, int index) const {
    l.kind = VgslLayer::Kind::Dropout;
    l.name = nameOf(m[1], "Do", index);
    l.p = m[2].matched ? std::stod(m[2]) : 0.5;
    l.dims = m[3].matched ? toInt(m[3]) : 1;
    if (!(l.p >= 0 && l.p <= 1) || (l.dims != 1 && l.dims != 2))
      failLayer(l.block, "dropout needs p in [0, 1] and 1 or 2 dimensions");
  }

  void readGroupNorm(VgslLayer& l, const std::smatch& m, int index) const {
    l.kind = VgslLayer::Kind::GroupNorm;
    l.name = nameOf(m[1], "Gn", index);
    l.groups = toInt(m[2]);
    if (l.groups < 1) failLayer(l.block, "group norm needs at least one group");
  }

  void readOutput(VgslLayer& l, const std::smatch& m, int index) const {
    const std::string& block = l.block;
    l.kind = VgslLayer::Kind::Output;
    l.name = nameOf(m[1], "O", index);
    if (m[2] == "0") failLayer(block, "categorical outputs (O0) are not recognition outputs");
    if (m[2] == "2")
      failLayer(block, "2-D (heat map) outputs belong to segmentation models, not recognition");
    l.outputType = m[3];
    l.augmented = m[4].matched;
    l.outChannels = toInt(m[5]);
    if (l.outChannels < 1 || l.outChannels > 1000000)
      failLayer(block, "the output size must be positive");
  }

  [[noreturn]] void failUnknownLayer(const std::string& block) const {
    std::string kind = block.substr(0, block.find_first_of("{0123456789,("));
    if (block.front() == '(') kind = "parallel block";
    if (block.front() == '[') kind = "nested series block";
    if (kind == "A" || kind.rfind("A", 0) == 0) kind = "addition (" + kind + ")";
    if (kind == "I" || kind.rfind("I{", 0) == 0) kind = "identity (I)";
    if (kind.rfind("W", 0) == 0) kind = "wav2vec2 masking (W)";
    failLayer(block, "unknown or unsupported layer kind '" + kind +
                         "' (Foveal reads C, Mp, S, L, G, Do, Gn and O1 layers)");
  }

  VgslLayer parseLayer(const std::string& block, int index) const {
    static const std::regex conv(
        R"(C(T)?(lr|s|t|r|l|m)(\{\w+\})?(\d+),(\d+),(\d+)(?:,(\d+),(\d+))?(?:,(\d+),(\d+))?)");
    static const std::regex pool(R"(Mp(\{\w+\})?(\d+),(\d+)(?:,(\d+),(\d+))?)");
    static const std::regex reshape(R"(S(\{\w+\})?(\d+)\((\d+)x(\d+)\)(\d+),(\d+))");
    static const std::regex rnn(R"((L|G)(f|r|b)(x|y)(s)?(c|o)?(\{\w+\})?(\d+))");
    static const std::regex dropout(R"(Do(\{\w+\})?(\d+(?:\.\d*)?|\.\d+)?(?:,(\d+))?)");
    static const std::regex groupnorm(R"(Gn(\{\w+\})?(\d+))");
    static const std::regex output(R"(O(\{\w+\})?(0|1|2)(l|s|c)(a)?(\d+))");
    using Reader = void (Parser::*)(VgslLayer&, const std::smatch&, int) const;
    static const std::pair<const std::regex*, Reader> kinds[] = {
        {&conv, &Parser::readConv},       {&pool, &Parser::readPool},
        {&reshape, &Parser::readReshape}, {&rnn, &Parser::readLstm},
        {&dropout, &Parser::readDropout}, {&groupnorm, &Parser::readGroupNorm},
        {&output, &Parser::readOutput}};
    VgslLayer l;
    l.block = block;
    std::smatch m;
    if (block.empty()) failLayer(block, "an empty block (two spaces in a row?)");
    try {
      const auto kind = std::find_if(std::begin(kinds), std::end(kinds), [&](const auto& k) {
        return std::regex_match(block, m, *k.first);
      });
      if (kind == std::end(kinds)) failUnknownLayer(block);
      (this->*kind->second)(l, m, index);
    } catch (const std::out_of_range&) {
      failLayer(block, "a number is out of range");
    }
    return l;
  }

  // kraken's Reshape.forward on a tensor of the layer's input shape (variable sizes as 1).
  void reshapeShape(VgslLayer& l) const {
    const auto in = l.inShape;
    auto& out = l.outShape;
    std::vector<long> d;
    for (int x : in) d.push_back(x == 0 ? 1 : x);
    const long size = d[static_cast<size_t>(l.srcDim)];
    long a = l.partA, b = l.partB;
    if (a == -1) {
      if (b <= 0 || size % b != 0)
        failLayer(l.block,
                  "cannot split " + std::to_string(size) + " into parts of " + std::to_string(b));
      a = size / b;
    } else if (b == -1) {
      if (a <= 0 || size % a != 0)
        failLayer(l.block,
                  "cannot split " + std::to_string(size) + " into " + std::to_string(a) + " parts");
      b = size / a;
    } else if (a * b != size) {
      failLayer(l.block,
                std::to_string(a) + " x " + std::to_string(b) + " is not " + std::to_string(size));
    }
    std::vector<long> split(d.begin(), d.begin() + l.srcDim);
    split.push_back(a);
    split.push_back(b);
    split.insert(split.end(), d.begin() + l.srcDim + 1, d.end());
    int dest = l.low, src = l.srcDim;
    if (l.high != src)
      dest = l.high;
    else
      src += 1;
    std::vector<int> perm(split.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
    const int step = dest > src ? 1 : -1;
    for (int x = src; x != dest; x += step) std::swap(perm[x], perm[x + step]);
    std::vector<long> permuted;
    for (int p : perm) permuted.push_back(split[static_cast<size_t>(p)]);
    std::vector<long> merged(permuted.begin(), permuted.begin() + dest);
    merged.push_back(permuted[dest] * permuted[dest + 1]);
    merged.insert(merged.end(), permuted.begin() + dest + 2, permuted.end());
    if (merged.size() != 4) failLayer(l.block, "the reshape does not give 4 dimensions");
    for (int i = 0; i < 4; ++i) out[i] = static_cast<int>(merged[i]);
    if (in[3] == 0 && out[3] == 1) out[3] = 0;  // the width stays variable
  }

  void shapeOf(VgslLayer& l) const {
    auto in = l.inShape;
    auto& out = l.outShape;
    out = in;
    switch (l.kind) {
      case VgslLayer::Kind::Conv: {
        const int ph = l.dilation[0] * (l.kernel[0] - 1) / 2,
                  pw = l.dilation[1] * (l.kernel[1] - 1) / 2;
        out[1] = l.outChannels;
        out[2] = convOut(in[2], l.kernel[0], l.stride[0], l.dilation[0], ph);
        out[3] = convOut(in[3], l.kernel[1], l.stride[1], l.dilation[1], pw);
        break;
      }
      case VgslLayer::Kind::MaxPool:
        out[2] = poolOut(in[2], l.kernel[0], l.stride[0]);
        out[3] = poolOut(in[3], l.kernel[1], l.stride[1]);
        if ((in[2] != 0 && out[2] < 1) || (in[3] != 0 && out[3] < 1))
          failLayer(l.block,
                    "the pool is larger than its input (" + std::to_string(in[2]) + " rows)");
        break;
      case VgslLayer::Kind::Reshape:
        reshapeShape(l);
        break;
      case VgslLayer::Kind::Lstm:
        out[1] = l.hidden * (l.bidirectional ? 2 : 1);
        if (l.summarize) {
          if (l.alongY)
            out[2] = 1;
          else
            out[3] = 1;
        }
        break;
      case VgslLayer::Kind::Dropout:
        break;
      case VgslLayer::Kind::GroupNorm:
        if (in[1] % l.groups != 0)
          failLayer(l.block, std::to_string(in[1]) + " channels do not divide into " +
                                 std::to_string(l.groups) + " groups");
        break;
      case VgslLayer::Kind::Output:
        out[1] = l.outChannels;
        break;
    }
    if (out[1] < 1 || out[1] > (1 << 24))
      failLayer(l.block, "gives " + std::to_string(out[1]) + " channels");
  }

  std::string m_origin, m_text;
};

std::string shapeText(const std::array<int, 4>& s) {
  auto d = [](int x) { return x == 0 ? std::string("W") : std::to_string(x); };
  return "[" + d(s[1]) + " x " + d(s[2]) + " x " + d(s[3]) + "]";
}

}  // namespace

VgslSpec parseVgsl(const std::string& spec, const std::string& origin) {
  return Parser(origin, spec).parse();
}

std::vector<LayerSpec> VgslSpec::geometryLayers() const {
  std::vector<LayerSpec> out;
  int rows = inputHeight();
  for (const auto& l : layers) {
    if (l.kind != VgslLayer::Kind::Conv && l.kind != VgslLayer::Kind::MaxPool) continue;
    LayerSpec s;
    s.kind = l.kind == VgslLayer::Kind::Conv ? LayerSpec::Kind::Conv : LayerSpec::Kind::Pool;
    // A dilated kernel covers d (k - 1) + 1 pixels: the same extent for the receptive field.
    s.kh = l.dilation[0] * (l.kernel[0] - 1) + 1;
    s.kw = l.dilation[1] * (l.kernel[1] - 1) + 1;
    s.sh = l.stride[0];
    s.sw = l.stride[1];
    if (l.kind == VgslLayer::Kind::Conv) {
      s.ph = (s.kh - 1) / 2;
      s.pw = (s.kw - 1) / 2;
      s.outChannels = l.outChannels;
    }
    out.push_back(s);
    rows = l.outShape[2];
  }
  // What is left of the height is folded into the channels (S) or read by the LSTMs: each output
  // column sees the whole height.
  if (rows > 1) {
    LayerSpec collapse;
    collapse.kind = LayerSpec::Kind::Pool;
    collapse.kh = collapse.sh = rows;
    collapse.kw = collapse.sw = 1;
    out.push_back(collapse);
  }
  return out;
}

std::string VgslSpec::describe() const {
  std::ostringstream s;
  s << "input " << shapeText(input) << " (channels x height x width)\n";
  for (const auto& l : layers) {
    s << "  " << l.name << "  ";
    switch (l.kind) {
      case VgslLayer::Kind::Conv:
        s << "conv " << l.kernel[0] << "x" << l.kernel[1] << ", " << l.outChannels << " filters";
        if (l.stride != std::array<int, 2>{1, 1})
          s << ", stride " << l.stride[0] << "x" << l.stride[1];
        if (l.dilation != std::array<int, 2>{1, 1})
          s << ", dilation " << l.dilation[0] << "x" << l.dilation[1];
        s << ", "
          << (l.activation == "r"    ? "relu"
              : l.activation == "t"  ? "tanh"
              : l.activation == "lr" ? "leaky relu"
              : l.activation == "m"  ? "softmax"
              : l.activation == "s"  ? "sigmoid (in kraken's loss only)"
                                     : "linear");
        break;
      case VgslLayer::Kind::MaxPool:
        s << "max pool " << l.kernel[0] << "x" << l.kernel[1] << ", stride " << l.stride[0] << "x"
          << l.stride[1];
        break;
      case VgslLayer::Kind::Reshape:
        s << "reshape";
        break;
      case VgslLayer::Kind::Lstm:
        s << (l.bidirectional ? "bidirectional " : "") << "LSTM " << l.hidden << " along "
          << (l.alongY ? "y" : "x") << (l.summarize ? ", summarised" : "");
        break;
      case VgslLayer::Kind::Dropout:
        s << "dropout " << l.p << (l.dims == 2 ? " (2-D)" : "");
        break;
      case VgslLayer::Kind::GroupNorm:
        s << "group norm, " << l.groups << " groups";
        break;
      case VgslLayer::Kind::Output:
        s << "linear " << l.outChannels << (l.augmented ? " (augmented)" : "") << ", type "
          << l.outputType;
        break;
    }
    s << "  " << shapeText(l.inShape) << " -> " << shapeText(l.outShape) << "\n";
  }
  return s.str();
}

}  // namespace foveal::core
