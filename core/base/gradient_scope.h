#pragma once
// Explanations (saliency, gradient x input, integrated gradients, the faithfulness evaluation)
// ask autograd for the gradient of the input image (and the token scales) alone, never for the
// parameters'. Autograd already skips a parameter's gradient in the backward pass when it is not
// asked for, but the layers decide at forward time what to save and which kernel to run, and they
// read that from the parameter's requires_grad: a convolution kept its input for a weight gradient
// nobody wanted, chose the route of a layer that trains, and measured its candidates (issue 68)
// with a weight gradient. Inside an InputGradientsOnly scope the layers treat their parameters as
// constants; outside it nothing changes. Per thread (each explanation worker has its own), so no
// module is mutated and a model shared between threads is never left frozen. Torch-free.

namespace foveal::core {

/// Whether the calling thread is inside an InputGradientsOnly scope.
bool inputGradientsOnly();

/// RAII: gradients on this thread are wanted for the inputs alone until the scope ends (scopes
/// nest).
class InputGradientsOnly {
 public:
  InputGradientsOnly();
  ~InputGradientsOnly();
  InputGradientsOnly(const InputGradientsOnly&) = delete;
  InputGradientsOnly& operator=(const InputGradientsOnly&) = delete;

 private:
  bool previous_;
};

}  // namespace foveal::core
