// SPDX-License-Identifier: BSD-3-Clause
// Datatypes: the predefined ones (fixed handles, an array lookup) and the
// derived constructors. A datatype is flattened into the byte blocks of
// one element (offset, length; neighbours merged), which is all packing
// needs; a contiguous type is sent straight from the user's buffer.
#include <algorithm>
#include <complex>
#include <cstring>
#include <string>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

struct Pair {
    MPI_Datatype h;
    const char *name;
    size_t size;
    Basic basic;
};

template <class A, class B>
struct alignas(alignof(A) > alignof(B) ? alignof(A) : alignof(B)) PairOf {
    A a;
    B b;
};

const Pair kPredefined[] = {
    {MPI_CHAR, "MPI_CHAR", sizeof(char), Basic::Char},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", sizeof(signed char), Basic::SChar},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", sizeof(unsigned char), Basic::UChar},
    {MPI_BYTE, "MPI_BYTE", 1, Basic::Byte},
    {MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), Basic::WChar},
    {MPI_SHORT, "MPI_SHORT", sizeof(short), Basic::Short},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short), Basic::UShort},
    {MPI_INT, "MPI_INT", sizeof(int), Basic::Int},
    {MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned), Basic::UInt},
    {MPI_LONG, "MPI_LONG", sizeof(long), Basic::Long},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long), Basic::ULong},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long), Basic::LongLong},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long), Basic::ULongLong},
    {MPI_FLOAT, "MPI_FLOAT", sizeof(float), Basic::Float},
    {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), Basic::Double},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), Basic::LongDouble},
    {MPI_INT8_T, "MPI_INT8_T", 1, Basic::Int8},
    {MPI_INT16_T, "MPI_INT16_T", 2, Basic::Int16},
    {MPI_INT32_T, "MPI_INT32_T", 4, Basic::Int32},
    {MPI_INT64_T, "MPI_INT64_T", 8, Basic::Int64},
    {MPI_UINT8_T, "MPI_UINT8_T", 1, Basic::UInt8},
    {MPI_UINT16_T, "MPI_UINT16_T", 2, Basic::UInt16},
    {MPI_UINT32_T, "MPI_UINT32_T", 4, Basic::UInt32},
    {MPI_UINT64_T, "MPI_UINT64_T", 8, Basic::UInt64},
    {MPI_C_BOOL, "MPI_C_BOOL", sizeof(bool), Basic::Bool},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", sizeof(std::complex<float>), Basic::FloatComplex},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(std::complex<double>), Basic::DoubleComplex},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(std::complex<long double>),
     Basic::LongDoubleComplex},
    {MPI_AINT, "MPI_AINT", sizeof(MPI_Aint), Basic::Aint},
    {MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset), Basic::Offset},
    {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count), Basic::Count},
    {MPI_PACKED, "MPI_PACKED", 1, Basic::Packed},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(PairOf<float, int>), Basic::FloatInt},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(PairOf<double, int>), Basic::DoubleInt},
    {MPI_LONG_INT, "MPI_LONG_INT", sizeof(PairOf<long, int>), Basic::LongInt},
    {MPI_2INT, "MPI_2INT", sizeof(PairOf<int, int>), Basic::TwoInt},
    {MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(PairOf<short, int>), Basic::ShortInt},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(PairOf<long double, int>), Basic::LongDoubleInt},
};

constexpr int kFirstDerived = kFirstDerivedType;

