// Precompiled for every torch-using source of parrot_core (docs/CONTRIBUTING.md trap 5: ~30 s -> ~7 s a file).
// Torch comes before anything of Qt's: Qt's `slots` macro breaks ATen/core/ivalue_inl.h (trap 3).
#pragma once
#include <torch/torch.h>
