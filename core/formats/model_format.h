#pragma once
// The one import seam: every model file Foveal opens (its own .fvm, a deep-text-recognition-
// benchmark .pth, an EasyOCR recogniser, ...) goes through a registry of formats. Each format has
// a name, a sniffer that recognises its files by their content (the container and, for torch.save
// files, the keys: never by the extension alone), its options as key/value pairs with their help
// text, and an import function that returns a Foveal model and says what it assumed. Adding a
// format is one source file and one line in the table of model_format.cpp (docs/ARCHITECTURE.md
// "Model file formats"). Torch-free: the GUI and the CLI read names, options and reports.
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace foveal::core {

struct LoadedModel;      // formats/checkpoint.h
struct StoredStateDict;  // formats/torch_file.h

/// An import's options as key/value pairs ("imgH" -> "64"; a flag's value is "1"): what
/// `--KEY VALUE` on the command line and the GUI's questions give. The key "format" names the
/// format to use instead of the sniffers' choice.
using ImportOptions = std::map<std::string, std::string>;

/// The key that forces a format by name.
inline constexpr const char* kFormatOption = "format";

struct FormatOption {
  std::string key;           ///< as on the command line, without "--"
  std::string help;          ///< one line: what it means and its default
  bool flag = false;         ///< no value: present or not
  std::string defaultValue;  ///< shown in the help; empty when the format infers it
};

/// What a sniffer looks at: the file's first bytes and, when it is a torch.save file, its state
/// dict (parsed once, on first use, by the restricted reader of torch_file.h). Also the file's
/// companions a format may read (EasyOCR's NAME.yaml beside NAME.pth).
class FileProbe {
 public:
  explicit FileProbe(std::string path);
  ~FileProbe();
  FileProbe(const FileProbe&) = delete;
  FileProbe& operator=(const FileProbe&) = delete;

  const std::string& path() const { return m_path; }
  /// The first 64 bytes (fewer for a shorter file). Throws Error when the file cannot be read.
  const std::string& head() const { return m_head; }
  /// "foveal" (Foveal's signature), "torch-zip", "torch-legacy" (torch.save), or "unknown".
  const std::string& container() const { return m_container; }
  bool isTorchFile() const;
  /// The torch.save file's tensors (nullptr for another container). Throws the reader's Error
  /// (naming the file and the refused global, the truncated record, ...) when it cannot be read.
  const StoredStateDict* stateDict() const;
  /// The file name without its folder and its last extension ("english_g2" for
  /// ".../english_g2.pth").
  std::string stem() const;
  /// A file beside this one with the same stem and `extension` (".yaml"), if it exists.
  std::string sibling(const std::string& extension) const;

 private:
  std::string m_path, m_head, m_container;
  mutable std::shared_ptr<const StoredStateDict> m_stateDict;
};

/// A sniffer's answer: 0 when the file is not of its format; else how sure (the highest wins) and
/// why, in words a user reads in `foveal-cli info`.
struct Sniff {
  int score = 0;
  std::string why;
};

/// What an import did, for the user and for the metadata of an imported .fvm.
struct ImportReport {
  std::string format;                ///< the format's registry name
  std::string why;                   ///< why this format: what its sniffer saw (or "--format")
  std::string description;           ///< what the file holds, in the format's own words
  std::vector<std::string> assumed;  ///< what the import assumed (charset, input size, ...)
  std::string provenanceJson;        ///< a JSON object (empty for Foveal's own files)
};

struct ModelFormat {
  std::string name;     ///< e.g. "dtrb", "easyocr"; what --format takes
  std::string summary;  ///< one line: what files these are
  std::vector<FormatOption> options;
  Sniff (*sniff)(const FileProbe& file, const ImportOptions& options) = nullptr;
  /// The model in eval mode on the CPU; fills `report` (format and why are filled by the caller).
  /// Throws Error naming the file and the problem.
  LoadedModel (*load)(const FileProbe& file, const ImportOptions& options,
                      ImportReport& report) = nullptr;
  /// The files load() reads besides the file itself (EasyOCR's NAME.yaml beside NAME.pth, or
  /// --yaml's): inputs of the command, which none of its outputs may replace. nullptr: none.
  std::vector<std::string> (*companions)(const FileProbe& file,
                                         const ImportOptions& options) = nullptr;
};

/// Every format, in the order of the table in model_format.cpp.
const std::vector<ModelFormat>& modelFormats();
/// The format named `name`, or nullptr.
const ModelFormat* findModelFormat(const std::string& name);

/// The format of a file: the one options["format"] names, else the sniffer with the highest
/// score. Throws Error naming the file when none claims it (saying what each looks for), when
/// the torch.save reader refuses it, or when an option given is not one of the format's.
struct Recognised {
  const ModelFormat* format = nullptr;
  std::string why;
};
Recognised recogniseModelFile(const FileProbe& file, const ImportOptions& options);

/// Every file an import of `path` reads: the file itself, then the companions its format names
/// (ModelFormat::companions): what a command's output guard must count as its inputs. Just
/// `path` when no format claims the file or it cannot be read (the import then says why).
std::vector<std::string> modelFileInputs(const std::string& path, const ImportOptions& options);

/// Every format's options once by key (the command line accepts their union); a key that two
/// formats share keeps the first one's help.
std::vector<FormatOption> allImportOptions();

/// Option values, checked: `file` names the model in the error.
int intOption(const ImportOptions& o, const std::string& key, int fallback, const std::string& file,
              int lo, int hi);
std::string stringOption(const ImportOptions& o, const std::string& key,
                         const std::string& fallback = "");
bool flagOption(const ImportOptions& o, const std::string& key);

}  // namespace foveal::core
