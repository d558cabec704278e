// quiver/sql/text_position.h — where a byte offset of a statement's text
// is, as error messages name it. The lowest floor of sql/: the Spark
// rewriting, the parser's errors, the binder and the engine use it.
#pragma once

#include <string>
#include <string_view>

namespace quiver::sql {

/// "line L, column C" (1-based; columns count bytes) of byte offset
/// `offset` in `text` (clamped to 0 .. text.size()). Pure; thread-safe.
std::string DescribePosition(std::string_view text, int offset);

}  // namespace quiver::sql
