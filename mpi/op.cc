// SPDX-License-Identifier: BSD-3-Clause
// The predefined reduction operations on every basic type they are defined
// for (MPI-3 §5.9.2): arithmetic on integers, floating point and complex;
// logical and bitwise on integers (and bool); MINLOC/MAXLOC on the pairs.
#include <complex>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

enum Family { Integer, Floating, Complex, Logical, ByteF, PairF, None };

Family family(Basic b)
{
    switch (b) {
    case Basic::Char: case Basic::SChar: case Basic::UChar: case Basic::WChar: case Basic::Short:
    case Basic::UShort: case Basic::Int: case Basic::UInt: case Basic::Long: case Basic::ULong:
    case Basic::LongLong: case Basic::ULongLong: case Basic::Int8: case Basic::Int16: case Basic::Int32:
    case Basic::Int64: case Basic::UInt8: case Basic::UInt16: case Basic::UInt32: case Basic::UInt64:
    case Basic::Aint: case Basic::Offset: case Basic::Count:
        return Integer;
    case Basic::Float: case Basic::Double: case Basic::LongDouble: return Floating;
    case Basic::FloatComplex: case Basic::DoubleComplex: case Basic::LongDoubleComplex: return Complex;
    case Basic::Bool: return Logical;
    case Basic::Byte: return ByteF;
    case Basic::FloatInt: case Basic::DoubleInt: case Basic::LongInt: case Basic::TwoInt: case Basic::ShortInt:
    case Basic::LongDoubleInt:
        return PairF;
    default: return None;
    }
}

// The element loops are compiled three times on x86-64 (AVX-512, AVX2 and
// the baseline SSE2) and the loader picks the widest the CPU runs (GCC's
// target_clones, an ifunc per loop): a reduction of a vector that sits in
// L1 is bound by the vector width. On a 2-vCPU Xeon VM (AVX-512), an
// MPI_CHAR sum of 4-16 KiB took 2.2-3.2x Open MPI's (whose op/avx
// component picks AVX-512 the same way); past L1 both are bound by L2.
// Not under ThreadSanitizer: the resolvers run at relocation, before its
// runtime, and their instrumented code crashes there.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__) && \
    !defined(__SANITIZE_THREAD__)
#define WEFT_OP_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define WEFT_OP_CLONES
#endif

// io[i] = f(io[i], in[i]) for every element, in blocks of a fixed count:
// GCC's cost model at -O2 vectorizes a loop only when it needs neither a
// run-time alias check (hence restrict) nor a scalar remainder (hence the
// blocks). osu_allreduce's MPI_CHAR sum of 1 MiB took about 1 ms one byte
// at a time. Callers with overlapping arrays copy `in` first (detached()).
template <class T, class F>
WEFT_OP_CLONES void each(const T *__restrict in, T *__restrict io, size_t n, F f)
{
    constexpr size_t kBlock = sizeof(T) >= 64 ? 1 : 64 / sizeof(T);
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
        for (size_t j = 0; j < kBlock; ++j)
            io[i + j] = f(io[i + j], in[i + j]);
    for (; i < n; ++i)
        io[i] = f(io[i], in[i]);
}

// out[i] = f(a[i], b[i]): the three-array form, so a collective combines
// its own data with a peer's straight into the result instead of copying
// its data there first (a reduce's root used to copy its whole send
// buffer into the receive buffer before the first combine). The arrays
// do not overlap (reduce_apply3 sends the aliased cases to each()).
template <class T, class F>
WEFT_OP_CLONES void each3(const T *__restrict a, const T *__restrict b, T *__restrict out, size_t n, F f)
{
    constexpr size_t kBlock = sizeof(T) >= 64 ? 1 : 64 / sizeof(T);
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
        for (size_t j = 0; j < kBlock; ++j)
            out[i + j] = f(a[i + j], b[i + j]);
    for (; i < n; ++i)
        out[i] = f(a[i], b[i]);
}

// The element function of op on T, handed to apply (which runs each() or
// each3() with it): one switch for both forms.
template <class T, class Apply>
void arith(MPI_Op op, Apply apply)
{
    switch (op) {
    case MPI_SUM: apply([](T a, T b) { return static_cast<T>(a + b); }); break;
    case MPI_PROD: apply([](T a, T b) { return static_cast<T>(a * b); }); break;
    case MPI_MAX: apply([](T a, T b) { return b > a ? b : a; }); break;
    case MPI_MIN: apply([](T a, T b) { return b < a ? b : a; }); break;
    case MPI_LAND: apply([](T a, T b) { return static_cast<T>(a && b); }); break;
    case MPI_LOR: apply([](T a, T b) { return static_cast<T>(a || b); }); break;
    case MPI_LXOR: apply([](T a, T b) { return static_cast<T>(!a != !b); }); break;
    default: break;
    }
}

