#include "base/io/torchzip.h"

#include "base/error.h"

#include <QFile>
#include <QHash>

#include <cstring>
#include <map>
#include <memory>

namespace parrot {

namespace {

// ---- the zip archive ------------------------------------------------------------------------

struct ZipEntry {
    qint64 method = 0, size = 0, local = 0;
};

class ZipReader {
public:
    ZipReader(const uchar* data, qint64 size, const QString& path) : d(data), n(size), m_path(path) {}

    [[noreturn]] void fail(const QString& what) const { throw Error(QString("%1: not a readable zip archive: %2").arg(m_path, what)); }

    qint64 u(qint64 at, int bytes) const
    {
        if (at < 0 || at > n - bytes) fail(QString("a record at byte %1 runs past the end of the file").arg(at));
        quint64 v = 0;
        for (int i = bytes - 1; i >= 0; --i) v = v << 8 | d[at + i];
        if (v > quint64(std::numeric_limits<qint64>::max())) fail(QString("a size or offset at byte %1 is out of range").arg(at));
        return qint64(v);
    }

    std::map<QString, ZipEntry> entries() const
    {
        qint64 eocd = -1;
        for (qint64 i = n - 22; i >= 0 && i >= n - 65557; --i)
            if (std::memcmp(d + i, "PK\x05\x06", 4) == 0) {
                eocd = i;
                break;
            }
        if (eocd < 0) fail("no end-of-central-directory record");
        qint64 count = u(eocd + 10, 2), dirOffset = u(eocd + 16, 4);
        if (count == 0xffff || dirOffset == 0xffffffffLL) {  // zip64: its locator sits just before the record
            const qint64 locator = eocd - 20;
            if (locator < 0 || std::memcmp(d + locator, "PK\x06\x07", 4) != 0) fail("a zip64 archive without its locator");
            const qint64 eocd64 = u(locator + 8, 8);
            if (u(eocd64, 4) != 0x06064b50) fail("a damaged zip64 end-of-central-directory record");
            count = u(eocd64 + 32, 8);
            dirOffset = u(eocd64 + 48, 8);
        }
        if (count > n / 46) fail(QString("%1 entries cannot fit in %2 bytes").arg(count).arg(n));
        std::map<QString, ZipEntry> out;
        qint64 at = dirOffset;
        for (qint64 k = 0; k < count; ++k) {
            if (u(at, 4) != 0x02014b50) fail(QString("central directory entry %1 is damaged").arg(k));
            ZipEntry e;
            e.method = u(at + 10, 2);
            qint64 compressed = u(at + 20, 4);
            e.size = u(at + 24, 4);
            const qint64 nameLen = u(at + 28, 2), extraLen = u(at + 30, 2), commentLen = u(at + 32, 2);
            e.local = u(at + 42, 4);
            if (at + 46 + nameLen + extraLen > n) fail(QString("central directory entry %1 runs past the end").arg(k));
            const QString name = QString::fromUtf8(reinterpret_cast<const char*>(d + at + 46), int(nameLen));
            // zip64 extended information: the 8-byte values replace those stored as 0xffffffff, in order
            for (qint64 x = at + 46 + nameLen; x + 4 <= at + 46 + nameLen + extraLen;) {
                const qint64 id = u(x, 2), len = u(x + 2, 2);
                if (id == 1) {
                    qint64 p = x + 4;
                    if (e.size == 0xffffffffLL) e.size = u(p, 8), p += 8;
                    if (compressed == 0xffffffffLL) compressed = u(p, 8), p += 8;
                    if (e.local == 0xffffffffLL) e.local = u(p, 8);
                }
                x += 4 + len;
            }
            if (e.method == 0 && compressed != e.size) fail(QString("entry '%1' is stored with two different sizes").arg(name));
            out[name] = e;
            at += 46 + nameLen + extraLen + commentLen;
        }
        return out;
    }

