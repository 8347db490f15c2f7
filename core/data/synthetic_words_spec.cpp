#include "data/synthetic_words.h"

namespace foveal::core::data {

std::string WordSpec::toString() const {
  std::string s = "words:seed=" + std::to_string(seed);
  if (stream)
    s += ",split=stream";
  else
    s += ",count=" + std::to_string(count);
  s += ",minlen=" + std::to_string(minLength) + ",maxlen=" + std::to_string(maxLength);
  if (wordList != "/usr/share/dict/words") s += ",wordlist=" + wordList;
  return s;
}

}  // namespace foveal::core::data
