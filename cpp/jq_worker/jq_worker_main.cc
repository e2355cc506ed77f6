// ketch-jq-worker: runs jq programs (libjq, the jq 1.6 language) for the engine in a process of
// its own, so that a filter that never ends, allocates without bound or trips one of libjq's
// assertions costs only this process: the engine kills it on cancellation and reports its death
// as an error naming the row. Protocol: jq_worker_protocol.h. argv[1]: the address-space limit in
// bytes (RLIMIT_AS; 0 = none); argv[2]: the engine's pid (exit when it is gone).

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <jq.h>
#include <jv.h>
}

#include "jq_worker/jq_worker_protocol.h"

namespace {

namespace proto = ketch::jq_protocol;

// Put before every program. libjq 1.6 cannot tell error(null) (and `null | error`) from the end of
// a filter's outputs: the row silently gave nothing. These definitions raise "null" instead
// (Daft's message: its jq reports the error value); the inner `error` is jq's own error/0, bound
// before the new error/1 exists, and the new error/0 then calls the new error/1. A program's own
// definitions of error still shadow these. One line, so runtime positions are unchanged.
constexpr char kPrelude[] =
    "def error(f): f as $__ketch_m | if $__ketch_m == null then \"null\" else $__ketch_m end | error; "
    "def error: error(.); ";

bool ReadExact(void* out, size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = read(STDIN_FILENO, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// Replies are buffered and written in blocks of 64 KiB or at the end of a request (one syscall
// per row made the worker 2.5x slower than libjq in-process). When the worker dies, the engine
// finds the row by running the unanswered rows again one at a time.
std::string out_buffer;

void Flush() {
  const char* p = out_buffer.data();
  size_t n = out_buffer.size();
  while (n > 0) {
    const ssize_t put = write(STDOUT_FILENO, p, n);
    if (put <= 0) _exit(0);  // the engine is gone
    p += put;
    n -= static_cast<size_t>(put);
  }
  out_buffer.clear();
}

void WriteExact(const void* data, size_t n) {
  out_buffer.append(static_cast<const char*>(data), n);
  if (out_buffer.size() >= (64u << 10)) Flush();
}

template <typename T>
void Put(T value) {
  WriteExact(&value, sizeof(T));
}

void PutText32(const std::string& text) {
  Put<uint32_t>(static_cast<uint32_t>(text.size()));
  WriteExact(text.data(), text.size());
}

std::string errors;  // the compile errors libjq reports through the callback

void CollectError(void*, jv message) {
  if (!errors.empty()) errors += "; ";
  if (jv_get_kind(message) == JV_KIND_STRING) {
    errors += jv_string_value(message);
    jv_free(message);
  } else {
    jv dumped = jv_dump_string(message, 0);
    errors += jv_string_value(dumped);
    jv_free(dumped);
  }
}

/// Takes ownership of `value`: a string's own text, anything else as compact JSON.
std::string Message(jv value) {
  if (jv_get_kind(value) == JV_KIND_STRING) {
    std::string text(jv_string_value(value), static_cast<size_t>(jv_string_length_bytes(jv_copy(value))));
    jv_free(value);
    return text;
  }
  jv dumped = jv_dump_string(value, 0);
  std::string text(jv_string_value(dumped));
  jv_free(dumped);
  return text;
}

/// Takes ownership of `value`: compact JSON text.
std::string Json(jv value) {
  jv dumped = jv_dump_string(value, 0);
  std::string text(jv_string_value(dumped), static_cast<size_t>(jv_string_length_bytes(jv_copy(dumped))));
  jv_free(dumped);
  return text;
}

std::string WithoutText(std::string message) {
  const auto at = message.find(" (while parsing '");
  if (at != std::string::npos) message.resize(at);
  return message;
}

void RunRow(jq_state* jq, const std::string& text, uint64_t max_outputs, uint64_t max_bytes) {
  jv input = jv_parse_sized(text.data(), static_cast<int>(text.size()));
  if (!jv_is_valid(input)) {
    jv message = jv_invalid_get_msg(input);
    Put<uint8_t>(proto::kError);
    PutText32("invalid JSON: " +
              (jv_get_kind(message) == JV_KIND_NULL ? std::string("?") : WithoutText(Message(message))));
    return;
  }
  jq_start(jq, input, 0);
  std::vector<std::string> outputs;  // each output as compact JSON
  uint64_t bytes = 0;
  while (true) {
    jv next = jq_next(jq);
    if (jv_is_valid(next)) {
      if (outputs.size() >= max_outputs) {
        jv_free(next);
        Put<uint8_t>(proto::kError);
        PutText32("the filter produced more than " + std::to_string(max_outputs) + " outputs for one row");
        return;
      }
      outputs.push_back(Json(next));
      bytes += outputs.back().size() + 1;
      if (bytes > max_bytes) {
        Put<uint8_t>(proto::kError);
        PutText32("the filter's output for one row passed " + std::to_string(max_bytes) + " bytes");
        return;
      }
      continue;
    }
    if (jv_invalid_has_msg(jv_copy(next))) {
      Put<uint8_t>(proto::kError);
      PutText32("jq error: " + Message(jv_invalid_get_msg(next)));
      return;
    }
    jv_free(next);
    break;
  }
  if (jq_halted(jq)) {
    // halt / halt_error: an error for the row (libjq keeps the message; halt alone has none).
    jv message = jq_get_error_message(jq);
    const bool none = !jv_is_valid(message) || jv_get_kind(message) == JV_KIND_NULL;
    const std::string text =
        none ? std::string("the filter halted") : "the filter halted: " + Message(message);
    if (none) jv_free(message);
    Put<uint8_t>(proto::kError);
    PutText32("jq error: " + text);
    return;
  }
  if (outputs.empty()) {
    Put<uint8_t>(proto::kNoOutput);
    return;
  }
  // One output as itself; several as one JSON array of them (every row stays one JSON text).
  std::string joined;
  if (outputs.size() > 1) {
    joined.reserve(bytes + 2);
    joined += '[';
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (k > 0) joined += ',';
      joined += outputs[k];
    }
    joined += ']';
  }
  const std::string& out = outputs.size() == 1 ? outputs[0] : joined;
  Put<uint8_t>(proto::kOutput);
  Put<uint64_t>(out.size());
  WriteExact(out.data(), out.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != static_cast<pid_t>(std::strtoll(argv[2], nullptr, 10))) return 0;  // already gone
    const unsigned long long limit = std::strtoull(argv[1], nullptr, 10);
    if (limit > 0) {
      struct rlimit rl {
        static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)
      };
      setrlimit(RLIMIT_AS, &rl);
    }
  }
  signal(SIGPIPE, SIG_DFL);
  jq_state* jq = nullptr;
  while (true) {
    uint8_t kind = 0;
    if (!ReadExact(&kind, 1)) return 0;
    if (kind == proto::kCompile) {
      uint32_t len = 0;
      if (!ReadExact(&len, sizeof(len))) return 0;
      std::string filter(len, '\0');
      if (!ReadExact(filter.data(), len)) return 0;
      if (jq != nullptr) jq_teardown(&jq);
      jq = jq_init();
      if (jq == nullptr) {
        Put<uint8_t>(0);
        PutText32("jq_init failed");
        Flush();
        continue;
      }
      errors.clear();
      jq_set_error_cb(jq, CollectError, nullptr);
      bool ok = jq_compile(jq, filter.c_str()) != 0;  // the user's text alone: its errors name it
      if (ok) {
        // Compiled again below the prelude (kPrelude), so that error(null) fails the row.
        jq_teardown(&jq);
        jq = jq_init();
        if (jq != nullptr) jq_set_error_cb(jq, CollectError, nullptr);
        ok = jq != nullptr && jq_compile(jq, (std::string(kPrelude) + filter).c_str()) != 0;
      }
      Put<uint8_t>(ok ? 1 : 0);
      PutText32(ok ? std::string() : (errors.empty() ? std::string("does not compile") : errors));
      Flush();
      continue;
    }
    if (kind != proto::kRun || jq == nullptr) return 2;
    uint64_t max_outputs = 0, max_bytes = 0;
    uint32_t rows = 0;
    if (!ReadExact(&max_outputs, 8) || !ReadExact(&max_bytes, 8) || !ReadExact(&rows, 4)) return 0;
    std::string text;
    for (uint32_t i = 0; i < rows; ++i) {
      uint64_t len = 0;
      if (!ReadExact(&len, 8)) return 0;
      text.resize(len);
      if (!ReadExact(text.data(), len)) return 0;
      RunRow(jq, text, max_outputs, max_bytes);
    }
    Flush();
  }
}
