// quiver/formats/parquet/schema.h — the Parquet schema tree (parquet-format
// README "Nested Encoding", LogicalTypes.md) rebuilt from the footer's
// depth-first SchemaElement list, with each leaf's maximum definition and
// repetition levels, and the Arrow type each field maps to
// (docs/formats.md has the table).
//
// Immutable once built; safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/data_type.h"
#include "quiver/formats/parquet/metadata.h"

namespace quiver::parquet {

struct SchemaNode {
  const SchemaElement* element = nullptr;  ///< into the FileMetaData (which must outlive this)
  int parent = -1;                         ///< node index; -1 for the root
  std::vector<int> children;               ///< node indices
  int leaf_index = -1;                     ///< column chunk index for leaves, else -1
  int16_t max_def = 0, max_rep = 0;        ///< levels at this node (leaves: the column's)
  bool is_leaf() const { return element->num_children == 0 && element->type.has_value(); }
};

struct ParquetSchema {
  /// Node 0 is the root; nodes in depth-first order (as in the footer).
  std::vector<SchemaNode> nodes;
  /// The node of each leaf column, in column-chunk order.
  std::vector<int> leaves;
  /// One Arrow field per child of the root; `fields[i]` maps node
  /// `top_nodes[i]`, whose leaves are [first_leaf[i], first_leaf[i] + num_leaves[i]).
  std::vector<FieldPtr> fields;
  std::vector<int> top_nodes, first_leaf, num_leaves;
  /// The Arrow schema (fields above; the file's key-value metadata).
  SchemaPtr arrow_schema;
};

/// How leaves map to Arrow types.
struct ArrowTypeOptions {
  /// INT32 / INT64 DECIMAL of precision <= 18 as decimal64 (8 bytes a value,
  /// INT32 sign-extended while decoding, INT64 pages decoded in place: the
  /// SQL engine's scans). False: decimal128, as Arrow readers give by
  /// default (what converting a file to IPC or CSV writes).
  bool decimal64 = false;
};

/// Rebuilds the tree from `md.schema` (the root first, then children
/// depth-first). Checks every num_children against the elements left,
/// nesting depth (at most 64), that leaves have a physical type, and that
/// FIXED_LEN_BYTE_ARRAY widths are in 1..2^24. A leaf whose annotation
/// cannot map gets the type of its physical values (never an error here).
/// Errors: Invalid naming the element.
Result<ParquetSchema> BuildSchema(const FileMetaData& md, const ArrowTypeOptions& options = {});

/// For a LIST-annotated group `list_node` (a node index of `s`) whose one
/// child is repeated: true when that repeated node is itself the list's
/// element (LogicalTypes.md "Lists", backward-compatibility rules: the
/// 2-level forms: a primitive, a group of several fields, or a group named
/// "array" or "<list>_tuple"), false when its one child is (3-level).
bool ListElementIsRepeatedNode(const ParquetSchema& s, int list_node);

/// The Arrow type of a primitive (leaf) element's values. Errors:
/// NotImplemented for annotations quiver does not map (naming them),
/// Invalid for a contradictory one (e.g. DECIMAL precision 0).
Result<DataTypePtr> LeafArrowType(const SchemaElement& e, const ArrowTypeOptions& options = {});

}  // namespace quiver::parquet