struct Types {
    Table<Datatype> derived{kFirstDerived};
    Types()
    {
        for (const Pair &p : kPredefined) {
            Datatype &t = g_predefined_types[p.h];
            t.handle = p.h;
            t.predefined = t.committed = true;
            t.size = p.size;
            t.lb = t.true_lb = 0;
            t.ub = t.true_ub = static_cast<std::ptrdiff_t>(p.size);
            t.basic = p.basic;
            t.basic_size = p.size;
            t.name = p.name;
            // A pair's padding between its members or at its end is not data.
            size_t first = 0;
            switch (p.basic) {
            case Basic::FloatInt: first = sizeof(float); break;
            case Basic::DoubleInt: first = sizeof(double); break;
            case Basic::LongInt: first = sizeof(long); break;
            case Basic::ShortInt: first = sizeof(short); break;
            case Basic::LongDoubleInt: first = sizeof(long double); break;
            default: break;
            }
            if (first) {
                const size_t int_at = (first + alignof(int) - 1) / alignof(int) * alignof(int);
                t.size = first + sizeof(int);   // the padding is not data
                if (int_at == first)
                    t.blocks = {{0, first + sizeof(int)}};
                else
                    t.blocks = {{0, first}, {static_cast<std::ptrdiff_t>(int_at), sizeof(int)}};
                t.true_ub = static_cast<std::ptrdiff_t>(int_at + sizeof(int));
            } else {
                t.blocks = {{0, p.size}};
            }
            t.basic_size = t.size;
            t.basic_extent = p.size;
            t.seal();
        }
    }
};

} // namespace

// Filled before main by g_types's constructor (no other static initializer
// of the library looks up datatypes).
Datatype g_predefined_types[kFirstDerivedType];

namespace {

Types g_types;
Types &types() { return g_types; }


void add_block(std::vector<Block> &out, std::ptrdiff_t off, size_t len)
{
    if (len == 0)
        return;
    if (!out.empty() && out.back().offset + static_cast<std::ptrdiff_t>(out.back().length) == off)
        out.back().length += len;
    else
        out.push_back({off, len});
}

// Appends copies of old's element at displacement disp, count times with
// stride, to the new type t (blocks, size, bounds).
void append(Datatype &t, const Datatype &old, std::ptrdiff_t disp, int blocklen, bool *first)
{
    const std::ptrdiff_t ext = old.extent();
    for (int i = 0; i < blocklen; ++i) {
        const std::ptrdiff_t at = disp + i * ext;
        for (const Block &b : old.blocks)
            add_block(t.blocks, at + b.offset, b.length);
        t.size += old.size;
        const std::ptrdiff_t lb = at + old.lb, ub = at + old.ub;
        const std::ptrdiff_t tlb = at + old.true_lb, tub = at + old.true_ub;
        if (*first) {
            t.lb = lb;
            t.ub = ub;
            t.true_lb = tlb;
            t.true_ub = tub;
            *first = false;
        } else {
            t.lb = std::min(t.lb, lb);
            t.ub = std::max(t.ub, ub);
            t.true_lb = std::min(t.true_lb, tlb);
            t.true_ub = std::max(t.true_ub, tub);
        }
    }
}

int type_error(const char *fn, int cls, const std::string &why) { return raise(nullptr, cls, fn, why); }

Datatype *old_type(MPI_Datatype h, const char *fn, int *rc)
{
    Datatype *t = datatype(h);
    if (!t)
        *rc = type_error(fn, MPI_ERR_TYPE, "oldtype " + std::to_string(h) + " is not a datatype");
    return t;
}

// The basics of n elements of old, for a Mixed type's signature.
void append_signature(std::vector<uint32_t> &sig, const Datatype &old, size_t n)
{
    for (size_t k = 0; k < n; ++k) {
        if (old.basic == Basic::Mixed)
            sig.insert(sig.end(), old.signature.begin(), old.signature.end());
        else if (old.basic_size)
            sig.insert(sig.end(), old.size / old.basic_size, static_cast<uint32_t>(old.basic_size));
    }
}

int finish_type(std::unique_ptr<Datatype> t, const Datatype &old, MPI_Datatype *out)
{
    if (old.basic == Basic::Mixed && old.size) {
        t->signature.clear();
        append_signature(t->signature, old, t->size / old.size);
    }
    t->basic = old.basic;
    t->basic_size = old.basic_size;
    t->basic_extent = old.basic_extent;
    t->seal();
    *out = types().derived.add(std::move(t));
    types().derived.get(*out)->handle = *out;
    return MPI_SUCCESS;
}

} // namespace

