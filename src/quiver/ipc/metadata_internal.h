// quiver/ipc/metadata_internal.h — conversion between quiver's Schema/Field/DataType
// and the IPC flatbuffer metadata (format/Schema.fbs, Message.fbs, File.fbs),
// plus verification of untrusted metadata bytes.
//
// Internal to the ipc layer (its users see reader.h / writer.h), but
// documented: every function here treats input flatbuffers as untrusted
// after verification, i.e. it checks counts, enum values and nesting.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <flatbuffers/flatbuffers.h>

#include "quiver/columnar/data_type.h"
#include "quiver/ipc/format/File_generated.h"
#include "quiver/ipc/format/Message_generated.h"
#include "quiver/ipc/format/Schema_generated.h"
#include "quiver/ipc/options.h"

namespace quiver::ipc {

/// Verifies `bytes` as a Message flatbuffer (depth and table limits from
/// `options`) and checks its version: V4 or V5 accepted; older versions and
/// versions newer than V5 are refused (NotImplemented naming the version).
/// `bytes` must be 8-byte aligned and outlive the returned pointer.
Result<const fb::Message*> VerifyMessage(std::span<const uint8_t> bytes, const ReadOptions& options);

/// Verifies `bytes` as a Footer flatbuffer. Only versions newer than V5 are
/// refused: pre-0.15 writers left the footer version unset (V1).
Result<const fb::Footer*> VerifyFooter(std::span<const uint8_t> bytes, const ReadOptions& options);

/// Converts verified schema metadata. Invalid names the field path and the
/// bad value (bit width, unit, child count...). NotImplemented for types
/// quiver does not know (a newer union member).
Result<SchemaPtr> SchemaFromFlatbuffer(const fb::Schema* schema, const ReadOptions& options);

/// Serialises a schema into `builder` (dictionary fields carry their value
/// type and a DictionaryEncoding with their id and index type).
flatbuffers::Offset<fb::Schema> SchemaToFlatbuffer(flatbuffers::FlatBufferBuilder& builder, const Schema& schema);

/// Copies custom metadata (Schema, Field or Message custom_metadata) into
/// ordered key/value pairs, keeping order and repeated keys; a missing key
/// or value reads as "" (the Arrow spec leaves both optional); null = none.
/// Pure; the returned strings are copies (no reference to the flatbuffer).
KeyValueMetadata MetadataFrom(const flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>* kvs);

/// Metadata version name ("V4"...).
std::string MetadataVersionName(fb::MetadataVersion version);

}  // namespace quiver::ipc
