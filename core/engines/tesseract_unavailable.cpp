// A build without libtesseract: the Tesseract seam says so instead of reading.
#include "base/error.h"
#include "engines/tesseract_engine.h"

namespace foveal::core {

namespace {
const char* kAbsent =
    "this build has no Tesseract: libtesseract was not found when it was configured (Debian: "
    "apt install libtesseract-dev tesseract-ocr-eng, then configure again)";
}

struct TesseractEngine::Impl {
  TesseractSpec spec;
};

bool tesseractAvailable() { return false; }
std::string tesseractVersion() { return kAbsent; }

std::shared_ptr<TesseractEngine> TesseractEngine::open(const TesseractSpec& spec) {
  throw Error(spec.toString() + ": " + kAbsent);
}

TesseractEngine::TesseractEngine(std::unique_ptr<Impl> impl) : d(std::move(impl)) {}
TesseractEngine::~TesseractEngine() = default;
const TesseractSpec& TesseractEngine::spec() const { return d->spec; }
std::string TesseractEngine::describe() const { return kAbsent; }
Trace TesseractEngine::read(const GreyImage&, const std::string&) const { throw Error(kAbsent); }

}  // namespace foveal::core
