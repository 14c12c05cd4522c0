// Tests that compare rgpu with the device it serves, in one process: the loader must list
// both platforms.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace rgpu::test {

// Before the loader's first call: a vendors directory holding the ICDs the loader was pointed
// at (OCL_ICD_VENDORS) and the native one (RGPU_TEST_NATIVE_ICD), removed at exit. Does
// nothing unless both are set. `tag` names the directory.
inline void AddNativeIcd(const char* tag) {
  static bool done = false;
  const char* native = std::getenv("RGPU_TEST_NATIVE_ICD");
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  if (done || !native || !vendors) return;
  done = true;
  namespace fs = std::filesystem;
  static const fs::path dir =
      fs::temp_directory_path() / (std::string("rgpu-") + tag + "-icd-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(vendors, ec))
    fs::copy_file(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing, ec);
  fs::copy_file(native, dir / fs::path(native).filename(), fs::copy_options::overwrite_existing, ec);
  setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
  std::atexit([] {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  });
}

}  // namespace rgpu::test
