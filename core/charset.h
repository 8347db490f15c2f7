#pragma once
// The vocabulary of a model: index 0 is the end-of-sequence token, 1..K-1 the characters.
// Torch-free so the GUI and the data layer can encode and decode labels.
#include <string>
#include <vector>

namespace foveal::core {

class Charset {
 public:
  static constexpr int kEnd = 0;
  static constexpr const char* kEndName = "<end>";

  Charset() = default;
  /// Characters in order; UTF-8, each code point one token. Throws Error on duplicates or empty.
  explicit Charset(const std::string& characters, bool case_insensitive = false);

  static Charset digits() { return Charset("0123456789"); }
  static Charset alphanumeric() { return Charset("0123456789abcdefghijklmnopqrstuvwxyz", true); }

  /// Number of classes including the end token.
  int size() const { return static_cast<int>(m_tokens.size()) + 1; }
  const std::string& characters() const { return m_characters; }
  bool caseInsensitive() const { return m_caseInsensitive; }

  /// Token name for a class index (kEndName for 0).
  std::string token(int index) const;
  /// Label -> class indices (without the end token). Throws Error naming the offending character.
  std::vector<int> encode(const std::string& label) const;
  /// Class indices -> text, stopping at the first end token.
  std::string decode(const std::vector<int>& indices) const;
  /// True when every character of `label` is in the charset.
  bool covers(const std::string& label) const;

 private:
  int indexOf(const std::string& codepoint) const;

  std::string m_characters;
  std::vector<std::string> m_tokens;
  bool m_caseInsensitive = false;
};

/// Splits UTF-8 text into code points (invalid bytes become single-byte tokens).
std::vector<std::string> splitUtf8(const std::string& text);

/// The byte offset of the first byte that is not valid UTF-8 (a stray continuation byte, a
/// truncated or overlong sequence, a surrogate, a code point beyond U+10FFFF); npos when the whole
/// text is valid.
size_t invalidUtf8Offset(const std::string& text);

}  // namespace foveal::core
