// Byte copies and the output buffer of the RFC 8785 text path (canonical.cc): short
// copies without a call to memcpy, and a buffer that is not zero-filled as it grows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

namespace udon::json::internal {

// Out of line: inlined, g++ 12 warns about the memcpy for callers whose source is a short
// array, although their counts never reach it.
[[gnu::noinline]] inline void CopyLongBytes(char* destination, const char* source,
                                             std::size_t count) {
  std::memcpy(destination, source, count);
}

// Copies kSize <= count <= 2 * kSize bytes as a head and a tail of kSize bytes that may
// overlap, both loaded before either is stored.
template <std::size_t kSize>
[[gnu::always_inline]] inline void CopyHeadAndTail(char* destination, const char* source,
                                                   std::size_t count) {
  struct Word {
    char bytes[kSize];
  };
  Word head, tail;
  std::memcpy(&head, source, kSize);
  std::memcpy(&tail, source + count - kSize, kSize);
  std::memcpy(destination, &head, kSize);
  std::memcpy(destination + count - kSize, &tail, kSize);
}

// memcpy for the short, non-overlapping pieces the text path copies by the million (names,
// words, members of small objects): a call to memcpy costs more than the copy itself
// there. Up to 64 bytes are moved with fixed-size loads and stores.
[[gnu::always_inline]] inline void CopyBytes(char* destination, const char* source,
                                             std::size_t count) {
  if (count > 64) {
    CopyLongBytes(destination, source, count);
  } else if (count >= 32) {
    CopyHeadAndTail<32>(destination, source, count);
  } else if (count >= 16) {
    CopyHeadAndTail<16>(destination, source, count);
  } else if (count >= 8) {
    CopyHeadAndTail<8>(destination, source, count);
  } else if (count >= 4) {
    CopyHeadAndTail<4>(destination, source, count);
  } else if (count != 0) {
    const char a = source[0], b = source[count / 2], c = source[count - 1];
    destination[0] = a;
    destination[count / 2] = b;
    destination[count - 1] = c;
  }
}

// Copies count bytes in steps of kChunk, for copies of unpredictable lengths: reads up to
// kChunk - 1 bytes past the source range and overwrites as many past the destination
// range, so both must have that much slack, and nothing there may be needed afterwards.
constexpr std::size_t kChunk = 32;
[[gnu::always_inline]] inline void CopyChunks(char* destination, const char* source,
                                              std::size_t count) {
  struct Chunk {
    char bytes[kChunk];
  };
  for (std::size_t i = 0; i < count; i += kChunk) {
    Chunk chunk;
    std::memcpy(&chunk, source + i, kChunk);
    std::memcpy(destination + i, &chunk, kChunk);
  }
}

// Output storage for the text path: an uninitialized byte area (a std::string would be
// zero-filled first: one more pass over the whole output), so appends are a bounds check
// and a store.
class ByteBuffer {
 public:
  void reserve(std::size_t bytes) {
    if (bytes > capacity_) Reallocate(bytes);
  }
  std::size_t size() const { return size_; }
  char* data() { return storage_.get(); }
  const char* data() const { return storage_.get(); }

  [[gnu::always_inline]] void push_back(char c) {
    if (size_ == capacity_) [[unlikely]] Grow(1);
    storage_[size_++] = c;
  }
  [[gnu::always_inline]] void append(const char* bytes, std::size_t count) {
    if (capacity_ - size_ < count) [[unlikely]] Grow(count);
    CopyBytes(storage_.get() + size_, bytes, count);
    size_ += count;
  }
  [[gnu::always_inline]] void append(std::string_view bytes) {
    append(bytes.data(), bytes.size());
  }
  void append(std::size_t count, char c) {
    if (capacity_ - size_ < count) Grow(count);
    std::memset(storage_.get() + size_, c, count);
    size_ += count;
  }
  void clear() { size_ = 0; }
  // append for bytes followed by at least kChunk - 1 readable ones (see CopyChunks).
  [[gnu::always_inline]] void AppendChunks(const char* bytes, std::size_t count) {
    if (capacity_ - size_ < count + kChunk) [[unlikely]] Grow(count + kChunk);
    CopyChunks(storage_.get() + size_, bytes, count);
    size_ += count;
  }
  // Appends c if add, without a branch on add (writes c past the end either way).
  [[gnu::always_inline]] void PushBackIf(char c, bool add) {
    if (size_ == capacity_) [[unlikely]] Grow(1);
    storage_[size_] = c;
    size_ += add ? 1 : 0;
  }
  // Makes the count bytes after the end readable and zero (they stay outside size()).
  [[gnu::always_inline]] void ZeroSlack(std::size_t count) {
    if (capacity_ - size_ < count) [[unlikely]] Grow(count);
    std::memset(storage_.get() + size_, 0, count);
  }

 private:
  [[gnu::noinline]] void Grow(std::size_t at_least) {
    Reallocate(std::max(capacity_ * 2, size_ + at_least + 64));
  }
  void Reallocate(std::size_t capacity) {
    std::unique_ptr<char[]> storage(new char[capacity]);
    if (size_ != 0) std::memcpy(storage.get(), storage_.get(), size_);
    storage_ = std::move(storage);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> storage_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

}  // namespace udon::json::internal
