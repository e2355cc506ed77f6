#include "ketch/io/formats/lance_format.h"

#include <mutex>

namespace ketch::io {
namespace {

std::mutex& ReaderMutex() {
  static std::mutex mutex;
  return mutex;
}

LanceReader& Registered() {
  static LanceReader reader;
  return reader;
}

}  // namespace

void SetLanceReader(LanceReader reader) {
  std::lock_guard<std::mutex> lock(ReaderMutex());
  Registered() = std::move(reader);
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenLance(const LanceReadRequest& request,
                                                                   const LanceReadStats& stats) {
  LanceReader reader;
  {
    std::lock_guard<std::mutex> lock(ReaderMutex());
    reader = Registered();
  }
  if (!reader) return arrow::Status::Invalid("read_lance: no Lance reader is registered (import ketch)");
  if (request.fragment_ids.empty()) return arrow::Status::Invalid("read_lance: a read of no fragments");
  return reader(request, stats);
}

}  // namespace ketch::io
