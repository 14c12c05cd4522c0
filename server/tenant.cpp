#include "server/tenant.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>

namespace rgpu::server {
namespace {

std::string Hex(const unsigned char* p, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[p[i] >> 4];
    s += kDigits[p[i] & 15];
  }
  return s;
}

std::string Sha256Hex(const std::string& salt, const std::string& token) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx, salt.data(), salt.size());
  EVP_DigestUpdate(ctx, token.data(), token.size());
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  return Hex(md, len);
}

}  // namespace

const char* PriorityName(Priority p) {
  return p == Priority::LatencyCritical ? "latency-critical" : "best-effort";
}

bool Tenant::MayUse(int device) const {
  return devices.empty() || std::find(devices.begin(), devices.end(), device) != devices.end();
}

std::string HashToken(const std::string& token) {
  unsigned char salt[16];
  RAND_bytes(salt, sizeof(salt));
  std::string salt_hex = Hex(salt, sizeof(salt));
  return "sha256$" + salt_hex + "$" + Sha256Hex(salt_hex, token);
}

bool TokenMatches(const std::string& token, const std::string& token_hash) {
  // sha256$SALT$DIGEST; the salt is used as its hex text.
  constexpr std::string_view kScheme = "sha256$";
  if (token_hash.rfind(kScheme, 0) != 0) return false;
  auto dollar = token_hash.find('$', kScheme.size());
  if (dollar == std::string::npos) return false;
  std::string salt = token_hash.substr(kScheme.size(), dollar - kScheme.size());
  std::string want = token_hash.substr(dollar + 1);
  std::string got = Sha256Hex(salt, token);
  // Constant time, so that timing does not reveal how much of a guess was right.
  return want.size() == got.size() && CRYPTO_memcmp(want.data(), got.data(), got.size()) == 0;
}

}  // namespace rgpu::server
