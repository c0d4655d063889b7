// The safetensors format (github.com/huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON header, then the raw little-endian tensor bytes.
// The header maps tensor names to {dtype, shape, data_offsets} and may hold a
// `__metadata__` object of string values. Plain C++: no torch, no code execution on load.
#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

namespace parrot {

struct TensorRecord {
    QString dtype;               // "F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL"
    std::vector<int64_t> shape;
    QByteArray data;             // little-endian, row-major
    // What `data` points into when it was not copied: readSafetensors maps the file and each
    // record shares the mapping, which lasts while any record (or copy of one) does.
    std::shared_ptr<const void> mapping;
    // When not empty, the tensor's rows (along its first dimension) are `data`'s rows in this
    // order: row i of the values is row rowOrder[i] of `data`. An importer reorders rows this way
    // without copying a mapped file's bytes; toFloat32, convertToFloat32 and the writer follow it.
    std::vector<int64_t> rowOrder;
    int64_t elementCount() const;
    // A record whose `data` holds its values in order (a copy where rowOrder reorders them).
    TensorRecord inOrder() const;
};

struct SafetensorsFile {
    QMap<QString, QString> metadata;
    QMap<QString, TensorRecord> tensors;  // sorted by name, as written
};

// "[30, 128]": a shape for messages.
QString shapeText(const std::vector<int64_t>& shape);

// Bytes per element of a safetensors dtype; 0 for an unknown dtype.
int dtypeSize(const QString& dtype);

// Reads the header and checks the whole file; the tensors' bytes are memory-mapped, not read
// (a 3 GB checkpoint costs no memory until a tensor is converted), and read into memory only
// where the file cannot be mapped. Throws parrot::Error naming the file and what is wrong:
// too short, a header length past the end, invalid JSON, an unknown dtype, a shape that
// does not match the byte range, offsets outside the data or overlapping, metadata that is
// not a string map.
SafetensorsFile readSafetensors(const QString& path);

// The tensor's values as float32: F32 as is, F16, BF16 and F64 converted (F64 rounded).
// Throws parrot::Error naming `what` for integer and boolean dtypes.
std::vector<float> toFloat32(const TensorRecord& t, const QString& what);
// Elements [first, first + count) of the tensor as float32 into `out`, converted as toFloat32 does.
void convertToFloat32(const TensorRecord& t, int64_t first, int64_t count, float* out, const QString& what);
// Gives back the memory a mapped record's pages take once its values have been copied out (they
// stay in the page cache, not in this process); the record stays readable, from the file again.
void releaseMappedPages(const TensorRecord& t);
// IEEE half and bfloat16 bit patterns to float.
float halfToFloat(uint16_t h);
float bfloat16ToFloat(uint16_t b);
// float to IEEE half and bfloat16, rounded to nearest even (overflow to infinity, NaN kept).
uint16_t floatToHalf(float f);
uint16_t floatToBfloat16(float f);

// Writes atomically: a temporary file beside the target, renamed over it only when complete.
void writeSafetensors(const QString& path, const SafetensorsFile& file);

}  // namespace parrot
