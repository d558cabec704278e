// quiver/columnar/batch_shape.h — the one check that a record batch has the
// shape of a schema: as many columns as fields, each of the field's type and
// of the batch's row count (Arrow C++ RecordBatch::ValidateFull's first
// step). Operators check their input batches against the schema they were
// planned for (the IPC writer's, a join's build and probe schemas, a
// relation's build schema); RecordBatch::CheckShape checks a batch against
// its own schema.
//
// The check answers where the first mismatch is, not a message: each
// caller words its own error (the texts are part of their contracts).
//
// Thread safety: pure function over immutable inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiver/columnar/array_data.h"

namespace quiver {

/// The first way a batch differs from a schema's shape.
struct BatchShapeMismatch {
  enum class Kind : uint8_t {
    kNone,         ///< the batch has the shape
    kColumnCount,  ///< batch.columns.size() != schema.fields.size()
    kNoArray,      ///< column `column` (or its type, or the field's type) is missing
    kType,         ///< column `column`'s type differs from the field's (DataType::Equals)
    kLength,       ///< column `column`'s length differs from batch.num_rows
  };
  Kind kind = Kind::kNone;
  /// The column index for kNoArray, kType and kLength; -1 otherwise.
  int column = -1;

  bool ok() const { return kind == Kind::kNone; }
};

/// What FindBatchShapeMismatch compares beyond the column count.
struct BatchShapeCheck {
  /// Compare each checked column's type with its field's.
  bool types = true;
  /// Compare each checked column's length with batch.num_rows.
  bool lengths = true;
  /// The columns to check (indices into the schema, each in range); nullptr
  /// = every column. Not owned; must outlive the call.
  const std::vector<int>* columns = nullptr;
};

/// Compares `batch` with `schema`: first the column count, then the checked
/// columns in order (`check.columns` order, or 0..n-1), per column first
/// kNoArray, then the type (when check.types), then the length (when
/// check.lengths). Returns the first mismatch, or Kind::kNone. The batch's
/// own schema is not looked at. Never fails; reads no buffers.
BatchShapeMismatch FindBatchShapeMismatch(const Schema& schema, const RecordBatch& batch,
                                          const BatchShapeCheck& check = {});

/// The type text of a column or field for shape error messages:
/// type->ToString(), or "<none>" when the array, field or type is missing.
std::string TypeTextOf(const ArrayDataPtr& column);
std::string TypeTextOf(const FieldPtr& field);

}  // namespace quiver
