// quiver/columnar/dictionary.cc — see dictionary.h.
#include "quiver/columnar/dictionary.h"

#include <cstring>
#include <vector>

#include "quiver/columnar/take.h"

namespace quiver {
namespace {

template <typename T>
void LoadIndices(const uint8_t* data, int64_t offset, int64_t n, int64_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, data + (offset + i) * static_cast<int64_t>(sizeof(T)), sizeof(T));
    out[i] = static_cast<int64_t>(v);
  }
}

// Rows [0, n) of the index buffer of `a` (offset applied) as int64; false
// when the index type is not an integer type.
bool LoadIndicesAsInt64(const ArrayData& a, const DataType& index_type, int64_t n, int64_t* out) {
  if (n == 0) return true;
  if (a.buffers.size() < 2 || !a.buffers[1]) return false;
  const uint8_t* data = a.buffers[1]->data();
  switch (index_type.id) {
    case TypeId::kInt8: LoadIndices<int8_t>(data, a.offset, n, out); return true;
    case TypeId::kInt16: LoadIndices<int16_t>(data, a.offset, n, out); return true;
    case TypeId::kInt32: LoadIndices<int32_t>(data, a.offset, n, out); return true;
    case TypeId::kInt64: LoadIndices<int64_t>(data, a.offset, n, out); return true;
    case TypeId::kUInt8: LoadIndices<uint8_t>(data, a.offset, n, out); return true;
    case TypeId::kUInt16: LoadIndices<uint16_t>(data, a.offset, n, out); return true;
    case TypeId::kUInt32: LoadIndices<uint32_t>(data, a.offset, n, out); return true;
    case TypeId::kUInt64: LoadIndices<uint64_t>(data, a.offset, n, out); return true;
    default: return false;
  }
}

}  // namespace

Result<ArrayDataPtr> DecodeDictionary(const ArrayData& a, MemoryPool* pool, const std::string& what) {
  if (!a.type || a.type->id != TypeId::kDictionary || !a.type->index_type) {
    return Status::Invalid(what + " is not dictionary-encoded");
  }
  if (!a.dictionary) return Status::Invalid(what + " has no dictionary");
  std::vector<int64_t> idx(static_cast<size_t>(a.length));
  if (!LoadIndicesAsInt64(a, *a.type->index_type, a.length, idx.data())) {
    return Status::Invalid(what + " has dictionary indices of type " + a.type->index_type->ToString() +
                           " without an index buffer or of a non-integer type");
  }
  for (int64_t i = 0; i < a.length; ++i) {
    if (!a.IsValid(i)) {
      idx[i] = -1;
    } else if (idx[i] < 0 || idx[i] >= a.dictionary->length) {
      return Status::Invalid(what + ": index " + std::to_string(idx[i]) + " at row " + std::to_string(i) +
                             " is outside its dictionary of " + std::to_string(a.dictionary->length));
    }
  }
  return Take(*a.dictionary, idx, pool, what);
}

Result<SchemaPtr> DecodedSchema(const SchemaPtr& schema, bool* any) {
  *any = false;
  auto out = std::make_shared<Schema>(*schema);
  for (auto& f : out->fields) {
    if (f->type->id != TypeId::kDictionary) continue;
    if (!f->type->value_type || f->type->value_type->id == TypeId::kDictionary) {
      return Status::NotImplemented("column '" + f->name + "' is a dictionary of dictionaries");
    }
    f = field(f->name, f->type->value_type, f->nullable, f->metadata);
    *any = true;
  }
  return SchemaPtr(out);
}

Result<RecordBatchPtr> DecodeDictionaries(const RecordBatchPtr& batch, MemoryPool* pool) {
  bool any = false;
  for (const auto& c : batch->columns) any |= c->type->id == TypeId::kDictionary;
  if (!any) return batch;
  bool schema_any = false;
  QUIVER_ASSIGN_OR_RETURN(SchemaPtr plain, DecodedSchema(batch->schema, &schema_any));
  auto out = std::make_shared<RecordBatch>();
  out->schema = plain;
  out->num_rows = batch->num_rows;
  for (size_t c = 0; c < batch->columns.size(); ++c) {
    const ArrayData& a = *batch->columns[c];
    if (a.type->id != TypeId::kDictionary) {
      out->columns.push_back(batch->columns[c]);
      continue;
    }
    const std::string what =
        "column '" + (c < batch->schema->fields.size() ? batch->schema->fields[c]->name : "?") + "'";
    QUIVER_ASSIGN_OR_RETURN(auto plain_col, DecodeDictionary(a, pool, what));
    out->columns.push_back(std::move(plain_col));
  }
  return RecordBatchPtr(out);
}

}  // namespace quiver
