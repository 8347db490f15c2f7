#pragma once
// The vocabulary of a model: special classes first, then the characters. The layout depends on the
// prediction stage: the paper's attention decoder has <end> at 0; DTRB's attention cell has [GO]
// at 0 and [s] (end) at 1; strhub's TRBA (imported) has those two and its pad class [P] at 2; CTC
// has the blank at 0. Torch-free so the GUI and the data layer can
// encode and decode labels.
#include <string>
#include <vector>

namespace foveal::core {

/// Where the special classes sit before the characters.
enum class ClassLayout {
  EndFirst,  ///< <end>, characters (the paper's decoder)
  GoEnd,     ///< [GO], [s] = end, characters (deep-text-recognition-benchmark's Attn)
  /// [GO], [s] = end, [P], characters: strhub's TRBA ([B], [E], [P] of its tokenizer; its
  /// head scores [P] too, so the class stays). Readings: the product up to and including [s].
  GoEndPad,
  BlankFirst,  ///< <blank>, characters (CTC)
};

class Charset {
 public:
  /// The end token of the default (EndFirst) layout; other layouts: endIndex().
  static constexpr int kEnd = 0;
  static constexpr const char* kEndName = "<end>";
  static constexpr const char* kGoName = "[GO]";
  static constexpr const char* kBlankName = "<blank>";
  static constexpr const char* kPadName = "[P]";

  Charset() = default;
  /// Characters in order; UTF-8, each code point one token. Throws Error on invalid UTF-8,
  /// duplicates or empty,
  /// unless `repeats`: then a character listed twice is two classes that both read as it (the
  /// character lists of EasyOCR's devanagari_g1 and arabic_g1 name one character twice), and a
  /// label encodes it as the later class (EasyOCR's dictionary keeps the last).
  explicit Charset(const std::string& characters, bool case_insensitive = false,
                   ClassLayout layout = ClassLayout::EndFirst, bool repeats = false);

  static Charset digits() { return Charset("0123456789"); }
  static Charset alphanumeric() { return Charset("0123456789abcdefghijklmnopqrstuvwxyz", true); }

  /// Number of classes including the special ones.
  int size() const { return static_cast<int>(m_tokens.size()) + specials(); }
  ClassLayout layout() const { return m_layout; }
  /// Number of special classes before the first character.
  int specials() const {
    return m_layout == ClassLayout::GoEndPad ? 3 : m_layout == ClassLayout::GoEnd ? 2 : 1;
  }
  /// Class of the end token, -1 when the layout has none (CTC).
  int endIndex() const;
  /// Class fed as y_0 ([GO]), -1 when the layout has none.
  int goIndex() const {
    return m_layout == ClassLayout::GoEnd || m_layout == ClassLayout::GoEndPad ? 0 : -1;
  }
  /// Class of strhub's pad token [P], -1 when the layout has none.
  int padIndex() const { return m_layout == ClassLayout::GoEndPad ? 2 : -1; }
  /// Class of the CTC blank, -1 when the layout has none.
  int blankIndex() const { return m_layout == ClassLayout::BlankFirst ? 0 : -1; }
  const std::string& characters() const { return m_characters; }
  bool caseInsensitive() const { return m_caseInsensitive; }
  /// True when a character may be listed more than once (see the constructor).
  bool repeats() const { return m_repeats; }

  /// Token name for a class index (kEndName, kGoName, kBlankName, kPadName for the special
  /// classes).
  std::string token(int index) const;
  /// Label -> class indices (without the end token). Throws Error naming the offending character.
  std::vector<int> encode(const std::string& label) const;
  /// Class indices -> text, stopping at the first end token; [GO], [P] and blanks are skipped.
  std::string decode(const std::vector<int>& indices) const;
  /// True when every character of `label` is in the charset.
  bool covers(const std::string& label) const;

 private:
  int indexOf(const std::string& codepoint) const;

  std::string m_characters;
  std::vector<std::string> m_tokens;
  bool m_caseInsensitive = false;
  bool m_repeats = false;
  ClassLayout m_layout = ClassLayout::EndFirst;
};

/// Splits UTF-8 text into code points (invalid bytes become single-byte tokens).
std::vector<std::string> splitUtf8(const std::string& text);

/// The byte offset of the first byte that is not valid UTF-8 (a stray continuation byte, a
/// truncated or overlong sequence, a surrogate, a code point beyond U+10FFFF); npos when the whole
/// text is valid.
size_t invalidUtf8Offset(const std::string& text);

/// Throws Error "WHAT is not valid UTF-8 (byte N, 0xXX)" when `characters` is not: a charset's
/// characters are UTF-8 text, and the model file's JSON holds them. `what` names where they came
/// from ("--charset", "m.pth: character_list of m.yaml"). The Charset constructor checks too.
void checkCharsetUtf8(const std::string& characters, const std::string& what);

}  // namespace foveal::core
