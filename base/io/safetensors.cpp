#include "base/io/safetensors.h"

#include "base/error.h"
#include "base/io/textfile.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

namespace parrot {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

constexpr quint64 kMaxHeader = 100 * 1024 * 1024;  // the reference implementation's limit

}  // namespace

int64_t TensorRecord::elementCount() const
{
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

QString shapeText(const std::vector<int64_t>& shape)
{
    QStringList s;
    for (int64_t d : shape) s << QString::number(d);
    return "[" + s.join(", ") + "]";
}

int dtypeSize(const QString& dtype)
{
    static const QMap<QString, int> sizes = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
                                             {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
    return sizes.value(dtype, 0);
}

namespace {

// The header's JSON object, after the 8 bytes of its length; `dataStart` gets where the data begins.
QJsonObject readHeader(QFile& f, const QString& path, qint64 size, qint64& dataStart)
{
    quint64 headerLen = 0;
    const QByteArray lenBytes = f.read(8);
    for (int i = 7; i >= 0; --i) headerLen = (headerLen << 8) | quint8(lenBytes[i]);
    if (headerLen > kMaxHeader || headerLen > quint64(size - 8))
        throw Error(QString("%1: not a safetensors file (header length %2 exceeds the file size %3)")
                        .arg(path).arg(headerLen).arg(size));
    const QByteArray headerBytes = f.read(qint64(headerLen));
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(headerBytes, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        throw Error(QString("%1: safetensors header is not a JSON object (%2 at byte %3)")
                        .arg(path, err.errorString()).arg(err.offset));
    dataStart = 8 + qint64(headerLen);
    return doc.object();
}

void readMetadata(const QString& path, const QJsonValue& value, QMap<QString, QString>& metadata)
{
    if (!value.isObject()) throw Error(QString("%1: __metadata__ must be an object of strings").arg(path));
    const QJsonObject meta = value.toObject();
    for (auto m = meta.begin(); m != meta.end(); ++m) {
        if (!m.value().isString())
            throw Error(QString("%1: __metadata__.%2 must be a string").arg(path, m.key()));
        metadata.insert(m.key(), m.value().toString());
    }
}

// A tensor's header entry: its dtype and shape into `rec`, and its byte range in the data, checked
// against them and the data's `dataSize` bytes. `where` names it in messages.
std::pair<qint64, qint64> readTensorEntry(const QString& where, const QJsonValue& value, qint64 dataSize, TensorRecord& rec)
{
    if (!value.isObject()) throw Error(where + ": expected an object with dtype, shape and data_offsets");
    const QJsonObject t = value.toObject();
    rec.dtype = t.value("dtype").toString();
    const int esize = dtypeSize(rec.dtype);
    if (esize == 0) throw Error(where + QString(": unsupported dtype '%1'").arg(t.value("dtype").toVariant().toString()));
    if (!t.value("shape").isArray()) throw Error(where + ": shape must be an array of non-negative integers");
    for (const QJsonValue& d : t.value("shape").toArray()) {
        const double v = d.toDouble(-1);
        // the range first: converting a double past int64's range to an integer is undefined
        if (!d.isDouble() || !(v >= 0 && v <= 1e12) || v != std::floor(v))
            throw Error(where + ": shape must be an array of non-negative integers");
        rec.shape.push_back(int64_t(v));
    }
    const QJsonArray offs = t.value("data_offsets").toArray();
    if (offs.size() != 2 || !offs[0].isDouble() || !offs[1].isDouble())
        throw Error(where + ": data_offsets must be [begin, end]");
    const double b = offs[0].toDouble(), e = offs[1].toDouble();
    if (!(b >= 0 && e >= b && e <= double(dataSize)) || b != std::floor(b) || e != std::floor(e))
        throw Error(where + QString(": data_offsets [%1, %2] lie outside the %3 bytes of data")
                                .arg(qint64(b)).arg(qint64(e)).arg(dataSize));
    double expected = esize;
    for (int64_t d : rec.shape) expected *= double(d);
    if (expected != e - b)
        throw Error(where + QString(": shape and dtype need %1 bytes but data_offsets span %2")
                                .arg(qint64(expected)).arg(qint64(e - b)));
    return {qint64(b), qint64(e)};
}

}  // namespace

SafetensorsFile readSafetensors(const QString& path)
{
    auto file = std::make_shared<QFile>(path);
    QFile& f = *file;
    if (!QFileInfo(path).exists()) throw Error(QString("%1: no such file").arg(path));
    if (QFileInfo(path).isDir()) throw Error(QString("%1: is a folder, expected a .safetensors file").arg(path));
    if (!f.open(QIODevice::ReadOnly)) throw Error(QString("%1: cannot read (%2)").arg(path, f.errorString()));
    const qint64 size = f.size();
    if (size < 8) throw Error(QString("%1: not a safetensors file (only %2 bytes, the header length alone takes 8)").arg(path).arg(size));
    qint64 dataStart = 0;
    const QJsonObject header = readHeader(f, path, size, dataStart);
    const qint64 dataSize = size - dataStart;
    QByteArray data;  // only when the file cannot be mapped
    const char* bytes = dataSize > 0 ? reinterpret_cast<const char*>(f.map(dataStart, dataSize)) : nullptr;
    std::shared_ptr<const void> mapping;
    if (bytes) {
        mapping = file;  // QFile unmaps when destroyed: with the last record that shares it
    } else {
        data = f.readAll();
        if (data.size() != dataSize) throw Error(QString("%1: cannot read its %2 bytes of data (%3)").arg(path).arg(dataSize).arg(f.errorString()));
        bytes = data.constData();
    }

    SafetensorsFile out;
    std::vector<std::pair<qint64, qint64>> ranges;
    for (auto it = header.begin(); it != header.end(); ++it) {
        const QString name = it.key();
        if (name == "__metadata__") {
            readMetadata(path, it.value(), out.metadata);
            continue;
        }
        TensorRecord rec;
        const auto [b, e] = readTensorEntry(QString("%1: tensor '%2'").arg(path, name), it.value(), dataSize, rec);
        if (mapping) {
            rec.data = QByteArray::fromRawData(bytes + b, e - b);
            rec.mapping = mapping;
        } else {
            rec.data = data.mid(b, e - b);
        }
        ranges.emplace_back(b, e);
        out.tensors.insert(name, std::move(rec));
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first < ranges[i - 1].second)
            throw Error(QString("%1: two tensors' data_offsets overlap at byte %2").arg(path).arg(ranges[i].first));
    return out;
}

float halfToFloat(uint16_t h)
{
    const uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    uint32_t bits = 0;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;  // +-0
        } else {          // subnormal: shift the mantissa up until its leading 1 is the implicit bit
            int e = -1;
            uint32_t m = mantissa;
            do {
                ++e;
                m <<= 1;
            } while ((m & 0x400) == 0);
            bits = sign | uint32_t(127 - 15 - e) << 23 | (m & 0x3ff) << 13;
        }
    } else if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | mantissa << 13;  // inf, NaN
    } else {
        bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
    }
    return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

uint16_t floatToHalf(float f)
{
    const uint32_t x = std::bit_cast<uint32_t>(f), sign = (x >> 16) & 0x8000, a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return uint16_t(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));  // inf, NaN
    if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00);                                 // rounds past 65504
    if (a < 0x38800000u) {  // below 2^-14: a multiple of 2^-24 (0x400 is the smallest normal, as encoded)
        return uint16_t(sign | uint32_t(std::nearbyint(std::bit_cast<float>(a) * 0x1p24f)));
    }
    uint32_t h = ((a >> 23) - 127 + 15) << 10 | (a & 0x7fffff) >> 13;
    const uint32_t rest = a & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is still right
    return uint16_t(sign | h);
}