Datatype *derived_datatype(MPI_Datatype h) { return types().derived.get(h); }

int record_contents(int rc, const MPI_Datatype *h, int combiner, std::vector<int> ints, std::vector<MPI_Aint> aints,
                    std::vector<MPI_Datatype> made_of)
{
    Datatype *t = rc == MPI_SUCCESS && h ? derived_datatype(*h) : nullptr;
    if (!t)
        return rc;
    t->combiner = combiner;
    t->contents_ints = std::move(ints);
    t->contents_aints = std::move(aints);
    t->contents_handles = made_of;
    t->contents_types.clear();
    for (MPI_Datatype m : made_of) {   // copies: the program may free them
        const Datatype *d = datatype(m);
        t->contents_types.push_back(d && !d->predefined ? std::make_shared<const Datatype>(*d) : nullptr);
    }
    return rc;
}


void pack(const void *buf, int count, const Datatype &t, std::byte *out)
{
    const auto *base = static_cast<const std::byte *>(buf);
    for (int i = 0; i < count; ++i, base += t.extent())
        for (const Block &b : t.blocks) {
            std::memcpy(out, base + b.offset, b.length);
            out += b.length;
        }
}

void unpack(const std::byte *in, size_t bytes, void *buf, int count, const Datatype &t)
{
    auto *base = static_cast<std::byte *>(buf);
    for (int i = 0; i < count && bytes; ++i, base += t.extent())
        for (const Block &b : t.blocks) {
            const size_t n = std::min(b.length, bytes);
            std::memcpy(base + b.offset, in, n);
            in += n;
            bytes -= n;
            if (!bytes)
                return;
        }
}

void wire_for_send(const void *buf, int count, const Datatype &t, Wire *w)
{
    w->bytes = t.size * static_cast<size_t>(count);
    if (t.contiguous(count)) {
        w->packed = false;
        w->ptr = const_cast<std::byte *>(static_cast<const std::byte *>(buf)) +
                 t.data_offset;
        return;
    }
    w->packed = true;
    w->scratch.resize(w->bytes);
    w->ptr = w->scratch.data();
    pack(buf, count, t, w->ptr);
}

void wire_for_recv(void *buf, int count, const Datatype &t, Wire *w)
{
    w->bytes = t.size * static_cast<size_t>(count);
    if (t.contiguous(count)) {
        w->packed = false;
        w->ptr = static_cast<std::byte *>(buf) + t.data_offset;
        return;
    }
    w->packed = true;
    w->scratch.resize(w->bytes);
    w->ptr = w->scratch.data();
}

void wire_finish_recv(const Wire &w, size_t received, void *buf, int count, const Datatype &t)
{
    if (w.packed)
        unpack(w.ptr, received, buf, count, t);
}

} // namespace weft::mpi

using namespace weft::mpi;

namespace {

#define CHECK_OUT(fn, p)                                                                           \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return type_error(fn, MPI_ERR_ARG, #p " is NULL");                                     \
    } while (0)

int check_count(const char *fn, int count, const char *what = "count")
{
    if (count < 0)
        return type_error(fn, MPI_ERR_COUNT, std::string(what) + " " + std::to_string(count) + " is negative");
    return MPI_SUCCESS;
}

} // namespace

