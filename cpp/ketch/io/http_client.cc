#include "ketch/io/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace ketch::io {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Multi handles outlive calls so their connection caches keep connections alive between morsels.
class MultiPool {
 public:
  static MultiPool& Get() {
    static auto* pool = new MultiPool();  // never destroyed: pool threads may use it at exit
    return *pool;
  }
  CURLM* Acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return curl_multi_init();
    CURLM* multi = free_.back();
    free_.pop_back();
    return multi;
  }
  void Release(CURLM* multi) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(multi);
  }

 private:
  std::mutex mutex_;
  std::vector<CURLM*> free_;
};

// Connection slots shared by every download that asks for the same `max_connections`: a query
// downloads its morsels on several I/O threads at once, and the limit holds across them (a server
// that allows N connections sees at most N from this process for that setting).
class ConnectionSlots {
 public:
  static std::shared_ptr<ConnectionSlots> For(int32_t limit) {
    static std::mutex mutex;
    static std::map<int32_t, std::shared_ptr<ConnectionSlots>> registry;
    std::lock_guard<std::mutex> lock(mutex);
    auto& slots = registry[limit];
    if (!slots) slots = std::make_shared<ConnectionSlots>(limit);
    return slots;
  }
  explicit ConnectionSlots(int32_t limit) : limit_(limit) {}
  bool TryAcquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (used_ >= limit_) return false;
    ++used_;
    return true;
  }
  void Release(int32_t n = 1) {
    std::lock_guard<std::mutex> lock(mutex_);
    used_ -= n;
  }

 private:
  const int32_t limit_;
  std::mutex mutex_;
  int32_t used_ = 0;
};

struct Transfer {
  size_t index = 0;
  CURL* easy = nullptr;
  std::string body;
  char error[CURL_ERROR_SIZE] = {0};
  int attempts = 0;
  int64_t max_bytes = -1;
  int64_t max_object_bytes = -1;
  bool too_large = false;
  std::string range;
  std::string url;  // spaces escaped
};

size_t OnData(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->max_object_bytes > 0 && static_cast<int64_t>(t->body.size() + size * n) > t->max_object_bytes) {
    t->too_large = true;
    return 0;
  }
  if (t->body.empty()) {
    // The whole body in one allocation when the server says how long it is (growing a string by
    // doubling copies large objects several times and leaves the allocator fragmented).
    curl_off_t length = -1;
    if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length > 0 &&
        (t->max_object_bytes <= 0 || length <= t->max_object_bytes)) {
      t->body.reserve(
          static_cast<size_t>(t->max_bytes > 0 ? std::min<curl_off_t>(length, t->max_bytes) : length));
    }
  }
  t->body.append(data, size * n);
  if (t->max_bytes > 0 && static_cast<int64_t>(t->body.size()) >= t->max_bytes) {
    t->body.resize(t->max_bytes);
    return 0;  // enough: stop the transfer (reported as a write error, treated as success)
  }
  return size * n;
}

void Prepare(Transfer* t, const std::string& url, const HttpOptions& options) {
  curl_easy_reset(t->easy);
  t->body.clear();
  t->error[0] = '\0';
  t->too_large = false;
  t->url.clear();
  for (char c : url) {
    if (c == ' ') {
      t->url += "%20";
    } else {
      t->url += c;
    }
  }
  curl_easy_setopt(t->easy, CURLOPT_URL, t->url.c_str());
  curl_easy_setopt(t->easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(t->easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, OnData);
  curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(t->easy, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(t->easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(t->easy, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(t->easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms));
  curl_easy_setopt(t->easy, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  t->max_object_bytes = options.max_object_bytes;
  if (options.max_object_bytes > 0) {
    curl_easy_setopt(t->easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_object_bytes));
  }
  curl_easy_setopt(t->easy, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.low_speed_timeout_s));
  curl_easy_setopt(t->easy, CURLOPT_ACCEPT_ENCODING, "");  // gzip/deflate when the server offers
  curl_easy_setopt(t->easy, CURLOPT_USERAGENT, "ketch");
  curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
  if (options.head_only) curl_easy_setopt(t->easy, CURLOPT_NOBODY, 1L);
  t->max_bytes = options.max_bytes;
  if (options.max_bytes > 0) {
    t->range = "0-" + std::to_string(options.max_bytes - 1);
    curl_easy_setopt(t->easy, CURLOPT_RANGE, t->range.c_str());
  }
}

bool Retryable(CURLcode code, long status) {
  if (code == CURLE_OK) return status == 429 || status >= 500;
  return code == CURLE_COULDNT_CONNECT || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR ||
         code == CURLE_GOT_NOTHING || code == CURLE_PARTIAL_FILE ||
         // A stalled transfer (below CURLOPT_LOW_SPEED_LIMIT for LOW_SPEED_TIME) or a connect
         // timeout: a transient network condition like a reset, so it gets the same retries.
         code == CURLE_OPERATION_TIMEDOUT;
}

}  // namespace

bool IsHttpUrl(std::string_view url) {
  auto starts = [&](std::string_view prefix) {
    if (url.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(url[i])) != prefix[i]) return false;
    }
    return true;
  };
  return starts("http://") || starts("https://");
}

