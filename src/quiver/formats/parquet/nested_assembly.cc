#include "quiver/formats/parquet/nested_assembly.h"

#include <string>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/take.h"

namespace quiver::parquet {
namespace {

constexpr int kMaxPlanDepth = 200;  // plan nodes: at most 3 per schema level (64 levels)

/// One Arrow array of the field's type and the levels that shape it.
struct PlanNode {
  enum Kind { kLeaf, kStruct, kList } kind = kLeaf;  // kList: list and map alike
  DataTypePtr type;
  int def = 0;         ///< non-NULL when the definition level reaches this
  int rep = 0;         ///< kList: its own repetition level
  int elem_def = 0;    ///< kList: an element exists when the definition level reaches this
  int leaf = -1;       ///< kLeaf: index among the field's leaves
  int first_leaf = 0;  ///< the leaf whose levels give this array's slots
  std::vector<PlanNode> children;
};

bool Repeated(const SchemaNode& n) { return n.element->repetition == static_cast<int32_t>(Repetition::kRepeated); }

/// Builds the plan by walking the Parquet nodes alongside the Arrow type
/// BuildSchema made of them (its field_of / type_of, which decided between
/// list, map and struct).
class Planner {
 public:
  Planner(const ParquetSchema& s, int first_leaf, int num_leaves)
      : s_(s), first_leaf_(first_leaf), num_leaves_(num_leaves) {}

  // field_of: a repeated node outside a LIST/MAP is a list of its values.
  Result<PlanNode> Field(int n, const DataTypePtr& type, int depth) {
    if (!Repeated(s_.nodes[n])) return Type(n, type, depth);
    QUIVER_RETURN_NOT_OK(Check(type->id == TypeId::kList && type->children.size() == 1, n, depth));
    PlanNode list;
    list.kind = PlanNode::kList;
    list.type = type;
    list.def = s_.nodes[n].max_def - 1;  // never NULL where its parent is not
    list.rep = s_.nodes[n].max_rep;
    list.elem_def = s_.nodes[n].max_def;
    QUIVER_ASSIGN_OR_RETURN(auto element, Type(n, type->children[0]->type, depth + 1));
    list.first_leaf = element.first_leaf;
    list.children.push_back(std::move(element));
    return list;
  }

  // type_of: the values of node n, its own repetition aside.
  Result<PlanNode> Type(int n, const DataTypePtr& type, int depth) {
    QUIVER_RETURN_NOT_OK(Check(depth <= kMaxPlanDepth, n, depth));
    const SchemaNode& node = s_.nodes[n];
    PlanNode p;
    p.type = type;
    p.def = node.max_def;
    if (node.children.empty()) {
      const int leaf = node.leaf_index - first_leaf_;
      QUIVER_RETURN_NOT_OK(Check(leaf >= 0 && leaf < num_leaves_, n, depth));
      p.leaf = leaf;
      p.first_leaf = leaf;
      return p;
    }
    if (type->id == TypeId::kList || type->id == TypeId::kMap) {
      // LIST / MAP: one repeated child (BuildSchema checked the shape).
      QUIVER_RETURN_NOT_OK(Check(node.children.size() == 1 && type->children.size() == 1, n, depth));
      const int r = node.children[0];
      const SchemaNode& rn = s_.nodes[r];
      QUIVER_RETURN_NOT_OK(Check(Repeated(rn), n, depth));
      p.kind = PlanNode::kList;
      p.rep = rn.max_rep;
      p.elem_def = rn.max_def;
      const DataTypePtr& element_type = type->children[0]->type;
      PlanNode element;
      if (type->id == TypeId::kMap) {
        // The entries: a struct<key, value> present wherever an entry is.
        QUIVER_RETURN_NOT_OK(Check(rn.children.size() == 2 && element_type->children.size() == 2, n, depth));
        element.kind = PlanNode::kStruct;
        element.type = element_type;
        element.def = rn.max_def;
        for (int i = 0; i < 2; ++i) {
          QUIVER_ASSIGN_OR_RETURN(auto kv, Field(rn.children[i], element_type->children[i]->type, depth + 2));
          element.children.push_back(std::move(kv));
        }
        element.first_leaf = element.children[0].first_leaf;
      } else if (ListElementIsRepeatedNode(s_, n)) {
        QUIVER_ASSIGN_OR_RETURN(element, Type(r, element_type, depth + 1));  // 2-level: the repeated node
      } else {
        QUIVER_RETURN_NOT_OK(Check(rn.children.size() == 1, n, depth));
        QUIVER_ASSIGN_OR_RETURN(element, Field(rn.children[0], element_type, depth + 2));
      }
      p.first_leaf = element.first_leaf;
      p.children.push_back(std::move(element));
      return p;
    }
    QUIVER_RETURN_NOT_OK(Check(type->id == TypeId::kStruct && type->children.size() == node.children.size(), n, depth));
    p.kind = PlanNode::kStruct;
    for (size_t i = 0; i < node.children.size(); ++i) {
      QUIVER_ASSIGN_OR_RETURN(auto child, Field(node.children[i], type->children[i]->type, depth + 1));
      p.children.push_back(std::move(child));
    }
    p.first_leaf = p.children[0].first_leaf;
    return p;
  }

