import protobuf from 'protobufjs';

// The part of Modal's gRPC API (modal-labs/modal-client, modal_proto/api.proto) the `modal`
// environment type speaks, kept wire-compatible: the package, service, method and message names
// and every field number are Modal's; fields this build never sends or reads are left out
// (protobuf skips unknown fields, so the subset decodes Modal's full messages). The test server
// (test/support/vendors/modal.ts) serves the same definitions.
export const MODAL_PROTO = `
syntax = "proto3";
package modal.client;

enum ObjectCreationType {
  OBJECT_CREATION_TYPE_UNSPECIFIED = 0;
  OBJECT_CREATION_TYPE_CREATE_IF_MISSING = 1;
}
enum GenericStatus {
  GENERIC_STATUS_UNSPECIFIED = 0;
  GENERIC_STATUS_SUCCESS = 1;
  GENERIC_STATUS_FAILURE = 2;
  GENERIC_STATUS_TERMINATED = 3;
  GENERIC_STATUS_TIMEOUT = 4;
  GENERIC_STATUS_INIT_FAILURE = 5;
  GENERIC_STATUS_INTERNAL_FAILURE = 6;
  GENERIC_STATUS_IDLE_TIMEOUT = 7;
}
enum FileDescriptor {
  FILE_DESCRIPTOR_UNSPECIFIED = 0;
  FILE_DESCRIPTOR_STDOUT = 1;
  FILE_DESCRIPTOR_STDERR = 2;
}
enum ExecOutputOption {
  EXEC_OUTPUT_OPTION_UNSPECIFIED = 0;
  EXEC_OUTPUT_OPTION_DEVNULL = 1;
  EXEC_OUTPUT_OPTION_PIPE = 2;
  EXEC_OUTPUT_OPTION_STDOUT = 3;
}
enum SystemErrorCode {
  SYSTEM_ERROR_CODE_UNSPECIFIED = 0;
  SYSTEM_ERROR_CODE_PERM = 1;
  SYSTEM_ERROR_CODE_NOENT = 2;
  SYSTEM_ERROR_CODE_IO = 5;
  SYSTEM_ERROR_CODE_NXIO = 6;
  SYSTEM_ERROR_CODE_NOMEM = 12;
  SYSTEM_ERROR_CODE_ACCES = 13;
  SYSTEM_ERROR_CODE_EXIST = 17;
  SYSTEM_ERROR_CODE_NOTDIR = 20;
  SYSTEM_ERROR_CODE_ISDIR = 21;
  SYSTEM_ERROR_CODE_INVAL = 22;
  SYSTEM_ERROR_CODE_MFILE = 24;
  SYSTEM_ERROR_CODE_FBIG = 27;
  SYSTEM_ERROR_CODE_NOSPC = 28;
}

message GenericResult {
  GenericStatus status = 1;
  string exception = 2;
  int32 exitcode = 3;
  string traceback = 4;
}
message SystemErrorMessage {
  SystemErrorCode error_code = 1;
  string error_message = 2;
}
message StringMap {
  map<string, string> contents = 1;
}
message GPUConfig {
  uint32 count = 2;
  string gpu_type = 4;
}
message Resources {
  uint32 memory_mb = 2;
  uint32 milli_cpu = 3;
  GPUConfig gpu_config = 4;
}
message Image {
  repeated string dockerfile_commands = 6;
}

message AppGetOrCreateRequest {
  string app_name = 1;
  string environment_name = 2;
  ObjectCreationType object_creation_type = 3;
}
message AppGetOrCreateResponse {
  string app_id = 1;
}

message ImageGetOrCreateRequest {
  Image image = 2;
  string app_id = 4;
  string builder_version = 9;
}
message ImageGetOrCreateResponse {
  string image_id = 1;
  GenericResult result = 2;
}
message ImageJoinStreamingRequest {
  string image_id = 1;
  float timeout = 2;
  string last_entry_id = 3;
  bool include_logs_for_finished = 4;
}
message ImageJoinStreamingResponse {
  GenericResult result = 1;
  string entry_id = 3;
  bool eof = 4;
}

message Sandbox {
  repeated string entrypoint_args = 1;
  string image_id = 3;
  Resources resources = 5;
  uint32 timeout_secs = 7;
  optional string workdir = 8;
  bool block_network = 11;
  optional string name = 30;
  optional uint32 idle_timeout_secs = 33;
  StringMap environment_variables = 40;
}
message SandboxCreateRequest {
  string app_id = 1;
  Sandbox definition = 2;
}
message SandboxCreateResponse {
  string sandbox_id = 1;
}
message SandboxGetTaskIdRequest {
  string sandbox_id = 1;
  optional float timeout = 2;
  bool wait_until_ready = 3;
}
message SandboxGetTaskIdResponse {
  optional string task_id = 1;
  optional GenericResult task_result = 2;
}
message SandboxWaitRequest {
  string sandbox_id = 1;
  float timeout = 2;
}
message SandboxWaitResponse {
  GenericResult result = 1;
}
message SandboxTerminateRequest {
  string sandbox_id = 1;
}
message SandboxTerminateResponse {
  GenericResult existing_result = 1;
}

message ContainerExecRequest {
  string task_id = 1;
  repeated string command = 2;
  bool terminate_container_on_exit = 4;
  ExecOutputOption stdout_output = 6;
  ExecOutputOption stderr_output = 7;
  uint32 timeout_secs = 8;
  optional string workdir = 9;
}
message ContainerExecResponse {
  string exec_id = 1;
}
message ContainerExecGetOutputRequest {
  string exec_id = 1;
  float timeout = 2;
  uint64 last_batch_index = 3;
  FileDescriptor file_descriptor = 4;
  bool get_raw_bytes = 5;
}
message RuntimeOutputMessage {
  FileDescriptor file_descriptor = 1;
  string message = 2;
  bytes message_bytes = 3;
}
message RuntimeOutputBatch {
  repeated RuntimeOutputMessage items = 1;
  uint64 batch_index = 2;
  optional int32 exit_code = 3;
}
message ContainerExecWaitRequest {
  string exec_id = 1;
  float timeout = 2;
}
message ContainerExecWaitResponse {
  optional int32 exit_code = 1;
  bool completed = 2;
}

message ContainerFileOpenRequest {
  optional string file_descriptor = 1;
  string path = 2;
  string mode = 3;
}
message ContainerFileWriteRequest {
  string file_descriptor = 1;
  bytes data = 2;
}
message ContainerFileReadRequest {
  string file_descriptor = 1;
  optional uint32 n = 2;
}
message ContainerFileCloseRequest {
  string file_descriptor = 1;
}
message ContainerFileLsRequest {
  string path = 1;
}
message ContainerFileMkdirRequest {
  string path = 1;
  bool make_parents = 2;
}
message ContainerFilesystemExecRequest {
  oneof file_exec_request_oneof {
    ContainerFileOpenRequest file_open_request = 1;
    ContainerFileWriteRequest file_write_request = 2;
    ContainerFileReadRequest file_read_request = 3;
    ContainerFileCloseRequest file_close_request = 9;
    ContainerFileLsRequest file_ls_request = 11;
    ContainerFileMkdirRequest file_mkdir_request = 12;
  }
  string task_id = 10;
}
message ContainerFilesystemExecResponse {
  string exec_id = 1;
  optional string file_descriptor = 2;
}
message ContainerFilesystemExecGetOutputRequest {
  string exec_id = 1;
  float timeout = 2;
}
message FilesystemRuntimeOutputBatch {
  repeated bytes output = 1;
  SystemErrorMessage error = 2;
  uint64 batch_index = 3;
  bool eof = 4;
}

service ModalClient {
  rpc AppGetOrCreate(AppGetOrCreateRequest) returns (AppGetOrCreateResponse);
  rpc ContainerExec(ContainerExecRequest) returns (ContainerExecResponse);
  rpc ContainerExecGetOutput(ContainerExecGetOutputRequest) returns (stream RuntimeOutputBatch);
  rpc ContainerExecWait(ContainerExecWaitRequest) returns (ContainerExecWaitResponse);
  rpc ContainerFilesystemExec(ContainerFilesystemExecRequest) returns (ContainerFilesystemExecResponse);
  rpc ContainerFilesystemExecGetOutput(ContainerFilesystemExecGetOutputRequest) returns (stream FilesystemRuntimeOutputBatch);
  rpc ImageGetOrCreate(ImageGetOrCreateRequest) returns (ImageGetOrCreateResponse);
  rpc ImageJoinStreaming(ImageJoinStreamingRequest) returns (stream ImageJoinStreamingResponse);
  rpc SandboxCreate(SandboxCreateRequest) returns (SandboxCreateResponse);
  rpc SandboxGetTaskId(SandboxGetTaskIdRequest) returns (SandboxGetTaskIdResponse);
  rpc SandboxTerminate(SandboxTerminateRequest) returns (SandboxTerminateResponse);
  rpc SandboxWait(SandboxWaitRequest) returns (SandboxWaitResponse);
}
`;

