// quiver/sql/text_position.cc — see text_position.h.
#include "quiver/sql/text_position.h"

namespace quiver::sql {

std::string DescribePosition(std::string_view text, int offset) {
  if (offset < 0) offset = 0;
  if (offset > static_cast<int>(text.size())) offset = static_cast<int>(text.size());
  int line = 1, col = 1;
  for (int i = 0; i < offset; ++i) {
    if (text[static_cast<size_t>(i)] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace quiver::sql
