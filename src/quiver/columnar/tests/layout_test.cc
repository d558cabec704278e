// Tests of the layout table (LayoutOf, MinBufferBytes, ByteSwapBuffer) and
// of the type-id visitor (VisitTypeId, VisitIntegerType, TypeTraits) and
// of VisitValueType.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "quiver/columnar/layout.h"
#include "quiver/columnar/type_visit.h"
#include "quiver/columnar/value_visit.h"

namespace quiver {
namespace {

std::string SwapName(ByteSwapRule rule) {
  switch (rule) {
    case ByteSwapRule::kNone: return "";
    case ByteSwapRule::k2: return "/swap2";
    case ByteSwapRule::k4: return "/swap4";
    case ByteSwapRule::k8: return "/swap8";
    case ByteSwapRule::k16: return "/swap16";
    case ByteSwapRule::k32: return "/swap32";
    case ByteSwapRule::kMonthDayNano: return "/swap-mdn";
    case ByteSwapRule::kViews: return "/swap-views";
  }
  return "/?";
}

std::string ChildRowsName(ChildRows rows) {
  switch (rows) {
    case ChildRows::kNone: return "none";
    case ChildRows::kByOffsets: return "offsets";
    case ChildRows::kByListViews: return "list-views";
    case ChildRows::kFixedSize: return "fixed-size";
    case ChildRows::kSameRows: return "same-rows";
    case ChildRows::kByUnionOffsets: return "union-offsets";
    case ChildRows::kByRunEnds: return "run-ends";
  }
  return "?";
}

// "validity:1 offsets:32/swap4 data:8 | children=none", "+variadic" for views.
std::string Describe(const TypeLayout& layout) {
  std::string out;
  for (int i = 0; i < layout.num_buffers; ++i) {
    const BufferLayout& b = layout.buffers[static_cast<size_t>(i)];
    if (!out.empty()) out += " ";
    out += std::string(BufferKindName(b.kind)) + ":" + std::to_string(b.element_bits) + SwapName(b.swap);
  }
  if (layout.variadic_data) out += " +variadic";
  return out + " | children=" + ChildRowsName(layout.child_rows);
}

struct LayoutRow {
  DataTypePtr type;
  std::string expected;
};

FieldPtr F(const char* name, DataTypePtr type) { return field(name, std::move(type)); }

// One row per TypeId (the coverage test below checks that no id is missing).
std::vector<LayoutRow> LayoutTable() {
  return {
      {null(), " | children=none"},
      {boolean(), "validity:1 values:1 | children=none"},
      {int8(), "validity:1 values:8 | children=none"},
      {int16(), "validity:1 values:16/swap2 | children=none"},
      {int32(), "validity:1 values:32/swap4 | children=none"},
      {int64(), "validity:1 values:64/swap8 | children=none"},
      {uint8(), "validity:1 values:8 | children=none"},
      {uint16(), "validity:1 values:16/swap2 | children=none"},
      {uint32(), "validity:1 values:32/swap4 | children=none"},
      {uint64(), "validity:1 values:64/swap8 | children=none"},
      {float16(), "validity:1 values:16/swap2 | children=none"},
      {float32(), "validity:1 values:32/swap4 | children=none"},
      {float64(), "validity:1 values:64/swap8 | children=none"},
      {binary(), "validity:1 offsets:32/swap4 data:8 | children=none"},
      {utf8(), "validity:1 offsets:32/swap4 data:8 | children=none"},
      {large_binary(), "validity:1 offsets:64/swap8 data:8 | children=none"},
      {large_utf8(), "validity:1 offsets:64/swap8 data:8 | children=none"},
      {binary_view(), "validity:1 views:128/swap-views +variadic | children=none"},
      {utf8_view(), "validity:1 views:128/swap-views +variadic | children=none"},
      {fixed_size_binary(3), "validity:1 values:24 | children=none"},
      {decimal(128, 10, 2), "validity:1 values:128/swap16 | children=none"},
      {date32(), "validity:1 values:32/swap4 | children=none"},
      {date64(), "validity:1 values:64/swap8 | children=none"},
      {time32(TimeUnit::kMilli), "validity:1 values:32/swap4 | children=none"},
      {time64(TimeUnit::kNano), "validity:1 values:64/swap8 | children=none"},
      {timestamp(TimeUnit::kMicro, "UTC"), "validity:1 values:64/swap8 | children=none"},
      {duration(TimeUnit::kSecond), "validity:1 values:64/swap8 | children=none"},
      {interval_year_month(), "validity:1 values:32/swap4 | children=none"},
      {interval_day_time(), "validity:1 values:64/swap4 | children=none"},
      {interval_month_day_nano(), "validity:1 values:128/swap-mdn | children=none"},
      {list(F("item", int32())), "validity:1 offsets:32/swap4 | children=offsets"},
      {large_list(F("item", int32())), "validity:1 offsets:64/swap8 | children=offsets"},
      {list_view(F("item", int32())), "validity:1 list view offsets:32/swap4 sizes:32/swap4 | children=list-views"},
      {large_list_view(F("item", int32())),
       "validity:1 list view offsets:64/swap8 sizes:64/swap8 | children=list-views"},
      {fixed_size_list(F("item", int32()), 3), "validity:1 | children=fixed-size"},
      {struct_({F("a", int32())}), "validity:1 | children=same-rows"},
      {map(F("entries", struct_({field("key", utf8(), false), F("value", int32())}))),
       "validity:1 offsets:32/swap4 | children=offsets"},
      {sparse_union({F("a", int32())}, {0}), "type ids:8 | children=same-rows"},
      {dense_union({F("a", int32())}, {0}), "type ids:8 union offsets:32/swap4 | children=union-offsets"},
      {run_end_encoded(F("run_ends", int32()), F("values", utf8())), " | children=run-ends"},
      {dictionary(int16(), utf8()), "validity:1 values:16/swap2 | children=none"},
  };
}

TEST(LayoutTest, TableOfEveryTypeId) {
  std::set<TypeId> seen;
  for (const LayoutRow& row : LayoutTable()) {
    SCOPED_TRACE(row.type->ToString());
    seen.insert(row.type->id);
    const TypeLayout layout = LayoutOf(*row.type);
    EXPECT_EQ(Describe(layout), row.expected);
    EXPECT_EQ(layout.num_buffers, NumLayoutBuffers(*row.type));
    EXPECT_EQ(layout.has_validity,
              HasValidityBitmap(row.type->id == TypeId::kDictionary ? row.type->index_type->id : row.type->id));
  }
  for (int i = 0; i < kNumTypeIds; ++i) {
    EXPECT_TRUE(seen.count(static_cast<TypeId>(i))) << "type id " << i << " has no row";
  }
}

TEST(LayoutTest, BufferNamesAreTheRolesInErrorMessages) {
  const TypeLayout lv = LayoutOf(*list_view(F("item", int32())));
  EXPECT_EQ(lv.buffers[1].name, "offsets");
  EXPECT_EQ(lv.buffers[2].name, "sizes");
  const TypeLayout du = LayoutOf(*dense_union({F("a", int32())}, {0}));
  EXPECT_EQ(du.buffers[0].name, "type ids");
  EXPECT_EQ(du.buffers[1].name, "offsets");
  EXPECT_EQ(LayoutOf(*utf8()).buffers[2].name, "data");
  EXPECT_EQ(LayoutOf(*int32()).buffers[0].name, "validity");
  EXPECT_EQ(LayoutOf(*utf8_view()).buffers[1].name, "views");
}

TEST(LayoutTest, DegenerateTypesStillHaveALayout) {
  DataType dict;
  dict.id = TypeId::kDictionary;  // no index type: laid out as int32 indices
  EXPECT_EQ(Describe(LayoutOf(dict)), "validity:1 values:32/swap4 | children=none");
  // A width whose bit count overflows int32 has 0-bit values (validation
  // rejects the type before any buffer is read).
  EXPECT_EQ(Describe(LayoutOf(*fixed_size_binary(INT32_MAX))), "validity:1 values:0 | children=none");
}

TEST(LayoutTest, MinBufferBytes) {
  const TypeLayout s = LayoutOf(*utf8());
  EXPECT_EQ(MinBufferBytes(s.buffers[0], 9), 2);   // validity: ceil(9 / 8)
  EXPECT_EQ(MinBufferBytes(s.buffers[1], 9), 40);  // offsets: 10 int32
  EXPECT_EQ(MinBufferBytes(s.buffers[1], 0), 4);
  EXPECT_EQ(MinBufferBytes(s.buffers[2], 9), 0);  // data: sized by the offsets
  EXPECT_EQ(MinBufferBytes(LayoutOf(*boolean()).buffers[1], 17), 3);
  EXPECT_EQ(MinBufferBytes(LayoutOf(*decimal(256, 40, 0)).buffers[1], 2), 64);
  EXPECT_EQ(MinBufferBytes(LayoutOf(*utf8_view()).buffers[1], 3), 48);
  const TypeLayout du = LayoutOf(*dense_union({F("a", int32())}, {0}));
  EXPECT_EQ(MinBufferBytes(du.buffers[0], 5), 5);
  EXPECT_EQ(MinBufferBytes(du.buffers[1], 5), 20);
  EXPECT_EQ(MinBufferBytes(LayoutOf(*int64()).buffers[1], INT64_MAX / 8), -1);  // overflow
  EXPECT_EQ(MinBufferBytes(s.buffers[1], INT64_MAX), -1);
}

TEST(LayoutTest, ByteSwapBufferFollowsTheRule) {
  uint8_t four[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ByteSwapBuffer(four, 8, ByteSwapRule::k4);
  EXPECT_EQ(std::vector<uint8_t>(four, four + 8), (std::vector<uint8_t>{4, 3, 2, 1, 8, 7, 6, 5}));
  uint8_t mdn[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  ByteSwapBuffer(mdn, 16, ByteSwapRule::kMonthDayNano);
  EXPECT_EQ(std::vector<uint8_t>(mdn, mdn + 16),
            (std::vector<uint8_t>{4, 3, 2, 1, 8, 7, 6, 5, 16, 15, 14, 13, 12, 11, 10, 9}));
  uint8_t none[3] = {1, 2, 3};
  ByteSwapBuffer(none, 3, ByteSwapRule::kNone);
  EXPECT_EQ(none[0], 1);
}

TEST(TypeVisitTest, VisitsEveryIdWithItsTag) {
  for (int i = 0; i < kNumTypeIds; ++i) {
    const auto id = static_cast<TypeId>(i);
    EXPECT_EQ(VisitTypeId(id, []<TypeId kId>(TypeIdTag<kId>) { return kId; }), id);
  }
}

TEST(TypeVisitTest, TraitsGiveTheElementTypes) {
  static_assert(std::is_same_v<TypeTraits<TypeId::kInt16>::CType, int16_t>);
  static_assert(std::is_same_v<TypeTraits<TypeId::kTimestamp>::CType, int64_t>);
  static_assert(std::is_same_v<TypeTraits<TypeId::kLargeUtf8>::OffsetType, int64_t>);
  static_assert(std::is_same_v<TypeTraits<TypeId::kStruct>::CType, void>);
  static_assert(TypeTraits<TypeId::kUInt64>::kIsInteger && !TypeTraits<TypeId::kUInt64>::kIsSigned);
  static_assert(!TypeTraits<TypeId::kDate32>::kIsInteger);
  auto width = [](TypeId id) {
    return VisitIntegerType(
        id, []<typename T>() { return static_cast<int>(sizeof(T)); }, [] { return 0; });
  };
  EXPECT_EQ(width(TypeId::kInt8), 1);
  EXPECT_EQ(width(TypeId::kUInt32), 4);
  EXPECT_EQ(width(TypeId::kInt64), 8);
  EXPECT_EQ(width(TypeId::kDate32), 0);
  EXPECT_EQ(width(TypeId::kUtf8), 0);
}

TEST(TypeVisitTest, ValueTypeIsTheElementOfTheValuesBuffer) {
  // -1: not visited as a fixed-width element; 0: bit-packed; else the
  // element's bytes, negated for floating point.
  auto width = [](const DataType& type) {
    return VisitValueType(
        type,
        []<typename T>() -> int {
          if constexpr (std::is_same_v<T, PackedBit>) {
            return 0;
          } else if constexpr (std::is_floating_point_v<T>) {
            return -static_cast<int>(sizeof(T));
          } else {
            return static_cast<int>(sizeof(T));
          }
        },
        [] { return -1; });
  };
  EXPECT_EQ(width(*boolean()), 0);
  EXPECT_EQ(width(*int8()), 1);
  EXPECT_EQ(width(*date32()), 4);
  EXPECT_EQ(width(*timestamp(TimeUnit::kMicro)), 8);
  EXPECT_EQ(width(*float64()), -8);
  EXPECT_EQ(width(*float32()), -4);
  EXPECT_EQ(width(*float16()), 2);  // its uint16 bits
  EXPECT_EQ(width(*decimal(32, 9, 2)), 4);
  EXPECT_EQ(width(*decimal(128, 38, 2)), 16);
  EXPECT_EQ(width(*decimal(256, 40, 2)), -1);
  EXPECT_EQ(width(*utf8()), -1);
  EXPECT_EQ(width(*null()), -1);
}

}  // namespace
}  // namespace quiver
