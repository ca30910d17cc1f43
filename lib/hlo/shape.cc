#include "lib/hlo/shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"

namespace hlomem::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  absl::string_view name;
  int bits;
};

constexpr TypeInfo kTypes[] = {
    {PrimitiveType::kPred, "pred", 8},
    {PrimitiveType::kS1, "s1", 1},
    {PrimitiveType::kS2, "s2", 2},
    {PrimitiveType::kS4, "s4", 4},
    {PrimitiveType::kS8, "s8", 8},
    {PrimitiveType::kS16, "s16", 16},
    {PrimitiveType::kS32, "s32", 32},
    {PrimitiveType::kS64, "s64", 64},
    {PrimitiveType::kU1, "u1", 1},
    {PrimitiveType::kU2, "u2", 2},
    {PrimitiveType::kU4, "u4", 4},
    {PrimitiveType::kU8, "u8", 8},
    {PrimitiveType::kU16, "u16", 16},
    {PrimitiveType::kU32, "u32", 32},
    {PrimitiveType::kU64, "u64", 64},
    {PrimitiveType::kF16, "f16", 16},
    {PrimitiveType::kBF16, "bf16", 16},
    {PrimitiveType::kF32, "f32", 32},
    {PrimitiveType::kF64, "f64", 64},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
    {PrimitiveType::kC64, "c64", 64},
    {PrimitiveType::kC128, "c128", 128},
    {PrimitiveType::kToken, "token", 0},
    {PrimitiveType::kOpaque, "opaque", 0},
    {PrimitiveType::kTuple, "tuple", 0},
    {PrimitiveType::kBuffer, "buffer", 0},
};

const TypeInfo* FindType(PrimitiveType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

constexpr int64_t kPointerBytes = 8;

}  // namespace

absl::string_view PrimitiveTypeName(PrimitiveType type) {
  const TypeInfo* info = FindType(type);
  return info ? info->name : "invalid";
}

std::optional<PrimitiveType> PrimitiveTypeFromName(absl::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name && info.type != PrimitiveType::kTuple) {
      return info.type;
    }
  }
  return std::nullopt;
}

int PrimitiveTypeBitWidth(PrimitiveType type) {
  const TypeInfo* info = FindType(type);
  return info ? info->bits : 0;
}

bool IsArrayType(PrimitiveType type) {
  return PrimitiveTypeBitWidth(type) > 0;
}

bool IsIntegralType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64: case PrimitiveType::kU1: case PrimitiveType::kU2:
    case PrimitiveType::kU4: case PrimitiveType::kU8: case PrimitiveType::kU16:
    case PrimitiveType::kU32: case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

bool IsFloatingType(PrimitiveType type) {
  return IsArrayType(type) && !IsIntegralType(type) &&
         type != PrimitiveType::kPred && type != PrimitiveType::kC64 &&
         type != PrimitiveType::kC128;
}

bool Shape::is_dynamic() const {
  return std::find(dynamic_dims.begin(), dynamic_dims.end(), true) !=
         dynamic_dims.end();
}