    // The bytes of a stored entry, checked against the file.
    QByteArray bytes(const QString& name, const ZipEntry& e) const
    {
        if (e.method != 0)
            fail(QString("entry '%1' is compressed (method %2); torch.save stores its entries uncompressed").arg(name).arg(e.method));
        if (u(e.local, 4) != 0x04034b50) fail(QString("entry '%1' has no local header at byte %2").arg(name).arg(e.local));
        const qint64 start = e.local + 30 + u(e.local + 26, 2) + u(e.local + 28, 2);
        if (e.size < 0 || start > n || e.size > n - start)
            fail(QString("entry '%1' (%2 bytes at byte %3) runs past the end of the file").arg(name).arg(e.size).arg(start));
        return QByteArray::fromRawData(reinterpret_cast<const char*>(d + start), qsizetype(e.size));
    }

private:
    const uchar* d;
    qint64 n;
    QString m_path;
};

// ---- the restricted unpickler ---------------------------------------------------------------

// Every value lives in the unpickler's arena and refers to others by plain pointers: a
// million-deep nesting or a list that contains itself (through the memo) is freed flatly.
struct Obj;
using P = Obj*;

struct Obj {
    enum Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor, Mark } kind = None;
    int64_t i = 0;
    double f = 0;
    QString s;                          // Str; Global "module.name"; Storage key
    std::vector<P> items;               // Tuple, List
    std::vector<std::pair<P, P>> dict;  // Dict
    bool ordered = false;               // Dict made by collections.OrderedDict()
    // Storage: dtype from its class; Tensor: its storage and view
    QString dtype;
    int64_t numel = 0, offset = 0;
    P storage;
    std::vector<int64_t> size, stride;
};

const char* kindName(Obj::Kind k)
{
    static const char* names[] = {"None", "a boolean", "an integer", "a float", "a string", "a tuple",
                                  "a list", "a dict", "a global", "a storage", "a tensor", "a mark"};
    return names[k];
}

QString storageDtype(const QString& global)
{
    static const QHash<QString, QString> types = {
        {"torch.FloatStorage", "F32"}, {"torch.HalfStorage", "F16"}, {"torch.BFloat16Storage", "BF16"},
        {"torch.DoubleStorage", "F64"}, {"torch.LongStorage", "I64"}, {"torch.IntStorage", "I32"},
        {"torch.ShortStorage", "I16"}, {"torch.CharStorage", "I8"}, {"torch.ByteStorage", "U8"}, {"torch.BoolStorage", "BOOL"}};
    return types.value(global);
}

class Unpickler {
public:
    Unpickler(const QByteArray& data, const QString& path) : p(data), m_path(path) {}

    [[noreturn]] void fail(const QString& what) const { throw Error(QString("%1: data.pkl: %2").arg(m_path, what)); }

