#include "trace/contrast_retry.h"

#include <cstdio>

#include "image/preprocess.h"
#include "trace/trace_builder.h"

namespace foveal::core {

Trace contrastRetry(Recognizer& model, const GreyImage& image, Trace first,
                    const DecodeOptions& dec, int topk, bool stopAtEnd) {
  const auto& cfg = model->config;
  const auto& pp = cfg.preprocessing;
  if (!(pp.contrastThreshold > 0)) return first;
  char line[400];
  if (!(first.confidence < pp.contrastThreshold)) {
    std::snprintf(line, sizeof line, "first pass (confidence %.4f, not under contrast_ths %g)",
                  first.confidence, pp.contrastThreshold);
    first.inputPass = line;
    return first;
  }
  const bool sharp = cfg.needsUpsampled();
  const auto again = preprocess({image}, pp, sharp, /*contrastPass=*/true);
  Trace second = buildTrace(model, model->forward(again.image, again.upsampled, dec), again, 0,
                            image.width, image.height, topk, stopAtEnd);
  const auto adjusted = contrastAdjustmentOf(image, pp);
  char how[200];
  if (adjusted.adjusted)
    std::snprintf(how, sizeof how, "adjust_contrast %g: grey levels v -> (v - %.1f + 25) * %.4f",
                  pp.adjustContrast, adjusted.low, adjusted.ratio);
  else
    std::snprintf(how, sizeof how,
                  "adjust_contrast %g, which leaves this image as it is: the same input again",
                  pp.adjustContrast);
  // get_text: `if pred1[1] > pred2[1]` keeps the first; a tie keeps the second.
  if (first.confidence > second.confidence) {
    std::snprintf(line, sizeof line,
                  "first pass (confidence %.4f, under contrast_ths %g; read again with %s, it "
                  "read \"%s\" at %.4f)",
                  first.confidence, pp.contrastThreshold, how, second.prediction.c_str(),
                  second.confidence);
    first.inputPass = line;
    return first;
  }
  std::snprintf(line, sizeof line,
                "contrast pass (%s; the first pass read \"%s\" at %.4f, under contrast_ths %g)",
                how, first.prediction.c_str(), first.confidence, pp.contrastThreshold);
  second.contrastPass = true;
  second.inputPass = line;
  return second;
}

}  // namespace foveal::core
