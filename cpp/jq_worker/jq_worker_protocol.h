#pragma once

// The pipe protocol between the engine (cpp/ketch/functions/codec/jq_worker_client.cc) and
// ketch-jq-worker (jq_worker_main.cc). All integers little-endian, fixed width.
//
// Engine → worker, one request at a time:
//   'C' u32 len, filter bytes                  compile the filter (once, first)
//   'R' u64 max_outputs, u64 max_output_bytes,
//       u32 rows, then per row: u64 len, bytes  run the filter on each JSON text
// Worker → engine:
//   after 'C': u8 ok (1/0), u32 len, message    (message: the compile error when ok = 0)
//   after 'R': per row, as it finishes: u8 tag
//       0 = no output; 1 = output: u64 len, the JSON text; 2 = error: u32 len, the message
//
// The worker exits on end of input (the engine closed the pipe or died) and is killed when the
// engine thread that spawned it exits (PR_SET_PDEATHSIG).

#include <cstdint>

namespace ketch::jq_protocol {

constexpr uint8_t kCompile = 'C';
constexpr uint8_t kRun = 'R';
constexpr uint8_t kNoOutput = 0;
constexpr uint8_t kOutput = 1;
constexpr uint8_t kError = 2;

}  // namespace ketch::jq_protocol