    // One opcode a case, the multi-step ones in methods of their name below.
    P run()
    {
        while (true) {
            if (pos >= p.size()) fail("ends without a STOP opcode");
            const qint64 at = pos;
            const uchar op = take(1)[0];
            switch (op) {
            case 0x80: take(1); break;                  // PROTO
            case 0x95: take(8); break;                  // FRAME
            case '}': push(make(Obj::Dict)); break;     // EMPTY_DICT
            case ']': push(make(Obj::List)); break;     // EMPTY_LIST
            case ')': push(make(Obj::Tuple)); break;    // EMPTY_TUPLE
            case '(': push(make(Obj::Mark)); break;     // MARK
            case 't': { auto t = make(Obj::Tuple); t->items = popToMark(); push(t); break; }  // TUPLE
            case 0x85: case 0x86: case 0x87: tupleOf(op - 0x84); break;                    // TUPLE1..3
            case 'X': pushString(QString::fromUtf8(take(le(4)))); break;                  // BINUNICODE
            case 0x8c: pushString(QString::fromUtf8(take(le(1)))); break;                 // SHORT_BINUNICODE
            case 0x8d: pushString(QString::fromUtf8(take(le(8)))); break;                 // BINUNICODE8
            case 'U': pushString(QString::fromLatin1(take(le(1)))); break;                // SHORT_BINSTRING
            case 'T': pushString(QString::fromLatin1(take(le(4)))); break;                // BINSTRING
            case 'q': memo(le(1)); break;                                                  // BINPUT
            case 'r': memo(le(4)); break;                                                  // LONG_BINPUT
            case 0x94: memo(int64_t(m_memo.size())); break;                                // MEMOIZE
            case 'h': push(recall(le(1))); break;                                          // BINGET
            case 'j': push(recall(le(4))); break;                                          // LONG_BINGET
            case 'K': pushInt(le(1)); break;                                               // BININT1
            case 'M': pushInt(le(2)); break;                                               // BININT2
            case 'J': pushInt(int32_t(uint32_t(le(4)))); break;                            // BININT
            case 0x8a: long1(at); break;                                                   // LONG1
            case 0x88: case 0x89: { auto b = make(Obj::Bool); b->i = op == 0x88; push(b); break; }  // NEWTRUE / NEWFALSE
            case 'N': push(make(Obj::None)); break;                                        // NONE
            case 'G': binFloat(); break;                                                   // BINFLOAT
            case 'c': { const QString module = line(), name = line(); pushGlobal(module + "." + name); break; }  // GLOBAL
            case 0x93: stackGlobal(at); break;                                             // STACK_GLOBAL
            case 'Q': push(persistent(pop())); break;                                      // BINPERSID
            case 'R': { const P args = pop(), fn = pop(); push(reduce(fn, args, at)); break; }  // REDUCE
            case 's': { const P v = pop(), k = pop(); dictOf(top(), at)->dict.emplace_back(k, v); break; }  // SETITEM
            case 'u': setItems(at); break;                                                 // SETITEMS
            case 'b': build(at); break;                                                    // BUILD
            case 'a': { const P v = pop(); listOf(top(), at)->items.push_back(v); break; }  // APPEND
            case 'e': appends(at); break;                                                  // APPENDS
            case '.': return pop();                                                        // STOP
            default:
                fail(QString("opcode 0x%1 at byte %2 is not one a state dict is made of").arg(uint(op), 2, 16, QChar(QLatin1Char('0'))).arg(at));
            }
        }
    }

private:
    void tupleOf(int count)
    {
        auto t = make(Obj::Tuple);
        t->items.resize(count);
        for (auto it = t->items.rbegin(); it != t->items.rend(); ++it) *it = pop();
        push(t);
    }
    void long1(qint64 at)  // a little-endian two's-complement integer of up to 8 bytes
    {
        const int64_t len = le(1);
        if (len > 8) fail(QString("an integer of %1 bytes at byte %2 is out of range").arg(len).arg(at));
        const QByteArray b = take(len);
        uint64_t v = 0;
        for (int k = int(len) - 1; k >= 0; --k) v = v << 8 | uchar(b[k]);
        if (len > 0 && len < 8 && (uchar(b.at(qsizetype(len - 1))) & 0x80)) v -= uint64_t(1) << (8 * len);  // two's complement
        pushInt(int64_t(v));
    }
    void binFloat()  // big-endian
    {
        const QByteArray b = take(8);
        uint64_t v = 0;
        for (int k = 0; k < 8; ++k) v = v << 8 | uchar(b[k]);
        auto o = make(Obj::Float);
        std::memcpy(&o->f, &v, 8);
        push(o);
    }
    void stackGlobal(qint64 at)
    {
        const P name = pop(), module = pop();
        if (name->kind != Obj::Str || module->kind != Obj::Str) fail(QString("STACK_GLOBAL at byte %1 without two strings").arg(at));
        pushGlobal(module->s + "." + name->s);
    }
    void setItems(qint64 at)
    {
        const std::vector<P> kv = popToMark();
        if (kv.size() % 2) fail(QString("SETITEMS at byte %1 with an odd number of items").arg(at));
        const P d = dictOf(top(), at);
        for (size_t k = 0; k < kv.size(); k += 2) d->dict.emplace_back(kv[k], kv[k + 1]);
    }
    void build(qint64 at)
    {
        // an OrderedDict's own attributes (state_dict()'s _metadata); on anything else it would
        // set an object's state, which a dict of tensors never needs
        pop();
        const P o = top();
        if (o->kind != Obj::Dict || !o->ordered) fail(QString("BUILD at byte %1 on %2: not a state dict").arg(at).arg(kindName(o->kind)));
    }
    void appends(qint64 at)
    {
        const std::vector<P> vs = popToMark();
        const P l = listOf(top(), at);
        l->items.insert(l->items.end(), vs.begin(), vs.end());
    }

