// libFuzzer harness: gt.txt files -> FolderDataset, then every entry's label and name, and the
// image of entries whose path stays inside the folder (which holds one valid image, a.pgm, and a
// sub-folder d/, so "a.pgm", "d" and "." all occur). Lines may hold anything: byte order marks,
// invalid UTF-8, CRs, TABs, empty paths, and the optional boxes column.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "base/error.h"
#include "data/folder_dataset.h"
#include "fuzz_check.h"
#include "image/grey_image.h"
#include "model/charset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const std::string d = "/tmp/foveal-fuzz-folder-" + std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    mkdir((d + "/d").c_str(), 0700);
    std::ofstream(d + "/a.pgm", std::ios::binary) << "P5\n4 2\n255\n" << std::string(8, '\x80');
    return d;
  }();
  std::ofstream(dir + "/gt.txt", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  // A file that starts with one byte order mark: the mark is not part of line 1's path.
  const std::string bom = "\xEF\xBB\xBF";
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool oneBom = text.rfind(bom, 0) == 0 && text.rfind(bom + bom, 0) != 0;
  try {
    foveal::core::data::FolderDataset ds(dir);
    for (size_t i = 0; i < std::min<size_t>(ds.size(), 64); ++i) {
      const std::string name = ds.entryName(i);
      FUZZ_CHECK(name.find("gt.txt: line ") != std::string::npos,
                 "an entry's name says its gt.txt line");
      FUZZ_CHECK(!oneBom || name.find("line 1 (" + bom) == std::string::npos,
                 "line 1's path does not start with the file's byte order mark");
      try {
        const std::string label = ds.label(i);
        FUZZ_CHECK(foveal::core::invalidUtf8Offset(label) == std::string::npos,
                   "a label the dataset hands out is valid UTF-8");
        FUZZ_CHECK(label.find('\n') == std::string::npos, "a label holds no line break");
        const size_t tab = name.rfind('(');
        const std::string path = tab == std::string::npos ? "" : name.substr(tab + 1);
        if (path.find('/') == std::string::npos) {  // stays in the folder: read the image too
          const auto s = ds.get(i);
          FUZZ_CHECK(s.label == label, "get() and label() agree");
          FUZZ_CHECK(s.image.pixels.size() == size_t(s.image.width) * s.image.height,
                     "an entry's image has width x height pixels");
        }
      } catch (const foveal::core::Error&) {
      }
      try {  // the optional boxes column: parsed boxes are finite and not inverted
        for (const auto& b : ds.charBoxes(i))
          FUZZ_CHECK(std::isfinite(b.x) && std::isfinite(b.y) && std::isfinite(b.w) &&
                         std::isfinite(b.h) && b.w >= 0 && b.h >= 0,
                     "a character box from gt.txt is finite and not inverted");
      } catch (const foveal::core::Error&) {
      }
    }
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
