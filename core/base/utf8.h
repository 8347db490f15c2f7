#pragma once
// Code points to UTF-8 (the inverse of model/charset.h's splitUtf8). Header-only, torch-free.
#include <string>

namespace foveal::core {

inline void appendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline std::string utf8Of(char32_t cp) {
  std::string s;
  appendUtf8(cp, s);
  return s;
}

inline std::string utf8Of(const std::u32string& text) {
  std::string s;
  for (char32_t cp : text) appendUtf8(cp, s);
  return s;
}

}  // namespace foveal::core
