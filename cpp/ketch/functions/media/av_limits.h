#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace ketch::media {

/// Limits on one media object, checked before anything large is allocated.
struct AvLimits {
  /// Bytes libavformat may read while probing the container and its streams' parameters.
  int64_t probe_bytes = 5 << 20;
  /// Packets of a stream whose codec the demuxer is unsure of that libavformat probes (running
  /// every codec probe over the growing buffer); FFmpeg's default 2,500.
  int max_probe_packets = 2500;
  /// When set, every blocking read or decode step gives up after this instant (AVERROR_EXIT):
  /// guards against endless inputs.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Refuse (Invalid) a container whose header claims a video stream of more pixels than this
  /// (width * height), checked before the streams' parameters are read (which decodes frames).
  int64_t max_video_pixels = INT64_MAX;
};

}  // namespace ketch::media