uint16_t floatToBfloat16(float f)
{
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // NaN stays NaN
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

namespace {

// Elements [first, first + count) of `data` as stored, ignoring rowOrder.
void convertStored(const TensorRecord& t, int64_t first, int64_t count, float* out, const QString& what)
{
    const char* p = t.data.constData();
    auto read = [&](auto zero, int64_t i) {
        decltype(zero) v;
        std::memcpy(&v, p + i * int64_t(sizeof(v)), sizeof(v));
        return v;
    };
    const int64_t end = first + count;
    if (t.dtype == "F32") {
        if (count > 0) std::memcpy(out, p + first * int64_t(sizeof(float)), size_t(count) * sizeof(float));
    } else if (t.dtype == "F16") {
        for (int64_t i = first; i < end; ++i) out[i - first] = halfToFloat(read(uint16_t(0), i));
    } else if (t.dtype == "BF16") {
        for (int64_t i = first; i < end; ++i) out[i - first] = bfloat16ToFloat(read(uint16_t(0), i));
    } else if (t.dtype == "F64") {
        for (int64_t i = first; i < end; ++i) out[i - first] = float(read(double(0), i));
    } else {
        throw Error(what + QString(": dtype %1 holds integers, expected floating point (F32, F16, BF16 or F64)").arg(t.dtype));
    }
}

}  // namespace

void convertToFloat32(const TensorRecord& t, int64_t first, int64_t count, float* out, const QString& what)
{
    const int64_t n = t.elementCount();
    if (t.data.size() != n * dtypeSize(t.dtype)) throw Error(what + ": its bytes do not match its dtype and shape");
    if (first < 0 || count < 0 || first + count > n) throw Error(what + ": element range outside the tensor");
    if (t.rowOrder.empty()) return convertStored(t, first, count, out, what);
    const int64_t rows = int64_t(t.rowOrder.size()), rowElems = rows > 0 ? n / rows : 0;
    for (int64_t i = first; i < first + count;) {
        const int64_t row = i / rowElems, col = i % rowElems, len = std::min(first + count - i, rowElems - col);
        convertStored(t, t.rowOrder[size_t(row)] * rowElems + col, len, out + (i - first), what);
        i += len;
    }
}

TensorRecord TensorRecord::inOrder() const
{
    if (rowOrder.empty()) return *this;
    TensorRecord out;
    out.dtype = dtype;
    out.shape = shape;
    const int64_t rows = int64_t(rowOrder.size()), rowBytes = rows > 0 ? data.size() / rows : 0;
    out.data = QByteArray(data.size(), Qt::Uninitialized);
    for (int64_t r = 0; r < rows; ++r)
        std::memcpy(out.data.data() + r * rowBytes, data.constData() + rowOrder[size_t(r)] * rowBytes, size_t(rowBytes));
    return out;
}

std::vector<float> toFloat32(const TensorRecord& t, const QString& what)
{
    const int64_t n = t.elementCount();
    std::vector<float> out(size_t(std::max<int64_t>(0, n)));
    convertToFloat32(t, 0, n, out.data(), what);
    return out;
}

void releaseMappedPages(const TensorRecord& t)
{
    if (!t.mapping || t.data.isEmpty()) return;
    // Only whole pages inside the record: its neighbours may still be wanted.
    const auto page = uintptr_t(sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(t.data.constData()), end = begin + uintptr_t(t.data.size());
    const uintptr_t from = (begin + page - 1) / page * page, to = end / page * page;
    if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

void writeSafetensors(const QString& path, const SafetensorsFile& file)
{
    QJsonObject header;
    if (!file.metadata.isEmpty()) {
        QJsonObject meta;
        for (auto it = file.metadata.begin(); it != file.metadata.end(); ++it) meta.insert(it.key(), it.value());
        header.insert("__metadata__", meta);
    }
    qint64 offset = 0;
    for (auto it = file.tensors.begin(); it != file.tensors.end(); ++it) {
        const TensorRecord& t = it.value();
        if (!t.rowOrder.empty()) throw Error(QString("%1: tensor '%2' is reordered; write its inOrder() copy").arg(path, it.key()));
        const int64_t bytes = t.elementCount() * dtypeSize(t.dtype);
        if (dtypeSize(t.dtype) == 0 || bytes != t.data.size())
            throw Error(QString("%1: tensor '%2' has %3 bytes, its dtype %4 and shape need %5")
                            .arg(path, it.key()).arg(t.data.size()).arg(t.dtype).arg(bytes));
        QJsonArray shape;
        for (int64_t d : t.shape) shape.append(qint64(d));
        header.insert(it.key(), QJsonObject{{"dtype", t.dtype}, {"shape", shape},
                                            {"data_offsets", QJsonArray{offset, offset + bytes}}});
        offset += bytes;
    }
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    while ((json.size() + 8) % 8 != 0) json.append(' ');  // align the data to 8 bytes, as the reference writer does
    QByteArray len(8, '\0');
    quint64 n = quint64(json.size());
    for (int i = 0; i < 8; ++i, n >>= 8) len[i] = char(n & 0xff);

    std::vector<QByteArrayView> chunks{len, json};
    for (const TensorRecord& t : file.tensors) chunks.emplace_back(t.data);
    bool opened = false;
    if (const QString why = writeChunksAtomically(path, chunks, &opened); !why.isEmpty()) {
        if (!opened) throw Error(QString("%1: cannot write (%2)").arg(path, why));
        throw Error(QString("%1: could not be written (%2); is the disk full? The file that was there is unchanged").arg(path, why));
    }
}

}  // namespace parrot