absl::StatusOr<ShapeId> ShapeTable::Intern(Shape shape) {
  auto found = ids_.find(shape);
  if (found != ids_.end()) return found->second;

  int64_t bytes = 0;
  int64_t elements = 0;
  int64_t padded = 0;
  int64_t subshapes = 1;
  if (shape.is_tuple()) {
    for (ShapeId element : shape.tuple_elements) {
      if (element >= shapes_.size()) {
        return absl::InvalidArgumentError("tuple element shape is undefined");
      }
      subshapes += subshape_counts_[element];
    }
    bytes = kPointerBytes * static_cast<int64_t>(shape.tuple_elements.size());
    padded = bytes;
  } else if (shape.type == PrimitiveType::kOpaque) {
    bytes = padded = kPointerBytes;
  } else if (shape.type == PrimitiveType::kToken) {
    bytes = padded = 0;
  } else if (shape.is_array()) {
    if (!shape.dynamic_dims.empty() &&
        shape.dynamic_dims.size() != shape.dims.size()) {
      return absl::InvalidArgumentError("dynamic dimension flags do not match rank");
    }
    const int64_t rank = static_cast<int64_t>(shape.dims.size());
    elements = 1;
    for (size_t i = 0; i < shape.dims.size(); ++i) {
      int64_t dim = shape.dims[i];
      if (dim == kUnboundedDimension && !shape.dynamic_dims.empty() &&
          shape.dynamic_dims[i]) {
        dim = 0;  // "?" has no bound: nothing can be sized for it
      } else if (dim < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("negative dimension size ", dim));
      }
      std::optional<int64_t> product = CheckedMul(elements, dim);
      if (!product) {
        return absl::InvalidArgumentError(
            "shape has more than 2^63 elements");
      }
      elements = *product;
    }
    int64_t bits = PrimitiveTypeBitWidth(shape.type);
    if (shape.layout) {
      const Layout& layout = *shape.layout;
      if (!layout.minor_to_major.empty() &&
          static_cast<int64_t>(layout.minor_to_major.size()) != rank) {
        return absl::InvalidArgumentError(absl::StrCat(
            "layout has ", layout.minor_to_major.size(),
            " dimensions but the shape has rank ", rank));
      }
      std::vector<bool> seen(static_cast<size_t>(rank), false);
      for (int64_t d : layout.minor_to_major) {
        if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "layout minor_to_major is not a permutation of 0..", rank - 1));
        }
        seen[static_cast<size_t>(d)] = true;
      }
      if (layout.element_size_bits < 0 || layout.element_size_bits > 1024) {
        return absl::InvalidArgumentError("invalid element size in layout");
      }
      if (layout.memory_space < 0 || layout.tail_padding_alignment < 0) {
        return absl::InvalidArgumentError("negative memory space or alignment in layout");
      }
      for (const std::vector<int64_t>& tile : layout.tiles) {
        for (int64_t t : tile) {
          // -1 is the combined dimension ('*').
          if (t == 0 || t < -1) {
            return absl::InvalidArgumentError(
                absl::StrCat("invalid tile dimension ", t, " in layout"));
          }
        }
      }
    }
    const int64_t element_bits =
        shape.layout && shape.layout->element_size_bits > 0
            ? shape.layout->element_size_bits
            : 0;
    auto bytes_for = [&](int64_t count) -> std::optional<int64_t> {
      if (element_bits > 0) {
        std::optional<int64_t> total = CheckedMul(count, element_bits);
        if (!total) return std::nullopt;
        return *total / 8 + (*total % 8 != 0 ? 1 : 0);
      }
      return CheckedMul(count, (bits + 7) / 8);
    };
    std::optional<int64_t> logical = bytes_for(elements);
    if (!logical) {
      return absl::InvalidArgumentError("shape's byte size overflows 64 bits");
    }
    bytes = *logical;
    if (shape.is_dynamic()) {
      // Dynamic arrays carry an int32 size per dimension after the data.
      std::optional<int64_t> with_sizes = CheckedAdd(bytes, 4 * rank);
      if (!with_sizes) {
        return absl::InvalidArgumentError("shape's byte size overflows 64 bits");
      }
      bytes = *with_sizes;
    }

    // Padded size: round the minor dims up to the first tile.
    int64_t padded_elements = elements;
    // A scalar's tile pads it too: f32[]{:T(128)} takes 128 elements.
    if (shape.layout && !shape.layout->tiles.empty()) {
      const Layout& layout = *shape.layout;
      std::vector<int64_t> physical;  // major-to-minor
      for (int64_t i = rank - 1; i >= 0; --i) {
        const int64_t logical_dim =
            layout.minor_to_major.empty()
                ? i
                : layout.minor_to_major[static_cast<size_t>(i)];
        physical.push_back(std::max<int64_t>(
            0, shape.dims[static_cast<size_t>(logical_dim)]));
      }
      const std::vector<int64_t>& tile = layout.tiles.front();
      while (physical.size() < tile.size()) physical.insert(physical.begin(), 1);
      const size_t offset = physical.size() - tile.size();
      padded_elements = 1;
      for (size_t i = 0; i < physical.size(); ++i) {
        std::optional<int64_t> dim = physical[i];
        if (i >= offset && tile[i - offset] > 0) dim = CheckedRoundUpTo(*dim, tile[i - offset]);
        std::optional<int64_t> product = dim ? CheckedMul(padded_elements, *dim) : std::nullopt;
        if (!product) {
          return absl::InvalidArgumentError("padded shape size overflows 64 bits");
        }
        padded_elements = *product;
      }
    }
    if (shape.layout && shape.layout->tail_padding_alignment > 1) {
      std::optional<int64_t> aligned =
          CheckedRoundUpTo(padded_elements, shape.layout->tail_padding_alignment);
      if (!aligned) return absl::InvalidArgumentError("padded shape size overflows 64 bits");
      padded_elements = *aligned;
    }
    std::optional<int64_t> padded_bytes = bytes_for(padded_elements);
    if (!padded_bytes) {
      return absl::InvalidArgumentError("padded shape size overflows 64 bits");
    }
    padded = std::max(*padded_bytes, *logical);
  } else {
    return absl::InvalidArgumentError("invalid element type");
  }

  const ShapeId id = static_cast<ShapeId>(shapes_.size());
  ids_.emplace(shape, id);
  shapes_.push_back(std::move(shape));
  byte_sizes_.push_back(bytes);
  element_counts_.push_back(elements);
  padded_sizes_.push_back(padded);
  subshape_counts_.push_back(subshapes);
  return id;
}

