// python/src/ipc_files.h — Arrow IPC files read into a Table
// and written from anything capsules.h takes (the GIL released around I/O,
// decoding and compression).
#pragma once

#include <string>

#include "module_support.h"

namespace quiver::python {

std::shared_ptr<Table> ReadIpc(const std::string& path);

void WriteIpc(const py::object& obj, const std::string& path, const std::string& compression,
              const std::string& format);

}  // namespace quiver::python
