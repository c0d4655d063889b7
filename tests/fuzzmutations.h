// Mutations of a valid safetensors file for the loaders' fuzz tests (tst_fuzz, and fuzz_asan under
// AddressSanitizer): truncations, bit flips, huge or negative header lengths, numbers in the header
// replaced, dtypes replaced, data_offsets copied onto other tensors (overlaps), broken JSON, and
// random bytes, in turn by n % 8. `mutateBytes` does the same for any other file (a torch.save zip,
// a sharded index): truncations, bit flips, random bytes, 32-bit fields overwritten with extreme
// values and junk inserted, all within a chosen range of the file (its pickle, its central
// directory, or anywhere).
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <cctype>
#include <random>

namespace parrot::test {

inline QByteArray mutate(const QByteArray& good, int n, std::mt19937_64& rng, QString& what)
{
    const qint64 headerLen = qint64(quint8(good[0])) | qint64(quint8(good[1])) << 8 | qint64(quint8(good[2])) << 16;
    const QByteArray header = good.mid(8, headerLen);
    auto uniform = [&](qint64 lo, qint64 hi) { return std::uniform_int_distribution<qint64>(lo, hi)(rng); };
    static const QStringList dtypes{"F32", "F16", "BF16", "F64", "I64", "I8", "BOOL", "U8", "Q4", "", "f32"};
    static const QList<QByteArray> numbers{"0", "-1", "-9999999999", "1e300", "18446744073709551615", "4294967296", "1.5", "null", "\"7\"", "[]"};
    QByteArray f = good;
    switch (n % 8) {
    case 0: {  // truncation
        const qint64 at = uniform(0, f.size() - 1);
        f.truncate(at);
        what = QString("truncated at %1").arg(at);
        break;
    }
    case 1: {  // bit flips anywhere
        const int flips = int(uniform(1, 8));
        for (int k = 0; k < flips; ++k) f[uniform(0, f.size() - 1)] ^= char(1 << uniform(0, 7));
        what = QString("%1 bit flips").arg(flips);
        break;
    }
    case 2: {  // bit flips in the header only
        const int flips = int(uniform(1, 4));
        for (int k = 0; k < flips; ++k) f[8 + uniform(0, headerLen - 1)] ^= char(1 << uniform(0, 7));
        what = "header bit flips";
        break;
    }
    case 3: {  // huge, negative or small header lengths
        const quint64 lens[] = {~0ull, 1ull << 63, quint64(f.size()), quint64(f.size() - 7), 0, 1, quint64(headerLen + 1),
                                quint64(headerLen - 1), quint64(uniform(0, 1ll << 40))};
        quint64 len = lens[uniform(0, 8)];
        what = QString("header length %1").arg(len);
        for (int i = 0; i < 8; ++i, len >>= 8) f[i] = char(len & 0xff);
        break;
    }
    case 4: {  // a number in the header (shape, offset, length) replaced
        QByteArray h = header;
        QList<qint64> digits;
        for (qint64 i = 0; i < h.size(); ++i)
            if (std::isdigit(uchar(h[i])) && (i == 0 || !std::isdigit(uchar(h[i - 1])))) digits << i;
        const qint64 at = digits[uniform(0, digits.size() - 1)];
        qint64 end = at;
        while (end < h.size() && std::isdigit(uchar(h[end]))) ++end;
        const QByteArray by = numbers[uniform(0, numbers.size() - 1)];
        h.replace(at, end - at, by);
        f = good.left(8) + h + good.mid(8 + headerLen);
        what = "a header number -> " + QString::fromLatin1(by);
        break;
    }
    case 5: {  // a dtype replaced
        QByteArray h = header;
        const qint64 at = h.indexOf("\"dtype\":\"", uniform(0, h.size() / 2));
        if (at >= 0) {
            const qint64 b = at + 9, e = h.indexOf('"', b);
            h.replace(b, e - b, dtypes[uniform(0, dtypes.size() - 1)].toLatin1());
        }
        f = good.left(8) + h + good.mid(8 + headerLen);
        what = "a dtype replaced";
        break;
    }
    case 6: {  // overlapping or swapped data_offsets: copy one tensor's offsets onto another
        QByteArray h = header;
        QList<qint64> offs;
        for (qint64 i = h.indexOf("\"data_offsets\":["); i >= 0; i = h.indexOf("\"data_offsets\":[", i + 1)) offs << i;
        if (offs.size() >= 2) {
            const qint64 from = offs[uniform(0, offs.size() - 1)], to = offs[uniform(0, offs.size() - 1)];
            const QByteArray src = h.mid(from, h.indexOf(']', from) - from + 1);
            h.replace(to, h.indexOf(']', to) - to + 1, src);
        }
        f = good.left(8) + h + good.mid(8 + headerLen);
        what = "data_offsets copied";
        break;
    }
    default: {  // JSON structure broken, or random bytes
        if (uniform(0, 1)) {
            QByteArray h = header;
            const char* junk[] = {"{", "}", "\"", ",", ":", "[", "]", "\\u0000", "__metadata__"};
            h.insert(uniform(0, h.size() - 1), junk[uniform(0, 8)]);
            f = good.left(8) + h + good.mid(8 + headerLen);
            what = "JSON broken";
        } else {
            f.resize(uniform(0, 4096));
            for (char& c : f) c = char(uniform(0, 255));
            what = "random bytes";
        }
    }
    }
    return f;
}

// Byte-level mutations of any file, aimed at [lo, hi) (clamped to the file): by n % 6 a truncation
// inside the range, bit flips, bytes set to random values, a 32-bit little-endian field set to
// 0, 0xffffffff, 0x7fffffff or a random value (zip sizes, offsets and counts; pickle lengths),
// junk inserted, or a run of bytes deleted.
inline QByteArray mutateBytes(const QByteArray& good, int n, std::mt19937_64& rng, QString& what, qint64 lo = 0, qint64 hi = -1)
{
    QByteArray f = good;
    if (hi < 0 || hi > f.size()) hi = f.size();
    lo = std::clamp<qint64>(lo, 0, std::max<qint64>(0, hi - 1));
    auto uniform = [&](qint64 a, qint64 b) { return std::uniform_int_distribution<qint64>(a, std::max(a, b))(rng); };
    const qint64 at = uniform(lo, hi - 1);
    switch (n % 6) {
    case 0:
        f.truncate(at);
        what = QString("truncated at %1").arg(at);
        break;
    case 1: {
        const int flips = int(uniform(1, 6));
        for (int k = 0; k < flips; ++k) f[uniform(lo, hi - 1)] ^= char(1 << uniform(0, 7));
        what = QString("%1 bit flips in [%2, %3)").arg(flips).arg(lo).arg(hi);
        break;
    }
    case 2: {
        const int count = int(uniform(1, 4));
        for (int k = 0; k < count; ++k) f[uniform(lo, hi - 1)] = char(uniform(0, 255));
        what = QString("%1 random bytes in [%2, %3)").arg(count).arg(lo).arg(hi);
        break;
    }
    case 3: {
        const quint32 values[] = {0, 0xffffffffu, 0x7fffffffu, quint32(uniform(0, 0xffffffffLL)), quint32(good.size()), 1};
        const quint32 v = values[uniform(0, 5)];
        for (int i = 0; i < 4 && at + i < f.size(); ++i) f[at + i] = char((v >> (8 * i)) & 0xff);
        what = QString("32-bit field at %1 set to %2").arg(at).arg(v);
        break;
    }
    case 4: {
        static const QByteArray junk[] = {"\xff", "(", "t", "R", "}", "\x8a\x08", "X\xff\xff\xff\x7f", "q\x00", "h\x63", ".", "PK\x05\x06",
                                          "{", "\"", "]"};
        const QByteArray j = junk[uniform(0, 13)];
        f.insert(at, j);
        what = QString("junk inserted at %1").arg(at);
        break;
    }
    default: {
        const qint64 len = uniform(1, 16);
        f.remove(at, len);
        what = QString("%1 bytes deleted at %2").arg(len).arg(at);
    }
    }
    return f;
}

}  // namespace parrot::test
