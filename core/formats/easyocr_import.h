#pragma once
// Opening EasyOCR's recognisers (github.com/JaidedAI/EasyOCR): DTRB-family CTC models
// (None-VGG-BiLSTM-CTC for generation 2, 256/256; None-ResNet-BiLSTM-CTC for generation 1,
// 512/512) saved through DataParallel ("module."), read as EasyOCR's readtext reads a crop by
// default (--easyocr-input): cv2.imread's grey (or cvtColor's of a BGR array), get_image_list's
// cv2.resize (INTER_LINEAR) to height 64 (or a user network's imgH), then get_text: AlignCollate
// (PIL bicubic, ratio kept, variable width: EasyOCR's max_width ceil(max ratio) * 64, padded
// with the last column), greedy CTC, EasyOCR's confidence, and the contrast retry
// (contrast_ths 0.1, adjust_contrast 0.5); or as the recogniser alone (PIL's luma and bicubic
// from the source, no retry: get_text given the file's pixels). Not the detector. The
// charset is the released model's (a fact table by name, easyocr_charsets.cpp, generated from
// EasyOCR's config.py), a user network's NAME.yaml `character_list`, or --character.
// Torch-free header; the format's registry entry is easyocrModelFormat() (easyocr_import.cpp).
#include <string>
#include <vector>

namespace foveal::core {

/// A recogniser EasyOCR releases: its name in config.py (english_g2), its file (english_g2.pth),
/// its generation (1: ResNet, 2: VGG) and its classes after the blank, in order.
struct EasyOcrReleasedModel {
  const char* name;
  const char* filename;
  int generation;
  const char* characters;
};

/// Every released recogniser, as EasyOCR's config.py lists them (easyocr_charsets.cpp).
const std::vector<EasyOcrReleasedModel>& easyOcrReleasedModels();
/// The released model named `name` ("english_g2") or whose file is `name` with or without
/// ".pth" ("latin", "latin.pth"); nullptr when none.
const EasyOcrReleasedModel* findEasyOcrModel(const std::string& name);

/// What EasyOCR's user_network NAME.yaml says (the keys EasyOCR reads).
struct EasyOcrUserNetwork {
  std::string path;
  std::string characters;  ///< character_list
  int imgH = 0;            ///< 0: not given (EasyOCR then keeps 64)
  int inputChannel = 0, outputChannel = 0, hiddenSize = 0;  ///< network_params; 0: not given
};

/// Reads the subset of YAML such files use (top-level `key: value`, the network_params mapping,
/// plain, single- and double-quoted scalars, lists, comments). Throws Error naming the file and
/// line for anything else, and when character_list is missing.
EasyOcrUserNetwork readEasyOcrYaml(const std::string& path);
EasyOcrUserNetwork parseEasyOcrYaml(const std::string& text, const std::string& origin);

}  // namespace foveal::core
