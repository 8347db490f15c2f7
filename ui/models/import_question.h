#pragma once
// What the window asks about a model file before importing it, for every format of the registry
// (core/formats/model_format.h): which format its content was recognised as and why, the options
// the import was given, and the import's message when it needs an answer (a DTRB or EasyOCR file
// whose characters nothing names) or refused one (naming the option). The answers are remembered
// per file. The ImportOptionsDialog shows it; nothing here is a widget.
#include <QString>
#include <optional>

#include "formats/model_format.h"

namespace foveal::ui {

struct ImportQuestion {
  QString path;
  QString format;       ///< the registry name the content was recognised as; empty: none claims it
  QString why;          ///< the sniffer's words, or why no format claims the file
  QString description;  ///< what the file holds (a DTRB file's architecture), when known
  QString message;      ///< the import's error that made the window ask; empty: the user asked
  core::ImportOptions options;  ///< the options the import was given ("format": one forced)
};

/// The question about `path` read with `options`: what the file's content is recognised as,
/// whatever format `options` forces. Reads the file (a torch.save file whole): a worker's job.
/// Never throws: a file no format claims (or that cannot be read) gives an empty format and the
/// reason in `why`.
ImportQuestion recogniseImportFile(const QString& path, const core::ImportOptions& options);

/// The first option of `format` that `message` names as --KEY ("--character has 10 characters"),
/// or an empty string.
QString optionNamedIn(const QString& message, const core::ModelFormat& format);
/// The same for the format named `format`; empty for a name not in the registry.
QString optionNamedIn(const QString& message, const QString& format);

/// The answers remembered for `path` (any spelling of it), if any. Answers remembered by the
/// DTRB-only dialog of earlier versions are read too.
std::optional<core::ImportOptions> rememberedImportOptions(const QString& path);
/// Remembers `options` for `path`; empty options forget.
void rememberImportOptions(const QString& path, const core::ImportOptions& options);
void forgetImportOptions(const QString& path);

}  // namespace foveal::ui