std::vector<arrow::Result<std::shared_ptr<arrow::Buffer>>> HttpGetAll(const std::vector<std::string>& urls,
                                                                      const HttpOptions& options) {
  GlobalInit();
  std::vector<arrow::Result<std::shared_ptr<arrow::Buffer>>> results(urls.size(),
                                                                     arrow::Status::UnknownError("not run"));
  if (urls.empty()) return results;
  CURLM* multi = MultiPool::Get().Acquire();
  if (multi == nullptr) {
    for (auto& r : results) r = arrow::Status::OutOfMemory("curl_multi_init failed");
    return results;
  }
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(options.max_connections));
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(options.max_connections));
  std::vector<std::unique_ptr<Transfer>> transfers(urls.size());
  size_t next = 0, running_transfers = 0;
  auto slots = ConnectionSlots::For(options.max_connections);
  // Adds transfers while a connection slot is free (bounded memory for bodies, and the server sees
  // at most max_connections requests from all of the query's I/O threads together).
  auto fill = [&] {
    while (next < urls.size() && running_transfers < static_cast<size_t>(options.max_connections) &&
           slots->TryAcquire()) {
      auto t = std::make_unique<Transfer>();
      t->index = next;
      t->easy = curl_easy_init();
      Prepare(t.get(), urls[next], options);
      t->attempts = 1;
      curl_multi_add_handle(multi, t->easy);
      transfers[next] = std::move(t);
      ++next;
      ++running_transfers;
    }
  };
  fill();
  int still_running = 0;
  do {
    curl_multi_perform(multi, &still_running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
      CURLcode code = msg->data.result;
      if (code == CURLE_WRITE_ERROR && t->max_bytes > 0 &&
          static_cast<int64_t>(t->body.size()) >= t->max_bytes) {
        code = CURLE_OK;  // stopped on purpose after max_bytes
      }
      long status = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
      curl_multi_remove_handle(multi, t->easy);
      if (Retryable(code, status) && t->attempts < options.max_attempts) {
        // Brief backoff, then the same request again on the same handle.
        std::this_thread::sleep_for(std::chrono::milliseconds(50 * t->attempts));
        ++t->attempts;
        Prepare(t, urls[t->index], options);
        curl_multi_add_handle(multi, t->easy);
        continue;
      }
      if (t->too_large || code == CURLE_FILESIZE_EXCEEDED) {
        results[t->index] =
            arrow::Status::IOError("object larger than the limit of ", options.max_object_bytes, " bytes");
      } else if (code != CURLE_OK) {
        results[t->index] = arrow::Status::IOError(t->error[0] ? t->error : curl_easy_strerror(code),
                                                   " (after ", t->attempts, " attempt(s))");
      } else if (status >= 400) {
        results[t->index] = arrow::Status::IOError("HTTP ", status, " (after ", t->attempts, " attempt(s))");
      } else if (options.head_only) {
        // HttpSizeAll: the body is the Content-Length, as 8 bytes (-1 when the server sent none).
        curl_off_t length = -1;
        if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) != CURLE_OK) length = -1;
        const auto size = static_cast<int64_t>(length);
        results[t->index] = std::shared_ptr<arrow::Buffer>(
            arrow::Buffer::FromString(std::string(reinterpret_cast<const char*>(&size), sizeof(size))));
      } else {
        auto buffer = arrow::Buffer::FromString(std::move(t->body));
        results[t->index] = std::shared_ptr<arrow::Buffer>(std::move(buffer));
      }
      curl_easy_cleanup(t->easy);
      t->easy = nullptr;
      --running_transfers;
      slots->Release();
      fill();
    }
    if (running_transfers == 0 && next >= urls.size()) break;
    if (options.cancelled && options.cancelled->load()) {
      // The query was cancelled: drop every transfer still running or waiting.
      for (auto& t : transfers) {
        if (t && t->easy) {
          curl_multi_remove_handle(multi, t->easy);
          curl_easy_cleanup(t->easy);
          t->easy = nullptr;
          slots->Release();
        }
      }
      for (auto& r : results) {
        if (!r.ok() && r.status().IsUnknownError()) r = arrow::Status::Cancelled("query interrupted");
      }
      break;
    }
    if (running_transfers == 0) {
      // Every slot is held by other downloads: wait briefly for one.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      fill();
      continue;
    }
    curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  } while (true);
  MultiPool::Get().Release(multi);
  return results;
}

std::vector<arrow::Result<int64_t>> HttpSizeAll(const std::vector<std::string>& urls, HttpOptions options) {
  options.head_only = true;
  auto heads = HttpGetAll(urls, options);
  std::vector<arrow::Result<int64_t>> sizes;
  sizes.reserve(heads.size());
  for (auto& head : heads) {
    if (!head.ok()) {
      sizes.emplace_back(head.status());
      continue;
    }
    int64_t size = -1;
    std::memcpy(&size, (*head)->data(), sizeof(size));
    if (size < 0) {
      sizes.emplace_back(arrow::Status::IOError("the server sent no Content-Length for a HEAD request"));
    } else {
      sizes.emplace_back(size);
    }
  }
  return sizes;
}

}  // namespace ketch::io
