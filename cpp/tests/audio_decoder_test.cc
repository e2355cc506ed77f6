#include "ketch/functions/media/audio_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace ketch::media {
namespace {

// A 16-bit PCM WAV of `samples` (interleaved) in memory.
std::shared_ptr<arrow::Buffer> Wav(const std::vector<int16_t>& samples, int channels, int rate) {
  const uint32_t data_bytes = static_cast<uint32_t>(samples.size() * 2);
  std::vector<uint8_t> out(44 + data_bytes);
  auto put32 = [&](size_t at, uint32_t v) { std::memcpy(out.data() + at, &v, 4); };
  auto put16 = [&](size_t at, uint16_t v) { std::memcpy(out.data() + at, &v, 2); };
  std::memcpy(out.data(), "RIFF", 4);
  put32(4, 36 + data_bytes);
  std::memcpy(out.data() + 8, "WAVEfmt ", 8);
  put32(16, 16);
  put16(20, 1);
  put16(22, static_cast<uint16_t>(channels));
  put32(24, static_cast<uint32_t>(rate));
  put32(28, static_cast<uint32_t>(rate * channels * 2));
  put16(32, static_cast<uint16_t>(channels * 2));
  put16(34, 16);
  std::memcpy(out.data() + 36, "data", 4);
  put32(40, data_bytes);
  std::memcpy(out.data() + 44, samples.data(), data_bytes);
  return arrow::Buffer::FromVector(std::move(out));
}

std::vector<int16_t> Ramp(size_t n) {
  std::vector<int16_t> samples(n);
  for (size_t i = 0; i < n; ++i)
    samples[i] = static_cast<int16_t>((static_cast<int>(i) * 97) % 65536 - 32768);
  return samples;
}

TEST(AudioDecoder, PcmWavDecodesToExactFloatsDividedBy32768) {
  const auto samples = Ramp(4000);
  auto decoded = DecodeAudio(Wav(samples, 2, 8000), AudioDecodeOptions{});
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->channels, 2);
  EXPECT_EQ(decoded->frames, 2000);
  EXPECT_EQ(decoded->sample_rate, 8000);
  const auto* values = reinterpret_cast<const float*>(decoded->samples.data());
  for (size_t i = 0; i < samples.size(); ++i) ASSERT_EQ(values[i], samples[i] / 32768.0f) << i;
}

TEST(AudioDecoder, MonoIsTheMeanAndResamplingScalesTheLength) {
  AudioDecodeOptions options;
  options.mono = true;
  options.float64 = true;
  options.sample_rate = 16000;
  auto decoded = DecodeAudio(Wav(Ramp(8000), 2, 8000), options);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->channels, 1);
  EXPECT_EQ(decoded->sample_rate, 16000);
  EXPECT_NEAR(static_cast<double>(decoded->frames), 8000.0, 1.0);
}

TEST(AudioDecoder, MetadataUsesLibsndfileNames) {
  auto meta = ReadAudioMetadata(Wav(Ramp(3000), 1, 22050), AvLimits{});
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->sample_rate, 22050);
  EXPECT_EQ(meta->channels, 1);
  EXPECT_EQ(meta->frames, 3000.0);
  EXPECT_EQ(meta->format, "WAV");
  EXPECT_EQ(meta->subtype, "PCM_16");
}

TEST(AudioDecoder, BadInputIsInvalidNamingTheCause) {
  auto empty = DecodeAudio(std::make_shared<arrow::Buffer>(nullptr, 0), AudioDecodeOptions{});
  ASSERT_TRUE(empty.status().IsInvalid());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);

  auto whole = Wav(Ramp(4000), 1, 8000);
  auto truncated = DecodeAudio(arrow::SliceBuffer(whole, 0, 44 + 3000), AudioDecodeOptions{});
  ASSERT_TRUE(truncated.status().IsInvalid());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos)
      << truncated.status().ToString();

  AudioDecodeOptions small;
  small.max_output_bytes = 1000;
  auto over = DecodeAudio(whole, small);
  ASSERT_TRUE(over.status().IsInvalid());
  EXPECT_NE(over.status().message().find("over the limit"), std::string::npos) << over.status().ToString();
}

}  // namespace
}  // namespace ketch::media
