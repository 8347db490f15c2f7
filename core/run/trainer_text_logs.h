#pragma once
// The text logs other trainers write, each a RunLogFormat (run/trainer_logs.h) read as it grows:
//  - "dtrb": deep-text-recognition-benchmark's saved_models/<exp>/log_train.txt (train.py: a
//    "[N/M] Train loss: .., Valid loss: .., Elapsed_time: .." line, then "Current_accuracy :
//    .., Current_norm_ED : .." and "Best_accuracy : .., Best_norm_ED : .." at each validation);
//    the EasyOCR trainer (trainer/train.py) writes the same lines;
//  - "mmengine": MMEngine's (MMOCR's) <work_dir>/<timestamp>/vis_data/scalars.json, one JSON
//    object per line (LocalVisBackend.add_scalars), every timestamp folder of the work dir in
//    order (a resume starts a new one);
//  - "paddleocr": PaddleOCR's save_model_dir/train.log (tools/program.py through
//    ppocr/utils/logging.py: "[Y/m/d H:M:S] ppocr INFO: epoch: [E/N], global_step: S, k: v, ...",
//    "cur metric, ...", "best metric, ...", "save model in ...");
//  - "metrics-csv": metrics.csv of PyTorch Lightning's CSVLogger (a "step" column, "epoch",
//    empty cells for what a row does not log, rewritten with a new header when a key appears),
//    strhub's and PyLaia's (PyLaia's EpochCSVLogger: one row per epoch, no step column: the epoch
//    is the step).
// Each reader consumes complete lines only, names damage by file and byte offset, and never
// throws. Torch-free and Qt-free.
#include <string>

#include "run/trainer_logs.h"

namespace foveal::core {

const RunLogFormat& dtrbFormat();
const RunLogFormat& mmengineFormat();
const RunLogFormat& paddleocrFormat();
const RunLogFormat& metricsCsvFormat();

}  // namespace foveal::core
