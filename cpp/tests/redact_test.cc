#include "ketch/io/redact.h"

#include <gtest/gtest.h>

namespace ketch::io {
namespace {

TEST(RedactTest, UserInfoOfEveryUrl) {
  EXPECT_EQ(Redact("get 'http://user:secret@127.0.0.1:8/a/b?x=1' failed"),
            "get 'http://***@127.0.0.1:8/a/b?x=1' failed");
  EXPECT_EQ(Redact("https://TOKEN@github.com/x and s3://k:s@bucket/key"),
            "https://***@github.com/x and s3://***@bucket/key");
  // '@' in the path is not user-info.
  EXPECT_EQ(Redact("http://host/a@b"), "http://host/a@b");
  EXPECT_EQ(Redact("file:///tmp/x y"), "file:///tmp/x y");
  EXPECT_EQ(Redact("no url: here://"), "no url: here://");
  EXPECT_EQ(Redact("://x@y"), "://x@y");
}

TEST(RedactTest, CredentialQueryParameters) {
  EXPECT_EQ(Redact("http://h/o?X-Amz-Signature=abc&X-Amz-Date=2024&token=t0k#frag"),
            "http://h/o?X-Amz-Signature=***&X-Amz-Date=2024&token=***#frag");
  EXPECT_EQ(Redact("(https://h/o?X-Amz-Credential=AKID%2F2024&X-Amz-Security-Token=zz&sig=1&w=2)"),
            "(https://h/o?X-Amz-Credential=***&X-Amz-Security-Token=***&sig=***&w=2)");
  EXPECT_EQ(Redact("http://h/o?a=1&b"), "http://h/o?a=1&b");
}

TEST(RedactTest, KnownSecretsAnywhere) {
  EXPECT_EQ(Redact("key AKIAXYZ denied; AKIAXYZ again", {"AKIAXYZ", "", "ab"}), "key *** denied; *** again");
}

TEST(RedactTest, SecretNames) {
  for (const char* name : {"s3_access_key", "s3_key_id", "s3_session_token", "X-Amz-Signature", "token",
                           "sig", "key", "Password", "api_key", "AWSAccessKeyId", "x-goog-credential"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"s3_region", "s3_endpoint_override", "on_error", "location", "max_connections",
                           "X-Amz-Date", "width", "monkey"}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

}  // namespace
}  // namespace ketch::io
