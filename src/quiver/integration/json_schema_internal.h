// quiver/integration/json_schema_internal.h — the "schema" object of an
// integration JSON document, read and written (not installed API; only
// src/quiver/integration/*.cc include it).
//
// Fields carry name, nullable, type, children, an optional dictionary
// {id, indexType, isOrdered} and optional metadata [{key, value}] (Arrow
// docs "Integration Testing" -> "JSON test data format"; Arrow C++
// cpp/src/arrow/integration/json_internal.cc). Type parameters are checked
// by the validating factories of columnar/data_type.h, so the rules are the
// same as for IPC flatbuffer metadata.
//
// Thread safety: one reader or writer per document, used from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/data_type.h"
#include "quiver/integration/json_value_internal.h"

namespace quiver::integration {

/// Parses the "schema" object; remembers the value type of every dictionary
/// id it meets (the "dictionaries" section is read against them).
class JsonSchemaReader {
 public:
  /// The schema of `j` (the document's "schema" member). Invalid naming the
  /// location ("schema.fields[2](f).children[0](item): ...") on malformed
  /// input, nesting deeper than kJsonIntegrationMaxDepth or one dictionary id
  /// used with two value types; NotImplemented for unknown type names.
  Result<SchemaPtr> ParseSchema(const Json& j);

  /// An "int" type object ({"bitWidth", "isSigned"}): also the dictionary
  /// "indexType". Invalid naming `path` otherwise.
  static Result<DataTypePtr> ParseIntType(const Json& jt, const std::string& path);

  /// Value type of each dictionary id seen by ParseSchema.
  const std::map<int64_t, DataTypePtr>& dictionary_value_types() const { return dict_value_types_; }

 private:
  Status ParseMetadata(const Json& j, const std::string& path, KeyValueMetadata* out);
  Result<DataTypePtr> ParseType(const Json& jt, std::vector<FieldPtr> children, const std::string& path);
  Result<FieldPtr> ParseField(const Json& j, const std::string& path, int depth);

  std::map<int64_t, DataTypePtr> dict_value_types_;
};

/// Writes fields and schema metadata; assigns dictionary ids to
/// dictionary-typed fields that have none (-1).
class JsonSchemaWriter {
 public:
  /// Gives every dictionary-typed field of `schema` whose dictionary_id is -1
  /// an id, in field order (depth first) after the largest id present.
  /// `schema` must outlive this writer (ids are keyed by field address).
  void AssignIds(const Schema& schema);

  /// The field's dictionary id (its own, or the one AssignIds gave it); -1
  /// for a field AssignIds did not see.
  int64_t FieldId(const Field& f) const;

  /// The type object of `t` ({"name": ...} and its parameters); for a
  /// dictionary type, its value type's object.
  OJson TypeJson(const DataType& t) const;

  /// The field object with its children, "dictionary" and "metadata".
  /// Invalid for a field without a type, a null child or nesting deeper than
  /// kJsonIntegrationMaxDepth.
  Result<OJson> FieldJson(const Field& f, int depth) const;

  /// [{"key", "value"}, ...] in order.
  static OJson MetadataJson(const KeyValueMetadata& md);

 private:
  std::map<const Field*, int64_t> assigned_;
  int64_t next_id_ = 0;
};

}  // namespace quiver::integration
