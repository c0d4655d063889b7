// One process-wide switch for the fused kernels that replace chains of torch ops on the hot
// path of training (the Transformer's attention, AdamW with gradient clipping). Each has an
// explicit twin made of plain torch ops, kept for the probes and compared in the tests; turning
// the switch off runs the twins everywhere, so a whole training run can be compared old against
// new (tests, benchmarks). Defaults to on unless PARROT_REFERENCE_PATHS=1 is set.
// Off, too, on a thread running under autocast (train.precision bf16): the fused kernels and
// their hand-written backwards are float32 code, and Torch's own ops are what autocast casts.
#pragma once

namespace parrot {

bool fastPaths();
void setFastPaths(bool on);

}  // namespace parrot
