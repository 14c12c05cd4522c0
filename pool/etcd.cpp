#include "pool/etcd.h"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <memory>
#include <nlohmann/json.hpp>

namespace rgpu::pool {
namespace {

using nlohmann::json;

constexpr int32_t kUnreachable = -1;  // CL_DEVICE_NOT_FOUND: no etcd, no devices
constexpr int32_t kRefused = -30;      // CL_INVALID_VALUE: etcd answered with an error

size_t Collect(char* p, size_t size, size_t n, void* out) {
  auto* s = static_cast<std::string*>(out);
  // etcd's answers are small; a peer that streams without end is not etcd.
  if (s->size() + size * n > (size_t{16} << 20)) return 0;
  s->append(p, size * n);
  return size * n;
}

// etcd's gateway writes int64 fields as JSON strings ("ID":"7587..."), absent when zero.
int64_t Int64(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (...) {
      return 0;
    }
  }
  return it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string String(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// An answer that is JSON: an etcd error ({"error": ..., "code": N}) becomes a Status.
Result<json> Parse(const Result<std::string>& body) {
  if (!body.ok()) return body.status();
  json j = json::parse(body.value(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Error(kRefused, "etcd: answer is not JSON");
  if (j.contains("error")) {
    std::string msg = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
    return Status::Error(kRefused, "etcd: " + msg);
  }
  return j;
}

// The key just past every key that starts with `prefix` (etcd's range_end for a prefix).
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    if (static_cast<unsigned char>(prefix.back()) < 0xff) {
      prefix.back() = static_cast<char>(prefix.back() + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

}  // namespace

std::string Base64Encode(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  out.resize(n < 0 ? 0 : n);
  return out;
}

std::string Base64Decode(const std::string& text) {
  if (text.size() % 4 != 0) return {};
  std::string out(3 * (text.size() / 4) + 1, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return {};
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t pad = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '=' && pad < 2; --i) ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

EtcdClient::EtcdClient(std::vector<std::string> endpoints, std::chrono::milliseconds timeout)
    : endpoints_(std::move(endpoints)), timeout_(timeout) {
  for (auto& e : endpoints_)
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0) e = "http://" + e;
  if (endpoints_.empty()) endpoints_.push_back("http://127.0.0.1:2379");
}

Result<std::string> EtcdClient::Post(const std::string& path, const std::string& body) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Error(kUnreachable, "etcd: curl_easy_init failed");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, "Content-Type: application/json"), curl_slist_free_all);
  std::string errors;
  for (size_t tried = 0; tried < endpoints_.size(); ++tried) {
    const size_t at = (current_ + tried) % endpoints_.size();
    const std::string url = endpoints_[at] + path;
    std::string answer;
    CURL* c = curl.get();
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_.count()));
    // Threads of the host program (an OpenCL application) must not get curl's SIGALRM.
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");  // etcd is never reached through an HTTP proxy
    CURLcode rc = curl_easy_perform(c);
    long http = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
    // An etcd error comes as JSON with a 4xx/5xx code; hand it back, it is an answer.
    if (rc == CURLE_OK && !answer.empty() && answer.front() == '{') {
      current_ = at;
      return answer;
    }
    errors += (errors.empty() ? "" : "; ") + endpoints_[at] + ": " +
              (rc != CURLE_OK ? curl_easy_strerror(rc) : "HTTP " + std::to_string(http));
  }
  return Status::Error(kUnreachable, "etcd unreachable (" + errors + ")");
}

Result<int64_t> EtcdClient::Grant(int64_t ttl_s) {
  auto j = Parse(Post("/v3/lease/grant", json{{"TTL", ttl_s}}.dump()));
  if (!j.ok()) return j.status();
  int64_t id = Int64(*j, "ID");
  if (id == 0) return Status::Error(kRefused, "etcd: lease grant gave no ID");
  return id;
}

Result<int64_t> EtcdClient::KeepAlive(int64_t lease) {
  // The gateway answers a stream of one message: {"result": {"ID": ..., "TTL": ...}}; a
  // lease that no longer exists comes back without a TTL.
  auto j = Parse(Post("/v3/lease/keepalive", json{{"ID", std::to_string(lease)}}.dump()));
  if (!j.ok()) return j.status();
  const json& r = j->contains("result") ? (*j)["result"] : *j;
  return Int64(r, "TTL");
}

Status EtcdClient::Revoke(int64_t lease) {
  auto j = Parse(Post("/v3/lease/revoke", json{{"ID", std::to_string(lease)}}.dump()));
  return j.ok() ? Status::Ok() : j.status();
}

Status EtcdClient::Put(const std::string& key, const std::string& value, int64_t lease) {
  json req{{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  if (lease != 0) req["lease"] = std::to_string(lease);
  auto j = Parse(Post("/v3/kv/put", req.dump()));
  return j.ok() ? Status::Ok() : j.status();
}

Result<std::vector<KeyValue>> EtcdClient::Prefix(const std::string& prefix) {
  json req{{"key", Base64Encode(prefix)}, {"range_end", Base64Encode(PrefixEnd(prefix))}};
  auto j = Parse(Post("/v3/kv/range", req.dump()));
  if (!j.ok()) return j.status();
  std::vector<KeyValue> out;
  auto kvs = j->find("kvs");
  if (kvs == j->end() || !kvs->is_array()) return out;  // no key: the field is absent
  for (const json& kv : *kvs) {
    if (!kv.is_object()) continue;
    KeyValue e;
    e.key = Base64Decode(String(kv, "key"));
    e.value = Base64Decode(String(kv, "value"));
    e.lease = Int64(kv, "lease");
    out.push_back(std::move(e));
  }
  return out;
}

Status EtcdClient::Delete(const std::string& key) {
  auto j = Parse(Post("/v3/kv/deleterange", json{{"key", Base64Encode(key)}}.dump()));
  return j.ok() ? Status::Ok() : j.status();
}

}  // namespace rgpu::pool
