// A JPEG's entropy-coded data read through libjpeg without decoding the pixels (no inverse DCT,
// no colour conversion): libjpeg's warnings say what OpenCV's decode passes over in silence, a
// scan cut short and closed by an end-of-image marker, a run of zeros inside the data (issue 65).
// A build without libjpeg's headers checks only that the file ends with its end marker
// (isTruncatedJpeg).
#include <string>
#include <vector>

#include "image/image_checks.h"

#ifdef FOVEAL_HAVE_LIBJPEG
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#endif

namespace foveal::core {

#ifdef FOVEAL_HAVE_LIBJPEG
namespace {

struct CheckingErrors {
  jpeg_error_mgr pub;
  std::jmp_buf fatal;
  std::string damage;  // the first warning that means lost data
};

std::string messageOf(j_common_ptr c) {
  char text[JMSG_LENGTH_MAX];
  c->err->format_message(c, text);
  return text;
}

// Warnings that mean the data was damaged (the decoder filled in what it lacked); the others
// (an unknown JFIF revision, an odd progression) read every pixel.
bool isDamage(int code) {
  return code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE ||
         code == JWRN_ARITH_BAD_CODE || code == JWRN_MUST_RESYNC || code == JWRN_EXTRANEOUS_DATA;
}

void onError(j_common_ptr c) {
  auto* e = reinterpret_cast<CheckingErrors*>(c->err);
  if (e->damage.empty()) e->damage = messageOf(c);
  std::longjmp(e->fatal, 1);
}

void onMessage(j_common_ptr c, int level) {
  auto* e = reinterpret_cast<CheckingErrors*>(c->err);
  if (level >= 0) return;  // trace messages
  ++c->err->num_warnings;
  if (e->damage.empty() && isDamage(c->err->msg_code)) e->damage = messageOf(c);
}

}  // namespace

std::string jpegDamage(const std::vector<uint8_t>& bytes) {
  if (bytes.size() < 3 || bytes[0] != 0xFF || bytes[1] != 0xD8) return {};
  jpeg_decompress_struct info{};
  CheckingErrors errors;
  info.err = jpeg_std_error(&errors.pub);
  errors.pub.error_exit = onError;
  errors.pub.emit_message = onMessage;
  // Only PODs and the error manager live across the jump; the struct is destroyed after it.
  if (setjmp(errors.fatal) == 0) {
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
    if (jpeg_read_header(&info, TRUE) == JPEG_HEADER_OK) {
      jpeg_read_coefficients(&info);  // every scan, entropy-decoded
      jpeg_finish_decompress(&info);
    }
  }
  jpeg_destroy_decompress(&info);
  return errors.damage;
}

bool jpegDamageChecked() { return true; }
#else
std::string jpegDamage(const std::vector<uint8_t>&) { return {}; }
bool jpegDamageChecked() { return false; }
#endif

}  // namespace foveal::core
