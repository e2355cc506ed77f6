// GoogleTest entry point. Ends with _exit: the engine's thread pools are process-wide and never
// torn down, and a worker may still be leaving Arrow's task wrapper when the last test returns;
// running static destructors (OpenSSL, allocators) under it can crash an otherwise green run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(rc);
}