template <class T, class Apply>
void bits(MPI_Op op, Apply apply)
{
    switch (op) {
    case MPI_BAND: apply([](T a, T b) { return static_cast<T>(a & b); }); break;
    case MPI_BOR: apply([](T a, T b) { return static_cast<T>(a | b); }); break;
    case MPI_BXOR: apply([](T a, T b) { return static_cast<T>(a ^ b); }); break;
    default: arith<T>(op, apply);
    }
}

template <class T, class Apply>
void cplx(MPI_Op op, Apply apply)
{
    if (op == MPI_SUM)
        apply([](T a, T b) { return a + b; });
    else if (op == MPI_PROD)
        apply([](T a, T b) { return a * b; });
}

// in itself, or (when its n elements overlap io's) a copy of it in *copy.
template <class T>
const T *detached(const void *in, const void *io, size_t n, std::unique_ptr<T[]> *copy)
{
    const auto *a = static_cast<const std::byte *>(in);
    const auto *b = static_cast<const std::byte *>(io);
    const size_t bytes = n * sizeof(T);
    if (a + bytes <= b || b + bytes <= a)
        return static_cast<const T *>(in);
    *copy = std::make_unique_for_overwrite<T[]>(n);
    std::memcpy(copy->get(), in, bytes);
    return copy->get();
}

template <class V>
struct LocPair {
    V v;
    int i;
};

// MINLOC/MAXLOC: out = the extreme of a and b, and on a tie the smaller
// index (out may be a or b: each pair is read before it is written).
template <class V>
void loc(MPI_Op op, const void *a_, const void *b_, void *out_, size_t n)
{
    const auto *a = static_cast<const LocPair<V> *>(a_);
    const auto *b = static_cast<const LocPair<V> *>(b_);
    auto *out = static_cast<LocPair<V> *>(out_);
    for (size_t k = 0; k < n; ++k) {
        const bool better = op == MPI_MAXLOC ? b[k].v > a[k].v : b[k].v < a[k].v;
        out[k] = better || (b[k].v == a[k].v && b[k].i < a[k].i) ? b[k] : a[k];
    }
}

template <class T>
struct IsComplex : std::false_type {};
template <class T>
struct IsComplex<std::complex<T>> : std::true_type {};

// op's element function for T into apply: integers get the bitwise
// operations too, complex numbers only sum and product.
template <class T, class Apply>
void dispatch(MPI_Op op, Apply apply)
{
    if constexpr (IsComplex<T>::value)
        cplx<T>(op, apply);
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        bits<T>(op, apply);
    else
        arith<T>(op, apply);
}

// The basic type's kernel: Kernel<T>::run(op, args...) for each T.
template <template <class> class Kernel, class... Args>
void by_basic(Basic b, MPI_Op op, Args... args)
{
    switch (b) {
    case Basic::Char: Kernel<char>::run(op, args...); break;
    case Basic::SChar: case Basic::Int8: Kernel<int8_t>::run(op, args...); break;
    case Basic::UChar: case Basic::UInt8: case Basic::Byte: Kernel<uint8_t>::run(op, args...); break;
    case Basic::WChar: Kernel<wchar_t>::run(op, args...); break;
    case Basic::Short: case Basic::Int16: Kernel<int16_t>::run(op, args...); break;
    case Basic::UShort: case Basic::UInt16: Kernel<uint16_t>::run(op, args...); break;
    case Basic::Int: case Basic::Int32: Kernel<int32_t>::run(op, args...); break;
    case Basic::UInt: case Basic::UInt32: Kernel<uint32_t>::run(op, args...); break;
    case Basic::Long: Kernel<long>::run(op, args...); break;
    case Basic::ULong: Kernel<unsigned long>::run(op, args...); break;
    case Basic::LongLong: case Basic::Int64: case Basic::Offset: case Basic::Count:
        Kernel<int64_t>::run(op, args...);
        break;
    case Basic::ULongLong: case Basic::UInt64: Kernel<uint64_t>::run(op, args...); break;
    case Basic::Aint: Kernel<MPI_Aint>::run(op, args...); break;
    case Basic::Bool: Kernel<bool>::run(op, args...); break;
    case Basic::Float: Kernel<float>::run(op, args...); break;
    case Basic::Double: Kernel<double>::run(op, args...); break;
    case Basic::LongDouble: Kernel<long double>::run(op, args...); break;
    case Basic::FloatComplex: Kernel<std::complex<float>>::run(op, args...); break;
    case Basic::DoubleComplex: Kernel<std::complex<double>>::run(op, args...); break;
    case Basic::LongDoubleComplex: Kernel<std::complex<long double>>::run(op, args...); break;
    case Basic::FloatInt: Kernel<LocPair<float>>::run(op, args...); break;
    case Basic::DoubleInt: Kernel<LocPair<double>>::run(op, args...); break;
    case Basic::LongInt: Kernel<LocPair<long>>::run(op, args...); break;
    case Basic::TwoInt: Kernel<LocPair<int>>::run(op, args...); break;
    case Basic::ShortInt: Kernel<LocPair<short>>::run(op, args...); break;
    case Basic::LongDoubleInt: Kernel<LocPair<long double>>::run(op, args...); break;
    default: break;
    }
}