extern "C" {

WEFT_MPI_WEAK(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_contiguous");
    int rc = check_count("MPI_Type_contiguous", count);
    if (rc)
        return rc;
    CHECK_OUT("MPI_Type_contiguous", newtype);
    const Datatype *old = old_type(oldtype, "MPI_Type_contiguous", &rc);
    if (!old)
        return rc;
    auto t = std::make_unique<Datatype>();
    bool first = true;
    append(*t, *old, 0, count, &first);
    return record_contents(finish_type(std::move(t), *old, newtype), newtype, MPI_COMBINER_CONTIGUOUS, {count}, {},
                    {oldtype});
}

WEFT_MPI_WEAK(Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_create_hvector");
    int rc = check_count("MPI_Type_create_hvector", count);
    if (!rc)
        rc = check_count("MPI_Type_create_hvector", blocklength, "blocklength");
    if (rc)
        return rc;
    CHECK_OUT("MPI_Type_create_hvector", newtype);
    const Datatype *old = old_type(oldtype, "MPI_Type_create_hvector", &rc);
    if (!old)
        return rc;
    auto t = std::make_unique<Datatype>();
    bool first = true;
    for (int i = 0; i < count; ++i)
        append(*t, *old, i * stride, blocklength, &first);
    return record_contents(finish_type(std::move(t), *old, newtype), newtype, MPI_COMBINER_HVECTOR, {count, blocklength},
                    {stride}, {oldtype});
}

WEFT_MPI_WEAK(Type_vector)
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_vector");
    const Datatype *old = datatype(oldtype);
    if (!old)
        return type_error("MPI_Type_vector", MPI_ERR_TYPE, "oldtype is not a datatype");
    return record_contents(PMPI_Type_create_hvector(count, blocklength, static_cast<MPI_Aint>(stride) * old->extent(),
                                             oldtype, newtype),
                    newtype, MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {oldtype});
}

WEFT_MPI_WEAK(Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_create_hindexed");
    int rc = check_count("MPI_Type_create_hindexed", count);
    if (rc)
        return rc;
    CHECK_OUT("MPI_Type_create_hindexed", newtype);
    if (count > 0 && (!blocklengths || !displacements))
        return type_error("MPI_Type_create_hindexed", MPI_ERR_ARG, "blocklengths or displacements is NULL");
    const Datatype *old = old_type(oldtype, "MPI_Type_create_hindexed", &rc);
    if (!old)
        return rc;
    auto t = std::make_unique<Datatype>();
    bool first = true;
    for (int i = 0; i < count; ++i) {
        if ((rc = check_count("MPI_Type_create_hindexed", blocklengths[i], "a blocklength")))
            return rc;
        append(*t, *old, displacements[i], blocklengths[i], &first);
    }
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklengths, blocklengths + count);
    return record_contents(finish_type(std::move(t), *old, newtype), newtype, MPI_COMBINER_HINDEXED, std::move(ints),
                    std::vector<MPI_Aint>(displacements, displacements + count), {oldtype});
}

WEFT_MPI_WEAK(Type_indexed)
int PMPI_Type_indexed(int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_indexed");
    const Datatype *old = datatype(oldtype);
    if (!old)
        return type_error("MPI_Type_indexed", MPI_ERR_TYPE, "oldtype is not a datatype");
    if (count > 0 && !displacements)
        return type_error("MPI_Type_indexed", MPI_ERR_ARG, "displacements is NULL");
    std::vector<MPI_Aint> d(static_cast<size_t>(std::max(count, 0)));
    for (int i = 0; i < count; ++i)
        d[i] = static_cast<MPI_Aint>(displacements[i]) * old->extent();
    std::vector<int> ints{count};
    if (count > 0 && blocklengths) {
        ints.insert(ints.end(), blocklengths, blocklengths + count);
        ints.insert(ints.end(), displacements, displacements + count);
    }
    return record_contents(PMPI_Type_create_hindexed(count, blocklengths, d.data(), oldtype, newtype), newtype,
                    MPI_COMBINER_INDEXED, std::move(ints), {}, {oldtype});
}

WEFT_MPI_WEAK(Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blocklength, const int displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_create_indexed_block");
    std::vector<int> bl(static_cast<size_t>(std::max(count, 0)), blocklength);
    std::vector<int> ints{count, blocklength};
    if (count > 0 && displacements)
        ints.insert(ints.end(), displacements, displacements + count);
    return record_contents(PMPI_Type_indexed(count, bl.data(), displacements, oldtype, newtype), newtype,
                    MPI_COMBINER_INDEXED_BLOCK, std::move(ints), {}, {oldtype});
}