std::optional<ShapeId> ShapeTable::Subshape(ShapeId id,
                                            const ShapeIndex& index) const {
  for (int64_t i : index) {
    const Shape& shape = shapes_[id];
    if (!shape.is_tuple() || i < 0 ||
        i >= static_cast<int64_t>(shape.tuple_elements.size())) {
      return std::nullopt;
    }
    id = shape.tuple_elements[static_cast<size_t>(i)];
  }
  return id;
}

void AppendLayout(const Layout& layout, std::string* out) {
  absl::StrAppend(out, "{", absl::StrJoin(layout.minor_to_major, ","));
  const bool has_extras = !layout.tiles.empty() || layout.element_size_bits ||
                          layout.memory_space || layout.tail_padding_alignment ||
                          layout.dynamic_metadata_prefix || !layout.other.empty();
  if (has_extras) {
    out->push_back(':');
    if (!layout.tiles.empty()) out->push_back('T');
    for (const auto& tile : layout.tiles) {
      out->append("(");
      for (size_t i = 0; i < tile.size(); ++i) {
        if (i) out->push_back(',');
        if (tile[i] < 0) {
          out->push_back('*');
        } else {
          absl::StrAppend(out, tile[i]);
        }
      }
      out->push_back(')');
    }
    if (layout.tail_padding_alignment) {
      absl::StrAppend(out, "L(", layout.tail_padding_alignment, ")");
    }
    if (layout.element_size_bits) {
      absl::StrAppend(out, "E(", layout.element_size_bits, ")");
    }
    if (layout.memory_space) absl::StrAppend(out, "S(", layout.memory_space, ")");
    if (layout.dynamic_metadata_prefix) {
      absl::StrAppend(out, "M(", layout.dynamic_metadata_prefix, ")");
    }
    out->append(layout.other);
  }
  out->push_back('}');
}

bool ShapeTable::AgreeUpToMissingLayoutsSlow(ShapeId a, ShapeId b) const {
  const Shape& x = shapes_[a];
  const Shape& y = shapes_[b];
  if (x.type != y.type || x.dims != y.dims || x.dynamic_dims != y.dynamic_dims ||
      x.tuple_elements.size() != y.tuple_elements.size()) {
    return false;
  }
  if (x.layout && y.layout && !(*x.layout == *y.layout)) return false;
  for (size_t i = 0; i < x.tuple_elements.size(); ++i) {
    if (!AgreeUpToMissingLayouts(x.tuple_elements[i], y.tuple_elements[i])) return false;
  }
  return true;
}

std::string ShapeTable::ToString(ShapeId id, bool with_layout) const {
  const Shape& shape = shapes_[id];
  std::string out;
  if (shape.is_tuple()) {
    out.push_back('(');
    for (size_t i = 0; i < shape.tuple_elements.size(); ++i) {
      if (i) out.append(", ");
      out.append(ToString(shape.tuple_elements[i], with_layout));
    }
    out.push_back(')');
    return out;
  }
  absl::StrAppend(&out, PrimitiveTypeName(shape.type), "[");
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    if (i) out.push_back(',');
    const bool dynamic = !shape.dynamic_dims.empty() && shape.dynamic_dims[i];
    if (dynamic && shape.dims[i] == kUnboundedDimension) {
      out.push_back('?');
    } else {
      if (dynamic) out.append("<=");
      absl::StrAppend(&out, shape.dims[i]);
    }
  }
  out.push_back(']');
  if (with_layout && shape.layout && shape.is_array()) {
    // XLA omits the trivial layout of scalars.
    const Layout& layout = *shape.layout;
    const bool trivial_scalar =
        shape.dims.empty() && layout.tiles.empty() && !layout.element_size_bits &&
        !layout.memory_space && !layout.tail_padding_alignment &&
        !layout.dynamic_metadata_prefix && layout.other.empty();
    if (!trivial_scalar) AppendLayout(layout, &out);
  }
  return out;
}

std::string ShapeIndexToString(const ShapeIndex& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

}  // namespace hlomem::hlo
