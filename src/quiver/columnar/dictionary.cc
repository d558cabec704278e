// quiver/columnar/dictionary.cc — see dictionary.h.
#include "quiver/columnar/dictionary.h"

#include <vector>

#include "quiver/columnar/element_load.h"
#include "quiver/columnar/take.h"

namespace quiver {

Result<ArrayDataPtr> DecodeDictionary(const ArrayData& a, MemoryPool* pool, const std::string& what) {
  QUIVER_ASSIGN_OR_RETURN(std::vector<int64_t> idx, DictionaryIndices(a, what));
  return Take(*a.dictionary, idx, pool, what);
}

Result<std::vector<int64_t>> DictionaryIndices(const ArrayData& a, const std::string& what) {
  if (!a.type || a.type->id != TypeId::kDictionary || !a.type->index_type) {
    return Status::Invalid(what + " is not dictionary-encoded");
  }
  if (!a.dictionary) return Status::Invalid(what + " has no dictionary");
  const TypeId index_id = a.type->index_type->id;
  const Buffer* index_buffer = a.buffers.size() > 1 ? a.buffers[1].get() : nullptr;
  if (a.length > 0 && (!IsInteger(index_id) || index_buffer == nullptr)) {
    return Status::Invalid(what + " has dictionary indices of type " + a.type->index_type->ToString() +
                           " without an index buffer or of a non-integer type");
  }
  std::vector<int64_t> idx(static_cast<size_t>(a.length));
  for (int64_t i = 0; i < a.length; ++i) {
    if (!a.IsValid(i)) {
      idx[i] = -1;
      continue;
    }
    idx[i] = LoadIntegerAsInt64(index_id, index_buffer, a.offset + i);
    if (idx[i] < 0 || idx[i] >= a.dictionary->length) {
      return Status::Invalid(what + ": index " + std::to_string(idx[i]) + " at row " + std::to_string(i) +
                             " is outside its dictionary of " + std::to_string(a.dictionary->length));
    }
  }
  return idx;
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
