#include "model/charset.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "base/error.h"

namespace foveal::core {

std::vector<std::string> splitUtf8(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = 1;
    if (c >= 0xF0)
      len = 4;
    else if (c >= 0xE0)
      len = 3;
    else if (c >= 0xC0)
      len = 2;
    if (i + len > text.size()) len = 1;
    out.push_back(text.substr(i, len));
    i += len;
  }
  return out;
}

size_t invalidUtf8Offset(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned c = s[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string::npos;
}

void checkCharsetUtf8(const std::string& characters, const std::string& what) {
  const size_t bad = invalidUtf8Offset(characters);
  if (bad == std::string::npos) return;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(characters[bad]));
  throw Error(what + " is not valid UTF-8 (byte " + std::to_string(bad + 1) + ", " + hex +
              "): a charset's characters are UTF-8 text");
}

static std::string lowerAscii(std::string s) {
  if (s.size() == 1) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

Charset::Charset(const std::string& characters, bool case_insensitive, ClassLayout layout,
                 bool repeats)
    : m_characters(characters),
      m_caseInsensitive(case_insensitive),
      m_repeats(repeats),
      m_layout(layout) {
  if (characters.empty()) throw Error("charset is empty");
  // Before the first token: invalid bytes reached the model file's JSON writer as an internal
  // error (issue 65).
  checkCharsetUtf8(characters, "charset");
  for (auto& cp : splitUtf8(characters)) {
    const std::string key = m_caseInsensitive ? lowerAscii(cp) : cp;
    if (!m_repeats && std::find(m_tokens.begin(), m_tokens.end(), key) != m_tokens.end())
      throw Error("charset has a duplicate character '" + cp + "'");
    m_tokens.push_back(key);
  }
}

int Charset::endIndex() const {
  switch (m_layout) {
    case ClassLayout::EndFirst:
      return 0;
    case ClassLayout::GoEnd:
    case ClassLayout::GoEndPad:
      return 1;
    case ClassLayout::BlankFirst:
      return -1;
  }
  return -1;
}

std::string Charset::token(int index) const {
  if (index == endIndex()) return kEndName;
  if (index == goIndex()) return kGoName;
  if (index == blankIndex()) return kBlankName;
  if (index == padIndex()) return kPadName;
  const int i = index - specials();
  if (i < 0 || i >= static_cast<int>(m_tokens.size())) return "?";
  return m_tokens[static_cast<size_t>(i)];
}

int Charset::indexOf(const std::string& cp) const {
  const std::string key = m_caseInsensitive ? lowerAscii(cp) : cp;
  // The last class of the character: the only one unless the charset has repeats.
  auto it = std::find(m_tokens.rbegin(), m_tokens.rend(), key);
  return it == m_tokens.rend() ? -1 : static_cast<int>(m_tokens.rend() - it) - 1 + specials();
}

std::vector<int> Charset::encode(const std::string& label) const {
  std::vector<int> out;
  for (auto& cp : splitUtf8(label)) {
    const int idx = indexOf(cp);
    if (idx < 0)
      throw Error("character '" + cp + "' of label \"" + label + "\" is not in the charset \"" +
                  m_characters + "\"");
    out.push_back(idx);
  }
  return out;
}

std::string Charset::decode(const std::vector<int>& indices) const {
  std::string out;
  const int end = endIndex();
  for (int i : indices) {
    if (i == end) break;
    if (i < specials()) continue;  // [GO], [P], blank
    out += token(i);
  }
  return out;
}

bool Charset::covers(const std::string& label) const {
  for (auto& cp : splitUtf8(label))
    if (indexOf(cp) < 0) return false;
  return true;
}

}  // namespace foveal::core
