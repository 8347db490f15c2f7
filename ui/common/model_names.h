#pragma once
// The one rule for naming models in the window (issue 64): the file's stem ("best_accuracy"),
// unless another model in view shares it; then the file name ("model.pth", "model.ckpt"), and if
// that is shared too, the folders above it, as few as tell them apart ("exp1/best_accuracy",
// "exp2/best_accuracy"). Foveal's own "latest" and "best" always name their run folder. Engine
// specs (tesseract:eng,psm=7) are names already.
#include <QString>
#include <QStringList>

namespace foveal::ui {

/// The names of `paths`, in their order, each told apart from the others.
QStringList modelDisplayNames(const QStringList& paths);
/// The name of `path` among `all` (which may or may not hold it).
QString modelDisplayName(const QString& path, const QStringList& all);

}  // namespace foveal::ui
