// Compiled with -mavx2 -mfma -mf16c (see core/CMakeLists.txt); only called when the CPU has them.
#include "core/kernels/dense16kernel.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#include <bit>

namespace parrot::dense16 {

namespace {

// W: 0 half, 1 bfloat16, 2 float32
template <int W> inline __m256 load8(const void* q)
{
    if constexpr (W == 2) {
        return _mm256_loadu_ps(static_cast<const float*>(q));
    } else {
        const auto* p = static_cast<const uint16_t*>(q);
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        if constexpr (W == 1) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
        else return _mm256_cvtph_ps(h);
    }
}

template <int W> inline float widen1(const void* q, int64_t i)
{
    if constexpr (W == 2) return static_cast<const float*>(q)[i];
    else if constexpr (W == 1) return std::bit_cast<float>(uint32_t(static_cast<const uint16_t*>(q)[i]) << 16);
    else return _cvtsh_ss(static_cast<const uint16_t*>(q)[i]);
}

template <int W> inline const void* row(const Args& a, int64_t o)
{
    if constexpr (W == 2) return a.w32 + o * a.ldw;
    else return a.w + o * a.ldw;
}

template <int W> inline const void* at(const void* w, int64_t i)
{
    if constexpr (W == 2) return static_cast<const float*>(w) + i;
    else return static_cast<const uint16_t*>(w) + i;
}

inline float sum8(__m256 v)
{
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// R rows at once: each weight is read once for all of them.
template <int W, int R> void rowsAtOnce(const Args& a, int64_t r0, int64_t o0, int64_t o1)
{
    const int64_t in8 = a.in / 8 * 8;
    for (int64_t o = o0; o < o1; ++o) {
        const void* w = row<W>(a, o);
        __m256 acc[R][2];
        for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 16 <= in8; i += 16) {
            const __m256 w0 = load8<W>(at<W>(w, i)), w1 = load8<W>(at<W>(w, i + 8));
            for (int r = 0; r < R; ++r) {
                const float* x = a.x + (r0 + r) * a.ldx + i;
                acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(x), w0, acc[r][0]);
                acc[r][1] = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), w1, acc[r][1]);
            }
        }
        for (; i < in8; i += 8) {
            const __m256 w0 = load8<W>(at<W>(w, i));
            for (int r = 0; r < R; ++r) acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(a.x + (r0 + r) * a.ldx + i), w0, acc[r][0]);
        }
        for (int r = 0; r < R; ++r) {
            const float* x = a.x + (r0 + r) * a.ldx;
            float s = sum8(_mm256_add_ps(acc[r][0], acc[r][1]));
            for (int64_t j = in8; j < a.in; ++j) s += x[j] * widen1<W>(w, j);
            a.y[(r0 + r) * a.ldy + o] = s + (a.bias ? a.bias[o] : 0.0f);
        }
    }
}

template <int W> void gemv(const Args& a, int64_t o0, int64_t o1)
{
    int64_t r = 0;
    for (; r + 4 <= a.rows; r += 4) rowsAtOnce<W, 4>(a, r, o0, o1);
    for (; r + 2 <= a.rows; r += 2) rowsAtOnce<W, 2>(a, r, o0, o1);
    for (; r < a.rows; ++r) rowsAtOnce<W, 1>(a, r, o0, o1);
}

}  // namespace

void gemvAvx2(const Args& a, int64_t o0, int64_t o1)
{
    if (a.w32) gemv<2>(a, o0, o1);
    else if (a.bf16) gemv<1>(a, o0, o1);
    else gemv<0>(a, o0, o1);
}

void widenAvx2(const uint16_t* w, int64_t ldw, int64_t cols, bool bf16, float* dst, int64_t r0, int64_t r1)
{
    const int64_t cols8 = cols / 8 * 8;
    for (int64_t r = r0; r < r1; ++r) {
        const uint16_t* src = w + r * ldw;
        float* out = dst + r * cols;
        int64_t c = 0;
        if (bf16) {
            for (; c < cols8; c += 8) _mm256_storeu_ps(out + c, load8<1>(src + c));
            for (; c < cols; ++c) out[c] = widen1<1>(src, c);
        } else {
            for (; c < cols8; c += 8) _mm256_storeu_ps(out + c, load8<0>(src + c));
            for (; c < cols; ++c) out[c] = widen1<0>(src, c);
        }
    }
}

}  // namespace parrot::dense16

#else  // another processor: haveAvx2F16c() is false and this is never called

namespace parrot::dense16 {

void gemvAvx2(const Args& a, int64_t o0, int64_t o1) { gemvGeneric(a, o0, o1); }
void widenAvx2(const uint16_t* w, int64_t ldw, int64_t cols, bool bf16, float* dst, int64_t r0, int64_t r1)
{
    widenGeneric(w, ldw, cols, bf16, dst, r0, r1);
}

}  // namespace parrot::dense16

#endif
