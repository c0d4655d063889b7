// PyTorch's zip checkpoints (torch.save since PyTorch 1.6, HuggingFace's pytorch_model.bin), read
// without running anything in them. Torch-free.
//
// The archive is read by its central directory (zip64 sizes and offsets included); entries must be
// stored, not compressed, as torch.save writes them. Its `data.pkl` is interpreted by a restricted
// unpickler that knows only what a state dict is made of: dicts, tuples, lists, strings, numbers,
// and three callables (torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter,
// collections.OrderedDict), with storages named by persistent ids ('storage', torch.XStorage,
// key, location, numel) whose bytes are the entries `data/<key>`. Any other global (a pickled
// module, a class of the user's) is refused by name before anything is built; every size, offset
// and stride is checked against the storage before a byte is copied.
#pragma once

#include "base/io/safetensors.h"

namespace parrot {

// What a zip archive turned out to be, for the checkpoint inspector.
struct TorchZipKind {
    QString format = "pytorch zip";  // or "torchscript"
    QString recognised;              // "a PyTorch zip archive holding a plain dict of 22 tensors (torch.save)", …
};

// The tensors of a torch.save archive that holds a plain dict of tensors (the layout the app's
// importers then map), in their own dtypes (F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL),
// made contiguous. Throws parrot::Error naming the file and saying what to do for: a raw
// OrderedDict ("re-save as dict(state_dict) or as safetensors"), a whole pickled object, a
// TorchScript archive, a compressed or damaged archive, big-endian data, a dict entry that is
// not a tensor, and any out-of-range size, offset or stride. `kind`, when given, is filled in
// before anything is thrown.
SafetensorsFile readTorchZip(const QString& path, TorchZipKind* kind = nullptr);

// True when the file starts like a zip archive ("PK\3\4").
bool looksLikeZip(const QString& path);
// True for the legacy torch.save format (before PyTorch 1.6): a protocol-2 pickle that starts
// with torch's LONG1 magic number. Not read; `legacyTorchAdvice` says what to do.
bool looksLikeLegacyTorch(const QString& path);
QString legacyTorchAdvice();

}  // namespace parrot