    QByteArray take(int64_t len)
    {
        if (len < 0 || len > p.size() - pos) fail(QString("a value of %1 bytes at byte %2 runs past the end").arg(len).arg(pos));
        const QByteArray b = p.mid(pos, qsizetype(len));
        pos += len;
        return b;
    }
    int64_t le(int bytes)
    {
        const QByteArray b = take(bytes);
        uint64_t v = 0;
        for (int k = bytes - 1; k >= 0; --k) v = v << 8 | uchar(b[k]);
        if (v > uint64_t(std::numeric_limits<int64_t>::max())) fail(QString("a length at byte %1 is out of range").arg(pos - bytes));
        return int64_t(v);
    }
    QString line()
    {
        const qsizetype end = p.indexOf('\n', pos);
        if (end < 0 || end - pos > 256) fail(QString("a GLOBAL at byte %1 without a short name").arg(pos));
        const QString s = QString::fromLatin1(p.mid(pos, end - pos));
        pos = end + 1;
        return s;
    }
    // A state dict of 10,000 tensors makes about 200,000 values; a million is not a state dict, and
    // refusing it bounds the memory a hostile pickle can claim.
    static constexpr size_t kMaxValues = 1'000'000;
    P make(Obj::Kind k)
    {
        if (m_arena.size() >= kMaxValues) fail(QString("more than %1 values: not a state dict").arg(kMaxValues));
        m_arena.push_back(std::make_unique<Obj>());
        m_arena.back()->kind = k;
        return m_arena.back().get();
    }
    void push(P o)
    {
        if (m_stack.size() >= kMaxValues) fail(QString("more than %1 values on the stack: not a state dict").arg(kMaxValues));
        m_stack.push_back(std::move(o));
    }
    void pushString(const QString& s) { auto o = make(Obj::Str); o->s = s; push(o); }
    void pushInt(int64_t v) { auto o = make(Obj::Int); o->i = v; push(o); }
    void pushGlobal(const QString& name)
    {
        static const QStringList callables = {"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter", "collections.OrderedDict"};
        if (!callables.contains(name) && storageDtype(name).isEmpty()) {
            m_foreign = name;
            fail(QString("the file pickles %1, which loading would have to run: save its state dict instead, "
                         "torch.save(dict(model.state_dict()), path) or as safetensors").arg(name));
        }
        auto o = make(Obj::Global);
        o->s = name;
        push(o);
    }
    P pop()
    {
        if (m_stack.empty() || m_stack.back()->kind == Obj::Mark) fail(QString("an opcode before byte %1 pops an empty stack").arg(pos));
        P o = std::move(m_stack.back());
        m_stack.pop_back();
        return o;
    }
    P top()
    {
        if (m_stack.empty()) fail(QString("an opcode before byte %1 needs a value, the stack is empty").arg(pos));
        return m_stack.back();
    }
    std::vector<P> popToMark()
    {
        size_t k = m_stack.size();
        while (k > 0 && m_stack[k - 1]->kind != Obj::Mark) --k;
        if (k == 0) fail(QString("an opcode before byte %1 needs a MARK, there is none").arg(pos));
        std::vector<P> items(m_stack.begin() + qsizetype(k), m_stack.end());
        m_stack.resize(k - 1);
        return items;
    }
    void memo(int64_t key)
    {
        if (key < 0 || key > int64_t(kMaxValues)) fail(QString("memo key %1 is out of range").arg(key));
        m_memo[key] = top();
    }
    P recall(int64_t key)
    {
        const auto it = m_memo.find(key);
        if (it == m_memo.end()) fail(QString("memo key %1 is read before it is written").arg(key));
        return it->second;
    }
    P dictOf(const P& o, qint64 at)
    {
        if (o->kind != Obj::Dict) fail(QString("SETITEM(S) at byte %1 on %2, not a dict").arg(at).arg(kindName(o->kind)));
        return o;
    }
    P listOf(const P& o, qint64 at)
    {
        if (o->kind != Obj::List) fail(QString("APPEND(S) at byte %1 on %2, not a list").arg(at).arg(kindName(o->kind)));
        return o;
    }
    int64_t integer(const P& o, const char* what)
    {
        if (o->kind != Obj::Int && o->kind != Obj::Bool) fail(QString("%1 is %2, expected an integer").arg(what, kindName(o->kind)));
        return o->i;
    }
    std::vector<int64_t> integers(const P& o, const char* what)
    {
        if (o->kind != Obj::Tuple) fail(QString("%1 is %2, expected a tuple of integers").arg(what, kindName(o->kind)));
        std::vector<int64_t> v;
        for (const P& x : o->items) v.push_back(integer(x, what));
        return v;
    }
    // ('storage', torch.FloatStorage, key, location, numel)
    P persistent(const P& pid)
    {
        if (pid->kind != Obj::Tuple || pid->items.size() < 5 || pid->items[0]->kind != Obj::Str || pid->items[0]->s != "storage" ||
            pid->items[1]->kind != Obj::Global || pid->items[2]->kind != Obj::Str)
            fail("a persistent id that is not a tensor storage ('storage', torch.XStorage, key, location, numel)");
        auto s = make(Obj::Storage);
        s->dtype = storageDtype(pid->items[1]->s);
        if (s->dtype.isEmpty()) fail(QString("storage class %1 is not one the app reads").arg(pid->items[1]->s));
        s->s = pid->items[2]->s;
        s->numel = integer(pid->items[4], "a storage's element count");
        return s;
    }
    P reduce(const P& fn, const P& args, qint64 at)
    {
        if (fn->kind != Obj::Global || args->kind != Obj::Tuple)
            fail(QString("REDUCE at byte %1 calls %2 with %3").arg(at).arg(kindName(fn->kind), kindName(args->kind)));
        const std::vector<P>& a = args->items;
        if (fn->s == "collections.OrderedDict") {
            if (!a.empty()) fail(QString("collections.OrderedDict called with arguments at byte %1").arg(at));
            auto d = make(Obj::Dict);
            d->ordered = true;
            return d;
        }
        if (fn->s == "torch._utils._rebuild_parameter") {
            if (a.empty() || a[0]->kind != Obj::Tensor) fail(QString("_rebuild_parameter at byte %1 without a tensor").arg(at));
            return a[0];
        }
        if (fn->s == "torch._utils._rebuild_tensor_v2") {
            if (a.size() < 4 || a[0]->kind != Obj::Storage)
                fail(QString("_rebuild_tensor_v2 at byte %1 without (storage, offset, size, stride, …)").arg(at));
            auto t = make(Obj::Tensor);
            t->storage = a[0];
            t->offset = integer(a[1], "a tensor's storage offset");
            t->size = integers(a[2], "a tensor's size");
            t->stride = integers(a[3], "a tensor's stride");
            if (t->size.size() != t->stride.size()) fail(QString("a tensor at byte %1 has %2 sizes and %3 strides").arg(at).arg(t->size.size()).arg(t->stride.size()));
            return t;
        }
        fail(QString("REDUCE at byte %1 calls %2, which is not a tensor constructor").arg(at).arg(fn->s));
    }

