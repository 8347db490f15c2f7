// Tesseract through its C++ API (libtesseract 5): the one file that includes it.
#include "engines/tesseract_engine.h"

#include <tesseract/baseapi.h>
#include <tesseract/ltrresultiterator.h>
#include <tesseract/resultiterator.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "base/error.h"

namespace foveal::core {

namespace {

std::string takeText(char* text) {
  std::string out = text ? text : "";
  delete[] text;
  return out;
}

}  // namespace

struct TesseractEngine::Impl {
  TesseractSpec spec;
  mutable std::mutex mutex;  // a TessBaseAPI reads one image at a time
  mutable tesseract::TessBaseAPI api;
};

bool tesseractAvailable() { return true; }

std::string tesseractVersion() {
  return std::string("Tesseract ") + tesseract::TessBaseAPI::Version();
}

std::shared_ptr<TesseractEngine> TesseractEngine::open(const TesseractSpec& spec) {
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  if (impl->api.Init(nullptr, spec.language.c_str(), tesseract::OEM_LSTM_ONLY) != 0) {
    const char* prefix = std::getenv("TESSDATA_PREFIX");
    throw Error(spec.toString() + ": Tesseract cannot load the language '" + spec.language +
                "' (no " + spec.language + ".traineddata in " +
                (prefix ? std::string(prefix) : std::string("its tessdata folder")) +
                "; Debian: apt install tesseract-ocr-" + spec.language + ")");
  }
  impl->api.SetPageSegMode(static_cast<tesseract::PageSegMode>(spec.psm));
  // The LSTM's choices per symbol (what hOCR's lstm_choices spans show).
  impl->api.SetVariable("lstm_choice_mode", "2");
  if (!spec.characters.empty())
    impl->api.SetVariable("tessedit_char_whitelist", spec.characters.c_str());
  return std::shared_ptr<TesseractEngine>(new TesseractEngine(std::move(impl)));
}

TesseractEngine::TesseractEngine(std::unique_ptr<Impl> impl) : d(std::move(impl)) {}
TesseractEngine::~TesseractEngine() {
  if (d) d->api.End();
}

const TesseractSpec& TesseractEngine::spec() const { return d->spec; }

std::string TesseractEngine::describe() const {
  return tesseractVersion() + " (" + d->spec.language + ", psm " + std::to_string(d->spec.psm) +
         (d->spec.characters.empty() ? "" : ", characters " + d->spec.characters) + ", LSTM)";
}

Trace TesseractEngine::read(const GreyImage& image, const std::string& source) const {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<size_t>(image.width) * static_cast<size_t>(image.height))
    throw Error(source + ": not an image Tesseract can read (" + std::to_string(image.width) + "x" +
                std::to_string(image.height) + ")");
  Trace tr;
  tr.source = source;
  tr.modelKind = "tesseract";
  tr.decoder = "tesseract";
  tr.modelDescription = describe();
  tr.stages = "tesseract (" + d->spec.toString() + ")";
  tr.focusRule = kTesseractFocusRule;
  tr.imageW = image.width;
  tr.imageH = image.height;

  std::lock_guard<std::mutex> lock(d->mutex);
  auto& api = d->api;
  api.SetImage(image.pixels.data(), image.width, image.height, 1, image.width);
  api.SetSourceResolution(70);  // what Tesseract assumes for an image without one, said aloud
  api.SetInputName(source.c_str());
  if (api.Recognize(nullptr) != 0) throw Error(source + ": Tesseract failed to read the image");
  tr.confidence = std::clamp(api.MeanTextConf() / 100.0, 0.0, 1.0);

  std::unique_ptr<tesseract::ResultIterator> it(api.GetIterator());
  bool first = true;
  int prevRight = 0, prevTop = 0, prevBottom = 0;
  if (it) {
    do {
      if (it->Empty(tesseract::RIL_SYMBOL)) continue;
      int l = 0, t = 0, r = 0, b = 0;
      it->BoundingBox(tesseract::RIL_SYMBOL, &l, &t, &r, &b);
      if (!first && it->IsAtBeginningOf(tesseract::RIL_WORD)) {
        // The gap between two words: a space step, certain, boxed by the gap.
        TraceStep space;
        space.token = " ";
        space.prob = 1.0;
        const int top = std::min(prevTop, t), bottom = std::max(prevBottom, b);
        space.box = {static_cast<double>(prevRight), static_cast<double>(top),
                     static_cast<double>(std::max(0, l - prevRight)),
                     static_cast<double>(bottom - top)};
        space.focus = {space.box.x + space.box.w / 2, space.box.y + space.box.h / 2};
        space.topk = {{" ", 0, 1.0}};
        tr.steps.push_back(space);
        tr.prediction += " ";
      }
      TraceStep s;
      s.token = takeText(it->GetUTF8Text(tesseract::RIL_SYMBOL));
      s.prob = std::clamp(it->Confidence(tesseract::RIL_SYMBOL) / 100.0, 0.0, 1.0);
      s.box = {static_cast<double>(l), static_cast<double>(t), static_cast<double>(r - l),
               static_cast<double>(b - t)};
      s.focus = {s.box.x + s.box.w / 2, s.box.y + s.box.h / 2};
      tesseract::ChoiceIterator ci(*it);
      do {
        const char* text = ci.GetUTF8Text();
        if (text && *text)
          s.topk.push_back({text, 0, std::clamp(ci.Confidence() / 100.0, 0.0, 1.0)});
      } while (ci.Next());
      std::stable_sort(s.topk.begin(), s.topk.end(),
                       [](const TokenProb& a, const TokenProb& b) { return a.prob > b.prob; });
      if (s.topk.size() > 5) s.topk.resize(5);
      if (s.topk.empty()) s.topk = {{s.token, 0, s.prob}};
      tr.prediction += s.token;
      tr.steps.push_back(std::move(s));
      prevRight = r;
      prevTop = t;
      prevBottom = b;
      first = false;
    } while (it->Next(tesseract::RIL_SYMBOL));
  }
  api.Clear();
  return tr;
}

}  // namespace foveal::core