 private:
  Status Check(bool ok, int n, int depth) const {
    if (ok) return Status::OK();
    if (depth > kMaxPlanDepth) return Status::Invalid("nested deeper than " + std::to_string(kMaxPlanDepth));
    return Status::Invalid("schema element '" + s_.nodes[n].element->name +
                           "' does not have the shape of its Arrow type");
  }

  const ParquetSchema& s_;
  int first_leaf_, num_leaves_;
};

/// A validity bitmap filled as slots are appended; dropped when no slot is
/// NULL.
class ValidityBuilder {
 public:
  Status Init(int64_t slots, MemoryPool* pool) {
    QUIVER_ASSIGN_OR_RETURN(bits_, Buffer::AllocateZeroed(pool, bit_util::BytesForBits(slots)));
    return Status::OK();
  }
  void Append(bool valid) {
    if (valid) {
      bit_util::SetBit(bits_->mutable_data(), length_);
    } else {
      ++nulls_;
    }
    ++length_;
  }
  int64_t length() const { return length_; }
  int64_t nulls() const { return nulls_; }
  std::shared_ptr<Buffer> Finish() { return nulls_ > 0 ? bits_ : nullptr; }

 private:
  std::shared_ptr<Buffer> bits_;
  int64_t length_ = 0, nulls_ = 0;
};

class Assembler {
 public:
  Assembler(std::span<const LeafLevels> leaves, MemoryPool* pool) : leaves_(leaves), pool_(pool) {}

  /// The array of `node` whose slots are the entries at definition level
  /// >= `ra` (the innermost enclosing list has an element there) and
  /// repetition level <= `r` (that list's level); `length`: the slots its
  /// parent expects.
  Result<ArrayDataPtr> Build(const PlanNode& node, int ra, int r, int64_t length) {
    const LeafLevels& lev = leaves_[static_cast<size_t>(node.first_leaf)];
    const uint8_t* rep = lev.rep->data();
    const uint8_t* def = lev.def->data();
    const auto ra8 = static_cast<uint8_t>(ra), r8 = static_cast<uint8_t>(r);
    int64_t slots = 0;
    for (int64_t i = 0; i < lev.count; ++i) slots += def[i] >= ra8 && rep[i] <= r8;
    if (slots != length) {
      return Status::Invalid("leaf column " + std::to_string(node.first_leaf) + " gives " + std::to_string(slots) +
                             " values of " + node.type->ToString() + " where " + std::to_string(length) +
                             " are expected (the leaf columns' levels disagree)");
    }
    if (node.kind == PlanNode::kLeaf) return Leaf(lev, ra8, r8, slots);
    auto out = std::make_shared<ArrayData>();
    out->type = node.type;
    out->length = slots;
    ValidityBuilder validity;
    QUIVER_RETURN_NOT_OK(validity.Init(slots, pool_));
    if (node.kind == PlanNode::kStruct) {
      for (int64_t i = 0; i < lev.count; ++i) {
        if (def[i] >= ra8 && rep[i] <= r8) validity.Append(def[i] >= node.def);
      }
      for (const PlanNode& child : node.children) {
        QUIVER_ASSIGN_OR_RETURN(auto c, Build(child, ra, r, slots));
        out->children.push_back(std::move(c));
      }
      out->null_count = validity.nulls();
      out->buffers = {validity.Finish()};
      return ArrayDataPtr(out);
    }
    // A list (or map): int32 offsets, one more than its slots.
    QUIVER_ASSIGN_OR_RETURN(auto offsets, Buffer::Allocate(pool_, (slots + 1) * 4));
    auto* off = reinterpret_cast<int32_t*>(offsets->mutable_data());
    off[0] = 0;
    const auto own = static_cast<uint8_t>(node.rep);
    const auto elem = static_cast<uint8_t>(node.elem_def);
    int64_t elements = 0, slot = -1;
    bool has_elements = false;  // the current slot (an empty or NULL list takes no more)
    for (int64_t i = 0; i < lev.count; ++i) {
      if (def[i] < ra8 || rep[i] > own) continue;
      if (rep[i] == own) {
        // Another element of the current slot.
        if (!has_elements || def[i] < elem) {
          return Status::Invalid("level entry " + std::to_string(i) + " of leaf column " +
                                 std::to_string(node.first_leaf) + " continues a list of " + node.type->ToString() +
                                 " that has no element (repetition level " + std::to_string(rep[i]) +
                                 ", definition level " + std::to_string(def[i]) + ")");
        }
        ++elements;
      } else {
        if (slot >= 0) off[slot + 1] = static_cast<int32_t>(elements);
        ++slot;
        validity.Append(def[i] >= node.def);
        has_elements = def[i] >= elem;
        if (has_elements) ++elements;
      }
      if (elements > INT32_MAX) {
        return Status::Invalid("over 2^31 - 1 elements of " + node.type->ToString() + " in one row group");
      }
    }
    if (slot >= 0) off[slot + 1] = static_cast<int32_t>(elements);
    QUIVER_ASSIGN_OR_RETURN(auto child, Build(node.children[0], node.elem_def, node.rep, elements));
    if (node.type->id == TypeId::kMap && !child->children.empty() && child->children[0]->null_count != 0) {
      // A key the schema calls optional (LogicalTypes.md: keys are required).
      return Status::Invalid(std::to_string(child->children[0]->null_count) + " NULL keys in a map of " +
                             node.type->ToString());
    }
    out->null_count = validity.nulls();
    out->buffers = {validity.Finish(), std::move(offsets)};
    out->children.push_back(std::move(child));
    return ArrayDataPtr(out);
  }