    const QByteArray& p;
    QString m_path;
    qint64 pos = 0;
    std::vector<P> m_stack;
    std::map<int64_t, P> m_memo;
    std::vector<std::unique_ptr<Obj>> m_arena;  // owns every value made

public:
    QString m_foreign;  // the global that stopped it, when one did
};

// A tensor's elements gathered from its storage into contiguous bytes, every index checked.
// (The element count in the persistent id is not trusted: the entry's own size is.)
TensorRecord gather(const Obj& t, const QByteArray& storage, const QString& where)
{
    TensorRecord rec;
    rec.dtype = t.storage->dtype;
    rec.shape = t.size;
    const int64_t elem = dtypeSize(rec.dtype);
    const int64_t available = storage.size() / elem;
    if (t.offset < 0) throw Error(QString("%1: negative storage offset %2").arg(where).arg(t.offset));
    int64_t count = 1, last = t.offset;  // elements, and the largest storage index the view touches
    for (size_t k = 0; k < t.size.size(); ++k) {
        const int64_t size = t.size[k], stride = t.stride[k];
        if (size < 0 || stride < 0)
            throw Error(QString("%1: size %2 and stride %3 in dimension %4 must not be negative").arg(where).arg(size).arg(stride).arg(k));
        if (size == 0) {
            count = 0;
            continue;
        }
        if (count > available / size)
            throw Error(QString("%1: shape %2 has more elements than its storage holds (%3)").arg(where, shapeText(t.size)).arg(available));
        count *= size;
        if (stride > 0 && size - 1 > (available - last) / stride)
            throw Error(QString("%1: shape %2 with strides %3 from offset %4 reaches past its storage of %5 elements")
                            .arg(where, shapeText(t.size), shapeText(t.stride)).arg(t.offset).arg(available));
        last += (size - 1) * stride;
    }
    if (count > 0 && last >= available)
        throw Error(QString("%1: element %2 is past its storage of %3 elements").arg(where).arg(last).arg(available));
    rec.data.resize(qsizetype(count * elem));
    if (count == 0) return rec;
    std::vector<int64_t> index(t.size.size(), 0);
    const char* src = storage.constData();
    char* dst = rec.data.data();
    for (int64_t e = 0; e < count; ++e) {
        int64_t at = t.offset;
        for (size_t k = 0; k < index.size(); ++k) at += index[k] * t.stride[k];
        std::memcpy(dst + e * elem, src + at * elem, size_t(elem));
        for (int k = int(index.size()) - 1; k >= 0; --k) {
            if (++index[k] < t.size[k]) break;
            index[k] = 0;
        }
    }
    return rec;
}

}  // namespace

