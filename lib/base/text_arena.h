// Copies of strings packed into large chunks that never move, so a view of a
// copy stays valid as long as the arena (or an arena that adopts it) lives.
// A model keeps tens of thousands of short texts (computation names,
// metadata): one heap block each cost more to allocate and free than to
// parse them.
#ifndef HLOMEM_LIB_BASE_TEXT_ARENA_H_
#define HLOMEM_LIB_BASE_TEXT_ARENA_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace hlomem {

class TextArena {
 public:
  TextArena() = default;
  // A moved-from arena is empty and usable: it must not go on filling the
  // chunk it gave away.
  TextArena(TextArena&& other) noexcept { *this = std::move(other); }
  TextArena& operator=(TextArena&& other) noexcept {
    chunks_ = std::move(other.chunks_);
    other.chunks_.clear();
    next_ = std::exchange(other.next_, nullptr);
    free_ = std::exchange(other.free_, 0);
    return *this;
  }

  // A copy of `text`, owned by the arena.
  absl::string_view Copy(absl::string_view text) {
    if (text.empty()) return {};
    char* copy = Allocate(text.size());
    std::memcpy(copy, text.data(), text.size());
    return absl::string_view(copy, text.size());
  }

  // `size` bytes owned by the arena, for text written in place.
  char* Allocate(size_t size) {
    if (size > kChunkBytes / 4) {
      // A large text gets a chunk of its own; the current chunk stays open.
      chunks_.push_back(NewChunk(size));
      return chunks_.back().get();
    }
    if (free_ < size) {
      chunks_.push_back(NewChunk(kChunkBytes));
      next_ = chunks_.back().get();
      free_ = kChunkBytes;
    }
    char* block = next_;
    next_ += size;
    free_ -= size;
    return block;
  }

  // Takes over the chunks of `other`, so views into them stay valid once
  // `other` is gone. New copies still go to this arena's own open chunk.
  void Adopt(TextArena&& other) {
    for (auto& chunk : other.chunks_) chunks_.push_back(std::move(chunk));
    other.chunks_.clear();
    other.next_ = nullptr;
    other.free_ = 0;
  }

 private:
  static constexpr size_t kChunkBytes = 64 << 10;

  // Not zeroed (as make_unique<char[]> would): every byte handed out is
  // written by its user.
  static std::unique_ptr<char[]> NewChunk(size_t size) {
    return std::unique_ptr<char[]>(new char[size]);
  }

  std::vector<std::unique_ptr<char[]>> chunks_;
  char* next_ = nullptr;
  size_t free_ = 0;
};

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_TEXT_ARENA_H_
