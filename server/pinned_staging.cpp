#include "server/pinned_staging.h"

#include <spdlog/spdlog.h>

namespace rgpu::server {

namespace {
constexpr size_t kPage = 4096;
}  // namespace

std::shared_ptr<PinnedStaging> PinnedStaging::Make(Backend& bk, BkContext* ctx, size_t bytes) {
  std::shared_ptr<PinnedStaging> p(new PinnedStaging(bk, ctx, bytes));
  if (!p->registered_) return nullptr;
  return p;
}

PinnedStaging::PinnedStaging(Backend& bk, BkContext* ctx, size_t bytes)
    : bk_(bk), ctx_(ctx), size_(bytes), mem_(std::make_unique<ByteVec>()) {
  // Page-aligned, as drivers pin whole pages.
  mem_->resize(bytes + kPage);
  const auto addr = reinterpret_cast<uintptr_t>(mem_->data());
  base_ = (kPage - addr % kPage) % kPage;
  auto m = bk_.RegisterHostMemory(ctx, mem_->data() + base_, bytes);
  if (m.ok())
    registered_ = *m;
  else
    spdlog::debug("pinned staging refused by the device: {}", m.status().message());
}

PinnedStaging::~PinnedStaging() { Unregister(); }

void PinnedStaging::Unregister() {
  if (registered_) bk_.Release(proto::ObjType::Mem, registered_);
  registered_ = nullptr;
}

std::optional<PinnedStaging::Slot> PinnedStaging::Take(size_t len, std::chrono::microseconds wait) {
  if (len == 0 || len > size_) return std::nullopt;
  std::unique_lock lk(mu_);
  // Nothing taken: start again at the ring's start, so that the whole of it is free.
  if (taken_.empty()) head_ = tail_ = 0;
  // A slot never wraps: if the ring's end is too short, the slot starts over at its start.
  auto start = [&] {
    if (taken_.empty()) head_ = tail_ = 0;  // all given back while this waited
    const uint64_t pos = head_ % size_;
    return pos + len > size_ ? head_ + (size_ - pos) : head_;
  };
  if (!freed_.wait_for(lk, wait, [&] { return start() + len - tail_ <= size_; }))
    return std::nullopt;
  const uint64_t at = start();
  if (at != head_) taken_[head_] = {at, true};  // the skipped end, free at once
  head_ = at + len;
  taken_[at] = {head_, false};
  auto self = shared_from_this();
  std::shared_ptr<void> release(nullptr, [self, at](void*) { self->Give(at); });
  const size_t offset = base_ + at % size_;
  return Slot{Bytes(release, mem_.get()), offset, mem_->data() + offset};
}

void PinnedStaging::Give(uint64_t at) {
  {
    std::lock_guard lk(mu_);
    auto it = taken_.find(at);
    if (it != taken_.end()) it->second.second = true;
    while (!taken_.empty() && taken_.begin()->second.second) {
      tail_ = taken_.begin()->second.first;
      taken_.erase(taken_.begin());
    }
    if (taken_.empty()) tail_ = head_;
  }
  freed_.notify_all();
}

}  // namespace rgpu::server