WEFT_MPI_WEAK(Type_create_struct)
int PMPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types_[], MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_create_struct");
    int rc = check_count("MPI_Type_create_struct", count);
    if (rc)
        return rc;
    CHECK_OUT("MPI_Type_create_struct", newtype);
    if (count > 0 && (!blocklengths || !displacements || !types_))
        return type_error("MPI_Type_create_struct", MPI_ERR_ARG, "blocklengths, displacements or types is NULL");
    auto t = std::make_unique<Datatype>();
    bool first = true;
    Basic basic = Basic::None;
    size_t basic_size = 0, basic_extent = 0;
    size_t max_align = 1;
    for (int i = 0; i < count; ++i) {
        const Datatype *old = datatype(types_[i]);
        if (!old)
            return type_error("MPI_Type_create_struct", MPI_ERR_TYPE,
                              "types[" + std::to_string(i) + "] is not a datatype");
        if ((rc = check_count("MPI_Type_create_struct", blocklengths[i], "a blocklength")))
            return rc;
        append(*t, *old, displacements[i], blocklengths[i], &first);
        if (basic == Basic::None) {
            basic = old->basic;
            basic_size = old->basic_size;
            basic_extent = old->basic_extent;
        } else if (basic != old->basic) {
            basic = Basic::Mixed;
        }
        max_align = std::max(max_align, std::min<size_t>(old->basic_size ? old->basic_size : 1, alignof(max_align_t)));
    }
    // Like a C struct, the extent is padded to the strictest alignment of its
    // members (what compilers do and what users expect for arrays of structs).
    if (!first && max_align > 1) {
        const std::ptrdiff_t ext = t->extent(), a = static_cast<std::ptrdiff_t>(max_align);
        t->ub = t->lb + (ext + a - 1) / a * a;
    }
    t->basic = basic;
    t->basic_size = basic_size;
    t->basic_extent = basic_extent;
    if (basic == Basic::Mixed)
        for (int i = 0; i < count; ++i)
            append_signature(t->signature, *datatype(types_[i]), static_cast<size_t>(blocklengths[i]));
    t->seal();
    *newtype = types().derived.add(std::move(t));
    types().derived.get(*newtype)->handle = *newtype;
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklengths, blocklengths + count);
    return record_contents(MPI_SUCCESS, newtype, MPI_COMBINER_STRUCT, std::move(ints),
                    std::vector<MPI_Aint>(displacements, displacements + count),
                    std::vector<MPI_Datatype>(types_, types_ + count));
}

WEFT_MPI_WEAK(Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_create_resized");
    int rc = 0;
    CHECK_OUT("MPI_Type_create_resized", newtype);
    const Datatype *old = old_type(oldtype, "MPI_Type_create_resized", &rc);
    if (!old)
        return rc;
    auto t = std::make_unique<Datatype>(*old);
    t->predefined = false;
    t->committed = false;
    t->name.clear();
    t->lb = lb;
    t->ub = lb + extent;
    return record_contents(finish_type(std::move(t), *old, newtype), newtype, MPI_COMBINER_RESIZED, {}, {lb, extent},
                    {oldtype});
}

WEFT_MPI_WEAK(Type_dup)
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_dup");
    int rc = 0;
    CHECK_OUT("MPI_Type_dup", newtype);
    const Datatype *old = old_type(oldtype, "MPI_Type_dup", &rc);
    if (!old)
        return rc;
    auto t = std::make_unique<Datatype>(*old);
    t->predefined = false;
    t->committed = old->committed;
    if (int frc = finish_type(std::move(t), *old, newtype))
        return frc;
    if (int arc = attrs_copy(AttrKind::Type, oldtype, *newtype)) {
        types().derived.remove(*newtype);
        *newtype = MPI_DATATYPE_NULL;
        return type_error("MPI_Type_dup", arc, "an attribute's copy callback returned error " + std::to_string(arc));
    }
    return record_contents(MPI_SUCCESS, newtype, MPI_COMBINER_DUP, {}, {}, {oldtype});
}

