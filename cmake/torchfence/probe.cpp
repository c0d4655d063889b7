// Built only by the torch_fence test, which expects the fence to stop it. A header deep inside
// ATen, not torch/torch.h, so the test shows that any Torch header, not only the usual entry, is
// caught.
#include <ATen/core/Tensor.h>