export const MODAL_SERVICE = 'modal.client.ModalClient';

export const GenericStatus = { UNSPECIFIED: 0, SUCCESS: 1, FAILURE: 2, TERMINATED: 3, TIMEOUT: 4, INIT_FAILURE: 5, INTERNAL_FAILURE: 6, IDLE_TIMEOUT: 7 } as const;
export const FileDescriptorNumber = { STDOUT: 1, STDERR: 2 } as const;
export const EXEC_OUTPUT_PIPE = 2;
export const SystemErrorCode = { NOENT: 2, NOTDIR: 20, ISDIR: 21 } as const;

let root: protobuf.Root | undefined;

/** The parsed definitions (parsed once per process). */
export function modalRoot(): protobuf.Root {
  return (root ??= protobuf.parse(MODAL_PROTO, { keepCase: true }).root);
}

export interface ModalMethod {
  /** gRPC path, /modal.client.ModalClient/<Name>. */
  path: string;
  name: string;
  requestType: protobuf.Type;
  responseType: protobuf.Type;
  serverStreaming: boolean;
}

/** Each method of the service with its message types. */
export function modalMethods(): Map<string, ModalMethod> {
  const service = modalRoot().lookupService(MODAL_SERVICE);
  const methods = new Map<string, ModalMethod>();
  for (const method of Object.values(service.methods)) {
    method.resolve();
    methods.set(method.name, {
      path: `/${MODAL_SERVICE}/${method.name}`,
      name: method.name,
      requestType: method.resolvedRequestType!,
      responseType: method.resolvedResponseType!,
      serverStreaming: method.responseStream === true,
    });
  }
  return methods;
}

/** A message as plain data (snake_case keys, 64-bit integers as numbers, bytes as Buffer). */
export function decodeMessage(type: protobuf.Type, bytes: Uint8Array): Record<string, any> { // any: decoded protobuf at the wire edge
  return type.toObject(type.decode(bytes), { longs: Number, enums: Number, bytes: Buffer, defaults: true, oneofs: true }) as Record<string, any>;
}

export function encodeMessage(type: protobuf.Type, value: Record<string, unknown>): Buffer {
  const problem = type.verify(value);
  if (problem) throw new Error(`${type.name}: ${problem}`);
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}