bool looksLikeZip(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) && f.read(4) == QByteArray("PK\x03\x04", 4);
}

bool looksLikeLegacyTorch(const QString& path)
{
    QFile f(path);
    const QByteArray start = f.open(QIODevice::ReadOnly) ? f.read(3) : QByteArray();
    return start.size() == 3 && uchar(start[0]) == 0x80 && uchar(start[1]) == 0x02 && uchar(start[2]) == 0x8a;
}

QString legacyTorchAdvice()
{
    return "the legacy (before PyTorch 1.6) torch.save format is not read: re-save it with a current PyTorch, "
           "torch.save(dict(state_dict), path), or as safetensors (safetensors.torch.save_file(state_dict, \"model.safetensors\"))";
}

SafetensorsFile readTorchZip(const QString& path, TorchZipKind* kind)
{
    TorchZipKind scratch;
    TorchZipKind& k = kind ? *kind : scratch;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) throw Error(QString("%1: cannot read (%2)").arg(path, f.errorString()));
    const qint64 n = f.size();
    if (n < 22) throw Error(QString("%1: %2 bytes, too short for a zip archive").arg(path).arg(n));
    const uchar* map = f.map(0, n);
    if (!map) throw Error(QString("%1: cannot map the file (%2)").arg(path, f.errorString()));
    const ZipReader zip(map, n, path);
    const std::map<QString, ZipEntry> entries = zip.entries();
    QString prefix;  // torch.save writes every entry under one folder named after the file
    bool found = false;
    for (const auto& [name, entry] : entries) {
        if (name.endsWith("constants.pkl") || name.contains("/code/")) {
            k.format = "torchscript";
            k.recognised = "a TorchScript archive (torch.jit.save)";
            throw Error(QString("%1: a TorchScript archive holds code, which the app never runs: save the model's state dict instead, "
                                "e.g. safetensors.torch.save_file(model.state_dict(), \"model.safetensors\")").arg(path));
        }
        if (name.endsWith("data.pkl") && (name == "data.pkl" || name.endsWith("/data.pkl"))) {
            prefix = name.left(name.size() - 8);
            found = true;
        }
    }
    if (!found) {
        k.recognised = "a zip archive without a data.pkl";
        throw Error(QString("%1: not a torch.save archive (no data.pkl among its %2 entries)").arg(path).arg(entries.size()));
    }
    if (entries.count(prefix + "byteorder") && zip.bytes("byteorder", entries.at(prefix + "byteorder")).trimmed() != "little")
        throw Error(QString("%1: the tensors are stored big-endian; re-save it on a little-endian machine").arg(path));
    const QByteArray pickle = zip.bytes(prefix + "data.pkl", entries.at(prefix + "data.pkl"));
    Unpickler unpickler(pickle, path);
    P top = nullptr;
    try {
        top = unpickler.run();
    } catch (const Error&) {
        if (!unpickler.m_foreign.isEmpty()) k.recognised = QString("a whole pickled object (%1)").arg(unpickler.m_foreign);
        else k.recognised = "a PyTorch zip archive with a damaged or unusual pickle";
        throw;
    }
    if (top->kind != Obj::Dict) {
        k.recognised = QString("a PyTorch zip archive holding %1").arg(kindName(top->kind));
        throw Error(QString("%1: the archive holds %2, not a dict of tensors: save the state dict, "
                            "torch.save(dict(model.state_dict()), path)").arg(path, kindName(top->kind)));
    }
    if (top->ordered) {
        k.recognised = "a raw OrderedDict pickle (torch.save(model.state_dict()))";
        throw Error(QString("%1: a raw OrderedDict (torch.save(model.state_dict())): re-save it as dict(state_dict), "
                            "torch.save(dict(model.state_dict()), path), or as safetensors").arg(path));
    }
    k.recognised = QString("a PyTorch zip archive holding a plain dict of %1 entries (torch.save)").arg(top->dict.size());
    SafetensorsFile out;
    for (const auto& [key, value] : top->dict) {
        if (key->kind != Obj::Str) throw Error(QString("%1: a dict key is %2, expected a tensor name").arg(path, kindName(key->kind)));
        if (value->kind != Obj::Tensor)
            throw Error(QString("%1: entry '%2' is %3, not a tensor: save the state dict alone").arg(path, key->s, kindName(value->kind)));
        const QString storage = prefix + "data/" + value->storage->s;
        const auto it = entries.find(storage);
        if (it == entries.end()) throw Error(QString("%1: tensor '%2' names storage %3, which the archive lacks").arg(path, key->s, storage));
        out.tensors.insert(key->s, gather(*value, zip.bytes(storage, it->second), QString("%1: tensor '%2'").arg(path, key->s)));
    }
    return out;
}

}  // namespace parrot
