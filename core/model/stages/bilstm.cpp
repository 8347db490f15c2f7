#include "model/stages/bilstm.h"

#include "base/kernel_routes.h"

#include "model/stages/lstm_autograd.h"
#include "model/stages/lstm_inference.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace nn = torch::nn;

BiLstmImpl::BiLstmImpl(const BiLstmOptions& options_) : options(options_) { reset(); }

void BiLstmImpl::reset() {
  const int64_t h = options.hidden();
  m_rnns.clear();
  m_linears.clear();
  if (!options.projection()) {
    m_lstm = register_module("lstm", nn::LSTM(nn::LSTMOptions(options.input(), h)
                                                  .num_layers(2)
                                                  .bidirectional(true)
                                                  .batch_first(true)));
    return;
  }
  for (int layer = 0; layer < 2; ++layer) {
    const int64_t in = layer == 0 ? options.input() : h;
    const std::string prefix = "layer" + std::to_string(layer) + "_";
    m_rnns.push_back(register_module(
        prefix + "rnn", nn::LSTM(nn::LSTMOptions(in, h).bidirectional(true).batch_first(true))));
    m_linears.push_back(register_module(prefix + "linear", nn::Linear(2 * h, h)));
  }
}

torch::Tensor BiLstmImpl::encode(const torch::Tensor& columns) {
  auto run = [](nn::LSTM& lstm, const torch::Tensor& x) {
    auto note = [&](const char* route) {
      if (!routeRecording() || x.dim() != 3) return;
      const auto& o = lstm->options;
      noteRoute("LSTM " + std::to_string(o.input_size()) + "->" + std::to_string(o.hidden_size()) +
                    (o.bidirectional() ? " bidirectional" : "") + ", " + std::to_string(x.size(1)) +
                    " steps, batch " + std::to_string(x.size(0)) +
                    (torch::GradMode::is_enabled() ? ", with gradients" : ", inference"),
                route);
    };
    if (auto y = lstmInference(*lstm, x)) {  // batches up to four, no autograd
      note("Foveal's small-batch recurrence (no BLAS)");
      return *y;
    }
    if (auto y = lstmFused(*lstm, x)) {  // the rest, with gradients or without
      note("Foveal's fused LSTM (one autograd node a direction)");
      return *y;
    }
    note("LibTorch's LSTM");
    return std::get<0>(lstm->forward(x));
  };
  if (!options.projection()) return run(m_lstm, columns);
  auto x = columns;
  for (size_t i = 0; i < m_rnns.size(); ++i) x = m_linears[i](run(m_rnns[i], x));
  return x;
}

std::shared_ptr<torch::nn::Module> makeBiLstm(const StageContext& c) {
  return std::make_shared<BiLstmImpl>(BiLstmOptions(c.config.cnnChannels(), c.config.hidden())
                                          .projection(c.config.sequenceProjection));
}

}  // namespace foveal::core