template <class T>
struct IsLoc : std::false_type {};
template <class V>
struct IsLoc<LocPair<V>> : std::true_type {};
template <class T>
struct LocValue {};
template <class V>
struct LocValue<LocPair<V>> {
    using type = V;
};

// io = io op in. Callers pass aligned arrays of T (the collectives' own
// copies).
template <class T>
struct TwoArrays {
    static void run(MPI_Op op, const void *in_, void *io_, size_t n)
    {
        if constexpr (IsLoc<T>::value) {
            loc<typename LocValue<T>::type>(op, io_, in_, io_, n);
        } else {
            std::unique_ptr<T[]> copy;
            const T *in = detached<T>(in_, io_, n, &copy);
            T *io = static_cast<T *>(io_);
            dispatch<T>(op, [&](auto f) { each(in, io, n, f); });
        }
    }
};

// out = a op b.
template <class T>
struct ThreeArrays {
    static void run(MPI_Op op, const void *a, const void *b, void *out, size_t n)
    {
        if constexpr (IsLoc<T>::value) {
            loc<typename LocValue<T>::type>(op, a, b, out, n);
        } else {
            const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
            T *o = static_cast<T *>(out);
            dispatch<T>(op, [&](auto f) { each3(x, y, o, n, f); });
        }
    }
};

} // namespace

const char *op_name(MPI_Op op)
{
    static const char *names[] = {"MPI_OP_NULL", "MPI_MAX",  "MPI_MIN",  "MPI_SUM",    "MPI_PROD",
                                  "MPI_LAND",    "MPI_BAND", "MPI_LOR",  "MPI_BOR",    "MPI_LXOR",
                                  "MPI_BXOR",    "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};
    return op >= 0 && op <= MPI_NO_OP ? names[op] : "an unknown operation";
}

bool op_valid_for(MPI_Op op, Basic b)
{
    const Family f = family(b);
    switch (op) {
    case MPI_REPLACE:
    case MPI_NO_OP: return f != None;
    case MPI_MAX:
    case MPI_MIN: return f == Integer || f == Floating;
    case MPI_SUM:
    case MPI_PROD: return f == Integer || f == Floating || f == Complex;
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR: return f == Integer || f == Logical;
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR: return f == Integer || f == ByteF;
    case MPI_MINLOC:
    case MPI_MAXLOC: return f == PairF;
    default: return false;
    }
}

void reduce_apply(MPI_Op op, Basic b, const void *in, void *io, size_t n)
{
    by_basic<TwoArrays>(b, op, in, io, n);
}

void reduce_apply3(MPI_Op op, Basic b, const void *a, const void *in, void *out, size_t n)
{
    // The predefined operations commute element by element (IEEE sums and
    // products included; MINLOC/MAXLOC break ties by index, not by side),
    // so the aliased cases are the two-array kernel with out as io.
    if (out == a) {
        reduce_apply(op, b, in, out, n);
        return;
    }
    if (out == in) {
        reduce_apply(op, b, a, out, n);
        return;
    }
    by_basic<ThreeArrays>(b, op, a, in, out, n);
}

} // namespace weft::mpi
