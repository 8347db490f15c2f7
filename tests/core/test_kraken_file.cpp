// kraken's two model containers read into KrakenFile (core/formats/kraken_file.h, issue 62):
// the safetensors files of kraken 7 and the CoreML protobuf of kraken <= 6, from kraken's own
// test models (../shared/fixtures/kraken/models). Reference numbers:
// - safetensors: /usr/bin/python3 with numpy reading each tensor's bytes at its data_offsets
//   (np.frombuffer, '<f4' / '<f2', summed in float64);
// - CoreML: the file parsed with the Python module that `protoc --python_out` makes from
//   core/formats/kraken_coreml.proto and mapped to torch names by kraken's own
//   kraken/models/_coreml.py (kraken at the fixtures' commit, 67df280), summed in float64.
// Damaged files are made here from the fixtures, in a temporary folder.
#include <QtTest/QtTest>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "formats/kraken_file.h"

using namespace foveal::core;
using nlohmann::json;

namespace {

const std::string kModels = std::string(FOVEAL_SOURCE_DIR) + "/../shared/fixtures/kraken/models/";

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Writes `bytes` as `name` in `dir` and returns the path.
std::string writeFile(const QTemporaryDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.path().toStdString() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

/// The message readKrakenFile refuses `bytes` with (written as `name`), or "" when it reads them.
/// Every refusal must name the file.
QString refusal(const std::string& bytes, const std::string& name = "damaged.bin") {
  QTemporaryDir dir;
  const std::string path = writeFile(dir, name, bytes);
  try {
    readKrakenFile(path);
  } catch (const Error& e) {
    const QString message = QString::fromStdString(e.what());
    if (!message.contains(QString::fromStdString(path)))
      return "the message does not name the file: " + message;
    return message;
  }
  return "";
}

double sum(const KrakenTensor& t) {
  double s = 0;
  for (float v : t.values) s += v;
  return s;
}

// ---- safetensors, rebuilt ----

struct Safetensors {
  json header;       ///< as read, __metadata__ included
  std::string data;  ///< the bytes after the header
};

Safetensors splitSafetensors(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return {json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

std::string joinSafetensors(const std::string& headerText, const std::string& data) {
  std::string out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((headerText.size() >> (8 * i)) & 0xFF));
  return out + headerText + data;
}
std::string joinSafetensors(const Safetensors& s) {
  return joinSafetensors(s.header.dump(), s.data);
}

/// The fixture with its kraken_meta (one model) changed by `edit`.
std::string withKrakenMeta(const std::string& fixture, const std::function<void(json&)>& edit) {
  Safetensors s = splitSafetensors(bytesOf(kModels + fixture));
  json meta = json::parse(s.header["__metadata__"]["kraken_meta"].get<std::string>());
  edit(meta);
  s.header["__metadata__"]["kraken_meta"] = meta.dump();
  return joinSafetensors(s);
}

// ---- protobuf, written by hand (the generated classes are core's private business) ----

std::string varint(uint64_t v) {
  std::string out;
  do {
    out.push_back(static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0)));
    v >>= 7;
  } while (v);
  return out;
}
std::string intField(int number, uint64_t v) { return varint(uint64_t(number) << 3) + varint(v); }
std::string bytesField(int number, const std::string& payload) {
  return varint(uint64_t(number) << 3 | 2) + varint(payload.size()) + payload;
}
/// A WeightParams with floatValue (field 1, packed).
std::string weights(const std::vector<float>& values) {
  std::string packed(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(&packed[0], values.data(), packed.size());  // little-endian host
  return bytesField(1, packed);
}
std::vector<float> counting(float base, int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(base + static_cast<float>(i));
  return v;
}

/// A CoreML model: version 4, userDefined metadata, and these NeuralNetwork layers.
std::string coreml(const std::map<std::string, std::string>& userDefined,
                   const std::vector<std::string>& layers) {
  std::string meta = bytesField(1, "kraken model");
  for (const auto& [k, v] : userDefined)
    meta += bytesField(100, bytesField(1, k) + bytesField(2, v));
  const std::string description = bytesField(100, meta);
  std::string network;
  for (const auto& l : layers) network += bytesField(1, l);
  return intField(1, 4) + bytesField(2, description) + bytesField(500, network);
}
std::map<std::string, std::string> krakenUserDefined() {
  return {{"vgsl", "[1,1,0,3 Lbx{L_0}2 Lfx{L_1}1]"},
          {"codec", R"({"a": [1], "b": [2]})"},
          {"kraken_meta", R"({"model_type": "recognition", "seg_type": "bbox"})"}};
}
std::string layer(const std::string& name, int field, const std::string& params) {
  return bytesField(1, name) + bytesField(field, params);
}
/// A convolution layer (field 100): out x in x kh x kw weights and out biases (or `nWeights`).
std::string convLayer(const std::string& name, int out, int in, int kh, int kw, int nWeights = -1,
                      int nBias = -1) {
  const std::string params =
      intField(1, out) + intField(2, in) + bytesField(20, varint(kh) + varint(kw)) +
      intField(70, 1) +
      bytesField(90, weights(counting(0, nWeights < 0 ? out * in * kh * kw : nWeights))) +
      bytesField(91, weights(counting(100, nBias < 0 ? out : nBias)));
  return layer(name, 100, params);
}
/// One direction's LSTMWeightParams: value 1000 d + 100 kind + 10 gate + index, kind 0 the
/// input matrices, 1 the recursion matrices, 2 the biases (as lstm_ref.py, below, builds them).
std::string lstmWeights(int d, int in, int hidden, bool bias) {
  std::string p;
  for (int g = 0; g < 4; ++g) {
    p += bytesField(1 + g, weights(counting(float(1000 * d + 10 * g), hidden * in)));
    p += bytesField(20 + g, weights(counting(float(1000 * d + 100 + 10 * g), hidden * hidden)));
    if (bias) p += bytesField(40 + g, weights(counting(float(1000 * d + 200 + 10 * g), hidden)));
  }
  return p;
}

}  // namespace

class TestKrakenFile : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void readsEveryFixture_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("container");
    QTest::addColumn<QString>("vgsl");
    QTest::addColumn<int>("tensors");
    for (const char* f : {"model_small.mlmodel", "model_small.safetensors",
                          "model_small_fp16.safetensors", "model_small_mixed.safetensors"})
      QTest::newRow(f) << f << (QString(f).endsWith(".mlmodel") ? "coreml" : "safetensors")
                       << "[1,48,0,1 Cr{C_0}4,2,1,4,2 O{O_1}1c4]" << 4;
    QTest::newRow("overfit.mlmodel")
        << "overfit.mlmodel"
        << "coreml"
        << "[1,30,0,1 Cr{C_0}3,3,32,2,2 Gn{Gn_1}32 Cr{C_2}3,3,64,2,2 Gn{Gn_3}32 S{S_4}1(1x0)1,3 "
           "O{O_5}1c16]"
        << 10;
    QTest::newRow("overfit_newpoly.mlmodel")
        << "overfit_newpoly.mlmodel"
        << "coreml"
        << "[1,30,0,1 Cr{C_0}3,3,32,2,2 Gn{Gn_1}32 Cr{C_2}3,3,64,2,2 Gn{Gn_3}32 S{S_4}1(1x0)1,3 "
           "O{O_5}1c45]"
        << 10;
    for (const char* f : {"overfit_bl.safetensors", "overfit_bl_newpoly.safetensors"})
      QTest::newRow(f) << f << "safetensors"
                       << "[1,30,0,1 Cr{C_0}3,3,32,2,2 Gn{Gn_1}32 Cr{C_2}3,3,64,2,2 Gn{Gn_3}32 "
                          "S{S_4}1(1x0)1,3 O{O_5}1c16 O{O_6}1c36]"
                       << 12;
  }
  void readsEveryFixture() {
    QFETCH(QString, file);
    QFETCH(QString, container);
    QFETCH(QString, vgsl);
    QFETCH(int, tensors);
    const KrakenFile k = readKrakenFile(kModels + file.toStdString());
    QCOMPARE(QString::fromStdString(k.container), container);
    QCOMPARE(QString::fromStdString(k.vgsl), vgsl);
    QCOMPARE(static_cast<int>(k.weights.size()), tensors);
    // The torch state-dict names and shapes of kraken's TorchVGSLModel for that spec.
    const bool small = file.startsWith("model_small");
    std::map<std::string, std::vector<int64_t>> shapes;
    if (small) {
      shapes = {{"nn.C_0.co.weight", {1, 1, 4, 2}},
                {"nn.C_0.co.bias", {1}},
                {"nn.O_1.lin.weight", {4, 1}},
                {"nn.O_1.lin.bias", {4}}};
    } else {
      const int64_t out = file.startsWith("overfit_newpoly") ? 45 : 16;
      shapes = {{"nn.C_0.co.weight", {32, 1, 3, 3}},  {"nn.C_0.co.bias", {32}},
                {"nn.Gn_1.layer.weight", {32}},       {"nn.Gn_1.layer.bias", {32}},
                {"nn.C_2.co.weight", {64, 32, 3, 3}}, {"nn.C_2.co.bias", {64}},
                {"nn.Gn_3.layer.weight", {64}},       {"nn.Gn_3.layer.bias", {64}},
                {"nn.O_5.lin.weight", {out, 512}},    {"nn.O_5.lin.bias", {out}}};
      if (container == "safetensors") {
        shapes["nn.O_6.lin.weight"] = {36, 16};
        shapes["nn.O_6.lin.bias"] = {36};
      }
    }
    for (const auto& [name, shape] : shapes) {
      const auto it = k.weights.find(name);
      QVERIFY2(it != k.weights.end(), name.c_str());
      QCOMPARE(it->second.shape, shape);
      int64_t n = 1;
      for (auto d : shape) n *= d;
      QCOMPARE(static_cast<int64_t>(it->second.values.size()), n);
      for (float v : it->second.values) QVERIFY(std::isfinite(v));
    }
    // The metadata: the same keys whatever the container.
    const json meta = json::parse(k.metaJson);
    QCOMPARE(QString::fromStdString(meta.at("vgsl").get<std::string>()), vgsl);
    QVERIFY(meta.at("codec").is_object());
    QVERIFY(meta.at("model_type").is_array());
    for (const char* key : {"accuracy", "seg_type", "one_channel_mode"})
      QVERIFY2(meta.contains(key), key);
    QCOMPARE(meta.contains("hyper_params"), !file.startsWith("overfit_bl"));
  }

  // fp32, fp16 and mixed precision: the same model, kraken's test_loaders fixtures.
  void safetensorsValuesAsNumpy() {
    const KrakenFile f32 = readKrakenFile(kModels + "model_small.safetensors");
    const KrakenFile f16 = readKrakenFile(kModels + "model_small_fp16.safetensors");
    const KrakenFile mixed = readKrakenFile(kModels + "model_small_mixed.safetensors");
    // numpy: sum (float64) and first value of each tensor
    const auto& w = f32.weights.at("nn.C_0.co.weight");
    QCOMPARE(w.storedAs, std::string("F32"));
    QVERIFY(std::abs(sum(w) - 0.708352029) < 1e-7);
    QCOMPARE(w.values[0], -0.0560687482f);
    QCOMPARE(w.values[7], 0.0669151247f);
    QCOMPARE(f32.weights.at("nn.C_0.co.bias").values[0], 0.194878191f);
    QVERIFY(std::abs(sum(f32.weights.at("nn.O_1.lin.bias")) - 0.872734904) < 1e-7);
    QCOMPARE(f32.weights.at("nn.O_1.lin.bias").values[3], -0.947084546f);
    QVERIFY(std::abs(sum(f32.weights.at("nn.O_1.lin.weight")) - -0.33947742) < 1e-7);
    // fp16: numpy's exact half values, and within half precision of the fp32 model
    QCOMPARE(f16.weights.at("nn.C_0.co.weight").storedAs, std::string("F16"));
    QCOMPARE(f16.weights.at("nn.C_0.co.weight").values[0], -0.056060791f);
    QCOMPARE(f16.weights.at("nn.C_0.co.weight").values[7], 0.0668945312f);
    QCOMPARE(f16.weights.at("nn.C_0.co.bias").values[0], 0.194824219f);
    QCOMPARE(f16.weights.at("nn.O_1.lin.bias").values[3], -0.947265625f);
    QVERIFY(std::abs(sum(f16.weights.at("nn.O_1.lin.weight")) - -0.339416504) < 1e-9);
    for (const auto& [name, t] : f32.weights) {
      const auto& h = f16.weights.at(name);
      QCOMPARE(h.shape, t.shape);
      for (size_t i = 0; i < t.values.size(); ++i)
        QVERIFY2(std::abs(h.values[i] - t.values[i]) <= std::abs(t.values[i]) * 0x1p-11f + 0x1p-24f,
                 name.c_str());
    }
    // mixed: the convolution stored as fp16 (the fp16 file's values), the linear layer as fp32
    for (const auto& [name, t] : mixed.weights) {
      const bool conv = name.rfind("nn.C_0.", 0) == 0;
      QCOMPARE(t.storedAs, std::string(conv ? "F16" : "F32"));
      QCOMPARE(t.values, (conv ? f16 : f32).weights.at(name).values);
    }
  }

  void overfitSafetensorsAsNumpy() {
    const KrakenFile k = readKrakenFile(kModels + "overfit_bl.safetensors");
    const std::map<std::string, std::pair<double, float>> numpy = {
        {"nn.C_0.co.weight", {0.554432453, 0.0289707016f}},
        {"nn.C_2.co.weight", {4.41747254, -0.0215941295f}},
        {"nn.Gn_1.layer.weight", {32.0086814, 1.00040972f}},
        {"nn.Gn_3.layer.bias", {-0.0152359531, 0.0026038799f}},
        {"nn.O_5.lin.weight", {-1.55032415, -0.0528748184f}},
        {"nn.O_6.lin.weight", {0.378527235, 0.336196989f}},
        {"nn.O_6.lin.bias", {-0.052755951, 0.00282111554f}}};
    for (const auto& [name, ref] : numpy) {
      const auto& t = k.weights.at(name);
      QVERIFY2(std::abs(sum(t) - ref.first) < 1e-5 * std::max(1.0, std::abs(ref.first)),
               name.c_str());
      QCOMPARE(t.values[0], ref.second);
    }
    QCOMPARE(k.weights.at("nn.C_2.co.weight").values.back(), 0.0151139973f);
    const json meta = json::parse(k.metaJson);
    QCOMPARE(meta["model_type"], json::array({"recognition"}));
    QCOMPARE(meta["_tasks"], json::array({"recognition"}));
    QCOMPARE(meta["seg_type"], json("baselines"));
    QCOMPARE(meta["one_channel_mode"], json("L"));
    QCOMPARE(meta["legacy_polygons"], json(true));
    QCOMPARE(meta["codec"].size(), size_t(35));
    QCOMPARE(meta["codec"]["\xC3\xAD"], json::array({35}));  // "í", written as \u00ed
    QCOMPARE(
        json::parse(
            readKrakenFile(kModels + "overfit_bl_newpoly.safetensors").metaJson)["legacy_polygons"],
        json(false));
  }

  // The CoreML weights are what kraken's _coreml.py makes of them.
  void coremlAsKraken() {
    const KrakenFile k = readKrakenFile(kModels + "overfit.mlmodel");
    const std::map<std::string, std::tuple<double, float, float>> kraken = {
        {"nn.C_0.co.weight", {-1.06020809, 0.0412797965f, 0.0167364385f}},
        {"nn.C_0.co.bias", {0.211235981, 0.131565928f, 0.040770378f}},
        {"nn.C_2.co.weight", {1.69730784, -0.0465346202f, -0.037767414f}},
        {"nn.Gn_1.layer.weight", {31.9427175, 0.991634488f, 0.987814724f}},
        {"nn.Gn_1.layer.bias", {-0.135442308, 0.00241276924f, 0.0371958464f}},
        {"nn.Gn_3.layer.weight", {66.4300255, 1.05024862f, 1.03600037f}},
        {"nn.O_5.lin.weight", {7.69587505, 0.063483879f, 0.0303780511f}},
        {"nn.O_5.lin.bias", {-0.139124802, 0.0209038556f, -0.0127352588f}}};
    for (const auto& [name, ref] : kraken) {
      const auto& t = k.weights.at(name);
      QCOMPARE(t.storedAs, std::string("coreml"));
      QVERIFY2(
          std::abs(sum(t) - std::get<0>(ref)) < 1e-5 * std::max(1.0, std::abs(std::get<0>(ref))),
          name.c_str());
      QCOMPARE(t.values.front(), std::get<1>(ref));
      QCOMPARE(t.values.back(), std::get<2>(ref));
    }
    const KrakenFile n = readKrakenFile(kModels + "overfit_newpoly.mlmodel");
    QVERIFY(std::abs(sum(n.weights.at("nn.O_5.lin.weight")) - 32.0225418) < 1e-4);
    QCOMPARE(n.weights.at("nn.O_5.lin.weight").values.back(), -0.0881150439f);
    // kraken saved the small model in both containers: the same numbers
    const KrakenFile a = readKrakenFile(kModels + "model_small.mlmodel");
    const KrakenFile b = readKrakenFile(kModels + "model_small.safetensors");
    QCOMPARE(a.weights.size(), b.weights.size());
    for (const auto& [name, t] : a.weights) {
      QCOMPARE(t.shape, b.weights.at(name).shape);
      QCOMPARE(t.values, b.weights.at(name).values);
    }
  }

  void coremlMetadata() {
    const json meta = json::parse(readKrakenFile(kModels + "overfit.mlmodel").metaJson);
    QCOMPARE(meta["model_type"], json::array({"recognition"}));  // kraken 6's string, as a list
    QCOMPARE(meta["seg_type"], json("bbox"));
    QCOMPARE(meta["one_channel_mode"], json("1"));
    QCOMPARE(meta["codec"].size(), size_t(15));
    QCOMPARE(meta["codec"]["\xDC\x90"], json::array({3}));  // U+0710 SYRIAC LETTER ALAPH
    QCOMPARE(meta["accuracy"].size(), size_t(162));
    QCOMPARE(meta["hyper_params"]["completed_epochs"], json(162));
    QVERIFY(!meta.contains("legacy_polygons"));  // older than the option: kraken assumes true
    const json newpoly = json::parse(readKrakenFile(kModels + "overfit_newpoly.mlmodel").metaJson);
    QCOMPARE(newpoly["legacy_polygons"], json(false));
    QCOMPARE(newpoly["metrics"].size(), size_t(1));
    QCOMPARE(newpoly["codec"].size(), size_t(44));
    // model_small.mlmodel has "model_type": null (kraken 7's loader refuses it; Foveal reads it)
    QCOMPARE(json::parse(readKrakenFile(kModels + "model_small.mlmodel").metaJson)["model_type"],
             json::array());
  }

  // LSTM layers, which the fixtures lack: built here; the expected tensors are what kraken's
  // _coreml.py gives for the same layers (built in Python from kraken_coreml.proto): gates in the
  // order i, f, z, o stacked as rows, the one bias vector as bias_hh, zeros as bias_ih.
  void lstmGatesAsKraken() {
    const std::string bi = intField(1, 3) + intField(2, 2) +
                           bytesField(20, lstmWeights(0, 3, 2, true)) +
                           bytesField(20, lstmWeights(1, 3, 2, true));
    const std::string uni =
        intField(1, 2) + intField(2, 1) + bytesField(20, lstmWeights(3, 2, 1, false));
    const std::string bytes =
        coreml(krakenUserDefined(), {layer("L_0", 430, bi), layer("L_1_transposed", 420, uni)});
    QTemporaryDir dir;
    const KrakenFile k = readKrakenFile(writeFile(dir, "lstm.mlmodel", bytes));
    const std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> kraken = {
        {"nn.L_0.layer.weight_ih_l0", {{8, 3}, {0,  1,  2,  3,  4,  5,  10, 11, 12, 13, 14, 15,
                                                20, 21, 22, 23, 24, 25, 30, 31, 32, 33, 34, 35}}},
        {"nn.L_0.layer.weight_hh_l0",
         {{8, 2},
          {100, 101, 102, 103, 110, 111, 112, 113, 120, 121, 122, 123, 130, 131, 132, 133}}},
        {"nn.L_0.layer.bias_hh_l0", {{8}, {200, 201, 210, 211, 220, 221, 230, 231}}},
        {"nn.L_0.layer.bias_ih_l0", {{8}, std::vector<float>(8, 0.0f)}},
        {"nn.L_0.layer.weight_ih_l0_reverse",
         {{8, 3}, {1000, 1001, 1002, 1003, 1004, 1005, 1010, 1011, 1012, 1013, 1014, 1015,
                   1020, 1021, 1022, 1023, 1024, 1025, 1030, 1031, 1032, 1033, 1034, 1035}}},
        {"nn.L_0.layer.weight_hh_l0_reverse",
         {{8, 2},
          {1100, 1101, 1102, 1103, 1110, 1111, 1112, 1113, 1120, 1121, 1122, 1123, 1130, 1131, 1132,
           1133}}},
        {"nn.L_0.layer.bias_hh_l0_reverse",
         {{8}, {1200, 1201, 1210, 1211, 1220, 1221, 1230, 1231}}},
        {"nn.L_0.layer.bias_ih_l0_reverse", {{8}, std::vector<float>(8, 0.0f)}},
        // a legacy (clstm) LSTM without biases; kraken's loader gives it empty bias tensors,
        // which its own bias-free torch.nn.LSTM refuses: Foveal gives none
        {"nn.L_1.layer.weight_ih_l0", {{4, 2}, {3000, 3001, 3010, 3011, 3020, 3021, 3030, 3031}}},
        {"nn.L_1.layer.weight_hh_l0", {{4, 1}, {3100, 3110, 3120, 3130}}}};
    QCOMPARE(k.weights.size(), kraken.size());
    for (const auto& [name, ref] : kraken) {
      QVERIFY2(k.weights.count(name), name.c_str());
      QCOMPARE(k.weights.at(name).shape, ref.first);
      QCOMPARE(k.weights.at(name).values, ref.second);
    }
    const json meta = json::parse(k.metaJson);
    QCOMPARE(meta["model_type"], json::array({"recognition"}));
    QCOMPARE(meta["codec"], json::parse(R"({"a": [1], "b": [2]})"));
  }

  void halfAndBrainFloatsExactly() {
    // F16: 0, -0, the smallest subnormal, the largest subnormal, the smallest normal, 65504, 1/3,
    // inf, -inf, nan; BF16: 1, the smallest subnormal, -2.5, inf, nan; F64: 0.1
    const std::vector<uint16_t> half = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400,
                                        0x7BFF, 0x3555, 0x7C00, 0xFC00, 0x7E00};
    const std::vector<uint16_t> brain = {0x3F80, 0x0001, 0xC020, 0x7F80, 0x7FC0};
    std::string data;
    for (auto h : half) data += std::string{char(h & 0xFF), char(h >> 8)};
    for (auto b : brain) data += std::string{char(b & 0xFF), char(b >> 8)};
    const double tenth = 0.1;
    data += std::string(reinterpret_cast<const char*>(&tenth), 8);
    const std::string uuid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
    json meta = {{uuid,
                  {{"_model", "TorchVGSLModel"},
                   {"_tasks", {"recognition"}},
                   {"vgsl", "[1,1,0,1 O1c2]"},
                   {"codec", "{\"a\": [1]}"},
                   {"accuracy", {{1, {{"val_accuracy", 0.5}}}}}}}};
    // Python's json writes NaN and Infinity: they read as null
    std::string metaText = meta.dump();
    metaText.replace(metaText.find("0.5"), 3, "NaN, \"inf\": -Infinity, \"s\": \"NaN Infinity\"");
    const json header = {
        {"__metadata__", {{"kraken_meta", metaText}}},
        {uuid + ".h", {{"dtype", "F16"}, {"shape", {10}}, {"data_offsets", {0, 20}}}},
        {uuid + ".b", {{"dtype", "BF16"}, {"shape", {5}}, {"data_offsets", {20, 30}}}},
        {uuid + ".d", {{"dtype", "F64"}, {"shape", json::array()}, {"data_offsets", {30, 38}}}}};
    QTemporaryDir dir;
    const KrakenFile k =
        readKrakenFile(writeFile(dir, "floats.safetensors", joinSafetensors(header.dump(), data)));
    const auto& h = k.weights.at("h").values;
    QCOMPARE(h[0], 0.0f);
    QVERIFY(h[1] == 0.0f && std::signbit(h[1]));
    QCOMPARE(h[2], std::ldexp(1.0f, -24));
    QCOMPARE(h[3], std::ldexp(1023.0f, -24));
    QCOMPARE(h[4], std::ldexp(1.0f, -14));
    QCOMPARE(h[5], 65504.0f);
    QCOMPARE(h[6], 0.333251953125f);
    QVERIFY(std::isinf(h[7]) && h[7] > 0);
    QVERIFY(std::isinf(h[8]) && h[8] < 0);
    QVERIFY(std::isnan(h[9]));
    const auto& b = k.weights.at("b").values;
    QCOMPARE(b[0], 1.0f);
    QCOMPARE(b[1], std::ldexp(1.0f, -133));
    QCOMPARE(b[2], -2.5f);
    QVERIFY(std::isinf(b[3]));
    QVERIFY(std::isnan(b[4]));
    QCOMPARE(k.weights.at("d").shape, std::vector<int64_t>{});
    QCOMPARE(k.weights.at("d").values, std::vector<float>{0.1f});
    QCOMPARE(k.weights.at("d").storedAs, std::string("F64"));
    const json m = json::parse(k.metaJson);
    QCOMPARE(m["accuracy"][0][1]["val_accuracy"], json(nullptr));
    QCOMPARE(m["accuracy"][0][1]["inf"], json(nullptr));
    QCOMPARE(m["accuracy"][0][1]["s"], json("NaN Infinity"));  // inside a string: kept
    QCOMPARE(m["codec"], json::parse(R"({"a": [1]})"));  // kraken's add_codec() keeps it as text
  }

  void sniffers() {
    for (const char* f :
         {"model_small.safetensors", "model_small_fp16.safetensors", "overfit_bl.safetensors"}) {
      const std::string head = bytesOf(kModels + f).substr(0, 64);
      QVERIFY2(looksLikeSafetensors(head), f);
      QVERIFY2(!looksLikeCoreml(head), f);
    }
    for (const char* f : {"model_small.mlmodel", "overfit.mlmodel", "overfit_newpoly.mlmodel"}) {
      const std::string head = bytesOf(kModels + f).substr(0, 64);
      QVERIFY2(looksLikeCoreml(head), f);
      QVERIFY2(!looksLikeSafetensors(head), f);
    }
    // a safetensors file without kraken_meta is not kraken's
    const std::string plain = joinSafetensors(R"({"__metadata__":{"format":"pt"}})", "");
    QVERIFY(!looksLikeSafetensors(plain));
    for (const std::string& other :
         {std::string("PK\x03\x04\x14\0\0\0", 8), std::string("\x80\x02\x8a\x0a"),
          std::string("\x89PNG\r\n\x1a\n"), std::string("hello world"), std::string(),
          std::string(64, '\0')}) {
      QVERIFY(!looksLikeSafetensors(other));
      QVERIFY(!looksLikeCoreml(other));
    }
  }

  void damagedSafetensorsRefused_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const std::string good = bytesOf(kModels + "model_small.safetensors");
    const auto row = [](const char* name, const std::string& bytes, const char* expected) {
      QTest::newRow(name) << QByteArray(bytes.data(), static_cast<int>(bytes.size())) << expected;
    };
    row("truncated to 5 bytes", good.substr(0, 5), "truncated: 5 bytes");
    row("truncated in the header", good.substr(0, 300), "header of 856 bytes runs past the end");
    row("truncated after the header", good.substr(0, 8 + 856), "the tensors need 68 bytes of data");
    row("truncated in the data", good.substr(0, good.size() - 3), "truncated: the tensors need 68");
    row("a byte more", good + "x", "the tensors cover 68 bytes of data, but 69 follow");
    std::string flipped = good;
    flipped[8] = 'x';
    row("header start flipped", flipped, "does not start with '{'");
    flipped = good;
    flipped[5] = '\x7f';
    row("length flipped", flipped, "larger than the 100 MB");
    flipped = good;
    flipped[8 + 855] = '!';  // the header's closing brace
    row("header end flipped", flipped, "safetensors header is not valid JSON");
    Safetensors s = splitSafetensors(good);
    const std::string uuid = "d006c519-31e8-4968-b150-57ff4b15a747";
    s.header[uuid + ".nn.C_0.co.weight"]["shape"] = {1, 1, 4, 3};
    row("shape disagrees", joinSafetensors(s),
        "holds 32 bytes, but its dtype F32 and shape [1,1,4,3] need 48");
    s = splitSafetensors(good);
    s.header[uuid + ".nn.C_0.co.weight"]["dtype"] = "F12";
    row("unknown dtype", joinSafetensors(s),
        "tensor 'd006c519-31e8-4968-b150-57ff4b15a747.nn.C_0.co.weight' has an unknown dtype "
        "'F12'");
    s = splitSafetensors(good);
    s.header[uuid + ".nn.C_0.co.weight"]["data_offsets"] = {2, 34};
    row("overlapping tensors", joinSafetensors(s), "(they overlap)");
    s = splitSafetensors(good);
    s.header[uuid + ".nn.O_1.lin.weight"]["data_offsets"] = {52, 84};
    s.header[uuid + ".nn.O_1.lin.weight"]["shape"] = {8, 1};
    row("offsets out of range", joinSafetensors(s),
        "the tensors need 84 bytes of data, but the file holds 68");
    s = splitSafetensors(good);
    s.header["nn.extra"] = {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {68, 68}}};
    row("tensor of no model", joinSafetensors(s),
        "tensor 'nn.extra' belongs to no model of kraken_meta");
    s = splitSafetensors(good);
    s.header[uuid + ".nn.C_0.co.bias"]["dtype"] = "I32";
    row("integer weights", joinSafetensors(s), "is stored as I32, not as floating point");
    s = splitSafetensors(good);
    s.header["__metadata__"]["kraken_meta"] = "{\"d006c519\": {\"_model\": ";
    row("kraken_meta not JSON", joinSafetensors(s), "kraken_meta is not valid JSON");
    s = splitSafetensors(good);
    s.header["__metadata__"] = {{"format", "pt"}};
    row("no kraken_meta", joinSafetensors(s),
        "__metadata__ has no kraken_meta (not a kraken model)");
    s = splitSafetensors(good);
    s.header.erase("__metadata__");
    row("no metadata", joinSafetensors(s), "safetensors header has no __metadata__");
    row("no vgsl",
        withKrakenMeta("model_small.safetensors", [](json& m) { m.begin()->erase("vgsl"); }),
        "kraken_meta model 'd006c519-31e8-4968-b150-57ff4b15a747': has no vgsl");
    row("no codec",
        withKrakenMeta("model_small.safetensors", [](json& m) { m.begin()->erase("codec"); }),
        "has no codec (not a recognition model?)");
    row("codec not c2l",
        withKrakenMeta("model_small.safetensors",
                       [](json& m) {
                         (*m.begin())["codec"] = {{"a", "1"}};
                       }),
        "codec label 'a' has no list of codes");
    row("no _model",
        withKrakenMeta("model_small.safetensors", [](json& m) { m.begin()->erase("_model"); }),
        "has no _model");
    row("_tasks a dict",
        withKrakenMeta("model_small.safetensors",
                       [](json& m) {
                         (*m.begin())["_tasks"] = {{"recognition", true}};
                       }),
        "_tasks is neither a list of strings nor null");
    row("no network",
        withKrakenMeta("model_small.safetensors",
                       [](json& m) { (*m.begin())["_model"] = "ROMLP"; }),
        "kraken_meta holds no TorchVGSLModel network (only: ROMLP)");
    row("two networks",
        withKrakenMeta("model_small.safetensors",
                       [](json& m) { m["2d4b7c2e-0000-4000-8000-000000000000"] = *m.begin(); }),
        "kraken_meta holds two TorchVGSLModel networks");
    std::string deep = std::string(200, '[') + std::string(200, ']');
    s = splitSafetensors(good);
    s.header["__metadata__"]["kraken_meta"] = deep;
    row("deep JSON", joinSafetensors(s), "kraken_meta nests deeper than 100 levels");
    row("text", "neither safetensors nor protobuf",
        "(neither a kraken safetensors file nor a CoreML model?)");
  }
  void damagedSafetensorsRefused() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    const QString message = refusal(bytes.toStdString(), "model_small.safetensors");
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void damagedCoremlRefused_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const auto row = [](const std::string& name, const std::string& bytes,
                        const QString& expected) {
      QTest::newRow(name.c_str()) << QByteArray(bytes.data(), static_cast<int>(bytes.size()))
                                  << expected;
    };
    const std::string good = bytesOf(kModels + "overfit.mlmodel");
    // Every cut falls inside a length-delimited field: the description, the network, a layer
    for (size_t cut :
         {size_t(3), size_t(40), size_t(3000), size_t(50000), good.size() / 2, good.size() - 1})
      row("truncated at " + std::to_string(cut), good.substr(0, cut), "(file truncated)");
    std::string truncated = good.substr(0, 50000);
    row("truncated: the field named", truncated, "neuralNetwork.layers[3].convolution.weights");
    const size_t vgsl = good.find("[1,30,0,1 ");
    std::string flipped = good;
    flipped[vgsl + 3] = '\xff';  // a byte that is never UTF-8
    row("vgsl not UTF-8", flipped, "description.metadata.userDefined[2].value at byte");
    flipped = good;
    flipped[good.find("C_2_conv") - 3] = '\x7f';  // the layer's length: runs past the network
    row("layer length flipped", flipped, "neuralNetwork.layers[3] at byte");
    const auto user = krakenUserDefined();
    const std::string conv = convLayer("C_0_conv", 2, 1, 2, 2);
    auto without = [&](const char* key) {
      auto u = user;
      u.erase(key);
      return u;
    };
    row("no kraken metadata", coreml({{"other", "x"}}, {conv}), "without kraken's metadata");
    row("no vgsl", coreml(without("vgsl"), {conv}), "no VGSL spec");
    row("no codec", coreml(without("codec"), {conv}), "no codec");
    auto u = user;
    u["kraken_meta"] = "{\"model_type\": ";
    row("kraken_meta not JSON", coreml(u, {conv}), "userDefined kraken_meta is not valid JSON");
    u = user;
    u["kraken_meta"] = "{\"model_type\": 7}";
    row("model_type a number", coreml(u, {conv}), "model_type is neither a string nor a list");
    u = user;
    u["codec"] = "[1, 2]";
    row("codec a list", coreml(u, {conv}), "userDefined codec is not an object of labels");
    row("convolution weights short", coreml(user, {convLayer("C_0_conv", 2, 1, 2, 2, 7)}),
        "layer 'C_0_conv': convolution weights hold 7 values, expected 8 (outputChannels 2 x "
        "kernelChannels 1 x 2 x 2)");
    row("convolution biases short", coreml(user, {convLayer("C_0_conv", 2, 1, 2, 2, -1, 1)}),
        "layer 'C_0_conv': convolution biases hold 1 values, expected 2");
    row("kernel of one side",
        coreml(user, {layer("C_0_conv", 100,
                            intField(1, 1) + intField(2, 1) + bytesField(20, varint(3)))}),
        "kernelSize has 1 entries");
    const std::string lin = intField(1, 3) + intField(2, 2) +
                            bytesField(20, weights(counting(0, 5))) +
                            bytesField(21, weights(counting(0, 2)));
    row("linear weights short", coreml(user, {layer("O_1_lin", 140, lin)}),
        "layer 'O_1_lin': inner product weights hold 5 values, expected 6");
    const std::string half = intField(1, 1) + intField(2, 1) +
                             bytesField(20, bytesField(2, std::string("\x00\x3c", 2))) +
                             bytesField(21, weights({0}));
    row("half-precision weights", coreml(user, {layer("O_1_lin", 140, half)}),
        "stored as half-precision or quantised values");
    const std::string oneWay =
        intField(1, 3) + intField(2, 2) + bytesField(20, lstmWeights(0, 3, 2, true));
    row("bidirectional one way", coreml(user, {layer("L_0", 430, oneWay)}),
        "a bidirectional LSTM with 1 sets of weights, not 2");
    const std::string uni =
        intField(1, 3) + intField(2, 2) + bytesField(20, lstmWeights(0, 2, 2, true));
    row("LSTM gate short", coreml(user, {layer("L_0", 420, uni)}),
        "input gate weight matrix hold 4 values, expected 6 (outputVectorSize 2 x inputVectorSize "
        "3)");
    const std::string someBias =
        intField(1, 1) + intField(2, 1) +
        bytesField(20, lstmWeights(0, 1, 1, false) + bytesField(41, weights({1})));
    row("LSTM with one bias", coreml(user, {layer("L_0", 420, someBias)}),
        "input gate bias vector hold 0 values, expected 1");
    const auto param = [](const std::string& key, int v) {
      return bytesField(30, bytesField(1, key) + bytesField(2, intField(30, v)));
    };
    const std::string gn = bytesField(10, "groupnorm") + bytesField(20, weights({1, 1})) +
                           bytesField(20, weights({0, 0}));
    row("groupnorm without in_channels",
        coreml(user, {layer("Gn_1", 500, gn + param("num_groups", 1))}),
        "layer 'Gn_1': groupnorm has no in_channels parameter");
    row("groupnorm too short", coreml(user, {layer("Gn_1", 500, gn + param("in_channels", 3))}),
        "groupnorm weights hold 2 values, expected 3 (in_channels 3)");
    row("two layers, one name", coreml(user, {conv, conv}),
        "gives the weights 'nn.C_0.co.weight' a second time");
    row("not a network",
        intField(1, 4) + bytesField(2, bytesField(1, bytesField(1, "input"))) + bytesField(555, ""),
        "a protobuf, but not a CoreML neural network");
  }
  void damagedCoremlRefused() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    const QString message = refusal(bytes.toStdString(), "overfit.mlmodel");
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  // A file that is no model at all, and one that is not there.
  void otherFilesRefused() {
    QTemporaryDir dir;
    const std::string empty = writeFile(dir, "empty.mlmodel", "");
    try {
      readKrakenFile(empty);
      QFAIL("an empty file was read");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains(QString::fromStdString(empty) + ": empty file"),
               e.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, readKrakenFile(dir.path().toStdString() + "/missing.mlmodel"));
    QVERIFY_THROWS_EXCEPTION(Error, readKrakenFile(dir.path().toStdString()));  // a folder
  }
};

QTEST_APPLESS_MAIN(TestKrakenFile)
#include "test_kraken_file.moc"
