#include "ketch/functions/codec/jq_worker_client.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "jq_worker/jq_worker_protocol.h"

namespace ketch::codec {
namespace {

namespace proto = ketch::jq_protocol;

std::string WorkerPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&WorkerPath), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    std::string beside =
        (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/ketch-jq-worker";
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
#ifdef KETCH_JQ_WORKER_BUILD_PATH
  return KETCH_JQ_WORKER_BUILD_PATH;
#else
  return "ketch-jq-worker";
#endif
}

template <typename T>
void Append(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

/// Reads what the worker wrote into `in` (nonblocking fd); false at end of input.
bool ReadSome(int fd, std::string* in) {
  char buffer[65536];
  while (true) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got > 0) {
      in->append(buffer, static_cast<size_t>(got));
      if (static_cast<size_t>(got) < sizeof(buffer)) return true;
      continue;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

/// Parses one reply record at `*pos` of `in`; false when it is not complete yet.
bool ParseRow(const std::string& in, size_t* pos, JqRowResult* out) {
  size_t at = *pos;
  if (in.size() < at + 1) return false;
  const auto tag = static_cast<uint8_t>(in[at]);
  at += 1;
  if (tag == proto::kNoOutput) {
    *out = JqRowResult{JqRowResult::Kind::kNoOutput, {}};
  } else if (tag == proto::kOutput) {
    uint64_t len = 0;
    if (in.size() < at + 8) return false;
    std::memcpy(&len, in.data() + at, 8);
    at += 8;
    if (in.size() < at + len) return false;
    *out = JqRowResult{JqRowResult::Kind::kOutput, in.substr(at, len)};
    at += len;
  } else {
    uint32_t len = 0;
    if (in.size() < at + 4) return false;
    std::memcpy(&len, in.data() + at, 4);
    at += 4;
    if (in.size() < at + len) return false;
    *out = JqRowResult{JqRowResult::Kind::kError, in.substr(at, len)};
    at += len;
  }
  *pos = at;
  return true;
}

}  // namespace

arrow::Result<std::unique_ptr<JqWorker>> JqWorker::Start(const std::string& filter, const JqLimits& limits) {
  std::unique_ptr<JqWorker> worker(new JqWorker());
  worker->limits_ = limits;
  int to_worker[2], from_worker[2];
  if (pipe2(to_worker, O_CLOEXEC) != 0) return arrow::Status::IOError("jq: pipe: ", std::strerror(errno));
  if (pipe2(from_worker, O_CLOEXEC) != 0) {
    close(to_worker[0]);
    close(to_worker[1]);
    return arrow::Status::IOError("jq: pipe: ", std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_worker[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_worker[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  const std::string path = WorkerPath();
  const std::string limit = std::to_string(limits.address_space_bytes);
  const std::string parent = std::to_string(getpid());
  std::vector<char*> argv = {const_cast<char*>(path.c_str()), const_cast<char*>(limit.c_str()),
                             const_cast<char*>(parent.c_str()), nullptr};
  char* envp[] = {nullptr};  // no environment: jq's $ENV / env see none of the engine's secrets
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  close(to_worker[0]);
  close(from_worker[1]);
  if (spawned != 0) {
    close(to_worker[1]);
    close(from_worker[0]);
    return arrow::Status::IOError("jq: cannot start the jq worker ", path, ": ", std::strerror(spawned));
  }
  worker->pid_ = pid;
  worker->to_worker_ = to_worker[1];
  worker->from_worker_ = from_worker[0];
  fcntl(worker->to_worker_, F_SETFL, O_NONBLOCK);
  fcntl(worker->from_worker_, F_SETFL, O_NONBLOCK);
  // Compile: 'C' u32 len filter; reply u8 ok, u32 len, message.
  std::string request(1, static_cast<char>(proto::kCompile));
  Append<uint32_t>(&request, static_cast<uint32_t>(filter.size()));
  request += filter;
  std::string in;
  size_t written = 0;
  while (true) {
    if (in.size() >= 5) {
      uint32_t len = 0;
      std::memcpy(&len, in.data() + 1, 4);
      if (in.size() >= 5 + len) {
        if (in[0] == 1) return worker;
        return arrow::Status::Invalid("jq: invalid filter '", filter, "': ", in.substr(5, len));
      }
    }
    pollfd fds[2] = {{worker->from_worker_, POLLIN, 0}, {worker->to_worker_, POLLOUT, 0}};
    const int ready = poll(fds, written < request.size() ? 2 : 1, 1000);
    if (ready < 0 && errno != EINTR) return arrow::Status::IOError("jq: poll: ", std::strerror(errno));
    if (written < request.size() && (fds[1].revents & POLLOUT)) {
      const ssize_t put = write(worker->to_worker_, request.data() + written, request.size() - written);
      if (put > 0) written += static_cast<size_t>(put);
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!ReadSome(worker->from_worker_, &in)) {
        const std::string how = worker->Reap();
        return arrow::Status::Invalid("jq: invalid filter '", filter, "': libjq failed compiling it (", how,
                                      ")");
      }
    }
  }
}

JqWorker::~JqWorker() { Kill(); }

void JqWorker::Kill() {
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

std::string JqWorker::Reap() {
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ <= 0) return "the worker is gone";
  int status = 0;
  pid_t got;
  do {
    got = waitpid(pid_, &status, 0);
  } while (got < 0 && errno == EINTR);
  pid_ = -1;
  if (got > 0 && WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string how =
        std::string("the jq worker died of signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
    if (sig == SIGABRT || sig == SIGSEGV) {
      how += "; libjq aborts when it runs out of memory";
      if (limits_.address_space_bytes > 0) {
        how += " (the worker's limit is " + std::to_string(limits_.address_space_bytes >> 20) + " MiB)";
      }
      how += " or meets a construct it cannot run";
    }
    return how;
  }
  if (got > 0 && WIFEXITED(status))
    return "the jq worker exited with status " + std::to_string(WEXITSTATUS(status));
  return "the jq worker is gone";
}

arrow::Result<std::vector<JqRowResult>> JqWorker::Run(const std::vector<std::string_view>& texts,
                                                      const std::atomic<bool>* cancelled,
                                                      int64_t* failed_row) {
  if (pid_ <= 0) return arrow::Status::IOError("jq: the worker is not running");
  std::string request(1, static_cast<char>(proto::kRun));
  Append<uint64_t>(&request, limits_.max_outputs);
  Append<uint64_t>(&request, limits_.max_output_bytes);
  Append<uint32_t>(&request, static_cast<uint32_t>(texts.size()));
  for (const auto& text : texts) {
    Append<uint64_t>(&request, text.size());
    request.append(text.data(), text.size());
  }
  std::vector<JqRowResult> results;
  results.reserve(texts.size());
  std::string in;
  size_t pos = 0;
  size_t written = 0;
  while (results.size() < texts.size()) {
    JqRowResult row;
    while (results.size() < texts.size() && ParseRow(in, &pos, &row)) results.push_back(std::move(row));
    if (results.size() == texts.size()) break;
    if (pos > (1 << 20)) {  // drop what was parsed
      in.erase(0, pos);
      pos = 0;
    }
    if (cancelled != nullptr && cancelled->load()) {
      Kill();
      return arrow::Status::Cancelled("jq: the query was cancelled");
    }
    pollfd fds[2] = {{from_worker_, POLLIN, 0}, {to_worker_, POLLOUT, 0}};
    const int ready = poll(fds, written < request.size() ? 2 : 1, 100);
    if (ready < 0 && errno != EINTR) return arrow::Status::IOError("jq: poll: ", std::strerror(errno));
    if (ready <= 0) continue;
    if (written < request.size() && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t put = write(to_worker_, request.data() + written, request.size() - written);
      if (put > 0) {
        written += static_cast<size_t>(put);
      } else if (put < 0 && errno != EAGAIN && errno != EINTR) {
        fds[0].revents |= POLLHUP;  // the worker is gone: its reply tells how far it got
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!ReadSome(from_worker_, &in)) {
        while (results.size() < texts.size() && ParseRow(in, &pos, &row)) results.push_back(std::move(row));
        *failed_row = static_cast<int64_t>(results.size());
        return arrow::Status::IOError(Reap());
      }
    }
  }
  return results;
}

}  // namespace ketch::codec
