// Shapes and layouts as XLA prints them, interned in a per-module ShapeTable:
// dumps repeat the same few hundred shapes across 10^5 instructions, so each
// distinct shape is parsed, validated and sized once.
#ifndef HLOMEM_LIB_HLO_SHAPE_H_
#define HLOMEM_LIB_HLO_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlomem::hlo {

// Element types, numbered as in xla_data.proto so proto values map directly.
enum class PrimitiveType : uint8_t {
  kInvalid = 0,
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kTuple = 13,
  kOpaque = 14,
  kC64 = 15,
  kBF16 = 16,
  kToken = 17,
  kC128 = 18,
  kF8E5M2 = 19,
  kF8E4M3FN = 20,
  kS4 = 21,
  kU4 = 22,
  kF8E4M3B11FNUZ = 23,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kS2 = 26,
  kU2 = 27,
  kF8E4M3 = 28,
  kF8E3M4 = 29,
  kS1 = 30,
  kU1 = 31,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
  kBuffer = 34,
};

// "f32", "bf16", "pred", ...; "tuple" for kTuple.
absl::string_view PrimitiveTypeName(PrimitiveType type);
std::optional<PrimitiveType> PrimitiveTypeFromName(absl::string_view name);
// Bits per element (pred: 8, s4: 4, c64: 64); 0 for tuple, token, opaque.
int PrimitiveTypeBitWidth(PrimitiveType type);
bool IsArrayType(PrimitiveType type);
bool IsIntegralType(PrimitiveType type);
bool IsFloatingType(PrimitiveType type);

using ShapeId = uint32_t;
using ShapeIndex = absl::InlinedVector<int64_t, 2>;

// A dimension size printed as "?" (unbounded dynamic).
inline constexpr int64_t kUnboundedDimension = -1;

struct Layout {
  std::vector<int64_t> minor_to_major;
  // T(8,128)(2,1): each tile's dimensions; '*' (combined) is -1.
  std::vector<std::vector<int64_t>> tiles;
  int64_t element_size_bits = 0;        // E(n); 0 means the type's width
  int64_t memory_space = 0;             // S(n)
  int64_t tail_padding_alignment = 0;   // L(n); 0 means none
  int64_t dynamic_metadata_prefix = 0;  // M(n)
  // Layout parts hlomem does not interpret (D(...), #(...), *(...), SC(...),
  // P(...)), kept verbatim so printing round-trips.
  std::string other;

  bool operator==(const Layout& o) const {
    return minor_to_major == o.minor_to_major && tiles == o.tiles &&
           element_size_bits == o.element_size_bits &&
           memory_space == o.memory_space &&
           tail_padding_alignment == o.tail_padding_alignment &&
           dynamic_metadata_prefix == o.dynamic_metadata_prefix &&
           other == o.other;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Layout& l) {
    return H::combine(std::move(h), l.minor_to_major, l.tiles,
                      l.element_size_bits, l.memory_space,
                      l.tail_padding_alignment, l.dynamic_metadata_prefix,
                      l.other);
  }
};

struct Shape {
  PrimitiveType type = PrimitiveType::kInvalid;
  // Array dimensions; a bounded-dynamic dimension ("<=N") holds its bound N.
  std::vector<int64_t> dims;
  // Parallel to dims when any dimension is dynamic, else empty.
  std::vector<bool> dynamic_dims;
  std::optional<Layout> layout;
  std::vector<ShapeId> tuple_elements;  // when type == kTuple

  bool is_tuple() const { return type == PrimitiveType::kTuple; }
  bool is_array() const { return IsArrayType(type); }
  bool is_dynamic() const;

  bool operator==(const Shape& o) const {
    return type == o.type && dims == o.dims && dynamic_dims == o.dynamic_dims &&
           layout == o.layout && tuple_elements == o.tuple_elements;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Shape& s) {
    h = H::combine(std::move(h), s.type, s.dims, s.dynamic_dims, s.tuple_elements,
                   s.layout.has_value());
    if (s.layout) h = H::combine(std::move(h), *s.layout);
    return h;
  }
};

