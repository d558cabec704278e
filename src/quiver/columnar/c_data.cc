// quiver/columnar/c_data.cc — Arrow C Data / C Stream Interface export and
// import (see c_data.h for the contract).
#include "quiver/columnar/c_data.h"
#include "quiver/columnar/layout.h"
#include "quiver/columnar/type_info.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/validate.h"

namespace quiver {
namespace {

// ---- format strings -----------------------------------------------------------

char UnitChar(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return 's';
    case TimeUnit::kMilli: return 'm';
    case TimeUnit::kMicro: return 'u';
    case TimeUnit::kNano: return 'n';
  }
  return 's';
}

std::string UnionCodes(const DataType& type) {
  std::string out;
  for (size_t i = 0; i < type.type_codes.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(type.type_codes[i]);
  }
  return out;
}

// ---- metadata ---------------------------------------------------------------------

std::string EncodeMetadata(const KeyValueMetadata& metadata) {
  if (metadata.empty()) return {};
  std::string out;
  auto put32 = [&](int32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put32(static_cast<int32_t>(metadata.size()));
  for (const auto& [k, v] : metadata) {
    put32(static_cast<int32_t>(k.size()));
    out += k;
    put32(static_cast<int32_t>(v.size()));
    out += v;
  }
  return out;
}

Result<KeyValueMetadata> DecodeMetadata(const char* p) {
  KeyValueMetadata out;
  if (p == nullptr) return out;
  auto get32 = [&]() {
    int32_t v;
    std::memcpy(&v, p, sizeof(v));
    p += sizeof(v);
    return v;
  };
  const int32_t n = get32();
  if (n < 0) return Status::Invalid("C data schema metadata: negative pair count " + std::to_string(n));
  for (int32_t i = 0; i < n; ++i) {
    const int32_t klen = get32();
    if (klen < 0) return Status::Invalid("C data schema metadata: negative key length at pair " + std::to_string(i));
    std::string key(p, static_cast<size_t>(klen));
    p += klen;
    const int32_t vlen = get32();
    if (vlen < 0) return Status::Invalid("C data schema metadata: negative value length at pair " + std::to_string(i));
    std::string value(p, static_cast<size_t>(vlen));
    p += vlen;
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

// ---- schema export ----------------------------------------------------------------

struct SchemaPrivate {
  std::string format;
  std::string name;
  std::string metadata;
  std::vector<ArrowSchema> child_storage;
  std::vector<ArrowSchema*> child_pointers;
  std::unique_ptr<ArrowSchema> dictionary;
};

void ReleaseSchema(ArrowSchema* schema) {
  if (schema == nullptr || schema->release == nullptr) return;
  auto* priv = static_cast<SchemaPrivate*>(schema->private_data);
  for (ArrowSchema* child : priv->child_pointers) {
    if (child->release != nullptr) child->release(child);
  }
  if (priv->dictionary && priv->dictionary->release != nullptr) {
    priv->dictionary->release(priv->dictionary.get());
  }
  delete priv;
  schema->release = nullptr;
  schema->private_data = nullptr;
}

/// Fills `out` from the parts; children are filled by `fill_child(i, out)`.
/// On failure nothing is left allocated and `out` is untouched.
template <typename FillChild>
Status FillSchema(std::string format, std::string name, const KeyValueMetadata& metadata, int64_t flags,
                  size_t num_children, FillChild&& fill_child, const DataType* dictionary_values, ArrowSchema* out) {
  auto priv = std::make_unique<SchemaPrivate>();
  priv->format = std::move(format);
  priv->name = std::move(name);
  priv->metadata = EncodeMetadata(metadata);
  priv->child_storage.resize(num_children);
  priv->child_pointers.resize(num_children);
  size_t filled = 0;
  auto undo = [&]() {
    for (size_t i = 0; i < filled; ++i) ReleaseSchema(&priv->child_storage[i]);
  };
  for (size_t i = 0; i < num_children; ++i) {
    priv->child_storage[i].release = nullptr;
    Status st = fill_child(i, &priv->child_storage[i]);
    if (!st.ok()) {
      undo();
      return st;
    }
    priv->child_pointers[i] = &priv->child_storage[i];
    ++filled;
  }
  if (dictionary_values != nullptr) {
    priv->dictionary = std::make_unique<ArrowSchema>();
    priv->dictionary->release = nullptr;
    Status st = ExportType(*dictionary_values, priv->dictionary.get());
    if (!st.ok()) {
      undo();
      return st;
    }
  }
  out->format = priv->format.c_str();
  out->name = priv->name.c_str();
  out->metadata = priv->metadata.empty() ? nullptr : priv->metadata.data();
  out->flags = flags;
  out->n_children = static_cast<int64_t>(num_children);
  out->children = num_children ? priv->child_pointers.data() : nullptr;
  out->dictionary = priv->dictionary.get();
  out->release = &ReleaseSchema;
  out->private_data = priv.release();
  return Status::OK();
}

Status ExportFieldParts(const std::string& name, const DataType& type, bool nullable, const KeyValueMetadata& metadata,
                        ArrowSchema* out) {
  const bool is_dict = type.id == TypeId::kDictionary;
  if (is_dict && (!type.index_type || !type.value_type)) {
    return Status::Invalid("C data export: dictionary type without index or value type");
  }
  const DataType& layout_type = is_dict ? *type.value_type : type;
  QUIVER_ASSIGN_OR_RETURN(std::string format, CDataFormatOf(type));
  int64_t flags = nullable ? ARROW_FLAG_NULLABLE : 0;
  if (is_dict && type.ordered) flags |= ARROW_FLAG_DICTIONARY_ORDERED;
  if (!is_dict && type.id == TypeId::kMap && type.keys_sorted) flags |= ARROW_FLAG_MAP_KEYS_SORTED;
  // A dictionary field's children are its value type's, carried by the
  // dictionary member; the field itself is its index type (no children).
  const size_t num_children = is_dict ? 0 : layout_type.children.size();
  return FillSchema(
      std::move(format), name, metadata, flags, num_children,
      [&](size_t i, ArrowSchema* child) {
        const FieldPtr& f = type.children[i];
        if (!f || !f->type) return Status::Invalid("C data export: child field " + std::to_string(i) + " has no type");
        return ExportFieldParts(f->name, *f->type, f->nullable, f->metadata, child);
      },
      is_dict ? type.value_type.get() : nullptr, out);
}

// ---- array export -----------------------------------------------------------------

// Non-null pointer for zero-length buffers (some consumers reject null data
// pointers even for empty arrays); zeroed so an empty offsets buffer reads 0.
alignas(64) const int64_t kZeros[4] = {0, 0, 0, 0};

struct ArrayPrivate {
  ArrayDataPtr data;  // keeps every buffer alive
  std::vector<const void*> buffer_pointers;
  std::vector<int64_t> variadic_sizes;
  std::vector<ArrowArray> child_storage;
  std::vector<ArrowArray*> child_pointers;
  std::unique_ptr<ArrowArray> dictionary;
};

void ReleaseArray(ArrowArray* array) {
  if (array == nullptr || array->release == nullptr) return;
  auto* priv = static_cast<ArrayPrivate*>(array->private_data);
  for (ArrowArray* child : priv->child_pointers) {
    if (child->release != nullptr) child->release(child);
  }
  if (priv->dictionary && priv->dictionary->release != nullptr) {
    priv->dictionary->release(priv->dictionary.get());
  }
  delete priv;
  array->release = nullptr;
  array->private_data = nullptr;
}

bool IsViewType(TypeId id) { return id == TypeId::kBinaryView || id == TypeId::kUtf8View; }

// ---- array import -----------------------------------------------------------------

/// Owns an imported ArrowArray (moved in); releases it once, when the last
/// Buffer or ArrayData that references the producer's memory goes.
struct ImportedArray {
  ArrowArray array{};
  ~ImportedArray() {
    if (array.release != nullptr) array.release(&array);
  }
};

struct ImportContext {
  std::shared_ptr<void> owner;
  std::string path;
};

Result<int64_t> Mul(int64_t a, int64_t b, const std::string& what) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return Status::Invalid("C data import: " + what + " overflows int64");
  return out;
}

Result<int64_t> Add(int64_t a, int64_t b, const std::string& what) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return Status::Invalid("C data import: " + what + " overflows int64");
  return out;
}

Result<ArrayDataPtr> ImportArrayRec(const ArrowArray& a, const DataTypePtr& type, const ImportContext& ctx, int depth);

Result<std::shared_ptr<Buffer>> WrapBuffer(const ArrowArray& a, int64_t index, int64_t size_bytes, bool may_be_null,
                                           const ImportContext& ctx) {
  const void* p = a.buffers[index];
  if (p == nullptr) {
    if (may_be_null) return std::shared_ptr<Buffer>();
    if (size_bytes == 0) return Buffer::Unowned(reinterpret_cast<const uint8_t*>(kZeros), 0);
    return Status::Invalid("C data import: " + ctx.path + " buffer " + std::to_string(index) +
                           " is null but must hold " + std::to_string(size_bytes) + " bytes");
  }
  return Buffer::Wrap(static_cast<const uint8_t*>(p), size_bytes, ctx.owner);
}

Result<ArrayDataPtr> ImportArrayRec(const ArrowArray& a, const DataTypePtr& type, const ImportContext& ctx, int depth) {
  if (depth > 64) return Status::Invalid("C data import: nesting deeper than 64 levels at " + ctx.path);
  if (!type) return Status::Invalid("C data import: " + ctx.path + " has no type");
  if (a.length < 0 || a.offset < 0 || a.null_count < -1 || a.n_buffers < 0 || a.n_children < 0) {
    return Status::Invalid("C data import: " + ctx.path + ": negative length " + std::to_string(a.length) +
                           ", offset " + std::to_string(a.offset) + ", null_count " + std::to_string(a.null_count) +
                           " or counts");
  }
  if ((a.n_buffers > 0 && a.buffers == nullptr) || (a.n_children > 0 && a.children == nullptr)) {
    return Status::Invalid("C data import: " + ctx.path + ": null buffers or children pointer");
  }
  const bool is_dict = type->id == TypeId::kDictionary;
  const DataType& t = is_dict ? *type->index_type : *type;
  const TypeId id = t.id;

  // Buffer count.
  const int64_t layout_buffers = NumLayoutBuffers(t);
  int64_t num_variadic = 0;
  if (IsViewType(id)) {
    if (a.n_buffers < 3) {
      return Status::Invalid("C data import: " + ctx.path + ": a view array needs at least 3 buffers, got " +
                             std::to_string(a.n_buffers));
    }
    num_variadic = a.n_buffers - 3;
  } else if (a.n_buffers != layout_buffers) {
    return Status::Invalid("C data import: " + ctx.path + " (" + type->ToString() + "): expected " +
                           std::to_string(layout_buffers) + " buffers, got " + std::to_string(a.n_buffers));
  }
  const size_t expected_children = is_dict ? 0 : t.children.size();
  if (static_cast<size_t>(a.n_children) != expected_children) {
    return Status::Invalid("C data import: " + ctx.path + " (" + type->ToString() + "): expected " +
                           std::to_string(expected_children) + " children, got " + std::to_string(a.n_children));
  }

  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = a.length;
  out->offset = a.offset;
  QUIVER_ASSIGN_OR_RETURN(const int64_t end, Add(a.offset, a.length, ctx.path + " offset + length"));
  out->buffers.resize(static_cast<size_t>(a.n_buffers));

  int first = 0;
  if (HasValidityBitmap(id) || (is_dict)) {
    QUIVER_ASSIGN_OR_RETURN(out->buffers[0], WrapBuffer(a, 0, bit_util::BytesForBits(end), /*may_be_null=*/true, ctx));
    first = 1;
  }
  if (id == TypeId::kNull) first = 0;

  auto fixed = [&](int index, int64_t bit_width) -> Status {
    QUIVER_ASSIGN_OR_RETURN(int64_t bits, Mul(end, bit_width, ctx.path + " data size"));
    QUIVER_ASSIGN_OR_RETURN(out->buffers[index], WrapBuffer(a, index, bit_util::BytesForBits(bits), false, ctx));
    return Status::OK();
  };
  auto offsets_then_data = [&](int width) -> Status {
    const int64_t n_offsets = a.length == 0 && a.buffers[1] == nullptr ? 0 : end + 1;
    QUIVER_ASSIGN_OR_RETURN(int64_t bytes, Mul(n_offsets, width, ctx.path + " offsets size"));
    QUIVER_ASSIGN_OR_RETURN(out->buffers[1], WrapBuffer(a, 1, bytes, false, ctx));
    int64_t data_bytes = 0;
    if (n_offsets > 0) {
      const uint8_t* p = out->buffers[1]->data() + (n_offsets - 1) * width;
      data_bytes = width == 4 ? bit_util::LoadLE<int32_t>(p) : bit_util::LoadLE<int64_t>(p);
      if (data_bytes < 0) {
        return Status::Invalid("C data import: " + ctx.path + ": last offset " + std::to_string(data_bytes) +
                               " is negative");
      }
    }
    if (layout_buffers == 3) {
      QUIVER_ASSIGN_OR_RETURN(out->buffers[2], WrapBuffer(a, 2, data_bytes, false, ctx));
    }
    return Status::OK();
  };

  // The buffers after validity, as the layout table lists them.
  const TypeLayout layout = LayoutOf(t);
  for (int i = first; i < layout.num_buffers; ++i) {
    const BufferLayout& spec = layout.buffers[static_cast<size_t>(i)];
    if (spec.kind == BufferKind::kData) continue;  // wrapped with its offsets
    if (spec.kind == BufferKind::kOffsets) {
      QUIVER_RETURN_NOT_OK(offsets_then_data(spec.element_bits / 8));
    } else if (spec.kind == BufferKind::kValues && spec.element_bits <= 0) {
      return Status::NotImplemented("C data import: " + ctx.path + ": no layout for " + type->ToString());
    } else {
      QUIVER_RETURN_NOT_OK(fixed(i, spec.element_bits));
    }
  }
  if (layout.variadic_data) {
    const int64_t sizes_index = a.n_buffers - 1;
    if (a.buffers[sizes_index] == nullptr && num_variadic > 0) {
      return Status::Invalid("C data import: " + ctx.path + ": the variadic sizes buffer is null");
    }
    const auto* sizes = static_cast<const int64_t*>(a.buffers[sizes_index]);
    for (int64_t v = 0; v < num_variadic; ++v) {
      if (sizes[v] < 0) {
        return Status::Invalid("C data import: " + ctx.path + ": variadic buffer " + std::to_string(v) +
                               " has negative size " + std::to_string(sizes[v]));
      }
      QUIVER_ASSIGN_OR_RETURN(out->buffers[2 + v], WrapBuffer(a, 2 + v, sizes[v], false, ctx));
    }
    out->buffers.resize(static_cast<size_t>(2 + num_variadic));  // quiver keeps no sizes buffer
  }

  // Null count: computed from the bitmap when the producer did not.
  if (!HasValidityBitmap(id) && !is_dict) {
    out->null_count = id == TypeId::kNull ? a.length : 0;
  } else if (a.null_count >= 0) {
    out->null_count = a.null_count;
  } else if (out->buffers[0]) {
    out->null_count = a.length - bit_util::CountSetBits(out->buffers[0]->data(), a.offset, a.length);
  } else {
    out->null_count = 0;
  }
  if (out->null_count > 0 && HasValidityBitmap(id) && !out->buffers[0] && id != TypeId::kNull) {
    return Status::Invalid("C data import: " + ctx.path + ": null_count " + std::to_string(out->null_count) +
                           " without a validity bitmap");
  }

  for (int64_t i = 0; i < a.n_children; ++i) {
    const ArrowArray* child = a.children[i];
    if (child == nullptr)
      return Status::Invalid("C data import: " + ctx.path + ": child " + std::to_string(i) + " is null");
    ImportContext sub{ctx.owner, ctx.path + "." + t.children[static_cast<size_t>(i)]->name};
    QUIVER_ASSIGN_OR_RETURN(auto c, ImportArrayRec(*child, t.children[static_cast<size_t>(i)]->type, sub, depth + 1));
    out->children.push_back(std::move(c));
  }
  if (is_dict) {
    if (a.dictionary == nullptr) return Status::Invalid("C data import: " + ctx.path + ": dictionary array is null");
    ImportContext sub{ctx.owner, ctx.path + ".dictionary"};
    QUIVER_ASSIGN_OR_RETURN(out->dictionary, ImportArrayRec(*a.dictionary, type->value_type, sub, depth + 1));
  } else if (a.dictionary != nullptr) {
    return Status::Invalid("C data import: " + ctx.path + ": a dictionary was given for " + type->ToString());
  }
  return ArrayDataPtr(std::move(out));
}

// ---- type import ------------------------------------------------------------------

Result<int32_t> ParseInt(std::string_view text, const std::string& format) {
  int32_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::Invalid("C data import: bad number '" + std::string(text) + "' in format '" + format + "'");
  }
  return v;
}

Result<FieldPtr> ImportFieldRec(const ArrowSchema& s, int depth);

Result<std::vector<FieldPtr>> ImportChildren(const ArrowSchema& s, int depth) {
  if (s.n_children < 0 || (s.n_children > 0 && s.children == nullptr)) {
    return Status::Invalid("C data import: field '" + std::string(s.name ? s.name : "") + "' has bad children");
  }
  std::vector<FieldPtr> out;
  for (int64_t i = 0; i < s.n_children; ++i) {
    if (s.children[i] == nullptr)
      return Status::Invalid("C data import: child schema " + std::to_string(i) + " is null");
    QUIVER_ASSIGN_OR_RETURN(auto f, ImportFieldRec(*s.children[i], depth + 1));
    out.push_back(std::move(f));
  }
  return out;
}

Result<DataTypePtr> ParseType(const ArrowSchema& s, int depth) {
  if (s.format == nullptr) return Status::Invalid("C data import: null format string");
  const std::string format = s.format;
  std::string_view f = format;
  auto need_children = [&](int64_t n) -> Status {
    if (s.n_children != n) {
      return Status::Invalid("C data import: format '" + format + "' needs " + std::to_string(n) + " children, got " +
                             std::to_string(s.n_children));
    }
    return Status::OK();
  };
  auto leaf = [&](DataTypePtr t) -> Result<DataTypePtr> {
    QUIVER_RETURN_NOT_OK(need_children(0));
    return t;
  };
  if (const std::optional<TypeId> id = LeafTypeIdOfCFormat(f)) return leaf(LeafType(*id));
  auto unit_of = [&](char c) -> Result<TimeUnit> {
    switch (c) {
      case 's': return TimeUnit::kSecond;
      case 'm': return TimeUnit::kMilli;
      case 'u': return TimeUnit::kMicro;
      case 'n': return TimeUnit::kNano;
      default: return Status::Invalid("C data import: bad time unit in format '" + format + "'");
    }
  };
  if (f == "tts") return leaf(time32(TimeUnit::kSecond));
  if (f == "ttm") return leaf(time32(TimeUnit::kMilli));
  if (f == "ttu") return leaf(time64(TimeUnit::kMicro));
  if (f == "ttn") return leaf(time64(TimeUnit::kNano));
  if (f.size() == 3 && f.substr(0, 2) == "tD") {
    QUIVER_ASSIGN_OR_RETURN(auto unit, unit_of(f[2]));
    return leaf(duration(unit));
  }
  if (f.size() >= 4 && f.substr(0, 2) == "ts" && f[3] == ':') {
    QUIVER_ASSIGN_OR_RETURN(auto unit, unit_of(f[2]));
    return leaf(timestamp(unit, std::string(f.substr(4))));
  }
  if (f.substr(0, 2) == "w:") {
    QUIVER_ASSIGN_OR_RETURN(int32_t w, ParseInt(f.substr(2), format));
    if (w < 0) return Status::Invalid("C data import: negative width in '" + format + "'");
    return leaf(fixed_size_binary(w));
  }
  if (f.substr(0, 2) == "d:") {
    std::string_view rest = f.substr(2);
    std::vector<std::string_view> parts;
    while (true) {
      size_t comma = rest.find(',');
      parts.push_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    if (parts.size() < 2 || parts.size() > 3)
      return Status::Invalid("C data import: bad decimal format '" + format + "'");
    QUIVER_ASSIGN_OR_RETURN(int32_t precision, ParseInt(parts[0], format));
    QUIVER_ASSIGN_OR_RETURN(int32_t scale, ParseInt(parts[1], format));
    int32_t bits = 128;
    if (parts.size() == 3) {
      QUIVER_ASSIGN_OR_RETURN(bits, ParseInt(parts[2], format));
    }
    if (bits != 32 && bits != 64 && bits != 128 && bits != 256) {
      return Status::Invalid("C data import: decimal bit width " + std::to_string(bits) + " in '" + format + "'");
    }
    return leaf(decimal(bits, precision, scale));
  }
  if (f.size() >= 2 && f[0] == '+') {
    QUIVER_ASSIGN_OR_RETURN(auto children, ImportChildren(s, depth));
    auto one_child = [&]() -> Status { return need_children(1); };
    if (f == "+l") {
      QUIVER_RETURN_NOT_OK(one_child());
      return list(children[0]);
    }
    if (f == "+L") {
      QUIVER_RETURN_NOT_OK(one_child());
      return large_list(children[0]);
    }
    if (f == "+vl") {
      QUIVER_RETURN_NOT_OK(one_child());
      return list_view(children[0]);
    }
    if (f == "+vL") {
      QUIVER_RETURN_NOT_OK(one_child());
      return large_list_view(children[0]);
    }
    if (f.substr(0, 3) == "+w:") {
      QUIVER_RETURN_NOT_OK(one_child());
      QUIVER_ASSIGN_OR_RETURN(int32_t n, ParseInt(f.substr(3), format));
      if (n < 0) return Status::Invalid("C data import: negative list size in '" + format + "'");
      return fixed_size_list(children[0], n);
    }
    if (f == "+s") return struct_(std::move(children));
    if (f == "+m") {
      QUIVER_RETURN_NOT_OK(one_child());
      if (children[0]->type->id != TypeId::kStruct || children[0]->type->children.size() != 2) {
        return Status::Invalid("C data import: a map's child must be a struct of 2 fields, got " +
                               children[0]->type->ToString());
      }
      return map(children[0], (s.flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0);
    }
    if (f == "+r") {
      QUIVER_RETURN_NOT_OK(need_children(2));
      return run_end_encoded(children[0], children[1]);
    }
    if (f.substr(0, 4) == "+ud:" || f.substr(0, 4) == "+us:" || f == "+ud" || f == "+us") {
      std::vector<int8_t> codes;
      std::string_view rest = f.size() > 4 ? f.substr(4) : std::string_view();
      while (!rest.empty()) {
        size_t comma = rest.find(',');
        QUIVER_ASSIGN_OR_RETURN(int32_t code, ParseInt(rest.substr(0, comma), format));
        if (code < 0 || code > 127) return Status::Invalid("C data import: union type code " + std::to_string(code));
        codes.push_back(static_cast<int8_t>(code));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      if (codes.size() != children.size()) {
        return Status::Invalid("C data import: union format '" + format + "' names " + std::to_string(codes.size()) +
                               " type codes for " + std::to_string(children.size()) + " children");
      }
      return f[2] == 'd' ? dense_union(std::move(children), std::move(codes))
                         : sparse_union(std::move(children), std::move(codes));
    }
  }
  return Status::Invalid("C data import: unknown format string '" + format + "'");
}

Result<FieldPtr> ImportFieldRec(const ArrowSchema& s, int depth) {
  if (depth > 64) return Status::Invalid("C data import: schema nesting deeper than 64 levels");
  QUIVER_ASSIGN_OR_RETURN(DataTypePtr type, ParseType(s, depth));
  if (s.dictionary != nullptr) {
    if (!IsInteger(type->id)) {
      return Status::Invalid("C data import: dictionary index type must be an integer, got " + type->ToString());
    }
    QUIVER_ASSIGN_OR_RETURN(FieldPtr values, ImportFieldRec(*s.dictionary, depth + 1));
    type = dictionary(type, values->type, (s.flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0);
  }
  QUIVER_ASSIGN_OR_RETURN(KeyValueMetadata metadata, DecodeMetadata(s.metadata));
  return field(s.name ? s.name : "", std::move(type), (s.flags & ARROW_FLAG_NULLABLE) != 0, std::move(metadata));
}

/// Calls the producer's release once, whatever happens to the import.
struct SchemaReleaser {
  ArrowSchema* schema;
  ~SchemaReleaser() {
    if (schema != nullptr && schema->release != nullptr) schema->release(schema);
  }
};

// ---- stream export ----------------------------------------------------------------

struct StreamPrivate {
  std::unique_ptr<RecordBatchStream> stream;
  std::string last_error;
};

int ErrnoOf(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalid: return EINVAL;
    case StatusCode::kOutOfMemory: return ENOMEM;
    case StatusCode::kNotImplemented: return ENOSYS;
    case StatusCode::kCancelled: return ECANCELED;
    default: return EIO;
  }
}

int StreamGetSchema(ArrowArrayStream* stream, ArrowSchema* out) {
  auto* priv = static_cast<StreamPrivate*>(stream->private_data);
  Status st = ExportSchema(*priv->stream->schema(), out);
  if (!st.ok()) {
    priv->last_error = st.ToString();
    return ErrnoOf(st);
  }
  return 0;
}

int StreamGetNext(ArrowArrayStream* stream, ArrowArray* out) {
  auto* priv = static_cast<StreamPrivate*>(stream->private_data);
  auto next = priv->stream->Next();
  if (!next.ok()) {
    priv->last_error = next.status().ToString();
    return ErrnoOf(next.status());
  }
  if (*next == nullptr) {
    std::memset(out, 0, sizeof(*out));
    out->release = nullptr;
    return 0;
  }
  Status st = ExportRecordBatch(**next, out);
  if (!st.ok()) {
    priv->last_error = st.ToString();
    return ErrnoOf(st);
  }
  return 0;
}

const char* StreamGetLastError(ArrowArrayStream* stream) {
  auto* priv = static_cast<StreamPrivate*>(stream->private_data);
  return priv->last_error.empty() ? nullptr : priv->last_error.c_str();
}

void StreamRelease(ArrowArrayStream* stream) {
  if (stream == nullptr || stream->release == nullptr) return;
  delete static_cast<StreamPrivate*>(stream->private_data);
  stream->release = nullptr;
  stream->private_data = nullptr;
}

// ---- stream import ----------------------------------------------------------------

class ImportedStream final : public RecordBatchStream {
 public:
  explicit ImportedStream(const ArrowArrayStream& stream) : stream_(stream) {}
  ~ImportedStream() override {
    if (stream_.release != nullptr) stream_.release(&stream_);
  }

  Status Init() {
    ArrowSchema schema{};
    schema.release = nullptr;
    const int rc = stream_.get_schema(&stream_, &schema);
    if (rc != 0) return CallbackError("get_schema", rc);
    QUIVER_ASSIGN_OR_RETURN(schema_, ImportSchema(&schema));
    return Status::OK();
  }

  const SchemaPtr& schema() const override { return schema_; }

  Result<RecordBatchPtr> Next() override {
    if (done_) return RecordBatchPtr();
    ArrowArray array{};
    array.release = nullptr;
    const int rc = stream_.get_next(&stream_, &array);
    if (rc != 0) return CallbackError("get_next", rc);
    if (array.release == nullptr) {
      done_ = true;
      return RecordBatchPtr();
    }
    return ImportRecordBatch(&array, schema_);
  }

 private:
  Status CallbackError(const char* what, int rc) {
    const char* text = stream_.get_last_error ? stream_.get_last_error(&stream_) : nullptr;
    std::string msg = std::string("C stream ") + what + " failed (" + std::strerror(rc) + ")" +
                      (text ? std::string(": ") + text : std::string());
    if (rc == EINVAL) return Status::Invalid(std::move(msg));
    if (rc == ENOMEM) return Status::OutOfMemory(std::move(msg));
    return Status::IOError(std::move(msg));
  }

  ArrowArrayStream stream_;
  SchemaPtr schema_;
  bool done_ = false;
};

}  // namespace

// ---- public: export -----------------------------------------------------------------

Result<std::string> CDataFormatOf(const DataType& type) {
  const TypeInfo& info = TypeInfoOf(type.id);
  std::string out(info.c_format);
  switch (info.params) {
    case TypeParams::kNone:
    case TypeParams::kKeysSorted:  // "+m"; keys_sorted travels in ArrowSchema.flags
      break;
    case TypeParams::kByteWidth: out += std::to_string(type.byte_width); break;
    case TypeParams::kDecimal:
      out += std::to_string(type.precision) + "," + std::to_string(type.scale);
      if (type.bit_width != 128) out += "," + std::to_string(type.bit_width);
      break;
    case TypeParams::kUnit: out += UnitChar(type.unit); break;
    case TypeParams::kUnitAndTimezone:
      out += UnitChar(type.unit);
      out += ":" + type.timezone;
      break;
    case TypeParams::kListSize: out += std::to_string(type.list_size); break;
    case TypeParams::kTypeCodes: out += UnionCodes(type); break;
    case TypeParams::kDictionary:  // the format of the indices; values in ArrowSchema.dictionary
      if (!type.index_type) return Status::Invalid("C data export: dictionary type without an index type");
      return CDataFormatOf(*type.index_type);
  }
  if (out.empty()) return Status::NotImplemented("C data export: no format string for " + type.ToString());
  return out;
}

Status ExportField(const Field& field, ArrowSchema* out) {
  if (!field.type) return Status::Invalid("C data export: field '" + field.name + "' has no type");
  return ExportFieldParts(field.name, *field.type, field.nullable, field.metadata, out);
}

Status ExportType(const DataType& type, ArrowSchema* out) {
  return ExportFieldParts("", type, /*nullable=*/true, {}, out);
}

Status ExportSchema(const Schema& schema, ArrowSchema* out) {
  return FillSchema(
      "+s", "", schema.metadata, 0, schema.fields.size(),
      [&](size_t i, ArrowSchema* child) { return ExportField(*schema.fields[i], child); }, nullptr, out);
}

Status ExportArray(const ArrayDataPtr& array, ArrowArray* out) {
  if (!array || !array->type) return Status::Invalid("C data export: null array or type");
  const DataType& type = *array->type;
  const bool is_dict = type.id == TypeId::kDictionary;
  const DataType& layout = is_dict ? *type.index_type : type;
  const bool is_view = IsViewType(layout.id);
  const size_t layout_buffers = static_cast<size_t>(NumLayoutBuffers(layout));
  if (is_view ? array->buffers.size() < 2 : array->buffers.size() != layout_buffers) {
    return Status::Invalid("C data export: " + type.ToString() + " array has " + std::to_string(array->buffers.size()) +
                           " buffers, its layout has " + std::to_string(layout_buffers));
  }
  const size_t expected_children = is_dict ? 0 : layout.children.size();
  if (array->children.size() != expected_children) {
    return Status::Invalid("C data export: " + type.ToString() + " array has " +
                           std::to_string(array->children.size()) + " children, its type has " +
                           std::to_string(expected_children));
  }
  if (is_dict && !array->dictionary) return Status::Invalid("C data export: dictionary array without its dictionary");

  auto priv = std::make_unique<ArrayPrivate>();
  priv->data = array;
  for (size_t i = 0; i < array->buffers.size(); ++i) {
    const auto& b = array->buffers[i];
    const bool validity = i == 0 && (HasValidityBitmap(layout.id) || is_dict);
    if (b && b->data() != nullptr) {
      priv->buffer_pointers.push_back(b->data());
    } else {
      priv->buffer_pointers.push_back(validity ? nullptr : static_cast<const void*>(kZeros));
    }
  }
  if (is_view) {
    for (size_t i = 2; i < array->buffers.size(); ++i) {
      priv->variadic_sizes.push_back(array->buffers[i] ? array->buffers[i]->size() : 0);
    }
    priv->buffer_pointers.push_back(priv->variadic_sizes.empty() ? static_cast<const void*>(kZeros)
                                                                 : priv->variadic_sizes.data());
  }
  const size_t n = array->children.size();
  priv->child_storage.resize(n);
  priv->child_pointers.resize(n);
  size_t filled = 0;
  auto undo = [&]() {
    for (size_t i = 0; i < filled; ++i) ReleaseArray(&priv->child_storage[i]);
    if (priv->dictionary) ReleaseArray(priv->dictionary.get());
  };
  for (size_t i = 0; i < n; ++i) {
    priv->child_storage[i].release = nullptr;
    Status st = ExportArray(array->children[i], &priv->child_storage[i]);
    if (!st.ok()) {
      undo();
      return st;
    }
    priv->child_pointers[i] = &priv->child_storage[i];
    ++filled;
  }
  if (is_dict) {
    priv->dictionary = std::make_unique<ArrowArray>();
    priv->dictionary->release = nullptr;
    Status st = ExportArray(array->dictionary, priv->dictionary.get());
    if (!st.ok()) {
      undo();
      return st;
    }
  }
  out->length = array->length;
  out->null_count = array->null_count;
  out->offset = array->offset;
  out->n_buffers = static_cast<int64_t>(priv->buffer_pointers.size());
  out->n_children = static_cast<int64_t>(n);
  out->buffers = priv->buffer_pointers.empty() ? nullptr : priv->buffer_pointers.data();
  out->children = n ? priv->child_pointers.data() : nullptr;
  out->dictionary = priv->dictionary.get();
  out->release = &ReleaseArray;
  out->private_data = priv.release();
  return Status::OK();
}

Status ExportRecordBatch(const RecordBatch& batch, ArrowArray* out, ArrowSchema* out_schema) {
  if (!batch.schema) return Status::Invalid("C data export: record batch without a schema");
  QUIVER_RETURN_NOT_OK(batch.CheckShape());
  auto as_struct = std::make_shared<ArrayData>();
  as_struct->type = struct_(batch.schema->fields);
  as_struct->length = batch.num_rows;
  as_struct->buffers = {nullptr};
  as_struct->children = batch.columns;
  ArrowSchema schema{};
  schema.release = nullptr;
  if (out_schema != nullptr) QUIVER_RETURN_NOT_OK(ExportSchema(*batch.schema, &schema));
  Status st = ExportArray(as_struct, out);
  if (!st.ok()) {
    if (schema.release) schema.release(&schema);
    return st;
  }
  if (out_schema != nullptr) *out_schema = schema;
  return Status::OK();
}

Status ExportRecordBatchStream(std::unique_ptr<RecordBatchStream> stream, ArrowArrayStream* out) {
  if (!stream) return Status::Invalid("C stream export: null stream");
  auto priv = std::make_unique<StreamPrivate>();
  priv->stream = std::move(stream);
  out->get_schema = &StreamGetSchema;
  out->get_next = &StreamGetNext;
  out->get_last_error = &StreamGetLastError;
  out->release = &StreamRelease;
  out->private_data = priv.release();
  return Status::OK();
}

// ---- public: import -----------------------------------------------------------------

Result<FieldPtr> ImportField(ArrowSchema* schema) {
  if (schema == nullptr || schema->release == nullptr)
    return Status::Invalid("C data import: released or null ArrowSchema");
  SchemaReleaser releaser{schema};
  return ImportFieldRec(*schema, 0);
}

Result<DataTypePtr> ImportType(ArrowSchema* schema) {
  QUIVER_ASSIGN_OR_RETURN(FieldPtr f, ImportField(schema));
  return f->type;
}

Result<SchemaPtr> ImportSchema(ArrowSchema* schema) {
  if (schema == nullptr || schema->release == nullptr)
    return Status::Invalid("C data import: released or null ArrowSchema");
  SchemaReleaser releaser{schema};
  if (schema->format == nullptr || std::string_view(schema->format) != "+s") {
    return Status::Invalid(std::string("C data import: a schema must be a struct (\"+s\"), got format '") +
                           (schema->format ? schema->format : "(null)") + "'");
  }
  QUIVER_ASSIGN_OR_RETURN(auto fields, ImportChildren(*schema, 0));
  auto out = std::make_shared<Schema>();
  out->fields = std::move(fields);
  QUIVER_ASSIGN_OR_RETURN(out->metadata, DecodeMetadata(schema->metadata));
  return SchemaPtr(std::move(out));
}

Result<ArrayDataPtr> ImportArray(ArrowArray* array, const DataTypePtr& type) {
  if (array == nullptr || array->release == nullptr)
    return Status::Invalid("C data import: released or null ArrowArray");
  auto owner = std::make_shared<ImportedArray>();
  owner->array = *array;
  array->release = nullptr;
  ImportContext ctx{owner, "array"};
  QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr out, ImportArrayRec(owner->array, type, ctx, 0));
  QUIVER_RETURN_NOT_OK(ValidateArray(*out, ValidationLevel::kStructural, "imported array"));
  return out;
}

Result<RecordBatchPtr> ImportRecordBatch(ArrowArray* array, const SchemaPtr& schema) {
  if (!schema) {
    if (array && array->release) array->release(array);
    return Status::Invalid("C data import: record batch without a schema");
  }
  QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr as_struct, ImportArray(array, struct_(schema->fields)));
  if (as_struct->null_count > 0) {
    return Status::Invalid("C data import: a record batch struct array has " + std::to_string(as_struct->null_count) +
                           " top-level nulls");
  }
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = as_struct->length;
  for (const auto& child : as_struct->children) {
    if (as_struct->offset != 0 || child->length != as_struct->length) {
      QUIVER_ASSIGN_OR_RETURN(auto sliced, SliceArray(child, as_struct->offset, as_struct->length));
      batch->columns.push_back(std::move(sliced));
    } else {
      batch->columns.push_back(child);
    }
  }
  QUIVER_RETURN_NOT_OK(batch->CheckShape());
  return RecordBatchPtr(std::move(batch));
}

Result<std::unique_ptr<RecordBatchStream>> ImportRecordBatchStream(ArrowArrayStream* stream) {
  if (stream == nullptr || stream->release == nullptr)
    return Status::Invalid("C stream import: released or null stream");
  auto out = std::make_unique<ImportedStream>(*stream);
  stream->release = nullptr;
  QUIVER_RETURN_NOT_OK(out->Init());
  return std::unique_ptr<RecordBatchStream>(std::move(out));
}

}  // namespace quiver
