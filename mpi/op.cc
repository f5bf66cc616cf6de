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

// io[i] = f(io[i], in[i]) for every element, in blocks of a fixed count:
// GCC's cost model at -O2 vectorizes a loop only when it needs neither a
// run-time alias check (hence restrict) nor a scalar remainder (hence the
// blocks). osu_allreduce's MPI_CHAR sum of 1 MiB took about 1 ms one byte
// at a time. Callers with overlapping arrays copy `in` first (detached()).
template <class T, class F>
inline void each(const T *__restrict in, T *__restrict io, size_t n, F f)
{
    constexpr size_t kBlock = sizeof(T) >= 64 ? 1 : 64 / sizeof(T);
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
        for (size_t j = 0; j < kBlock; ++j)
            io[i + j] = f(io[i + j], in[i + j]);
    for (; i < n; ++i)
        io[i] = f(io[i], in[i]);
}

template <class T>
void arith(MPI_Op op, const T *in, T *io, size_t n)
{
    switch (op) {
    case MPI_SUM: each(in, io, n, [](T a, T b) { return static_cast<T>(a + b); }); break;
    case MPI_PROD: each(in, io, n, [](T a, T b) { return static_cast<T>(a * b); }); break;
    case MPI_MAX: each(in, io, n, [](T a, T b) { return b > a ? b : a; }); break;
    case MPI_MIN: each(in, io, n, [](T a, T b) { return b < a ? b : a; }); break;
    case MPI_LAND: each(in, io, n, [](T a, T b) { return static_cast<T>(a && b); }); break;
    case MPI_LOR: each(in, io, n, [](T a, T b) { return static_cast<T>(a || b); }); break;
    case MPI_LXOR: each(in, io, n, [](T a, T b) { return static_cast<T>(!a != !b); }); break;
    default: break;
    }
}

template <class T>
void bits(MPI_Op op, const T *in, T *io, size_t n)
{
    switch (op) {
    case MPI_BAND: each(in, io, n, [](T a, T b) { return static_cast<T>(a & b); }); break;
    case MPI_BOR: each(in, io, n, [](T a, T b) { return static_cast<T>(a | b); }); break;
    case MPI_BXOR: each(in, io, n, [](T a, T b) { return static_cast<T>(a ^ b); }); break;
    default: arith(op, in, io, n);
    }
}

template <class T>
void cplx(MPI_Op op, const T *in, T *io, size_t n)
{
    if (op == MPI_SUM)
        each(in, io, n, [](T a, T b) { return a + b; });
    else if (op == MPI_PROD)
        each(in, io, n, [](T a, T b) { return a * b; });
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

// MINLOC/MAXLOC: the extreme value, and on a tie the smaller index.
template <class V>
void loc(MPI_Op op, const void *in_, void *io_, size_t n)
{
    const auto *in = static_cast<const LocPair<V> *>(in_);
    auto *io = static_cast<LocPair<V> *>(io_);
    for (size_t k = 0; k < n; ++k) {
        const bool better = op == MPI_MAXLOC ? in[k].v > io[k].v : in[k].v < io[k].v;
        if (better || (in[k].v == io[k].v && in[k].i < io[k].i))
            io[k] = in[k];
    }
}

// Integers get the bitwise operations too; callers pass aligned arrays of T
// (the collectives' own copies).
template <class T>
void typed(MPI_Op op, const void *in_, void *io, size_t n)
{
    std::unique_ptr<T[]> copy;
    const T *in = detached<T>(in_, io, n, &copy);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        bits(op, in, static_cast<T *>(io), n);
    else
        arith(op, in, static_cast<T *>(io), n);
}

template <class T>
void typed_cplx(MPI_Op op, const void *in_, void *io, size_t n)
{
    std::unique_ptr<T[]> copy;
    cplx(op, detached<T>(in_, io, n, &copy), static_cast<T *>(io), n);
}

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
    switch (b) {
    case Basic::Char: typed<char>(op, in, io, n); break;
    case Basic::SChar: case Basic::Int8: typed<int8_t>(op, in, io, n); break;
    case Basic::UChar: case Basic::UInt8: case Basic::Byte: typed<uint8_t>(op, in, io, n); break;
    case Basic::WChar: typed<wchar_t>(op, in, io, n); break;
    case Basic::Short: case Basic::Int16: typed<int16_t>(op, in, io, n); break;
    case Basic::UShort: case Basic::UInt16: typed<uint16_t>(op, in, io, n); break;
    case Basic::Int: case Basic::Int32: typed<int32_t>(op, in, io, n); break;
    case Basic::UInt: case Basic::UInt32: typed<uint32_t>(op, in, io, n); break;
    case Basic::Long: typed<long>(op, in, io, n); break;
    case Basic::ULong: typed<unsigned long>(op, in, io, n); break;
    case Basic::LongLong: case Basic::Int64: case Basic::Offset: case Basic::Count:
        typed<int64_t>(op, in, io, n);
        break;
    case Basic::ULongLong: case Basic::UInt64: typed<uint64_t>(op, in, io, n); break;
    case Basic::Aint: typed<MPI_Aint>(op, in, io, n); break;
    case Basic::Bool: typed<bool>(op, in, io, n); break;
    case Basic::Float: typed<float>(op, in, io, n); break;
    case Basic::Double: typed<double>(op, in, io, n); break;
    case Basic::LongDouble: typed<long double>(op, in, io, n); break;
    case Basic::FloatComplex: typed_cplx<std::complex<float>>(op, in, io, n); break;
    case Basic::DoubleComplex: typed_cplx<std::complex<double>>(op, in, io, n); break;
    case Basic::LongDoubleComplex: typed_cplx<std::complex<long double>>(op, in, io, n); break;
    case Basic::FloatInt: loc<float>(op, in, io, n); break;
    case Basic::DoubleInt: loc<double>(op, in, io, n); break;
    case Basic::LongInt: loc<long>(op, in, io, n); break;
    case Basic::TwoInt: loc<int>(op, in, io, n); break;
    case Basic::ShortInt: loc<short>(op, in, io, n); break;
    case Basic::LongDoubleInt: loc<long double>(op, in, io, n); break;
    default: break;
    }
}

} // namespace weft::mpi
