// A map from string views to 32-bit values for the text parser's hot
// lookups (instruction names, shape text, opcodes): the caller hashes a key
// once with HashView and passes the hash to every lookup of it. Keys are
// views into text that outlives the map.
#ifndef HLOMEM_LIB_HLO_VIEW_MAP_H_
#define HLOMEM_LIB_HLO_VIEW_MAP_H_

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace hlomem::hlo {

namespace view_map_internal {
inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint64_t Mix(uint64_t h, uint64_t word) {
  const uint64_t product = (h ^ word) * 0x9E3779B97F4A7C15ull;
  return product ^ (product >> 29);
}
}  // namespace view_map_internal

// A fast non-cryptographic hash: one multiply per 8 bytes (names and shapes
// are 10-30 bytes), reading only the bytes of `s`.
inline uint32_t HashView(absl::string_view s) {
  using view_map_internal::Load32;
  using view_map_internal::Load64;
  using view_map_internal::Mix;
  const char* p = s.data();
  const size_t n = s.size();
  // Two independent lanes, 16 bytes a round, so the multiplies overlap.
  uint64_t h = 0x243F6A8885A308D3ull ^ n;
  uint64_t g = 0xA4093822299F31D0ull;
  if (n > 16) {
    const char* last = p + n - 16;
    while (p < last) {
      h = Mix(h, Load64(p));
      g = Mix(g, Load64(p + 8));
      p += 16;
    }
    p = last;  // the tail, overlapping the previous round
  }
  if (n >= 8) {
    h = Mix(h, Load64(p));
    g = Mix(g, Load64(s.data() + n - 8));
  } else if (n >= 4) {
    h = Mix(h, Load32(p) | Load32(p + n - 4) << 32);
  } else if (n > 0) {
    const auto byte = [&](size_t k) { return static_cast<uint64_t>(static_cast<uint8_t>(p[k])); };
    h = Mix(h, byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16);
  }
  h = Mix(h, g);
  // Final avalanche (MurmurHash3's fmix64), so the low bits used as the
  // table index depend on every input byte.
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return static_cast<uint32_t>(h);
}

// memcmp(a, b, n) == 0 inline, a word at a time: keys are short, and a
// call to memcmp costs more than comparing them.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  using view_map_internal::Load32;
  using view_map_internal::Load64;
  if (n >= 8) {
    for (size_t k = 0; k + 8 < n; k += 8) {
      if (Load64(a + k) != Load64(b + k)) return false;
    }
    return Load64(a + n - 8) == Load64(b + n - 8);
  }
  if (n >= 4) return Load32(a) == Load32(b) && Load32(a + n - 4) == Load32(b + n - 4);
  for (size_t k = 0; k < n; ++k) {
    if (a[k] != b[k]) return false;
  }
  return true;
}

class ViewMap {
 public:
  ViewMap() { Reset(kMinCapacity); }

  // The value stored for `key`, or nullptr. Valid until the next insertion.
  uint32_t* Find(absl::string_view key, uint32_t hash) {
    return const_cast<uint32_t*>(std::as_const(*this).Find(key, hash));
  }
  const uint32_t* Find(absl::string_view key, uint32_t hash) const {
    for (size_t k = hash & mask_;; k = (k + 1) & mask_) {
      const Slot& slot = slots_[k];
      if (slot.generation != generation_) return nullptr;
      if (slot.hash == hash && Equal(slot, key)) return &slot.value;
    }
  }

  // Whether any key of the slots [from, to) of this table (slot_count() in
  // all) is a key of `other`. Read-only: ranges may be asked side by side.
  bool SharesAKeyWith(const ViewMap& other, size_t from, size_t to) const {
    for (size_t k = from; k < to; ++k) {
      const Slot& slot = slots_[k];
      if (slot.generation == generation_ &&
          other.Find(absl::string_view(slot.data, slot.size), slot.hash) != nullptr) {
        return true;
      }
    }
    return false;
  }
  size_t slot_count() const { return slots_.size(); }

  // Inserts (key, value) unless `key` is present; returns the stored value
  // and whether it was inserted.
  std::pair<uint32_t*, bool> TryEmplace(absl::string_view key, uint32_t hash, uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    for (size_t k = hash & mask_;; k = (k + 1) & mask_) {
      Slot& slot = slots_[k];
      if (slot.generation != generation_) {
        slot = {key.data(), static_cast<uint32_t>(key.size()), hash, value, generation_};
        ++size_;
        return {&slot.value, true};
      }
      if (slot.hash == hash && Equal(slot, key)) return {&slot.value, false};
    }
  }

  size_t size() const { return size_; }

  // Makes room for `count` keys in all at once, rather than growing step
  // by step (each step rehashes every key into a table twice the size).
  void Reserve(size_t count) {
    size_t capacity = slots_.size();
    while (capacity < count * 2) capacity *= 2;
    if (capacity != slots_.size()) Rehash(capacity);
  }

  // Starts loading the slot where a lookup of `hash` begins, for batches
  // of lookups whose slots would each miss the cache.
  void Prefetch(uint32_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

  // Empties the map in O(1); a table grown far beyond what it held and
  // beyond kShrinkAbove is shrunk, so small maps after a big one stay
  // cache-resident. Tables up to kShrinkAbove are kept: maps cleared per
  // computation would otherwise regrow for most computations.
  void Clear() {
    if (slots_.size() > kShrinkAbove && size_ * 16 < slots_.size()) {
      Reset(kShrinkAbove);
      return;
    }
    size_ = 0;
    if (++generation_ == 0) Reset(slots_.size());
  }

 private:
  static constexpr size_t kMinCapacity = 64;
  static constexpr size_t kShrinkAbove = 4096;  // slots: 96 KiB

  struct Slot {
    const char* data;
    uint32_t size;
    uint32_t hash;
    uint32_t value;
    uint32_t generation;  // live when equal to the map's generation_
  };

  static bool Equal(const Slot& slot, absl::string_view key) {
    return slot.size == key.size() && SameBytes(slot.data, key.data(), key.size());
  }

  void Reset(size_t capacity) {
    slots_.assign(capacity, Slot{nullptr, 0, 0, 0, 0});
    mask_ = capacity - 1;
    size_ = 0;
    generation_ = 1;
  }

  void Grow() { Rehash(slots_.size() * 2); }

  void Rehash(size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    const uint32_t old_generation = generation_;
    Reset(capacity);
    // The live slots, about half at random, moved to the front without a
    // branch per slot: a branch on each would be mispredicted half the time.
    size_t live = 0;
    for (size_t k = 0; k < old.size(); ++k) {
      const Slot slot = old[k];
      old[live] = slot;
      live += slot.generation == old_generation ? 1 : 0;
    }
    old.resize(live);
    for (const Slot& slot : old) {
      size_t k = slot.hash & mask_;
      while (slots_[k].generation == generation_) k = (k + 1) & mask_;
      slots_[k] = slot;
      slots_[k].generation = generation_;
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  uint32_t generation_ = 1;
};

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_VIEW_MAP_H_
