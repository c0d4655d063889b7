// MAD's synthetic tasks (Poli et al., 2024, "Mechanistic Design and Scaling of Hybrid
// Architectures"; their generators in mad-lab's mad/data/instances.py), in the app's next-token
// format: one sequence of seq_len tokens per training row (not packed), after a `$`; the
// difficulty (min_len, max_len, eval_lengths) is seq_len.
//   mad_recall          key-value pairs, keys from the first half of the letters and values from
//                       the second, a key's value fixed within the sequence; every value whose key
//                       came before is an answer (MAD's multi-query default), and the last pair
//                       repeats an earlier key. MAD's defaults: 16 tokens, seq_len 128.
//   mad_noisy_recall    the same, each pair slot replaced with probability noise_fraction by two
//                       tokens of a separate noise vocabulary (noise_vocab of them, never scored).
//                       MAD's defaults: 16 + 16 noise tokens, seq_len 128, 20% noise.
//   mad_fuzzy_recall    keys and values are motifs of 1..motif distinct tokens (training); the
//                       evaluation asks with keys of `motif` tokens, as MAD's test set does.
//                       MAD's defaults: 16 tokens, motifs of up to 3, seq_len 128.
//   mad_selective_copy  copy_tokens letters scattered among blanks `_` (seq_len - 2 x copy_tokens - 1
//                       of them), then `|` and the letters in order. MAD feeds blanks after the copy
//                       token and asks for every letter at once; here each answer follows the last,
//                       as every copy task of the app does. MAD's defaults: 16 tokens, seq_len 256,
//                       16 to copy.
//   mad_memorization    seq_len / 2 keys, each followed by its value from one fixed key-to-value map
//                       (the same in every sequence and run): recall from the weights, not the
//                       context. MAD shows a key and an insert token and scores the value there; the
//                       app's format puts the value itself in the sequence, so a sequence never
//                       repeats a key (its value would be in context). MAD's defaults: 256 tokens,
//                       seq_len 32, 256 training sequences.
//   mad_compression     seq_len - 1 random letters, then `|`, MAD's compression token; each letter
//                       replaced with probability noise_fraction by a noise token (never scored).
//                       Not next-token prediction: the model's representation at `|` alone, with a
//                       sinusoidal embedding of position t, goes through MAD's MLP decoder and must
//                       give letter t (TaskInfo::readOut; rows are input = target, scored at the
//                       letters; SequenceModelImpl::addReadOut). MAD's defaults: 16 tokens, seq_len 32.
// The knobs MAD varies: vocab_size, the sequence length, train_examples (a
// fixed training set; 0 draws fresh sequences) and noise_fraction.
#pragma once

#include "base/tasks/tokentask.h"

#include <memory>

namespace parrot {

bool isMadTask(const QString& kind);
// Builds one of the tasks above (TokenTask::create calls it); throws parrot::Error naming the field.
std::unique_ptr<TokenTask> makeMadTask(const TaskConfig& config);

}  // namespace parrot