WEFT_MPI_WEAK(Type_commit)
int PMPI_Type_commit(MPI_Datatype *datatype_)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_commit");
    CHECK_OUT("MPI_Type_commit", datatype_);
    Datatype *t = datatype(*datatype_);
    if (!t)
        return type_error("MPI_Type_commit", MPI_ERR_TYPE, "not a datatype");
    t->committed = true;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_free)
int PMPI_Type_free(MPI_Datatype *datatype_)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_free");
    CHECK_OUT("MPI_Type_free", datatype_);
    Datatype *t = datatype(*datatype_);
    if (!t)
        return type_error("MPI_Type_free", MPI_ERR_TYPE, "not a datatype");
    if (t->predefined)
        return type_error("MPI_Type_free", MPI_ERR_TYPE, t->name + " is predefined and cannot be freed");
    if (int arc = attrs_delete_all(AttrKind::Type, *datatype_))
        return type_error("MPI_Type_free", arc,
                          "an attribute's delete callback returned error " + std::to_string(arc) +
                              " (the datatype is not freed)");
    // Types are flattened when built, so freeing one never affects types
    // made from it. A pending operation keeps its handle (see Request).
    types().derived.remove(*datatype_);
    *datatype_ = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_size)
int PMPI_Type_size(MPI_Datatype h, int *size)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_size");
    CHECK_OUT("MPI_Type_size", size);
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Type_size", MPI_ERR_TYPE, "not a datatype");
    *size = static_cast<int>(t->size);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype h, MPI_Aint *lb, MPI_Aint *extent)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_get_extent");
    CHECK_OUT("MPI_Type_get_extent", lb);
    CHECK_OUT("MPI_Type_get_extent", extent);
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Type_get_extent", MPI_ERR_TYPE, "not a datatype");
    *lb = t->lb;
    *extent = t->extent();
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype h, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_get_true_extent");
    CHECK_OUT("MPI_Type_get_true_extent", true_lb);
    CHECK_OUT("MPI_Type_get_true_extent", true_extent);
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Type_get_true_extent", MPI_ERR_TYPE, "not a datatype");
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_get_name)
int PMPI_Type_get_name(MPI_Datatype h, char *type_name, int *resultlen)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_get_name");
    CHECK_OUT("MPI_Type_get_name", type_name);
    CHECK_OUT("MPI_Type_get_name", resultlen);
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Type_get_name", MPI_ERR_TYPE, "not a datatype");
    const std::string n = t->name.substr(0, MPI_MAX_OBJECT_NAME - 1);
    std::memcpy(type_name, n.c_str(), n.size() + 1);
    *resultlen = static_cast<int>(n.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_set_name)
int PMPI_Type_set_name(MPI_Datatype h, const char *type_name)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_set_name");
    CHECK_OUT("MPI_Type_set_name", type_name);
    Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Type_set_name", MPI_ERR_TYPE, "not a datatype");
    // Predefined ones too, as MPI_COMM_WORLD's name may be changed (MPI-3.1 6.8).
    t->name = type_name;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    MPI_THREAD_GUARD;
    if (!address)
        return MPI_ERR_ARG;
    *address = reinterpret_cast<MPI_Aint>(location);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
WEFT_MPI_WEAK(Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }

WEFT_MPI_WEAK(Pack_size)
int PMPI_Pack_size(int incount, MPI_Datatype h, MPI_Comm, int *size)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Pack_size");
    CHECK_OUT("MPI_Pack_size", size);
    if (int rc = check_count("MPI_Pack_size", incount))
        return rc;
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Pack_size", MPI_ERR_TYPE, "not a datatype");
    *size = static_cast<int>(t->size * static_cast<size_t>(incount));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Pack)
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype h, void *outbuf, int outsize, int *position, MPI_Comm)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Pack");
    CHECK_OUT("MPI_Pack", position);
    if (int rc = check_count("MPI_Pack", incount))
        return rc;
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Pack", MPI_ERR_TYPE, "not a datatype");
    const size_t need = t->size * static_cast<size_t>(incount);
    if (*position < 0 || static_cast<size_t>(*position) + need > static_cast<size_t>(std::max(outsize, 0)))
        return type_error("MPI_Pack", MPI_ERR_TRUNCATE,
                          "outbuf has " + std::to_string(outsize) + " bytes; position " + std::to_string(*position) +
                              " + " + std::to_string(need) + " packed bytes do not fit");
    pack(inbuf, incount, *t, static_cast<std::byte *>(outbuf) + *position);
    *position += static_cast<int>(need);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Unpack)
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype h, MPI_Comm)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Unpack");
    CHECK_OUT("MPI_Unpack", position);
    if (int rc = check_count("MPI_Unpack", outcount))
        return rc;
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Unpack", MPI_ERR_TYPE, "not a datatype");
    const size_t need = t->size * static_cast<size_t>(outcount);
    if (*position < 0 || static_cast<size_t>(*position) + need > static_cast<size_t>(std::max(insize, 0)))
        return type_error("MPI_Unpack", MPI_ERR_TRUNCATE,
                          "inbuf has " + std::to_string(insize) + " bytes; position " + std::to_string(*position) +
                              " + " + std::to_string(need) + " bytes to unpack run past it");
    unpack(static_cast<const std::byte *>(inbuf) + *position, need, outbuf, outcount, *t);
    *position += static_cast<int>(need);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype h, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner)
{
    MPI_THREAD_GUARD;
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Type_get_envelope", MPI_ERR_TYPE, "datatype " + std::to_string(h) + " is not valid");
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return type_error("MPI_Type_get_envelope", MPI_ERR_ARG, "an output argument is NULL");
    *combiner = t->predefined ? MPI_COMBINER_NAMED : t->combiner;
    *num_integers = t->predefined ? 0 : static_cast<int>(t->contents_ints.size());
    *num_addresses = t->predefined ? 0 : static_cast<int>(t->contents_aints.size());
    *num_datatypes = t->predefined ? 0 : static_cast<int>(t->contents_handles.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype h, int max_integers, int max_addresses, int max_datatypes, int integers[],
                           MPI_Aint addresses[], MPI_Datatype datatypes[])
{
    MPI_THREAD_GUARD;
    const Datatype *t = datatype(h);
    if (!t)
        return type_error("MPI_Type_get_contents", MPI_ERR_TYPE, "datatype " + std::to_string(h) + " is not valid");
    if (t->predefined || t->combiner == MPI_COMBINER_NAMED)
        return type_error("MPI_Type_get_contents", MPI_ERR_TYPE,
                          "the datatype is predefined (MPI_Type_get_envelope says MPI_COMBINER_NAMED): it has no "
                          "contents");
    if (max_integers < static_cast<int>(t->contents_ints.size()) ||
        max_addresses < static_cast<int>(t->contents_aints.size()) ||
        max_datatypes < static_cast<int>(t->contents_handles.size()))
        return type_error("MPI_Type_get_contents", MPI_ERR_ARG,
                          "the arrays are shorter than MPI_Type_get_envelope's counts (" +
                              std::to_string(t->contents_ints.size()) + ", " + std::to_string(t->contents_aints.size()) +
                              ", " + std::to_string(t->contents_handles.size()) + ")");
    std::copy(t->contents_ints.begin(), t->contents_ints.end(), integers);
    std::copy(t->contents_aints.begin(), t->contents_aints.end(), addresses);
    // Predefined ones as they are; derived ones as new datatypes the program
    // frees (MPI-3.1 4.1.13), made from the copies kept at construction.
    const auto made_of = t->contents_types;
    const auto handles = t->contents_handles;
    for (size_t i = 0; i < handles.size(); ++i) {
        if (!made_of[i]) {
            datatypes[i] = handles[i];
            continue;
        }
        datatypes[i] = types().derived.add(std::make_unique<Datatype>(*made_of[i]));
        types().derived.get(datatypes[i])->handle = datatypes[i];
    }
    return MPI_SUCCESS;
}

} // extern "C"
