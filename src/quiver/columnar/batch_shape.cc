// quiver/columnar/batch_shape.cc — see batch_shape.h.
#include "quiver/columnar/batch_shape.h"

namespace quiver {
namespace {

BatchShapeMismatch Mismatch(BatchShapeMismatch::Kind kind, int column) {
  BatchShapeMismatch m;
  m.kind = kind;
  m.column = column;
  return m;
}

}  // namespace

BatchShapeMismatch FindBatchShapeMismatch(const Schema& schema, const RecordBatch& batch,
                                          const BatchShapeCheck& check) {
  using Kind = BatchShapeMismatch::Kind;
  if (batch.columns.size() != schema.fields.size()) return Mismatch(Kind::kColumnCount, -1);
  const int n = static_cast<int>(batch.columns.size());
  const int count = check.columns ? static_cast<int>(check.columns->size()) : n;
  for (int k = 0; k < count; ++k) {
    const int c = check.columns ? (*check.columns)[static_cast<size_t>(k)] : k;
    const ArrayDataPtr& a = batch.columns[static_cast<size_t>(c)];
    const FieldPtr& f = schema.fields[static_cast<size_t>(c)];
    if (!a || !a->type || !f || !f->type) return Mismatch(Kind::kNoArray, c);
    if (check.types && !a->type->Equals(*f->type)) return Mismatch(Kind::kType, c);
    if (check.lengths && a->length != batch.num_rows) return Mismatch(Kind::kLength, c);
  }
  return BatchShapeMismatch{};
}

std::string TypeTextOf(const ArrayDataPtr& column) {
  return column && column->type ? column->type->ToString() : std::string("<none>");
}

std::string TypeTextOf(const FieldPtr& field) {
  return field && field->type ? field->type->ToString() : std::string("<none>");
}

}  // namespace quiver
