// quiver/server/thrift_messages.h — small pieces of the Thrift protocol the
// result service needs everywhere: TStatus replies (with their SQLSTATE),
// Thrift structs as binary-protocol bytes and back, and the sequence id in a
// message header.
//
// Internal to the server layer (includes the generated TCLIService types);
// result_service.h, the public header, stays transport-free. Every function
// is pure and thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "quiver/base/status.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::server {
namespace t = ::quiver::tcli;

/// A SUCCESS_STATUS TStatus.
t::TStatus OkStatus();

/// An error TStatus: `message` as errorMessage and displayMessage,
/// `sql_state` (5 characters), errorCode 4 for INVALID_HANDLE_STATUS and 3
/// otherwise.
t::TStatus ErrorStatus(const std::string& message, t::TStatusCode::type code = t::TStatusCode::ERROR_STATUS,
                       const std::string& sql_state = "HY000");

/// The error's own SQLSTATE (Status::sql_state, set where it was raised),
/// else one for its code (0A000 NotImplemented, 42P01/42703 KeyError,
/// 42601 Invalid, HY008 Cancelled, 53200 OutOfMemory, HY000 otherwise).
std::string SqlStateFor(const Status& st);

/// The sequence id in the header of a Thrift binary-protocol call (strict:
/// version|type, name, seqid; old: name, type byte, seqid), 0 when the
/// header is cut short. The processor validates the message itself.
int32_t ThriftSeqId(std::span<const uint8_t> message);

/// The i32 a Thrift enum field of a request holds, as it came off the wire.
/// The generated reader stores any i32 into the enum-typed field, and reading
/// a value outside the enum's range through that type is undefined behaviour
/// (UBSan's -fsanitize=enum: "load of value 4278190098, which is not a valid
/// value for type 't::TGetInfoType::type'"), so every request enum the server
/// inspects is read through this, as its bytes. Pure, thread-safe.
template <typename E>
int32_t WireEnum(const E& field) {
  static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int32_t), "a Thrift enum field (an i32 on the wire)");
  int32_t value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

/// A Thrift struct as binary-protocol bytes.
template <typename T>
std::string ThriftBytes(const T& value) {
  auto buf = std::make_shared<apache::thrift::transport::TMemoryBuffer>();
  apache::thrift::protocol::TBinaryProtocolT<apache::thrift::transport::TMemoryBuffer> prot(buf);
  value.write(&prot);
  return buf->getBufferAsString();
}

/// Reads a Thrift struct from binary-protocol bytes; false when they do not
/// parse (the struct is then partly filled). `bytes` is only observed.
template <typename T>
bool FromThriftBytes(const std::string& bytes, T* value) {
  using apache::thrift::transport::TMemoryBuffer;
  try {
    auto buf = std::make_shared<TMemoryBuffer>(reinterpret_cast<uint8_t*>(const_cast<char*>(bytes.data())),
                                               static_cast<uint32_t>(bytes.size()), TMemoryBuffer::OBSERVE);
    apache::thrift::protocol::TBinaryProtocolT<TMemoryBuffer> prot(buf);
    value->read(&prot);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace quiver::server