// Owns the distinct shapes of a module. Ids are dense, assigned in order of
// first appearance, and usable as vector indexes.
class ShapeTable {
 public:
  // Interns `shape`, validating it and computing its sizes. Fails (with a
  // message, no position) on negative dimensions, a layout that does not
  // match the rank, or a byte size that overflows 64 bits.
  absl::StatusOr<ShapeId> Intern(Shape shape);

  const Shape& get(ShapeId id) const { return shapes_[id]; }
  size_t size() const { return shapes_.size(); }

  // Bytes of the buffer XLA's CPU backend allocates for this shape
  // (CpuExecutable::ShapeSizeBytes): elements x element bytes, packed when
  // the layout has E(n); tuples are 8-byte pointer tables; tokens 0;
  // opaque 8; dynamic arrays add 4 bytes of metadata per dimension.
  int64_t ByteSize(ShapeId id) const { return byte_sizes_[id]; }
  // Number of elements (arrays), 0 for non-arrays.
  int64_t ElementCount(ShapeId id) const { return element_counts_[id]; }
  // Bytes including tiling padding (ShapeUtil::ArraySize semantics): equal
  // to ByteSize for untiled layouts; tuples report their pointer table.
  int64_t PaddedByteSize(ShapeId id) const { return padded_sizes_[id]; }

  // The subshape at `index` (a path of tuple element numbers); nullopt when
  // the index does not exist.
  std::optional<ShapeId> Subshape(ShapeId id, const ShapeIndex& index) const;

  // Calls fn(index, shape_id) for every subshape in pre-order ({} first).
  template <typename Fn>
  void ForEachSubshape(ShapeId id, Fn&& fn) const {
    ShapeIndex index;
    ForEachSubshapeImpl(id, &index, fn);
  }
  // Number of nodes visited by ForEachSubshape.
  int64_t SubshapeCount(ShapeId id) const { return subshape_counts_[id]; }

  // XLA's text: "f32[8,128]{1,0}", "(f32[], s32[2]{0})", "bf16[<=16,?]".
  std::string ToString(ShapeId id, bool with_layout = true) const;

  // True when `a` and `b` are one shape as far as both are written: element
  // types, dimensions and tuple structure equal, and layouts equal wherever
  // both have one. Text may leave a layout out (older and shorter print
  // styles, hand-written modules), meaning whichever the other side has.
  // Equal ids are the usual case and cost one comparison.
  bool AgreeUpToMissingLayouts(ShapeId a, ShapeId b) const {
    return a == b || AgreeUpToMissingLayoutsSlow(a, b);
  }

 private:
  bool AgreeUpToMissingLayoutsSlow(ShapeId a, ShapeId b) const;

  template <typename Fn>
  void ForEachSubshapeImpl(ShapeId id, ShapeIndex* index, Fn& fn) const {
    fn(static_cast<const ShapeIndex&>(*index), id);
    const Shape& shape = shapes_[id];
    for (size_t i = 0; i < shape.tuple_elements.size(); ++i) {
      index->push_back(static_cast<int64_t>(i));
      ForEachSubshapeImpl(shape.tuple_elements[i], index, fn);
      index->pop_back();
    }
  }

  std::vector<Shape> shapes_;
  std::vector<int64_t> byte_sizes_;
  std::vector<int64_t> element_counts_;
  std::vector<int64_t> padded_sizes_;
  std::vector<int64_t> subshape_counts_;
  absl::flat_hash_map<Shape, ShapeId> ids_;
};

// Appends XLA's layout text ("{1,0:T(8,128)S(1)}") to `out`.
void AppendLayout(const Layout& layout, std::string* out);

// "{}", "{0,1}": XLA's ShapeIndex text.
std::string ShapeIndexToString(const ShapeIndex& index);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_SHAPE_H_