 private:
  // The leaf's values of the entries that are slots (all of them unless an
  // empty or NULL list above left entries without one).
  Result<ArrayDataPtr> Leaf(const LeafLevels& lev, uint8_t ra, uint8_t r, int64_t slots) {
    if (slots == lev.count) return lev.values;
    QUIVER_ASSIGN_OR_RETURN(auto index_buffer, Buffer::Allocate(pool_, slots * 8));
    auto* idx = reinterpret_cast<int64_t*>(index_buffer->mutable_data());
    int64_t j = 0;
    for (int64_t i = 0; i < lev.count; ++i) {
      if (lev.def->data()[i] >= ra && lev.rep->data()[i] <= r) idx[j++] = i;
    }
    return Take(*lev.values, std::span<const int64_t>(idx, static_cast<size_t>(slots)), pool_, "leaf column");
  }

  std::span<const LeafLevels> leaves_;
  MemoryPool* pool_;
};

}  // namespace

bool IsNestedField(const ParquetSchema& schema, int field) {
  const SchemaNode& node = schema.nodes[schema.top_nodes[field]];
  return schema.num_leaves[field] != 1 || node.leaf_index < 0 || Repeated(node);
}

Result<std::vector<DataTypePtr>> NestedLeafTypes(const ParquetSchema& schema, int field) {
  Planner planner(schema, schema.first_leaf[field], schema.num_leaves[field]);
  QUIVER_ASSIGN_OR_RETURN(auto plan, planner.Field(schema.top_nodes[field], schema.fields[field]->type, 0));
  std::vector<DataTypePtr> types(static_cast<size_t>(schema.num_leaves[field]));
  std::vector<const PlanNode*> stack = {&plan};
  while (!stack.empty()) {
    const PlanNode* n = stack.back();
    stack.pop_back();
    if (n->kind == PlanNode::kLeaf) types[static_cast<size_t>(n->leaf)] = n->type;
    for (const PlanNode& c : n->children) stack.push_back(&c);
  }
  for (const auto& t : types) {
    if (!t) return Status::Invalid("a leaf column of field '" + schema.fields[field]->name + "' has no Arrow type");
  }
  return types;
}

Result<ArrayDataPtr> AssembleNestedField(const ParquetSchema& schema, int field, std::span<const LeafLevels> leaves,
                                         int64_t num_rows, MemoryPool* pool) {
  const int num_leaves = schema.num_leaves[field];
  if (num_leaves == 0) return Status::NotImplemented("a group without leaf columns");
  if (leaves.size() != static_cast<size_t>(num_leaves)) {
    return Status::Invalid(std::to_string(leaves.size()) + " leaf columns for a field of " +
                           std::to_string(num_leaves));
  }
  for (const LeafLevels& l : leaves) {
    if (!l.rep || !l.def || !l.values || l.values->length != l.count) {
      return Status::Invalid("leaf column without levels");
    }
  }
  Planner planner(schema, schema.first_leaf[field], num_leaves);
  QUIVER_ASSIGN_OR_RETURN(auto plan, planner.Field(schema.top_nodes[field], schema.fields[field]->type, 0));
  Assembler assembler(leaves, pool);
  return assembler.Build(plan, 0, 0, num_rows);
}

}  // namespace quiver::parquet
